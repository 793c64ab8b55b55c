import { FormError } from '@/components/FormError';
import { TextField } from '@/components/TextField';
import { useSignup, type SignupStarted } from '../api';
import { PASSWORD_MIN_LENGTH, validateSignup, type SignupValues } from '../validation';
import { useCheckedForm } from './useCheckedForm';

export function SignupForm({ onSuccess }: { onSuccess: (started: SignupStarted) => void }) {
  const signup = useSignup();
  const { field, onSubmit } = useCheckedForm<SignupValues>({
    initial: { email: '', password: '', organization_name: '', full_name: '' },
    order: ['full_name', 'email', 'password', 'organization_name'],
    validate: validateSignup,
    serverError: signup.error,
    send: (values) => {
      const fullName = values.full_name.trim();
      signup.mutate(
        {
          email: values.email.trim(),
          password: values.password,
          organization_name: values.organization_name.trim(),
          ...(fullName ? { full_name: fullName } : {}),
        },
        { onSuccess },
      );
    },
  });

  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Sign up">
      <FormError error={signup.error} shownFields={['full_name', 'email', 'password', 'organization_name']} />
      <TextField {...field('full_name')} label="Full name (optional)" autoComplete="name" />
      <TextField {...field('email')} label="Email" type="email" autoComplete="email" required />
      <TextField
        {...field('password')}
        label="Password"
        type="password"
        autoComplete="new-password"
        required
        hint={`At least ${PASSWORD_MIN_LENGTH} characters.`}
      />
      <TextField
        {...field('organization_name')}
        label="Organisation name"
        autoComplete="organization"
        required
        hint="Your team's workspace in Headroom; you can invite colleagues later."
      />
      <button type="submit" className="button button--primary button--block" disabled={signup.isPending}>
        {signup.isPending ? 'Creating your account…' : 'Create account'}
      </button>
    </form>
  );
}

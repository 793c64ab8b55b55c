import { FormError } from '@/components/FormError';
import { TextField } from '@/components/TextField';
import { useLogin, type Session } from '../api';
import { validateLogin, type LoginValues } from '../validation';
import { useCheckedForm } from './useCheckedForm';

export function LoginForm({ onSuccess }: { onSuccess: (session: Session) => void }) {
  const login = useLogin();
  const { field, onSubmit } = useCheckedForm<LoginValues>({
    initial: { email: '', password: '' },
    order: ['email', 'password'],
    validate: validateLogin,
    serverError: login.error,
    send: (values) => login.mutate({ email: values.email.trim(), password: values.password }, { onSuccess }),
  });

  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Log in">
      <FormError error={login.error} shownFields={['email', 'password']} />
      <TextField {...field('email')} label="Email" type="email" autoComplete="username" required />
      <TextField {...field('password')} label="Password" type="password" autoComplete="current-password" required />
      <button type="submit" className="button button--primary button--block" disabled={login.isPending}>
        {login.isPending ? 'Logging in…' : 'Log in'}
      </button>
    </form>
  );
}

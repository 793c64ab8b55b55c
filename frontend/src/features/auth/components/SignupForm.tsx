import { useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { TextField } from '@/components/TextField';
import { FormError } from '@/components/FormError';
import { useSignup, type SignupStarted } from '../api';
import { PASSWORD_MIN_LENGTH, validateSignup, type FieldErrors, type SignupValues } from '../validation';

type Field = keyof SignupValues;
const FIELD_ORDER: Field[] = ['full_name', 'email', 'password', 'organization_name'];

export function SignupForm({ onSuccess }: { onSuccess: (started: SignupStarted) => void }) {
  const [values, setValues] = useState<SignupValues>({ email: '', password: '', organization_name: '', full_name: '' });
  const [errors, setErrors] = useState<FieldErrors<Field>>({});
  const signup = useSignup();
  const refs = useRef<Partial<Record<Field, HTMLInputElement | null>>>({});

  const serverFieldErrors = fieldErrorsOf(signup.error);
  const fieldError = (field: Field) => errors[field] ?? serverFieldErrors[field];

  const update = (field: Field) => (event: ChangeEvent<HTMLInputElement>) => {
    setValues((v) => ({ ...v, [field]: event.target.value }));
    if (errors[field]) setErrors((e) => ({ ...e, [field]: undefined }));
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateSignup(values);
    setErrors(found);
    const first = FIELD_ORDER.find((f) => found[f]);
    if (first) {
      refs.current[first]?.focus();
      return;
    }
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
  };

  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Sign up">
      <FormError error={signup.error} />
      <TextField
        ref={(el) => {
          refs.current.full_name = el;
        }}
        label="Full name (optional)"
        name="full_name"
        autoComplete="name"
        value={values.full_name}
        onChange={update('full_name')}
        error={fieldError('full_name')}
      />
      <TextField
        ref={(el) => {
          refs.current.email = el;
        }}
        label="Email"
        name="email"
        type="email"
        autoComplete="email"
        required
        value={values.email}
        onChange={update('email')}
        error={fieldError('email')}
      />
      <TextField
        ref={(el) => {
          refs.current.password = el;
        }}
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        required
        hint={`At least ${PASSWORD_MIN_LENGTH} characters.`}
        value={values.password}
        onChange={update('password')}
        error={fieldError('password')}
      />
      <TextField
        ref={(el) => {
          refs.current.organization_name = el;
        }}
        label="Organisation name"
        name="organization_name"
        autoComplete="organization"
        required
        hint="Your team's workspace in Headroom; you can invite colleagues later."
        value={values.organization_name}
        onChange={update('organization_name')}
        error={fieldError('organization_name')}
      />
      <button type="submit" className="button button--primary button--block" disabled={signup.isPending}>
        {signup.isPending ? 'Creating your account…' : 'Create account'}
      </button>
    </form>
  );
}

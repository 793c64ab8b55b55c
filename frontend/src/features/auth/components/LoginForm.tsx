import { useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import { TextField } from '@/components/TextField';
import { FormError } from '@/components/FormError';
import { useLogin, type Session } from '../api';
import { validateLogin, type FieldErrors, type LoginValues } from '../validation';

type Field = keyof LoginValues;
const FIELD_ORDER: Field[] = ['email', 'password'];

export function LoginForm({ onSuccess }: { onSuccess: (session: Session) => void }) {
  const [values, setValues] = useState<LoginValues>({ email: '', password: '' });
  const [errors, setErrors] = useState<FieldErrors<Field>>({});
  const login = useLogin();
  const refs = useRef<Partial<Record<Field, HTMLInputElement | null>>>({});

  const serverFieldErrors = fieldErrorsOf(login.error);
  const fieldError = (field: Field) => errors[field] ?? serverFieldErrors[field];

  const update = (field: Field) => (event: ChangeEvent<HTMLInputElement>) => {
    setValues((v) => ({ ...v, [field]: event.target.value }));
    if (errors[field]) setErrors((e) => ({ ...e, [field]: undefined }));
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateLogin(values);
    setErrors(found);
    const first = FIELD_ORDER.find((f) => found[f]);
    if (first) {
      refs.current[first]?.focus();
      return;
    }
    login.mutate({ email: values.email.trim(), password: values.password }, { onSuccess });
  };

  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Log in">
      <FormError error={login.error} />
      <TextField
        ref={(el) => {
          refs.current.email = el;
        }}
        label="Email"
        name="email"
        type="email"
        autoComplete="username"
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
        autoComplete="current-password"
        required
        value={values.password}
        onChange={update('password')}
        error={fieldError('password')}
      />
      <button type="submit" className="button button--primary button--block" disabled={login.isPending}>
        {login.isPending ? 'Logging in…' : 'Log in'}
      </button>
    </form>
  );
}

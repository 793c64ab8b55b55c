/** Client-side checks mirror the API's rules so people see problems before a round trip. */

export const PASSWORD_MIN_LENGTH = 10;

// Deliberately loose: the server has the last word; this only catches obvious typos.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type FieldErrors<K extends string> = Partial<Record<K, string>>;

export function validateEmail(email: string): string | undefined {
  if (!email.trim()) return 'Enter your email address.';
  if (!EMAIL_PATTERN.test(email.trim())) return 'Enter a valid email address, like name@company.com.';
  return undefined;
}

export function validateNewPassword(password: string): string | undefined {
  if (!password) return 'Enter a password.';
  if (password.length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  return undefined;
}

export interface SignupValues {
  email: string;
  password: string;
  organization_name: string;
  full_name: string;
}

export function validateSignup(values: SignupValues): FieldErrors<keyof SignupValues> {
  const errors: FieldErrors<keyof SignupValues> = {};
  const email = validateEmail(values.email);
  if (email) errors.email = email;
  const password = validateNewPassword(values.password);
  if (password) errors.password = password;
  if (!values.organization_name.trim()) errors.organization_name = "Enter your organisation's name.";
  return errors;
}

export interface LoginValues {
  email: string;
  password: string;
}

export function validateLogin(values: LoginValues): FieldErrors<keyof LoginValues> {
  const errors: FieldErrors<keyof LoginValues> = {};
  const email = validateEmail(values.email);
  if (email) errors.email = email;
  if (!values.password) errors.password = 'Enter your password.';
  return errors;
}

export interface InvitationValues {
  full_name: string;
  password: string;
}

export function validateInvitation(values: InvitationValues): FieldErrors<keyof InvitationValues> {
  const errors: FieldErrors<keyof InvitationValues> = {};
  const password = validateNewPassword(values.password);
  if (password) errors.password = password;
  return errors;
}

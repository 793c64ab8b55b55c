import { errorMessage } from '@/api/errors';

/** What a form's request failed with, announced when it appears; nothing while there is no error. */
export function FormError({ error, prefix = '' }: { error: unknown; prefix?: string }) {
  if (!error) return null;
  return (
    <div className="form-error" role="alert">
      {prefix}
      {errorMessage(error)}
    </div>
  );
}

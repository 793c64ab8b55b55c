import { ApiError, errorMessage, fieldErrorsOf } from '@/api/errors';

/** Whether the message only repeats what the form already shows beside its fields (the API's validation answer
 * is "field: message", the field's message being shown under its input). */
function repeatsShownFields(error: unknown, shownFields: readonly string[]): boolean {
  if (!(error instanceof ApiError) || !Array.isArray(error.details)) return false;
  const fields = Object.keys(fieldErrorsOf(error));
  if (fields.length === 0 || !fields.every((f) => shownFields.includes(f))) return false;
  return (error.details as { message?: unknown }[]).some(
    (d) => typeof d.message === 'string' && d.message !== '' && error.message.includes(d.message),
  );
}

/**
 * What a form's request failed with, announced when it appears; nothing while there is no error. `shownFields`:
 * the fields whose API messages the form shows next to their inputs; a message that only repeats one of those is
 * not shown again here (it stands once, beside the field it names).
 */
export function FormError({
  error,
  prefix = '',
  shownFields = [],
}: {
  error: unknown;
  prefix?: string;
  shownFields?: readonly string[];
}) {
  if (!error || repeatsShownFields(error, shownFields)) return null;
  return (
    <div className="form-error" role="alert">
      {prefix}
      {errorMessage(error)}
    </div>
  );
}

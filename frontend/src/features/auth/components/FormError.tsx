/** The API's error message for a whole form, announced when it appears. */
export function FormError({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <div className="form-error" role="alert">
      {message}
    </div>
  );
}

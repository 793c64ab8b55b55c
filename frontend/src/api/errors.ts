/** The body every API error has: {"error": {"code", "message", "details"}}. */
export interface ApiErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export interface FieldError {
  field: string;
  message: string;
}

/** An error the API answered with (or a failure to reach it), carrying the API's code and message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }

  /**
   * Validation details keyed by top-level field: "body.email" becomes "email", and "regions.0" and "regions"
   * both become "regions", so a list field shows its item's message next to the list input.
   */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.code !== 'validation_error' || !Array.isArray(this.details)) return out;
    for (const item of this.details as unknown[]) {
      if (!isFieldError(item)) continue;
      const name = item.field.split('.').find((part) => part && part !== 'body') ?? item.field;
      // Shown under the field's label, as a sentence ("expected an IAM role ARN like …" -> "Expected …").
      out[name] ??= item.message.charAt(0).toUpperCase() + item.message.slice(1);
    }
    return out;
  }
}

/** The field errors of whatever a mutation failed with (none unless the API rejected the input). */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  return error instanceof ApiError ? error.fieldErrors() : {};
}

function isFieldError(value: unknown): value is FieldError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as FieldError).field === 'string' &&
    typeof (value as FieldError).message === 'string'
  );
}

export function isApiErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const inner = (value as { error?: unknown }).error;
  return (
    typeof inner === 'object' &&
    inner !== null &&
    typeof (inner as { code?: unknown }).code === 'string' &&
    typeof (inner as { message?: unknown }).message === 'string'
  );
}

/** Build an ApiError from an HTTP status and whatever body came back. */
export function toApiError(status: number, body: unknown): ApiError {
  if (isApiErrorBody(body)) {
    return new ApiError(status, body.error.code, body.error.message, body.error.details);
  }
  return new ApiError(status, 'http_error', `The server answered with HTTP ${status}. Try again in a moment.`);
}

export const NETWORK_ERROR_MESSAGE = 'Could not reach the Headroom server. Check your connection and try again.';

/** The shape of every openapi-fetch result: data on success, error otherwise. */
interface Result<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** Await an openapi-fetch call: its data on success, an ApiError otherwise. */
export async function unwrap<D>(pending: Promise<Result<D>>): Promise<D> {
  let result: Result<D>;
  try {
    result = await pending;
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiError(0, 'network_error', NETWORK_ERROR_MESSAGE, String(cause));
  }
  if (result.error !== undefined || !result.response.ok) {
    throw toApiError(result.response.status, result.error);
  }
  return result.data as D;
}

/** A message fit to show a person, whatever was thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong. Try again.';
}

import { ApiError } from '@/api/errors';

/**
 * Validation details of an API error keyed by top-level field: "regions.0" and "regions" both become
 * "regions", so a list field shows its item's message next to the list input.
 */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(error instanceof ApiError) || error.code !== 'validation_error' || !Array.isArray(error.details)) return out;
  for (const item of error.details as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { field, message } = item as { field?: unknown; message?: unknown };
    if (typeof field !== 'string' || typeof message !== 'string') continue;
    const name = field.split('.').find((part) => part && part !== 'body') ?? field;
    out[name] ??= message;
  }
  return out;
}

export function formatDateTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

export function formatCount(n: number): string {
  return new Intl.NumberFormat('en-US').format(n);
}

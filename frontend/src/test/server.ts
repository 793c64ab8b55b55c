import { setupServer } from 'msw/node';

export const server = setupServer();

/** The absolute URL of an API path, as the client requests it under jsdom. */
export function apiUrl(path: string): string {
  return `${window.location.origin}/api/v1${path}`;
}

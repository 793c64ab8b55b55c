import { QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router';
import { createQueryClient } from '@/api/query-client';

function testQueryClient() {
  const client = createQueryClient();
  client.setDefaultOptions({ queries: { retry: false, staleTime: Infinity }, mutations: { retry: false } });
  return client;
}

/** Render a component inside a fresh query client. */
export function renderWithClient(ui: ReactElement) {
  const queryClient = testQueryClient();
  const user = userEvent.setup();
  return { user, queryClient, ...render(<QueryClientProvider client={queryClient}>{ui}</QueryClientProvider>) };
}

/** Render the app's routes at `path` inside a fresh query client and an in-memory router. */
export function renderRoutes(routes: RouteObject[], path: string) {
  const queryClient = testQueryClient();
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const user = userEvent.setup();
  return {
    user,
    router,
    queryClient,
    ...render(
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    ),
  };
}

export const SESSION = {
  user: { id: '6f1c1f0e-8a51-4b8e-9a57-1a2b3c4d5e6f', email: 'ada@example.com', full_name: 'Ada Lovelace' },
  organization: { id: '0b8f8b58-4a0a-4c57-a0a5-6c7d8e9f0a1b', name: 'Analytical Engines', slug: 'analytical-engines' },
  role: 'owner' as const,
};

export function apiError(code: string, message: string, details: unknown = null) {
  return { error: { code, message, details } };
}

import type { QueryClient } from '@tanstack/react-query';
import { matchRoutes, type Params, type RouteObject } from 'react-router';

/** What a route's `prefetch` is given: the app's query client, the address's params, the address itself, and the
 * signed-in person's role once the session has answered (null without a session). */
export interface RoutePrefetchContext {
  queryClient: QueryClient;
  params: Params;
  location: { pathname: string; search: string };
  role: () => Promise<string | null>;
}

/** A route's handle: the requests its page makes first, under the keys its hooks read. */
export interface RouteHandle {
  prefetch?: (context: RoutePrefetchContext) => void;
}

/**
 * At the app's start, for the address it opens: start the first requests of every route on the way to its page
 * (a layout's and the page's own), beside the session and the page's code, rather than once the code has arrived,
 * the session has answered and the page has been drawn and painted (a query's request starts from an effect, after
 * the paint). The page's hooks find them under way or answered (queries are fresh for 30 s). Requests only some
 * roles may make wait for the session's role (asked for at the same moment).
 */
export function prefetchRoute(routes: RouteObject[], context: Omit<RoutePrefetchContext, 'params'>) {
  for (const match of matchRoutes(routes, context.location) ?? []) {
    (match.route.handle as RouteHandle | undefined)?.prefetch?.({ ...context, params: match.params });
  }
}

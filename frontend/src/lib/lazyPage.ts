import type { ComponentType } from 'react';

/** A route's `lazy` for a page module whose default export is the page: the page's code (and what only it
 * imports) is a chunk of its own, fetched when the route is first matched, so no page weighs on another's first
 * load (the 150 KB initial-JavaScript budget, bench/frontend_budget.py). */
export function lazyPage(load: () => Promise<{ default: ComponentType }>) {
  return async () => ({ Component: (await load()).default });
}

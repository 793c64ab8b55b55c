import { useEffect } from 'react';

/** Set the tab title to "<page> · Headroom" while the page is shown. */
export function usePageTitle(page: string): void {
  useEffect(() => {
    const previous = document.title;
    document.title = `${page} · Headroom`;
    return () => {
      document.title = previous;
    };
  }, [page]);
}

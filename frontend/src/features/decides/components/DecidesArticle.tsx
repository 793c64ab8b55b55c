import { lazy, Suspense } from 'react';
import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { useDecidesMarkdown } from '../api';

const DecidesMarkdown = lazy(() => import('./DecidesMarkdown'));

/** A page's text: its Markdown, fetched and rendered when the page is opened. */
export function DecidesArticle({ slug }: { slug: string }) {
  const query = useDecidesMarkdown(slug);
  const loading = <LoadingState label="Loading the page…" />;
  if (query.isPending) return loading;
  if (query.isError) return <QueryError title="Could not load the page" query={query} />;
  return (
    <Suspense fallback={loading}>
      <DecidesMarkdown markdown={query.data} />
    </Suspense>
  );
}

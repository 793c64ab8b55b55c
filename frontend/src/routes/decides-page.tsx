import { Link, useParams } from 'react-router';
import { EmptyState } from '@/components/EmptyState';
import { DecidesArticle } from '@/features/decides/components/DecidesArticle';
import { DECIDES, DECIDES_PATH, decidesPage } from '@/lib/decides';
import { usePageTitle } from '@/lib/usePageTitle';

/** One "How Headroom decides" page, rendered from its Markdown. */
export default function DecidesPage() {
  const { page: slug = '' } = useParams();
  const page = decidesPage(slug);
  usePageTitle(page ? `${DECIDES}: ${page.title}` : DECIDES);
  return (
    <div className="decides">
      <nav aria-label="Breadcrumb" className="muted small">
        <Link to={DECIDES_PATH}>{DECIDES}</Link>
      </nav>
      {page ? (
        <article aria-labelledby="decides-title">
          <h1 id="decides-title">{page.title}</h1>
          <DecidesArticle slug={page.slug} />
        </article>
      ) : (
        <EmptyState title="No such page">
          <Link to={DECIDES_PATH}>See every page of {DECIDES}</Link>
        </EmptyState>
      )}
    </div>
  );
}

import { Link } from 'react-router';
import { DECIDES_PAGES, decidesHref } from '@/lib/decides';
import { pageSummaries, useDecidesMarkdown } from '../api';

/** Every "How Headroom decides" page by its title, with what it explains, in the order of the repository's index. */
export function DecidesIndex() {
  const readme = useDecidesMarkdown('README');
  const summaries = pageSummaries(readme.data ?? '');
  const order = [...summaries.keys()];
  const rank = (slug: string) => (order.includes(slug) ? order.indexOf(slug) : order.length);
  const pages = [...DECIDES_PAGES].sort((a, b) => rank(a.slug) - rank(b.slug));
  return (
    <ul className="decides-index" aria-label="Pages">
      {pages.map((p) => (
        <li key={p.slug}>
          <Link to={decidesHref(p.slug)}>{p.title}</Link>
          {summaries.get(p.slug) && <span className="muted">: {summaries.get(p.slug)}</span>}
        </li>
      ))}
    </ul>
  );
}

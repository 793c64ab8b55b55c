import { Link } from 'react-router';
import { DECIDES_PAGES, decidesHref } from '@/lib/decides';

/** Every "How Headroom decides" page by its title, with what it explains. */
export function DecidesIndex() {
  return (
    <ul className="decides-index" aria-label="Pages">
      {DECIDES_PAGES.map((p) => (
        <li key={p.slug}>
          <Link to={decidesHref(p.slug)}>{p.title}</Link>
          {p.summary && <span className="muted">: {p.summary}</span>}
        </li>
      ))}
    </ul>
  );
}

import { Fragment, type ReactNode } from 'react';
import { Link } from 'react-router';
import { DECIDES, DECIDES_PAGES, decidesHref, decidesName, thresholdsPathTarget } from '@/lib/decides';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// A public address; a "How Headroom decides" page named by its title (the longest title first, so that one title
// that starts another is not cut short); a repository path of such a page ("docs/thresholds/burst.md").
const TITLES = [...DECIDES_PAGES].sort((a, b) => b.title.length - a.title.length);
const PIECES = new RegExp(
  [
    '(https:\\/\\/[^\\s)]+)',
    `(${escape(DECIDES)}: (?:${TITLES.map((p) => escape(p.title)).join('|') || '(?!)'}))`,
    '(docs\\/thresholds\\/[\\w-]+\\.md(?:#[\\w-]+)?)',
  ].join('|'),
  'g',
);

/**
 * A source as the API gives it ("AWS: Amazon EBS volume types (https://docs.aws.amazon.com/...)"), with its
 * links clickable, and a Headroom threshold page ("How Headroom decides: Block size") a link to that page in the app.
 */
export function SourceText({ text }: { text: string }) {
  const out: ReactNode[] = [];
  let last = 0;
  for (const m of text.matchAll(PIECES)) {
    const at = m.index ?? 0;
    if (at > last) out.push(<Fragment key={`t${at}`}>{text.slice(last, at)}</Fragment>);
    const [whole, url, named, path] = m;
    if (url) {
      out.push(
        <a key={at} className="source-link" href={url} target="_blank" rel="noreferrer noopener">
          {url}
        </a>,
      );
    } else {
      const page = named
        ? DECIDES_PAGES.find((p) => named === decidesName(p))
        : DECIDES_PAGES.find((p) => p.slug === thresholdsPathTarget(path ?? '')?.slug);
      const anchor = path ? (thresholdsPathTarget(path)?.anchor ?? '') : '';
      out.push(
        page ? (
          <Link key={at} className="source-link" to={decidesHref(page.slug, anchor)}>
            {decidesName(page)}
          </Link>
        ) : (
          <Fragment key={at}>{whole}</Fragment>
        ),
      );
    }
    last = at + whole.length;
  }
  if (last < text.length) out.push(<Fragment key={`t${last}`}>{text.slice(last)}</Fragment>);
  return <>{out}</>;
}

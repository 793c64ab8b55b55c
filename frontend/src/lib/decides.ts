/**
 * "How Headroom decides": the pages that explain Headroom's own thresholds, bundled at build time from the
 * repository's docs/thresholds/*.md. A page is known by its file name (the slug, its address in the app) and its
 * title (its first heading), which is how the API's sources name it ("How Headroom decides: <title>").
 *
 * Only the titles are in this module (vite.config.ts reads them at build time): every page that shows a source
 * links it without carrying the pages. A page's Markdown is its own chunk, fetched when it is opened.
 */

const TITLES = import.meta.glob<string>(['../../../docs/thresholds/*.md', '!**/README.md'], {
  query: '?title',
  import: 'default',
  eager: true,
});
const MARKDOWN = import.meta.glob<string>(['../../../docs/thresholds/*.md'], { query: '?raw', import: 'default' });

export const DECIDES = 'How Headroom decides';
export const DECIDES_PATH = '/decides';

export interface DecidesPage {
  slug: string;
  title: string;
}

function slugOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/\.md$/, '');
}

/** Every page, by title. */
export const DECIDES_PAGES: DecidesPage[] = Object.entries(TITLES)
  .map(([path, title]) => ({ slug: slugOf(path), title: title || slugOf(path) }))
  .sort((a, b) => a.title.localeCompare(b.title));

export function decidesPage(slug: string): DecidesPage | undefined {
  return DECIDES_PAGES.find((p) => p.slug === slug);
}

/** A page's Markdown ("README" is the index's); rejects for a page that does not exist. */
export function loadDecidesMarkdown(slug: string): Promise<string> {
  const load = Object.entries(MARKDOWN).find(([path]) => slugOf(path) === slug)?.[1];
  return load ? load() : Promise.reject(new Error(`no page ${slug}`));
}

/** The page's address in the app, with an anchor inside it when given ("#prices-and-their-region"). */
export function decidesHref(slug: string, anchor = ''): string {
  return `${DECIDES_PATH}/${slug}${anchor}`;
}

/** How a link to a page is named: "How Headroom decides: <title>". */
export function decidesName(page: DecidesPage): string {
  return `${DECIDES}: ${page.title}`;
}

/** A heading's anchor, as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** A reference to a page in a text: a repository path "docs/thresholds/burst.md" (a link's address or a source
 * written before the API named pages by title) and the slug it names, with the anchor. */
export function thresholdsPathTarget(href: string): { slug: string; anchor: string } | null {
  const m = /^(?:(?:\.\.\/)*(?:docs\/)?thresholds\/|\.\/)?([\w-]+)\.md(#[\w-]+)?$/.exec(href);
  if (!m || !decidesPage(m[1]!)) return null;
  return { slug: m[1]!, anchor: m[2] ?? '' };
}

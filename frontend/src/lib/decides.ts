/**
 * "How Headroom decides": the pages that explain Headroom's own thresholds, bundled at build time from the
 * repository's docs/thresholds/*.md. A page is known by its file name (the slug, its address in the app) and its
 * title (its first heading), which is how the API's sources name it ("How Headroom decides: <title>").
 */

const RAW = import.meta.glob<string>('../../../docs/thresholds/*.md', { query: '?raw', import: 'default', eager: true });

export const DECIDES = 'How Headroom decides';
export const DECIDES_PATH = '/decides';

export interface DecidesPage {
  slug: string;
  title: string;
  /** What the page explains, in a line (the index's table in docs/thresholds/README.md). */
  summary: string;
  markdown: string;
}

function slugOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/\.md$/, '');
}

function titleOf(markdown: string, slug: string): string {
  const heading = markdown.split('\n').find((line) => line.startsWith('# '));
  return heading ? heading.slice(2).trim() : slug;
}

/** The index's one line per page: `| [burst.md](burst.md) | what it explains |`. */
function summaries(readme: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readme.split('\n')) {
    const m = /^\|\s*\[[^\]]*\]\(([\w-]+)\.md\)\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!.replace(/`/g, ''));
  }
  return out;
}

const readme = Object.entries(RAW).find(([path]) => slugOf(path) === 'README')?.[1] ?? '';
const described = summaries(readme);

/** Every page, in the order of the index (the rest after it, by title). */
export const DECIDES_PAGES: DecidesPage[] = Object.entries(RAW)
  .filter(([path]) => slugOf(path) !== 'README')
  .map(([path, markdown]) => {
    const slug = slugOf(path);
    return { slug, title: titleOf(markdown, slug), summary: described.get(slug) ?? '', markdown };
  })
  .sort((a, b) => {
    const order = [...described.keys()];
    const ia = order.indexOf(a.slug);
    const ib = order.indexOf(b.slug);
    return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib) || a.title.localeCompare(b.title);
  });

export function decidesPage(slug: string): DecidesPage | undefined {
  return DECIDES_PAGES.find((p) => p.slug === slug);
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

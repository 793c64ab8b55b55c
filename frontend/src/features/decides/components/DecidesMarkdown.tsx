import { Children, isValidElement, type ReactNode } from 'react';
import Markdown, { type Components } from 'react-markdown';
import { Link } from 'react-router';
import remarkGfm from 'remark-gfm';
import { decidesHref, decidesPage, headingId, thresholdsPathTarget } from '@/lib/decides';

/** The plain text of a node's children (a heading's words, a link's label). */
function textOf(children: ReactNode): string {
  return Children.toArray(children)
    .map((c) => (typeof c === 'string' || typeof c === 'number' ? String(c) : isValidElement<{ children?: ReactNode }>(c) ? textOf(c.props.children) : ''))
    .join('');
}

// A path in Headroom's repository (a module, a test, a developer page): the reader has no repository, so the
// page says "Headroom's source" instead. Other projects' paths (TiKV's pd.rs) are kept: they are public.
const REPOSITORY_PATH = /^(?:backend|frontend|worker|docs|e2e|migrations|bench|scripts)\/|^_?[\w]+\.py$/;

function heading(Tag: 'h2' | 'h3' | 'h4') {
  return function Heading({ children }: { children?: ReactNode }) {
    return <Tag id={headingId(textOf(children))}>{children}</Tag>;
  };
}

const COMPONENTS: Components = {
  // the page's own title is the route's h1; the file's "# Title" is left out before rendering
  h1: heading('h2'),
  h2: heading('h2'),
  h3: heading('h3'),
  h4: heading('h4'),
  a({ href = '', children }) {
    if (/^https?:\/\//.test(href)) {
      return (
        <a className="source-link" href={href} target="_blank" rel="noreferrer noopener">
          {children}
        </a>
      );
    }
    if (href.startsWith('#')) return <a href={href}>{children}</a>;
    const target = thresholdsPathTarget(href);
    const page = target ? decidesPage(target.slug) : undefined;
    if (target && page) {
      // a link named by its file ("burst.md") is named by the page's title
      const label = /\.md$/.test(textOf(children)) ? page.title : children;
      return <Link to={decidesHref(target.slug, target.anchor)}>{label}</Link>;
    }
    // a page of the repository outside these pages: its words, without its path
    return <>{/\.md$/.test(textOf(children)) ? "Headroom's documentation" : children}</>;
  },
  code({ children, className }) {
    const text = textOf(children);
    if (!className && REPOSITORY_PATH.test(text)) return <>Headroom&apos;s source</>;
    return <code className={className}>{children}</code>;
  },
};

/** Drop the file's first "# Title" line: the page shows the title as its h1. */
function body(markdown: string): string {
  return markdown.replace(/^# .*\n+/, '');
}

/** A "How Headroom decides" page's Markdown as HTML elements (raw HTML in the file is not rendered). Loaded
 * lazily (api.ts): the Markdown renderer is no page's first load. */
export default function DecidesMarkdown({ markdown }: { markdown: string }) {
  return (
    <section className="prose" aria-label="Page text">
      <Markdown remarkPlugins={[remarkGfm]} components={COMPONENTS}>
        {body(markdown)}
      </Markdown>
    </section>
  );
}

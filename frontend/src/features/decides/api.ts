import { useQuery } from '@tanstack/react-query';
import { loadDecidesMarkdown } from '@/lib/decides';

/** A page's Markdown (its own chunk of the build); it never changes while the app runs. */
export function useDecidesMarkdown(slug: string) {
  return useQuery({
    queryKey: ['decides', slug],
    queryFn: () => loadDecidesMarkdown(slug),
    staleTime: Infinity,
    gcTime: Infinity,
  });
}

/** The index's one line per page (docs/thresholds/README.md's table): slug -> what the page explains, in order. */
export function pageSummaries(readme: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readme.split('\n')) {
    const m = /^\|\s*\[[^\]]*\]\(([\w-]+)\.md\)\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!.replace(/`/g, ''));
  }
  return out;
}

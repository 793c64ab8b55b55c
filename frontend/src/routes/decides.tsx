import { DecidesIndex } from '@/features/decides';
import { DECIDES } from '@/lib/decides';
import { usePageTitle } from '@/lib/usePageTitle';

/** The index of the pages that explain Headroom's own thresholds. */
export default function DecidesIndexPage() {
  usePageTitle(DECIDES);
  return (
    <div className="decides">
      <h1>{DECIDES}</h1>
      <p>
        Most numbers in a finding come from a public document, and the finding links to it (AWS documentation,
        PingCAP&apos;s and TiKV&apos;s documentation or source). Some are Headroom&apos;s own choice: where the
        documents give a direction but no number, or where a rule needs a margin to act on. Each page below explains
        one family of those choices: the value, where it is used and why. A finding that rests on one links to its
        page.
      </p>
      <DecidesIndex />
    </div>
  );
}

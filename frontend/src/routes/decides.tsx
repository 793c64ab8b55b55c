import { RuleAccuracyList } from '@/features/changes/components/RuleAccuracyList';
import { DecidesIndex } from '@/features/decides/components/DecidesIndex';
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
      <section aria-labelledby="rules-record">
        <h2 id="rules-record">How often the advice held</h2>
        <p>
          For every fix applied on this organisation&apos;s clusters, Headroom compares the effect the finding
          predicted with the effect measured: the use of the ceiling it moves, the week after the change against the
          same hours one week earlier. Each rule below says how often its prediction held (see &ldquo;Fix outcomes:
          when a prediction held&rdquo; above for the tolerance).
        </p>
        <RuleAccuracyList />
      </section>
    </div>
  );
}

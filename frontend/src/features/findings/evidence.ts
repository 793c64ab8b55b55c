/** A finding's evidence, impact, options and forecasts: the API's own types (generated), and how to say them. */
import { settingText } from '@/lib/change';
import { formatDuration, formatValue } from '@/lib/format';
import type { components } from '@/api/schema';

type Schemas = components['schemas'];
export type Evidence = Schemas['Evidence'];
export type Measure = Schemas['Measure'];
export type Impact = Schemas['Impact'];
export type FixOption = Schemas['Option'];
export type Forecast = Schemas['Forecast'];
export type NodeEvidence = Schemas['NodeEvidence'];

const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });

function hhmm(iso: string): string {
  return clock.format(new Date(iso));
}

/** One sentence on a typed forecast (headroom.domain.model.Forecast): what the weekly email says, for the page. */
export function describeForecast(f: Forecast): string {
  const rate = (value: number) => formatValue(value, f.unit);
  const demand = f.demand === null ? '' : ` at ${rate(f.demand)}`;
  const balance = f.balance_pct === null ? '' : ` (balance ${formatValue(f.balance_pct, '%')} now)`;
  switch (f.kind) {
    case 'burst_empty': {
      if (f.within_seconds === 0) {
        return `Empty now: serving at most ${f.value === null ? 'its baseline' : `the ${rate(f.value)} baseline`}.`;
      }
      if (f.within_seconds === null) return `Not draining${demand || ' at the recent demand'}${balance}.`;
      const band = f.earliest ? ` (between ${hhmm(f.earliest)} and ${f.latest ? hhmm(f.latest) : 'never'})` : '';
      const when = f.at ? `, at ${hhmm(f.at)} UTC${band}` : '';
      const after = f.value === null ? '' : `; then ${rate(f.value)}`;
      return `Empties in ${formatDuration(f.within_seconds)}${demand}${balance}${when}${after}.`;
    }
    case 'refill': {
      const offPeak = f.demand === null ? '' : ` at the off-peak ${rate(f.demand)}`;
      return f.within_seconds === null ? `Does not refill${offPeak}.` : `Refills in ${formatDuration(f.within_seconds)}${offPeak}.`;
    }
    case 'ceiling': {
      const what = `${f.label ?? 'The ceiling'}${f.value === null ? '' : ` (${rate(f.value)})`}`;
      return f.within_seconds === null
        ? `${what}: not reached within the forecast horizon.`
        : `${what}: reached in about ${formatDuration(f.within_seconds)} at the current growth.`;
    }
  }
}

/** What one store of a cluster-level config finding would need alone, e.g. "storage.scheduler-worker-pool-size = 6". */
export function describeNeeds(node: NodeEvidence): string {
  const needs = Object.entries(node.needs).map(([key, value]) => `${key} = ${settingText(value, key)}`);
  return needs.length > 0 ? needs.join(', ') : '—';
}

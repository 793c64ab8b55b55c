/** Readers for a finding's free-form evidence, impact and options (typed as plain objects by the API). */

export interface Measure {
  label: string;
  value: number | null;
  unit: string;
  statistic: string | null;
  limit: number | null;
  limitLabel: string | null;
  source: string | null;
}

export interface Evidence {
  condition: string | null;
  windowStart: string | null;
  windowEnd: string | null;
  measures: Measure[];
  corroboration: string[];
}

export interface Impact {
  summary: string | null;
  metric: string | null;
  unit: string;
  before: number | null;
  after: number | null;
  monthlyCostBeforeUsd: number | null;
  monthlyCostAfterUsd: number | null;
  monthlyCostDeltaUsd: number | null;
  headroomBeforePct: number | null;
  headroomAfterPct: number | null;
}

export interface OptionChange {
  key: string;
  target: string;
  current: unknown;
  proposed: unknown;
  online: boolean;
  entity: string | null;
}

export interface FixOption {
  label: string;
  notes: string[];
  impact: Impact | null;
  changes: OptionChange[];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function readEvidence(raw: unknown): Evidence {
  const e = record(raw);
  const measures = (Array.isArray(e.measures) ? e.measures : []).map((m): Measure => {
    const r = record(m);
    return {
      label: str(r.label) ?? 'measure',
      value: num(r.value),
      unit: str(r.unit) ?? '',
      statistic: str(r.statistic),
      limit: num(r.limit),
      limitLabel: str(r.limit_label),
      source: str(r.source),
    };
  });
  return {
    condition: str(e.condition),
    windowStart: str(e.window_start),
    windowEnd: str(e.window_end),
    measures,
    corroboration: strings(e.corroboration),
  };
}

export function readImpact(raw: unknown): Impact | null {
  const i = record(raw);
  if (Object.keys(i).length === 0) return null;
  return {
    summary: str(i.summary),
    metric: str(i.metric),
    unit: str(i.unit) ?? '',
    before: num(i.before),
    after: num(i.after),
    monthlyCostBeforeUsd: num(i.monthly_cost_before_usd),
    monthlyCostAfterUsd: num(i.monthly_cost_after_usd),
    monthlyCostDeltaUsd: num(i.monthly_cost_delta_usd),
    headroomBeforePct: num(i.headroom_before_pct),
    headroomAfterPct: num(i.headroom_after_pct),
  };
}

export function readOptions(raw: unknown): FixOption[] {
  return (Array.isArray(raw) ? raw : []).map((o): FixOption => {
    const r = record(o);
    const changes = (Array.isArray(r.changes) ? r.changes : []).map((c): OptionChange => {
      const ch = record(c);
      const entity = record(ch.entity);
      return {
        key: str(ch.key) ?? '',
        target: str(ch.target) ?? '',
        current: ch.current,
        proposed: ch.proposed,
        online: ch.online === true,
        entity: str(ch.entity) ?? str(entity.node) ?? str(entity.id),
      };
    });
    return { label: str(r.label) ?? 'Option', notes: strings(r.notes), impact: readImpact(r.impact), changes };
  });
}

// Units of the AWS attributes a change can set: EC2 ModifyVolume takes Size in GiB, Iops in IOPS and Throughput
// in MiB/s (EC2 API reference, ModifyVolume; the units of domain.md §1.1). tikv.toml values carry their own units ("4GiB").
const SETTING_UNIT: Record<string, string> = {
  'volume.size': 'GiB',
  'volume.iops': 'IOPS',
  'volume.throughput': 'MiB/s',
};

/** A config or AWS value as text: strings as written, numbers with their unit, null as "not set". */
export function formatSetting(value: unknown, key?: string): string {
  if (value === null || value === undefined) return 'not set';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(value);
    const unit = key ? SETTING_UNIT[key] : undefined;
    return unit ? `${number} ${unit}` : number;
  }
  return JSON.stringify(value);
}

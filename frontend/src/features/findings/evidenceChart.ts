import type { Ceiling, TimeSeries } from '@/components/TimeSeriesChart';
import type { paths } from '@/api/schema';
import type { Measure } from './evidence';

export type EvidenceChartData =
  paths['/api/v1/findings/{finding_id}/evidence/series']['get']['responses'][200]['content']['application/json'];
type EvidenceSeries = EvidenceChartData['series'][number];

/** One chart of a finding's evidence: the series that share a unit, with their ceilings. */
export interface EvidenceChart {
  id: string;
  title: string;
  unit: string;
  series: TimeSeries[];
  ceilings: Ceiling[];
  /** Limits far above every plotted value: listed under the chart instead of flattening its lines. */
  offScale: Ceiling[];
}

// A ceiling more than this many times the highest plotted value is listed, not drawn (UI choice: drawn, it would
// squash the data into the bottom pixels, e.g. a 10 GiB/s rocksdb.rate-bytes-per-sec over a 125 MiB/s disk).
const OFF_SCALE_FACTOR = 10;

const MIB = 1024 * 1024;

// Units as the metric registry spells them (headroom/domain/snapshot/registry.py) -> what the charts show. Bytes are shown
// in MiB (1 MiB = 1,048,576 bytes) so a rate reads as the MiB/s the EBS limits use (domain.md §1.4).
const UNITS: Record<string, { unit: string; scale: number }> = {
  Percent: { unit: '%', scale: 1 },
  percent: { unit: '%', scale: 1 },
  bytes: { unit: 'MiB', scale: 1 / MIB },
  Bytes: { unit: 'MiB', scale: 1 / MIB },
  'bytes/s': { unit: 'MiB/s', scale: 1 / MIB },
  Count: { unit: 'count', scale: 1 },
};

function displayUnit(unit: string): { unit: string; scale: number } {
  return UNITS[unit] ?? { unit: unit || 'value', scale: 1 };
}

/**
 * Where a reference line's number comes from: the evidence measure whose limit it is (same value, or same
 * label), or a measure that is that limit, else the finding's sources, else the rule that drew it.
 */
export function ceilingSource(
  line: { value: number; label: string },
  measures: Measure[],
  findingSources: string[],
  rule: string,
): string {
  const byValue = measures.find((m) => m.limit !== null && Math.abs(m.limit - line.value) < 1e-9 && m.source);
  const byLabel = measures.find((m) => m.limit_label === line.label && m.source);
  // a measure that is itself a limit (e.g. "burst ceiling 3,000 IOPS", no limit of its own)
  const asMeasure = measures.find((m) => m.limit === null && m.value === line.value && m.source);
  const source = byValue?.source ?? byLabel?.source ?? asMeasure?.source;
  if (source) return source;
  if (findingSources.length > 0) return findingSources.join('; ');
  return `the ${rule} rule's threshold`;
}

/** Reshape the API's evidence series into one chart per unit, ceilings deduplicated, bytes shown as MiB. */
export function toEvidenceCharts(
  data: EvidenceChartData,
  measures: Measure[],
  findingSources: string[],
  rule: string,
): { charts: EvidenceChart[]; missing: EvidenceSeries[] } {
  const charts = new Map<string, EvidenceChart>();
  const missing: EvidenceSeries[] = [];
  data.series.forEach((s, i) => {
    if (!s.found) {
      missing.push(s);
      return;
    }
    const { unit, scale } = displayUnit(s.unit);
    let chart = charts.get(unit);
    if (!chart) {
      chart = { id: `evidence-${unit}`, title: '', unit, series: [], ceilings: [], offScale: [] };
      charts.set(unit, chart);
    }
    chart.series.push({
      id: `${i}:${s.metric}:${s.entity_id}`,
      label: s.label,
      points: s.t.map((t, j) => {
        const v = s.values[j];
        return { t: t * 1000, value: v === null || v === undefined ? null : v * scale };
      }),
    });
    for (const line of s.reference_lines ?? []) {
      const value = line.value * displayUnit(line.unit).scale;
      if (chart.ceilings.some((c) => c.label === line.label && c.value === value)) continue;
      chart.ceilings.push({
        id: `${chart.ceilings.length}:${line.label}`,
        label: line.label,
        value,
        source: ceilingSource(line, measures, findingSources, rule),
      });
    }
  });
  for (const chart of charts.values()) {
    let highest = 0;
    for (const s of chart.series) for (const p of s.points) if (p.value !== null) highest = Math.max(highest, p.value);
    if (highest > 0) {
      chart.offScale = chart.ceilings.filter((c) => c.value > OFF_SCALE_FACTOR * highest);
      chart.ceilings = chart.ceilings.filter((c) => c.value <= OFF_SCALE_FACTOR * highest);
    }
    chart.title =
      chart.series.length === 1 ? `${chart.series[0]!.label} (${chart.unit})` : `${chart.series.map((s) => s.label).join(', ')} (${chart.unit})`;
  }
  return { charts: [...charts.values()], missing };
}

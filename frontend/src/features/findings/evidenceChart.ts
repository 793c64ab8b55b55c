import type { Ceiling, TimeSeries } from '@/components/TimeSeriesChart';
import type { paths } from '@/api/schema';
import { humanUnit } from '@/lib/format';

export type EvidenceChartData =
  paths['/api/v1/findings/{finding_id}/evidence/series']['get']['responses'][200]['content']['application/json'];
type EvidenceSeries = EvidenceChartData['series'][number];

/** One chart of a finding's evidence: the series that share a unit, with their ceilings. */
export interface EvidenceChart {
  id: string;
  title: string;
  unit: string;
  /** Each series with the entity it is about (a store, a volume); legends name it when the chart has several. */
  series: (TimeSeries & { name: string; entity: string })[];
  ceilings: Ceiling[];
  /** Limits far above every plotted value: listed under the chart instead of flattening its lines. */
  offScale: Ceiling[];
  /** A yes/no series (1 = yes), charted apart from any count. */
  flag: boolean;
}

// A ceiling more than this many times the highest plotted value is listed, not drawn (UI choice: drawn, it would
// squash the data into the bottom pixels, e.g. a 10 GiB/s rocksdb.rate-bytes-per-sec over a 125 MiB/s disk).
const OFF_SCALE_FACTOR = 10;

// Units as the metric registry spells them (headroom/domain/snapshot/registry.py) -> what the charts show: one
// unit per quantity (lib/format.ts humanUnit), e.g. bytes/s as the MiB/s the EBS limits use.
function displayUnit(unit: string): { unit: string; scale: number; flag: boolean } {
  const human = humanUnit(unit);
  return { unit: human.unit, scale: human.scale, flag: human.flag === true };
}

// A yes/no series (an EBS exceeded check: 1 in a minute demand exceeded the volume) gets a chart of its own: on a
// count's axis (VolumeQueueLength) its 0 and 1 would read as a queue of 0 or 1.
const FLAG_KEY = 'yes/no';
export const FLAG_TITLE_UNIT = '1 = yes, 0 = no';

/** What a line whose finding was stored before lines carried their source says instead of guessing one. */
export const SOURCE_NOT_RECORDED = 'source not recorded (the finding was stored before its lines carried one)';

/**
 * Where a reference line's number comes from: the source the rule gave it (a public page's link, or the page of a
 * Headroom threshold). Never guessed from a number or a label that happens to match.
 */
export function ceilingSource(line: { source?: string | null }): string {
  return line.source || SOURCE_NOT_RECORDED;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * A chart's title: its series' names, and its unit in brackets unless every name already says it ("counted IOPS
 * vol-1", never "MiB/s (MiB/s)").
 */
export function chartTitle(names: string[], unit: string): string {
  const joined = names.join(', ');
  if (!unit) return joined;
  const says = new RegExp(`(^|[\\s(])${escapeRegExp(unit)}($|[\\s),])`);
  return names.every((n) => says.test(n)) ? joined : `${joined} (${unit})`;
}

/** A series' entity as a legend names it: the API's short name (store address, or store and volume), else the id. */
function entityText(s: EvidenceSeries): string {
  return s.entity_name || s.entity_id;
}

/**
 * Reshape the API's evidence series into one chart per unit, ceilings deduplicated, bytes shown as MiB. A chart
 * of several entities (two stores' block-cache hits) names each line's entity; one of a single entity says it in
 * its title.
 */
export function toEvidenceCharts(data: EvidenceChartData): { charts: EvidenceChart[]; missing: EvidenceSeries[] } {
  const charts = new Map<string, EvidenceChart>();
  const missing: EvidenceSeries[] = [];
  data.series.forEach((s, i) => {
    if (!s.found) {
      missing.push(s);
      return;
    }
    const { unit, scale, flag } = displayUnit(s.unit);
    const key = flag ? FLAG_KEY : unit;
    let chart = charts.get(key);
    if (!chart) {
      chart = { id: `evidence-${key}`, title: '', unit, series: [], ceilings: [], offScale: [], flag };
      charts.set(key, chart);
    }
    chart.series.push({
      id: `${i}:${s.metric}:${s.entity_id}`,
      label: s.label,
      name: s.label,
      entity: entityText(s),
      // the series' own step (the evidence window's): a longer distance between two points is a gap
      stepMs: s.step_seconds * 1000,
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
        source: ceilingSource(line),
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
    const entities = [...new Set(chart.series.map((s) => s.entity))];
    const names = [...new Set(chart.series.map((s) => s.name))];
    if (entities.length > 1) {
      for (const s of chart.series) s.label = s.name.includes(s.entity) ? s.name : `${s.name} (${s.entity})`;
    }
    const about = entities.filter((e) => !names.some((n) => n.includes(e)));
    const titled = chart.flag ? `${names.join(', ')} (${FLAG_TITLE_UNIT})` : chartTitle(names, chart.unit);
    chart.title = `${titled}${about.length > 0 ? ` · ${about.join(', ')}` : ''}`;
  }
  return { charts: [...charts.values()], missing };
}

import { ScrollRegion } from '@/components/ScrollRegion';
import { formatDateTime, formatDuration, formatQuantity, formatValue } from '@/lib/format';
import { heat, UTILISATION_COLUMNS } from '../adapters';
import type { ClusterOverview } from '../api';

interface OverviewTableProps {
  overview: ClusterOverview;
  selectedNodeId?: string;
  onSelectNode: (nodeId: string) => void;
}

/** A peak's share of its ceiling, by the one table of number formats (docs/number-formats.json). */
function formatPercent(p: number): string {
  return formatQuantity(p, '%');
}

/** Per node: peak use of each IOPS / throughput ceiling over the window (a heat map) and burst time left. */
export function OverviewTable({ overview, selectedNodeId, onSelectNode }: OverviewTableProps) {
  const columns = UTILISATION_COLUMNS.filter((c) =>
    overview.nodes.some((n) => n.utilisation.some((u) => u.metric === c.metric)),
  );
  return (
    <ScrollRegion label="Peak use per node table">
      <table className="table metrics-overview" aria-label="Peak use of each ceiling per node">
        <thead>
          <tr>
            <th scope="col">Node</th>
            {columns.map((c) => (
              <th scope="col" key={c.metric}>
                {c.label}
              </th>
            ))}
            <th scope="col">Burst time left</th>
          </tr>
        </thead>
        <tbody>
          {overview.nodes.map((n) => {
            const selected = n.node.id === selectedNodeId;
            return (
              <tr key={n.node.id} aria-selected={selected} className={selected ? 'metrics-overview__row--selected' : undefined}>
                <th scope="row">
                  <button type="button" className="link-button" onClick={() => onSelectNode(n.node.id)}>
                    {n.node.store_address}
                  </button>
                  {n.node.instance_type && <span className="muted"> {n.node.instance_type}</span>}
                </th>
                {columns.map((c) => {
                  const cell = n.utilisation.find((u) => u.metric === c.metric);
                  const pct = cell?.peak_percent;
                  const level = heat(pct);
                  const title =
                    cell && pct !== null && pct !== undefined
                      ? `Peak ${formatPercent(pct)} of the ${ceilingText(cell.ceiling)} in force at ${
                          cell.peak_at ? formatDateTime(cell.peak_at) : '?'
                        }${nowText(cell.ceiling, cell.ceiling_now)}. Source: ${cell.ceiling?.source ?? 'unknown'}`
                      : 'No data in this window';
                  return (
                    <td key={c.metric} className={`heat heat--${level}`} title={title}>
                      {pct === null || pct === undefined ? '—' : formatPercent(pct)}
                      {level === 'critical' && <span className="visually-hidden"> (at the ceiling)</span>}
                      {cell?.ceiling && pct !== null && pct !== undefined && (
                        <span className="heat__ceiling"> of {formatValue(cell.ceiling.value, cell.ceiling.unit)}</span>
                      )}
                    </td>
                  );
                })}
                <td>
                  {n.burst_seconds_left === null || n.burst_seconds_left === undefined
                    ? n.burst.length
                      ? 'not draining'
                      : '—'
                    : n.burst_seconds_left === 0
                      ? 'empty now'
                      : formatDuration(n.burst_seconds_left)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

type CellCeiling = { label: string; value: number; unit: string; kind: string } | null | undefined;

/** "gp2 baseline IOPS (1,050 IOPS, sustained)": which ceiling, its value and kind, as the advisor judged it. */
function ceilingText(c: CellCeiling): string {
  if (!c) return 'ceiling';
  const kind = c.kind === 'burst' ? 'burst: only while credits last' : c.kind;
  return `${c.label} (${formatValue(c.value, c.unit)}, ${kind})`;
}

/** When the ceiling in force at the window's end differs from the one at the peak, say so. */
function nowText(atPeak: CellCeiling, now: CellCeiling): string {
  if (!now || (atPeak && atPeak.value === now.value && atPeak.label === now.label)) return '';
  return `; in force now: ${ceilingText(now)}`;
}

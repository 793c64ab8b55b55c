import { QueryError } from '@/components/ErrorState';
import { LoadingState } from '@/components/LoadingState';
import { SourceText } from '@/components/SourceText';
import { TimeSeriesChart } from '@/components/TimeSeriesChart';
import { formatValue } from '@/lib/format';
import { useEvidenceSeries } from '../api';
import { toEvidenceCharts } from '../evidenceChart';

/** The series the advisor judged, over the evidence window, against the ceilings it compared them with. */
export function EvidenceCharts({
  findingId,
  width,
}: {
  findingId: string;
  /** A fixed width for tests (jsdom has no layout); the charts fill their container otherwise. */
  width?: number;
}) {
  const query = useEvidenceSeries(findingId);
  if (query.isPending) return <LoadingState label="Loading the evidence charts…" />;
  if (query.isError) {
    return <QueryError title="Could not load the evidence charts" query={query} />;
  }
  const { charts, missing } = toEvidenceCharts(query.data);
  // every chart of the finding on the evidence window, whatever its own points cover
  const domain: [number, number] | undefined = query.data.window_start
    ? [Date.parse(query.data.window_start), Date.parse(query.data.window_end)]
    : undefined;
  if (charts.length === 0 && missing.length === 0) {
    return <p className="muted">The advisor named no series to chart for this finding.</p>;
  }
  return (
    <div className="evidence-charts">
      {charts.map((chart) => (
        <div key={chart.id}>
          <TimeSeriesChart
            title={chart.title}
            unit={chart.unit}
            series={chart.series}
            ceilings={chart.ceilings}
            height={220}
            width={width}
            animate={false}
            xDomain={domain}
          />
          {chart.offScale.length > 0 && (
            <ul className="muted evidence-charts__notes" aria-label={`${chart.title}: limits far above the data`}>
              {chart.offScale.map((c) => (
                <li key={c.id}>
                  {c.label}: {formatValue(c.value, chart.unit)}, far above the data, not drawn (source: <SourceText text={c.source} />)
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
      {missing.length > 0 && (
        <ul className="muted" aria-label="Series without data">
          {missing.map((s) => (
            <li key={`${s.metric}:${s.entity_id}`}>
              No stored points for {s.label} in the window.
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

import type { Sweep } from './api';

/**
 * GetMetricData price in us-east-1: USD 0.01 per 1,000 metrics requested, not in the free tier
 * (docs/reference/cloudwatch.md#pricing, quoting the CloudWatch pricing page via site24x7 [3rd-party]).
 */
export const USD_PER_1000_METRICS = 0.01;
export const PRICE_SOURCE =
  'GetMetricData costs USD 0.01 per 1,000 metrics requested (us-east-1, not in the free tier; ' +
  'Amazon CloudWatch pricing, https://aws.amazon.com/cloudwatch/pricing/). Other regions may differ.';

/** The incremental CloudWatch sweep runs every minute per region (job aws.ingest, schedule minute="*"). */
export const SWEEPS_PER_MONTH = 60 * 24 * 30;

export function sweepCostUsd(metricsRequested: number): number {
  return (metricsRequested / 1000) * USD_PER_1000_METRICS;
}

/** What a month costs if every minute's sweep asks for as many metrics as this one did. */
export function monthlyCostUsd(metricsRequestedPerSweep: number): number {
  return sweepCostUsd(metricsRequestedPerSweep) * SWEEPS_PER_MONTH;
}

/**
 * Estimated monthly CloudWatch bill of a connection: per region, the latest successful incremental sweep's
 * metrics requested, run every minute for 30 days. Null when no incremental sweep has finished yet.
 */
export function estimateMonthlyCostUsd(sweeps: readonly Sweep[]): number | null {
  const latestByRegion = new Map<string, Sweep>();
  for (const sweep of sweeps) {
    if (sweep.kind !== 'incremental' || sweep.error || !sweep.finished_at) continue;
    const region = sweep.region ?? '';
    const seen = latestByRegion.get(region);
    if (!seen || seen.started_at < sweep.started_at) latestByRegion.set(region, sweep);
  }
  if (latestByRegion.size === 0) return null;
  let total = 0;
  for (const sweep of latestByRegion.values()) total += monthlyCostUsd(sweep.metrics_requested);
  return total;
}

/**
 * The lookback a cut is judged on: 14 days by default, 32 or 93 on request, as AWS Compute Optimizer's
 * look-back period (its recommendation preference; Headroom's reference page "lookback").
 */
export const LOOKBACK_CHOICES = [14, 32, 93] as const;
export type LookbackDays = (typeof LOOKBACK_CHOICES)[number];
export const DEFAULT_LOOKBACK_DAYS: LookbackDays = 14;

/** "14 days", "93 days". */
export function lookbackLabel(days: number): string {
  return `${days.toLocaleString('en-US')} days`;
}

export const LOOKBACK_HELP =
  'A change that removes capacity (fewer IOPS, less throughput, a smaller instance) is sized on the peak of this ' +
  'many days, and held until that much history exists. Warnings about ceilings and burst balances keep the last day.';

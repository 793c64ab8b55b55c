"""`gp2-burst-depletion`: a gp2 volume's BurstBalance drains; forecast when it empties and what it drops to.

gp2 (docs/reference/gp2-burst.md#baseline-and-burst, AWS "General Purpose SSD volumes"): baseline = clamp(3 × GiB, 100, 16,000) IOPS; volumes under
1 TiB burst to 3,000 IOPS from a 5.4 million credit bucket earned at the baseline rate;
`burst duration = credit_balance / (3000 − baseline)`. BurstBalance (docs/reference/cloudwatch.md#volume-metrics) is the remaining percentage.

Fires when BurstBalance falls to <= 10% in the window (Headroom choice: a near-empty bucket means the next
peak runs at baseline; a spike that leaves more than 10% is absorbed as designed), critical when it reached 0%
for >= 30 minutes (the volume then ran at its baseline); and, before it is nearly empty, when the forecast says
the bucket empties within the next day (`_burst_outlook`: the projection follows yesterday's demand, or the
bucket drains now), with severity by time to empty (critical <= 2 h, warning <= 8 h, info <= 24 h;
docs/thresholds/burst.md). The forecast uses the physics bucket
(`headroom.domain.physics.burst.Gp2Bucket.seconds_to_empty` for a full bucket at the drain-period demand;
`headroom.domain.advisor.buckets.volume_burst_forecast`, i.e. `headroom.domain.forecast.burst.forecast_gp2_burst` on
the counted IOPS, for when the current balance empties, the band and the refill; the charts show the same one).
Fix (PingCAP, docs/reference/pingcap-guidance.md#volume-choice-on-aws: a gp2 > 1 TB "to avoid unpredictable performance caused by bursting", written
before gp3 existed; AWS
Prescriptive Guidance gp2 -> gp3, docs/reference/ebs-prices.md#prices-us-east-1): gp3 at equal or better performance, i.e. at least the
3,000 IOPS the volume bursts to and at least gp2's throughput at this size, sustained, with the cost delta.
Its predicted headroom, before and after, is the volume's one headroom figure (Context.volume_headroom_pct: the
window's p99 against the smallest limit), the what-if's; the drain-period p95 only sizes the fix
(docs/thresholds/burst.md#headroom).
"""

from __future__ import annotations

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.buckets import volume_burst_forecast
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import window_evidence
from headroom.domain.catalog import volume_limits
from headroom.domain.model import Impact, Measure, Option, ReferenceLine, SeriesRef
from headroom.domain.physics.burst import Gp2Bucket
from headroom.domain.physics.burst import drain_demand as drain_demand_of
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.labels import metric_label
from headroom.domain.units import format_duration_words, format_quantity, format_usd_change, round_half_up

from ._burst_outlook import burst_outlook, forecast_seconds_to_empty, forecast_text
from ._common import SUSTAINED_MIN_RUN_MINUTES, TARGET_UTILISATION, ceiling_line, ceiling_of, round_up
from ._fixes import IOPS_STEP, MIBPS_STEP, VolumeConfig, gp2_grow_config, volume_changes

RULE = "gp2-burst-depletion"
LOW_BALANCE_PCT = 10.0  # Headroom choice (see the module docstring)
# The limit the drain-period demand is judged by, in the table and on the chart (AWS gp2: 3 IOPS per GiB).
BASELINE_LABEL = "gp2 baseline (3 IOPS/GiB)"
GP2_BURST_IOPS = 3000.0  # docs/reference/gp2-burst.md#the-credit-bucket


def _gp3_equal_or_better(
    size_gib: float, gp2_max_mibps: float, need_iops: float, need_mibps: float
) -> VolumeConfig:
    iops = int(max(GP2_BURST_IOPS, round_up(need_iops, IOPS_STEP)))
    mibps = max(125.0, round_up(max(gp2_max_mibps, need_mibps), MIBPS_STEP))
    iops = max(iops, int(round_up(mibps / 0.25, IOPS_STEP)))  # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025: <= 0.25 MiB/s per IOPS
    lim = volume_limits("gp3", size_gib, iops, mibps)
    return VolumeConfig(
        f"gp3 {format_quantity(size_gib, 'GiB')}, {format_quantity(iops, 'IOPS')}, {format_quantity(mibps, 'MiB/s')}", "gp3", size_gib, iops, mibps, 1, lim, True
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Find gp2 volumes whose burst bucket drains, with a forecast and a gp3 replacement."""
    out: list[Finding] = []
    for vol in ctx.volumes:
        if vol.type != "gp2":
            continue
        lim = ctx.volume_limits(vol.id)
        view = ctx.volume_io(vol.id)
        bal = ctx.series("volume", vol.id, mid.EBS_BURST_BALANCE)
        if lim is None or view is None or bal is None or lim.burst_iops is None or np.all(np.isnan(bal)):
            continue
        low = float(np.nanmin(bal))
        bucket = Gp2Bucket.for_size(vol.size_gib)
        iops = view.counted_iops
        if low > LOW_BALANCE_PCT and not bool(np.nanmax(iops, initial=0.0) > bucket.baseline_rate):
            continue  # never below 10% and never drawing on the bucket: nothing to forecast
        # the one forecast of this bucket: the Metrics panels and the glance table show the same (advisor/buckets.py)
        fc = volume_burst_forecast(ctx, vol.id)
        if fc is None:
            continue  # no demand in the recent window: nothing to forecast from
        soon = forecast_seconds_to_empty(fc)
        seen_low = low <= LOW_BALANCE_PCT
        if not seen_low and soon is None:
            continue
        empty = bal <= 0.0  # NaN (no sample) is not empty
        minutes_empty = float(np.count_nonzero(empty)) * ctx.step_seconds / 60.0
        drain_demand = drain_demand_of(iops, bucket.baseline_rate)
        full_lasts = None if np.isnan(drain_demand) else bucket.seconds_to_empty(bucket.capacity, drain_demand)
        full_bucket: list[str] = []
        if full_lasts is not None:
            full_bucket.append(
                f"at the drain-period demand (p95 {format_quantity(drain_demand, 'IOPS')}) a full bucket (5.4 M credits) lasts "
                f"{format_duration_words(full_lasts)} = 5.4e6 / ({format_quantity(min(drain_demand, GP2_BURST_IOPS), '')} − "
                f"{format_quantity(bucket.baseline_rate, '')}) s (AWS gp2 documentation)"
            )
        # What the volume needs without credits: the demand it drew while bursting, with margin.
        need_iops = (
            drain_demand if not np.isnan(drain_demand) else bucket.baseline_rate
        ) / TARGET_UTILISATION
        need_mibps = float(np.nanpercentile(view.mibps, 99)) / TARGET_UTILISATION
        entity = ctx.entity_for_volume(vol.id)
        seen_low = low <= LOW_BALANCE_PCT
        outlook = burst_outlook(
            fc, soon, seen_low, "critical" if minutes_empty >= SUSTAINED_MIN_RUN_MINUTES else "warning"
        )
        reason = (
            (
                f"BurstBalance fell to {format_quantity(low, '%')} ({format_duration_words(60 * (minutes_empty))} at 0%, i.e. at the "
                f"{format_quantity(bucket.baseline_rate, 'IOPS')} baseline)"
                if seen_low
                else f"BurstBalance {format_quantity(fc.balance_percent, '%')} and draining: {forecast_text(fc, soon)}"
            )
            + "; gp3 sustains what gp2 only bursts to"
        )
        configs = [_gp3_equal_or_better(vol.size_gib, lim.max_throughput_mibps, need_iops, need_mibps)]
        grown = gp2_grow_config(vol.size_gib, need_iops, need_mibps)
        if grown is not None:
            configs.append(grown)
        configs.sort(key=lambda c: c.monthly_cost)
        options = []
        for cfg in configs:
            delta = round(cfg.monthly_cost - lim.monthly_cost_usd, 2)
            options.append(
                Option(
                    label=cfg.label,
                    changes=volume_changes(entity, lim, cfg, reason),
                    impact=Impact(
                        summary=(
                            f"sustained IOPS {format_quantity(bucket.baseline_rate, 'IOPS')} (after the bucket empties) -> "
                            f"{format_quantity(cfg.iops_ceiling, 'IOPS')} with no bucket; {format_usd_change(delta)}/month"
                        ),
                        metric="sustained IOPS ceiling",
                        unit="IOPS",
                        before=bucket.baseline_rate,
                        after=cfg.iops_ceiling,
                        # the one headroom figure (docs/thresholds/burst.md#headroom): the window's p99 against
                        # the sustained limit, as the what-if's row of this volume says it; the drain-period p95
                        # only sizes the fix and times a full bucket
                        headroom_before_pct=ctx.volume_headroom_pct(vol.id, "iops", bucket.baseline_rate),
                        headroom_after_pct=ctx.volume_headroom_pct(vol.id, "iops", cfg.iops_ceiling),
                        monthly_cost_before_usd=round(lim.monthly_cost_usd, 2),
                        monthly_cost_after_usd=round(cfg.monthly_cost, 2),
                        monthly_cost_delta_usd=delta,
                        price_region=lim.cost_breakdown.price_region,
                    ),
                )
            )
        # Prefer gp3 (PingCAP's steady-performance advice, pingcap-guidance.md#volume-choice-on-aws / AWS gp2->gp3 guidance) unless growing gp2 is cheaper.
        best = options[0]
        # the volume's IOPS ceilings as the charts show them: the baseline the bucket drops to, the burst
        baseline = ceiling_of(ctx, "volume", vol.id, "iops", bucket.baseline_rate)
        burst_ceiling = ceiling_of(ctx, "volume", vol.id, "iops", GP2_BURST_IOPS)
        if seen_low:
            title = f"{vol.id} (gp2 {format_quantity(vol.size_gib, 'GiB')}): BurstBalance fell to {format_quantity(low, '%')}" + (
                # to the hour past 10 h: a title is read for days, the minutes are in the evidence
                f"; {format_duration_words(60 * minutes_empty if minutes_empty < 600 else 3600 * float(round_half_up(minutes_empty / 60)))}"
                f" at the {format_quantity(bucket.baseline_rate, 'IOPS')} baseline"
                if minutes_empty
                else ""
            )
        else:
            title = f"{vol.id} (gp2 {format_quantity(vol.size_gib, 'GiB')}): BurstBalance {format_quantity(fc.balance_percent, '%')}"
        out.append(
            Finding(
                rule=RULE,
                severity=outlook.severity,
                entity=entity,
                title=title + outlook.title_suffix,
                evidence=window_evidence(
                    ctx,
                    condition=f"BurstBalance <= {format_quantity(LOW_BALANCE_PCT, '%')} in the window"
                    if seen_low
                    else outlook.condition("BurstBalance"),
                    measures=outlook.measures
                    + [
                        Measure(
                            label="minimum BurstBalance",
                            value=round(low, 1),
                            unit="%",
                            limit=LOW_BALANCE_PCT,
                            limit_label="low-balance threshold",
                            statistic="min",
                            source=refs.EBS_CLOUDWATCH.cite(),
                        ),
                        Measure(
                            label="time at 0% (running at baseline)",
                            value=round(minutes_empty, 1),
                            unit="min",
                            statistic="sum",
                        ),
                        # no drain period, no demand to report: the measure is left out, never a 0 IOPS "demand"
                        *(
                            []
                            if np.isnan(drain_demand)
                            else [
                                Measure(
                                    label="drain-period demand p95",
                                    value=round(drain_demand, 1),
                                    unit="IOPS",
                                    limit=bucket.baseline_rate,
                                    limit_label=BASELINE_LABEL,
                                    ceiling=baseline,
                                    statistic="p95",
                                    source=refs.EBS_GP.cite(),
                                ),
                            ]
                        ),
                        Measure(
                            label="burst ceiling", value=GP2_BURST_IOPS, unit="IOPS", source=refs.EBS_GP.cite()
                        ),
                    ],
                    share_of_window=round(float(np.count_nonzero(empty)) / max(len(bal), 1), 4),
                    corroboration=full_bucket,
                    forecasts=fc.as_forecasts(metric_label(mid.EBS_BURST_BALANCE)),
                    series=[
                        SeriesRef(
                            entity_kind="volume",
                            entity_id=vol.id,
                            metric=mid.EBS_BURST_BALANCE,
                            reference_lines=[ReferenceLine(value=LOW_BALANCE_PCT, label="low", unit="%",
                                                           source=refs.headroom_threshold("burst.md", "a low balance"))],
                        ),
                        SeriesRef(
                            entity_kind="volume",
                            entity_id=vol.id,
                            metric="derived.counted_iops",
                            reference_lines=[
                                # the drain-period demand is judged against the baseline; the burst is drawn
                                # for the hours the bucket had credits
                                ceiling_line(
                                    baseline, bucket.baseline_rate, f"{BASELINE_LABEL}, the finding's limit", "IOPS"
                                ),
                                ceiling_line(burst_ceiling, GP2_BURST_IOPS, "gp2 burst, while credits last", "IOPS"),
                            ],
                        ),
                        SeriesRef(entity_kind="volume", entity_id=vol.id, metric="derived.read_latency_ms"),
                    ],
                ),
                why=(
                    "gp2 earns I/O credits at 3 per GiB per second and spends them above that baseline; at 3,000 "
                    "IOPS a full 5.4 M bucket lasts 5.4e6 / (3000 − baseline) seconds (AWS gp2 documentation). When it "
                    "is empty the volume is held at its baseline, latency and queue length jump, and TiKV reads "
                    "and raft writes slow down until demand falls below the baseline long enough to refill. "
                    "PingCAP advises against relying on bursts for predictable performance (PingCAP, Best Practices for TiDB on AWS Cloud)."
                    + outlook.why
                ),
                changes=best.changes,
                options=options,
                impact=best.impact,
                # Headroom choice: a bucket seen empty is a fact; one seen near empty is a strong hint; a
                # forecast alone is a projection (its confidence: _burst_outlook).
                confidence=(0.85 if minutes_empty else 0.7) if seen_low else outlook.confidence,
                dedup_key=make_dedup_key(RULE, ctx.cluster_key, entity),
                sources=[refs.EBS_GP.cite(), refs.EBS_CLOUDWATCH.cite(), refs.EBS_PRICING.cite(), refs.PINGCAP_AWS.cite()]
                + outlook.sources,
            )
        )
    return out


RULES = (
    Rule(
        id=RULE,
        family="aws-volume",
        description=(
            "A gp2 volume's BurstBalance drains: forecasts when the bucket empties at the recent demand and the "
            "baseline it drops to; recommends gp3 at equal or better performance with the cost difference."
        ),
        evaluate=evaluate,
        aws_actions=("volume.type", "volume.iops", "volume.throughput", "volume.size"),
        supersedes=("volume-iops-ceiling", "gp2-to-gp3"),
        sources=(refs.EBS_GP.cite(), refs.EBS_CLOUDWATCH.cite(), refs.PINGCAP_AWS.cite()),
    ),
)

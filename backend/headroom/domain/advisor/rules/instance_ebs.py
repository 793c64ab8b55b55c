"""Instance EBS rules: `instance-ebs-bandwidth-bound` and `instance-ebs-burst-depletion`.

- bandwidth-bound: the instance's EBS MiB/s (or counted IOPS) sits at >= 90% of its current instance ceiling
  (maximum while EBSByteBalance% / EBSIOBalance% > 0 on burst sizes, else the baseline; docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/ec2-ebs-limits.md#limits-table)
  for a sustained share of the window, while its volumes have headroom (none at >= 90% of its own ceiling in
  most of those minutes): "an instance's EBS performance is bounded by the instance limit or the sum of its
  attached volumes, whichever is smaller" (docs/reference/ec2-ebs-limits.md#limits-table). PingCAP (docs/reference/pingcap-guidance.md#instance-ebs-bandwidth):
  m5.2xlarge -> m5.4xlarge
  "the performance doubled with nearly the same CPU usage". Fix: the smallest larger size of the family whose
  sustained (baseline) limits clear the demand with margin (`_common.demand_estimate`), with the price delta;
  options add the cheapest types of any family that keep the vCPUs and memory and clear the demand.
- burst-depletion: a burst size (docs/reference/ec2-ebs-limits.md#the-burst-rule: maximum "for 30 minutes at least once every 24 hours") whose
  EBSIOBalance% / EBSByteBalance% (docs/reference/cloudwatch.md#instance-ebs-metrics) falls to <= 10% in the window; the forecast (physics bucket, see
  headroom.domain.physics.burst.InstanceEbsBucket) says when, at the recent demand, it empties and what it falls back
  to. AWS (docs/reference/cloudwatch.md#instance-ebs-metrics): "instances with a consistently low balance % are candidates to size up". A balance still
  above 10% that the forecast empties within the next day is a finding too (`_burst_outlook`,
  docs/thresholds/burst.md), severity by time to empty.
"""

from __future__ import annotations

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.buckets import instance_burst_forecast
from headroom.domain.advisor.context import Array, Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import window_evidence
from headroom.domain.model import Measure, ReferenceLine, SeriesRef
from headroom.domain.physics.burst import InstanceEbsBucket
from headroom.domain.physics.ceilings import IoDimension
from headroom.domain.snapshot.labels import metric_label
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.units import format_duration_words, format_quantity

from ._burst_outlook import burst_outlook, forecast_seconds_to_empty
from ._common import (
    AT_CEILING_FRACTION,
    PINNED_RATIO,
    SUSTAINED_MIN_TOTAL_MINUTES,
    SUSTAINED_SOURCE,
    TARGET_UTILISATION,
    ceiling_line,
    ceiling_of,
    demand_estimate,
    instance_ceiling,
    instance_io_series,
    pct,
    pressure,
    short_window_note,
    window_confidence,
)
from ._fixes import instance_upgrade

BOUND_RULE = "instance-ebs-bandwidth-bound"
BURST_RULE = "instance-ebs-burst-depletion"
# A volume "has headroom" when it is at >= 90% of its own ceiling in fewer than half of the instance-pinned
# minutes. Headroom choice.
VOLUME_BUSY_SHARE = 0.5
# docs/reference/cloudwatch.md#instance-ebs-metrics gives no number for "consistently low"; Headroom choice: a balance at or below 10% in the window.
LOW_BALANCE_PCT = 10.0
# On a burst size, pinned at the baseline for less than a quarter of the window after the balance drained is
# the burst-depletion story; more than that, the instance is simply too small (PingCAP's m5.2xlarge, docs/reference/pingcap-guidance.md#instance-ebs-bandwidth).
# Headroom choice.
BURST_STORY_SHARE = 0.25


def _cap_at_volumes(ctx: Context, iid: str, need_iops: float, need_mibps: float) -> tuple[float, float]:
    """Cap the need at what the attached volumes sustain: a larger instance cannot get more out of them.

    docs/reference/ec2-ebs-limits.md#limits-table (AWS, "Amazon EBS-optimized instance types"): the node gets "the instance limit or the sum of its attached volumes, whichever
    is smaller"; beyond the volumes' sum, the volumes bind (their own rules say so).
    """
    ceilings = ctx.node_ceilings(iid)
    if ceilings is None or ceilings.volume_count == 0:
        return need_iops, need_mibps
    return (
        min(need_iops, ceilings.sustained_iops.volumes),
        min(need_mibps, ceilings.sustained_throughput_mibps.volumes),
    )


def evaluate_bound(ctx: Context) -> list[Finding]:
    """Find instances pinned at their EBS bandwidth / IOPS limit while their volumes have headroom."""
    out: list[Finding] = []
    for instance in ctx.instances:
        inst = ctx.instance_limits(instance.id)
        rates = instance_io_series(ctx, instance.id)
        if inst is None or rates is None:
            continue
        iops, mibps = rates
        n = len(mibps)
        checks: list[tuple[IoDimension, Array, Array, str]] = [
            (
                "throughput",
                mibps,
                instance_ceiling(
                    ctx,
                    instance.id,
                    inst.baseline_throughput_mibps,
                    inst.max_throughput_mibps,
                    mid.EC2_EBS_BYTE_BALANCE,
                    n,
                ),
                "MiB/s",
            ),
            (
                "iops",
                iops,
                instance_ceiling(ctx, instance.id, inst.baseline_iops, inst.max_iops, mid.EC2_EBS_IO_BALANCE, n),
                "IOPS",
            ),
        ]
        for dimension, observed, ceiling, unit in checks:
            pr = pressure(observed, ceiling, ctx.step_seconds)
            if not pr.sustained:
                continue
            bal_series = ctx.series(
                "instance",
                instance.id,
                mid.EC2_EBS_BYTE_BALANCE if dimension == "throughput" else mid.EC2_EBS_IO_BALANCE,
            )
            if (
                inst.bursts
                and bal_series is not None
                and np.nanmin(bal_series) <= LOW_BALANCE_PCT
                and pr.share < BURST_STORY_SHARE
            ):
                continue  # pinned only after the burst bucket drained: instance-ebs-burst-depletion tells it
            # The volumes must have headroom at those minutes, else it is a volume finding.
            busy_shares = []
            for vol in ctx.volumes_on_instance(instance.id):
                view = ctx.volume_io(vol.id)
                vceil = (
                    ctx.volume_iops_ceiling(vol.id)
                    if dimension == "iops"
                    else ctx.volume_mibps_ceiling(vol.id)
                )
                if view is None or vceil is None:
                    continue
                vals = view.counted_iops if dimension == "iops" else view.mibps
                with np.errstate(invalid="ignore", divide="ignore"):
                    at = (vals / vceil) >= AT_CEILING_FRACTION
                busy_shares.append(float(np.count_nonzero(at & pr.mask)) / max(int(pr.mask.sum()), 1))
            if busy_shares and max(busy_shares) >= VOLUME_BUSY_SHARE:
                continue
            other_iops = float(np.nanpercentile(iops, 99))
            other_mibps = float(np.nanpercentile(mibps, 99))
            if dimension == "throughput":
                need_mibps = demand_estimate(pr.p99, pr.peak, pr.peak_ratio >= PINNED_RATIO)
                need_iops = other_iops / TARGET_UTILISATION
            else:
                need_iops = demand_estimate(pr.p99, pr.peak, pr.peak_ratio >= PINNED_RATIO)
                need_mibps = other_mibps / TARGET_UTILISATION
            need_iops, need_mibps = _cap_at_volumes(ctx, instance.id, need_iops, need_mibps)
            reason = (
                f"instance EBS {unit} at >= 90% of its {format_quantity(pr.ceiling_min, unit)} limit for {pr.held_text()} "
                f"with volume headroom; needs a sustained {format_quantity(need_mibps, 'MiB/s')} / {format_quantity(need_iops, 'IOPS')}"
            )
            changes, impact, options = instance_upgrade(
                ctx, instance.id, inst, need_iops, need_mibps, reason, float(np.nanpercentile(mibps, 99))
            )
            entity = ctx.entity_for_instance(instance.id)
            lim_text = (
                format_quantity(pr.ceiling_min, unit)
                if pr.ceiling_min == pr.ceiling_max
                else f"{format_quantity(pr.ceiling_min, unit)} (baseline) / {format_quantity(pr.ceiling_max, unit)} (burst)"
            )
            corroboration = [
                f"busiest volume at >= 90% of its own ceiling in {pct(max(busy_shares, default=0.0))} "
                "of those minutes"
            ]
            bal_metric = mid.EC2_EBS_BYTE_BALANCE if dimension == "throughput" else mid.EC2_EBS_IO_BALANCE
            bal = ctx.series("instance", instance.id, bal_metric)
            if bal is not None:
                corroboration.append(f"{metric_label(bal_metric)} minimum {format_quantity(np.nanmin(bal), '%')}")
            short = short_window_note(ctx)
            if short is not None:
                corroboration.append(short)
            # the instance's ceilings as the charts show them: the lowest in force in the window, the highest, and
            # its baseline and maximum for the chart
            current = ceiling_of(ctx, "instance", instance.id, dimension, pr.ceiling_min)
            highest = ceiling_of(ctx, "instance", instance.id, dimension, pr.ceiling_max)
            base_value = inst.baseline_throughput_mibps if dimension == "throughput" else inst.baseline_iops
            max_value = inst.max_throughput_mibps if dimension == "throughput" else inst.max_iops
            series = [
                SeriesRef(
                    entity_kind="instance",
                    entity_id=instance.id,
                    metric="derived.mibps" if dimension == "throughput" else "derived.counted_iops",
                    reference_lines=[
                        ceiling_line(ceiling_of(ctx, "instance", instance.id, dimension, base_value), base_value,
                                     "instance baseline", unit),
                        ceiling_line(ceiling_of(ctx, "instance", instance.id, dimension, max_value), max_value,
                                     "instance maximum", unit),
                    ],
                ),
            ]
            if bal is not None:
                series.append(SeriesRef(entity_kind="instance", entity_id=instance.id, metric=bal_metric))
            out.append(
                Finding(
                    rule=BOUND_RULE,
                    severity="critical" if pr.peak_ratio >= PINNED_RATIO else "warning",
                    entity=entity,
                    title=(
                        f"{instance.id} ({inst.name}): EBS {unit} pinned at the instance limit {lim_text} "
                        f"for {pr.held_text()} while its volumes have headroom"
                    ),
                    evidence=window_evidence(
                        ctx,
                        condition=(
                            f"instance EBS {unit} >= 90% of the instance limit for >= 30 consecutive min, or for "
                            ">= 5% of the window and >= 15 min in all; volumes below theirs"
                        ),
                        measures=[
                            Measure(
                                label=f"p99 instance EBS {unit}",
                                value=round(pr.p99, 1),
                                unit=unit,
                                limit=pr.ceiling_min,
                                limit_label="instance limit",
                                ceiling=current,
                                statistic="p99",
                                source=refs.EBS_OPTIMIZED.cite('MB/s ÷ 1.048576 = MiB/s'),
                            ),
                            Measure(
                                label="peak",
                                value=round(pr.peak, 1),
                                unit=unit,
                                limit=pr.ceiling_max,
                                limit_label="instance maximum",
                                ceiling=highest,
                                statistic="max",
                            ),
                            Measure(
                                label="demand to clear (with margin)",
                                value=round(need_mibps if dimension == "throughput" else need_iops, 1),
                                unit=unit,
                                statistic="estimate",
                            ),
                            Measure(
                                label="time at >= 90% of the instance limit",
                                value=round(pr.minutes_at, 1),
                                unit="min",
                                limit=SUSTAINED_MIN_TOTAL_MINUTES,
                                limit_label="sustained: at least",
                                statistic="sum",
                                source=SUSTAINED_SOURCE,
                            ),
                        ],
                        threshold_pct=90.0,
                        share_of_window=round(pr.share, 4),
                        longest_run_minutes=pr.longest_run_minutes,
                        episodes=pr.episodes,
                        corroboration=corroboration,
                        series=series,
                    ),
                    why=(
                        "EBS traffic crosses the instance's dedicated EBS link, so the node gets the smaller of the "
                        "instance limit and the sum of its volumes (AWS EBS-optimized instances); here the instance binds, and "
                        "faster volumes would not help. PingCAP measured the same cluster doubling its throughput "
                        "when moving m5.2xlarge -> m5.4xlarge (PingCAP, Best Practices for TiDB on AWS Cloud)."
                    ),
                    changes=changes,
                    options=options,
                    impact=impact,
                    # Headroom choice: AWS/EC2 sums seen directly are surer than a sum of volume series.
                    confidence=window_confidence(
                        ctx, 0.8 if ctx.instance_io(instance.id) is not None else 0.65
                    ),
                    dedup_key=make_dedup_key(BOUND_RULE, ctx.cluster_key, entity, dimension),
                    sources=[
                        refs.EBS_OPTIMIZED.cite(),
                        refs.EC2_CLOUDWATCH.cite(),
                        refs.PINGCAP_AWS.cite("m5.2xlarge vs m5.4xlarge"),
                        refs.headroom_threshold("instance-ebs.md"),
                        SUSTAINED_SOURCE,
                    ],
                )
            )
    return out


def evaluate_burst(ctx: Context) -> list[Finding]:
    """Find burst-size instances whose EBS burst balance runs low, with a forecast of when it empties."""
    out: list[Finding] = []
    for instance in ctx.instances:
        inst = ctx.instance_limits(instance.id)
        rates = instance_io_series(ctx, instance.id)
        if inst is None or rates is None or not inst.bursts:
            continue
        iops, mibps = rates
        outlooks: tuple[tuple[IoDimension, str, InstanceEbsBucket, Array, str], ...] = (
            ("throughput", mid.EC2_EBS_BYTE_BALANCE, InstanceEbsBucket.for_throughput(inst), mibps, "MiB/s"),
            ("iops", mid.EC2_EBS_IO_BALANCE, InstanceEbsBucket.for_iops(inst), iops, "IOPS"),
        )
        for dimension, metric, bucket, observed, unit in outlooks:
            bal = ctx.series("instance", instance.id, metric)
            name = metric_label(metric)
            if bal is None or not bucket.bursts or np.all(np.isnan(bal)):
                continue
            low = float(np.nanmin(bal))
            if low > LOW_BALANCE_PCT and not bool(np.nanmax(observed, initial=0.0) > bucket.baseline_rate):
                continue  # never low and never drawing on the bucket: nothing to forecast
            # the one forecast of this bucket: the Metrics panels and the glance table show the same (advisor/buckets.py)
            fc = instance_burst_forecast(ctx, instance.id, "byte" if dimension == "throughput" else "io")
            if fc is None:
                continue  # no demand in the recent window: nothing to forecast from
            # docs/reference/cloudwatch.md#instance-ebs-metrics "consistently low balance": Headroom threshold 10%; or forecast to empty within the next day
            # (docs/thresholds/burst.md)
            soon = forecast_seconds_to_empty(fc)
            if low > LOW_BALANCE_PCT and soon is None:
                continue
            empty_mask = bal <= 0.0  # NaN (no sample) is not empty
            minutes_empty = float(np.count_nonzero(empty_mask)) * ctx.step_seconds / 60.0
            draining = observed > bucket.baseline_rate
            drain_demand = float(np.nanpercentile(observed[draining], 95)) if draining.any() else float("nan")
            full_to_empty = bucket.seconds_to_empty(bucket.capacity, drain_demand) if draining.any() else None
            full_bucket = []
            if full_to_empty is not None:
                full_bucket.append(
                    f"at the drain-period demand (p95 {format_quantity(drain_demand, unit)}) a full bucket lasts "
                    f"{format_duration_words(full_to_empty)}, then the instance falls back to its baseline "
                    f"{format_quantity(bucket.baseline_rate, unit)}"
                )
            need = demand_estimate(
                float(np.nanpercentile(observed, 99)), float(np.nanmax(observed)), minutes_empty > 0
            )
            need_iops = (
                need if dimension == "iops" else float(np.nanpercentile(iops, 99)) / TARGET_UTILISATION
            )
            need_mibps = (
                need if dimension == "throughput" else float(np.nanpercentile(mibps, 99)) / TARGET_UTILISATION
            )
            need_iops, need_mibps = _cap_at_volumes(ctx, instance.id, need_iops, need_mibps)
            reason = (
                f"{name} fell to {format_quantity(low, '%')} ({format_duration_words(60 * (minutes_empty))} at 0%); a size whose baseline clears "
                f"{format_quantity(need_mibps, 'MiB/s')} / {format_quantity(need_iops, 'IOPS')} does not depend on burst credits"
            )
            changes, impact, options = instance_upgrade(
                ctx, instance.id, inst, need_iops, need_mibps, reason, float(np.nanpercentile(mibps, 99))
            )
            entity = ctx.entity_for_instance(instance.id)
            baseline = ceiling_of(ctx, "instance", instance.id, dimension, bucket.baseline_rate)
            seen_low = low <= LOW_BALANCE_PCT
            outlook = burst_outlook(fc, soon, seen_low, "critical" if minutes_empty >= 30 else "warning")
            out.append(
                Finding(
                    rule=BURST_RULE,
                    severity=outlook.severity,
                    entity=entity,
                    title=(
                        f"{instance.id} ({inst.name}): {name} fell to {format_quantity(low, '%')}"
                        + (
                            f", {format_duration_words(60 * (minutes_empty))} at the {format_quantity(bucket.baseline_rate, unit)} baseline"
                            if minutes_empty
                            else ""
                        )
                        if seen_low
                        else f"{instance.id} ({inst.name}): {name} {format_quantity(fc.balance_percent, '%')}"
                    )
                    + outlook.title_suffix,
                    evidence=window_evidence(
                        ctx,
                        condition=f"{name} <= {format_quantity(LOW_BALANCE_PCT, '%')} in the window"
                        if seen_low
                        else outlook.condition(name),
                        measures=outlook.measures
                        + [
                            Measure(
                                label=f"minimum {name[:1].lower()}{name[1:]}",
                                value=round(low, 1),
                                unit="%",
                                limit=LOW_BALANCE_PCT,
                                limit_label="low-balance threshold",
                                statistic="min",
                                source=refs.EC2_CLOUDWATCH.cite(),
                            ),
                            Measure(
                                label="time at 0%", value=round(minutes_empty, 1), unit="min", statistic="sum"
                            ),
                            # no drain period, no demand to report: the measure is left out, never a 0 IOPS "demand"
                            *(
                                []
                                if np.isnan(drain_demand)
                                else [
                                    Measure(
                                        label="drain-period demand p95",
                                        value=round(drain_demand, 1),
                                        unit=unit,
                                        limit=bucket.baseline_rate,
                                        limit_label="instance baseline",
                                        ceiling=baseline,
                                        statistic="p95",
                                        source=refs.EBS_OPTIMIZED.cite(),
                                    ),
                                ]
                            ),
                        ],
                        share_of_window=round(float(np.count_nonzero(empty_mask)) / max(len(bal), 1), 4),
                        longest_run_minutes=None,
                        corroboration=full_bucket,
                        forecasts=fc.as_forecasts(name),
                        series=[
                            SeriesRef(
                                entity_kind="instance",
                                entity_id=instance.id,
                                metric=metric,
                                reference_lines=[ReferenceLine(value=LOW_BALANCE_PCT, label="low", unit="%",
                                                                 source=refs.headroom_threshold("instance-ebs.md", "a low balance"))],
                            ),
                            SeriesRef(
                                entity_kind="instance",
                                entity_id=instance.id,
                                metric="derived.mibps"
                                if dimension == "throughput"
                                else "derived.counted_iops",
                                reference_lines=[
                                    ceiling_line(baseline, bucket.baseline_rate, "instance baseline", unit)
                                ],
                            ),
                        ],
                    ),
                    why=(
                        f'{inst.name} is a burst size: it holds its maximum EBS performance "for 30 minutes at '
                        'least once every 24 hours", then reverts to its baseline (AWS EBS-optimized instances). When the '
                        "balance is spent, every volume on the instance is capped at the baseline together, and "
                        "latency jumps for TiKV reads and raft writes."
                        + outlook.why
                    ),
                    changes=changes,
                    options=options,
                    impact=impact,
                    # Headroom choice: the instance bucket is a model (physics.burst); a forecast alone less so
                    confidence=0.75 if seen_low else outlook.confidence - 0.05,
                    dedup_key=make_dedup_key(BURST_RULE, ctx.cluster_key, entity, dimension),
                    sources=[refs.EBS_OPTIMIZED.cite(), refs.EC2_CLOUDWATCH.cite(), refs.EBS_OPTIMIZED.cite("burst sizes: maximum for 30 minutes at least once every 24 hours"), refs.headroom_threshold("instance-ebs.md")]
                    + outlook.sources,
                )
            )
    return out


RULES = (
    Rule(
        id=BOUND_RULE,
        family="aws-instance",
        description=(
            "The instance's EBS MiB/s or IOPS sit at its EBS-optimized limit while its volumes have headroom; "
            "recommends the smallest larger size whose sustained limit clears the demand, with the price delta."
        ),
        evaluate=evaluate_bound,
        aws_actions=("instance.type",),
        supersedes=(BURST_RULE,),
        sources=(refs.EBS_OPTIMIZED.cite(), refs.PINGCAP_AWS.cite()),
    ),
    Rule(
        id=BURST_RULE,
        family="aws-instance",
        description=(
            "A burst-size instance's EBSIOBalance% / EBSByteBalance% drains; forecasts when it falls back to "
            "baseline and recommends a size whose baseline clears the demand."
        ),
        evaluate=evaluate_burst,
        aws_actions=("instance.type",),
        sources=(refs.EBS_OPTIMIZED.cite(), refs.EC2_CLOUDWATCH.cite()),
    ),
)

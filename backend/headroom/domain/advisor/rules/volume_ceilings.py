"""Volume ceiling rules: `volume-iops-ceiling` and `volume-throughput-ceiling`.

A volume's counted IOPS (256 KiB accounting, docs/reference/ebs-io-accounting.md#io-size-cap) or MiB/s sits at >= 90% of its current ceiling
(gp2: 3,000 burst while BurstBalance > 0, else the 3 IOPS/GiB baseline, docs/reference/gp2-burst.md#baseline-and-burst; gp3/io1/io2: provisioned, docs/reference/ebs-volume-types.md#limits-per-volume-type)
for a sustained time (`_common`: >= 30 consecutive minutes, or >= 5% of the window and >= 15 minutes in all;
docs/thresholds/sustained.md).
Corroboration, where present: VolumeIOPSExceededCheck / VolumeThroughputExceededCheck = 1 (docs/reference/cloudwatch.md#volume-metrics), latency up by
>= 10 ms (docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits: at the IOPS limit "latency experiences a dramatic penalty, often more than 10 ms"), queue
length. Severity: critical when the exceeded check or the latency jump confirms demand is being clipped, else
warning. Fixes (docs/reference/pingcap-guidance.md#volume-choice-on-aws): gp3 IOPS/throughput increase, gp2 -> gp3, io2, RAID 0 stripe, ranked by cost.
"""

from __future__ import annotations

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import window_evidence
from headroom.domain.model import Measure, ReferenceLine, SeriesRef
from headroom.domain.physics.ceilings import IoDimension
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.units import format_quantity, format_share

from ._common import (
    AT_CEILING_FRACTION,
    CONFIDENCE_BASE,
    CONFIDENCE_EXCEEDED_CHECK,
    CONFIDENCE_LATENCY,
    LATENCY_JUMP_MS,
    PINNED_RATIO,
    SUSTAINED_MIN_TOTAL_MINUTES,
    SUSTAINED_SOURCE,
    TARGET_UTILISATION,
    ceiling_line,
    ceiling_of,
    demand_estimate,
    median_where,
    pct,
    pressure,
    share_where,
    short_window_note,
    window_confidence,
)
from ._fixes import volume_options

IOPS_RULE = "volume-iops-ceiling"
THROUGHPUT_RULE = "volume-throughput-ceiling"
# The higher ceiling of a burst volume (gp2: its burst while the I/O credit bucket has credits, AWS gp2 docs).
BURST_CEILING = "burst ceiling, while credits last"
GP2_FULL_THROUGHPUT_GIB = 334  # docs/reference/gp2-burst.md#gp2-throughput / docs/reference/pingcap-guidance.md#volume-choice-on-aws: gp2 needs >= 334 GiB to sustain 250 MiB/s
# Share of the at-ceiling points where the exceeded check reads 1 for it to count as confirmation. Headroom
# choice: most of them (the check is "consistently attempted to drive ... exceeds", docs/reference/cloudwatch.md#volume-metrics).
EXCEEDED_CONFIRMS_SHARE = 0.5

WHY_IOPS = (
    'EBS enforces the IOPS limit as a hard ceiling: below it latency is stable, at it "latency experiences a '
    'dramatic penalty, often more than 10 ms" (PingCAP, Best Practices for TiDB on AWS Cloud). EBS counts I/O in 256 KiB chunks (AWS EBS I/O '
    "characteristics), so the ceiling is reached by counted, not issued, operations. TiKV's reads (block-cache misses) and "
    "raft/WAL writes then queue behind the volume, raising read and commit latency."
)
WHY_THROUGHPUT = (
    'The throughput limit is softer than the IOPS limit but "I/O latency grows proportionally to I/O throughput" '
    "(PingCAP, Best Practices for TiDB on AWS Cloud); large compaction and scan I/O hit the MiB/s cap before the IOPS cap (AWS EBS I/O characteristics). "
    "Once compaction cannot keep up, pending compaction bytes grow and TiKV's flow control slows writes "
    "(PingCAP, TiDB Best Practices on Public Cloud)."
)


def _evaluate(ctx: Context, dimension: IoDimension) -> list[Finding]:
    rule = IOPS_RULE if dimension == "iops" else THROUGHPUT_RULE
    out: list[Finding] = []
    for vol in ctx.volumes:
        view = ctx.volume_io(vol.id)
        lim = ctx.volume_limits(vol.id)
        if view is None or lim is None or lim.media != "ssd":
            continue
        if dimension == "iops":
            observed, ceiling = view.counted_iops, ctx.volume_iops_ceiling(vol.id)
            unit, check_metric = "IOPS", mid.EBS_IOPS_EXCEEDED_CHECK
        else:
            observed, ceiling = view.mibps, ctx.volume_mibps_ceiling(vol.id)
            unit, check_metric = "MiB/s", mid.EBS_THROUGHPUT_EXCEEDED_CHECK
        if ceiling is None:
            continue
        pr = pressure(observed, ceiling, ctx.step_seconds)
        if not pr.sustained:
            continue
        exceeded = share_where(ctx.series("volume", vol.id, check_metric), pr.mask)
        lat = (
            view.read_latency_ms
            if dimension == "iops"
            else np.fmax(view.read_latency_ms, view.write_latency_ms)
        )
        lat_at = median_where(lat, pr.mask)
        lat_off = median_where(lat, ~pr.mask)
        jump = (lat_at - lat_off) if lat_at is not None and lat_off is not None else None
        q_at = median_where(view.queue_length, pr.mask)
        q_off = median_where(view.queue_length, ~pr.mask)
        corroboration: list[str] = []
        confirmed = False
        if exceeded is not None:
            name = "VolumeIOPSExceededCheck" if dimension == "iops" else "VolumeThroughputExceededCheck"
            corroboration.append(f"{name} = 1 in {pct(exceeded)} of the at-ceiling minutes")
            confirmed |= exceeded >= EXCEEDED_CONFIRMS_SHARE
        if jump is not None and lat_at is not None and lat_off is not None:
            corroboration.append(
                f"median latency {format_quantity(lat_at, 'ms')} at the ceiling vs {format_quantity(lat_off, 'ms')} otherwise (+{format_quantity(jump, 'ms')})"
            )
            confirmed |= jump >= LATENCY_JUMP_MS  # docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits: "often more than 10 ms"
        if q_at is not None and q_off is not None:
            corroboration.append(
                f"median VolumeQueueLength {format_quantity(q_at, '')} at the ceiling vs {format_quantity(q_off, '')} otherwise"
            )
        pinned = confirmed or pr.peak_ratio >= PINNED_RATIO
        entity = ctx.entity_for_volume(vol.id)
        node = ctx.node_of_volume(vol.id)
        is_data = vol.role == "data"
        p99_iops = float(np.nanpercentile(view.counted_iops, 99))
        p99_mibps = float(np.nanpercentile(view.mibps, 99))
        if dimension == "iops":
            need_iops = demand_estimate(pr.p99, pr.peak, pinned)
            need_mibps = p99_mibps / TARGET_UTILISATION
        else:
            need_iops = p99_iops / TARGET_UTILISATION
            need_mibps = demand_estimate(pr.p99, pr.peak, pinned)
        inst = ctx.instance_limits(vol.instance_id) if vol.instance_id else None
        cap = (inst.baseline_iops, inst.baseline_throughput_mibps) if inst else None
        reason = (
            f"{unit} at >= {format_share(AT_CEILING_FRACTION)} of the {format_quantity(pr.ceiling_min, unit)} ceiling for "
            f"{pr.held_text()}; size for {format_quantity(need_iops if dimension == 'iops' else need_mibps, unit)}"
        )
        options = volume_options(
            entity,
            lim,
            need_iops,
            need_mibps,
            data=is_data,
            observed_iops_p99=p99_iops,
            observed_mibps_p99=p99_mibps,
            dimension=dimension,
            reason=reason,
            instance_cap=cap,
        )
        if not options:
            continue
        best = options[0]
        notes: list[str] = []
        if (
            best.impact.after is not None
            and best.impact.before is not None
            and best.impact.after <= best.impact.before
        ):
            # The instance's sustained EBS limit binds below this volume's: a volume fix alone buys nothing.
            confirmed = False
            notes.append(
                "the instance's sustained EBS limit is below this volume's ceiling: see the instance findings "
                "(AWS EBS-optimized instances: the node gets the smaller of the two)"
            )
        small_gp2 = (
            dimension == "throughput" and lim.volume_type == "gp2" and lim.size_gib < GP2_FULL_THROUGHPUT_GIB
        )
        ceiling_text = (
            format_quantity(pr.ceiling_min, unit)
            if pr.ceiling_min == pr.ceiling_max
            else f"{format_quantity(pr.ceiling_min, '')}-{format_quantity(pr.ceiling_max, unit)}"
        )
        title = (
            f"{vol.id} ({vol.type} {format_quantity(vol.size_gib, 'GiB')}, {vol.role}"
            f"{' of ' + node.id if node else ''}): {unit} at >= 90% of its {ceiling_text} ceiling "
            f"for {pr.held_text()}"
        )
        if small_gp2:
            title += f" (gp2 under {GP2_FULL_THROUGHPUT_GIB} GiB cannot sustain 250 MiB/s)"
        # a burst volume (gp2) held its higher ceiling part of the window: the peak is judged against that one
        bursts = pr.ceiling_max - pr.ceiling_min >= 0.5
        # the volume's ceilings the window was judged against: the lowest one in force, the highest
        current = ceiling_of(ctx, "volume", vol.id, dimension, pr.ceiling_min)
        highest = ceiling_of(ctx, "volume", vol.id, dimension, pr.ceiling_max)
        measures = [
            Measure(
                label=f"p99 {'counted IOPS' if dimension == 'iops' else 'throughput'}",
                value=round(pr.p99, 1),
                unit=unit,
                limit=pr.ceiling_min,
                limit_label="current ceiling",
                ceiling=current,
                statistic="p99",
                source=refs.EBS_VOLUME_TYPES.cite() + ("; " + refs.EBS_IO_CHARACTERISTICS.cite("256 KiB accounting") if dimension == "iops" else ""),
            ),
            Measure(
                label="peak",
                value=round(pr.peak, 1),
                unit=unit,
                limit=pr.ceiling_max,
                limit_label=BURST_CEILING if bursts else "ceiling",
                ceiling=highest,
                statistic="max",
            ),
            Measure(
                label="share of window at >= 90% of ceiling",
                value=round(pr.share, 4),
                unit="fraction",
                statistic="share",
                source=refs.EBS_VOLUME_TYPES.cite(),
            ),
        ]
        if small_gp2:
            sustained = lim.baseline_throughput_mibps
            measures.append(
                Measure(
                    label="gp2 sustained throughput at this size",
                    value=sustained,
                    unit="MiB/s",
                    limit=250.0,
                    limit_label="gp2 maximum at >= 334 GiB",
                    source=refs.EBS_GP.cite(),
                )
            )
        measures.append(
            Measure(
                label="time at >= 90% of ceiling",
                value=round(pr.minutes_at, 1),
                unit="min",
                limit=SUSTAINED_MIN_TOTAL_MINUTES,
                limit_label="sustained: at least",
                statistic="sum",
                source=SUSTAINED_SOURCE,
            )
        )
        derived = "derived.counted_iops" if dimension == "iops" else "derived.mibps"
        series = [
            SeriesRef(
                entity_kind="volume",
                entity_id=vol.id,
                metric=derived,
                # a name, not the unit: the chart was titled "MiB/s (MiB/s)"
                label="counted IOPS" if dimension == "iops" else "throughput",
                reference_lines=[
                    # the p99 measure's limit, in the table's words
                    ceiling_line(current, pr.ceiling_min, "current ceiling", unit),
                    ReferenceLine(
                        value=pr.ceiling_min * AT_CEILING_FRACTION, label="90% of ceiling", unit=unit,
                        source=refs.headroom_threshold("volume-ceilings.md"),
                    ),
                ]
                + ([ceiling_line(highest, pr.ceiling_max, BURST_CEILING, unit)] if bursts else []),
            ),
            SeriesRef(entity_kind="volume", entity_id=vol.id, metric=check_metric),
            SeriesRef(entity_kind="volume", entity_id=vol.id, metric="derived.read_latency_ms"),
            SeriesRef(entity_kind="volume", entity_id=vol.id, metric=mid.EBS_QUEUE_LENGTH),
        ]
        if lim.volume_type == "gp2":
            series.append(SeriesRef(entity_kind="volume", entity_id=vol.id, metric=mid.EBS_BURST_BALANCE))
        confidence = CONFIDENCE_BASE + (
            CONFIDENCE_EXCEEDED_CHECK if exceeded is not None and exceeded >= EXCEEDED_CONFIRMS_SHARE else 0.0
        )
        confidence += CONFIDENCE_LATENCY if jump is not None and jump >= LATENCY_JUMP_MS else 0.0
        short = short_window_note(ctx)
        if short is not None:
            corroboration.append(short)
        out.append(
            Finding(
                rule=rule,
                severity="critical" if confirmed else "warning",
                entity=entity,
                title=title,
                evidence=window_evidence(
                    ctx,
                    condition=(
                        f"{'counted IOPS (256 KiB accounting)' if dimension == 'iops' else 'read + write MiB/s'} "
                        ">= 90% of the current ceiling for >= 30 consecutive min, or for >= 5% of the window "
                        "and >= 15 min in all"
                    ),
                    measures=measures,
                    threshold_pct=90.0,
                    share_of_window=round(pr.share, 4),
                    longest_run_minutes=pr.longest_run_minutes,
                    episodes=pr.episodes,
                    corroboration=corroboration,
                    series=series,
                ),
                why=WHY_IOPS if dimension == "iops" else WHY_THROUGHPUT,
                changes=best.changes,
                options=options,
                impact=best.impact,
                confidence=window_confidence(ctx, round(min(confidence, 0.95), 2)),
                dedup_key=make_dedup_key(rule, ctx.cluster_key, entity),
                notes=notes,
                sources=[
                    refs.EBS_VOLUME_TYPES.cite('volume limits, gp2 bucket, 256 KiB accounting'),
                    refs.EBS_VOLUME_TYPES.cite('90% of provisioned performance 99% of the time'),
                    refs.EBS_CLOUDWATCH.cite('VolumeIOPSExceededCheck / VolumeThroughputExceededCheck'),
                    refs.TIKV_DEPLOY_EKS.cite('gp3 4,000 IOPS / 400 MiB/s for TiKV'),
                    refs.PINGCAP_AWS.cite('IOPS hard ceiling, RAID 0'),
                    refs.headroom_threshold("volume-ceilings.md"),
                    SUSTAINED_SOURCE,
                ],
            )
        )
    return out


def evaluate_iops(ctx: Context) -> list[Finding]:
    """Find volumes pinned at their IOPS ceiling."""
    return _evaluate(ctx, "iops")


def evaluate_throughput(ctx: Context) -> list[Finding]:
    """Find volumes pinned at their throughput ceiling."""
    return _evaluate(ctx, "throughput")


_AWS = ("volume.type", "volume.iops", "volume.throughput", "volume.size", "volume.raid0-stripes")

RULES = (
    Rule(
        id=IOPS_RULE,
        family="aws-volume",
        description=(
            "A volume's counted IOPS (256 KiB accounting) sit at >= 90% of its current ceiling (gp2 burst or "
            "baseline, provisioned otherwise) for a sustained share of the window; fixes ranked by cost."
        ),
        evaluate=evaluate_iops,
        aws_actions=_AWS,
        sources=(refs.EBS_VOLUME_TYPES.cite(), refs.EBS_CLOUDWATCH.cite(), refs.TIKV_DEPLOY_EKS.cite(), refs.PINGCAP_AWS.cite()),
    ),
    Rule(
        id=THROUGHPUT_RULE,
        family="aws-volume",
        description=(
            "A volume's MiB/s sit at >= 90% of its throughput ceiling for a sustained share of the window "
            "(including gp2 under 334 GiB, which cannot sustain 250 MiB/s); fixes ranked by cost."
        ),
        evaluate=evaluate_throughput,
        aws_actions=_AWS,
        sources=(refs.EBS_VOLUME_TYPES.cite(), refs.EBS_CLOUDWATCH.cite(), refs.PINGCAP_AWS.cite()),
    ),
)

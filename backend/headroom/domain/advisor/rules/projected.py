"""Projected ceilings: `projected-ceiling`, a volume or instance whose growth reaches its sustained IOPS or
throughput ceiling within weeks.

Input: the snapshot's `projections` (the projections job fits each ceiling once a day from four weeks of hourly
history: headroom.domain.forecast.capacity, docs/projections.md). Days are counted from the end of the advice
window against the ceiling the entity has *in this snapshot* (headroom.domain.forecast.crossing on the stored
path), so a what-if that raises a volume's IOPS moves the date without a refit, and a volume modified since the
fit is judged by its new limit.

- Severity: critical when the point forecast reaches the ceiling within CRITICAL_DAYS (7), warning within
  WARNING_DAYS (30); beyond, nothing (the projection is still on the Overview's "Next ceilings").
  docs/thresholds/projected-ceiling.md explains the choice.
- A ceiling already reached when fitted (0 days: the last day's hourly mean is at it), or reached within a day
  of now, is left to the rules that judge what is happening now (volume-iops-ceiling, instance-ebs-bound, ...),
  which see minute peaks, not hourly means.
- The fix is sized for SIZING_DAYS (90) of growth, not today's load: the band's upper edge (95th percentile of
  the hourly mean) up to 90 days out, at TARGET_UTILISATION (75 %) of the new ceiling, the same margin the
  ceiling rules keep. The other dimension (MiB/s when IOPS binds) is sized from its own projection the same way,
  else from the window's p99. Store disk space has its own rule (disk.py), which reads the same projections.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.forecast.crossing import band_crossing, level_at
from headroom.domain.words import method_words
from headroom.domain.model import Evidence, Forecast, Measure, ReferenceLine, SeriesRef
from headroom.domain.snapshot.schema import ProjectedCeiling
from headroom.domain.units import format_days, format_duration_words, format_quantity, format_share

from ._common import (
    PROJECTION_CRITICAL_DAYS,
    PROJECTION_SIZING_DAYS,
    PROJECTION_WARNING_DAYS,
    TARGET_UTILISATION,
    instance_io_series,
)
from ._fixes import instance_upgrade, volume_options

RULE = "projected-ceiling"
WARNING_DAYS = PROJECTION_WARNING_DAYS
CRITICAL_DAYS = PROJECTION_CRITICAL_DAYS
SIZING_DAYS = PROJECTION_SIZING_DAYS
THRESHOLD = refs.headroom_threshold("projected-ceiling.md", "warning within 30 days, critical within 7, fix sized for 90")

WHY = (
    "The growth of the last weeks, continued, brings the hourly average to the ceiling; at the daily peak the "
    "volume or instance is at its limit earlier. At an EBS IOPS or throughput limit latency rises sharply "
    '("often more than 10 ms", PingCAP, Best Practices for TiDB on AWS Cloud) and TiKV\'s reads and raft writes '
    "queue behind the disk. A modification takes effect within minutes but a volume can be modified only once "
    "every 6 hours (AWS: Modify a volume using Amazon EBS Elastic Volumes), so acting before the date is cheaper "
    "than acting at it."
)


def _ceiling(ctx: Context, p: ProjectedCeiling) -> tuple[float, str] | None:
    """The entity's sustained ceiling for the projected metric in this snapshot, with its source."""
    if p.entity.kind == "volume":
        lim = ctx.volume_limits(p.entity.id)
        if lim is None:
            return None
        vol = ctx.volume(p.entity.id)
        value = lim.baseline_iops if p.metric == "iops" else lim.baseline_throughput_mibps
        return value, refs.EBS_VOLUME_TYPES.cite(f"{vol.type} {format_quantity(vol.size_gib, 'GiB')}: sustained (baseline) limit")
    if p.entity.kind == "instance":
        resolved = ctx.resolved_instance_limits(p.entity.id)
        if resolved.limits is None:
            return None
        value = resolved.limits.baseline_iops if p.metric == "iops" else resolved.limits.baseline_throughput_mibps
        return value, f"{resolved.limits.name}: baseline EBS {'IOPS' if p.metric == 'iops' else 'MiB/s'} ({resolved.note})"
    return None


def _need(ctx: Context, p: ProjectedCeiling | None, observed_p99: float) -> float:
    """What to size for: the band's upper edge up to SIZING_DAYS, else the window's p99, at TARGET_UTILISATION."""
    horizon = ctx.window.end + timedelta(days=SIZING_DAYS)
    level = level_at(p.band.t, p.band.high, horizon) if p is not None else None
    return max(level if level is not None else 0.0, observed_p99) / TARGET_UTILISATION


def _p99(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(np.percentile(finite, 99)) if finite.size else 0.0


def evaluate(ctx: Context) -> list[Finding]:
    """Find volumes and instances whose projected growth reaches a sustained ceiling within WARNING_DAYS."""
    projections = {(p.entity.kind, p.entity.id, p.metric): p for p in ctx.snapshot.projections}
    out: list[Finding] = []
    now = ctx.window.end
    for p in ctx.snapshot.projections:
        if p.metric == "used_gib":
            continue
        found = _ceiling(ctx, p)
        if found is None:
            continue
        ceiling, ceiling_source = found
        crossing = band_crossing(p.band.t, p.band.point, p.band.low, p.band.high, ceiling, since=now)
        days = crossing.days
        if days is None or days > WARNING_DAYS or days < 1 or (p.days == 0 and p.ceiling == ceiling):
            continue  # beyond the horizon, or at the ceiling within the day: the rules of the present judge it
        severity = "critical" if days <= CRITICAL_DAYS else "warning"
        unit = "IOPS" if p.metric == "iops" else "MiB/s"
        dimension = "iops" if p.metric == "iops" else "throughput"
        other = projections.get((p.entity.kind, p.entity.id, "mibps" if p.metric == "iops" else "iops"))
        band_text = (
            f"{format_days(crossing.days_low, crossing.days_high)}" if crossing.days_low is not None
            and crossing.days_high is not None else
            f"from {format_days(crossing.days_low)}" if crossing.days_low is not None else "beyond the horizon"
        )
        when = now + timedelta(days=days)
        if p.entity.kind == "volume":
            vol = ctx.volume(p.entity.id)
            lim = ctx.volume_limits(vol.id)
            view = ctx.volume_io(vol.id)
            if lim is None:
                continue
            p99_iops = _p99(view.counted_iops) if view is not None else 0.0
            p99_mibps = _p99(view.mibps) if view is not None else 0.0
            need_iops = _need(ctx, p if p.metric == "iops" else other, p99_iops)
            need_mibps = _need(ctx, p if p.metric == "mibps" else other, p99_mibps)
            inst = ctx.instance_limits(vol.instance_id) if vol.instance_id else None
            cap = (inst.baseline_iops, inst.baseline_throughput_mibps) if inst else None
            reason = (f"projected to reach the {format_quantity(ceiling, unit)} ceiling in {format_days(days)}; sized for "
                      f"{format_days(SIZING_DAYS)} of growth at {format_share(TARGET_UTILISATION)} of the new ceiling")
            entity = ctx.entity_for_volume(vol.id)
            options = volume_options(entity, lim, need_iops, need_mibps, data=vol.role == "data",
                                     observed_iops_p99=p99_iops, observed_mibps_p99=p99_mibps,
                                     dimension=dimension, reason=reason, instance_cap=cap)
            changes = options[0].changes if options else []
            impact = options[0].impact if options else None
            label = f"{vol.id} ({vol.type} {format_quantity(vol.size_gib, 'GiB')}, {vol.role})"
            series = SeriesRef(entity_kind="volume", entity_id=vol.id,
                               metric="derived.counted_iops" if p.metric == "iops" else "derived.mibps",
                               label=f"{label} {unit}",
                               reference_lines=[ReferenceLine(value=ceiling, label="sustained ceiling", unit=unit,
                                                               source=ceiling_source)])
        else:
            iid = p.entity.id
            inst_lim = ctx.instance_limits(iid)
            rates = instance_io_series(ctx, iid)
            if inst_lim is None:
                continue
            p99_iops = _p99(rates[0]) if rates is not None else 0.0
            p99_mibps = _p99(rates[1]) if rates is not None else 0.0
            need_iops = _need(ctx, p if p.metric == "iops" else other, p99_iops)
            need_mibps = _need(ctx, p if p.metric == "mibps" else other, p99_mibps)
            reason = (f"instance EBS {unit} projected to reach its {format_quantity(ceiling, unit)} baseline in {format_days(days)}; "
                      f"sized for {format_days(SIZING_DAYS)} of growth")
            changes, impact_up, options = instance_upgrade(ctx, iid, inst_lim, need_iops, need_mibps, reason,
                                                           observed_mibps_p99=p99_mibps)
            impact = impact_up
            entity = ctx.entity_for_instance(iid)
            label = f"{iid} ({inst_lim.name})"
            series = SeriesRef(entity_kind="instance", entity_id=iid,
                               metric="derived.counted_iops" if p.metric == "iops" else "derived.mibps",
                               label=f"{label} EBS {unit}",
                               reference_lines=[ReferenceLine(value=ceiling, label="baseline EBS limit", unit=unit,
                                                               kind="sustained", source=ceiling_source)])
        if impact is None:
            continue
        need = need_iops if p.metric == "iops" else need_mibps
        title = (f"{label}: {unit} projected to reach the {format_quantity(ceiling, unit)} ceiling in {format_days(days)} "
                 f"(90 % interval {band_text})")
        out.append(Finding(
            rule=RULE,
            severity=severity,
            entity=entity,
            title=title,
            evidence=Evidence(
                window_start=p.history_end - timedelta(hours=p.history_hours), window_end=p.history_end,
                step_seconds=3600,
                condition=(f"hourly mean {unit} forecast reaches {format_quantity(ceiling, unit)} within {format_days(WARNING_DAYS)} "
                           f"(critical within {format_days(CRITICAL_DAYS)})"),
                threshold_pct=None,
                measures=[
                    Measure(label="hourly mean now", value=round(p.level_now, 1), unit=unit, limit=ceiling,
                            limit_label="sustained ceiling", statistic="mean", source=ceiling_source),
                    Measure(label="growth per week", value=round(p.growth_percent_per_week or 0.0, 2), unit="%",
                            statistic="trend"),
                    Measure(label="days until the ceiling", value=round(days, 1), unit="days",
                            limit=WARNING_DAYS, limit_label="warning within", source=THRESHOLD),
                    Measure(label=f"size for ({format_days(SIZING_DAYS)} of growth, {format_share(TARGET_UTILISATION)})",
                            value=round(need, 1), unit=unit, statistic="p95 band", source=THRESHOLD),
                ],
                corroboration=[f"fitted {p.fitted_at:%Y-%m-%d %H:%M} UTC on {format_duration_words(p.history_hours * 3600)} of history "
                               f"({method_words(p.method)})"],
                forecasts=[Forecast(kind="ceiling", label=f"sustained {unit} ceiling",
                                    within_seconds=days * 86400.0, at=when,
                                    earliest=now + timedelta(days=crossing.days_low)
                                    if crossing.days_low is not None else None,
                                    latest=now + timedelta(days=crossing.days_high)
                                    if crossing.days_high is not None else None,
                                    value=ceiling, unit=unit, method=method_words(p.method),
                                    source=ceiling_source)],
                series=[series],
            ),
            why=WHY,
            changes=changes,
            options=options,
            impact=impact,
            confidence=0.8 if p.history_hours >= 14 * 24 else 0.6 if p.history_hours >= 72 else 0.4,
            dedup_key=make_dedup_key(RULE, ctx.cluster_key, entity, p.metric),
            sources=[refs.EBS_VOLUME_TYPES.cite(), refs.EBS_MODIFY.cite(), THRESHOLD],
            notes=["confidence follows the history the fit had: 2+ weeks 0.8, 3+ days 0.6, less 0.4 "
                   "(short histories give narrow bands)"],
        ))
    return out


RULES = (
    Rule(
        id=RULE,
        family="projection",
        description=(
            "A volume's or instance's projected growth (the daily projections) reaches its sustained IOPS or "
            "throughput ceiling within 30 days (critical within 7); the fix is sized for 90 days of growth."
        ),
        evaluate=evaluate,
        aws_actions=("volume.type", "volume.iops", "volume.throughput", "volume.size", "instance.type"),
        sources=(refs.EBS_VOLUME_TYPES.cite(), refs.EBS_MODIFY.cite(), THRESHOLD),
    ),
)

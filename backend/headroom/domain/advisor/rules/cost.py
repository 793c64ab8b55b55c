"""Cost rules: `gp2-to-gp3` and `volume-overprovisioned`.

Both only fire when a cheaper configuration keeps the observed **peak** (the window maximum, not a percentile:
cutting capacity must not clip anything seen) at or below 75% of its new ceiling (`_common.TARGET_UTILISATION`)
and the volume never came near its current ceiling, nor did its instance (when the instance sits at its EBS
limit, the volumes' demand is clipped by it and their peaks understate what they need, docs/reference/ec2-ebs-limits.md#limits-table).

- gp2-to-gp3: gp3 storage is $0.08 vs gp2 $0.10 per GB-month, with 3,000 IOPS and 125 MiB/s included (
  docs/reference/ebs-prices.md#prices-us-east-1, AWS Prescriptive Guidance "Migrate Amazon EBS volumes from gp2 to gp3"). The proposal is the cheapest gp3
  of the same size that keeps the peak with margin; an "equal performance" gp3 (gp2's baseline/burst IOPS and
  throughput) is listed as an option.
- volume-overprovisioned: gp3 / io1 / io2 with provisioned IOPS or throughput well above the peak. Candidates:
  the same type at lower IOPS/throughput, and gp3 (for io1/io2; io2's 99.999% durability vs 99.8-99.9% for gp3,
  docs/reference/pingcap-guidance.md#volume-choice-on-aws, is noted). Fires when the saving is >= 20% of the volume's cost and >= $10/month (Headroom choice:
  below that, the change is not worth a modification slot, docs/reference/ebs-volume-types.md#elastic-volumes-modifications: four per rolling 24 h).

Both cut capacity, so both are judged on the lookback (rules/_lookback.py; docs/reference/lookback.md): the
cheaper configuration is sized on max(the window's peak, the peak of the last 14 days, or 32 or 93 as the
organisation or cluster asks), and while the history is shorter than the lookback no cut is proposed: the finding
says it is held and why ("needs 14 days of history, has 3 days"). A gp2 volume still gets the gp3 of equal
performance (it removes nothing), with the cheaper one held.

Severity is info (money, not risk); confidence grows with the history behind the volume (a day cannot see a
weekly peak): 0.5 + 0.4 × min(days / lookback, 1).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import window_evidence
from headroom.domain.catalog import PROVISIONED_IOPS_TYPES, VolumeLimits, volume_limits
from headroom.domain.model import Impact, Measure, Option, ReferenceLine, SeriesRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.units import format_days, format_quantity, format_usd_change

from ._common import (
    AT_CEILING_FRACTION,
    TARGET_UTILISATION,
    ceiling_of,
    instance_ceiling,
    instance_io_series,
    pressure,
    round_up,
)
from ._lookback import Judged, argmax_at, judge_cut
from ._fixes import GP3_MIBPS_PER_IOPS, IOPS_STEP, MIBPS_STEP, VolumeConfig, trade_off_notes, volume_changes

GP2_RULE = "gp2-to-gp3"
OVER_RULE = "volume-overprovisioned"
MIN_SAVING_SHARE = 0.20  # Headroom choice (module docstring)
MIN_SAVING_USD = 10.0  # Headroom choice (module docstring)


def _confidence(judged: Judged) -> float:
    return round(0.5 + 0.4 * min(judged.history_days / judged.lookback_days, 1.0), 2)


def _gp3_for_peak(size: float, peak_iops: float, peak_mibps: float) -> VolumeConfig | None:
    mibps = max(125.0, round_up(peak_mibps / TARGET_UTILISATION, MIBPS_STEP))
    iops = max(3000, int(round_up(peak_iops / TARGET_UTILISATION, IOPS_STEP)))
    iops = max(iops, int(round_up(mibps / GP3_MIBPS_PER_IOPS, IOPS_STEP)))
    size = max(size, math.ceil(iops / 500))
    lim = volume_limits("gp3", size, iops, mibps)
    if not lim.valid:
        return None
    return VolumeConfig(
        f"gp3 {format_quantity(size, 'GiB')}, {format_quantity(iops, 'IOPS')}, {format_quantity(mibps, 'MiB/s')}", "gp3", size, iops, mibps, 1, lim, True
    )


def _io_for_peak(kind: str, size: float, peak_iops: float, peak_mibps: float) -> VolumeConfig | None:
    per_iops = 0.256 if kind == "io2" else 0.25  # docs/reference/ebs-volume-types.md#limits-per-volume-type io2 0.256 MiB/s per IOPS; docs/reference/ebs-io-accounting.md#io1-throughput-rule io1 256 KiB per IOPS
    iops = int(
        max(
            100,
            round_up(peak_iops / TARGET_UTILISATION, IOPS_STEP),
            round_up(peak_mibps / TARGET_UTILISATION / per_iops, IOPS_STEP),
        )
    )
    lim = volume_limits(kind, size, iops)
    if not lim.valid:
        return None
    return VolumeConfig(f"{kind} {format_quantity(size, 'GiB')}, {format_quantity(iops, 'IOPS')}", kind, size, iops, None, 1, lim, True)


def _instance_pinned(ctx: Context, iid: str | None) -> bool:
    """Whether the volume's instance sat at its EBS limit: then the volume's peaks understate its demand.

    Judged once per run and instance (every volume on it, in both cost rules, asks)."""
    if iid is None:
        return False
    scope = (
        ("instance", iid),
        *(("volume", v.id) for v in ctx.volumes_on_instance(iid)),
        *(("node", n.id) for n in ctx.nodes_on_instance(iid)),
    )
    return ctx.memo(("cost_instance_pinned", iid), partial(_judge_instance_pinned, ctx, iid), scope)


def _judge_instance_pinned(ctx: Context, iid: str) -> bool:
    inst = ctx.instance_limits(iid)
    rates = instance_io_series(ctx, iid)
    if inst is None or rates is None:
        return False
    iops, mibps = rates
    n = len(mibps)
    byte_ceiling = instance_ceiling(
        ctx, iid, inst.baseline_throughput_mibps, inst.max_throughput_mibps, mid.EC2_EBS_BYTE_BALANCE, n
    )
    io_ceiling = instance_ceiling(ctx, iid, inst.baseline_iops, inst.max_iops, mid.EC2_EBS_IO_BALANCE, n)
    return (
        pressure(mibps, byte_ceiling, ctx.step_seconds).sustained
        or pressure(iops, io_ceiling, ctx.step_seconds).sustained
    )


_Peaks = tuple[float, float, float, float, Judged]


def _peaks(ctx: Context, vid: str) -> _Peaks | None:
    """Return the volume's peak counted IOPS, MiB/s, highest share of its ceilings, highest IOPS ceiling and the
    peaks a cut is judged on (the lookback's; None when its instance clips it or a series is missing); once per
    run and volume (both cost rules ask)."""
    vol = ctx.volume(vid)
    scope = (("volume", vid), *((("instance", vol.instance_id),) if vol.instance_id else ()))
    if vol.instance_id:
        scope += tuple(("volume", v.id) for v in ctx.volumes_on_instance(vol.instance_id))
        scope += tuple(("node", n.id) for n in ctx.nodes_on_instance(vol.instance_id))
    return ctx.memo(("cost_peaks", vid), partial(_volume_peaks, ctx, vid), scope)


def _volume_peaks(ctx: Context, vid: str) -> _Peaks | None:
    if _instance_pinned(ctx, ctx.volume(vid).instance_id):
        return None  # demand clipped by the instance (docs/reference/ec2-ebs-limits.md#limits-table): the observed peak is not the need
    view = ctx.volume_io(vid)
    iceil = ctx.volume_iops_ceiling(vid)
    mceil = ctx.volume_mibps_ceiling(vid)
    if view is None or iceil is None or mceil is None:
        return None
    if np.all(np.isnan(view.counted_iops)):
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        near = max(float(np.nanmax(view.counted_iops / iceil)), float(np.nanmax(view.mibps / mceil)))
    peak_iops, peak_mibps = float(np.nanmax(view.counted_iops)), float(np.nanmax(view.mibps))
    judged = judge_cut(
        ctx, "volume", vid, peak_iops, argmax_at(ctx, view.counted_iops), peak_mibps, argmax_at(ctx, view.mibps)
    )
    return peak_iops, peak_mibps, near, float(np.nanmax(iceil)), judged


def _finding(
    ctx: Context,
    rule: str,
    vid: str,
    lim: VolumeLimits,
    configs: list[VolumeConfig],
    judged: Judged,
    title_tail: str,
    why: str,
    sources: list[str],
    extra_notes: list[str],
) -> Finding:
    entity = ctx.entity_for_volume(vid)
    vol = ctx.volume(vid)
    peak_iops, peak_mibps = judged.iops, judged.mibps
    reason = (
        f"gp3 at the volume's own baseline removes no capacity; one sized on the peak is held: {judged.held_text()}"
        if judged.held
        else f"peak {format_quantity(peak_iops, 'counted IOPS')} / {format_quantity(peak_mibps, 'MiB/s')} over the "
        f"last {format_days(judged.lookback_days)} fits at <= 75% of the cheaper configuration"
    )
    sized = (
        f"A configuration sized on the peak is held: {judged.held_text()}."
        if judged.held
        else f"Sized on the higher of the window's peak and the lookback's: {judged.peak_text()}."
    )
    options = []
    for cfg in sorted(configs, key=lambda c: c.monthly_cost):
        delta = round(cfg.monthly_cost - lim.monthly_cost_usd, 2)
        options.append(
            Option(
                label=cfg.label,
                changes=volume_changes(entity, lim, cfg, reason),
                impact=Impact(
                    summary=(
                        f"{format_usd_change(delta)}/month; IOPS ceiling {format_quantity(lim.baseline_iops, 'IOPS')} -> "
                        f"{format_quantity(cfg.iops_ceiling, 'IOPS')}, throughput ceiling "
                        f"{format_quantity(lim.baseline_throughput_mibps, 'MiB/s')} -> {format_quantity(cfg.mibps_ceiling, 'MiB/s')}"
                    ),
                    metric="monthly cost",
                    unit="USD/month",
                    before=round(lim.monthly_cost_usd, 2),
                    after=round(cfg.monthly_cost, 2),
                    headroom_before_pct=100.0 * (1 - peak_iops / lim.baseline_iops)
                    if lim.baseline_iops
                    else None,
                    headroom_after_pct=100.0 * (1 - peak_iops / cfg.iops_ceiling)
                    if cfg.iops_ceiling
                    else None,
                    monthly_cost_before_usd=round(lim.monthly_cost_usd, 2),
                    monthly_cost_after_usd=round(cfg.monthly_cost, 2),
                    monthly_cost_delta_usd=delta,
                    price_region=lim.cost_breakdown.price_region,
                ),
                notes=trade_off_notes(lim, cfg),
            )
        )
    best = options[0]
    saving = -(best.impact.monthly_cost_delta_usd or 0.0)
    return Finding(
        rule=rule,
        severity="info",
        entity=entity,
        title=f"{vid} ({vol.type} {format_quantity(vol.size_gib, 'GiB')}, {vol.role}): {title_tail}; save {format_quantity(saving, 'USD')}/month",
        evidence=window_evidence(
            ctx,
            condition=(
                f"peak <= 75% of the cheaper configuration's ceilings; never near the current ones; {judged.peak_text()}"
            ),
            measures=[
                Measure(
                    label="peak counted IOPS",
                    value=round(peak_iops, 1),
                    unit="IOPS",
                    limit=lim.baseline_iops,
                    limit_label="current sustained IOPS",
                    ceiling=ceiling_of(ctx, "volume", vid, "iops", lim.baseline_iops),
                    statistic="max",
                    source=refs.EBS_VOLUME_TYPES.cite(),
                ),
                Measure(
                    label="peak throughput",
                    value=round(peak_mibps, 1),
                    unit="MiB/s",
                    limit=lim.baseline_throughput_mibps,
                    limit_label="current sustained MiB/s",
                    ceiling=ceiling_of(ctx, "volume", vid, "throughput", lim.baseline_throughput_mibps),
                    statistic="max",
                ),
                Measure(
                    label="monthly cost now",
                    value=round(lim.monthly_cost_usd, 2),
                    unit="USD/month",
                    source=refs.EBS_PRICING.cite(),
                ),
                *_lookback_measures(judged),
            ],
            series=[
                SeriesRef(
                    entity_kind="volume",
                    entity_id=vid,
                    metric="derived.counted_iops",
                    reference_lines=[ReferenceLine(value=lim.baseline_iops, label="current", unit="IOPS",
                                                   kind="sustained", source=refs.EBS_OPTIMIZED.cite())],
                ),
                SeriesRef(
                    entity_kind="volume",
                    entity_id=vid,
                    metric="derived.mibps",
                    reference_lines=[
                        ReferenceLine(value=lim.baseline_throughput_mibps, label="current", unit="MiB/s", kind="sustained",
                                      source=refs.EBS_OPTIMIZED.cite())
                    ],
                ),
            ],
        ),
        why=f"{why} {sized}",
        changes=best.changes,
        options=options,
        impact=best.impact,
        confidence=_confidence(judged),
        dedup_key=make_dedup_key(rule, ctx.cluster_key, entity),
        sources=[*sources, refs.COMPUTE_OPTIMIZER_LOOKBACK.cite()],
        notes=extra_notes,
    )


def _lookback_measures(judged: Judged) -> list[Measure]:
    return [
        Measure(
            label=f"days of history (lookback {format_days(judged.lookback_days)})",
            value=round(judged.history_days, 1),
            unit="days",
            limit=float(judged.lookback_days),
            limit_label="lookback",
            source=refs.COMPUTE_OPTIMIZER_LOOKBACK.cite(),
        )
    ]


def _held(
    ctx: Context, rule: str, vid: str, lim: VolumeLimits, judged: Judged, what: str, why: str
) -> Finding:
    """A cut that waits for history: no change, and the reason in its title."""
    entity = ctx.entity_for_volume(vid)
    vol = ctx.volume(vid)
    held = judged.held_text()
    return Finding(
        rule=rule,
        severity="info",
        entity=entity,
        title=f"{vid} ({vol.type} {format_quantity(vol.size_gib, 'GiB')}, {vol.role}): {what}; held: {held}",
        evidence=window_evidence(
            ctx,
            condition=f"a cut is judged on the peak of the last {format_days(judged.lookback_days)}; {held}",
            measures=[
                Measure(label="peak counted IOPS so far", value=round(judged.iops, 1), unit="IOPS",
                        limit=lim.baseline_iops, limit_label="current sustained IOPS", statistic="max",
                        ceiling=ceiling_of(ctx, "volume", vid, "iops", lim.baseline_iops)),
                Measure(label="peak throughput so far", value=round(judged.mibps, 1), unit="MiB/s",
                        limit=lim.baseline_throughput_mibps, limit_label="current sustained MiB/s", statistic="max",
                        ceiling=ceiling_of(ctx, "volume", vid, "throughput", lim.baseline_throughput_mibps)),
                *_lookback_measures(judged),
            ],
        ),
        why=(
            f"{why} A cut removes capacity, so it is sized on the peak of the last {format_days(judged.lookback_days)} "
            f"(as AWS Compute Optimizer's look-back period); with less history a weekly batch may not have been seen "
            f"yet, so the cut is held: {held}."
        ),
        impact=Impact(summary=f"held: {held}"),
        confidence=_confidence(judged),
        dedup_key=make_dedup_key(rule, ctx.cluster_key, entity),
        sources=[refs.COMPUTE_OPTIMIZER_LOOKBACK.cite(), refs.EBS_PRICING.cite()],
        notes=[f"no change is proposed until the history covers the lookback ({held})"],
    )


def evaluate_gp2(ctx: Context) -> list[Finding]:
    """Find gp2 volumes that a cheaper gp3 serves at the observed peak with margin."""
    out: list[Finding] = []
    for vol in ctx.volumes:
        lim = ctx.volume_limits(vol.id)
        peaks = _peaks(ctx, vol.id)
        if vol.type != "gp2" or lim is None or peaks is None:
            continue
        _, _, near, _, judged = peaks
        if near >= AT_CEILING_FRACTION:
            continue  # a performance rule owns this volume
        cheap = _gp3_for_peak(vol.size_gib, judged.iops, judged.mibps)
        equal = _gp3_for_peak(
            vol.size_gib,
            lim.baseline_iops * TARGET_UTILISATION,
            lim.baseline_throughput_mibps * TARGET_UTILISATION,
        )
        configs = [c for c in (cheap, equal) if c is not None]
        if not configs or min(c.monthly_cost for c in configs) >= lim.monthly_cost_usd:
            continue
        if equal is not None and cheap is not None and equal.label == cheap.label:
            configs = [cheap]
        why_gp2 = (
            "gp3 costs $0.08 per GB-month against gp2's $0.10 and includes 3,000 IOPS and 125 MiB/s at any "
            "size, without a burst bucket (AWS EBS volume types; AWS Prescriptive Guidance gp2 -> gp3). "
            "The change is an in-place Elastic Volumes modification (AWS Elastic Volumes)."
        )
        notes: list[str] = []
        if judged.held:
            # gp3 at gp2's own performance removes nothing: it need not wait; a lower one does.
            if equal is None or equal.monthly_cost >= lim.monthly_cost_usd:
                out.append(_held(ctx, GP2_RULE, vol.id, lim, judged, "gp3 may serve it for less", why_gp2))
                continue
            if cheap is not None and cheap.label != equal.label:
                notes.append(f"a cheaper gp3 sized on the peak is held: {judged.held_text()}")
            configs = [equal]
        out.append(
            _finding(
                ctx,
                GP2_RULE,
                vol.id,
                lim,
                configs,
                judged,
                "gp3 serves the observed peak for less",
                why=why_gp2,
                sources=[refs.EBS_VOLUME_TYPES.cite(), refs.EBS_MODIFY.cite(), refs.EBS_PRICING.cite(), refs.PINGCAP_AWS.cite(), refs.headroom_threshold("cost.md")],
                extra_notes=notes,
            )
        )
    return out


def evaluate_over(ctx: Context) -> list[Finding]:
    """Find provisioned volumes whose IOPS/throughput sit far above the observed peak."""
    out: list[Finding] = []
    for vol in ctx.volumes:
        lim = ctx.volume_limits(vol.id)
        peaks = _peaks(ctx, vol.id)
        if vol.type not in PROVISIONED_IOPS_TYPES or lim is None or peaks is None:
            continue
        _, _, near, _, judged = peaks
        peak_iops, peak_mibps = judged.iops, judged.mibps
        if near >= AT_CEILING_FRACTION:
            continue
        configs = [c for c in (_gp3_for_peak(vol.size_gib, peak_iops, peak_mibps),) if c is not None]
        if vol.type in ("io1", "io2"):
            same = _io_for_peak(vol.type, vol.size_gib, peak_iops, peak_mibps)
            if same is not None:
                configs.append(same)
        configs = [c for c in configs if c.monthly_cost < lim.monthly_cost_usd]
        if not configs:
            continue
        best = min(c.monthly_cost for c in configs)
        saving = lim.monthly_cost_usd - best
        if saving < MIN_SAVING_USD or saving < MIN_SAVING_SHARE * lim.monthly_cost_usd:
            continue
        why_over = (
            "Provisioned IOPS and throughput are billed whether used or not (io1/io2 $0.065 per IOPS-month, "
            "gp3 $0.005 per IOPS-month above 3,000 and $0.04 per MiB/s-month above 125, AWS EBS pricing). "
            "The observed peak fits a cheaper configuration with 25% to spare."
        )
        if judged.held:
            out.append(_held(ctx, OVER_RULE, vol.id, lim, judged,
                             f"provisioned {format_quantity(lim.baseline_iops, 'IOPS')} / "
                             f"{format_quantity(lim.baseline_throughput_mibps, 'MiB/s')} may be more than it needs",
                             why_over))
            continue
        notes = []
        if vol.type == "io2" and any(c.volume_type == "gp3" for c in configs):
            notes.append("io2 is designed for 99.999% durability, gp3 for 99.8-99.9% (PingCAP blog on EBS)")
        out.append(
            _finding(
                ctx,
                OVER_RULE,
                vol.id,
                lim,
                configs,
                judged,
                f"provisioned {format_quantity(lim.baseline_iops, 'IOPS')} / {format_quantity(lim.baseline_throughput_mibps, 'MiB/s')}, "
                f"peak {format_quantity(peak_iops, 'IOPS')} / {format_quantity(peak_mibps, 'MiB/s')}",
                why=why_over,
                sources=[
                    refs.EBS_VOLUME_TYPES.cite(),
                    refs.EBS_PRICING.cite(),
                    refs.EC2_CLOUDWATCH.cite('balances that are never low: candidates to size down'),
                    refs.headroom_threshold("cost.md"),
                ],
                extra_notes=notes,
            )
        )
    return out


_AWS = ("volume.type", "volume.iops", "volume.throughput", "volume.size")

RULES = (
    Rule(
        id=GP2_RULE,
        family="aws-cost",
        description="A gp2 volume that gp3 serves at the observed peak (with margin) for less money.",
        evaluate=evaluate_gp2,
        aws_actions=_AWS,
        sources=(refs.EBS_VOLUME_TYPES.cite(), refs.EBS_PRICING.cite()),
    ),
    Rule(
        id=OVER_RULE,
        family="aws-cost",
        description=(
            "A gp3/io1/io2 volume provisioned far above its observed peak: a cheaper configuration keeps the "
            "peak with margin."
        ),
        evaluate=evaluate_over,
        aws_actions=_AWS,
        sources=(refs.EBS_PRICING.cite(),),
    ),
)

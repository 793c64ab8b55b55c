"""Disk space rules: `disk-low-space` and `filesystem-not-grown`.

What TiKV and PD act on (headroom.domain.snapshot.views.disk_view): TiKV's store heartbeat reports `capacity`
(the data filesystem's size, or raftstore.capacity when smaller) and `available` (capacity - used, or the
filesystem's free space when smaller); PD judges the store by available / capacity:
- above PD's `schedule.high-space-ratio` (0.7 by default) of capacity used, PD stops ignoring space and balances
  by the space left (PingCAP: PD Configuration File);
- above `schedule.low-space-ratio` (0.8 by default), PD places no new regions on the store (same page);
- below TiKV's reserved space, `max(storage.reserve-space, 5 % of capacity)` (5GB by default: TiKV's config
  template), TiKV restricts writes to protect recovery from a full disk.

`disk-low-space` (one finding per store): critical at or above the low-space line or within the reserve,
warning at or above the high-space line, or when the store's projection (the projections job, the same one
the Overview's "Next ceilings" lists) reaches the low-space line within 30 days (critical within 7; the
projected-ceiling thresholds, docs/thresholds/disk.md). PD's ratios are read as their defaults: Headroom does not
read PD's config, and says so. The fix is an online EBS resize of the data volume(s) sized so that the space
used in 90 days (the projection's upper band edge, else today's) stays at or below the high-space line; the
other way, more stores, is priced in a note.

`filesystem-not-grown` (warning): the data volume in AWS is more than 10 % larger than the filesystem TiKV's
data is on (node_exporter), the sign of a resize whose filesystem step was never run (AWS: "Extend the file
system after resizing an EBS volume"); ext4 and XFS metadata take ~1-2 %, so 10 % is a margin (docs/thresholds/
disk.md). The paid space is unused and TiKV's capacity stays small.
"""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.catalog import volume_limits
from headroom.domain.forecast.capacity import PD_HIGH_SPACE_RATIO, PD_LOW_SPACE_RATIO
from headroom.domain.forecast.crossing import band_crossing, level_at
from headroom.domain.words import method_words
from headroom.domain.model import (
    Change,
    Evidence,
    Forecast,
    Impact,
    Measure,
    Option,
    ReferenceLine,
    SeriesRef,
)
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node
from headroom.domain.snapshot.views import disk_view
from headroom.domain.units import format_days, format_quantity, format_share, format_usd_change

from ._common import PROJECTION_CRITICAL_DAYS as CRITICAL_DAYS
from ._common import PROJECTION_SIZING_DAYS as SIZING_DAYS
from ._common import PROJECTION_WARNING_DAYS as WARNING_DAYS

LOW_SPACE_RULE = "disk-low-space"
FS_RULE = "filesystem-not-grown"
GIB = 1024.0**3
RESERVE_DEFAULT_BYTES = 5 * GIB  # storage.reserve-space = "5GB" (TiKV's config template; TiKV sizes are binary)
RESERVE_SHARE = 0.05  # "max(reserve-space, capacity * 5%) will be reserved exactly" (TiKV's config template)
FS_GAP_SHARE = 0.10  # Headroom choice: volume > filesystem by more than 10 % (docs/thresholds/disk.md)
SIZE_STEP_GIB = 10.0  # Headroom choice: round proposed sizes up to 10 GiB

PD_SOURCE = refs.PD_CONFIG.cite("schedule.high-space-ratio 0.7, schedule.low-space-ratio 0.8 (defaults)")
RESERVE_SOURCE = refs.TIKV_CONFIG_TEMPLATE.cite("storage.reserve-space: max(5GB, 5 % of capacity) reserved")
THRESHOLD = refs.headroom_threshold("disk.md", "projected low space within 30/7 days, sized for 90 days")

WHY_LOW = (
    "PD stops placing new regions on a store above its low-space ratio (0.8 of capacity by default) and, above "
    "the high-space ratio (0.7), balances by the space left, moving regions to the other stores (PingCAP: PD "
    "Configuration File). When the space left falls within TiKV's reserve (max(storage.reserve-space, 5 % of "
    "capacity)), TiKV restricts writes to keep room to recover (TiKV's config template). The fix is more "
    "space before then: an EBS volume grows online (AWS: Modify a volume using Amazon EBS Elastic Volumes), "
    "then its filesystem is grown; TiKV reads the new capacity at its next store heartbeat."
)
WHY_FS = (
    "The EBS volume is larger than the filesystem on it: after a volume resize the partition and filesystem "
    "must be extended (AWS: Extend the file system after resizing an EBS volume). Until then the extra space is "
    "paid for, TiKV's capacity (the filesystem's size) stays small and PD's space ratios are judged against it."
)


def _last(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite[-1]) if finite.size else None


def _grow_steps(device: str | None, mount: str | None, *, after_modify: bool = True) -> str:
    """How to grow the filesystem (AWS: Extend the file system after resizing an EBS volume). The device name
    AWS shows (/dev/sdf) is not the one Nitro instances give the OS (/dev/nvme1n1): `lsblk` maps them."""
    where = mount or "<mount point>"
    attached = f" (attached as {device})" if device else ""
    first = "after the modification reaches 'optimizing', grow" if after_modify else "grow"
    return (f"{first} the filesystem on the data volume{attached}: find its device with `lsblk`, then "
            f"`sudo growpart <device> 1` if it is partitioned, and `sudo resize2fs <device>` (ext4) or "
            f"`sudo xfs_growfs -d {where}` (XFS) ({refs.EBS_EXTEND_FS.cite()}); TiKV reads the new capacity at its "
            f"next store heartbeat, no restart. A volume can be modified again only 6 hours after a modification "
            f"({refs.EBS_MODIFY.cite()})")


def _resize_option(ctx: Context, node: Node, need_total_gib: float, mount: str | None, reason: str) -> Option | None:
    """Grow the node's data volume(s) to `need_total_gib` in all (a RAID 0 array: each stripe its share)."""
    vols = [ctx.volume(v) for v in node.data_volume_ids]
    if not vols:
        return None
    current_total = sum(v.size_gib for v in vols)
    per = math.ceil(need_total_gib / len(vols) / SIZE_STEP_GIB) * SIZE_STEP_GIB
    if per * len(vols) <= current_total:
        return None
    changes: list[Change] = []
    before = after = 0.0
    region = ctx.cluster.region
    for v in vols:
        lim_before = volume_limits(v.type, v.size_gib, v.iops, v.throughput_mibps, region=region)
        lim_after = volume_limits(v.type, per, v.iops, v.throughput_mibps, region=region)
        if not lim_after.valid:
            return None  # beyond the type's maximum size: the scale-out note is the way
        before += lim_before.monthly_cost_usd
        after += lim_after.monthly_cost_usd
        changes.append(Change(target="aws", key="volume.size", current=v.size_gib, proposed=per, online=True,
                              reason=reason, entity=ctx.entity_for_volume(v.id)))
    return Option(
        label=f"grow the data volume{'s' if len(vols) > 1 else ''} to {format_quantity(per, 'GiB')}"
              + (f" each ({format_quantity(per * len(vols), 'GiB')})" if len(vols) > 1 else ""),
        changes=changes,
        impact=Impact(
            summary=f"data volume {format_quantity(current_total, 'GiB')} -> {format_quantity(per * len(vols), 'GiB')}; {format_usd_change(after - before)}/month",
            metric="data volume size", unit="GiB", before=current_total, after=per * len(vols),
            monthly_cost_before_usd=round(before, 2), monthly_cost_after_usd=round(after, 2),
            monthly_cost_delta_usd=round(after - before, 2),
        ),
        notes=[_grow_steps(vols[0].device, mount)],
    )


def _scale_out_note(ctx: Context, node: Node, need_total_gib: float, capacity_gib: float) -> str | None:
    """Price the other way: more stores of this shape until the cluster's data fits under the high-space line."""
    if capacity_gib <= 0:
        return None
    extra = need_total_gib - capacity_gib
    if extra <= 0:
        return None
    stores = math.ceil(extra / (capacity_gib * PD_HIGH_SPACE_RATIO))
    inst = ctx.instance_limits(node.instance_id)
    vols = [ctx.volume(v) for v in node.data_volume_ids]
    vol_cost = sum(volume_limits(v.type, v.size_gib, v.iops, v.throughput_mibps, region=ctx.cluster.region).monthly_cost_usd
                   for v in vols)
    price = (inst.monthly_price_usd + vol_cost) if inst is not None and inst.monthly_price_usd is not None else None
    priced = f", about {format_quantity(stores * price, 'USD')}/month on demand ({inst.price_label if inst else ''})" if price else ""
    return (f"or scale out: {stores} more store{'s' if stores > 1 else ''} like this one ({node.instance_type}, "
            f"{format_quantity(sum(v.size_gib for v in vols), 'GiB')}){priced}; PD moves regions onto them, which takes hours "
            "and I/O on every store")


def _low_space(ctx: Context, node: Node) -> Finding | None:
    disk = disk_view(ctx.snapshot, node.id)
    if not disk.has_store_stats:
        return None
    capacity = _last(disk.capacity)
    available = _last(disk.available)
    if capacity is None or available is None or capacity <= 0:
        return None
    used_share = 1.0 - available / capacity
    reserve_cfg = ctx.config_bytes(node.id, "storage.reserve-space")
    reserve = max(reserve_cfg if reserve_cfg is not None else RESERVE_DEFAULT_BYTES, RESERVE_SHARE * capacity)
    capacity_gib = capacity / GIB
    projection = next((p for p in ctx.snapshot.projections
                       if p.entity.kind == "node" and p.entity.id == node.id and p.metric == "used_gib"), None)
    now = ctx.window.end
    days = None
    if projection is not None:
        crossing = band_crossing(projection.band.t, projection.band.point, projection.band.low, projection.band.high,
                                 PD_LOW_SPACE_RATIO * capacity_gib, since=now)
        days = crossing.days
    if available <= reserve or used_share >= PD_LOW_SPACE_RATIO:
        severity, state = "critical", (
            "within TiKV's reserve: writes are restricted" if available <= reserve
            else f"above PD's low-space line ({format_share(PD_LOW_SPACE_RATIO)}): no new regions")
    elif days is not None and days <= CRITICAL_DAYS:
        severity, state = "critical", f"projected above PD's low-space line in {format_days(days)}"
    elif used_share >= PD_HIGH_SPACE_RATIO:
        severity, state = "warning", f"above PD's high-space line ({format_share(PD_HIGH_SPACE_RATIO)}): PD balances by space left"
    elif days is not None and days <= WARNING_DAYS:
        severity, state = "warning", f"projected above PD's low-space line in {format_days(days)}"
    else:
        return None
    used_gib = capacity_gib - available / GIB
    horizon_used = level_at(projection.band.t, projection.band.high, now + timedelta(days=SIZING_DAYS)) \
        if projection is not None else None
    sized_for = max(used_gib, horizon_used or 0.0)
    # capacity the filesystem needs so that `sized_for` is at the high-space line; the volume carries the
    # filesystem's own overhead on top (capacity / volume size today)
    ungrown = bool(disk.volume_gib) and capacity_gib * (1.0 + FS_GAP_SHARE) < (disk.volume_gib or 0.0)
    overhead = capacity_gib / disk.volume_gib if disk.volume_gib and not ungrown else 1.0
    need_volume_gib = sized_for / PD_HIGH_SPACE_RATIO / max(min(overhead, 1.0), 0.5)
    reason = (f"store {node.id}: {format_share(used_share)} of {format_quantity(capacity_gib, 'GiB')} used ({state}); sized so that "
              f"{'the space projected in 90 days' if horizon_used else 'today'} ({format_quantity(sized_for, 'GiB')}) is at "
              f"{format_share(PD_HIGH_SPACE_RATIO)}")
    option = _resize_option(ctx, node, need_volume_gib, disk.mountpoint, reason)
    entity = ctx.entity_for_node(node.id)
    notes = ["PD's space ratios are read as their defaults (0.7 / 0.8): Headroom does not read PD's config; "
             "`pd-ctl config show` shows yours"]
    if ungrown and disk.volume_gib:
        notes.insert(0, f"the data volume is already {format_quantity(disk.volume_gib, 'GiB')} in AWS but the filesystem is "
                        f"{format_quantity(capacity_gib, 'GiB')}: growing the filesystem first (see filesystem-not-grown) brings "
                        f"use to about {format_share(used_gib / disk.volume_gib)} at no cost; "
                        + _grow_steps(ctx.volume(node.data_volume_ids[0]).device, disk.mountpoint, after_modify=False))
    scale = _scale_out_note(ctx, node, sized_for / PD_HIGH_SPACE_RATIO, capacity_gib)
    if scale:
        notes.append(scale)
    if option is None:
        notes.append("no larger volume of this type is possible or priced here: add stores")
    forecasts = []
    if projection is not None:
        # a projection to each line TiKV and PD act on, read off the same stored path
        lines = [("PD low-space line", PD_LOW_SPACE_RATIO * capacity_gib, PD_SOURCE),
                 ("TiKV's reserve (writes restricted)", capacity_gib - reserve / GIB, RESERVE_SOURCE),
                 ("the disk full (the capacity TiKV reports)", capacity_gib,
                  "TiKV store heartbeat (tikv_store_size_bytes{type=\"capacity\"})")]
        for label, level, source in lines:
            cross = band_crossing(projection.band.t, projection.band.point, projection.band.low, projection.band.high,
                                  level, since=now)
            if cross.days is None and cross.days_low is None:
                continue
            forecasts.append(Forecast(
                kind="ceiling", label=label,
                within_seconds=cross.days * 86400.0 if cross.days is not None else None,
                at=now + timedelta(days=cross.days) if cross.days is not None else None,
                earliest=now + timedelta(days=cross.days_low) if cross.days_low is not None else None,
                latest=now + timedelta(days=cross.days_high) if cross.days_high is not None else None,
                value=round(level, 1), unit="GiB", method=method_words(projection.method),
                source=source))
    return Finding(
        rule=LOW_SPACE_RULE,
        severity=severity,
        entity=entity,
        title=f"{node.id}: {format_share(used_share)} of its {format_quantity(capacity_gib, 'GiB')} disk used ({state})",
        evidence=Evidence(
            window_start=ctx.window.start, window_end=ctx.window.end, step_seconds=ctx.step_seconds,
            condition=(f"used >= {format_share(PD_HIGH_SPACE_RATIO)} of capacity, or >= {format_share(PD_LOW_SPACE_RATIO)}, or available "
                       f"within the reserve, or projected >= {format_share(PD_LOW_SPACE_RATIO)} within {format_days(WARNING_DAYS)}"),
            measures=[
                Measure(label="used share of capacity", value=round(used_share, 4), unit="fraction",
                        limit=PD_LOW_SPACE_RATIO, limit_label="PD low-space ratio", statistic="last", source=PD_SOURCE),
                Measure(label="available", value=round(available / GIB, 1), unit="GiB",
                        limit=round(reserve / GIB, 1), limit_label="TiKV reserve", statistic="last",
                        source=RESERVE_SOURCE),
                Measure(label="capacity TiKV reports", value=round(capacity_gib, 1), unit="GiB", statistic="last",
                        source="TiKV store heartbeat (tikv_store_size_bytes{type=\"capacity\"})"),
                *([Measure(label="data volume size in AWS", value=disk.volume_gib, unit="GiB", statistic="inventory",
                           source=refs.EBS_VOLUME_TYPES.cite())] if disk.volume_gib else []),
                *([Measure(label="used in 90 days (upper band)", value=round(horizon_used, 1), unit="GiB",
                           statistic="p95 band", source=THRESHOLD)] if horizon_used else []),
            ],
            forecasts=forecasts,
            series=[SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_STORE_AVAILABLE_BYTES,
                              label=f"{node.id} available",
                              reference_lines=[
                                  ReferenceLine(value=(1 - PD_LOW_SPACE_RATIO) * capacity, label="PD low-space line",
                                                unit="bytes", kind="configured", source=PD_SOURCE),
                                  ReferenceLine(value=reserve, label="TiKV reserve", unit="bytes", kind="configured",
                                                source=RESERVE_SOURCE)])],
        ),
        why=WHY_LOW,
        changes=option.changes if option else [],
        options=[option] if option else [],
        impact=option.impact if option else Impact(
            summary=(f"grow the filesystem: capacity {format_quantity(capacity_gib, 'GiB')} -> about {format_quantity(disk.volume_gib, 'GiB')} at no cost"
                     if ungrown and disk.volume_gib else f"{format_quantity(capacity_gib, 'GiB')}; add stores (see notes)"),
            metric="store capacity", unit="GiB", before=round(capacity_gib, 1),
            after=disk.volume_gib if ungrown else None),
        confidence=0.9 if severity == "critical" and projection is None else 0.8,
        dedup_key=make_dedup_key(LOW_SPACE_RULE, ctx.cluster_key, entity),
        sources=[PD_SOURCE, RESERVE_SOURCE, refs.EBS_MODIFY.cite(), refs.EBS_EXTEND_FS.cite()],
        notes=notes,
    )


def _fs_not_grown(ctx: Context, node: Node) -> Finding | None:
    disk = disk_view(ctx.snapshot, node.id)
    if disk.fs_size is None or not disk.volume_gib:
        return None
    fs = _last(disk.fs_size)
    if fs is None or fs <= 0:
        return None
    volume_bytes = disk.volume_gib * GIB
    if volume_bytes <= fs * (1.0 + FS_GAP_SHARE):
        return None
    gap_gib = (volume_bytes - fs) / GIB
    vols = [ctx.volume(v) for v in node.data_volume_ids]
    unused_cost = sum(volume_limits(v.type, v.size_gib, v.iops, v.throughput_mibps, region=ctx.cluster.region)
                      .cost_breakdown.storage_usd
                      for v in vols) * gap_gib / disk.volume_gib
    entity = ctx.entity_for_node(node.id)
    return Finding(
        rule=FS_RULE,
        severity="warning",
        entity=entity,
        title=(f"{node.id}: the data volume is {format_quantity(disk.volume_gib, 'GiB')} in AWS but its filesystem "
               f"({disk.mountpoint}) is {format_quantity(fs / GIB, 'GiB')}: grow the filesystem"),
        evidence=Evidence(
            window_start=ctx.window.start, window_end=ctx.window.end, step_seconds=ctx.step_seconds,
            condition=f"volume size > filesystem size × {format_quantity(1 + FS_GAP_SHARE, '')}",
            measures=[
                Measure(label="filesystem size", value=round(fs / GIB, 1), unit="GiB", limit=disk.volume_gib,
                        limit_label="volume size in AWS", statistic="last",
                        source="node_exporter node_filesystem_size_bytes"),
                Measure(label="unused paid space", value=round(gap_gib, 1), unit="GiB", statistic="difference",
                        source=refs.headroom_threshold("disk.md", "gap > 10 %")),
            ],
            series=[SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.NODE_FS_SIZE_BYTES,
                              labels={"mountpoint": disk.mountpoint or ""}, label=f"{node.id} filesystem size",
                              reference_lines=[ReferenceLine(value=volume_bytes, label="volume size", unit="bytes",
                                                             source=refs.EBS_VOLUME_TYPES.cite())])],
        ),
        why=WHY_FS,
        impact=Impact(summary=f"+{format_quantity(gap_gib, 'GiB')} of capacity already paid for "
                              f"(~{format_quantity(unused_cost, 'USD')}/month unused)", metric="store capacity", unit="GiB",
                      before=round(fs / GIB, 1), after=round(disk.volume_gib, 1)),
        confidence=0.9,
        dedup_key=make_dedup_key(FS_RULE, ctx.cluster_key, entity),
        sources=[refs.EBS_EXTEND_FS.cite()],
        notes=[_grow_steps(vols[0].device if vols else None, disk.mountpoint, after_modify=False)],
    )


def evaluate_low_space(ctx: Context) -> list[Finding]:
    """Find stores near or past PD's space lines or TiKV's reserve, now or within 30 days."""
    return [f for n in ctx.nodes if (f := _low_space(ctx, n)) is not None]


def evaluate_fs(ctx: Context) -> list[Finding]:
    """Find data volumes larger than the filesystem on them (a resize without the filesystem step)."""
    return [f for n in ctx.nodes if (f := _fs_not_grown(ctx, n)) is not None]


RULES = (
    Rule(
        id=LOW_SPACE_RULE,
        family="disk",
        description=(
            "A store's used space is above PD's high-space (0.7) or low-space (0.8) line, within TiKV's reserve, "
            "or projected above the low-space line within 30 days; the fix grows the data volume for 90 days."
        ),
        evaluate=evaluate_low_space,
        aws_actions=("volume.size",),
        sources=(PD_SOURCE, RESERVE_SOURCE, refs.EBS_MODIFY.cite(), THRESHOLD),
    ),
    Rule(
        id=FS_RULE,
        family="disk",
        description="The data volume in AWS is more than 10 % larger than the filesystem TiKV's data is on.",
        evaluate=evaluate_fs,
        sources=(refs.EBS_EXTEND_FS.cite(),),
    ),
)

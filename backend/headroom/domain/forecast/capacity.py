"""Growth to the ceilings of a snapshot's volumes and nodes (pure): `forecast_growth` fed from a snapshot.

    volume_growth(snapshot, volume_id, *, horizon_days=60, seed=0, growth="multiplicative") -> list[CeilingForecast]
    instance_growth(snapshot, instance_id, ...) -> list[CeilingForecast]
    node_capacity_growth(snapshot, node_id, *, ceiling_share=1.0, ...) -> CeilingForecast | None
    cluster_growth(snapshot, ...) -> list[CeilingForecast]      every ceiling of every volume, instance and node
    cluster_ceilings(snapshot) -> dict[CeilingKey, Ceiling]     the same ceilings, without fitting anything
    days_on_band(start, band, ceiling) -> BandDays               days to a (new) ceiling read off a stored band

Volumes: counted IOPS (256 KiB / 1 MiB units, `headroom.domain.snapshot.views.volume_io`) against the volume's
sustained IOPS, and MiB/s against its sustained throughput, both from `headroom.domain.catalog.volume_limits`
(`baseline_iops` / `baseline_throughput_mibps`: provisioned for gp3/io1/io2, 3 IOPS/GiB for gp2 whose burst
is temporary, docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#gp2-throughput). Instances: their EBS IOPS and MiB/s (AWS/EC2 sums, else the sum of their
volumes, as the advisor reads them) against the type's baseline EBS IOPS and throughput (the limits the advisor
resolves: the catalog, else the account's DescribeInstanceTypes answer; an unknown type is not projected).
Nodes: the space PD sees used (capacity - available of TiKV's store heartbeat, `views.disk_view`) against
`ceiling_share` × the capacity TiKV reports; without those series, `tikv.store_used_bytes` against
`ceiling_share` × the size of the node's data volume(s) (a RAID 0 array adds its stripes). The forecast starts at the snapshot's window
end; nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import numpy as np

from headroom.domain import references as refs
from headroom.domain.catalog import volume_limits
from headroom.domain.catalog.resolve import DescribedType, ResolvedInstanceLimits, resolve_instance_limits
from headroom.domain.forecast.crossing import Crossing as BandDays
from headroom.domain.forecast.crossing import band_crossing
from headroom.domain.forecast.growth import HOUR, MIN_HOURS, Growth, GrowthForecast, forecast_growth
from headroom.domain.model import Ceiling
from headroom.domain.units import format_quantity, format_share
from headroom.domain.physics.ceilings import instance_ceilings, sustained, volume_ceilings
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.views import (
    IO_METRICS,
    disk_view,
    find_series,
    instance_io,
    values,
    volume,
    volume_io,
)

GIB = 1024.0**3
DEFAULT_HORIZON_DAYS = 60.0
# PD stops placing new regions on a store above this share of its capacity (PD configuration file,
# schedule.low-space-ratio, default 0.8): the disk ceiling that matters before the disk is full.
PD_LOW_SPACE_RATIO = 0.8
# Above this share PD stops ignoring space and balances the store by the space left (same page,
# schedule.high-space-ratio, default 0.7). The one place both ratios are written: rules, charts and exported
# alert rules read them from here.
PD_HIGH_SPACE_RATIO = 0.7
PD_LOW_SPACE_SOURCE = refs.PD_CONFIG.cite("schedule.low-space-ratio: 0.8 by default, no new regions above it")


def _fit(
    series: np.ndarray, *, step: int, start: datetime, horizon_days: float, ceiling: float, seed: int, growth: Growth
) -> GrowthForecast | None:
    """Forecast the series from its first to its last sample: a history that starts late (a store added last
    week inside a four-week window) is not extended backwards, which would invent flat weeks. None when fewer
    than MIN_HOURS hours hold data (too little to fit; the caller says so)."""
    arr = np.asarray(series, dtype=np.float64)
    present = np.flatnonzero(np.isfinite(arr))
    if present.size == 0:
        return None
    per_hour = max(1, int(HOUR // step))
    first = (int(present[0]) // per_hour) * per_hour  # whole hours, so the hourly resample stays on the hour
    last = int(present[-1]) + 1
    if (last - first) * step < MIN_HOURS * HOUR:
        return None
    return forecast_growth(arr[first:last], step_seconds=step, start=start + timedelta(seconds=first * step),
                           horizon_days=horizon_days, ceiling=ceiling, seed=seed, growth=growth)


@dataclass(frozen=True)
class CeilingForecast:
    """One metric of one entity projected to its ceiling: `target` is the ceiling it runs toward, as every other
    surface shows it (physics.ceilings: the sustained or provisioned one of a volume or an instance; PD's
    low-space share of a store's disk, a configured one)."""

    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str
    metric: Literal["iops", "mibps", "used_gib"]
    unit: str
    target: Ceiling
    forecast: GrowthForecast

    @property
    def ceiling(self) -> float:
        """The value of the ceiling the projection runs toward."""
        return self.target.value

    @property
    def ceiling_source(self) -> str:
        """Where that ceiling comes from (its public source)."""
        return self.target.source


CeilingKey = tuple[str, str, str]  # (entity_kind, entity_id, metric), as CeilingForecast names them


def _volume_ceilings(snapshot: Snapshot, volume_id: str) -> dict[str, Ceiling]:
    """A volume's sustained IOPS and MiB/s ceilings (physics.ceilings.sustained: what a projection runs into), ids
    prefixed by the volume's role as on its charts."""
    vol = volume(snapshot, volume_id)
    ceilings = volume_ceilings(volume_limits(vol.type, vol.size_gib, vol.iops, vol.throughput_mibps), vol.role)
    return {"iops": sustained(ceilings["iops"]), "mibps": sustained(ceilings["throughput"])}


def _instance_limits(snapshot: Snapshot, instance_id: str) -> ResolvedInstanceLimits:
    """An instance type's EBS limits as the advisor resolves them (the catalog, else DescribeInstanceTypes)."""
    inst = next(i for i in snapshot.instances if i.id == instance_id)
    described = (
        DescribedType(inst.ebs_limits.model_dump(exclude={"source"}), inst.ebs_limits.source)
        if inst.ebs_limits is not None
        else None
    )
    return resolve_instance_limits(inst.type, described)


def _node_disk_gib(snapshot: Snapshot, node_id: str) -> float | None:
    """The size of a node's data volume(s) (a RAID 0 array adds its stripes); None without a data volume."""
    node = next(n for n in snapshot.nodes if n.id == node_id)
    if not node.data_volume_ids:
        return None
    return sum(volume(snapshot, vid).size_gib for vid in node.data_volume_ids)


def volume_growth(
    snapshot: Snapshot,
    volume_id: str,
    *,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    seed: int = 0,
    growth: Growth = "multiplicative",
) -> list[CeilingForecast]:
    """Project a volume's counted IOPS and MiB/s to its sustained IOPS and throughput ceilings."""
    ceilings = _volume_ceilings(snapshot, volume_id)
    io = volume_io(snapshot, volume_id)
    step = snapshot.window.step_seconds
    out = []
    for metric, unit, series in (("iops", "IOPS", io.counted_iops), ("mibps", "MiB/s", io.mibps)):
        ceiling = ceilings[metric]
        fc = _fit(series, step=step, start=snapshot.window.start, horizon_days=horizon_days, ceiling=ceiling.value,
                  seed=seed, growth=growth)
        if fc is not None:
            out.append(CeilingForecast("volume", volume_id, metric, unit, ceiling, fc))  # type: ignore[arg-type]
    return out


def _disk_ceiling(share: float, value: float, source: str) -> Ceiling:
    """A store's disk ceiling: the whole disk (sustained), or a share of it a setting chose (configured)."""
    return Ceiling(id="disk_used_gib", label=f"{format_share(share)} of the disk", value=value, unit="GiB",
                   kind="sustained" if share >= 1.0 else "configured", source=source)


def node_capacity_growth(
    snapshot: Snapshot,
    node_id: str,
    *,
    ceiling_share: float = 1.0,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    seed: int = 0,
    growth: Growth = "multiplicative",
) -> CeilingForecast | None:
    """Project a node's used bytes to `ceiling_share` of its data volume(s); None without the series."""
    if not 0 < ceiling_share <= 1:
        raise ValueError("ceiling_share must be in (0, 1]")
    node = next((n for n in snapshot.nodes if n.id == node_id), None)
    if node is None:
        raise KeyError(node_id)
    disk = disk_view(snapshot, node_id)
    if disk.has_store_stats:
        # What PD acts on: capacity - available of the store heartbeat, against a share of the capacity.
        capacity_gib = float(disk.capacity[np.isfinite(disk.capacity)][-1]) / GIB
        used = (disk.capacity - disk.available) / GIB
        fc = _fit(used, step=snapshot.window.step_seconds, start=snapshot.window.start, horizon_days=horizon_days,
                  ceiling=ceiling_share * capacity_gib, seed=seed, growth=growth)
        if fc is None:
            return None
        source = f"{format_share(ceiling_share)} of the capacity TiKV reports, {format_quantity(capacity_gib, 'GiB')}"
        return CeilingForecast("node", node_id, "used_gib", "GiB",
                               _disk_ceiling(ceiling_share, ceiling_share * capacity_gib, source), fc)
    series = find_series(snapshot, "node", node_id, mid.TIKV_STORE_USED_BYTES)
    size_gib = _node_disk_gib(snapshot, node_id)
    if series is None or size_gib is None:
        return None
    ceiling = ceiling_share * size_gib
    fc = _fit(values(series) / GIB, step=series.step_seconds, start=series.start, horizon_days=horizon_days,
              ceiling=ceiling, seed=seed, growth=growth)
    if fc is None:
        return None
    source = f"{format_share(ceiling_share)} of the data volume(s), {format_quantity(size_gib, 'GiB')}"
    return CeilingForecast("node", node_id, "used_gib", "GiB", _disk_ceiling(ceiling_share, ceiling, source), fc)


def instance_growth(
    snapshot: Snapshot,
    instance_id: str,
    *,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    seed: int = 0,
    growth: Growth = "multiplicative",
) -> list[CeilingForecast]:
    """Project an instance's EBS IOPS and MiB/s to its type's baseline EBS IOPS and throughput."""
    inst = next((i for i in snapshot.instances if i.id == instance_id), None)
    if inst is None:
        raise KeyError(instance_id)
    resolved = _instance_limits(snapshot, instance_id)
    if resolved.limits is None:
        return []
    if find_series(snapshot, "instance", instance_id, IO_METRICS["instance"][0]) is not None:
        view = instance_io(snapshot, instance_id)
        iops, mibps = view.counted_iops, view.mibps
    else:
        views = [volume_io(snapshot, v.id) for v in snapshot.volumes if v.instance_id == instance_id
                 and find_series(snapshot, "volume", v.id, IO_METRICS["volume"][0]) is not None]
        if not views:
            return []
        iops = np.sum([v.counted_iops for v in views], axis=0)
        mibps = np.sum([v.mibps for v in views], axis=0)
    out = []
    ceilings = instance_ceilings(resolved)
    for metric, unit, series, ceiling in (
        ("iops", "IOPS", iops, sustained(ceilings["iops"])),
        ("mibps", "MiB/s", mibps, sustained(ceilings["throughput"])),
    ):
        fc = _fit(series, step=snapshot.window.step_seconds, start=snapshot.window.start,
                  horizon_days=horizon_days, ceiling=ceiling.value, seed=seed, growth=growth)
        if fc is None:
            continue
        out.append(CeilingForecast("instance", instance_id, metric, unit, ceiling, fc))  # type: ignore[arg-type]
    return out


def cluster_growth(
    snapshot: Snapshot,
    *,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    seed: int = 0,
    growth: Growth = "multiplicative",
) -> list[CeilingForecast]:
    """Every ceiling of the snapshot projected: each volume's IOPS and throughput, each instance's EBS IOPS and
    bandwidth, and each node's used space against PD's low-space ratio of its data volume(s)."""
    out: list[CeilingForecast] = []
    for vol in snapshot.volumes:
        if find_series(snapshot, "volume", vol.id, IO_METRICS["volume"][0]) is not None:
            out += volume_growth(snapshot, vol.id, horizon_days=horizon_days, seed=seed, growth=growth)
    for inst in snapshot.instances:
        out += instance_growth(snapshot, inst.id, horizon_days=horizon_days, seed=seed, growth=growth)
    for node in snapshot.nodes:
        used = node_capacity_growth(snapshot, node.id, ceiling_share=PD_LOW_SPACE_RATIO,
                                    horizon_days=horizon_days, seed=seed, growth=growth)
        if used is not None:
            out.append(CeilingForecast(used.entity_kind, used.entity_id, used.metric, used.unit,
                                       _pd_low_space(used.target), used.forecast))
    return out


def _pd_low_space(disk: Ceiling) -> Ceiling:
    """A store's disk ceiling at PD's low-space ratio: configured, with the setting as its source."""
    return disk.model_copy(update={"id": "pd_low_space", "label": "PD low-space ratio of the disk",
                                   "kind": "configured", "source": f"{disk.source}: {PD_LOW_SPACE_SOURCE}"})


def cluster_ceilings(snapshot: Snapshot, *, disk_share: float = PD_LOW_SPACE_RATIO) -> dict[CeilingKey, Ceiling]:
    """Every ceiling `cluster_growth` projects against, keyed as its forecasts are, without fitting anything (the
    what-if compares them before and after a change)."""
    out: dict[CeilingKey, Ceiling] = {}
    for vol in snapshot.volumes:
        for metric, ceiling in _volume_ceilings(snapshot, vol.id).items():
            out[("volume", vol.id, metric)] = ceiling
    for inst in snapshot.instances:
        ceilings = instance_ceilings(_instance_limits(snapshot, inst.id))
        if ceilings["iops"]:
            out[("instance", inst.id, "iops")] = sustained(ceilings["iops"])
            out[("instance", inst.id, "mibps")] = sustained(ceilings["throughput"])
    for node in snapshot.nodes:
        disk = disk_view(snapshot, node.id)
        if disk.has_store_stats:  # as node_capacity_growth: a share of the capacity TiKV reports
            capacity_gib = float(disk.capacity[np.isfinite(disk.capacity)][-1]) / GIB
            source = f"{format_share(disk_share)} of the capacity TiKV reports, {format_quantity(capacity_gib, 'GiB')}"
            out[("node", node.id, "used_gib")] = _pd_low_space(_disk_ceiling(disk_share, disk_share * capacity_gib,
                                                                              source))
            continue
        size_gib = _node_disk_gib(snapshot, node.id)
        if size_gib is not None:
            source = f"{format_share(disk_share)} of the data volume(s), {format_quantity(size_gib, 'GiB')}"
            out[("node", node.id, "used_gib")] = _pd_low_space(_disk_ceiling(disk_share, disk_share * size_gib, source))
    return out


def days_on_band(
    start: datetime,
    t: Sequence[datetime],
    point: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    ceiling: float,
) -> BandDays:
    """Read the days until `ceiling` off a stored forecast band (no refit; `headroom.domain.forecast.crossing`,
    the one reading of a path). `start` is the end of the history the band was fitted on."""
    return band_crossing(t, point, low, high, ceiling, since=start)

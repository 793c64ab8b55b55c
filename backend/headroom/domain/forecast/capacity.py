"""Growth to the ceilings of a snapshot's volumes and nodes (pure): `forecast_growth` fed from a snapshot.

    volume_growth(snapshot, volume_id, *, horizon_days=60, seed=0, growth="multiplicative") -> list[CeilingForecast]
    node_capacity_growth(snapshot, node_id, *, ceiling_share=1.0, ...) -> CeilingForecast | None

Volumes: counted IOPS (256 KiB / 1 MiB units, `headroom.domain.snapshot.views.volume_io`) against the volume's
sustained IOPS, and MiB/s against its sustained throughput, both from `headroom.domain.catalog.volume_limits`
(`baseline_iops` / `baseline_throughput_mibps`: provisioned for gp3/io1/io2, 3 IOPS/GiB for gp2 whose burst
is temporary, domain.md §1.1/§1.3). Nodes: `tikv.store_used_bytes` in GiB against `ceiling_share` × the size
of the node's data volume(s) (a RAID 0 array adds its stripes). The forecast starts at the snapshot's window
end; nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from headroom.domain import references as refs
from headroom.domain.catalog import volume_limits
from headroom.domain.forecast.growth import Growth, GrowthForecast, forecast_growth
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.views import find_series, values, volume, volume_io

GIB = 1024.0**3
DEFAULT_HORIZON_DAYS = 60.0


@dataclass(frozen=True)
class CeilingForecast:
    """One metric of one entity projected to its ceiling."""

    entity_kind: Literal["volume", "node"]
    entity_id: str
    metric: Literal["iops", "mibps", "used_gib"]
    unit: str
    ceiling: float
    ceiling_source: str
    forecast: GrowthForecast


def volume_growth(
    snapshot: Snapshot,
    volume_id: str,
    *,
    horizon_days: float = DEFAULT_HORIZON_DAYS,
    seed: int = 0,
    growth: Growth = "multiplicative",
) -> list[CeilingForecast]:
    """Project a volume's counted IOPS and MiB/s to its sustained IOPS and throughput ceilings."""
    vol = volume(snapshot, volume_id)
    limits = volume_limits(vol.type, vol.size_gib, vol.iops, vol.throughput_mibps)
    io = volume_io(snapshot, volume_id)
    step = snapshot.window.step_seconds
    source = refs.EBS_VOLUME_TYPES.cite(f"{vol.type} {vol.size_gib:g} GiB: sustained (baseline) limit")
    out = []
    for metric, unit, series, ceiling in (
        ("iops", "IOPS", io.counted_iops, limits.baseline_iops),
        ("mibps", "MiB/s", io.mibps, limits.baseline_throughput_mibps),
    ):
        fc = forecast_growth(
            series,
            step_seconds=step,
            start=snapshot.window.start,
            horizon_days=horizon_days,
            ceiling=ceiling,
            seed=seed,
            growth=growth,
        )
        out.append(CeilingForecast("volume", volume_id, metric, unit, ceiling, source, fc))  # type: ignore[arg-type]
    return out


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
    series = find_series(snapshot, "node", node_id, "tikv.store_used_bytes")
    if series is None or not node.data_volume_ids:
        return None
    size_gib = sum(volume(snapshot, vid).size_gib for vid in node.data_volume_ids)
    ceiling = ceiling_share * size_gib
    fc = forecast_growth(
        values(series) / GIB,
        step_seconds=series.step_seconds,
        start=series.start,
        horizon_days=horizon_days,
        ceiling=ceiling,
        seed=seed,
        growth=growth,
    )
    source = f"{ceiling_share:.0%} of the data volume(s), {size_gib:g} GiB"
    return CeilingForecast("node", node_id, "used_gib", "GiB", ceiling, source, fc)

"""Metrics and forecasts for the UI: a node's panels (series, the ceilings in force, burst forecasts) and a
cluster overview (per node: peak use of its IOPS / throughput ceilings, burst time left).

Shape: pure helpers first (column arithmetic, ceiling segments, utilisation), then the shell that reads the
store. The time-series repository (headroom.timeseries.repository) does every read: it chooses the resolution (raw
1-minute points up to 6 h, else rollups with their newest 2 h rebuilt from raw) and returns columns; the limits
behind the ceilings come from the one resolver (headroom.inventory.limits). Callers commit nothing.

Units: CloudWatch series are sums per step (`IOPS = Sum / period`, docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics); IOPS against a volume
limit are counted in 256 KiB units (SSD) or 1 MiB (HDD) (docs/reference/ebs-io-accounting.md#io-size-cap), assuming every I/O of a bucket has the
bucket's average size. Every derived series (counted IOPS, MiB/s, latency, hit ratio) comes from
`headroom.domain.derived`, the same functions the advisor uses.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import ConfigDict, TypeAdapter
from sqlalchemy import func, literal, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal
from headroom.clusters.models import Cluster
from headroom.clusters.service import get_cluster
from headroom.domain import derived, downsample, references
from headroom.domain.catalog.instance_types import InstanceLimits
from headroom.domain.advisor.buckets import instance_burst_forecast, volume_burst_forecast
from headroom.domain.advisor.context import Context
from headroom.domain.forecast.burst import MIN_HORIZON_SECONDS, BalancePath, BurstForecast
from headroom.domain.forecast.capacity import PD_HIGH_SPACE_RATIO, PD_LOW_SPACE_RATIO
from headroom.domain.model import Ceiling, Series, SeriesEntityKind, Statistic
from headroom.domain.physics.ceilings import in_force
from headroom.domain.physics.io import SSD_CHUNK_KIB
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.labels import metric_scale, shown_scale
from headroom.domain.snapshot.views import IO_METRICS
from headroom.inventory.limits import ceilings_over_time_many, resolve_instance_types
from headroom.inventory.models import Instance, TikvNode, Volume
from headroom.metrics.models import StoredBurstForecasts, StoredOverviewPeaks
from headroom.platform.errors import InvalidInput, NotFound
from headroom.projections import service as projections_service
from headroom.timeseries import repository as timeseries
from headroom.timeseries.columns import combine, drop_empty, held_at, point_step, scaled
from headroom.timeseries.repository import Columns, empty_columns
from headroom.timeseries.repository import StoredSeries as SeriesInfo
from headroom.timeseries.repository import (
    choose_resolution as choose_resolution,  # the router asks the service
)
from headroom.timeseries.snapshots import build_snapshot

Array = NDArray[np.float64]
# A CloudWatch byte count per period, over the period's seconds, drawn in MiB/s (labels.STORED_TO_SHOWN).
BYTES_PER_S_TO_MIBPS = shown_scale("bytes/s", "MiB/s")

# --- window -------------------------------------------------------------------------------------------------

# The longest window served: the default rollup retention (settings.rollup_retention_days = 400).
MAX_WINDOW = dt.timedelta(days=400)
# The default window when the caller gives no start: the shortest range the page offers.
DEFAULT_WINDOW = dt.timedelta(hours=6)


def validate_window(
    start: dt.datetime | None, end: dt.datetime | None, now: dt.datetime
) -> tuple[dt.datetime, dt.datetime]:
    """Default and check a [start, end) window; a bad one is a 422 naming the field."""
    for name, value in (("start", start), ("end", end)):
        if value is not None and value.tzinfo is None:
            raise InvalidInput(f"{name} must carry a time zone (e.g. 2026-11-02T12:00:00Z).",
                               details=[{"field": name, "message": "timezone required"}])
    end = (end or now).astimezone(dt.UTC)
    start = (start or end - DEFAULT_WINDOW).astimezone(dt.UTC)
    if start >= end:
        raise InvalidInput("start must be before end.", details=[{"field": "start", "message": "must be before end"}])
    if end - start > MAX_WINDOW:
        raise InvalidInput(f"The window may span at most {MAX_WINDOW.days} days.",
                           details=[{"field": "start", "message": "window too long"}])
    return start, end


# --- ceilings ----------------------------------------------------------------------------------------------


def ceiling_at(segments: Sequence[Ceiling], epoch_seconds: NDArray[np.int64]) -> Array:
    """The value of one ceiling (pieces of one id, or of one kind) at each timestamp; NaN outside every piece."""
    out = np.full(epoch_seconds.size, np.nan)
    for seg in segments:
        lo = seg.valid_from.timestamp() if seg.valid_from else -math.inf
        hi = seg.valid_to.timestamp() if seg.valid_to else math.inf
        out[(epoch_seconds >= lo) & (epoch_seconds < hi)] = seg.value
    return out


def ceiling_in_force(segments: Sequence[Ceiling], balance: Array | None, t: NDArray[np.int64]) -> Array:
    """The ceiling in force at each timestamp (physics.ceilings.in_force, the advisor's rule): the burst ceiling
    while the balance has credits, else the sustained or provisioned one; NaN where no ceiling is known."""
    burst = [c for c in segments if c.kind == "burst"]
    steady = [c for c in segments if c.kind != "burst"]
    return in_force(ceiling_at(burst, t) if burst else None, ceiling_at(steady, t), balance, t.size)


@dataclass(frozen=True)
class Peak:
    percent: float
    at: dt.datetime
    value: float
    ceiling: float
    index: int  # the point's position in the series (where the ceiling in force then is looked up)


def peak_utilisation(values: Columns, in_force_now: Array) -> Peak | None:
    """Highest value / the ceiling in force at that time over the window, or None."""
    if not len(values) or not np.isfinite(in_force_now).any():
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where((in_force_now > 0) & np.isfinite(values.avg), values.avg / in_force_now, np.nan)
    if not np.isfinite(ratio).any():
        return None
    i = int(np.nanargmax(ratio))
    return Peak(float(ratio[i] * 100.0), dt.datetime.fromtimestamp(int(values.t[i]), dt.UTC),
                float(values.avg[i]), float(in_force_now[i]), i)


# TiKV config template [storage.flow-control]: soft-pending-compaction-bytes-limit = "192GB",
# hard-pending-compaction-bytes-limit = "1024GB" (the defaults; the advisor's compaction rule cites the same).
PENDING_SOFT_GIB = 192.0
PENDING_HARD_GIB = 1024.0
PENDING_SOURCE = references.TIKV_CONFIG_TEMPLATE.cite("[storage.flow-control] defaults; your tikv.toml may differ")


# --- panels ------------------------------------------------------------------------------------------------

PanelId = Literal[
    "data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops", "instance_throughput",
    "burst_balance", "queue_length", "latency", "block_cache_hit_ratio", "thread_cpu", "compaction_pending",
    "write_stall", "disk_space",
]
PANEL_IDS: tuple[PanelId, ...] = (
    "data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops", "instance_throughput",
    "burst_balance", "queue_length", "latency", "block_cache_hit_ratio", "thread_cpu", "compaction_pending",
    "write_stall", "disk_space",
)
PANEL_TITLES: dict[PanelId, tuple[str, str]] = {
    "data_iops": ("Data volume IOPS", "IOPS"),
    "data_throughput": ("Data volume throughput", "MiB/s"),
    "raft_iops": ("Raft volume IOPS", "IOPS"),
    "raft_throughput": ("Raft volume throughput", "MiB/s"),
    "instance_iops": ("Instance EBS IOPS (all volumes)", "IOPS"),
    "instance_throughput": ("Instance EBS throughput (all volumes)", "MiB/s"),
    "burst_balance": ("Burst balances", "%"),
    "queue_length": ("Volume queue length", "requests"),
    "latency": ("Volume latency (average per I/O)", "ms"),
    "block_cache_hit_ratio": ("TiKV block-cache hit ratio", "%"),
    "thread_cpu": ("TiKV thread-pool CPU", "cores"),
    "compaction_pending": ("RocksDB pending compaction", "GiB"),
    "write_stall": ("RocksDB write stall (longest)", "ms"),
    "disk_space": ("Store disk space", "GiB"),
}
THREAD_POOLS = ("scheduler", "apply", "raftstore", "store_writer", "unified_read_pool", "grpc", "rocksdb")

Key = tuple[str, str, str]  # (entity_kind, entity_id, metric)


@dataclass(frozen=True)
class VolumeRef:
    volume_id: str
    volume_type: str
    size_gib: int
    role: str


@dataclass(frozen=True)
class NodeRefs:
    """The entities behind one TiKV node's series."""

    node: TikvNode
    instance_id: str | None
    instance_type: str | None
    data: VolumeRef | None
    raft: VolumeRef | None  # None when the raft log shares the data volume
    instance_limits: InstanceLimits | None = None  # the type's resolved EBS limits (inventory.limits)

    @property
    def node_key(self) -> tuple[str, str]:
        return ("tikv_node", self.node.store_address)

    @property
    def id(self) -> uuid.UUID:
        return self.node.id

    @property
    def store_address(self) -> str:
        return self.node.store_address

    @property
    def data_volume(self) -> VolumeRef | None:
        return self.data

    @property
    def raft_volume(self) -> VolumeRef | None:
        return self.raft

    def store_entity(self) -> Entity:
        """The TiKV store itself, named by its address."""
        return Entity("node", self.node.store_address, self.node.store_address)

    def volume_entity(self, vol: VolumeRef) -> Entity:
        """A volume of this store, named with the store it serves (as a finding's evidence names it)."""
        return Entity("volume", vol.volume_id, f"{self.node.store_address} {vol.volume_id}")

    def instance_entity(self, instance_id: str) -> Entity:
        """The store's instance (other stores may share it: named by its id alone)."""
        return Entity("instance", instance_id, instance_id)


@dataclass(frozen=True)
class Entity:
    """What a series is of: the domain Series' entity_kind, entity_id and entity_name."""

    kind: SeriesEntityKind
    id: str
    name: str


@dataclass
class SeriesOut:
    """A series at full resolution (every bucket's avg, max and min), before it is drawn (draw_series)."""

    id: str
    label: str
    unit: str
    columns: Columns
    entity: Entity


@dataclass(frozen=True)
class ForecastPath:
    """A burst forecast's projected balance to chart: epoch seconds, % at the point demand and the band's edges."""

    t: list[int]
    percent: list[float]
    lower: list[float]  # at the band's high demand
    upper: list[float]  # at the band's low demand


@dataclass
class ForecastOut:
    """A burst forecast of one bucket of a node, with what the API reads of it under the API's names."""

    id: str
    label: str
    entity_kind: str
    entity_id: str
    forecast: BurstForecast

    @property
    def bucket(self) -> str:
        return self.forecast.kind

    def __getattr__(self, name: str) -> Any:
        """The forecast's own fields (now, balance_percent, seconds_to_empty, ...), as the API reads them."""
        if name == "forecast":  # not set yet (copy / unpickle): no recursion
            raise AttributeError(name)
        return getattr(self.forecast, name)

    @property
    def path(self) -> ForecastPath:
        p = self.forecast.path
        return ForecastPath([int(t.timestamp()) for t in p.timestamps], list(p.percent),
                            list(p.percent_high_demand), list(p.percent_low_demand))


@dataclass(frozen=True)
class ProjectionOut:
    """A panel's growth projection (the projections job's stored fit), its path cut where it has crossed."""

    ceiling: float
    ceiling_source: str
    target: Ceiling | None  # the ceiling itself (None: a projection fitted before it was stored)
    unit: str
    method: str
    history_hours: int
    fitted_at: dt.datetime
    days: float | None
    days_low: float | None
    days_high: float | None
    hits_at: dt.datetime | None
    horizon_days: float
    t: list[int]  # epoch seconds (UTC)
    point: list[float]
    low: list[float]
    high: list[float]


@dataclass
class PanelOut:
    id: PanelId
    title: str
    unit: str
    computed: list[SeriesOut] = field(default_factory=list)  # at full resolution: what utilisation is judged on
    ceilings: list[Ceiling] = field(default_factory=list)
    forecasts: list[ForecastOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    projection: ProjectionOut | None = None
    series: list[Series] = field(default_factory=list)  # as the chart draws them (draw_series)
    # An IOPS / MiB/s panel's utilisation series and the ceiling in force at each of its points (InForce), computed
    # once for the "Ceiling in force" line and the glance's cell.
    in_force: InForce | None = None


# --- what a chart draws ------------------------------------------------------------------------------------

# Which aggregate of a 5-minute / hourly bucket a panel draws: the longest write stall and the lowest balance are
# what an operator looks for; everything else the bucket average. A raw 1-minute point is one sample (all equal).
ROLLUP_STATISTIC: dict[str, Statistic] = {"write_stall": "max", "burst_balance": "min"}
# The point budget per series (docs/metrics-downsampling.md): the page asks for its charts' width; without one a
# chart ~1,200 px wide at one point per 4 px; never fewer than 4 M4 spans, never more than a 4K screen's 3,840 px
# at ~2 px a point.
DEFAULT_POINTS = 300
MIN_POINTS = 16
MAX_POINTS = 2000
# Six significant digits: a chart resolves ~1 part in 1,000 of its height; 6 keep 1 in a million (and the
# advisor's numbers are computed on the stored values, not on these).
SIGNIFICANT_DIGITS = 6


def draw_series(s: SeriesOut, panel: str, resolution: int, points: int,
                window: tuple[dt.datetime, dt.datetime]) -> Series:
    """The panel's statistic of a series (the average where a bucket has none, e.g. a derived series), cut to at
    most `points` with M4 over the window; `step_seconds` grows to the M4 span when the series was cut, so a
    chart breaks its line only at a gap longer than a span."""
    c = s.columns
    statistic: Statistic = ROLLUP_STATISTIC.get(panel, "avg") if resolution > 60 else "avg"
    column = {"avg": c.avg, "max": c.max, "min": c.min}[statistic]
    values = np.where(np.isfinite(column), column, c.avg)
    lo, hi = (int(w.timestamp()) for w in window)
    keep = downsample.m4_indices(c.t, values, points, start=lo, end=hi)
    step = point_step(c, resolution)
    span = downsample.span_seconds(lo, hi, points) if keep.size < c.t.size else None
    return Series(id=s.id, label=s.label, unit=s.unit, entity_kind=s.entity.kind, entity_id=s.entity.id,
                  entity_name=s.entity.name, statistic=statistic, step_seconds=max(step, span or 0),
                  span_seconds=span, t=[int(x) for x in c.t[keep].tolist()], values=chart_floats(values[keep]))


def chart_floats(values: Array) -> list[float | None]:
    """JSON-ready floats for a chart: SIGNIFICANT_DIGITS significant digits; NaN/inf become None."""
    return [float(f"{x:.{SIGNIFICANT_DIGITS}g}") if math.isfinite(x) else None for x in values.tolist()]


# Which stored projection a panel draws: (entity kind, which id, metric).
PANEL_PROJECTION: dict[str, tuple[str, str, str]] = {
    "data_iops": ("volume", "data", "iops"), "data_throughput": ("volume", "data", "mibps"),
    "instance_iops": ("instance", "instance", "iops"), "instance_throughput": ("instance", "instance", "mibps"),
    "disk_space": ("node", "node", "used_gib"),
}
PROJECTION_TAIL = dt.timedelta(days=7)  # the path is drawn a week past the latest crossing, then cut


def projection_key(pid: str, refs: NodeRefs) -> tuple[str, str, str] | None:
    """The stored projection behind a panel of this node (None: the panel has none)."""
    spec = PANEL_PROJECTION.get(pid)
    if spec is None:
        return None
    kind, which, metric = spec
    eid = (refs.data.volume_id if refs.data else None) if which == "data" else (
        refs.instance_id if which == "instance" else refs.node.store_address)
    return (kind, eid, metric) if eid else None


def projection_out(row: Any) -> ProjectionOut:
    """A stored projection for a chart: the path up to a week past its latest crossing (else the horizon)."""
    band = row.band
    t = [dt.datetime.fromisoformat(x) for x in band["t"]]
    last = row.days_high if row.days_high is not None else row.days
    keep = len(t)
    if last is not None:
        cut = row.history_end + dt.timedelta(days=last) + PROJECTION_TAIL
        keep = max(1, sum(1 for x in t if x <= cut))
    return ProjectionOut(
        ceiling=row.ceiling, ceiling_source=row.ceiling_source, target=row.target, unit=row.unit, method=row.method,
        history_hours=row.history_hours, fitted_at=row.fitted_at, days=row.days, days_low=row.days_low,
        days_high=row.days_high, hits_at=row.hits_at, horizon_days=row.horizon_days, t=[int(x.timestamp()) for x in t[:keep]],
        point=band["point"][:keep], low=band["low"][:keep], high=band["high"][:keep])


def _volume_keys(v: VolumeRef) -> list[Key]:
    names = (mid.EBS_READ_OPS, mid.EBS_WRITE_OPS, mid.EBS_READ_BYTES, mid.EBS_WRITE_BYTES, mid.EBS_TOTAL_READ_TIME,
             mid.EBS_TOTAL_WRITE_TIME, mid.EBS_QUEUE_LENGTH, mid.EBS_BURST_BALANCE)
    return [("volume", v.volume_id, n) for n in names]


def _instance_keys(instance_id: str) -> list[Key]:
    names = (mid.EC2_EBS_READ_OPS, mid.EC2_EBS_WRITE_OPS, mid.EC2_EBS_READ_BYTES, mid.EC2_EBS_WRITE_BYTES,
             mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE)
    return [("instance", instance_id, n) for n in names]


def _node_keys(address: str) -> list[Key]:
    names = [mid.TIKV_BLOCK_CACHE_HIT, mid.TIKV_BLOCK_CACHE_MISS, mid.TIKV_PENDING_COMPACTION_BYTES, mid.TIKV_WRITE_STALL,
             mid.TIKV_STORE_USED_BYTES, mid.TIKV_STORE_CAPACITY_BYTES, mid.TIKV_STORE_AVAILABLE_BYTES,
             *(f"tikv.thread_cpu.{p}" for p in THREAD_POOLS)]
    return [("tikv_node", address, n) for n in names]


def keys_for(refs: NodeRefs) -> list[Key]:
    keys = _node_keys(refs.node.store_address)
    for v in (refs.data, refs.raft):
        if v is not None:
            keys += _volume_keys(v)
    if refs.instance_id:
        keys += _instance_keys(refs.instance_id)
    return keys


class Data:
    """The series of a request, read once: lookups by (kind, entity, metric)."""

    def __init__(self, info: dict[Key, SeriesInfo], cols: dict[int, Columns], *, exact_extremes: bool,
                 window: tuple[dt.datetime, dt.datetime], resolution: int = 60) -> None:
        self.info = info
        self.cols = cols
        self.exact_extremes = exact_extremes
        self.window = window
        self.resolution = resolution

    def in_force(self, segments: Sequence[Ceiling], key: Key | None, t: NDArray[np.int64]) -> Array:
        """The ceiling in force at each timestamp, decided by the credit balance `key` (ceiling_in_force)."""
        balance = None
        if key is not None and self.has(key):
            statistic: Statistic = "avg" if self.resolution == 60 else "min"
            balance = held_at(self.get(key), statistic, t, max(self.step(key), self.resolution))
        return ceiling_in_force(segments, balance, t)

    def has(self, key: Key) -> bool:
        return key in self.info and len(self.cols.get(self.info[key].id, empty_columns())) > 0

    def get(self, key: Key) -> Columns:
        si = self.info.get(key)
        return self.cols.get(si.id, empty_columns()) if si else empty_columns()

    def step(self, key: Key) -> int:
        si = self.info.get(key)
        return si.step_seconds if si else 60

    def rate(self, key: Key, factor: float = 1.0) -> Columns:
        """A CloudWatch Sum per step as a per-second rate (× factor), exact for avg/max/min."""
        return scaled(self.get(key), factor / self.step(key))

    def combine(self, keys: Sequence[Key], fn: Callable[..., Array]) -> Columns:
        return drop_empty(combine([self.get(k) for k in keys], fn, exact_extremes=self.exact_extremes))


def _io_series(data: Data, entity: Entity, chunk_kib: int, prefix: str) -> tuple[list[SeriesOut], list[SeriesOut]]:
    """IOPS (read, write, counted total) and MiB/s (read, write, total) of a volume or an instance."""
    kind, eid = entity.kind, entity.id
    p = "ebs" if kind == "volume" else "ec2.ebs"
    k = {n: (kind, eid, f"{p}.{n}" if kind == "volume" else f"{p}_{n}")
         for n in ("read_ops", "write_ops", "read_bytes", "write_bytes")}
    step = float(data.step(k["read_ops"]))
    iops: list[SeriesOut] = []
    tput: list[SeriesOut] = []
    if data.has(k["read_ops"]) or data.has(k["write_ops"]):
        iops.append(SeriesOut(f"{prefix}_read_iops", "Read IOPS", "IOPS", drop_empty(data.rate(k["read_ops"])), entity))
        iops.append(SeriesOut(f"{prefix}_write_iops", "Write IOPS", "IOPS", drop_empty(data.rate(k["write_ops"])), entity))
        total = data.combine(
            [k["read_ops"], k["write_ops"], k["read_bytes"], k["write_bytes"]],
            lambda ro, wo, rb, wb: derived.counted_iops(ro, wo, rb, wb, chunk_kib, step),
        )
        iops.append(SeriesOut(f"{prefix}_counted_iops", f"Total IOPS ({chunk_kib} KiB units)", "IOPS", total, entity))
    if data.has(k["read_bytes"]) or data.has(k["write_bytes"]):
        tput.append(SeriesOut(f"{prefix}_read_mibps", "Read", "MiB/s", drop_empty(data.rate(k["read_bytes"], BYTES_PER_S_TO_MIBPS)), entity))
        tput.append(SeriesOut(f"{prefix}_write_mibps", "Write", "MiB/s",
                              drop_empty(data.rate(k["write_bytes"], BYTES_PER_S_TO_MIBPS)), entity))
        tput.append(SeriesOut(f"{prefix}_total_mibps", "Total", "MiB/s",
                              data.combine([k["read_bytes"], k["write_bytes"]],
                                           lambda r, w: derived.mib_per_second(r + w, step)), entity))
    return iops, tput


def build_panels(
    refs: NodeRefs,
    data: Data,
    ceilings: dict[str, list[Ceiling]],
    forecasts: list[ForecastOut],
    wanted: Sequence[PanelId],
) -> list[PanelOut]:
    """Assemble the requested panels of one node from its series (pure: data in, panels out)."""
    panels: dict[PanelId, PanelOut] = {
        pid: PanelOut(pid, PANEL_TITLES[pid][0], PANEL_TITLES[pid][1]) for pid in PANEL_IDS if pid in wanted
    }
    addr = refs.node.store_address
    for role, vol in (("data", refs.data), ("raft", refs.raft)):
        iops_p = panels.get(f"{role}_iops")  # type: ignore[call-overload]
        tput_p = panels.get(f"{role}_throughput")  # type: ignore[call-overload]
        if vol is None:
            for p in (iops_p, tput_p):
                if p is not None:
                    p.notes.append("The Raft log shares the data volume." if role == "raft"
                                   else "No data volume is mapped to this node.")
            continue
        iops, tput = _io_series(data, refs.volume_entity(vol), derived.io_chunk_kib(vol.volume_type), role)
        if iops_p is not None:
            iops_p.title += f" ({vol.volume_id}, {vol.volume_type} {vol.size_gib} GiB)"
            iops_p.computed, iops_p.ceilings = iops, ceilings.get(f"{role}_iops", [])
            if role == "data" and refs.raft is None:
                iops_p.notes.append("The Raft log shares this volume.")
        if tput_p is not None:
            tput_p.title += f" ({vol.volume_id})"
            tput_p.computed, tput_p.ceilings = tput, ceilings.get(f"{role}_throughput", [])
    if refs.instance_id:
        iops, tput = _io_series(data, refs.instance_entity(refs.instance_id), SSD_CHUNK_KIB, "instance")
        for pid, series in (("instance_iops", iops), ("instance_throughput", tput)):
            p = panels.get(pid)  # type: ignore[call-overload]
            if p is not None:
                p.title += f" ({refs.instance_id}, {refs.instance_type})"
                p.computed, p.ceilings = series, ceilings.get(pid, [])
                if pid == "instance_iops" and series:
                    p.notes.append("Instance IOPS are counted as issued; AWS states the instance limit at 16 KiB "
                                   "I/O (AWS EBS-optimized instances).")
    if (p := panels.get("burst_balance")) is not None:
        for role, vol in (("data", refs.data), ("raft", refs.raft)):
            if vol is not None and data.has(("volume", vol.volume_id, mid.EBS_BURST_BALANCE)):
                p.computed.append(SeriesOut(f"{role}_burst_balance", f"{role.capitalize()} volume BurstBalance",
                                          "%", drop_empty(data.get(("volume", vol.volume_id, mid.EBS_BURST_BALANCE))),
                                          refs.volume_entity(vol)))
        if refs.instance_id:
            for metric, label in ((mid.EC2_EBS_IO_BALANCE, "Instance EBSIOBalance%"),
                                  (mid.EC2_EBS_BYTE_BALANCE, "Instance EBSByteBalance%")):
                key = ("instance", refs.instance_id, metric)
                if data.has(key):
                    p.computed.append(SeriesOut(metric.replace(".", "_"), label, "%", drop_empty(data.get(key)),
                                                 refs.instance_entity(refs.instance_id)))
        p.forecasts = forecasts
        if not p.computed:
            p.notes.append("No burst bucket: gp3/io1/io2 volumes and instances that don't burst report no balance "
                           "(AWS CloudWatch metrics for EBS and EC2).")
    for role, vol in (("data", refs.data), ("raft", refs.raft)):
        if vol is None:
            continue
        vid = vol.volume_id
        if (p := panels.get("queue_length")) is not None and data.has(("volume", vid, mid.EBS_QUEUE_LENGTH)):
            p.computed.append(SeriesOut(f"{role}_queue_length", f"{role.capitalize()} volume queue", "requests",
                                      drop_empty(data.get(("volume", vid, mid.EBS_QUEUE_LENGTH))), refs.volume_entity(vol)))
        if (p := panels.get("latency")) is not None:
            for op in ("read", "write"):
                tkey, okey = ("volume", vid, f"ebs.total_{op}_time"), ("volume", vid, f"ebs.{op}_ops")
                if data.has(tkey):
                    # Sum(TotalTime) / Sum(Ops) × 1000 (docs/reference/cloudwatch.md#volume-metrics): the ops-weighted mean per bucket.
                    p.computed.append(SeriesOut(f"{role}_{op}_latency", f"{role.capitalize()} {op}", "ms",
                                              data.combine([tkey, okey], derived.latency_ms), refs.volume_entity(vol)))
    if (p := panels.get("block_cache_hit_ratio")) is not None:
        hit, miss = ("tikv_node", addr, mid.TIKV_BLOCK_CACHE_HIT), ("tikv_node", addr, mid.TIKV_BLOCK_CACHE_MISS)
        if data.has(hit):
            # derived.hit_ratio of the bucket's mean rates, in %.
            p.computed.append(SeriesOut("block_cache_hit_ratio", "Hit ratio", "%",
                                      data.combine([hit, miss], lambda h, m: derived.hit_ratio(h, m) * 100.0),
                                      refs.store_entity()))
    if (p := panels.get("thread_cpu")) is not None:
        for pool in THREAD_POOLS:
            key = ("tikv_node", addr, f"tikv.thread_cpu.{pool}")
            if data.has(key):
                p.computed.append(SeriesOut(f"cpu_{pool}", pool.replace("_", " "), "cores", drop_empty(data.get(key)),
                                          refs.store_entity()))
    if (p := panels.get("compaction_pending")) is not None:
        key = ("tikv_node", addr, mid.TIKV_PENDING_COMPACTION_BYTES)
        if data.has(key):
            p.computed.append(SeriesOut("pending_compaction", "Pending compaction", "GiB",
                                      drop_empty(scaled(data.get(key), metric_scale(mid.TIKV_PENDING_COMPACTION_BYTES))),
                                      refs.store_entity()))
        lo, hi = data.window
        p.ceilings = [
            Ceiling(id="pending_soft", label="flow control slows writes (soft limit)", value=PENDING_SOFT_GIB,
                    unit="GiB", kind="configured", valid_from=lo, valid_to=hi, source=PENDING_SOURCE),
            Ceiling(id="pending_hard", label="flow control rejects writes (hard limit)", value=PENDING_HARD_GIB,
                    unit="GiB", kind="configured", valid_from=lo, valid_to=hi, source=PENDING_SOURCE),
        ]
    if (p := panels.get("write_stall")) is not None:
        key = ("tikv_node", addr, mid.TIKV_WRITE_STALL)
        if data.has(key):
            p.computed.append(SeriesOut("write_stall", "Longest stall", "ms", drop_empty(scaled(data.get(key), metric_scale(mid.TIKV_WRITE_STALL))),
                                      refs.store_entity()))
    if (p := panels.get("disk_space")) is not None:
        _disk_panel(p, refs, data)
    for pid, p in panels.items():
        if pid in UTILISATION_SERIES:
            p.in_force = in_force_of(p, data, balance_key(pid, refs))
            _add_in_force_line(p)
    if refs.raft is None and refs.data is not None:  # the data panels already say the Raft log shares the volume
        return [p for p in panels.values() if p.id not in ("raft_iops", "raft_throughput")]
    return list(panels.values())


@dataclass(frozen=True)
class InForce:
    """A panel's utilisation series, its IOPS / MiB/s ceilings and the one in force at each point of the series."""

    values: Columns
    ceilings: list[Ceiling]
    ceiling: Array  # NaN where no ceiling is known
    entity: Entity | None  # what the utilisation series is of (None: the panel has none)


def in_force_of(p: PanelOut, data: Data, key: Key | None) -> InForce:
    """The ceiling in force at each point of an IOPS / MiB/s panel's utilisation series (Data.in_force, decided by
    the credit balance `key`)."""
    of = next((s for s in p.computed if s.id == UTILISATION_SERIES[p.id]), None)
    total = of.columns if of is not None else empty_columns()
    segs = [c for c in p.ceilings if c.unit in ("IOPS", "MiB/s")]
    ceil = data.in_force(segs, key, total.t) if segs else np.full(total.t.size, np.nan)
    return InForce(total, segs, ceil, of.entity if of is not None else None)


def _add_in_force_line(p: PanelOut) -> None:
    """On an IOPS / MiB/s panel with a burst ceiling, the ceiling in force as a line of its own: the burst figure
    while the credit balance lasts, the baseline once it is empty (what the advisor and the glance table judge)."""
    if (p.in_force is None or p.in_force.entity is None or not any(c.kind == "burst" for c in p.in_force.ceilings)
            or not len(p.in_force.values)):
        return
    total, ceil = p.in_force.values, p.in_force.ceiling
    keep = np.isfinite(ceil)
    p.computed.append(SeriesOut(f"{p.id}_ceiling_in_force", "Ceiling in force", p.unit,
                                Columns(total.t[keep], ceil[keep], ceil[keep].copy(), ceil[keep].copy()),
                                p.in_force.entity))


# PD's space lines (PingCAP: PD Configuration File, schedule.high-space-ratio / low-space-ratio defaults).
PD_SPACE_SOURCE = references.PD_CONFIG.cite("schedule.high-space-ratio 0.7, schedule.low-space-ratio 0.8 (defaults)")
PD_SPACE_LINES = (("pd_high_space", "PD balances by space left above", PD_HIGH_SPACE_RATIO),
                  ("pd_low_space", "PD places no new regions above", PD_LOW_SPACE_RATIO))


def _disk_panel(p: PanelOut, refs: NodeRefs, data: Data) -> None:
    """Used space as TiKV and PD see it, the capacity TiKV reports, PD's lines on it and the volume's size."""
    addr = refs.node.store_address
    cap, avail, used = (("tikv_node", addr, f"tikv.store_{m}_bytes") for m in ("capacity", "available", "used"))
    to_gib = metric_scale(mid.TIKV_STORE_CAPACITY_BYTES)  # stored bytes, drawn in GiB (labels.STORED_TO_SHOWN)
    if data.has(cap) and data.has(avail):
        # What PD judges: capacity - available (TiKV's store heartbeat; includes what is not TiKV's on the disk)
        p.computed.append(SeriesOut("pd_used", "Used (capacity - available, as PD sees it)", "GiB",
                                  data.combine([cap, avail], lambda c, a: (c - a) * to_gib), refs.store_entity()))
        p.computed.append(SeriesOut("capacity", "Capacity TiKV reports", "GiB", drop_empty(scaled(data.get(cap), to_gib)),
                                  refs.store_entity()))
        last = data.get(cap).avg[np.isfinite(data.get(cap).avg)]
        if last.size:
            lo, hi = data.window
            p.ceilings = [Ceiling(id=cid, label=f"{label} {share:.0%} of capacity",
                                  value=round(share * float(last[-1]) * to_gib, 1), unit="GiB", kind="configured",
                                  valid_from=lo, valid_to=hi, source=PD_SPACE_SOURCE)
                          for cid, label, share in PD_SPACE_LINES]
    if data.has(used):
        p.computed.append(SeriesOut("tikv_used", "Used by TiKV", "GiB", drop_empty(scaled(data.get(used), metric_scale(mid.TIKV_STORE_USED_BYTES))), refs.store_entity()))
    if refs.data is not None:
        p.notes.append(f"Data volume {refs.data.volume_id}: {refs.data.size_gib:,} GiB in AWS; the capacity TiKV "
                       "reports is the filesystem's size (smaller by the filesystem's metadata, or much smaller "
                       "when the filesystem was not grown after a resize).")
    if not p.computed:
        p.notes.append("No tikv_store_size_bytes series for this store yet.")


# --- the shell: reading the store --------------------------------------------------------------------------


def _node_refs_many(db: Session, nodes: Sequence[TikvNode]) -> list[NodeRefs]:
    """Each node's instance, volumes and instance limits: three queries whatever the number of nodes."""
    inst_ids = {n.instance_ref_id for n in nodes if n.instance_ref_id}
    vol_ids = {r for n in nodes for r in (n.data_volume_ref_id, n.raft_volume_ref_id) if r}
    instances = {i.id: i for i in db.scalars(select(Instance).where(Instance.id.in_(inst_ids)))} if inst_ids else {}
    volumes = {v.id: v for v in db.scalars(select(Volume).where(Volume.id.in_(vol_ids)))} if vol_ids else {}
    owned = {n.id: i for n in nodes if n.instance_ref_id is not None
             and (i := instances.get(n.instance_ref_id)) is not None and i.org_id == n.org_id}
    limits = resolve_instance_types(db, {i.instance_type for i in owned.values()})
    out = []
    for node in nodes:
        vols: dict[str, VolumeRef | None] = {"data": None, "raft": None}
        for role, ref in (("data", node.data_volume_ref_id), ("raft", node.raft_volume_ref_id)):
            if ref is None or (role == "raft" and ref == node.data_volume_ref_id):
                continue
            v = volumes.get(ref)
            if v is not None and v.org_id == node.org_id:
                vols[role] = VolumeRef(v.volume_id, v.volume_type, v.size_gib, role)
        inst = owned.get(node.id)
        out.append(NodeRefs(node, inst.instance_id if inst else None, inst.instance_type if inst else None,
                            vols["data"], vols["raft"], limits[inst.instance_type].limits if inst else None))
    return out


def _ceiling_entities(refs: NodeRefs) -> list[tuple[str, str, str]]:
    entities = [("volume", vol.volume_id, role) for role, vol in (("data", refs.data), ("raft", refs.raft))
                if vol is not None]
    return entities + ([("instance", refs.instance_id, "instance")] if refs.instance_id else [])


def node_ceilings_many(db: Session, all_refs: Sequence[NodeRefs], start: dt.datetime,
                       end: dt.datetime) -> list[dict[str, list[Ceiling]]]:
    """Every ceiling of each node's IOPS and throughput panels, split where the inventory changed (the
    resolver's, ceilings_over_time_many: a few queries for all the nodes of one org)."""
    if not all_refs:
        return []
    org = all_refs[0].node.org_id
    pieces = ceilings_over_time_many(db, org, [e for r in all_refs for e in _ceiling_entities(r)], start, end)
    out = []
    for refs in all_refs:
        ceilings: dict[str, list[Ceiling]] = {}
        for entity in _ceiling_entities(refs):
            role = entity[2]
            ceilings[f"{role}_iops"], ceilings[f"{role}_throughput"] = pieces[entity]["iops"], pieces[entity]["throughput"]
        out.append(ceilings)
    return out


# --- burst forecasts ---------------------------------------------------------------------------------------

# The series the burst forecasts read (headroom.domain.advisor.buckets): the balances and the I/O sums of the demand.
FORECAST_METRICS = frozenset({mid.EBS_BURST_BALANCE, *IO_METRICS["volume"], mid.EC2_EBS_IO_BALANCE,
                              mid.EC2_EBS_BYTE_BALANCE, *IO_METRICS["instance"]})


def forecast_context(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, at: dt.datetime,
                     hosts_of: Sequence[tuple[str, str]] | None = None) -> Context | None:
    """The advisor's Context of the window it judges ending at `at` (its minute, as findings.service.advise_cluster
    floors it), holding only the burst forecasts' series: the forecasts drawn are the findings' own."""
    end = at.astimezone(dt.UTC).replace(second=0, microsecond=0)
    snapshot = build_snapshot(db, org_id, cluster_id, start=end - JUDGED_WINDOW, end=end, hosts_of=hosts_of,
                              metrics=FORECAST_METRICS)
    return Context(snapshot, now=end) if snapshot.series else None


def node_forecasts(refs: NodeRefs, ctx: Context | None, horizon_seconds: float | None = None) -> list[ForecastOut]:
    """Burst forecasts of a node's gp2/st1/sc1 volumes and instance EBS buckets: the advisor's (advisor.buckets, on
    its Context of the judged window). `horizon_seconds` only bounds the charted path."""
    if ctx is None:
        return []
    out: list[ForecastOut] = []
    for vol in (refs.data, refs.raft):
        fc = volume_burst_forecast(ctx, vol.volume_id, horizon_seconds=horizon_seconds) if vol is not None else None
        if vol is not None and fc is not None:
            out.append(ForecastOut(f"{vol.role}_burst_balance",
                                   f"{vol.role.capitalize()} volume BurstBalance forecast", "volume", vol.volume_id, fc))
    if refs.instance_id:
        iid = refs.instance_id
        for kind, bal_metric, label in (("io", mid.EC2_EBS_IO_BALANCE, "Instance EBSIOBalance% forecast"),
                                        ("byte", mid.EC2_EBS_BYTE_BALANCE, "Instance EBSByteBalance% forecast")):
            ifc = instance_burst_forecast(ctx, iid, kind, horizon_seconds=horizon_seconds)  # type: ignore[arg-type]
            if ifc is not None:
                out.append(ForecastOut(bal_metric.replace(".", "_"), label, "instance", iid, ifc))
    return out


# The burst forecasts of a window ending "now" are the last advice round's (its minute, the cluster's advised_at,
# the window the findings judged), as long as that round is this recent; an older or a past window gets its own.
# Three missed 15-minute rounds, as the fleet score (fleet.service SCORE_STALE).
BURST_FRESH = dt.timedelta(minutes=45)
# Infinite or undefined rates (a bucket that never empties) are written as strings: JSONB has no NaN.
_STORED_BURST = TypeAdapter(dict[str, list[ForecastOut]], config=ConfigDict(ser_json_inf_nan="strings"))
_STORED_PATHS = TypeAdapter(dict[str, dict[str, BalancePath]], config=ConfigDict(ser_json_inf_nan="strings"))
_STORED_NODE_BURST = TypeAdapter(list[ForecastOut], config=ConfigDict(ser_json_inf_nan="strings"))
_STORED_NODE_PATHS = TypeAdapter(dict[str, BalancePath], config=ConfigDict(ser_json_inf_nan="strings"))
_NO_PATH = BalancePath((), (), (), ())


def burst_judged_at(cluster: Cluster, end: dt.datetime) -> dt.datetime:
    """The minute a window ending at `end` reads its burst forecasts at: the last advice round's when it is the
    recent past of `end` (the findings' own forecasts, on the same data), else `end`'s own minute."""
    end = end.astimezone(dt.UTC).replace(second=0, microsecond=0)
    advised = cluster.advised_at
    if advised is not None and advised <= end and end - advised <= BURST_FRESH:
        return advised.astimezone(dt.UTC)
    return end


def cluster_burst_forecasts(db: Session, cluster: Cluster, all_refs: Sequence[NodeRefs], end: dt.datetime, *,
                            horizon_seconds: float | None = None, with_paths: bool = True,
                            hosts_of: Sequence[tuple[str, str]] | None = None) -> dict[uuid.UUID, list[ForecastOut]]:
    """Each node's burst forecasts for a window ending at `end` (burst_judged_at): the stored ones of that minute
    (store_burst_forecasts) when there are, else computed on the advisor's window ending then. Without
    `with_paths` a stored forecast comes without its charted path (the glance draws none)."""
    if not all_refs:
        return {}
    at = burst_judged_at(cluster, end)
    stored = None
    if at == cluster.advised_at:  # only an advice round's minute is ever stored
        # Only the asked nodes' entries are read and decoded (a node's chart asks for one of the cluster's).
        ids = [str(r.node.id) for r in all_refs]
        columns = [StoredBurstForecasts.forecasts[i] for i in ids]
        columns += [StoredBurstForecasts.paths[i] if with_paths else literal(None) for i in ids]
        stored = db.execute(select(*columns).where(
            StoredBurstForecasts.org_id == cluster.org_id, StoredBurstForecasts.cluster_id == cluster.id,
            StoredBurstForecasts.at == at)).one_or_none()
    if stored is not None:
        out: dict[uuid.UUID, list[ForecastOut]] = {}
        for n, refs in enumerate(all_refs):
            kept = _STORED_NODE_BURST.validate_python(stored[n]) if stored[n] is not None else []
            if with_paths:
                paths = _STORED_NODE_PATHS.validate_python(stored[len(all_refs) + n] or {})
                kept = [replace(f, forecast=replace(f.forecast, path=paths.get(f.id, _NO_PATH))) for f in kept]
            out[refs.node.id] = kept
        return out
    judged = forecast_context(db, cluster.org_id, cluster.id, at, hosts_of)
    return {r.node.id: node_forecasts(r, judged, horizon_seconds=horizon_seconds) for r in all_refs}


def store_burst_forecasts(db: Session, cluster: Cluster, judged: Context | None = None) -> int | None:
    """Compute and store the burst forecasts of the cluster's last advice round (the window it judged); return how
    many buckets have one (None: never advised, nothing stored).

    `judged`: that round's own Context of the window (JUDGED_WINDOW ending at the round's minute), whose forecasts
    the advisor's burst rules already computed: the advice run hands it over. Without it the Context is built
    from the store (forecast_context), which gives the same forecasts."""
    if cluster.advised_at is None:
        return None
    at = cluster.advised_at.astimezone(dt.UTC)
    if judged is not None and (judged.now != at or judged.window.end - judged.window.start != JUDGED_WINDOW):
        raise ValueError("the burst forecasts are stored from the Context of the advice round's own window")
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.org_id == cluster.org_id,
                                                   TikvNode.cluster_id == cluster.id)))
    all_refs = _node_refs_many(db, nodes)
    if judged is None:
        judged = forecast_context(db, cluster.org_id, cluster.id, at)
    forecasts = {str(r.node.id): node_forecasts(r, judged) for r in all_refs}
    light = {node: [replace(f, forecast=replace(f.forecast, path=_NO_PATH)) for f in fs]
             for node, fs in forecasts.items()}
    paths = {node: {f.id: f.forecast.path for f in fs} for node, fs in forecasts.items()}
    values = {"org_id": cluster.org_id, "at": at, "forecasts": json.loads(_STORED_BURST.dump_json(light)),
              "paths": json.loads(_STORED_PATHS.dump_json(paths))}
    db.execute(insert(StoredBurstForecasts).values(cluster_id=cluster.id, **values)
               .on_conflict_do_update(index_elements=[StoredBurstForecasts.cluster_id], set_=values,
                                      where=StoredBurstForecasts.at <= at))
    return sum(len(v) for v in forecasts.values())


def ensure_burst_forecasts(db: Session, cluster: Cluster) -> int | None:
    """Store the burst forecasts of the cluster's last advice round unless that round stored them (the advice run
    does; a round run by an older worker may not have): return how many buckets were computed (0: already stored;
    None: never advised)."""
    if cluster.advised_at is None:
        return None
    stored = db.scalar(select(func.count()).select_from(StoredBurstForecasts).where(
        StoredBurstForecasts.org_id == cluster.org_id, StoredBurstForecasts.cluster_id == cluster.id,
        StoredBurstForecasts.at == cluster.advised_at))
    return 0 if stored else store_burst_forecasts(db, cluster)


# --- entry points ------------------------------------------------------------------------------------------


@dataclass
class NodeMetrics:
    cluster_id: uuid.UUID
    refs: NodeRefs
    start: dt.datetime
    end: dt.datetime
    resolution: int
    source: Literal["raw", "rollup"]
    panels: list[PanelOut]
    points: int = DEFAULT_POINTS

    @property
    def node(self) -> NodeRefs:
        return self.refs

    @property
    def resolution_seconds(self) -> int:
        return self.resolution

    @property
    def resolution_source(self) -> Literal["raw", "rollup"]:
        return self.source


def _nodes(db: Session, principal: Principal, cluster_id: uuid.UUID) -> tuple[Cluster, list[TikvNode]]:
    cluster = get_cluster(db, principal, cluster_id)
    return cluster, list(db.scalars(select(TikvNode).where(TikvNode.org_id == principal.org_id,
                                                           TikvNode.cluster_id == cluster_id)
                                    .order_by(TikvNode.store_address)))


def node_metrics(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    *,
    node_id: uuid.UUID | None,
    panels: Sequence[PanelId] | None,
    start: dt.datetime | None,
    end: dt.datetime | None,
    now: dt.datetime,
    with_projections: bool = False,
    points: int = DEFAULT_POINTS,
) -> NodeMetrics | None:
    """Return one node's panels over a window (the cluster's first node when none is named; None if it has none);
    each series drawn with at most `points` points (draw_series);
    `with_projections`: each panel with a stored growth projection carries it (a path months long, so opt-in)."""
    lo, hi = validate_window(start, end, now)
    cluster, nodes = _nodes(db, principal, cluster_id)
    if node_id is not None:
        node = next((n for n in nodes if n.id == node_id), None)
        if node is None:
            raise NotFound("TiKV node not found.")
    elif nodes:
        node = nodes[0]
    else:
        return None
    wanted = list(dict.fromkeys(panels)) if panels else list(PANEL_IDS)
    refs = _node_refs_many(db, [node])[0]
    resolution = choose_resolution(lo, hi)
    keys = keys_for(refs)
    info = timeseries.find_series(db, principal.org_id, keys)
    cols = timeseries.read_columns(db, principal.org_id, sorted({s.id for s in info.values()}), lo, hi, resolution, now)
    data = Data(info, cols, exact_extremes=resolution == 60, window=(lo, hi), resolution=resolution)
    forecasts: list[ForecastOut] = []
    if "burst_balance" in wanted:
        on_host = [("volume", v.volume_id) for v in (refs.data, refs.raft) if v is not None]
        on_host += [("instance", refs.instance_id)] if refs.instance_id else []
        forecasts = cluster_burst_forecasts(db, cluster, [refs], hi, hosts_of=on_host)[node.id]
    ceilings = node_ceilings_many(db, [refs], lo, hi)[0]
    built = build_panels(refs, data, ceilings, forecasts, wanted)
    for p in built:
        p.series = [draw_series(s, p.id, resolution, points, (lo, hi)) for s in p.computed]
    if with_projections:
        wanted_keys = {str(p.id): k for p in built if (k := projection_key(p.id, refs)) is not None}
        rows = projections_service.stored(db, principal.org_id, node.cluster_id, list(set(wanted_keys.values())))
        for p in built:
            key = wanted_keys.get(str(p.id))
            row = rows.get(key) if key is not None else None
            if row is not None:
                p.projection = projection_out(row)
    return NodeMetrics(cluster_id, refs, lo, hi, resolution, "raw" if resolution == 60 else "rollup", built, points)


@dataclass
class UtilisationCell:
    metric: Literal["data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops",
                    "instance_throughput"]
    peak: Peak | None
    ceiling: Ceiling | None  # the ceiling in force at the peak
    ceiling_now: Ceiling | None  # the ceiling in force at the window's last point

    @property
    def peak_percent(self) -> float | None:
        return self.peak.percent if self.peak else None

    @property
    def peak_at(self) -> dt.datetime | None:
        return self.peak.at if self.peak else None

    @property
    def peak_value(self) -> float | None:
        return self.peak.value if self.peak else None


@dataclass
class NodeOverview:
    refs: NodeRefs
    cells: list[UtilisationCell]
    burst: list[ForecastOut]

    @property
    def node(self) -> NodeRefs:
        return self.refs

    @property
    def utilisation(self) -> list[UtilisationCell]:
        return self.cells

    @property
    def burst_seconds_left(self) -> float | None:
        """The soonest time to empty among the node's draining buckets (None: none drains)."""
        left = [f.forecast.seconds_to_empty for f in self.burst if f.forecast.seconds_to_empty is not None]
        return min(left) if left else None


@dataclass
class ClusterOverview:
    cluster_id: uuid.UUID
    start: dt.datetime
    end: dt.datetime
    resolution: int
    source: Literal["raw", "rollup"]
    nodes: list[NodeOverview]
    # True: the peaks are the stored ones of the 7 days ending at `end` (store_week_peaks)
    peaks_stored: bool = False

    @property
    def resolution_seconds(self) -> int:
        return self.resolution

    @property
    def resolution_source(self) -> Literal["raw", "rollup"]:
        return self.source


# Utilisation is judged as the advisor judges it: against the ceiling in force at each point (a gp2 volume's or a
# burst-capable instance's burst figure while its credit balance lasts, its baseline once the bucket is empty:
# physics.ceilings.in_force). Up to the advisor's own window the glance reads the 1-minute points the advisor
# reads, so the two give the same number; longer windows read rollups (the lowest balance of each bucket).
UTILISATION_SERIES = {
    "data_iops": "data_counted_iops", "data_throughput": "data_total_mibps", "raft_iops": "raft_counted_iops",
    "raft_throughput": "raft_total_mibps", "instance_iops": "instance_counted_iops",
    "instance_throughput": "instance_total_mibps",
}
JUDGED_WINDOW = dt.timedelta(hours=24)  # findings.service.advise_cluster's window


def balance_key(metric: str, refs: NodeRefs) -> Key | None:
    """The credit balance that decides which of a panel's ceilings is in force (None: the panel has none)."""
    vol = refs.data if metric.startswith("data_") else refs.raft if metric.startswith("raft_") else None
    if vol is not None:
        return ("volume", vol.volume_id, mid.EBS_BURST_BALANCE)
    if metric.startswith("instance_") and refs.instance_id:
        name = mid.EC2_EBS_IO_BALANCE if metric == "instance_iops" else mid.EC2_EBS_BYTE_BALANCE
        return ("instance", refs.instance_id, name)
    return None


def overview_resolution(lo: dt.datetime, hi: dt.datetime) -> int:
    """Raw 1-minute points up to the advisor's window (what it judges), else the charts' resolution."""
    return 60 if hi - lo <= JUDGED_WINDOW else choose_resolution(lo, hi)


def _piece_at(segments: Sequence[Ceiling], burst: bool, ts: int) -> Ceiling | None:
    for c in segments:
        if (c.kind == "burst") == burst and (c.valid_from is None or c.valid_from.timestamp() <= ts) \
                and (c.valid_to is None or ts < c.valid_to.timestamp()):
            return c
    return None


def utilisation_cell(metric: str, in_force: InForce) -> UtilisationCell:
    """Peak use of a panel's ceiling in force over the window, and which ceiling was in force then and now."""
    total, segs, ceil = in_force.values, in_force.ceilings, in_force.ceiling
    peak = peak_utilisation(total, ceil)

    def which(i: int) -> Ceiling | None:
        ts = int(total.t[i])
        burst = _piece_at(segs, True, ts)
        return burst if burst is not None and burst.value == ceil[i] else _piece_at(segs, False, ts)

    at_peak = which(peak.index) if peak else None
    finite = np.flatnonzero(np.isfinite(ceil))
    now = which(int(finite[-1])) if finite.size else (segs[-1] if segs else None)
    return UtilisationCell(metric, peak, at_peak, now)  # type: ignore[arg-type]


def _overview_cells(db: Session, org_id: uuid.UUID, all_refs: Sequence[NodeRefs], lo: dt.datetime, hi: dt.datetime,
                    now: dt.datetime, resolution: int) -> list[list[UtilisationCell]]:
    """Each node's peak use of its IOPS / throughput ceilings in force over [lo, hi), at `resolution`."""
    keys = [k for r in all_refs for k in keys_for(r) if k[0] != "tikv_node"]
    info = timeseries.find_series(db, org_id, keys)
    cols = timeseries.read_columns(db, org_id, sorted({s.id for s in info.values()}), lo, hi, resolution, now)
    data = Data(info, cols, exact_extremes=resolution == 60, window=(lo, hi), resolution=resolution)
    io_panels: list[PanelId] = ["data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops",
                                "instance_throughput"]
    out = []
    for refs, ceilings in zip(all_refs, node_ceilings_many(db, all_refs, lo, hi), strict=True):
        panels = {p.id: p for p in build_panels(refs, data, ceilings, [], io_panels)}
        out.append([utilisation_cell(metric, panel.in_force) for metric in io_panels
                    if (panel := panels.get(metric)) is not None and (panel.computed or panel.ceilings)
                    and panel.in_force is not None])
    return out


# The overview's 7-day range (the page's "7 days") reads a week of every node's series at 5-minute buckets, the
# dashboard's costliest read: the fleet.score job stores its peaks every 15 minutes (store_week_peaks), and a
# request for the 7 days ending up to WEEK_PEAKS_STALE after the stored window reads them, answering with the
# stored window (its `end`, `peaks_stored`). Three missed runs of the job and the request computes them again.
WEEK_PEAKS = dt.timedelta(days=7)
WEEK_PEAKS_STALE = dt.timedelta(minutes=45)
_STORED_CELLS = TypeAdapter(dict[str, list[UtilisationCell]], config=ConfigDict(ser_json_inf_nan="strings"))


def store_week_peaks(db: Session, cluster: Cluster, end: dt.datetime, now: dt.datetime) -> int:
    """Compute and store the cluster's overview peaks over the 7 days ending at `end` (the minute); return how many
    ceilings have one."""
    end = end.astimezone(dt.UTC).replace(second=0, microsecond=0)
    lo = end - WEEK_PEAKS
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.org_id == cluster.org_id,
                                                   TikvNode.cluster_id == cluster.id)))
    all_refs = _node_refs_many(db, nodes)
    resolution = overview_resolution(lo, end)
    cells = _overview_cells(db, cluster.org_id, all_refs, lo, end, now, resolution)
    by_node = {str(r.node.id): c for r, c in zip(all_refs, cells, strict=True)}
    values = {"org_id": cluster.org_id, "window_start": lo, "window_end": end, "resolution_seconds": resolution,
              "cells": json.loads(_STORED_CELLS.dump_json(by_node))}
    db.execute(insert(StoredOverviewPeaks).values(cluster_id=cluster.id, **values)
               .on_conflict_do_update(index_elements=[StoredOverviewPeaks.cluster_id], set_=values,
                                      where=StoredOverviewPeaks.window_end <= end))
    return sum(1 for c in cells for cell in c if cell.peak is not None)


def _stored_week_peaks(db: Session, cluster: Cluster, all_refs: Sequence[NodeRefs], lo: dt.datetime,
                       hi: dt.datetime) -> tuple[StoredOverviewPeaks, list[list[UtilisationCell]]] | None:
    """The stored peaks that answer a request for [lo, hi): a 7-day window ending at most WEEK_PEAKS_STALE after
    the stored one, with every node of the cluster stored; else None."""
    if hi - lo != WEEK_PEAKS:
        return None
    row = db.scalar(select(StoredOverviewPeaks).where(
        StoredOverviewPeaks.org_id == cluster.org_id, StoredOverviewPeaks.cluster_id == cluster.id,
        StoredOverviewPeaks.window_end <= hi, StoredOverviewPeaks.window_end > hi - WEEK_PEAKS_STALE))
    if row is None:
        return None
    kept = _STORED_CELLS.validate_python(row.cells)
    if any(str(r.node.id) not in kept for r in all_refs):  # a node added since: computed with it
        return None
    return row, [kept[str(r.node.id)] for r in all_refs]


def cluster_overview(
    db: Session, principal: Principal, cluster_id: uuid.UUID, *, start: dt.datetime | None,
    end: dt.datetime | None, now: dt.datetime,
) -> ClusterOverview:
    """Per node: peak use of each IOPS / throughput ceiling in force over the window, and burst time left."""
    lo, hi = validate_window(start, end, now)
    cluster, nodes = _nodes(db, principal, cluster_id)
    all_refs = _node_refs_many(db, nodes)
    stored = _stored_week_peaks(db, cluster, all_refs, lo, hi)
    if stored is not None:
        row, cells = stored
        lo, hi = row.window_start.astimezone(dt.UTC), row.window_end.astimezone(dt.UTC)
        resolution = row.resolution_seconds
    else:
        resolution = overview_resolution(lo, hi)
        cells = _overview_cells(db, principal.org_id, all_refs, lo, hi, now, resolution)
    # The overview needs only the time to empty: a computed forecast charts the shortest path (forecast.burst
    # MIN_HORIZON_SECONDS), which keeps it cheap.
    burst = cluster_burst_forecasts(db, cluster, all_refs, hi, horizon_seconds=MIN_HORIZON_SECONDS, with_paths=False)
    out = [NodeOverview(refs, node_cells, burst[refs.node.id]) for refs, node_cells in zip(all_refs, cells, strict=True)]
    return ClusterOverview(cluster_id, lo, hi, resolution, "raw" if resolution == 60 else "rollup", out,
                           peaks_stored=stored is not None)

"""The analysis context of one advisor run: inventory lookups, series as arrays, limits, stats helpers.

Rules receive one `Context` and never touch the snapshot's raw lists. Everything is pure and cached per run.

Context API (stable; rules of every family use it):
    Context(snapshot, now=None, base=None)       now defaults to the end of the snapshot window; base: the run's
                                                 context when this one is a what-if of it (apply_changes): per-
                                                 entity work of unchanged nodes, volumes, instances is reused
    .snapshot .cluster .cluster_key .window .now .step_seconds .points
    .nodes / .volumes / .instances               the inventory lists
    .node(id) .volume(id) .instance(id)          KeyError when absent
    .node_volumes(node_id, role=None)            a node's data + raft volumes (role filters)
    .volumes_on_instance(instance_id)            every volume attached to the instance
    .nodes_on_instance(instance_id)              every TiKV node on the instance
    .node_of_volume(volume_id) -> Node | None
    .entity_for_volume(id) / .entity_for_instance(id) / .entity_for_node(id) / .cluster_entity()
    .series(kind, id, metric, labels=None) -> Array | None     on the window's grid (window.points values,
                                                 NaN for gaps, None when absent, read-only): a series of
                                                 another period is aligned (snapshot.align, docs/series-alignment.md)
    .find_series(kind, id, metric, labels=None) -> Series | None   the stored series at its own step
    .memo(key, compute, depends_on=None) -> value   compute once per run (helpers several rules share);
                                                 depends_on: the (kind, id) entities it reads (what-if reuse)
    .volume_io(volume_id) -> IoView | None       counted IOPS, MiB/s, latency, queue on the window's grid
                                                 (headroom.domain.derived; rates from each Sum's own period)
    .instance_io(instance_id) -> IoView | None   AWS/EC2 EBS aggregate of the instance
    .volume_limits(volume_id) -> VolumeLimits | None      catalog; None for types the catalog lacks
    .instance_limits(instance_id) -> InstanceLimits | None   catalog, else the snapshot's DescribeInstanceTypes
                                                          entry (catalog.resolve); None for unknown types
    .resolved_instance_limits(instance_id)       the same with its origin and a note for people
    .node_ceilings(instance_id) -> NodeCeilings | None    instance vs sum of its volumes (physics)
    .volume_ceilings(volume_id) -> {dimension: [Ceiling]} | None   the volume's ceilings as the charts show them
    .instance_ceilings(instance_id) -> {dimension: [Ceiling]}      the instance's EBS ceilings (none: unknown type)
    .attached_volumes_ceiling(instance_id, dimension) -> Ceiling | None   its volumes' sustained ceilings together
    .volume_host_limit(volume_id, dimension) -> Ceiling | None   the sustained EBS limit of the volume's instance
    .volume_headroom_pct(volume_id, dimension, limit) -> float | None   the volume's p99 against `limit` and its
                                                          instance's limit (physics.ceilings.headroom_pct)
    .volume_iops_ceiling(volume_id) -> Array | None       per step: burst while BurstBalance > 0, else
                                                          baseline (gp2); the provisioned value otherwise
    .volume_mibps_ceiling(volume_id) -> Array | None      the same for MiB/s
    .config(node_id, key) -> EffectiveValue      configured value, else the version default (tikvconf)
    .config_bytes(node_id, key) -> int | None    a size key parsed to bytes
    .lookback_days -> int                        the lookback cuts are judged on (snapshot.lookback, else 14)
    .lookback_peak(kind, id) -> LookbackPeak | None   the entity's peak over the lookback (None: no history)
    .history_days(kind, id) -> float             days of history behind the entity (the window's when none)
    .window_text() -> str                        "2026-01-05 00:00 to 2026-01-06 00:00 UTC (24 h, 60 s steps)"

Stats helpers (module functions, NaN-aware, on 1-D arrays):
    share_at_or_above(values, threshold) -> float     fraction of the non-NaN points >= threshold
    mask_at_or_above(values, threshold) -> BoolArray  (NaN -> False)
    runs(mask) -> list[tuple[int, int]]               (start index, length) of each run of True
    bridge_gaps(mask, missing, max_gap) -> BoolArray  short runs of missing points inside a run count as the run
    longest_run(mask) -> int                          points in the longest run of True
    percentile(values, q) / p95(values) / p99(values) / peak(values) / mean(values)  (NaN when empty)
    ratio(values, limits) -> Array                     values / limits per point (NaN where limit <= 0)
    trend_per_hour(values, step_seconds) -> float      least-squares slope, units per hour (NaN if < 2)

Derived series names a SeriesRef may use besides registry metrics (the front end derives them the same way,
see headroom.domain.derived): `derived.counted_iops`, `derived.mibps`, `derived.read_latency_ms`,
`derived.write_latency_ms`, `derived.iops_ceiling`, `derived.mibps_ceiling`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from headroom.domain.catalog import InstanceLimits, VolumeLimits
from headroom.domain.catalog.resolve import (
    DescribedType,
    ResolvedInstanceLimits,
    resolve_instance_limits,
    resolve_volume_limits,
)
from headroom.domain.derived import IoView, io_chunk_kib, utilisation
from headroom.domain.model import Ceiling, EntityRef
from headroom.domain.physics.ceilings import (
    IoDimension,
    NodeCeilings,
    attached_volumes_ceiling,
    headroom_pct,
    instance_ceilings,
    node_ceilings,
    observed_p99,
    sustained,
    volume_ceilings,
    volume_in_force,
)
from headroom.domain.physics.io import SSD_CHUNK_KIB
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.lookback import DEFAULT_LOOKBACK_DAYS
from headroom.domain.snapshot.schema import (
    Cluster,
    EntityKind,
    Instance,
    LookbackPeak,
    Node,
    Series,
    Snapshot,
    Volume,
    Window,
)
from headroom.domain.snapshot.tikv_defaults import flatten
from headroom.domain.snapshot.views import IO_METRICS, aligned, io_view_of
from headroom.domain.tikvconf.defaults import EffectiveValue, HostFacts, effective_value
from headroom.domain.units import GIB, UnitError, format_duration_words, parse_size

Array = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
T = TypeVar("T")


# The series an I/O view reads besides IO_METRICS (views.io_view_of): a volume's latency sums and queue length.
_VOLUME_IO_EXTRA = (mid.EBS_TOTAL_READ_TIME, mid.EBS_TOTAL_WRITE_TIME, mid.EBS_QUEUE_LENGTH)

DERIVED_SERIES = (
    "derived.counted_iops",
    "derived.mibps",
    "derived.read_latency_ms",
    "derived.write_latency_ms",
    "derived.iops_ceiling",
    "derived.mibps_ceiling",
)


# ----------------------------------------------------------------------------------------------------
# Stats helpers


def mask_at_or_above(values_: Array, threshold: float | Array) -> BoolArray:
    """Return a boolean mask of points >= threshold (NaN points are False)."""
    with np.errstate(invalid="ignore"):
        out: BoolArray = np.asarray(values_ >= threshold, dtype=np.bool_) & ~np.isnan(values_)
    return out


def share_at_or_above(values_: Array, threshold: float | Array) -> float:
    """Return the fraction of the non-NaN points that are >= threshold (0 when there are none)."""
    valid = int(np.count_nonzero(~np.isnan(values_)))
    if valid == 0:
        return 0.0
    return int(np.count_nonzero(mask_at_or_above(values_, threshold))) / valid


def runs(mask: BoolArray) -> list[tuple[int, int]]:
    """Return (start, length) of each run of True in a mask."""
    if not mask.any():
        return []
    edges = np.diff(np.concatenate(([0], np.asarray(mask, dtype=np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), (ends - starts).tolist(), strict=True))


def bridge_gaps(mask: BoolArray, missing: BoolArray, max_gap: int) -> BoolArray:
    """Return `mask` with each run of missing points of at most `max_gap` points set True when the points on both
    sides of it are True: a datapoint CloudWatch did not deliver (or a scrape Prometheus missed) inside a run does
    not split the run in two (the "treat missing data" choice CloudWatch alarms offer; docs/thresholds/sustained.md).
    """
    out = np.array(mask, dtype=np.bool_, copy=True)
    n = out.size
    for start, length in runs(np.asarray(missing, dtype=np.bool_)):
        end = start + length
        if length <= max_gap and start > 0 and end < n and out[start - 1] and out[end]:
            out[start:end] = True
    return out


def longest_run(mask: BoolArray) -> int:
    """Return the number of points in the longest run of True."""
    return max((length for _, length in runs(mask)), default=0)


def percentile(values_: Array, q: float) -> float:
    """Return the q-th percentile of the non-NaN points (NaN when there are none)."""
    finite = values_[~np.isnan(values_)]
    return float(np.percentile(finite, q)) if finite.size else float("nan")


def p95(values_: Array) -> float:
    """Return the 95th percentile of the non-NaN points."""
    return percentile(values_, 95)


def p99(values_: Array) -> float:
    """Return the 99th percentile of the non-NaN points."""
    return percentile(values_, 99)


def peak(values_: Array) -> float:
    """Return the maximum of the non-NaN points (NaN when there are none)."""
    finite = values_[~np.isnan(values_)]
    return float(finite.max()) if finite.size else float("nan")


def mean(values_: Array) -> float:
    """Return the mean of the non-NaN points (NaN when there are none)."""
    finite = values_[~np.isnan(values_)]
    return float(finite.mean()) if finite.size else float("nan")


def ratio(values_: Array, limits: Array | float) -> Array:
    """Return values / limits per point (NaN where the limit is not positive): `derived.utilisation`."""
    return utilisation(values_, limits)


def trend_per_hour(values_: Array, step_seconds: float) -> float:
    """Return the least-squares slope of the non-NaN points, in units per hour (NaN with < 2 points)."""
    idx = np.nonzero(~np.isnan(values_))[0]
    if idx.size < 2:
        return float("nan")
    hours = idx * step_seconds / 3600.0
    slope = np.polyfit(hours, values_[idx], 1)[0]
    return float(slope)


# ----------------------------------------------------------------------------------------------------
# The context


class AlignedSeries:
    """Series put on one window's grid, each aligned once (`views.aligned`).

    A what-if snapshot (advisor/apply.py) changes inventory and config and keeps the other Series objects as they
    are, so the contexts of a run and of its what-ifs share one of these: a series is aligned once, not once per
    re-run. Entries are keyed by the Series object (held here, so its id stays its own).
    """

    def __init__(self, window: Window) -> None:
        self.window = window
        self._by_id: dict[int, tuple[Series, Array]] = {}

    def get(self, series: Series) -> Array:
        """Return the series on the window's grid (read-only)."""
        hit = self._by_id.get(id(series))
        if hit is not None and hit[0] is series:
            return hit[1]
        out = aligned(series, self.window)
        self._by_id[id(series)] = (series, out)
        return out


class Context:
    """Everything a rule needs about one snapshot, computed lazily and cached for the run."""

    def __init__(
        self,
        snapshot: Snapshot,
        now: datetime | None = None,
        *,
        aligned_series: AlignedSeries | None = None,
        base: Context | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.now: datetime = now or snapshot.window.end
        if base is not None and aligned_series is None:
            aligned_series = base.aligned_series
        # Shared with the what-ifs of the same run (same window); otherwise this context's own.
        same_window = aligned_series is not None and aligned_series.window == snapshot.window
        self.aligned_series: AlignedSeries = (
            aligned_series if aligned_series is not None and same_window else AlignedSeries(snapshot.window)
        )
        self._nodes = {n.id: n for n in snapshot.nodes}
        self._volumes = {v.id: v for v in snapshot.volumes}
        self._instances = {i.id: i for i in snapshot.instances}
        self._cache: dict[tuple[str, ...], Any] = {}
        self._series_index: dict[tuple[str, str, str], list[Series]] | None = None
        self._base: Context | None = None
        self._changed: frozenset[tuple[str, str]] = frozenset()
        if base is not None:
            self._inherit(base)

    def _inherit(self, base: Context) -> None:
        """Take `base` (the run's context) as a source of per-entity work for this what-if context: an entry is
        reused only when every entity it depends on (inventory item and its series) is the same in both."""
        if (
            base.snapshot.window != self.snapshot.window
            or base.now != self.now
            or base.snapshot.cluster != self.snapshot.cluster
        ):
            return
        changed: set[tuple[str, str]] = set()
        for kind, mine, theirs in (
            ("node", self._nodes, base._nodes),
            ("volume", self._volumes, base._volumes),
            ("instance", self._instances, base._instances),
        ):
            if mine.keys() != theirs.keys():
                return  # entities added or removed: lookups that scan the inventory differ
            changed |= {(kind, k) for k, v in mine.items() if theirs[k] is not v and theirs[k] != v}
        own_order = [id(s) for s in self.snapshot.series]
        base_order = [id(s) for s in base.snapshot.series]
        ours, theirs_ids = set(own_order), set(base_order)
        if own_order != base_order:
            if [i for i in own_order if i in theirs_ids] != [i for i in base_order if i in ours]:
                return  # the same series in another order: a lookup could find another one first
            changed |= {(s.entity.kind, s.entity.id) for s in base.snapshot.series if id(s) not in ours}
            changed |= {(s.entity.kind, s.entity.id) for s in self.snapshot.series if id(s) not in theirs_ids}
        self._base = base
        self._changed = frozenset(changed)

    def _reuse(self, key: tuple[str, ...], depends_on: tuple[tuple[str, str], ...]) -> bool:
        """Copy `key` from the base context when none of `depends_on` changed; True when it was copied."""
        base = self._base
        if base is None or key not in base._cache or any(d in self._changed for d in depends_on):
            return False
        self._cache[key] = base._cache[key]
        return True

    # --- inventory ------------------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        """Return the cluster block of the snapshot."""
        return self.snapshot.cluster

    @property
    def cluster_key(self) -> str:
        """Return what dedup keys name the cluster by: its stable id, else (a bare snapshot) its name."""
        return self.snapshot.cluster.id or self.snapshot.cluster.name

    @property
    def window(self) -> Window:
        """Return the snapshot window."""
        return self.snapshot.window

    @property
    def step_seconds(self) -> int:
        """Return the window's step in seconds."""
        return self.snapshot.window.step_seconds

    @property
    def points(self) -> int:
        """Return the number of steps in the window."""
        return self.snapshot.window.points

    @property
    def nodes(self) -> list[Node]:
        """Return the TiKV nodes."""
        return self.snapshot.nodes

    @property
    def volumes(self) -> list[Volume]:
        """Return the EBS volumes."""
        return self.snapshot.volumes

    @property
    def instances(self) -> list[Instance]:
        """Return the EC2 instances."""
        return self.snapshot.instances

    def node(self, node_id: str) -> Node:
        """Return a node by id."""
        return self._nodes[node_id]

    def volume(self, volume_id: str) -> Volume:
        """Return a volume by id."""
        return self._volumes[volume_id]

    def instance(self, instance_id: str) -> Instance:
        """Return an instance by id."""
        return self._instances[instance_id]

    def node_volumes(self, node_id: str, role: str | None = None) -> list[Volume]:
        """Return a node's data and raft volumes (only those of `role` when given)."""
        n = self.node(node_id)
        out = [self._volumes[v] for v in [*n.data_volume_ids, *n.raft_volume_ids] if v in self._volumes]
        return [v for v in out if role is None or v.role == role]

    def volumes_on_instance(self, instance_id: str) -> list[Volume]:
        """Return every volume attached to an instance (by the volume's instance_id or a node's lists)."""
        ids: dict[str, Volume] = {v.id: v for v in self.volumes if v.instance_id == instance_id}
        for n in self.nodes_on_instance(instance_id):
            for v in self.node_volumes(n.id):
                ids.setdefault(v.id, v)
        return list(ids.values())

    def nodes_on_instance(self, instance_id: str) -> list[Node]:
        """Return the TiKV nodes running on an instance."""
        return [n for n in self.nodes if n.instance_id == instance_id]

    def node_of_volume(self, volume_id: str) -> Node | None:
        """Return the node whose data or raft dir lives on the volume, if any."""
        for n in self.nodes:
            if volume_id in n.data_volume_ids or volume_id in n.raft_volume_ids:
                return n
        return None

    def entity_for_volume(self, volume_id: str) -> EntityRef:
        """Return the EntityRef of a volume, with its node and instance."""
        vol = self.volume(volume_id)
        n = self.node_of_volume(volume_id)
        return EntityRef(
            kind="volume",
            id=volume_id,
            volume_id=volume_id,
            node=n.id if n else None,
            instance_id=vol.instance_id or (n.instance_id if n else None),
            status_address=n.status_address if n else None,
        )

    def entity_for_instance(self, instance_id: str) -> EntityRef:
        """Return the EntityRef of an instance (with its node when exactly one runs there)."""
        on = self.nodes_on_instance(instance_id)
        return EntityRef(
            kind="instance",
            id=instance_id,
            instance_id=instance_id,
            node=on[0].id if len(on) == 1 else None,
            status_address=on[0].status_address if len(on) == 1 else None,
        )

    def entity_for_node(self, node_id: str) -> EntityRef:
        """Return the EntityRef of a TiKV node."""
        n = self.node(node_id)
        return EntityRef(
            kind="node", id=node_id, node=node_id, instance_id=n.instance_id, status_address=n.status_address
        )

    def cluster_entity(self) -> EntityRef:
        """Return the EntityRef of the whole cluster."""
        return EntityRef(kind="cluster", id=self.cluster.name)

    # --- series ---------------------------------------------------------------------------------

    def find_series(
        self, kind: str, entity_id: str, metric: str, labels: dict[str, str] | None = None
    ) -> Series | None:
        """Return the snapshot's series of one entity and metric (and labels), as `views.find_series` does."""
        if self._series_index is None:
            index: dict[tuple[str, str, str], list[Series]] = {}
            for s in self.snapshot.series:
                index.setdefault((s.entity.kind, s.entity.id, s.metric), []).append(s)
            self._series_index = index
        for s in self._series_index.get((kind, entity_id, metric), ()):
            if labels is None or all(s.labels.get(k) == v for k, v in labels.items()):
                return s
        return None

    def series(
        self, kind: str, entity_id: str, metric: str, labels: dict[str, str] | None = None
    ) -> Array | None:
        """Return a series on the window's grid (NaN for gaps), or None when the snapshot lacks it."""
        key = ("series", kind, entity_id, metric, repr(sorted((labels or {}).items())) if labels else "")
        if key not in self._cache and not self._reuse(key, ((kind, entity_id),)):
            s = self.find_series(kind, entity_id, metric, labels)
            self._cache[key] = None if s is None else self.aligned_series.get(s)
        result: Array | None = self._cache[key]
        return result

    def _io_view(self, kind: EntityKind, entity_id: str, chunk_kib: int) -> IoView | None:
        if self.find_series(kind, entity_id, IO_METRICS[kind][0]) is None:
            return None
        reused = self._same_io_view(kind, entity_id, chunk_kib)
        if reused is not None:
            return reused
        return io_view_of(kind, self.window, lambda metric: self.series(kind, entity_id, metric), chunk_kib)

    def _same_io_view(self, kind: EntityKind, entity_id: str, chunk_kib: int) -> IoView | None:
        """Return the base context's I/O view of a changed entity when it reads the very same series with the same
        chunk size (a gp2 volume made gp3 keeps its observed I/O: apply_changes drops only BurstBalance and the
        exceeded checks), else None."""
        base = self._base
        view = None if base is None else base._cache.get((f"{kind}_io", entity_id))
        if base is None or not isinstance(view, IoView) or view.chunk_kib != chunk_kib:
            return None
        read = (*IO_METRICS[kind], *(_VOLUME_IO_EXTRA if kind == "volume" else ()))
        if any(
            self.find_series(kind, entity_id, m) is not base.find_series(kind, entity_id, m) for m in read
        ):
            return None
        return view

    def volume_io(self, volume_id: str) -> IoView | None:
        """Return the derived I/O view of a volume (None without VolumeReadOps)."""
        key = ("volume_io", volume_id)
        if key not in self._cache and not self._reuse(key, (("volume", volume_id),)):
            vol = self._volumes.get(volume_id)
            self._cache[key] = (
                None if vol is None else self._io_view("volume", volume_id, io_chunk_kib(vol.type))
            )
        result: IoView | None = self._cache[key]
        return result

    def instance_io(self, instance_id: str) -> IoView | None:
        """Return the derived EBS I/O view of an instance (None without EBSReadOps)."""
        key = ("instance_io", instance_id)
        if key not in self._cache and not self._reuse(key, (("instance", instance_id),)):
            self._cache[key] = self._io_view("instance", instance_id, SSD_CHUNK_KIB)
        result: IoView | None = self._cache[key]
        return result

    def memo(
        self,
        key: tuple[str, ...],
        compute: Callable[[], T],
        depends_on: Sequence[tuple[str, str]] | None = None,
    ) -> T:
        """Return `compute()`, computed once per run for `key` (helpers shared by several rules use it).

        `depends_on`: the (kind, id) of every node, volume and instance the value is computed from (their inventory
        entries and series; the window, `now` and the cluster block always count). A what-if context (`base=`)
        takes the run's value when none of them changed. Without it the value is always computed here."""
        if key not in self._cache and not (depends_on is not None and self._reuse(key, tuple(depends_on))):
            self._cache[key] = compute()
        result: T = self._cache[key]
        return result

    # --- limits ---------------------------------------------------------------------------------

    def volume_limits(self, volume_id: str) -> VolumeLimits | None:
        """Return the catalog limits of a volume as configured (None when the catalog lacks the type)."""
        key = ("volume_limits", volume_id)
        if key not in self._cache and not self._reuse(key, (("volume", volume_id),)):
            vol = self.volume(volume_id)
            self._cache[key] = resolve_volume_limits(
                vol.type, vol.size_gib, vol.iops, vol.throughput_mibps, region=self.cluster.region
            ).limits
        result: VolumeLimits | None = self._cache[key]
        return result

    def resolved_instance_limits(self, instance_id: str) -> ResolvedInstanceLimits:
        """Return an instance's EBS limits with their origin (catalog, DescribeInstanceTypes, unknown) and note."""
        key = ("instance_limits", instance_id)
        if key not in self._cache and not self._reuse(key, (("instance", instance_id),)):
            inst = self.instance(instance_id)
            described = (
                DescribedType(inst.ebs_limits.model_dump(exclude={"source"}), inst.ebs_limits.source)
                if inst.ebs_limits is not None
                else None
            )
            self._cache[key] = resolve_instance_limits(inst.type, described)
        result: ResolvedInstanceLimits = self._cache[key]
        return result

    def instance_limits(self, instance_id: str) -> InstanceLimits | None:
        """Return the EBS limits of an instance (catalog, else the snapshot's DescribeInstanceTypes entry)."""
        return self.resolved_instance_limits(instance_id).limits

    def _attached(self, instance_id: str) -> tuple[list[VolumeLimits], bool]:
        """Return the known limits of the volumes on an instance and whether they form one RAID 0 stripe."""
        vols = [self.volume_limits(v.id) for v in self.volumes_on_instance(instance_id)]
        known = [v for v in vols if v is not None]
        raid = any(v.raid_group for v in self.volumes_on_instance(instance_id))
        return known, raid and len(known) > 1 and len(known) == len(vols)

    def node_ceilings(self, instance_id: str) -> NodeCeilings | None:
        """Return the instance's effective ceilings: its EBS limits vs the sum of its volumes (physics)."""
        inst = self.instance_limits(instance_id)
        if inst is None:
            return None
        known, raid0 = self._attached(instance_id)
        return node_ceilings(inst, known, raid0=raid0)

    def attached_volumes_ceiling(self, instance_id: str, dimension: IoDimension) -> Ceiling | None:
        """Return the sustained ceiling of an instance's volumes together (physics.ceilings.attached_volumes_ceiling:
        node_ceilings' `volumes` figure as a Ceiling); None without volumes of known types."""
        known, raid0 = self._attached(instance_id)
        return attached_volumes_ceiling(known, dimension, raid0=raid0)

    def volume_ceilings(self, volume_id: str) -> dict[IoDimension, list[Ceiling]] | None:
        """Return a volume's IOPS and MiB/s ceilings (physics.ceilings.volume_ceilings: the charts' and the glance
        table's, ids prefixed by the volume's role); None when the catalog lacks its type."""
        key = ("volume_ceilings", volume_id)
        if key not in self._cache and not self._reuse(key, (("volume", volume_id),)):
            lim = self.volume_limits(volume_id)
            self._cache[key] = None if lim is None else volume_ceilings(lim, self.volume(volume_id).role)
        result: dict[IoDimension, list[Ceiling]] | None = self._cache[key]
        return result

    def instance_ceilings(self, instance_id: str) -> dict[IoDimension, list[Ceiling]]:
        """Return an instance's EBS IOPS and MiB/s ceilings (physics.ceilings.instance_ceilings; empty lists for a
        type with no known limits)."""
        key = ("instance_ceilings", instance_id)
        if key not in self._cache and not self._reuse(key, (("instance", instance_id),)):
            self._cache[key] = instance_ceilings(self.resolved_instance_limits(instance_id))
        result: dict[IoDimension, list[Ceiling]] = self._cache[key]
        return result

    def volume_host_limit(self, volume_id: str, dimension: IoDimension) -> Ceiling | None:
        """Return the sustained EBS limit of the instance a volume is attached to in one dimension: the other limit
        its I/O meets (None: not attached, or the instance or its limits unknown)."""
        vol = self.volume(volume_id)
        if vol.instance_id is None or vol.instance_id not in self._instances:
            return None
        own = self.instance_ceilings(vol.instance_id)[dimension]
        return sustained(own) if own else None

    def volume_headroom_pct(self, volume_id: str, dimension: IoDimension, limit: float) -> float | None:
        """Return a volume's headroom under `limit` (its sustained ceiling, or one a fix gives it): the window's p99
        of its counted IOPS or MiB/s against the smaller of `limit` and its instance's sustained EBS limit
        (physics.ceilings.observed_p99 and headroom_pct). The one figure the what-if's row and the findings show
        (docs/thresholds/burst.md#headroom); None without I/O or a positive limit."""
        view = self.volume_io(volume_id)
        if view is None:
            return None
        host = self.volume_host_limit(volume_id, dimension)
        values = view.counted_iops if dimension == "iops" else view.mibps
        return headroom_pct(observed_p99(values), limit, host.value if host is not None else None)

    def _burst_balance(self, volume_id: str) -> Array | None:
        """Return a volume's BurstBalance on the window's grid, or None without the series."""
        return self.series("volume", volume_id, mid.EBS_BURST_BALANCE)

    def volume_iops_ceiling(self, volume_id: str) -> Array | None:
        """Return the IOPS ceiling in force per step: gp2 burst while credits remain, else baseline
        (physics.ceilings.volume_in_force, the one rule;
        docs/reference/gp2-burst.md#the-credit-bucket)."""
        lim = self.volume_limits(volume_id)
        view = self.volume_io(volume_id)
        if lim is None or view is None:
            return None
        return volume_in_force(lim, "iops", self._burst_balance(volume_id), len(view.counted_iops))

    def volume_mibps_ceiling(self, volume_id: str) -> Array | None:
        """Return the MiB/s ceiling in force per step (gp2 170-334 GiB and st1/sc1 burst while credits remain)."""
        lim = self.volume_limits(volume_id)
        view = self.volume_io(volume_id)
        if lim is None or view is None:
            return None
        return volume_in_force(lim, "throughput", self._burst_balance(volume_id), len(view.mibps))

    # --- the lookback (cuts are judged on it; headroom.domain.snapshot.lookback) ------------------

    @property
    def lookback_days(self) -> int:
        """Return the lookback in days a cut is judged on: the snapshot's, else the default (14)."""
        return self.snapshot.lookback.days if self.snapshot.lookback is not None else DEFAULT_LOOKBACK_DAYS

    def lookback_peak(self, kind: str, entity_id: str) -> LookbackPeak | None:
        """Return an entity's peak over the lookback, or None when the snapshot carries none for it."""
        if self.snapshot.lookback is None:
            return None
        key = ("lookback_index",)
        if key not in self._cache:
            self._cache[key] = {(p.entity.kind, p.entity.id): p for p in self.snapshot.lookback.peaks}
        index: dict[tuple[str, str], LookbackPeak] = self._cache[key]
        return index.get((kind, entity_id))

    def history_days(self, kind: str, entity_id: str) -> float:
        """Return the days of history behind an entity: the lookback's count, else the window's length."""
        window_days = (self.window.end - self.window.start).total_seconds() / 86400.0
        found = self.lookback_peak(kind, entity_id)
        return window_days if found is None else max(found.history_days, window_days)

    # --- TiKV config ----------------------------------------------------------------------------

    def _flat_config(self, node_id: str) -> dict[str, Any]:
        key = ("flat_config", node_id)
        if key not in self._cache and not self._reuse(key, (("node", node_id),)):
            self._cache[key] = flatten(self.node(node_id).config)
        result: dict[str, Any] = self._cache[key]
        return result

    def config(self, node_id: str, key: str) -> EffectiveValue:
        """Return a key's effective value on a node: its config, else the default of its TiKV version."""
        n = self.node(node_id)
        host = HostFacts(cpus=n.vcpus, memory_bytes=int(n.memory_gib * GIB))
        return effective_value(key, self._flat_config(node_id), n.tikv_version, host)

    def config_bytes(self, node_id: str, key: str) -> int | None:
        """Return a size-valued key on a node in bytes (None when unknown or not a size)."""
        value = self.config(node_id, key).value
        if isinstance(value, bool) or not isinstance(value, str | int):
            return None
        try:
            return parse_size(value)
        except UnitError:
            return None

    # --- text -----------------------------------------------------------------------------------

    def window_text(self) -> str:
        """Return the window as text, e.g. "2026-01-05 00:00 to 2026-01-06 00:00 UTC (24 h, 60 s steps)"."""
        w = self.window
        hours = (w.end - w.start).total_seconds() / 3600.0
        fmt = "%Y-%m-%d %H:%M"
        return f"{w.start.strftime(fmt)} to {w.end.strftime(fmt)} UTC ({format_duration_words(hours * 3600)}, {w.step_seconds} s steps)"


def minutes(points: int, step_seconds: int) -> float:
    """Convert a number of points to minutes."""
    return points * step_seconds / 60.0


def nan_to_none(x: float) -> float | None:
    """Return None for NaN (JSON has no NaN), else the float."""
    return None if np.isnan(x) else float(x)

"""Build the advisor's Snapshot of one cluster from the store: inventory rows, each node's latest config
version and the series' points over a window. The inverse of services.demo, which writes a simulated snapshot
into the same tables.

Choices:
- Raw points, never rollups (timeseries.read_grid): the advisor's rules look at minutes at a ceiling and
  burst-bucket drains, which 5-minute averages would smooth away. Raw points are kept 35 days, and a window is
  capped at MAX_WINDOW (7 days), so the raw rows always exist.
- Each series keeps its own period: a series is read at max(window step, its stored step) (metric_series
  .step_seconds: 300 for AWS/EC2 on basic monitoring and for the EC2 balances, 60 for AWS/EBS and Prometheus).
  A 5-minute Sum stays one Sum per 5 minutes (Series.step_seconds = 300, starting at the 5-minute boundary at or
  before the window's start), so its rate is Sum / 300, never Sum / 60; the advisor aligns series of different
  steps to the window (headroom.domain.snapshot.align, docs/series-alignment.md). A step above the stored one
  aggregates the stored points per step with the series' statistic (Sum -> sum, Minimum -> min, Maximum/p99 ->
  max, else the mean: a count of CPUs is a level, not a total).
- An instance's EBS limits come from the one resolver (inventory.limits): when the catalog lacks its type and
  the account's DescribeInstanceTypes answer has it, the snapshot carries that answer (Instance.ebs_limits), so
  the advisor judges by the same limits the nodes API and the charts show.
- A snapshot node's id is its store address: the DB keeps no TiUP instance name, and the store address is the
  entity id its series are stored under (services.demo), so findings on nodes address the same id everywhere.
- A node's host is its EC2 instance id (nodes on one instance share its EBS limits).
- A node's data (raft) volumes are every data (raft) volume attached to its instance when it is the only node
  there (a RAID 0 array is several volumes), else the one volume its row references.
- Series with no point in the window, of a metric the registry does not know, or about an entity that is not in
  the inventory are left out (the Snapshot model would refuse them).
- `with_lookback` adds the lookback block (headroom.domain.snapshot.lookback): each volume's and instance's peak
  counted IOPS and MiB/s over the last 14, 32 or 93 days, from the 5-minute and hourly rollups (kept 400 days by
  default), counted by the advisor's own derivation; and how many days of history there are.
Callers commit (nothing is written here).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from collections import defaultdict
from collections.abc import Collection, Sequence
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from headroom.clusters.models import Cluster
from headroom.domain.catalog.resolve import ResolvedInstanceLimits
from headroom.domain.snapshot.align import method_of
from headroom.domain.derived import io_chunk_kib
from headroom.domain.physics.io import SSD_CHUNK_KIB
from headroom.domain.snapshot.lookback import history_days, peak_over
from headroom.domain.snapshot.metric_ids import NODE_FS_SIZE_BYTES
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.snapshot.schema import (
    SCHEMA_VERSION,
    DescribedEbsLimits,
    Entity,
    EntityKind,
    Lookback,
    LookbackDays,
    Node,
    Series,
    Snapshot,
    Source,
    Window,
)
from headroom.domain.snapshot.views import IO_METRICS
from headroom.domain.snapshot.schema import Cluster as SnapshotCluster
from headroom.domain.snapshot.schema import Instance as SnapshotInstance
from headroom.domain.snapshot.schema import Volume as SnapshotVolume
from headroom.inventory.limits import resolve_instance_types
from headroom.inventory.models import Instance, TikvConfig, TikvNode, Volume
from headroom.platform.errors import InvalidInput, NotFound
from headroom.timeseries import repository as timeseries

MAX_WINDOW = dt.timedelta(days=7)
# An hourly snapshot is read from the hourly rollups (kept 400 days by default): long enough for two weekly
# seasons and a trend, as projections fit (headroom.domain.forecast.growth caps its history at 8 weeks).
HOURLY_STEP_SECONDS = 3600
MAX_HOURLY_WINDOW = dt.timedelta(weeks=8)
RAW_STEP_SECONDS = 60
DEFAULT_REGION = "us-east-1"
# metric_series.entity_kind -> snapshot entity kind
SNAPSHOT_KIND = {"tikv_node": "node", "volume": "volume", "instance": "instance"}
VOLUME_TYPES = frozenset({"gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"})
DEPLOYMENTS = frozenset({"tiup", "operator", "manual"})


def _minute_floor(ts: dt.datetime) -> dt.datetime:
    return ts.astimezone(dt.UTC).replace(second=0, microsecond=0)


def _natural(text_value: str | None) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text_value or "")]


def check_window(start: dt.datetime, end: dt.datetime, step_seconds: int) -> tuple[dt.datetime, dt.datetime]:
    """Return the window floored to whole minutes; raise InvalidInput naming the bad parameter."""
    if start.tzinfo is None or end.tzinfo is None:
        raise InvalidInput("start/end: give a timezone (e.g. 2026-11-02T12:00:00Z)", details={"field": "start"})
    start, end = _minute_floor(start), _minute_floor(end)
    if end <= start:
        raise InvalidInput("end: must be at least one minute after start", details={"field": "end"})
    longest = MAX_HOURLY_WINDOW if step_seconds == HOURLY_STEP_SECONDS else MAX_WINDOW
    if end - start > longest:
        raise InvalidInput(f"end: the window may span at most {longest.days} days at a step of {step_seconds} s",
                           details={"field": "end"})
    if step_seconds < RAW_STEP_SECONDS or step_seconds % RAW_STEP_SECONDS:
        raise InvalidInput("step_seconds: must be a positive multiple of 60", details={"field": "step_seconds"})
    if step_seconds == HOURLY_STEP_SECONDS and start.timestamp() % HOURLY_STEP_SECONDS:
        raise InvalidInput("start: an hourly window starts on the hour (e.g. 2026-11-02T12:00:00Z)",
                           details={"field": "start"})
    return start, end


def build_snapshot(
    db: Session,
    org_id: uuid.UUID,
    cluster_id: uuid.UUID,
    *,
    start: dt.datetime,
    end: dt.datetime,
    step_seconds: int = RAW_STEP_SECONDS,
    hosts_of: Collection[tuple[str, str]] | None = None,
    metrics: Collection[str] | None = None,
) -> Snapshot:
    """Return the org's cluster as a Snapshot over [start, end) (another org's cluster is NotFound).

    `hosts_of`: (snapshot entity kind, id) pairs; when given, the snapshot holds the whole inventory but only the
    series of the hosts those entities are on (each one's EC2 instance, that instance's volumes and stores), which
    is what a view of one of them reads (domain/advisor/context.py: a volume's and an instance's I/O, their
    ceilings). A finding's chart reads a few series of one host, not the cluster's hundreds.

    `metrics`: when given, only the series of those metrics (the whole inventory still): what a view that needs a
    few of the advisor's numbers reads, e.g. the burst forecasts (headroom.domain.advisor.buckets)."""
    start, end = check_window(start, end, step_seconds)
    cluster = db.scalar(select(Cluster).where(Cluster.id == cluster_id, Cluster.org_id == org_id))
    if cluster is None:
        raise NotFound("Cluster not found.")
    nodes = list(
        db.scalars(select(TikvNode).where(TikvNode.org_id == org_id, TikvNode.cluster_id == cluster.id))
    )
    volume_rows = list(db.scalars(select(Volume).where(Volume.org_id == org_id, Volume.cluster_id == cluster.id)))
    instance_refs = {n.instance_ref_id for n in nodes} | {v.instance_ref_id for v in volume_rows}
    instance_rows = list(
        db.scalars(
            select(Instance).where(
                Instance.org_id == org_id,
                (Instance.cluster_id == cluster.id) | Instance.id.in_([i for i in instance_refs if i is not None]),
            )
        )
    )
    instances_by_ref = {i.id: i for i in instance_rows}
    volumes_by_ref = {v.id: v for v in volume_rows}
    configs = latest_configs(db, org_id, [n.id for n in nodes])
    limits = resolve_instance_types(db, {i.instance_type for i in instance_rows})

    instances = [
        SnapshotInstance(
            id=i.instance_id,
            type=i.instance_type,
            vcpus=max(int(i.vcpus or 1), 1),
            memory_gib=float(i.memory_gib or 1.0),
            availability_zone=i.availability_zone,
            name=(i.tags or {}).get("Name"),
            ebs_limits=_described(limits[i.instance_type]),
        )
        for i in sorted(instance_rows, key=lambda i: i.instance_id)
    ]
    volumes = [
        SnapshotVolume(
            id=v.volume_id,
            type=v.volume_type,
            size_gib=float(v.size_gib),
            iops=v.iops,
            throughput_mibps=float(v.throughput_mibps) if v.throughput_mibps is not None else None,
            instance_id=instances_by_ref[v.instance_ref_id].instance_id
            if v.instance_ref_id in instances_by_ref
            else None,
            device=v.device,
            role=v.role,
            raid_group=(v.tags or {}).get("headroom.raid_group"),
        )
        for v in sorted(volume_rows, key=lambda v: v.volume_id)
        if v.volume_type in VOLUME_TYPES and v.size_gib > 0
    ]
    known_volumes = {v.id for v in volumes}
    nodes_per_instance: dict[uuid.UUID | None, int] = defaultdict(int)
    for n in nodes:
        nodes_per_instance[n.instance_ref_id] += 1

    def attached(node: TikvNode, role: str, ref: uuid.UUID | None) -> list[str]:
        if node.instance_ref_id is not None and nodes_per_instance[node.instance_ref_id] == 1:
            on_host = [v for v in volume_rows if v.instance_ref_id == node.instance_ref_id and v.role == role]
            if on_host:
                return [v.volume_id for v in sorted(on_host, key=lambda v: _natural(v.device))
                        if v.volume_id in known_volumes]
        row = volumes_by_ref.get(ref) if ref is not None else None
        return [row.volume_id] if row is not None and row.volume_id in known_volumes else []

    snapshot_nodes: list[Node] = []
    for n in sorted(nodes, key=lambda n: _natural(n.store_address)):
        inst = instances_by_ref.get(n.instance_ref_id) if n.instance_ref_id is not None else None
        if inst is None:
            continue  # a node the collectors have not matched to an EC2 instance yet: nothing to advise on
        config = configs.get(n.id)
        snapshot_nodes.append(
            Node(
                id=n.store_address,
                store_id=n.store_id,
                address=n.store_address,
                status_address=n.status_address or _status_address(n.store_address),
                instance_id=inst.instance_id,
                instance_type=inst.instance_type,
                vcpus=max(int(inst.vcpus or 1), 1),
                memory_gib=float(inst.memory_gib or 1.0),
                tikv_version=n.version or cluster.tikv_version,
                host=inst.instance_id,
                data_volume_ids=attached(n, "data", n.data_volume_ref_id),
                raft_volume_ids=attached(n, "raft", n.raft_volume_ref_id),
                config=dict(config.config) if config is not None else {},
            )
        )
    known = {
        "node": {n.id for n in snapshot_nodes},
        "volume": known_volumes,
        "instance": {i.id for i in instances},
    }
    if hosts_of is not None:
        known = _on_hosts(known, hosts_of, snapshot_nodes, volumes)
    window = Window(start=start, end=end, step_seconds=step_seconds)
    regions = sorted({i.region for i in instance_rows if i.region})
    is_demo = cluster.is_demo
    return Snapshot(
        schema_version=SCHEMA_VERSION,
        generated_at=end,
        source=Source(kind="demo" if is_demo else "collected", tool="headroom"),
        cluster=SnapshotCluster(
            name=cluster.name,
            id=str(cluster.id),
            tikv_version=cluster.tikv_version,
            deployment=cluster.deployment_kind if cluster.deployment_kind in DEPLOYMENTS else "unknown",
            region=regions[0] if regions else DEFAULT_REGION,
        ),
        window=window,
        nodes=snapshot_nodes,
        instances=instances,
        volumes=volumes,
        series=_series(db, org_id, cluster.id, window, known, metrics),
    )


def _on_hosts(known: dict[str, set[str]], named: Collection[tuple[str, str]], nodes: list[Node],
              volumes: list[SnapshotVolume]) -> dict[str, set[str]]:
    """The entities of `known` on the hosts (EC2 instances) of the `named` ones, and the named ones."""
    host_of: dict[tuple[str, str], str | None] = {("node", n.id): n.instance_id for n in nodes}
    host_of |= {("volume", v.id): v.instance_id for v in volumes}
    hosts = {host_of.get((kind, eid)) for kind, eid in named} | {eid for kind, eid in named if kind == "instance"}
    hosts.discard(None)
    wanted = {
        "node": {n.id for n in nodes if n.instance_id in hosts} | {e for k, e in named if k == "node"},
        "volume": {v.id for v in volumes if v.instance_id in hosts} | {e for k, e in named if k == "volume"},
        "instance": {str(h) for h in hosts},
    }
    return {kind: ids & wanted[kind] for kind, ids in known.items()}


def _described(resolved: ResolvedInstanceLimits) -> DescribedEbsLimits | None:
    """The DescribeInstanceTypes limits a snapshot carries for a type the catalog lacks (None otherwise)."""
    lim = resolved.limits
    if lim is None or resolved.origin != "describe_instance_types":
        return None
    return DescribedEbsLimits(
        baseline_bandwidth_mbps=lim.baseline_bandwidth_mbps,
        max_bandwidth_mbps=lim.max_bandwidth_mbps,
        baseline_iops=lim.baseline_iops,
        max_iops=lim.max_iops,
        source=resolved.note,
    )


def _status_address(store_address: str) -> str:
    host, _, _port = store_address.rpartition(":")
    return f"{host or store_address}:20180"


def node_filesystems(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> dict[str, dict[str, str | None]]:
    """Each TiKV node's filesystems as node_exporter reported them (the series of node.fs_size_bytes): node id (its
    store address) -> {mount point: fstype, None when stored before the fstype label was collected}."""
    out: dict[str, dict[str, str | None]] = {}
    for s in timeseries.cluster_series(db, org_id, cluster_id):
        if s.metric != NODE_FS_SIZE_BYTES or SNAPSHOT_KIND.get(s.entity_kind) != "node" or "mountpoint" not in s.labels:
            continue
        mounts = out.setdefault(s.entity_id, {})
        if s.labels.get("fstype") or s.labels["mountpoint"] not in mounts:
            mounts[s.labels["mountpoint"]] = s.labels.get("fstype") or None
    return out


def latest_configs(db: Session, org_id: uuid.UUID, node_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, TikvConfig]:
    """Return each node's newest config version (nodes without one are absent)."""
    if not node_ids:
        return {}
    newest = (
        select(TikvConfig.node_id, func.max(TikvConfig.version).label("version"))
        .where(TikvConfig.org_id == org_id, TikvConfig.node_id.in_(list(node_ids)))
        .group_by(TikvConfig.node_id)
        .subquery()
    )
    rows = db.scalars(
        select(TikvConfig).join(
            newest, (TikvConfig.node_id == newest.c.node_id) & (TikvConfig.version == newest.c.version)
        )
    )
    return {row.node_id: row for row in rows}


def series_grid(window: Window, step_seconds: int) -> tuple[dt.datetime, dt.datetime]:
    """Return the [start, end) a series of `step_seconds` is read over for a window: the window itself at the
    window's step; a coarser step starts at its boundary at or before the window's start (epoch multiples, as
    CloudWatch's periods of a period-aligned request) and ends with the period that holds the window's end."""
    if step_seconds == window.step_seconds:
        return window.start, window.start + dt.timedelta(seconds=window.points * step_seconds)
    epoch = int(window.start.timestamp())
    start = dt.datetime.fromtimestamp(epoch - epoch % step_seconds, dt.UTC)
    periods = math.ceil((window.end - start).total_seconds() / step_seconds)
    return start, start + dt.timedelta(seconds=periods * step_seconds)


def _series(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, window: Window, known: dict[str, set[str]],
    metrics: Collection[str] | None = None,
) -> list[Series]:
    # Only the metrics asked for are read (the burst forecasts ask for a few of a cluster's ~380 series).
    stored = (timeseries.cluster_series(db, org_id, cluster_id) if metrics is None
              else timeseries.cluster_series_of_metrics(db, org_id, cluster_id, metrics))
    rows = [
        s
        for s in stored
        if s.metric in REGISTRY
        and (metrics is None or s.metric in metrics)
        and SNAPSHOT_KIND.get(s.entity_kind) == REGISTRY[s.metric].entity
        and REGISTRY[s.metric].unit == s.unit
        and s.entity_id in known[SNAPSHOT_KIND[s.entity_kind]]
    ]
    if not rows:
        return []
    step_of = {s.id: max(window.step_seconds, s.step_seconds) for s in rows}
    grids: dict[int, NDArray[np.float64]] = {}
    starts: dict[int, dt.datetime] = {}
    for step in sorted(set(step_of.values())):
        group = [s for s in rows if step_of[s.id] == step]
        lo, hi = series_grid(window, step)
        if step == HOURLY_STEP_SECONDS == window.step_seconds:
            wanted = {s.id: (method_of(REGISTRY[s.metric].statistic), s.step_seconds) for s in group}
            grids.update(timeseries.read_hourly_grid(db, org_id, wanted, lo, hi))
        else:
            grids.update(
                timeseries.read_grid(
                    db, org_id, {s.id: method_of(REGISTRY[s.metric].statistic) for s in group}, lo, hi, step
                )
            )
        starts.update({s.id: lo for s in group})
    out: list[Series] = []
    for s in sorted(rows, key=lambda s: (s.entity_kind, s.entity_id, s.metric, sorted(s.labels.items()))):
        grid = grids.get(s.id)
        if grid is None:
            continue
        out.append(
            Series.from_array(
                grid,
                entity=Entity(kind=SNAPSHOT_KIND[s.entity_kind], id=s.entity_id),
                metric=s.metric,
                unit=s.unit,
                statistic=REGISTRY[s.metric].statistic,
                labels=dict(s.labels),
                start=starts[s.id],
                step_seconds=step_of[s.id],
            )
        )
    return out


FIVE_MINUTES = 300


def with_lookback(db: Session, org_id: uuid.UUID, snapshot: Snapshot, days: LookbackDays) -> Snapshot:
    """Return the snapshot with its lookback block: every volume's and instance's peak over the `days` before the
    window's end, from the 5-minute and the hourly rollups (the hourly ones also where 5-minute rows are missing,
    e.g. a backfilled history), and the days of history behind each (from its first hourly point)."""
    end = snapshot.window.end
    since = end - dt.timedelta(days=days)
    hour_start = dt.datetime.fromtimestamp(int(since.timestamp()) // 3600 * 3600, dt.UTC)
    fine_start = dt.datetime.fromtimestamp(int(since.timestamp()) // FIVE_MINUTES * FIVE_MINUTES, dt.UTC)
    entities: list[tuple[EntityKind, str, int]] = [
        ("volume", v.id, io_chunk_kib(v.type)) for v in snapshot.volumes
    ] + [("instance", i.id, SSD_CHUNK_KIB) for i in snapshot.instances]
    identities = [(kind, eid, metric) for kind, eid, _ in entities for metric in IO_METRICS[kind]]
    stored = timeseries.find_series(db, org_id, identities)
    wanted = {s.id: (method_of(REGISTRY[s.metric].statistic), s.step_seconds) for s in stored.values()}
    hourly = timeseries.read_rollup_grid(db, org_id, wanted, hour_start, end, 3600) if wanted else {}
    fine = timeseries.read_rollup_grid(db, org_id, wanted, fine_start, end, FIVE_MINUTES) if wanted else {}
    hour_grid = Window(start=hour_start, end=end, step_seconds=3600)
    fine_grid = Window(start=fine_start, end=end, step_seconds=FIVE_MINUTES)
    peaks = []
    for kind, eid, chunk in entities:
        ids = {metric: stored[(kind, eid, metric)].id for metric in IO_METRICS[kind] if (kind, eid, metric) in stored}
        first_ops = hourly.get(ids.get(IO_METRICS[kind][0], -1))
        if first_ops is None:
            continue
        seen = np.flatnonzero(~np.isnan(first_ops))
        first = hour_start + dt.timedelta(hours=int(seen[0])) if seen.size else None
        grids = [(fine_grid, partial(_grid_of, fine, ids)), (hour_grid, partial(_grid_of, hourly, ids))]
        peaks.append(peak_over(kind, eid, grids, chunk, history_days(first, end, days)))
    return snapshot.model_copy(update={"lookback": Lookback(days=days, end=end, peaks=peaks)})


def _grid_of(grids: dict[int, NDArray[np.float64]], ids: dict[str, int], metric: str) -> NDArray[np.float64] | None:
    return grids.get(ids.get(metric, -1))

"""AWS ingest: sync the EC2 inventory (with change history) and pull CloudWatch series into the store.

Callers commit, except that `run_backfill` calls `checkpoint()` after each planned request so progress is
visible and a killed worker keeps what it wrote; its successor resumes at the first request not stored. Every write is idempotent (natural keys, slot-merging points, forward-only
watermarks), so re-running any window or a killed task leaves the same rows.

Windows: the incremental sweep reads from the oldest watermark minus `OVERLAP` (10 minutes) to the current
minute, widened to whole 5-minute periods (GetMetricData reference: align StartTime/EndTime with the period).
Why 10 minutes: AWS service metrics become readable some minutes after the minute they describe; the stored
material has no AWS page giving a bound, and the one explicit figure found is third-party: "up to 10 minutes
from the time the event or measurement occurs to when the data is available" (OpsRamp, "Cloud metrics delay
and monitoring", docs.opsramp.com). Re-reading 10 minutes costs no extra call or billed metric (the window stays
under 201 points: one page per 500 series; billing is per metric requested, docs/reference/cloudwatch.md#pricing), and write_points
merges slots, so late points fill in and re-read ones change nothing.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from headroom.clusters.models import Cluster
from headroom.domain.catalog.instance_types import entries_from_describe_instance_types
from headroom.inventory.limits import resolve_instance_types
from headroom.inventory.models import Instance, InstanceTypeLimits, InventoryChange, TikvNode, Volume
from headroom.platform.logging import get_logger
from headroom.sources.aws import cloudwatch as cw
from headroom.sources.aws.ec2_inventory import (
    INSTANCE_FIELDS,
    VOLUME_FIELDS,
    InstanceInfo,
    VolumeInfo,
    diff_fields,
    fetch_inventory,
    match_node,
    volume_roles,
)
from headroom.sources.aws.metric_plan import (
    PlannedRequest,
    SweepPlan,
    lower_bound,
    plan_sweep,
    plan_window,
    points_in,
)
from headroom.sources.aws.session import AwsClients
from headroom.sources.health import redact_error
from headroom.sources.models import AwsBackfill, AwsConnection, BackfillStep, CollectionSweep
from headroom.timeseries import repository as timeseries
from headroom.timeseries.repository import SeriesKey, ensure_series, write_points
from headroom.timeseries.watermarks import advance_watermarks, get_watermarks

log = get_logger("headroom.sources.aws.ingest")

SOURCE_KIND = "cloudwatch"
OVERLAP = dt.timedelta(minutes=10)
# CloudWatch keeps 1-minute data for 15 days (docs/reference/cloudwatch.md#retention); a catch-up never reaches further.
MAX_LOOKBACK = dt.timedelta(days=15) - dt.timedelta(hours=1)
DEFAULT_BACKFILL_DAYS = 14
TYPE_LIMITS_TTL = dt.timedelta(days=7)


def floor_minute(ts: dt.datetime) -> dt.datetime:
    return ts.astimezone(dt.UTC).replace(second=0, microsecond=0)


# --- inventory -------------------------------------------------------------------------------------------


@dataclass
class InventorySummary:
    instances: int = 0
    volumes: int = 0
    changes: int = 0
    nodes_matched: int = 0
    api_calls: int = 0


def _known_types(db: Session, now: dt.datetime) -> set[str]:
    rows = db.scalars(select(InstanceTypeLimits.instance_type).where(
        InstanceTypeLimits.observed_at >= now - TYPE_LIMITS_TTL))
    return set(rows)


def _volume_attrs(v: VolumeInfo) -> dict[str, Any]:
    return {"volume_type": v.volume_type, "size_gib": v.size_gib, "iops": v.iops,
            "throughput_mibps": v.throughput_mibps, "attached_instance_id": v.attached_instance_id,
            "device": v.device}


def sync_inventory(db: Session, connection: AwsConnection, clients: AwsClients, now: dt.datetime) -> InventorySummary:
    """Describe the region's instances and volumes, upsert them, and log every field that changed."""
    inv = fetch_inventory(clients.ec2(), known_types=_known_types(db, now))
    summary = InventorySummary(instances=len(inv.instances), volumes=len(inv.volumes), api_calls=inv.api_calls)
    for entry in entries_from_describe_instance_types(inv.instance_type_pages):
        db.merge(InstanceTypeLimits(instance_type=entry["name"], entry=entry, region=clients.region,
                                    observed_at=now))
    types = {r.instance_type: r.entry for r in db.scalars(select(InstanceTypeLimits).where(
        InstanceTypeLimits.instance_type.in_({i.instance_type for i in inv.instances})))}
    org = connection.org_id

    existing_instances = {r.instance_id: r for r in db.scalars(select(Instance).where(
        Instance.org_id == org, Instance.instance_id.in_([i.instance_id for i in inv.instances])))}
    changes: list[InventoryChange] = []
    by_instance_id: dict[str, Instance] = {}
    for info in inv.instances:
        row = existing_instances.get(info.instance_id)
        entry = types.get(info.instance_type) or {}
        if row is None:
            row = Instance(org_id=org, instance_id=info.instance_id, instance_type=info.instance_type,
                           first_seen_at=now)
            db.add(row)
        else:
            for ch in diff_fields("instance", info.instance_id, {"instance_type": row.instance_type},
                                  {"instance_type": info.instance_type}, INSTANCE_FIELDS):
                changes.append(InventoryChange(org_id=org, aws_connection_id=connection.id, entity_kind="instance",
                                               entity_id=ch.entity_id, field=ch.field, old_value=ch.old,
                                               new_value=ch.new, observed_at=now))
        row.aws_connection_id = connection.id
        row.instance_type = info.instance_type
        row.region = clients.region
        row.availability_zone = info.availability_zone
        row.private_ip = info.private_ip
        row.private_dns = info.private_dns
        row.vcpus = entry.get("vcpus")
        row.memory_gib = entry.get("memory_gib")
        row.tags = {**info.tags, "headroom:monitoring": "detailed" if info.detailed_monitoring else "basic"}
        row.last_seen_at = now
        by_instance_id[info.instance_id] = row
    db.flush()

    roles = volume_roles(inv.instances, inv.volumes)
    existing_volumes = {r.volume_id: r for r in db.scalars(select(Volume).where(
        Volume.org_id == org, Volume.volume_id.in_([v.volume_id for v in inv.volumes])))}
    ref_to_instance = {r.id: r.instance_id for r in by_instance_id.values()}
    for vinfo in inv.volumes:
        vrow = existing_volumes.get(vinfo.volume_id)
        new_attrs = _volume_attrs(vinfo)
        if vrow is None:
            vrow = Volume(org_id=org, volume_id=vinfo.volume_id, first_seen_at=now)
            db.add(vrow)
        else:
            old_attrs = {"volume_type": vrow.volume_type, "size_gib": vrow.size_gib, "iops": vrow.iops,
                         "throughput_mibps": vrow.throughput_mibps,
                         "attached_instance_id": ref_to_instance.get(vrow.instance_ref_id)
                         if vrow.instance_ref_id else None, "device": vrow.device}
            for ch in diff_fields("volume", vinfo.volume_id, old_attrs, new_attrs, VOLUME_FIELDS):
                changes.append(InventoryChange(org_id=org, aws_connection_id=connection.id, entity_kind="volume",
                                               entity_id=ch.entity_id, field=ch.field, old_value=ch.old,
                                               new_value=ch.new, observed_at=now))
        attached = by_instance_id.get(vinfo.attached_instance_id or "")
        vrow.volume_type = vinfo.volume_type
        vrow.size_gib = vinfo.size_gib
        vrow.iops = vinfo.iops
        vrow.throughput_mibps = vinfo.throughput_mibps
        vrow.instance_ref_id = attached.id if attached else None
        vrow.device = vinfo.device
        vrow.role = roles.get(vinfo.volume_id, "other")
        vrow.availability_zone = vinfo.availability_zone
        vrow.tags = vinfo.tags
        vrow.cluster_id = attached.cluster_id if attached else vrow.cluster_id
        vrow.last_seen_at = now
    db.add_all(changes)
    summary.changes = len(changes)
    db.flush()
    summary.nodes_matched = _match_nodes(db, org, inv.instances, by_instance_id)
    return summary


def _match_nodes(db: Session, org: uuid.UUID, instances: Sequence[InstanceInfo],
                 by_instance_id: dict[str, Instance]) -> int:
    matched = 0
    nodes = db.execute(select(TikvNode, Cluster.name).join(Cluster, Cluster.id == TikvNode.cluster_id)
                       .where(TikvNode.org_id == org)).all()
    for node, cluster_name in nodes:
        instance_id = match_node(node.store_address, instances, cluster_name)
        if instance_id is None or instance_id not in by_instance_id:
            continue
        inst = by_instance_id[instance_id]
        node.instance_ref_id = inst.id
        inst.cluster_id = node.cluster_id
        vols = list(db.scalars(select(Volume).where(Volume.org_id == org, Volume.instance_ref_id == inst.id)))
        for v in vols:
            v.cluster_id = node.cluster_id
            if v.role == "data":
                node.data_volume_ref_id = v.id
            elif v.role == "raft":
                node.raft_volume_ref_id = v.id
        if node.raft_volume_ref_id is None and node.data_volume_ref_id is not None:
            node.raft_volume_ref_id = node.data_volume_ref_id  # Raft log shares the data volume
        matched += 1
    db.flush()
    return matched


# --- metrics ---------------------------------------------------------------------------------------------


def is_tikv_instance(instance: Instance) -> bool:
    """Metrics cost money per series: only instances mapped to a TiKV node or tagged as TiKV are swept."""
    tags = instance.tags or {}
    return instance.cluster_id is not None or tags.get("component", "").lower() == "tikv" or any(
        tags.get(k, "").lower() == "tikv" for k in ("tikv", "role", "Role", "headroom:role"))


def queries_for(db: Session, connection: AwsConnection, region: str) -> tuple[list[cw.MetricQuery], dict[str, Any]]:
    """The CloudWatch queries of a region's TiKV instances and of their data and raft volumes (not root disks)."""
    instances = [
        i for i in db.scalars(select(Instance).where(
            Instance.org_id == connection.org_id, Instance.aws_connection_id == connection.id,
            Instance.region == region).order_by(Instance.instance_id))
        if is_tikv_instance(i)
    ]
    refs = {i.id: i for i in instances}
    volumes = list(db.scalars(select(Volume).where(Volume.org_id == connection.org_id,
                                                   Volume.instance_ref_id.in_(list(refs)),
                                                   Volume.role.in_(("data", "raft")))
                              .order_by(Volume.volume_id))) if refs else []
    queries: list[cw.MetricQuery] = []
    clusters: dict[str, Any] = {}
    limits = resolve_instance_types(db, {i.instance_type for i in instances})
    for inst in instances:
        known = limits[inst.instance_type].limits
        bursts = known.bursts if known is not None else None
        queries += cw.queries_for_instance(
            inst.instance_id, detailed_monitoring=inst.tags.get("headroom:monitoring") == "detailed",
            bursts=bursts, bare_metal="metal" in inst.instance_type)
        clusters[inst.instance_id] = inst.cluster_id
    for vol in volumes:
        queries += cw.queries_for_volume(vol.volume_id, vol.volume_type)
        clusters[vol.volume_id] = refs[vol.instance_ref_id].cluster_id if vol.instance_ref_id else None
    return queries, clusters


def _series_ids(db: Session, org_id: uuid.UUID, queries: Sequence[cw.MetricQuery],
                clusters: dict[str, Any]) -> list[int]:
    """Series ids for the queries: one SELECT for the known ones, ensure_series for the new ones."""
    wanted = {(q.entity_kind, q.entity_id, q.metric) for q in queries}
    rows = timeseries.entity_series(db, org_id, {q.entity_id for q in queries})
    period = {(q.entity_kind, q.entity_id, q.metric): q.period for q in queries}
    known: dict[tuple[str, str, str], int] = {}
    remap: dict[Any, list[int]] = {}
    restep: dict[int, list[int]] = {}
    for k, e, m, i, cluster_id, step in rows:
        if (k, e, m) not in wanted:
            continue
        known[(k, e, m)] = int(i)
        if step != period[(k, e, m)]:  # detailed monitoring turned on or off: the series' period changed
            restep.setdefault(period[(k, e, m)], []).append(int(i))
        mapped = clusters.get(e)
        if mapped is not None and mapped != cluster_id:  # the volume/instance now serves (another) cluster
            remap.setdefault(mapped, []).append(int(i))
    for cluster_id, ids in remap.items():
        timeseries.move_series(db, ids, cluster_id)
    missing = [q for q in queries if (q.entity_kind, q.entity_id, q.metric) not in known]
    by_cluster: dict[Any, list[SeriesKey]] = {}
    for q in missing:
        by_cluster.setdefault(clusters.get(q.entity_id), []).append(
            SeriesKey(q.entity_kind, q.entity_id, q.metric, q.unit, step_seconds=q.period))
    for cluster_id, keys in by_cluster.items():
        for key, sid in ensure_series(db, org_id, keys, cluster_id=cluster_id).items():
            known[(key.entity_kind, key.entity_id, key.metric)] = sid
    # Each series keeps the period CloudWatch delivers it at (5-minute EC2 basic monitoring: IOPS = Sum / 300).
    for step, ids in restep.items():
        timeseries.set_step_seconds(db, ids, step)
    return [known[(q.entity_kind, q.entity_id, q.metric)] for q in queries]


@dataclass
class SweepOutcome:
    sweep: CollectionSweep
    series: int = 0
    points_written: int = 0
    watermarks: dict[int, dt.datetime] = field(default_factory=dict)


def run_sweep(
    db: Session,
    connection: AwsConnection,
    clients: AwsClients,
    *,
    now: dt.datetime,
    kind: str = "incremental",
    days: int | None = None,
    on_request: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> SweepOutcome:
    """Pull the region's series over the sweep window and write them; record the sweep's cost.

    Incremental: from the oldest watermark minus OVERLAP (series never seen: the last OVERLAP) to now.
    Backfill: the last `days` days. `on_request(points_done, points_total)` runs after each request's write.
    """
    region = clients.region
    end = floor_minute(now)
    queries, clusters = queries_for(db, connection, region)
    sweep = CollectionSweep(org_id=connection.org_id, source_kind="aws", source_id=connection.id, kind=kind,
                            region=region, started_at=now, series=len(queries))
    db.add(sweep)
    outcome = SweepOutcome(sweep, series=len(queries))
    if not queries:
        sweep.finished_at = now
        db.flush()
        return outcome
    series_ids = _series_ids(db, connection.org_id, queries, clusters)
    if kind == "backfill":
        start = end - dt.timedelta(days=days or DEFAULT_BACKFILL_DAYS)
    else:
        marks = get_watermarks(db, connection.org_id, SOURCE_KIND, connection.id, series_ids)
        oldest = min((marks.get(sid, end) for sid in series_ids), default=end)
        start = max(oldest - OVERLAP, end - MAX_LOOKBACK)
    start = min(start, end - OVERLAP)
    plan, start = period_aligned_plan([q.period for q in queries], end, int((end - start).total_seconds()))
    sweep.window_start_at, sweep.window_end_at = start, end
    sweep.planned_calls, sweep.lower_bound_calls = plan.calls, plan.lower_bound
    counters = cw.SweepCounters()
    points_done = 0
    try:
        for result in cw.fetch_sweep(clients.cloudwatch(), queries, plan, start, end, counters=counters,
                                     **({"sleep": sleep} if sleep else {})):
            batch = [(series_ids[i], ts, v) for i, pts in result.points.items() for ts, v in pts]
            written = write_points(db, connection.org_id, batch)
            outcome.points_written += written.points
            counters.dropped += written.dropped_nan + written.dropped_unaligned
            marks = {series_ids[i]: end for i in result.request.series}
            advance_watermarks(db, connection.org_id, SOURCE_KIND, connection.id, marks)
            outcome.watermarks.update(marks)
            points_done += result.request.points
            _fill(sweep, counters, outcome)
            if on_request is not None:
                on_request(points_done, plan.datapoints)
    except Exception as exc:
        _fill(sweep, counters, outcome)
        sweep.error = redact_error(f"{type(exc).__name__}: {exc}")
        sweep.finished_at = floor_minute(now)
        raise
    _fill(sweep, counters, outcome)
    sweep.finished_at = dt.datetime.now(dt.UTC) if kind == "backfill" else now
    db.flush()
    log.info("aws.sweep_done", source=str(connection.id), region=region, kind=kind, series=len(queries),
             calls=counters.api_calls, lower_bound=plan.lower_bound, points=outcome.points_written)
    return outcome


def period_aligned_plan(periods: Sequence[int], end: dt.datetime, window_seconds: int) -> tuple[SweepPlan, dt.datetime]:
    """Plan a sweep ending at `end` over at least `window_seconds`, starting on a boundary of its longest period.

    CloudWatch's periods start at the request's StartTime (GetMetricData StartTime: rounded down to the minute
    only), so a 5-minute query starting at 12:07 returns sums of 12:07-12:12, ... Sweeps run every minute: without
    a common boundary, each would store 5-minute sums shifted by a minute and a snapshot's 5-minute step would add
    up several overlapping sums. Starting every request on a multiple of the period (epoch seconds, 12:05, 12:10)
    stores each 5-minute sum once, at its own slot.
    """
    plan, window = plan_window(periods, window_seconds)
    start = end - dt.timedelta(seconds=window)
    longest = max(periods, default=60)
    epoch = int(start.timestamp())
    if epoch % longest:
        start = dt.datetime.fromtimestamp(epoch - epoch % longest, dt.UTC)
        plan = plan_sweep(periods, int((end - start).total_seconds()))
    return plan, start


def _next_boundary(at: dt.datetime, period: int) -> dt.datetime:
    """Return the first multiple of `period` epoch seconds at or after `at`."""
    epoch = math.ceil(at.timestamp())
    return dt.datetime.fromtimestamp(epoch + (-epoch) % period, dt.UTC)


def _fill(sweep: CollectionSweep, counters: cw.SweepCounters, outcome: SweepOutcome) -> None:
    sweep.api_calls = counters.api_calls
    sweep.metrics_requested = counters.metrics_requested
    sweep.datapoints = counters.datapoints
    sweep.dropped = counters.dropped
    sweep.retries = counters.retries
    sweep.points_written = outcome.points_written


def get_backfill(db: Session, connection: AwsConnection) -> AwsBackfill | None:
    return db.scalar(select(AwsBackfill).where(AwsBackfill.source_id == connection.id))


def request_backfill(db: Session, connection: AwsConnection, *, days: int = DEFAULT_BACKFILL_DAYS) -> AwsBackfill:
    """Queue the connection's backfill: resume an unfinished one of the same span, else start a new plan.

    A backfill that is queued, running (its worker died), or failed keeps its plan and progress, so the next run
    fetches only the requests not stored yet. A finished one, or a different span, starts over.
    """
    row = get_backfill(db, connection)
    if row is None:
        row = AwsBackfill(org_id=connection.org_id, source_id=connection.id, state="queued", days=days)
        db.add(row)
    elif row.state == "done" or row.days != days:
        forget_backfill_plan(db, "aws", connection.id)
        row.state, row.days, row.points_done, row.points_written = "queued", days, 0, 0
        row.points_total, row.last_error, row.started_at, row.finished_at = 0, None, None, None
        row.window_end_at = None
    else:
        row.state, row.last_error = "queued", None
    db.flush()
    return row


# --- resumable backfill ----------------------------------------------------------------------------------
#
# The plan (every GetMetricData request of every region over one fixed window) is written to `backfill_steps`
# when the backfill starts. Each request's points, watermarks, the step's `done_at` and the progress counters
# are written in one transaction (the job commits after each step), so progress and data never disagree and a
# killed worker's successor skips exactly the stored requests: no GetMetricData call is paid twice (billing is
# per metric requested, docs/reference/cloudwatch.md#getmetricdata).
#
# Inventory changes between runs (decided here, tested in tests/sources/aws/test_aws_backfill_resume.py):
# * a series that appears (new volume, newly mapped TiKV instance) is appended to the plan as new requests over
#   the same window when a run starts, so it gets its history too; points_total grows by their points;
# * a series that disappears (volume deleted or detached) keeps its planned requests: CloudWatch still holds
#   its history for the window (15 days, docs/reference/cloudwatch.md#retention), and dropping it would change points_total under the
#   progress bar. Its queries are stored whole in the step, so the request can still be made.
# A region removed from the connection keeps its steps too (the clients are built from the step's region).


class BackfillSuperseded(Exception):
    """The plan this run works on was replaced (a new backfill was requested): stop without writing more."""


def forget_backfill_plan(db: Session, source_kind: str, source_id: uuid.UUID) -> None:
    db.execute(delete(BackfillStep).where(BackfillStep.source_kind == source_kind,
                                          BackfillStep.source_id == source_id))


def _query_spec(q: cw.MetricQuery) -> list[Any]:
    return [q.metric, q.entity_kind, q.entity_id, q.namespace, q.metric_name, q.dimension, q.statistic, q.period,
            q.unit]


def _query_from_spec(spec: Sequence[Any]) -> cw.MetricQuery:
    metric, kind, entity, namespace, name, dimension, statistic, period, unit = spec
    return cw.MetricQuery(metric, kind, entity, namespace, name, dimension, statistic, int(period), unit)


def _steps(db: Session, source_kind: str, source_id: uuid.UUID) -> list[BackfillStep]:
    return list(db.scalars(select(BackfillStep).where(BackfillStep.source_kind == source_kind,
                                                      BackfillStep.source_id == source_id)
                           .order_by(BackfillStep.seq)))


def plan_backfill(db: Session, connection: AwsConnection, regions: Sequence[str], *, end: dt.datetime,
                  days: int) -> int:
    """Write the backfill's requests not planned yet (all of them at first); return the points they add.

    A region's first plan covers `days` up to `end` (widened by plan_window to the call lower bound, its start
    moved forward to a boundary of the longest period); later
    calls add only series missing from the plan, over the window the region's plan already has.
    """
    steps = _steps(db, "aws", connection.id)
    seq = max((s.seq for s in steps), default=-1) + 1
    added = 0
    for region in regions:
        queries, _ = queries_for(db, connection, region)
        mine = [s for s in steps if s.spec["region"] == region]
        planned = {(q[1], q[2], q[0]) for s in mine for q in s.spec["queries"]}
        queries = [q for q in queries if (q.entity_kind, q.entity_id, q.metric) not in planned]
        if not queries:
            continue
        periods = [q.period for q in queries]
        if mine:
            start = dt.datetime.fromisoformat(mine[0].spec["start"])
            region_end = dt.datetime.fromisoformat(mine[0].spec["end"])
            plan = plan_sweep(periods, int((region_end - start).total_seconds()))
        else:
            region_end = end
            plan, window = plan_window(periods, days * 86400)
            # the history starts on a boundary of the longest period, as every incremental sweep does
            # (period_aligned_plan), so its 5-minute sums fall in the slots the sweeps write and none overlaps
            # another. Moving the start forward (at most 4 minutes of the oldest day) keeps the plan's calls.
            start = _next_boundary(end - dt.timedelta(seconds=window), max(periods, default=60))
            plan = plan_sweep(periods, int((end - start).total_seconds()))
        for request in plan.requests:
            db.add(BackfillStep(org_id=connection.org_id, source_kind="aws", source_id=connection.id, seq=seq,
                                points=request.points,
                                spec={"region": region, "start": start.isoformat(), "end": region_end.isoformat(),
                                      "pages": request.pages,
                                      "queries": [_query_spec(queries[i]) for i in request.series]}))
            seq += 1
            added += request.points
    db.flush()
    return added


@dataclass
class BackfillOutcome:
    steps_run: int = 0
    steps_skipped: int = 0
    points_written: int = 0
    api_calls: int = 0
    sweeps: list[CollectionSweep] = field(default_factory=list)


def run_backfill(
    db: Session,
    connection: AwsConnection,
    row: AwsBackfill,
    clients_for_region: Callable[[str], AwsClients],
    *,
    now: dt.datetime,
    checkpoint: Callable[[], None] = lambda: None,
    sleep: Callable[[float], None] | None = None,
) -> BackfillOutcome:
    """Run the backfill plan's pending requests in order, each stored with its step's progress; then checkpoint.

    `row.points_done` / `row.points_total` are sums of the steps' worst-case datapoints; a step done by an
    earlier (killed) run is skipped and its points stay counted once.
    """
    steps = _steps(db, "aws", connection.id)
    outcome = BackfillOutcome(steps_skipped=sum(1 for s in steps if s.done_at is not None))
    row.points_total = sum(s.points for s in steps)
    row.points_done = sum(s.points for s in steps if s.done_at is not None)
    pending = [s for s in steps if s.done_at is None]
    by_region: dict[str, list[BackfillStep]] = {}
    for step in pending:
        by_region.setdefault(step.spec["region"], []).append(step)
    for region, region_steps in by_region.items():
        cloudwatch = clients_for_region(region).cloudwatch()
        _, clusters = queries_for(db, connection, region)
        sweep_queries = [_query_from_spec(q) for s in region_steps for q in s.spec["queries"]]
        window_start = dt.datetime.fromisoformat(region_steps[0].spec["start"])
        window_end = dt.datetime.fromisoformat(region_steps[0].spec["end"])
        window = int((window_end - window_start).total_seconds())
        sweep = CollectionSweep(org_id=connection.org_id, source_kind="aws", source_id=connection.id,
                                kind="backfill", region=region, started_at=now, series=len(sweep_queries),
                                window_start_at=window_start, window_end_at=window_end,
                                planned_calls=sum(int(s.spec["pages"]) for s in region_steps),
                                lower_bound_calls=lower_bound([points_in(window, q.period) for q in sweep_queries]))
        db.add(sweep)
        outcome.sweeps.append(sweep)
        counters = cw.SweepCounters()
        written_total = 0
        try:
            for step in region_steps:
                queries = [_query_from_spec(q) for q in step.spec["queries"]]
                start = dt.datetime.fromisoformat(step.spec["start"])
                end = dt.datetime.fromisoformat(step.spec["end"])
                series_ids = _series_ids(db, connection.org_id, queries, clusters)
                plan = SweepPlan((PlannedRequest(tuple(range(len(queries))), step.points, int(step.spec["pages"])),),
                                 lower_bound([points_in(int((end - start).total_seconds()), q.period)
                                              for q in queries]))
                step_written = 0
                for result in cw.fetch_sweep(cloudwatch, queries, plan, start, end, counters=counters,
                                             **({"sleep": sleep} if sleep else {})):
                    batch = [(series_ids[i], ts, v) for i, pts in result.points.items() for ts, v in pts]
                    written = write_points(db, connection.org_id, batch)
                    step_written += written.points
                    counters.dropped += written.dropped_nan + written.dropped_unaligned
                    advance_watermarks(db, connection.org_id, SOURCE_KIND, connection.id,
                                       {series_ids[i]: end for i in result.request.series})
                marked = db.execute(update(BackfillStep).where(BackfillStep.id == step.id,
                                                               BackfillStep.done_at.is_(None))
                                    .values(done_at=func.now()))
                if marked.rowcount != 1:  # type: ignore[attr-defined]
                    raise BackfillSuperseded(f"backfill step {step.seq} is gone or done: the plan was replaced")
                written_total += step_written
                row.points_done += step.points
                row.points_written += step_written
                outcome.steps_run += 1
                outcome.points_written += step_written
                _fill(sweep, counters, SweepOutcome(sweep, points_written=written_total))
                checkpoint()  # the step's points, watermarks, done mark and progress become durable together
        except Exception as exc:
            _fill(sweep, counters, SweepOutcome(sweep, points_written=written_total))
            sweep.error = redact_error(f"{type(exc).__name__}: {exc}")
            sweep.finished_at = dt.datetime.now(dt.UTC)
            raise
        finally:
            outcome.api_calls += counters.api_calls
        _fill(sweep, counters, SweepOutcome(sweep, points_written=written_total))
        sweep.finished_at = dt.datetime.now(dt.UTC)
        db.flush()
        log.info("aws.backfill_region_done", source=str(connection.id), region=region, steps=len(region_steps),
                 calls=counters.api_calls, points=written_total)
    return outcome

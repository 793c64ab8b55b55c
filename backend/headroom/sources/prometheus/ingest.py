"""Collect a cluster's TiKV and node_exporter series from its Prometheus source into the time-series store.

* Discovery: the TiKV targets under the source's selector (their `instance` label), the deployment flavour,
  the status address (target scrape URL, else a TiUP `host:port` instance), and the store address the node
  advertises on its status port (`server.advertise-addr`, falling back to the status address). Each target
  maps to a `tikv_nodes` row of the source's cluster through `prometheus_node_targets`.
* Collection: one query per registry series (`headroom.sources.prometheus.promql.collection_queries`) over all nodes, at
  the store's 60 s step, split under Prometheus's 11,000 points per series. Series are stored as entity
  `tikv_node` / the node's store address; node_exporter disk series carry a `device` label. Non-finite values
  and points outside the asked window are counted and dropped.
* Backfill (14 days by default) with progress in `prometheus_backfills`; incremental runs resume from the
  per-series watermarks minus an overlap window (re-writes are no-ops in the packed store).

Services never commit: the backfill takes a `checkpoint` callback the task uses to commit each chunk. The
backfill resumes: its chunks are planned in `backfill_steps` and each is marked done with its points, so a run
after a killed one fetches only the chunks not stored (see "resumable backfill" below).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from headroom.domain.tikvconf.change import host_of
from headroom.inventory.models import TikvNode
from headroom.inventory.service import (
    ConfigFetcher,
    StatusPortError,
    advertised_store_address,
    default_fetcher,
    store_version,
)
from headroom.platform.logging import get_logger
from headroom.platform.security import SecretBox
from headroom.sources.models import BackfillStep, PrometheusSource
from headroom.sources.prometheus.collector import PrometheusAuth, PrometheusClient, PrometheusError, Target
from headroom.sources.prometheus.models import PrometheusBackfill, PrometheusNodeTarget
from headroom.sources.prometheus.promql import (
    STEP_SECONDS,
    CollectionQuery,
    Flavour,
    align_down,
    collection_queries,
    detect_flavour,
    node_exporter_matchers,
    points_in,
    split_range,
    tikv_matchers,
)
from headroom.sources.selector import Matcher, matches_all, parse_selector, render_selector
from headroom.timeseries.repository import SeriesBatch, SeriesKey, ensure_series, series_ids, write_batches
from headroom.timeseries.watermarks import advance_watermarks, get_watermarks

log = get_logger("headroom.sources.prometheus.ingest")

SOURCE_KIND = "prometheus"
ENTITY_KIND = "tikv_node"
OVERLAP = dt.timedelta(minutes=10)  # re-read the last minutes: late scrapes and rule lag fill in
BACKFILL_DAYS = 14
MAX_LAG = dt.timedelta(days=1)  # a series this far behind the others is gone; don't drag every query back
# Metric that every TiKV exports and the registry reads (tikv.store_used_bytes): finds the TiKV instances.
DISCOVERY_METRIC = "tikv_store_size_bytes"


def client_for(source: PrometheusSource, box: SecretBox, **kwargs: Any) -> PrometheusClient:
    """Build a client for a source, decrypting its secret (kept only in the request header)."""
    secret = box.decrypt(source.secret_enc) if source.secret_enc else None
    auth = PrometheusAuth(kind=source.auth_kind, username=source.username, secret=secret)  # type: ignore[arg-type]
    return PrometheusClient(source.base_url, auth, **kwargs)


def source_matchers(source: PrometheusSource) -> tuple[Matcher, ...]:
    return parse_selector(source.label_selector or "")


# --- discovery -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TikvTarget:
    instance: str
    labels: dict[str, str]
    status_address: str | None


@dataclass
class Discovery:
    flavour: Flavour
    targets: list[TikvTarget]
    nodes: dict[str, TikvNode] = field(default_factory=dict)  # instance label -> node

    def hosts(self) -> set[str]:
        return {host_of(t.status_address or t.instance) for t in self.targets}


def _status_address(instance: str, labels: dict[str, str], targets: Sequence[Target]) -> str | None:
    for target in targets:
        if target.labels.get("instance") == instance and all(
            target.labels.get(k) == v for k, v in labels.items() if k in target.labels
        ):
            url = target.scrape_url.split("://", 1)[-1]
            return url.split("/", 1)[0]
    return instance if ":" in instance and instance.rsplit(":", 1)[1].isdigit() else None


def find_tikv_targets(
    client: PrometheusClient, selector: Sequence[Matcher], at: dt.datetime, lookback: dt.timedelta
) -> tuple[Flavour, list[TikvTarget]]:
    """Return the flavour and the TiKV targets under a selector that reported in [at - lookback, at]."""
    inner = render_selector(selector)
    seconds = max(60, int(lookback.total_seconds()))
    samples = client.instant(
        f"count by (instance, job, component) (last_over_time({DISCOVERY_METRIC}{{{inner}}}[{seconds}s]))", at
    )
    labels = [s.labels for s in samples]
    flavour = detect_flavour(labels)
    scoped = tikv_matchers(selector, flavour)
    try:
        targets = client.targets()
    except PrometheusError as error:  # some proxies hide the targets API; TiUP instances still work
        log.info("prometheus.targets_unavailable", error=error.message)
        targets = []
    found: dict[str, TikvTarget] = {}
    for label_set in labels:
        if not matches_all([m for m in scoped if m.name in ("job", "component")], label_set):
            continue
        instance = label_set.get("instance", "")
        if not instance:
            continue
        extra = {k: v for k, v in label_set.items() if k in ("job", "component")}
        matching = [t for t in targets if matches_all(selector, t.labels)]
        found[instance] = TikvTarget(instance, extra, _status_address(instance, extra, matching))
    return flavour, [found[k] for k in sorted(found)]


def sync_nodes(
    db: Session,
    source: PrometheusSource,
    flavour: Flavour,
    targets: Sequence[TikvTarget],
    *,
    now: dt.datetime,
    fetcher: ConfigFetcher = default_fetcher,
) -> dict[str, TikvNode]:
    """Map each TiKV target to a node of the source's cluster, creating nodes (and a first config) as needed."""
    assert source.cluster_id is not None
    known = {
        row.instance: row
        for row in db.scalars(select(PrometheusNodeTarget).where(PrometheusNodeTarget.source_id == source.id))
    }
    cluster_nodes = list(db.scalars(select(TikvNode).where(TikvNode.cluster_id == source.cluster_id)))
    out: dict[str, TikvNode] = {}
    for target in targets:
        link = known.get(target.instance)
        node = next((n for n in cluster_nodes if link is not None and n.id == link.node_id), None)
        live: dict[str, Any] | None = None
        if node is None and target.status_address:
            node = next((n for n in cluster_nodes if n.status_address == target.status_address), None)
        if node is None:
            store_address = None
            if target.status_address:
                try:
                    live, _raw = fetcher(target.status_address)
                    store_address = advertised_store_address(live)
                except StatusPortError as error:
                    log.info(
                        "prometheus.status_port_unreachable", address=target.status_address, error=str(error)
                    )
            store_address = store_address or target.status_address or target.instance
            node = next((n for n in cluster_nodes if n.store_address == store_address), None)
            if node is None:
                node = TikvNode(
                    org_id=source.org_id,
                    cluster_id=source.cluster_id,
                    store_address=store_address,
                    status_address=target.status_address,
                )
                db.add(node)
                db.flush()
                cluster_nodes.append(node)
                log.info("prometheus.node_discovered", source=str(source.id), store_address=store_address)
        if target.status_address and node.status_address != target.status_address:
            node.status_address = target.status_address  # operator pods move; the scrape URL follows them
        node.last_seen_at = now
        if live is not None:
            store_version(db, node, live, source="status_port", raw_text=None, now=now)
        if link is None:
            link = PrometheusNodeTarget(
                org_id=source.org_id,
                source_id=source.id,
                node_id=node.id,
                instance=target.instance,
                flavour=flavour,
                labels=target.labels,
            )
            db.add(link)
            known[target.instance] = link
        link.node_id = node.id
        link.flavour = flavour
        link.last_seen_at = now
        out[target.instance] = node
    db.flush()
    return out


def discover(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    *,
    now: dt.datetime,
    lookback: dt.timedelta = dt.timedelta(days=1),
    fetcher: ConfigFetcher = default_fetcher,
) -> Discovery:
    """Find the source's TiKV targets and map them to nodes."""
    flavour, targets = find_tikv_targets(client, source_matchers(source), now, lookback)
    nodes = sync_nodes(db, source, flavour, targets, now=now, fetcher=fetcher)
    return Discovery(flavour, targets, nodes)


def earliest_data(
    client: PrometheusClient,
    source: PrometheusSource,
    discovery: Discovery,
    start: dt.datetime,
    end: dt.datetime,
) -> dt.datetime | None:
    """Return (to the hour, rounded down) when the cluster's TiKV data begins in [start, end], or None if never.

    Prometheus keeps 15 days by default (its --storage.tsdb.retention.time); a 14-day backfill of a younger
    server, or of a cluster added last week, should neither query nor count the empty part.
    """
    selector = render_selector(tikv_matchers(source_matchers(source), discovery.flavour))
    series = client.query_range(f"count({DISCOVERY_METRIC}{{{selector}}})", start, end, 3600)
    stamps = [ts for s in series for ts, value in s.points if math.isfinite(value)]
    if not stamps:
        return None
    return max(start, align_down(min(stamps) - dt.timedelta(hours=1), 3600))


# --- collection ------------------------------------------------------------------------------------------


@dataclass
class CollectStats:
    queries: int = 0
    steps: int = 0
    points: int = 0
    series: int = 0
    dropped_non_finite: int = 0
    dropped_outside: int = 0
    unmatched_series: int = 0

    def add(self, other: CollectStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def queries_for(source: PrometheusSource, discovery: Discovery) -> list[CollectionQuery]:
    tikv_selector = render_selector(tikv_matchers(source_matchers(source), discovery.flavour))
    hosts = discovery.hosts()
    node_selector = render_selector(node_exporter_matchers(hosts)) if hosts else 'instance="-"'
    return collection_queries(tikv_selector, node_selector)


def _nodes_by_result(query: CollectionQuery, discovery: Discovery, labels: dict[str, str]) -> list[TikvNode]:
    instance = labels.get("instance", "")
    if query.target == "tikv":
        node = discovery.nodes.get(instance)
        return [node] if node is not None else []
    # node_exporter: every TiKV node on that host (several TiKVs may share one machine)
    host = host_of(instance)
    return [
        node
        for target in discovery.targets
        if host_of(target.status_address or target.instance) == host
        and (node := discovery.nodes.get(target.instance)) is not None
    ]


def collect_query(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    discovery: Discovery,
    query: CollectionQuery,
    start: dt.datetime,
    end: dt.datetime,
    *,
    max_points: int = 1440,
    on_chunk: Callable[[int], None] | None = None,
) -> CollectStats:
    """Run one registry query over [start, end] in chunks and store its points; advance the watermarks."""
    stats = CollectStats()
    series_ids: dict[SeriesKey, int] = {}
    for chunk_start, chunk_end in split_range(start, end, STEP_SECONDS, max_points):
        results = client.query_range(query.query, chunk_start, chunk_end, STEP_SECONDS)
        stats.queries += 1
        steps = points_in(chunk_start, chunk_end)
        stats.steps += steps
        batches: list[SeriesBatch] = []
        marks: dict[int, dt.datetime] = {}
        for result in results:
            nodes = _nodes_by_result(query, discovery, result.labels)
            if not nodes:
                stats.unmatched_series += 1
                continue
            labels = tuple((k, result.labels[k]) for k in query.by if k != "instance" and k in result.labels)
            keys = [
                SeriesKey(ENTITY_KIND, node.store_address, query.metric, query.unit, labels) for node in nodes
            ]
            missing = [k for k in keys if k not in series_ids]
            if missing:
                series_ids.update(ensure_series(db, source.org_id, missing, cluster_id=source.cluster_id))
            # One regular batch per series over the chunk's grid; NaN marks the minutes without a point.
            values = np.full(steps, np.nan)
            newest: dt.datetime | None = None
            for ts, value in result.points:
                if not math.isfinite(value):
                    stats.dropped_non_finite += len(keys)
                    continue
                offset = (ts - chunk_start).total_seconds() / STEP_SECONDS
                if ts < chunk_start or ts > chunk_end or not offset.is_integer():
                    stats.dropped_outside += len(keys)
                    continue
                values[int(offset)] = value
                newest = ts if newest is None or ts > newest else newest
            if newest is None:
                continue
            for key in keys:
                batches.append(SeriesBatch(series_ids[key], chunk_start, STEP_SECONDS, values))
                marks[series_ids[key]] = newest
        written = write_batches(db, source.org_id, batches)
        stats.points += written.points
        advance_watermarks(db, source.org_id, SOURCE_KIND, source.id, marks)
        if on_chunk is not None:
            on_chunk(steps)
    stats.series = len(series_ids)
    return stats


def resume_from(
    db: Session, source: PrometheusSource, discovery: Discovery, query: CollectionQuery, default: dt.datetime
) -> dt.datetime:
    """Where an incremental run of one query starts: its series' watermarks minus the overlap window."""
    entity_ids = {node.store_address for node in discovery.nodes.values()}
    ids = series_ids(db, source.org_id, ENTITY_KIND, query.metric, entity_ids)
    marks = get_watermarks(db, source.org_id, SOURCE_KIND, source.id, ids)
    if not marks:
        return default
    newest = max(marks.values())
    # Nodes that joined late would pull the start back; a node gone for a day no longer does.
    oldest_alive = min(m for m in marks.values() if m >= newest - MAX_LAG)
    return oldest_alive - OVERLAP


def collect_incremental(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    *,
    now: dt.datetime,
    default_start: dt.datetime,
    fetcher: ConfigFetcher = default_fetcher,
) -> tuple[Discovery, CollectStats]:
    """Discover the nodes, then bring every registry query up to `now` from its watermarks."""
    end = align_down(now)
    discovery = discover(db, source, client, now=now, fetcher=fetcher)
    total = CollectStats()
    if not discovery.nodes:
        return discovery, total
    for query in queries_for(source, discovery):
        start = max(
            resume_from(db, source, discovery, query, default_start), end - dt.timedelta(days=BACKFILL_DAYS)
        )
        total.add(
            collect_query(db, source, client, discovery, query, align_down(start), end, max_points=1440)
        )
    return discovery, total


# --- resumable backfill ----------------------------------------------------------------------------------
#
# The plan (every registry query x every chunk of the range) is written to `backfill_steps` when a backfill
# starts. A chunk's points, watermarks, its step's `done_at` and the row's progress are written in one
# transaction (the task commits after each chunk), so a killed worker's successor runs only the chunks not
# stored, and steps done / total are sums over the plan: never counted twice, never going back.
#
# Nodes that change between runs (decided here, tested in tests/sources/prometheus/test_prom_backfill_resume.py):
# every query selects all of the cluster's TiKV nodes (and their hosts' node_exporter), so a chunk run after a
# node appeared includes it. A chunk stored before it appeared did not: when a run finds TiKV targets that a
# done chunk did not cover, it appends that chunk again to the plan (steps_total grows by it). Prometheus bills
# nothing per query, and the store merges re-written minutes, so the old nodes' points re-read there change
# nothing. A node that disappears needs nothing: its chunks already stored stay.


def forget_backfill_plan(db: Session, source_id: Any) -> None:
    """Drop a source's backfill plan (a new backfill, with a new range, starts over)."""
    db.execute(delete(BackfillStep).where(BackfillStep.source_kind == SOURCE_KIND,
                                          BackfillStep.source_id == source_id))


def _plan_steps(db: Session, source_id: Any) -> list[BackfillStep]:
    return list(db.scalars(select(BackfillStep).where(BackfillStep.source_kind == SOURCE_KIND,
                                                      BackfillStep.source_id == source_id)
                           .order_by(BackfillStep.seq)))


def _add_step(db: Session, source: PrometheusSource, seq: int, metric: str, start: dt.datetime, end: dt.datetime,
              range_end: dt.datetime, targets: Sequence[str]) -> BackfillStep:
    step = BackfillStep(org_id=source.org_id, source_kind=SOURCE_KIND, source_id=source.id, seq=seq,
                        points=points_in(start, end),
                        spec={"metric": metric, "start": start.isoformat(), "end": end.isoformat(),
                              "range_end": range_end.isoformat(), "targets": sorted(targets)})
    db.add(step)
    return step


def plan_backfill(db: Session, source: PrometheusSource, queries: Sequence[CollectionQuery], targets: Sequence[str],
                  start: dt.datetime, end: dt.datetime, *, chunk_points: int) -> list[BackfillStep]:
    """The source's backfill plan over [start, end]: the stored one if it is for this range, else a new one.

    A stored plan gets the done chunks again that did not cover every target in `targets` (see above).
    """
    steps = _plan_steps(db, source.id)
    if steps and steps[0].spec.get("range_end") != end.isoformat():
        forget_backfill_plan(db, source.id)  # a plan of an earlier backfill (a reset that did not drop it)
        steps = []
    seq = max((s.seq for s in steps), default=-1) + 1
    if not steps:
        for query in queries:
            for chunk_start, chunk_end in split_range(start, end, STEP_SECONDS, chunk_points):
                steps.append(_add_step(db, source, seq, query.metric, chunk_start, chunk_end, end, targets))
                seq += 1
        db.flush()
        return steps
    # What each chunk covers: the targets of its done runs, and every current target if a run is pending
    # (it will run with the current discovery).
    current = set(targets)
    covered: dict[tuple[str, str, str], set[str]] = {}
    for s in steps:
        key = (s.spec["metric"], s.spec["start"], s.spec["end"])
        covered.setdefault(key, set()).update(s.spec["targets"] if s.done_at is not None else current)
    for key, have in covered.items():
        if not current <= have:
            metric, first, last = key
            steps.append(_add_step(db, source, seq, metric, dt.datetime.fromisoformat(first),
                                   dt.datetime.fromisoformat(last), end, targets))
            seq += 1
    db.flush()
    return steps


@dataclass
class BackfillRun:
    steps_run: int = 0
    steps_skipped: int = 0
    stats: CollectStats = field(default_factory=CollectStats)


class BackfillSuperseded(Exception):
    """The plan this run works on was dropped (a new backfill was requested): stop without writing more."""


def run_backfill_plan(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    discovery: Discovery,
    steps: Sequence[BackfillStep],
    *,
    on_step: Callable[[BackfillStep, CollectStats], None],
) -> BackfillRun:
    """Run the plan's pending chunks in order; `on_step` records progress and commits after each one."""
    run = BackfillRun(steps_skipped=sum(1 for s in steps if s.done_at is not None))
    by_metric = {q.metric: q for q in queries_for(source, discovery)}
    targets = sorted(t.instance for t in discovery.targets)
    for step in steps:
        if step.done_at is not None:
            continue
        query = by_metric.get(step.spec["metric"])
        stats = CollectStats()
        if query is not None:  # a query the registry dropped since the plan was made has nothing to fetch
            start, end = dt.datetime.fromisoformat(step.spec["start"]), dt.datetime.fromisoformat(step.spec["end"])
            stats = collect_query(db, source, client, discovery, query, start, end, max_points=step.points)
        marked = db.execute(update(BackfillStep).where(BackfillStep.id == step.id, BackfillStep.done_at.is_(None))
                            .values(done_at=func.now(), spec={**step.spec, "targets": targets})
                            .execution_options(synchronize_session=False))
        if marked.rowcount != 1:  # type: ignore[attr-defined]
            raise BackfillSuperseded(f"backfill step {step.seq} is gone or done: the plan was replaced")
        db.expire(step, ["done_at", "spec"])
        run.steps_run += 1
        run.stats.add(stats)
        on_step(step, stats)
    return run


def run_backfill(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    row: PrometheusBackfill,
    *,
    now: dt.datetime,
    checkpoint: Callable[[], None],
    fetcher: ConfigFetcher = default_fetcher,
    chunk_points: int = 1440,
) -> PrometheusBackfill:
    """Import the row's range chunk by chunk, resuming a stored plan; checkpoint after each chunk; record health.

    A new range is planned from where Prometheus's TiKV data begins; a stored plan for the same range is
    resumed at its first chunk not stored (its progress and points written so far are kept).
    """
    from headroom.sources.health import record_failure, record_success

    row.status, row.started_at, row.last_error, row.finished_at = "running", now, None, None
    checkpoint()
    try:
        discovery = discover(db, source, client, now=now, lookback=row.range_end_at - row.range_start_at,
                             fetcher=fetcher)
        targets = sorted(t.instance for t in discovery.targets)
        steps = _plan_steps(db, source.id)
        fresh = not steps or steps[0].spec.get("range_end") != row.range_end_at.isoformat()
        if fresh:
            queries = queries_for(source, discovery) if discovery.nodes else []
            if queries:
                begins = earliest_data(client, source, discovery, row.range_start_at, row.range_end_at)
                if begins is None:
                    queries = []
                elif begins > row.range_start_at:  # Prometheus retains less than asked for
                    row.range_start_at = begins
            row.points_written = row.dropped_non_finite = row.dropped_outside = 0
            steps = plan_backfill(db, source, queries, targets, row.range_start_at, row.range_end_at,
                                  chunk_points=chunk_points)
        elif discovery.nodes:
            steps = plan_backfill(db, source, [], targets, row.range_start_at, row.range_end_at,
                                  chunk_points=chunk_points)
        pending = [s for s in steps if s.done_at is None]
        if pending and not discovery.nodes:  # a chunk run now would store nothing and count as done
            raise PrometheusError("query", "no TiKV targets found under the source's selector; the backfill "
                                           "resumes from its last stored chunk once they report again")
        row.steps_total = sum(s.points for s in steps)
        row.steps_done = sum(s.points for s in steps if s.done_at is not None)
        checkpoint()

        def on_step(step: BackfillStep, stats: CollectStats) -> None:
            row.steps_done += step.points
            row.points_written += stats.points
            row.dropped_non_finite += stats.dropped_non_finite
            row.dropped_outside += stats.dropped_outside
            checkpoint()  # the chunk's points, watermarks, done mark and progress become durable together

        run = run_backfill_plan(db, source, client, discovery, steps, on_step=on_step)
        row.status, row.finished_at = "done", now
        record_success(source, now)
        log.info("prometheus.backfill_done", source=str(source.id), points=row.points_written,
                 nodes=len(discovery.nodes), steps_run=run.steps_run, steps_skipped=run.steps_skipped)
    except PrometheusError as error:
        row.status, row.last_error, row.finished_at = "failed", error.message, now
        record_failure(source, now, error.message)
        log.warning("prometheus.backfill_failed", source=str(source.id), error=error.message)
    checkpoint()
    return row

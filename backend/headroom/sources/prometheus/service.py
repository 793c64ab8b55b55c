"""Prometheus source operations: test the connection, run and report the backfill, run the incremental pull.

Health: every attempt records success or failure on the source (services.source_health); a source failing
FAILING_AFTER times in a row turns `failing` with its last error (never a secret).

The connection test runs in three steps so no database connection is held while a tenant's server answers:
`prepare_test` reads what the probe needs, the caller commits (handing the connection back to the pool), then
`run_probe` fetches (within TEST_BUDGET_SECONDS in all) and `record_test` writes the outcome in a new transaction.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal, audit
from headroom.domain.snapshot.registry import REGISTRY_LIST
from headroom.domain.snapshot.registry import PrometheusSource as PromSpec
from headroom.domain.tikvconf.change import host_of
from headroom.inventory.service import ConfigFetcher, default_fetcher, poll_cluster
from headroom.platform import outbound
from headroom.platform.db import engine_for
from headroom.platform.errors import InvalidInput
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.security import SecretBox
from headroom.sources.health import record_failure, record_success
from headroom.sources.models import PrometheusSource
from headroom.sources.prometheus import ingest
from headroom.sources.prometheus.collector import PrometheusClient, PrometheusError
from headroom.sources.prometheus.models import PrometheusBackfill
from headroom.sources.prometheus.promql import (
    align_down,
    node_exporter_matchers,
    tikv_matchers,
)
from headroom.sources.selector import SelectorError, parse_selector, render_selector
from headroom.sources.service import get_prometheus_source

log = get_logger("headroom.sources.prometheus.service")

ClientFactory = Callable[[PrometheusSource], PrometheusClient]

# A connection test (six small requests) ends within this, whatever the server does (docs/outbound.md).
TEST_BUDGET_SECONDS = 20.0
# Its answers are instant queries counting series and one discovery query (a series per TiKV instance): small.
TEST_MAX_RESPONSE_BYTES = 8 * outbound.MIB


class Selectable(Protocol):
    @property
    def label_selector(self) -> str: ...


# --- test connection -------------------------------------------------------------------------------------


@dataclass
class MetricPresence:
    metric: str
    series: int


@dataclass
class ConnectionReport:
    ok: bool
    reachable: bool
    authenticated: bool
    prometheus_version: str | None
    flavour: str | None
    selector: str
    tikv_instances: list[str] = field(default_factory=list)
    tikv_targets_up: int = 0
    tikv_targets_down: int = 0
    node_exporter_hosts: int = 0
    metrics: list[MetricPresence] = field(default_factory=list)
    missing_metrics: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    # whether the address answered as Prometheus's HTTP API (JSON with "status" and "data"); None: not known (no
    # answer, or the credentials were refused). Until it is True nothing is known about credentials or metrics.
    prometheus_api: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _registry_metric_names() -> tuple[list[str], list[str]]:
    tikv: set[str] = set()
    node: set[str] = set()
    for spec in REGISTRY_LIST:
        if isinstance(spec.source, PromSpec):
            for name in spec.source.metrics:
                (node if name.startswith("node_") else tikv).add(name)
    return sorted(tikv), sorted(node)


def check_connection(client: PrometheusClient, source: Selectable, now: dt.datetime) -> ConnectionReport:
    """Probe reachability and auth, then count the TiKV and node_exporter series the advisor needs."""
    report = ConnectionReport(False, False, False, None, None, source.label_selector)
    try:
        selector = parse_selector(source.label_selector or "")
    except SelectorError as error:
        report.messages.append(str(error))
        return report
    try:
        # Nothing is said about credentials or metrics before the answer is known to be Prometheus's HTTP API.
        report.prometheus_version = client.identify().get("version") or None
        report.reachable = report.authenticated = report.prometheus_api = True
        flavour, targets = ingest.find_tikv_targets(client, selector, now, dt.timedelta(minutes=10))
        report.flavour = flavour
        report.tikv_instances = [t.instance for t in targets]
        if not targets:
            report.messages.append(
                f"No TiKV series ({ingest.DISCOVERY_METRIC}) under the selector {{{source.label_selector}}} in "
                'the last 10 minutes: check the selector (TiUP: job="tikv" or your own tidb_cluster label; '
                'Operator: tidb_cluster="<namespace>-<cluster>", or cluster and kubernetes_namespace).'
            )
            return report
        scoped = render_selector(tikv_matchers(selector, flavour))
        up = client.instant(f"up{{{scoped}}}", now)
        report.tikv_targets_up = sum(1 for s in up if s.value == 1)
        report.tikv_targets_down = sum(1 for s in up if s.value != 1)
        tikv_names, node_names = _registry_metric_names()
        found: dict[str, int] = {}
        counts = client.instant(f'count by (__name__) ({{__name__=~"{"|".join(tikv_names)}",{scoped}}})', now)
        found.update({s.labels.get("__name__", ""): int(s.value) for s in counts})
        hosts = {host_of(t.status_address or t.instance) for t in targets}
        node_selector = render_selector(node_exporter_matchers(hosts))
        counts = client.instant(
            f'count by (__name__) ({{__name__=~"{"|".join(node_names)}",{node_selector}}})', now
        )
        found.update({s.labels.get("__name__", ""): int(s.value) for s in counts})
        node_hosts = client.instant(f"count by (instance) (node_cpu_seconds_total{{{node_selector}}})", now)
        report.node_exporter_hosts = len(node_hosts)
        report.metrics = [MetricPresence(n, found.get(n, 0)) for n in [*tikv_names, *node_names]]
        report.missing_metrics = [n for n in [*tikv_names, *node_names] if not found.get(n)]
        if report.missing_metrics:
            report.messages.append(
                f"{len(report.missing_metrics)} metric(s) the advisor reads are missing under the selector; "
                "the advice that needs them will be skipped."
            )
        if not report.node_exporter_hosts:
            report.messages.append(
                "No node_exporter series on the TiKV hosts (instance=<host>:<port>): disk and memory advice "
                "will rely on CloudWatch only."
            )
        report.ok = True
    except PrometheusError as error:
        report.reachable = error.kind != "unreachable"
        if error.kind == "query":  # Prometheus's API refusing a query (JSON status "error"): it is Prometheus
            report.prometheus_api = report.authenticated = True
        if error.kind in ("not_prometheus", "auth", "unreachable"):
            report.authenticated = False
            report.prometheus_api = False if error.kind == "not_prometheus" else None
        report.messages.append(error.message or f"Prometheus request failed ({error.kind})")
    return report


@dataclass(frozen=True)
class ConnectionProbe:
    """What a connection test needs, read before the database connection is handed back (no ORM object)."""

    source_id: uuid.UUID
    label_selector: str
    client: PrometheusClient


def prepare_test(
    db: Session, principal: Principal, source_id: uuid.UUID, *, make_client: ClientFactory
) -> ConnectionProbe:
    """Read the org's source and build its client (no I/O) for a test (admin only)."""
    principal.require("admin")
    source = get_prometheus_source(db, principal, source_id)
    return ConnectionProbe(source.id, source.label_selector, make_client(source))


def run_probe(probe: ConnectionProbe, now: dt.datetime) -> ConnectionReport:
    """Run the test's requests, all of them within TEST_BUDGET_SECONDS. Touches no database."""
    with probe.client as client, outbound.limits(seconds=TEST_BUDGET_SECONDS):
        return check_connection(client, probe, now)


def record_test(
    db: Session, principal: Principal, source_id: uuid.UUID, report: ConnectionReport, now: dt.datetime
) -> None:
    """Record a test's outcome on the source's health and in the audit log."""
    source = get_prometheus_source(db, principal, source_id)
    # Read the health afresh and lock the row: the copy from before the fetch is stale, and tests of one source
    # running at once would otherwise lose each other's failure counts.
    db.refresh(source, with_for_update=True)
    if report.ok:
        record_success(source, now)
    else:
        record_failure(source, now, "; ".join(report.messages) or "connection test failed")
    audit(
        db,
        principal,
        "prometheus_source.tested",
        target_kind="prometheus_source",
        target_id=source.id,
        details={"ok": report.ok, "flavour": report.flavour, "instances": len(report.tikv_instances)},
    )


def box_client_factory(box: SecretBox, **kwargs: Any) -> ClientFactory:
    return lambda source: ingest.client_for(source, box, **kwargs)


# --- backfill --------------------------------------------------------------------------------------------


def get_backfill(db: Session, source: PrometheusSource) -> PrometheusBackfill | None:
    return db.scalar(select(PrometheusBackfill).where(PrometheusBackfill.source_id == source.id))


def backfill_status(db: Session, principal: Principal, source_id: uuid.UUID) -> PrometheusBackfill | None:
    """Return the org's source's backfill (None before the first one was requested)."""
    source = get_prometheus_source(db, principal, source_id)
    return get_backfill(db, source)


def request_backfill(
    db: Session,
    source: PrometheusSource,
    *,
    now: dt.datetime,
    days: int = ingest.BACKFILL_DAYS,
    restart: bool = False,
) -> tuple[PrometheusBackfill, bool]:
    """Create (or with restart, reset) the source's backfill row; return it and whether it needs running."""
    row = get_backfill(db, source)
    end = align_down(now)
    start = end - dt.timedelta(days=days)
    if row is None:
        row = PrometheusBackfill(
            org_id=source.org_id, source_id=source.id, range_start_at=start, range_end_at=end, status="queued"
        )
        db.add(row)
        db.flush()
        return row, True
    if restart and row.status != "running":
        ingest.forget_backfill_plan(db, source.id)  # a new range: the old plan's chunks are not resumed
        row.status, row.range_start_at, row.range_end_at = "queued", start, end
        row.steps_done = row.steps_total = row.points_written = 0
        row.dropped_non_finite = row.dropped_outside = 0
        row.last_error, row.started_at, row.finished_at = None, None, None
        db.flush()
        return row, True
    return row, row.status == "queued"


def start_backfill(
    db: Session,
    principal: Principal,
    source_id: uuid.UUID,
    *,
    now: dt.datetime,
    days: int = ingest.BACKFILL_DAYS,
) -> tuple[PrometheusBackfill, bool]:
    """Ask for a (re)import of the source's history (admin); the caller enqueues the job after commit."""
    principal.require("admin")
    source = get_prometheus_source(db, principal, source_id)
    if source.cluster_id is None:
        raise InvalidInput(
            "Attach the source to a cluster first (cluster_id): collected series belong to a cluster's nodes.",
            details=[{"field": "cluster_id", "message": "required"}],
        )
    row, needs_run = request_backfill(db, source, now=now, days=days, restart=True)
    audit(
        db,
        principal,
        "prometheus_source.backfill_requested",
        target_kind="prometheus_source",
        target_id=source.id,
        details={"days": days},
    )
    return row, needs_run


def run_backfill(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    *,
    now: dt.datetime,
    checkpoint: Callable[[], None] = lambda: None,
    fetcher: ConfigFetcher = default_fetcher,
    chunk_points: int = 1440,
) -> PrometheusBackfill:
    """Import the backfill range chunk by chunk (resuming a stored plan), checkpointing progress; record health."""
    row, _ = request_backfill(db, source, now=now)
    return ingest.run_backfill(db, source, client, row, now=now, checkpoint=checkpoint, fetcher=fetcher,
                               chunk_points=chunk_points)


def run_incremental(
    db: Session,
    source: PrometheusSource,
    client: PrometheusClient,
    *,
    now: dt.datetime,
    fetcher: ConfigFetcher = default_fetcher,
) -> ingest.CollectStats | None:
    """Pull the minutes since the watermarks; record health. Return None when the source failed."""
    backfill = get_backfill(db, source)
    default_start = (backfill.range_end_at if backfill else align_down(now)) - ingest.OVERLAP
    try:
        _discovery, stats = ingest.collect_incremental(
            db, source, client, now=now, default_start=default_start, fetcher=fetcher
        )
    except PrometheusError as error:
        record_failure(source, now, error.message)
        log.warning("prometheus.ingest_failed", source=str(source.id), error=error.message)
        return None
    record_success(source, now)
    return stats


def backfill_view(row: PrometheusBackfill | None) -> dict[str, Any]:
    """Shape a backfill row for the API (status none before the first run)."""
    if row is None:
        return {
            "status": "none",
            "steps_done": 0,
            "steps_total": 0,
            "percent": 0.0,
            "points_written": 0,
            "dropped_non_finite": 0,
            "dropped_outside": 0,
            "range_start_at": None,
            "range_end_at": None,
            "started_at": None,
            "finished_at": None,
            "last_error": None,
        }
    percent = (
        100.0 * row.steps_done / row.steps_total
        if row.steps_total
        else (100.0 if row.status == "done" else 0.0)
    )
    return {
        "status": row.status,
        "steps_done": row.steps_done,
        "steps_total": row.steps_total,
        "percent": round(percent, 1),
        "points_written": row.points_written,
        "dropped_non_finite": row.dropped_non_finite,
        "dropped_outside": row.dropped_outside,
        "range_start_at": row.range_start_at,
        "range_end_at": row.range_end_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "last_error": row.last_error,
    }


# --- the jobs' work (headroom.sources.prometheus.jobs: ids in, these do the rest) ------------------------------

CONFIG_POLL_EVERY_MINUTES = 10
STALE_BACKFILL = dt.timedelta(minutes=30)
# A backfill replaced mid-run starts the new plan at once; more replacements than this in one run are left to
# the next queueing (no number from a source: a bound against a loop, not a tuning).
SUPERSEDED_RETRIES = 3


def _lock(db: Any, source_id: uuid.UUID) -> bool:
    # One run per source at a time: a slow pull must not overlap the next minute's run.
    return bool(db.scalar(select(func.pg_try_advisory_xact_lock(func.hashtext(f"prometheus:{source_id}")))))


def ingest_sources(ctx: JobContext, now: dt.datetime, source_id: str | None = None) -> dict[str, Any]:
    """Pull every attached Prometheus source (or one) since its watermarks; queue a backfill for new sources.

    With a broker the scheduled run fans out one task per source, so a slow or unreachable Prometheus delays
    no other tenant; without one (in-process scheduler) the sources run here one after another.
    """
    if source_id is not None:
        summary = _ingest_source(ctx, now, uuid.UUID(source_id))
    else:
        with ctx.unit() as db:
            source_ids = list(
                db.scalars(select(PrometheusSource.id).where(PrometheusSource.cluster_id.is_not(None)))
            )
        fanned = ctx.fan_out("prometheus.ingest", "source_id", source_ids, now)
        if fanned is not None:
            return {"sources": len(source_ids), **fanned}
        summary = {"sources": len(source_ids), "points": 0, "failed": 0, "backfills_queued": 0}
        for sid in source_ids:
            one = _ingest_source(ctx, now, sid)
            for key in ("points", "failed", "backfills_queued"):
                summary[key] += one[key]
    log.info("prometheus.ingest_done", **summary)
    return summary


def _ingest_source(ctx: JobContext, now: dt.datetime, source_id: uuid.UUID) -> dict[str, Any]:
    summary: dict[str, Any] = {"sources": 1, "points": 0, "failed": 0, "backfills_queued": 0}
    queue_backfill = False
    with ctx.unit() as db:
        source = db.get(PrometheusSource, source_id)
        if source is None or source.cluster_id is None or not _lock(db, source_id):
            return summary
        backfill = get_backfill(db, source)
        stale = (
            backfill is not None
            and backfill.status in ("queued", "running")
            and backfill.updated_at < now - STALE_BACKFILL
        )
        # A "running" backfill whose liveness lock is free lost its worker (killed): queue it again at once;
        # its plan is kept (request_backfill resets only rows not running), so the new run resumes it.
        dead = (
            backfill is not None
            and backfill.status == "running"
            and bool(db.scalar(select(func.pg_try_advisory_xact_lock(
                func.hashtext(f"prometheus-backfill:{source_id}")))))
        )
        if backfill is None or stale or dead:
            # A stale row with chunks stored is re-queued as it is (resumed), not restarted from zero.
            request_backfill(db, source, now=now, restart=stale and (backfill is None or backfill.steps_done == 0))
            if dead and backfill is not None:
                backfill.status = "queued"  # so the next minute does not queue it again while it waits
            queue_backfill = True
        elif backfill.status in ("done", "failed"):
            box = SecretBox(ctx.settings.secret_key)
            with ingest.client_for(source, box, timeout_seconds=20.0) as client:
                stats = run_incremental(db, source, client, now=now)
            if stats is None:
                summary["failed"] += 1
            else:
                summary["points"] += stats.points
            if now.minute % CONFIG_POLL_EVERY_MINUTES == 0:
                poll_cluster(db, source.org_id, source.cluster_id, now=now)
    if queue_backfill:  # after the commit, so the task sees the row
        ctx.enqueue("prometheus.backfill", source_id=str(source_id))
        summary["backfills_queued"] += 1
    return summary


def backfill(ctx: JobContext, now: dt.datetime, source_id: str | None = None) -> dict[str, Any]:
    """Import a source's history (14 days by default), committing progress after each chunk.

    Resumable: the chunks are planned when the backfill starts and each is marked done with its points, so a
    run after a killed one (a redelivery or a re-queue) fetches only the chunks not stored yet.
    """
    if source_id is None:  # the in-process scheduler's catch-up run calls every job without params
        return {"skipped": "no source_id"}
    sid = uuid.UUID(source_id)
    # A session-level advisory lock on a connection of its own marks the run as alive (as aws.backfill does):
    # it survives the per-chunk commits and Postgres drops it when a killed worker's connection goes away, so
    # the next run takes over at once instead of waiting for the row to look stale.
    with engine_for(ctx.database_url).connect() as lock_conn:
        key = {"k": f"prometheus-backfill:{sid}"}
        if not lock_conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), key).scalar():
            return {"skipped": "already running"}
        try:
            return _backfill(ctx, now, sid)
        finally:
            lock_conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), key)
            lock_conn.commit()


def _backfill(ctx: JobContext, now: dt.datetime, source_id: uuid.UUID) -> dict[str, Any]:
    box = SecretBox(ctx.settings.secret_key)
    for _attempt in range(SUPERSEDED_RETRIES):
        try:
            with ctx.unit() as db:
                source = db.get(PrometheusSource, source_id)
                if source is None or source.cluster_id is None:
                    return {"skipped": "source missing or not attached to a cluster"}
                with ingest.client_for(source, box) as client:
                    row = run_backfill(db, source, client, now=now, checkpoint=db.commit)
                poll_cluster(db, source.org_id, source.cluster_id, now=now)
                return {"status": row.status, "points": row.points_written, "steps": row.steps_done,
                        "steps_total": row.steps_total}
        except ingest.BackfillSuperseded:  # a new backfill was asked for mid-run: run that one
            log.info("prometheus.backfill_superseded", source=str(source_id))
    return {"skipped": "superseded"}

"""Headroom's own health in Prometheus's text format (GET /metrics, docs/operations.md), and the request id.

Two kinds of figures, so that every process (uvicorn workers, API replicas, Celery worker processes on any host)
tells the same truth:

- Values that live in the database or Redis are read at scrape time by collectors: each source's ingest lag and
  its last sweep (PostgreSQL), each Celery queue's depth (Redis LLEN), and the jobs' run counts and durations,
  which every job run adds to one Redis hash (`RedisJobStats`; without Redis jobs run inside the API process and
  are counted in its memory, `LocalJobStats`). Any API process answers with the whole deployment's figures.
- HTTP latency and the routed reads are the per-process figures: a prometheus_client Histogram by route template
  (never the raw path, whose ids would make a series per resource), method and status class, and a Counter of
  the dashboard's reads by database and reason (platform/replica.py). With several uvicorn workers set
  PROMETHEUS_MULTIPROC_DIR (prometheus_client's multiprocess mode) and every worker's requests are summed.

No label carries an organisation's, cluster's or source's name: sources are labelled by their id only.
"""

from __future__ import annotations

import bisect
import contextvars
import datetime as dt
import hmac
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from headroom.platform.logging import get_logger
from headroom.platform.redis_client import redis_client

log = get_logger("headroom.platform.telemetry")

REQUEST_ID_HEADER = "X-Request-ID"
# An incoming X-Request-ID (from a proxy or a client) is kept when it is this shape: short, printable, no spaces
# or separators that could forge a log field; anything else is replaced by a fresh id.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}")
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED_ROUTE = "<unmatched>"

# Latency buckets (seconds): 0.3 is the dashboard's p95 goal (docs/operations.md); the rest follow
# prometheus_client's defaults, so the usual quantiles stay readable.
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.3, 0.5, 1.0, 2.5, 5.0, 10.0)
# Job durations span a 50 ms no-op (advice.demo_first with nothing to do) to a history import bounded by Celery's
# 30-minute hard limit (worker/headroom_worker/celery_app.py task_time_limit).
JOB_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

# The process's own metrics (HTTP latency). In multiprocess mode prometheus_client writes them to
# PROMETHEUS_MULTIPROC_DIR instead and MultiProcessCollector reads every process's files.
PROCESS_REGISTRY = CollectorRegistry(auto_describe=True)
HTTP_DURATION = Histogram(
    "headroom_http_request_duration_seconds",
    "Time from a request's arrival to its last response byte, by route template, method and status class.",
    ["route", "method", "status_class"],
    buckets=HTTP_BUCKETS,
    registry=PROCESS_REGISTRY,
)
# Where the dashboard's read-only queries ran (platform/replica.py): the replica, or the primary and why.
DB_READS = Counter(
    "headroom_db_reads",
    "Read-only API requests by the database they read (target: replica or primary) and why (reason).",
    ["target", "reason"],
    registry=PROCESS_REGISTRY,
)
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    ProcessCollector(registry=PROCESS_REGISTRY)
    PlatformCollector(registry=PROCESS_REGISTRY)


# --- request ids and HTTP latency -----------------------------------------------------------------------------


def new_request_id() -> str:
    """A fresh request or job id (32 lower-case hex digits: never mistaken for a secret by the log scrubber)."""
    return uuid.uuid4().hex


def sane_request_id(value: str | None) -> str | None:
    """The incoming id when it is a sane one, else None."""
    if value and _SANE_REQUEST_ID.fullmatch(value):
        return value
    return None


def route_template(scope: dict[str, Any]) -> str:
    """The matched route's template (`/api/v1/clusters/{cluster_id}`), never the raw path.

    FastAPI's `scope["route"]` carries the template relative to the router it was declared in; the prefixes of the
    routers it was included in are the literal start of the path, up to where the route's own pattern matches the
    rest. Taking the first such place keeps the label a prefix of that literal part (a bounded set of values)
    whatever the path holds."""
    route = scope.get("route")
    template, pattern = getattr(route, "path", None), getattr(route, "path_regex", None)
    if not isinstance(template, str) or pattern is None:
        return UNMATCHED_ROUTE
    path = str(scope.get("path", ""))
    for i, char in enumerate(path):
        if char == "/" and pattern.match(path[i:]):
            return path[:i] + template
    return template


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status < 600 else "other"


# Answers that say nothing of their time: the sign-in, sign-up, invitation and unsubscribe answers, whose database
# statements could differ by whether an account or a token exists (the log-in hashes a stand-in password for an
# unknown address so that its time does not say so; a statement count would).
UNTIMED_PREFIXES = ("/api/v1/auth/", "/api/v1/digest/unsubscribe")


@dataclass
class RequestTiming:
    """Where one request's time went, for its Server-Timing header: the database's share (every statement the
    request's sessions ran, timed around the driver's execute; platform/db.py) and how many statements.

    Mutated in place: a sync route runs in a worker thread with a copy of the request's context, and the copy
    holds this same object."""

    db_seconds: float = 0.0
    db_statements: int = 0


_REQUEST_TIMING: contextvars.ContextVar[RequestTiming | None] = contextvars.ContextVar("request_timing", default=None)


def request_timing() -> RequestTiming | None:
    """The timing of the request being handled in this context, or None outside a request (jobs, the CLI)."""
    return _REQUEST_TIMING.get()


def server_timing_header(total_seconds: float, timing: RequestTiming) -> bytes:
    """`Server-Timing` (W3C Server Timing, https://www.w3.org/TR/server-timing/): `app` is the time from the
    request's arrival to its answer's first byte, `db` the part of it spent in database statements. Browsers show
    it in their network panel; the page bench reads it to split a slow page's time between the server and the
    network or the browser."""
    return (
        f'app;dur={total_seconds * 1000:.1f}, '
        f'db;dur={timing.db_seconds * 1000:.1f};desc="{timing.db_statements} statements"'
    ).encode("latin-1")


class RequestTelemetry:
    """Pure ASGI middleware: gives each HTTP request an id (the incoming X-Request-ID when sane, else a new one),
    binds it to every log line written while the request is handled, returns it in the X-Request-ID response
    header, and observes the request's duration in HTTP_DURATION.

    The id stays bound after the request ends, in the request's own task: the 500 handler, which runs outside
    this middleware, logs with it and returns it too (`scope["state"]["request_id"]`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = None
        for name, raw in scope.get("headers", ()):
            if name == b"x-request-id":
                incoming = sane_request_id(raw.decode("latin-1").strip())
                break
        request_id = incoming or new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        header = (b"x-request-id", request_id.encode("latin-1"))
        status = 500
        started = time.perf_counter()
        timing = RequestTiming()
        _REQUEST_TIMING.set(timing)
        timed = not str(scope.get("path", "")).startswith(UNTIMED_PREFIXES)

        async def send_with_id(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [(k, v) for k, v in message.get("headers", ())
                           if k.lower() not in (b"x-request-id", b"server-timing")]
                took = [(b"server-timing", server_timing_header(time.perf_counter() - started, timing))] if timed else []
                message = {**message, "headers": [*headers, header, *took]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except BaseException:
            status = 500
            raise
        finally:
            method = scope.get("method", "")
            HTTP_DURATION.labels(
                route=route_template(scope),
                method=method if method in HTTP_METHODS else "OTHER",
                status_class=status_class(status),
            ).observe(time.perf_counter() - started)


def bearer_matches(authorization: str | None, token: str) -> bool:
    """Whether an Authorization header is `Bearer <token>` (compared in constant time)."""
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


# --- job runs: counts and durations shared by every process ----------------------------------------------------

JOB_OUTCOMES = ("succeeded", "failed")


@dataclass
class JobTotals:
    """Every job's run counts by outcome, duration histogram (counts per bucket, not cumulative; the last one is
    +Inf) and sum, and the time of its last successful run."""

    runs: dict[tuple[str, str], int] = field(default_factory=dict)
    buckets: dict[str, list[int]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    last_success: dict[str, float] = field(default_factory=dict)


class JobStats(Protocol):
    def record(self, job: str, outcome: str, seconds: float, at: float) -> None:
        """Count one run of `job` that ended with `outcome` after `seconds`, at unix time `at`."""

    def record_expired(self, job: str, count: int) -> None:
        """Count `count` runs of `job` dropped unstarted because their round expired (outcome "expired")."""

    def read(self) -> JobTotals:
        """Every job's totals."""


def _bucket_index(seconds: float) -> int:
    return bisect.bisect_left(JOB_BUCKETS, seconds)


class LocalJobStats:
    """Job totals in this process's memory: for the in-process runtime (no Redis), where the API runs the jobs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = JobTotals()

    def record(self, job: str, outcome: str, seconds: float, at: float) -> None:
        with self._lock:
            t = self._totals
            t.runs[(job, outcome)] = t.runs.get((job, outcome), 0) + 1
            t.buckets.setdefault(job, [0] * (len(JOB_BUCKETS) + 1))[_bucket_index(seconds)] += 1
            t.seconds[job] = t.seconds.get(job, 0.0) + seconds
            if outcome == "succeeded":
                t.last_success[job] = at

    def record_expired(self, job: str, count: int) -> None:
        with self._lock:
            self._totals.runs[(job, "expired")] = self._totals.runs.get((job, "expired"), 0) + count

    def read(self) -> JobTotals:
        with self._lock:
            t = self._totals
            return JobTotals(
                dict(t.runs),
                {k: list(v) for k, v in t.buckets.items()},
                dict(t.seconds),
                dict(t.last_success),
            )


# The Redis hash every process adds its job runs to (in the broker's database; a few hundred fields at most).
JOB_STATS_KEY = "headroom:ops:jobs"
# Seconds to wait for Redis when counting a run: a slow Redis must not hold up the job.
REDIS_STATS_TIMEOUT = 1.0


class RedisJobStats:
    """Job totals in one Redis hash (fields `runs|job|outcome`, `bucket|job|i`, `sum|job`, `last|job`), so any
    API process reports the runs of every worker process on every host."""

    def __init__(self, redis_url: str, key: str = JOB_STATS_KEY) -> None:
        self._client = redis_client(redis_url, REDIS_STATS_TIMEOUT)
        self.key = key

    def record(self, job: str, outcome: str, seconds: float, at: float) -> None:
        pipe = self._client.pipeline(transaction=False)
        pipe.hincrby(self.key, f"runs|{job}|{outcome}", 1)
        pipe.hincrby(self.key, f"bucket|{job}|{_bucket_index(seconds)}", 1)
        pipe.hincrbyfloat(self.key, f"sum|{job}", seconds)
        if outcome == "succeeded":
            pipe.hset(self.key, f"last|{job}", repr(at))
        pipe.execute()

    def record_expired(self, job: str, count: int) -> None:
        self._client.hincrby(self.key, f"runs|{job}|expired", count)

    def read(self) -> JobTotals:
        totals = JobTotals()
        raw: dict[bytes, bytes] = self._client.hgetall(self.key)
        for key, value in raw.items():
            kind, _, rest = key.decode().partition("|")
            if kind == "runs":
                job, _, outcome = rest.rpartition("|")
                totals.runs[(job, outcome)] = int(value)
            elif kind == "bucket":
                job, _, index = rest.rpartition("|")
                slots = totals.buckets.setdefault(job, [0] * (len(JOB_BUCKETS) + 1))
                if index.isdigit() and int(index) < len(slots):
                    slots[int(index)] = int(value)
            elif kind == "sum":
                totals.seconds[rest] = float(value)
            elif kind == "last":
                totals.last_success[rest] = float(value)
        return totals


_local_stats = LocalJobStats()


@lru_cache(maxsize=4)
def _redis_stats(redis_url: str) -> RedisJobStats:
    return RedisJobStats(redis_url)


def job_stats(redis_url: str | None) -> JobStats:
    """Where this deployment counts its job runs: Redis when there is one (Celery), else this process."""
    return _redis_stats(redis_url) if redis_url else _local_stats


def record_job_run(stats: JobStats, job: str, outcome: str, seconds: float) -> None:
    """Count a job run; a failure to count is logged, never raised (metrics must not fail a job)."""
    try:
        stats.record(job, outcome, seconds, time.time())
    except Exception as exc:  # noqa: BLE001 - Redis down: the run is not counted, the job goes on
        log.warning("telemetry.job_not_counted", error_type=type(exc).__name__)


def record_jobs_expired(stats: JobStats, job: str, count: int) -> None:
    """Count runs of `job` dropped unstarted (their round expired); a failure to count is logged, never raised."""
    try:
        stats.record_expired(job, count)
    except Exception as exc:  # noqa: BLE001 - Redis down: not counted, the worker goes on
        log.warning("telemetry.job_not_counted", error_type=type(exc).__name__)


def job_families(totals: JobTotals) -> Iterator[Metric]:
    """The job figures as metric families."""
    runs = CounterMetricFamily(
        "headroom_job_runs",
        "Job runs that ended, by job (`task`: Prometheus keeps `job` for the scrape job) and outcome (succeeded; "
        "failed: raised an error, a retry counts as a failed run; expired: dropped unstarted because its round's "
        "expiry passed).",
        labels=["task", "outcome"],
    )
    for (job, outcome), count in sorted(totals.runs.items()):
        runs.add_metric([job, outcome], count)
    yield runs
    durations = HistogramMetricFamily(
        "headroom_job_duration_seconds",
        'Wall time of a job run, by job (`task`; task="advice.run" is the advice run time).',
        labels=["task"],
    )
    for job, counts in sorted(totals.buckets.items()):
        cumulative, buckets = 0, []
        for bound, count in zip((*JOB_BUCKETS, float("inf")), counts, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
        durations.add_metric([job], buckets, sum_value=totals.seconds.get(job, 0.0))
    yield durations
    last = GaugeMetricFamily(
        "headroom_job_last_success_timestamp_seconds",
        "Unix time a job (`task`) last ended without an error.",
        labels=["task"],
    )
    for job, at in sorted(totals.last_success.items()):
        last.add_metric([job], at)
    yield last


# --- the deployment's state, read at scrape time ---------------------------------------------------------------


@dataclass(frozen=True)
class SourceHealthRow:
    """A data source's collection health (the sources tables)."""

    source_kind: str  # aws | prometheus
    source_id: str
    status: str  # unknown | ok | failing
    last_success_at: dt.datetime | None
    consecutive_failures: int


@dataclass(frozen=True)
class SweepRow:
    """A source's last finished incremental collection sweep (collection_sweeps)."""

    source_kind: str
    source_id: str
    started_at: dt.datetime
    finished_at: dt.datetime
    api_calls: int
    points_written: int
    failed: bool


@dataclass(frozen=True)
class DeploymentState:
    sources: Sequence[SourceHealthRow]
    sweeps: Sequence[SweepRow]


def state_families(state: DeploymentState, now: dt.datetime) -> Iterator[Metric]:
    """The sources' and sweeps' figures as metric families (labelled by source id and kind, never by name)."""
    lag = GaugeMetricFamily(
        "headroom_source_ingest_lag_seconds",
        "Seconds since the source's last successful collection (absent until its first one).",
        labels=["source_kind", "source_id"],
    )
    failures = GaugeMetricFamily(
        "headroom_source_consecutive_failures",
        "Collection attempts that failed in a row (3 or more: the source is failing).",
        labels=["source_kind", "source_id"],
    )
    counts: dict[tuple[str, str], int] = {}
    for row in state.sources:
        labels = [row.source_kind, row.source_id]
        if row.last_success_at is not None:
            lag.add_metric(labels, max((now - row.last_success_at).total_seconds(), 0.0))
        failures.add_metric(labels, row.consecutive_failures)
        counts[(row.source_kind, row.status)] = counts.get((row.source_kind, row.status), 0) + 1
    by_status = GaugeMetricFamily(
        "headroom_sources", "Data sources by kind and health status.", labels=["source_kind", "status"]
    )
    for (kind, status), count in sorted(counts.items()):
        by_status.add_metric([kind, status], count)
    yield from (lag, failures, by_status)
    duration = GaugeMetricFamily(
        "headroom_sweep_last_duration_seconds",
        "Wall time of the source's last finished incremental sweep.",
        labels=["source_kind", "source_id"],
    )
    calls = GaugeMetricFamily(
        "headroom_sweep_last_api_calls",
        "API calls (CloudWatch GetMetricData and "
        "inventory) made by the source's last finished incremental sweep.",
        labels=["source_kind", "source_id"],
    )
    points = GaugeMetricFamily(
        "headroom_sweep_last_points_written",
        "Points the source's last finished incremental sweep wrote.",
        labels=["source_kind", "source_id"],
    )
    finished = GaugeMetricFamily(
        "headroom_sweep_last_finished_timestamp_seconds",
        "Unix time the source's last incremental sweep finished.",
        labels=["source_kind", "source_id"],
    )
    failed = GaugeMetricFamily(
        "headroom_sweep_last_failed",
        "1 when the source's last finished incremental sweep recorded an error.",
        labels=["source_kind", "source_id"],
    )
    for sweep in state.sweeps:
        labels = [sweep.source_kind, sweep.source_id]
        duration.add_metric(labels, max((sweep.finished_at - sweep.started_at).total_seconds(), 0.0))
        calls.add_metric(labels, sweep.api_calls)
        points.add_metric(labels, sweep.points_written)
        finished.add_metric(labels, sweep.finished_at.timestamp())
        failed.add_metric(labels, 1 if sweep.failed else 0)
    yield from (duration, calls, points, finished, failed)


def replica_families(lag_seconds: float | None, up: bool) -> Iterator[Metric]:
    """The read replica's state, read at scrape time: whether it answered, and its lag when it did."""
    yield GaugeMetricFamily(
        "headroom_db_replica_up", "1 when the read replica (DATABASE_REPLICA_URL) answered this scrape.",
        value=1 if up else 0,
    )
    if up and lag_seconds is not None:
        yield GaugeMetricFamily(
            "headroom_db_replica_lag_seconds",
            "How far the read replica is behind the primary: 0 when it streams and has replayed all it received, "
            "else the age of the last transaction it replayed.",
            value=max(lag_seconds, 0.0),
        )


# kombu's Redis transport keeps a queue's messages of priority 0 under the queue's name and the others under
# `name\x06\x16<priority>` for its default priority steps 3, 6 and 9 (kombu.transport.redis, PRIORITY_STEPS).
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")
# Delivered but not yet acknowledged (running, or prefetched, under task_acks_late) tasks of all queues.
_UNACKED_KEY = "unacked"


def queue_families(depths: dict[str, int], unacked: int | None) -> Iterator[Metric]:
    depth = GaugeMetricFamily(
        "headroom_queue_depth",
        "Jobs waiting in a queue (Celery's Redis lists, or the API process's own pools without Redis).",
        labels=["queue"],
    )
    for queue, count in depths.items():
        depth.add_metric([queue], count)
    yield depth
    if unacked is not None:
        yield GaugeMetricFamily(
            "headroom_queue_unacked",
            "Jobs a Celery worker took but has not finished (all queues).",
            value=unacked,
        )


def redis_queue_depths(redis_url: str, queues: Sequence[str]) -> tuple[dict[str, int], int]:
    """Each queue's waiting messages (all priorities) and the unacknowledged ones, read from the broker."""
    client = _redis_client(redis_url)
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        for suffix in _PRIORITY_SUFFIXES:
            pipe.llen(queue + suffix)
    pipe.hlen(_UNACKED_KEY)
    replies = [int(r) for r in pipe.execute()]
    per_queue = len(_PRIORITY_SUFFIXES)
    depths = {q: sum(replies[i * per_queue : (i + 1) * per_queue]) for i, q in enumerate(queues)}
    return depths, replies[-1]


def _redis_client(redis_url: str) -> Any:
    return redis_client(redis_url, REDIS_STATS_TIMEOUT)


# --- the exposition ----------------------------------------------------------------------------------------------


def scrape_error_family(failed: Iterable[str], attempted: Iterable[str]) -> Metric:
    family = GaugeMetricFamily(
        "headroom_scrape_error",
        "1 when this scrape could not read a part of the "
        "deployment's state (database, broker); its families are then missing.",
        labels=["part"],
    )
    bad = set(failed)
    for part in attempted:
        family.add_metric([part], 1 if part in bad else 0)
    return family


class DeploymentCollector:
    """Reads the deployment's state at scrape time: `parts` maps a part's name (database, broker, jobs) to a
    function yielding its families; a part that fails is reported by headroom_scrape_error and logged."""

    def __init__(self, parts: dict[str, Callable[[], Iterable[Metric]]]) -> None:
        self.parts = parts

    def collect(self) -> Iterator[Metric]:
        failed: list[str] = []
        for name, part in self.parts.items():
            try:
                families = list(part())
            except Exception as exc:  # noqa: BLE001 - one unreachable part must not hide the others
                log.warning("telemetry.part_failed", part=name, error_type=type(exc).__name__)
                failed.append(name)
                continue
            yield from families
        yield scrape_error_family(failed, self.parts)


class _Together:
    def __init__(self, collectors: Sequence[Any]) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.collect()


def exposition(collectors: Sequence[Any]) -> bytes:
    """The text exposition of the process's metrics (every process's, in multiprocess mode) and `collectors`."""
    multiproc_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    process: Any = (
        MultiProcessCollector(None, multiproc_dir)  # type: ignore[no-untyped-call]
        if multiproc_dir
        else PROCESS_REGISTRY
    )
    return generate_latest(_Together([process, *collectors]))

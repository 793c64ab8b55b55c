"""A real Celery worker process against the test Redis runs tasks; beat entries name registered tasks."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from celery_workers import START_SECONDS


@pytest.fixture(scope="module")
def celery_app(worker_env: dict[str, str]) -> Any:
    from headroom_worker.celery_app import app

    app.loader.import_default_modules()  # what a worker does at start: import the `imports` modules
    return app


@pytest.fixture(scope="module")
def worker(worker_env: dict[str, str], celery_app: Any) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "headroom_worker.celery_app", "worker", "--loglevel=INFO",
         "--concurrency=1", "--pool=prefork", "-Q", "ingest,advice,email,maintenance", "-n", "pytest@%h",
         "--without-gossip", "--without-mingle"],
        env=worker_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            replies = celery_app.control.ping(timeout=1.0)
            if replies:
                break
            if proc.poll() is not None:
                raise AssertionError(proc.stdout.read().decode() if proc.stdout else "worker exited")
        else:
            raise AssertionError(f"worker did not answer a ping within {START_SECONDS} s")
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_worker_runs_a_task(worker: Any, celery_app: Any) -> None:
    result = celery_app.send_task("system.ping")
    assert set(result.get(timeout=60)) == {"pong"}


def _drop_2033_partitions(engine: sa.Engine) -> set[str]:
    with engine.begin() as conn:
        names = {
            r[0]
            for r in conn.execute(
                sa.text("SELECT relname FROM pg_class WHERE relkind = 'r' AND relname ~ '^metric_(points|rollups)_p2033'")
            )
        }
        for name in names:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {name}"))
    return names


def test_worker_runs_a_scheduled_job_against_the_database(worker: Any, celery_app: Any, worker_env: dict[str, str]) -> None:
    engine = sa.create_engine(worker_env["DATABASE_URL"])
    try:
        _drop_2033_partitions(engine)
        when = dt.datetime(2033, 3, 1, 12, 0, tzinfo=dt.UTC)
        result = celery_app.send_task("timeseries.maintain", kwargs={"now_iso": when.isoformat()}, queue="maintenance")
        summary = result.get(timeout=120)
        # Days 2033-02-28 .. 03-03 and the February and March rollup months.
        assert summary["created"] == 6
        created = _drop_2033_partitions(engine)
        assert {"metric_points_p20330228", "metric_points_p20330301", "metric_points_p20330303",
                "metric_rollups_p203302", "metric_rollups_p203303"} <= created
    finally:
        engine.dispose()


def test_worker_drains_the_rollup_queue(worker: Any, celery_app: Any, worker_env: dict[str, str]) -> None:
    """Points written (and committed) by an ingest leave their days queued; the timeseries.rollups task run by
    the worker computes them."""
    import uuid

    import numpy as np
    from headroom.accounts.models import Organization
    from headroom.platform.security import new_external_id
    from headroom.timeseries import repository as ts
    from sqlalchemy.orm import Session

    engine = sa.create_engine(worker_env["DATABASE_URL"])
    start = dt.datetime(2026, 10, 5, tzinfo=dt.UTC)
    try:
        with Session(engine) as db:
            org = Organization(name="w", slug=f"w-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
            db.add(org)
            db.flush()
            key = ts.SeriesKey("volume", f"vol-{uuid.uuid4().hex[:8]}", "aws.ebs.VolumeReadOps", "count")
            sid = ts.ensure_series(db, org.id, [key])[key]
            ts.write_batches(db, org.id, [ts.SeriesBatch(sid, start, 60, np.arange(2 * 1440, dtype=float))])
            db.commit()
            org_id = org.id
        summary = celery_app.send_task("timeseries.rollups", queue="maintenance").get(timeout=120)
        assert summary["pairs"] >= 2 and summary["pending"] == 0
        with Session(engine) as db:
            got = ts.read_rollups(db, org_id, [sid], 3600, start, start + dt.timedelta(days=2))[sid]
            assert len(got) == 48 and got.avg[0] == 29.5 and got.max[-1] == 2 * 1440 - 1
            db.execute(sa.text("DELETE FROM metric_points WHERE org_id = :o"), {"o": org_id})
            db.execute(sa.text("DELETE FROM metric_rollups WHERE org_id = :o"), {"o": org_id})
            db.execute(sa.text("DELETE FROM organizations WHERE id = :o"), {"o": org_id})
            db.commit()
    finally:
        engine.dispose()


def test_beat_entries_name_registered_tasks_on_known_queues(celery_app: Any) -> None:
    from headroom.platform.jobs.registry import QUEUES
    from headroom_worker.beat import beat_schedule

    schedule = beat_schedule()
    assert schedule, "the beat schedule is empty"
    registered = set(celery_app.tasks)
    for name, entry in schedule.items():
        assert entry["task"] in registered, f"beat entry {name} names an unregistered task"
        assert entry["options"]["queue"] in QUEUES
        assert entry["options"]["expires"] > 0


def test_worker_settings_are_safe_for_many_workers(celery_app: Any) -> None:
    conf = celery_app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.broker_transport_options["visibility_timeout"] > conf.task_time_limit
    assert {q.name for q in conf.task_queues} == {"ingest", "advice", "email", "alerts", "maintenance"}


def test_only_transient_errors_are_retried() -> None:
    import sqlalchemy.exc
    from headroom_worker.tasks import TASKS, TRANSIENT_ERRORS

    assert issubclass(sqlalchemy.exc.OperationalError, TRANSIENT_ERRORS)
    assert not issubclass(ValueError, TRANSIENT_ERRORS)
    assert not issubclass(sqlalchemy.exc.IntegrityError, TRANSIENT_ERRORS)
    for task in TASKS.values():
        assert task.autoretry_for == TRANSIENT_ERRORS
        assert task.retry_jitter is True


def test_an_on_demand_advice_run_is_released_by_the_worker(worker: Any, celery_app: Any,
                                                            worker_env: dict[str, str]) -> None:
    """The API's path end to end: claim a run, queue it with the API's client, a real worker runs it and releases
    the run, so the next request for the cluster queues again (a dead worker must not block the cluster's next run)."""
    import uuid

    from headroom.accounts.models import Organization
    from headroom.clusters.models import Cluster
    from headroom.findings import advice_runs
    from headroom.findings.models import AdviceRun
    from headroom.platform.db import session_scope
    from headroom.platform.jobs import dispatch
    from headroom.platform.security import new_external_id
    from headroom.platform.settings import Settings

    url = worker_env["DATABASE_URL"]
    now = dt.datetime.now(dt.UTC)
    with session_scope(url) as db:
        org = Organization(name="w", slug=f"w-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
        db.add(org)
        db.flush()
        cluster = Cluster(org_id=org.id, name="prod", tikv_version="v8.5.1", deployment_kind="tiup")
        db.add(cluster)
        db.flush()
        org_id, cluster_id = org.id, cluster.id
        task_id, new = advice_runs.claim_run(db, cluster, now)
        assert new
    try:
        settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                            REDIS_URL=worker_env["REDIS_URL"])
        queued = dispatch.enqueue("advice.run", settings, url, task_id=task_id, cluster_id=str(cluster_id),
                                  run_id=task_id)
        assert queued == task_id
        summary = celery_app.AsyncResult(task_id).get(timeout=120)
        assert [c["cluster_id"] for c in summary["clusters"]] == [str(cluster_id)] and summary["failed"] == 0
        with session_scope(url) as db:
            assert db.get(AdviceRun, cluster_id) is None
            cluster = db.get(Cluster, cluster_id)
            assert advice_runs.claim_run(db, cluster, dt.datetime.now(dt.UTC))[1] is True
    finally:
        with session_scope(url) as db:
            db.execute(sa.delete(Organization).where(Organization.id == org_id))


def _worker_output(proc: subprocess.Popen[bytes]) -> str:
    """What the worker wrote so far (read without blocking)."""
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    chunks: list[bytes] = []
    while (chunk := proc.stdout.read()):
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def test_a_task_is_counted_and_its_lines_carry_its_job_id(worker: Any, celery_app: Any,
                                                           worker_env: dict[str, str]) -> None:
    """The run lands in the Redis job stats /metrics reads (headroom.platform.telemetry), and every line the
    worker process writes for the task, Celery's own "succeeded" line included, carries the task's id."""
    from headroom.platform.telemetry import RedisJobStats

    stats = RedisJobStats(worker_env["REDIS_URL"])
    before = stats.read()
    _worker_output(worker)
    result = celery_app.send_task("timeseries.rollups", queue="maintenance")
    result.get(timeout=120)
    deadline = time.monotonic() + 10
    out = ""
    while time.monotonic() < deadline and "succeeded in" not in out:
        time.sleep(0.2)
        out += _worker_output(worker)
    after = stats.read()

    key = ("timeseries.rollups", "succeeded")
    assert after.runs[key] == before.runs.get(key, 0) + 1
    assert sum(after.buckets["timeseries.rollups"]) == sum(before.buckets.get("timeseries.rollups", [])) + 1
    task_lines = [line for line in out.splitlines() if result.id in line]
    assert any("job.ended" in line and "outcome=succeeded" in line for line in task_lines), out
    succeeded = [line for line in task_lines if "succeeded in" in line]
    assert succeeded and all(f"job_id={result.id}" in line for line in succeeded), out
    assert all(f"job_id={result.id}" in line for line in task_lines if "received" not in line.lower()), out


def test_a_scheduled_round_is_one_task_per_cluster(worker: Any, celery_app: Any, worker_env: dict[str, str],
                                                    two_orgs: tuple[list[Any], list[Any]]) -> None:
    """The scale-out path (docs/scaling.md): the scheduled demo ingest and advice runs, sent as beat sends them
    (no cluster), queue one message per cluster on their queue (a small round), which the worker processes share; each cluster is
    ingested and advised by its own task, for the scheduled minute."""
    from headroom.findings.models import FindingRecord
    from headroom.platform.db import session_scope
    from headroom.platform.telemetry import RedisJobStats
    from headroom.timeseries.models import IngestWatermark

    url = worker_env["DATABASE_URL"]
    stats = RedisJobStats(worker_env["REDIS_URL"])
    before = stats.read()
    cluster_ids = two_orgs[1]
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    round_ = celery_app.send_task("demo.ingest", kwargs={"now_iso": now.isoformat()}, queue="ingest")
    # a round this small is one message per cluster (a big one carries several: the next tests)
    assert round_.get(timeout=60) == {"clusters": 2, "points": 0, "fanned_out": True, "queued": 2, "messages": 2}

    def done(query: Any) -> bool:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            with session_scope(url) as db:
                if set(db.scalars(query)) == set(cluster_ids):
                    return True
            time.sleep(0.5)
        return False

    # each cluster's own task brought it up to the scheduled minute
    assert done(sa.select(IngestWatermark.source_id).where(
        IngestWatermark.source_id.in_(cluster_ids), IngestWatermark.watermark_at == now - dt.timedelta(minutes=1)))
    advice = celery_app.send_task("advice.run", kwargs={"now_iso": now.isoformat()}, queue="advice").get(timeout=60)
    assert advice["fanned_out"] is True and advice["queued"] >= 2
    assert done(sa.select(FindingRecord.cluster_id).where(FindingRecord.cluster_id.in_(cluster_ids)))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the worker counts a run after its task returned
        after = stats.read()
        ran = {job: after.runs.get((job, "succeeded"), 0) - before.runs.get((job, "succeeded"), 0)
               for job in ("demo.ingest", "advice.run")}
        if ran["advice.run"] >= 1 + advice["queued"]:
            break
        time.sleep(0.2)
    assert ran == {"demo.ingest": 3, "advice.run": 1 + advice["queued"]}  # the round, then one per cluster


@pytest.fixture()
def two_orgs(worker_env: dict[str, str]) -> Iterator[tuple[list[Any], list[Any]]]:
    """Two organisations with a demo cluster each (no data yet), committed: (organisation ids, cluster ids). After
    the test, the organisations and whatever points and rollups were stored for them are deleted."""
    import uuid

    from headroom.accounts.models import Organization
    from headroom.platform.db import session_scope
    from headroom.platform.security import new_external_id
    from headroom.sources.demo import service as demo

    url = worker_env["DATABASE_URL"]
    org_ids, cluster_ids = [], []
    with session_scope(url) as db:
        for _ in range(2):
            org = Organization(name="w", slug=f"w-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
            db.add(org)
            db.flush()
            org_ids.append(org.id)
            cluster_ids.append(demo.seed_demo_cluster(db, org.id).id)
    yield org_ids, cluster_ids
    with session_scope(url) as db:
        for table in ("metric_points", "metric_rollups"):
            db.execute(sa.text(f"DELETE FROM {table} WHERE org_id = ANY(:o)"), {"o": org_ids})
        db.execute(sa.delete(Organization).where(Organization.id.in_(org_ids)))


@pytest.fixture()
def two_clusters(two_orgs: tuple[list[Any], list[Any]]) -> list[str]:
    """Two demo clusters (no data: each scores None) of two organisations, as the task arguments name them."""
    return [str(cluster_id) for cluster_id in two_orgs[1]]


def _runs_since(worker_env: dict[str, str], before: Any, job: str, want: dict[str, int]) -> dict[str, int]:
    """The runs of `job` counted since `before`, by outcome, once they reach `want` (or after 120 s: the one
    worker process may still be busy with the rounds an earlier test queued)."""
    from headroom.platform.telemetry import RedisJobStats

    stats = RedisJobStats(worker_env["REDIS_URL"])
    deadline = time.monotonic() + 120
    while True:
        after = stats.read()
        got = {outcome: after.runs.get((job, outcome), 0) - before.runs.get((job, outcome), 0)
               for outcome in ("succeeded", "failed", "expired")}
        if got == want or time.monotonic() > deadline:
            return {k: v for k, v in got.items() if v}
        time.sleep(0.2)


def _scores(worker_env: dict[str, str], cluster_ids: list[str]) -> dict[str, dt.datetime]:
    from headroom.fleet.models import FleetScore
    from headroom.platform.db import session_scope

    with session_scope(worker_env["DATABASE_URL"]) as db:
        rows = db.execute(sa.select(FleetScore.cluster_id, FleetScore.window_end)
                          .where(FleetScore.cluster_id.in_(cluster_ids)))
        return {str(cid): end for cid, end in rows}


def test_a_round_message_runs_each_item_on_its_own_and_again_when_redelivered(
        worker: Any, celery_app: Any, worker_env: dict[str, str], two_clusters: list[str]) -> None:
    """A message carrying three items of the fleet score's round: each item is its own run (counted as one),
    the bad one fails alone; the same message delivered twice (a lost worker's, task_acks_late) runs its items
    again with the same result, since the score is an upsert keyed by cluster."""
    from headroom.platform.jobs.dispatch import CHUNK_TASK, chunk_task_id
    from headroom.platform.telemetry import RedisJobStats

    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    items = [two_clusters[0], "not-a-cluster-id", two_clusters[1]]
    kwargs = {"job": "fleet.score", "key": "cluster_id", "items": items, "now_iso": now.isoformat(),
              "expires_at": (now + dt.timedelta(minutes=10)).isoformat()}
    task_id = chunk_task_id("fleet.score", now.isoformat(), items)
    before = RedisJobStats(worker_env["REDIS_URL"]).read()
    summary = celery_app.send_task(CHUNK_TASK, kwargs=kwargs, queue="advice", task_id=task_id).get(timeout=120)
    assert summary == {"job": "fleet.score", "items": 3, "succeeded": 2, "failed": 1, "retried": 0, "expired": 0}
    assert _runs_since(worker_env, before, "fleet.score", {"succeeded": 2, "failed": 1, "expired": 0}) == {
        "succeeded": 2, "failed": 1}
    assert _scores(worker_env, two_clusters) == {cid: now for cid in two_clusters}

    celery_app.send_task(CHUNK_TASK, kwargs=kwargs, queue="advice", task_id=task_id)
    assert _runs_since(worker_env, before, "fleet.score", {"succeeded": 4, "failed": 2, "expired": 0}) == {
        "succeeded": 4, "failed": 2}
    assert _scores(worker_env, two_clusters) == {cid: now for cid in two_clusters}


def test_a_round_message_past_its_expiry_runs_nothing_and_counts_each_item_expired(
        worker: Any, celery_app: Any, worker_env: dict[str, str], two_clusters: list[str]) -> None:
    """Dropped whole, unread, when the message itself expired (Celery's `expires`, published by the real round);
    item by item when the round's expiry passes before an item starts."""
    from headroom.jobs import all_jobs
    from headroom.platform.jobs.dispatch import CHUNK_TASK, enqueue_round
    from headroom.platform.settings import Settings
    from headroom.platform.telemetry import RedisJobStats

    all_jobs()
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    stats = RedisJobStats(worker_env["REDIS_URL"])
    settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                        REDIS_URL=worker_env["REDIS_URL"])
    before = stats.read()
    # a round of 202 items, so its messages carry 2 each, which expire a millisecond after they are published
    items = [two_clusters[0], two_clusters[1], *(str(i) for i in range(200))]
    assert enqueue_round("fleet.score", settings, "cluster_id", items, now.isoformat(), 0.001) == (202, 0, 101)
    assert _runs_since(worker_env, before, "fleet.score", {"succeeded": 0, "failed": 0, "expired": 202}) == {
        "expired": 202}

    before = stats.read()
    kwargs = {"job": "fleet.score", "key": "cluster_id", "items": two_clusters, "now_iso": now.isoformat(),
              "expires_at": (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()}
    summary = celery_app.send_task(CHUNK_TASK, kwargs=kwargs, queue="advice").get(timeout=120)
    assert summary == {"job": "fleet.score", "items": 2, "succeeded": 0, "failed": 0, "retried": 0, "expired": 2}
    assert _runs_since(worker_env, before, "fleet.score", {"succeeded": 0, "failed": 0, "expired": 2}) == {
        "expired": 2}
    assert _scores(worker_env, two_clusters) == {}


def test_an_item_retried_alone_runs_as_its_jobs_own_task(worker: Any, celery_app: Any, worker_env: dict[str, str],
                                                           two_clusters: list[str]) -> None:
    """What a chunk does with an item that failed with a transient error: the item's own task (the job's, as
    before chunks), under the item's id in the round, with the job's backoff; the worker runs it."""
    from headroom.platform.jobs.dispatch import round_task_id
    from headroom.platform.jobs.registry import job as find_job
    from headroom_worker.tasks import retry_alone

    import base64
    import json

    import redis

    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    expires_at = now + dt.timedelta(minutes=10)
    # the message as queued, read on the alerts queue, which this test's worker does not consume
    client = redis.Redis.from_url(worker_env["REDIS_URL"])
    client.delete("alerts")
    queued_at = dt.datetime.now(dt.UTC)
    retry_alone(find_job("alerts.deliver"), "cluster_id", now.isoformat(), expires_at)("item-1")
    (raw,) = client.lrange("alerts", 0, -1)
    client.delete("alerts")
    message = json.loads(raw)
    headers, kwargs = message["headers"], json.loads(base64.b64decode(message["body"]))[1]
    assert headers["task"] == "alerts.deliver" and kwargs == {"cluster_id": "item-1", "now_iso": now.isoformat()}
    assert headers["id"] == round_task_id("alerts.deliver", now.isoformat(), "item-1")
    assert headers["retries"] == 1  # the first attempt was the chunk's: the task's own retries go on from 1
    assert dt.datetime.fromisoformat(headers["expires"]) == expires_at
    # the first retry's backoff: full jitter up to retry_backoff (2 s); a draw of 0 s is sent without an eta (Celery
    # sets one only for a countdown above 0), to run at once
    if headers["eta"] is not None:
        eta = dt.datetime.fromisoformat(headers["eta"])
        assert queued_at <= eta <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2)

    retry_alone(find_job("fleet.score"), "cluster_id", now.isoformat(), expires_at)(two_clusters[0])
    result = celery_app.AsyncResult(round_task_id("fleet.score", now.isoformat(), two_clusters[0]))
    assert result.get(timeout=300) == {"clusters": 1, "failed": 0}
    assert _scores(worker_env, two_clusters) == {two_clusters[0]: now}

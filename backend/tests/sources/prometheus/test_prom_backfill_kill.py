"""A real Celery worker is SIGKILLed in the middle of a Prometheus backfill; a second worker resumes it: the range
queries Prometheus answers for the rerun are exactly the chunks the first one had not stored (counted by
Prometheus itself, `prometheus_http_requests_total{handler="/api/v1/query_range"}`), the stored points equal the
simulator's, and steps done / total never go back.

Real parts: the Prometheus of conftest.py (simulated TiKV history, live exporters), the test PostgreSQL and Redis,
`celery worker` processes (solo pool, so SIGKILL stops the task mid-chunk).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from celery_workers import ProgressWatch, client_app, start_worker, stop_worker
from conftest import PromEnv
from test_prometheus_collect import _assert_matches_simulation
from xdist_workers import redis_db


@pytest.fixture(scope="module")
def worker_env(database_url: str, redis_url: str) -> dict[str, str]:
    # A Redis database of its own (worker/tests use /3, the AWS kill test /5): no other worker takes the task.
    return {**os.environ, "REDIS_URL": redis_db(redis_url, 6), "DATABASE_URL": database_url,
            "HEADROOM_ENV": "test"}


@pytest.fixture(scope="module")
def celery_app(worker_env: dict[str, str]) -> Iterator[Any]:
    with client_app(worker_env["REDIS_URL"]) as app:
        yield app


def _range_queries(url: str) -> int:
    """Range queries Prometheus has answered since it started (its own counter)."""
    text = httpx.get(f"{url}/metrics", timeout=5).text
    found = re.search(r'^prometheus_http_requests_total\{[^}]*handler="/api/v1/query_range"[^}]*\} (\S+)$', text,
                      re.M)
    return int(float(found.group(1))) if found else 0


def _watch(engine: sa.Engine, source_id: uuid.UUID) -> ProgressWatch:
    """What GET /api/v1/sources/prometheus/{id}/backfill shows, every 50 ms."""
    return ProgressWatch(engine, "SELECT status, steps_done, steps_total FROM prometheus_backfills "
                         "WHERE source_id = :s", source_id)


@pytest.mark.timeout(600)
def test_killed_prometheus_backfill_resumes_with_only_the_remaining_chunks(
    prom_env: PromEnv, database_url: str, worker_env: dict[str, str], celery_app: Any, tmp_path: Path
) -> None:
    from headroom.accounts.models import Organization
    from headroom.clusters.models import Cluster
    from headroom.platform.db import session_scope
    from headroom.sources.models import PrometheusSource

    cluster = prom_env.tiup
    engine = sa.create_engine(database_url)
    with session_scope(database_url) as db:
        org = Organization(name="prom-resume", slug=f"prom-resume-{uuid.uuid4().hex[:10]}",
                           aws_external_id=f"headroom-{uuid.uuid4().hex}")
        db.add(org)
        db.flush()
        made = Cluster(org_id=org.id, name=cluster.name, tikv_version="v8.5.1", deployment_kind="tiup")
        db.add(made)
        db.flush()
        source = PrometheusSource(org_id=org.id, cluster_id=made.id, name="prom", base_url=prom_env.url,
                                  auth_kind="none", label_selector=cluster.selector)
        db.add(source)
        db.flush()
        sid = source.id

    def steps() -> list[Any]:
        with engine.connect() as c:
            return list(c.execute(sa.text("SELECT seq, spec, points, done_at FROM backfill_steps "
                                          "WHERE source_kind = 'prometheus' AND source_id = :s ORDER BY seq"),
                                  {"s": sid}))

    def row() -> Any:
        with engine.connect() as c:
            return c.execute(sa.text("SELECT status, steps_done, steps_total, points_written FROM "
                                     "prometheus_backfills WHERE source_id = :s"), {"s": sid}).first()

    kwargs = {"source_id": str(sid), "now_iso": prom_env.end.isoformat()}
    asked_before = _range_queries(prom_env.url)
    first = start_worker(worker_env, celery_app, f"prom-a-{uuid.uuid4().hex[:6]}", tmp_path / "first.log")
    try:
        with _watch(engine, sid) as watch_first:
            celery_app.send_task("prometheus.backfill", kwargs=kwargs, queue="ingest")
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                current = row()
                if current is not None and current.status == "running" and current.steps_done > 0:
                    break
                assert current is None or current.status != "failed", current  # no waiting on a dead run
                time.sleep(0.02)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    killed, plan = row(), steps()
    done = [s for s in plan if s.done_at is not None]
    pending = [s for s in plan if s.done_at is None]
    assert killed.status == "running" and done and pending, (killed, len(done), len(pending))
    assert killed.steps_done == sum(s.points for s in done) and killed.steps_total == sum(s.points for s in plan)

    asked_between = _range_queries(prom_env.url)
    # The killed run: one query for where the data begins, the stored chunks, at most the one it died in.
    assert len(done) + 1 <= asked_between - asked_before <= len(done) + 2

    # The rerun comes later (a redelivery or the next minute's re-queue): the range stays the one planned.
    later = {**kwargs, "now_iso": (prom_env.end + dt.timedelta(minutes=3)).isoformat()}
    second = start_worker(worker_env, celery_app, f"prom-b-{uuid.uuid4().hex[:6]}", tmp_path / "second.log")
    try:
        with _watch(engine, sid) as watch_second:
            summary = celery_app.send_task("prometheus.backfill", kwargs=later, queue="ingest").get(timeout=300)
    finally:
        stop_worker(second)
    assert summary["status"] == "done" and summary["steps"] == summary["steps_total"] == killed.steps_total
    # Prometheus answered exactly one range query per chunk not stored, and no other.
    assert _range_queries(prom_env.url) - asked_between == len(pending)

    seen = [d for status, d, _ in watch_first.seen + watch_second.seen if status == "running"] + [summary["steps"]]
    assert seen == sorted(seen) and seen[-1] == killed.steps_total

    with session_scope(database_url) as db:
        stored = db.get(PrometheusSource, sid)
        assert stored is not None
        compared = _assert_matches_simulation(db, stored, cluster)
        assert row().points_written == compared  # each stored point counted once across both runs
    engine.dispose()

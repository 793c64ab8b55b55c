"""A Prometheus backfill stopped after k of its planned chunks resumes at chunk k: the rerun's range queries are
exactly the chunks not stored (counted on the wire, under the client, by an httpx transport that forwards every
request to the real Prometheus of conftest.py), the stored points equal the simulator's, and progress (steps done
/ total) never goes back or counts a chunk twice.

The "kill" raises out of the (k+1)-th chunk query after k chunks were committed (the test session's commits
release savepoints; the rollback discards the in-flight chunk as a dead worker's transaction would be).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx
import pytest
from conftest import PromEnv
from headroom.sources.models import BackfillStep
from headroom.sources.prometheus import service as ops
from headroom.sources.prometheus.collector import PrometheusClient, RetryPolicy
from headroom.sources.prometheus.models import PrometheusBackfill
from sqlalchemy import select
from test_prometheus_collect import _assert_matches_simulation, _source

CHUNK_POINTS = 97  # ~7 h of data in 97-minute chunks: 5 chunks per registry query


class Killed(BaseException):
    """Stands for the worker dying: not an Exception, so no handler of the code under test catches it."""


class Wire(httpx.BaseTransport):
    """Forwards every request to the real server; records the collection chunks (60 s range queries)."""

    def __init__(self, kill_after: int | None = None) -> None:
        self.inner = httpx.HTTPTransport()
        self.chunks: list[tuple[str, str, str]] = []  # (query, start, end)
        self.kill_after = kill_after

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        if request.method == "POST" and request.read():
            params.update(httpx.QueryParams(request.content.decode()))
        if request.url.path.endswith("/api/v1/query_range") and params.get("step") in ("60", "60s", "60.0"):
            if self.kill_after is not None and len(self.chunks) == self.kill_after:
                raise Killed
            self.chunks.append((params["query"], params["start"], params["end"]))
        return self.inner.handle_request(request)


def _client(env: PromEnv, wire: Wire) -> PrometheusClient:
    return PrometheusClient(env.url, retry=RetryPolicy(attempts=2, base_seconds=0.01), transport=wire)


def _steps(db: Any, source_id: Any) -> list[BackfillStep]:
    return list(db.scalars(select(BackfillStep).where(BackfillStep.source_kind == "prometheus",
                                                      BackfillStep.source_id == source_id)
                           .order_by(BackfillStep.seq)))


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def test_backfill_saved_at_chunk_k_resumes_at_k(prom_env: PromEnv, client: Any, db: Any) -> None:
    _, source = _source(client, db, prom_env, prom_env.tiup)
    k = 40
    first = Wire(kill_after=k)
    with pytest.raises(Killed):
        ops.run_backfill(db, source, _client(prom_env, first), now=prom_env.end, checkpoint=db.commit,
                         chunk_points=CHUNK_POINTS)
    db.rollback()
    db.expire_all()
    plan = _steps(db, source.id)
    done = [s for s in plan if s.done_at is not None]
    assert [s.seq for s in done] == list(range(k)) and len(plan) > k
    row = db.scalar(select(PrometheusBackfill).where(PrometheusBackfill.source_id == source.id))
    assert row is not None and row.status == "running"
    assert row.steps_done == sum(s.points for s in done) and row.steps_total == sum(s.points for s in plan)
    killed_done, points_before = row.steps_done, row.points_written
    assert points_before > 0
    pending = [(s.seq, _epoch(s.spec["start"]), _epoch(s.spec["end"])) for s in plan if s.done_at is None]

    second = Wire()
    progress: list[int] = []

    def checkpoint() -> None:
        progress.append(row.steps_done)
        db.commit()

    ops.run_backfill(db, source, _client(prom_env, second), now=prom_env.end, checkpoint=checkpoint,
                     chunk_points=CHUNK_POINTS)
    assert row.status == "done", row.last_error
    # Only the chunks not stored, each once, over exactly its planned range.
    asked = sorted((float(start), float(end)) for _q, start, end in second.chunks)
    assert asked == sorted((start, end) for _seq, start, end in pending)
    assert len(second.chunks) == len(pending)
    # Progress: from where the killed run stopped, up by each chunk once, never down, ends at the total.
    assert progress[0] >= killed_done and progress == sorted(progress)
    assert row.steps_done == row.steps_total == sum(s.points for s in plan)
    # The rows are exact, and points_written counts each stored point once across both runs.
    compared = _assert_matches_simulation(db, source, prom_env.tiup)
    assert row.points_written == compared

    # A third run (a redelivered task after success) finds nothing to do and asks Prometheus for no chunk.
    third = Wire()
    ops.run_backfill(db, source, _client(prom_env, third), now=prom_env.end, checkpoint=db.commit,
                     chunk_points=CHUNK_POINTS)
    assert third.chunks == [] and row.steps_done == row.steps_total and row.points_written == compared


def test_a_node_found_after_the_restart_gets_the_chunks_done_before(prom_env: PromEnv, client: Any,
                                                                   db: Any) -> None:
    cluster = prom_env.tiup
    _, source = _source(client, db, prom_env, cluster)
    late = sorted(s.address for s in cluster.servers.values())[-1]
    # The first run sees two of the three TiKV targets (as if the third joined the scrape config later).
    source.label_selector = f'instance!="{late}"'
    db.commit()
    first = Wire(kill_after=12)
    with pytest.raises(Killed):
        ops.run_backfill(db, source, _client(prom_env, first), now=prom_env.end, checkpoint=db.commit,
                         chunk_points=CHUNK_POINTS)
    db.rollback()
    db.expire_all()
    planned = len(_steps(db, source.id))
    done = [s for s in _steps(db, source.id) if s.done_at is not None]
    assert len(done) == 12 and all(late not in s.spec["targets"] for s in done)

    source.label_selector = ""
    db.commit()
    second = Wire()
    ops.run_backfill(db, source, _client(prom_env, second), now=prom_env.end, checkpoint=db.commit,
                     chunk_points=CHUNK_POINTS)
    row = db.scalar(select(PrometheusBackfill).where(PrometheusBackfill.source_id == source.id))
    assert row is not None and row.status == "done", row and row.last_error
    steps = _steps(db, source.id)
    # The 12 chunks stored without the late node are planned (and run) once more; nothing else is.
    assert len(steps) == planned + 12 and len(second.chunks) == planned - 12 + 12
    assert row.steps_done == row.steps_total == sum(s.points for s in steps)
    _assert_matches_simulation(db, source, cluster)  # the late node's early chunks are there too

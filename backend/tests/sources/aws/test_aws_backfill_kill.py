"""A real Celery worker is SIGKILLed in the middle of an AWS backfill; a second worker resumes it: its
GetMetricData calls are exactly the requests the first one had not stored, the stored rows are exactly the
points put into CloudWatch, and points done / total never go back.

Real parts: a moto server of this module's own (EC2/CloudWatch), the test PostgreSQL and Redis, `celery worker` processes (solo
pool, so SIGKILL stops the task mid-request). GetMetricData calls are counted inside the worker processes by a
botocore event hook (`before-parameter-build`, once per call and NextToken page) that a `sitecustomize` module
installs on every botocore client; nothing of Headroom's is replaced. (worker/tests/test_ingest_kill.py kills a
worker too and checks the rows; this one checks that the rerun does only the remaining work.)
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from aws_fixtures import boto, make_fleet, put_series
from celery_workers import ProgressWatch, client_app, start_worker, stop_worker
from moto.server import ThreadedMotoServer
from xdist_workers import redis_db

# A region no other AWS test uses (the region fixture's cycle does not include it).
REGION = "ap-southeast-3"
DAYS = 14

SITECUSTOMIZE = '''
import json, os
import botocore.session

_create_client = botocore.session.Session.create_client


def _log_call(params, **_):
    with open(os.environ["HEADROOM_TEST_GMD_LOG"], "a") as out:
        out.write(json.dumps([[q["MetricStat"]["Metric"]["MetricName"],
                               q["MetricStat"]["Metric"]["Dimensions"][0]["Value"]]
                              for q in params["MetricDataQueries"]]) + "\\n")


def create_client(self, *args, **kwargs):
    client = _create_client(self, *args, **kwargs)
    client.meta.events.register("before-parameter-build.monitoring.GetMetricData", _log_call)
    return client


botocore.session.Session.create_client = create_client
'''


@pytest.fixture(scope="module")
def own_moto() -> Iterator[str]:
    """A moto server in this process, for this module alone: moto's GetMetricData scans every datum of the region
    for each period of a query, so the test wants a region holding its own data only, and resetting the shared
    server for that would wipe what tests running beside it in other processes put there."""
    server = ThreadedMotoServer(port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    # the backends are this process's: clear what an earlier in-process server of this worker left
    httpx.post(f"{url}/moto-api/reset", timeout=30).raise_for_status()
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def worker_env(database_url: str, redis_url: str, own_moto: str, tmp_path_factory: Any) -> dict[str, str]:
    hooks = tmp_path_factory.mktemp("gmd-hook")
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    pythonpath = os.pathsep.join(p for p in (str(hooks), os.environ.get("PYTHONPATH", "")) if p)
    # A Redis database of its own (worker/tests use /3), so no other test's worker takes this task.
    return {**os.environ, "REDIS_URL": redis_db(redis_url, 5), "DATABASE_URL": database_url,
            "HEADROOM_ENV": "test", "HEADROOM_AWS_ENDPOINT_URL": own_moto, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION, "PYTHONPATH": pythonpath}


@pytest.fixture(scope="module")
def celery_app(worker_env: dict[str, str]) -> Iterator[Any]:
    with client_app(worker_env["REDIS_URL"]) as app:
        yield app


def _start_worker(env: dict[str, str], celery_app: Any, name: str, call_log: Path) -> subprocess.Popen[bytes]:
    # the worker's GetMetricData calls go to `call_log` (the sitecustomize hook), its log next to it
    return start_worker({**env, "HEADROOM_TEST_GMD_LOG": str(call_log)}, celery_app, name,
                        call_log.with_suffix(".log"))


def _calls(path: Path, entities: set[str]) -> list[list[tuple[str, str]]]:
    """The worker's GetMetricData calls for this test's entities (ids are unique per moto run)."""
    if not path.exists():
        return []
    calls = [[(m, e) for m, e in json.loads(line)] for line in path.read_text().splitlines() if line]
    return [call for call in calls if any(e in entities for _m, e in call)]


def _watch(engine: sa.Engine, source_id: uuid.UUID) -> ProgressWatch:
    """What GET /api/v1/sources/aws/{id}/backfill shows, every 50 ms."""
    return ProgressWatch(engine, "SELECT state, points_done, points_total FROM aws_backfills WHERE source_id = :s",
                         source_id)


@pytest.fixture()
def fleet(own_moto: str) -> Iterator[dict[str, Any]]:
    # 3 TiKV nodes: 48 one-minute EBS series of 20,160 points (14 days) = 5 per 100,800-point page, so the
    # plan has about ten requests and the kill lands between two of them. Each GetMetricData query costs moto
    # (periods x the region's datums), so each volume gets 4 points spread over the 14 days, not more.
    made = make_fleet(REGION, own_moto, nodes=3)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    cw = boto("cloudwatch", REGION, own_moto)
    salt = uuid.uuid4().int % 1000  # values unique to this run
    expected: dict[str, list[tuple[dt.datetime, float]]] = {}
    for n, volume in enumerate(made["data"] + made["raft"]):
        points = sorted((now - dt.timedelta(minutes=4985 * k + n), float(salt * 1000 + 100 * n + k))
                        for k in range(1, 5))
        put_series(cw, "AWS/EBS", "VolumeId", volume, "VolumeReadOps", points)
        expected[volume] = points
    yield {"now": now, "expected": expected}


@pytest.mark.timeout(900)
def test_killed_backfill_resumes_with_only_the_remaining_requests(
    database_url: str, worker_env: dict[str, str], celery_app: Any, fleet: dict[str, Any], tmp_path: Path
) -> None:
    from headroom.accounts.models import Organization
    from headroom.platform.db import session_scope
    from headroom.sources.models import AwsConnection
    from headroom.timeseries.repository import read_points

    engine = sa.create_engine(database_url)
    with session_scope(database_url) as db:
        org = Organization(name="resume", slug=f"resume-{uuid.uuid4().hex[:10]}",
                           aws_external_id=f"headroom-{uuid.uuid4().hex}")
        db.add(org)
        db.flush()
        conn = AwsConnection(org_id=org.id, name="moto", auth_kind="default_chain",
                             external_id=org.aws_external_id, regions=[REGION])
        db.add(conn)
        db.flush()
        org_id, cid = org.id, conn.id

    def steps() -> list[Any]:
        with engine.connect() as c:
            return list(c.execute(sa.text("SELECT seq, spec, points, done_at FROM backfill_steps "
                                          "WHERE source_kind = 'aws' AND source_id = :s ORDER BY seq"), {"s": cid}))

    def row() -> Any:
        with engine.connect() as c:
            return c.execute(sa.text("SELECT state, points_done, points_total, points_written, window_end_at "
                                     "FROM aws_backfills WHERE source_id = :s"), {"s": cid}).first()

    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    kwargs = {"connection_id": str(cid), "days": DAYS, "now_iso": fleet["now"].isoformat()}
    first = _start_worker(worker_env, celery_app, f"resume-a-{uuid.uuid4().hex[:6]}", first_log)
    try:
        with _watch(engine, cid) as watch_first:
            celery_app.send_task("aws.backfill", kwargs=kwargs, queue="ingest")
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                current = row()
                if current is not None and current.state == "running" and current.points_done > 0:
                    break
                time.sleep(0.05)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    killed = row()
    plan = steps()
    done = [s for s in plan if s.done_at is not None]
    pending = [s for s in plan if s.done_at is None]
    assert killed.state == "running" and done and pending, (killed, len(done), len(pending))
    assert killed.points_done == sum(s.points for s in done) and killed.points_total == sum(s.points for s in plan)
    pages = {s.seq: int(s.spec["pages"]) for s in plan}
    entities = {q[2] for s in plan for q in s.spec["queries"]}
    first_calls = _calls(first_log, entities)
    # The killed run paid for the done requests and at most the one it was in (not stored, so re-fetched).
    assert sum(pages[s.seq] for s in done) <= len(first_calls) <= sum(pages[s.seq] for s in done) + max(pages.values())

    # The rerun comes later (a redelivery or the next re-queue): the window stays the one planned.
    later = {**kwargs, "now_iso": (fleet["now"] + dt.timedelta(minutes=7)).isoformat()}
    second = _start_worker(worker_env, celery_app, f"resume-b-{uuid.uuid4().hex[:6]}", second_log)
    try:
        with _watch(engine, cid) as watch_second:
            summary = celery_app.send_task("aws.backfill", kwargs=later, queue="ingest").get(timeout=600)
        # A redelivery of the finished task fetches nothing.
        calls_done = len(_calls(second_log, entities))
        again = celery_app.send_task("aws.backfill", kwargs=later, queue="ingest").get(timeout=120)
        assert again["skipped"] == "already done" and len(_calls(second_log, entities)) == calls_done
    finally:
        stop_worker(second)
    assert summary["state"] == "done" and summary["points_done"] == summary["points_total"] == killed.points_total
    assert summary["steps_skipped"] == len(done) and summary["steps_run"] == len(pending)

    def query_names(step: Any) -> list[tuple[str, str]]:
        return [(q[4], q[2]) for q in step.spec["queries"]]

    second_calls = _calls(second_log, entities)
    assert len(second_calls) == sum(pages[s.seq] for s in pending) == summary["api_calls"]
    assert sorted(q for call in second_calls for q in call) == sorted(
        q for s in pending for q in query_names(s) * pages[s.seq])
    assert not {q for call in second_calls for q in call} & {q for s in done for q in query_names(s)}

    # Progress as the API shows it: never down, within a run or across the kill, and never above the total.
    seen = [done_ for state, done_, _ in watch_first.seen + watch_second.seen if state == "running"] + [
        summary["points_done"]]
    assert seen == sorted(seen) and seen[-1] == killed.points_total
    assert all(total == killed.points_total for state, _, total in watch_second.seen if state in ("running", "done"))
    assert row().window_end_at == fleet["now"]

    with session_scope(database_url) as db:
        start = fleet["now"] - dt.timedelta(days=DAYS + 1)
        series = dict(db.execute(sa.text("SELECT entity_id, id FROM metric_series WHERE org_id = :o "
                                         "AND metric = 'ebs.read_ops'"), {"o": org_id}).all())
        assert set(series) == set(fleet["expected"])
        for volume, points in fleet["expected"].items():
            assert read_points(db, org_id, series[volume], start, fleet["now"]) == points
        # No other series got a point (moto has data only for ebs.read_ops), none twice.
        others = db.execute(sa.text(
            "SELECT count(*) FROM metric_points p JOIN metric_series s ON s.id = p.series_id "
            "WHERE s.org_id = :o AND s.metric <> 'ebs.read_ops'"), {"o": org_id}).scalar_one()
        assert others == 0
    engine.dispose()

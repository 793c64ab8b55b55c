"""A backfill stopped after k of its planned GetMetricData requests resumes at request k: the rerun calls only the
remaining requests (counted by a botocore event hook, as bench/cloudwatch_efficiency.py does), stores exactly the points put
into CloudWatch (moto server), and its progress (points done / total) never goes back or counts a request twice.

The "kill" here raises out of the (k+1)-th GetMetricData call, after k steps were committed (the test session's
commits release savepoints; the rollback after the kill discards the in-flight request as a dead worker's
transaction would be). A real Celery worker SIGKILLed mid-backfill is test_aws_backfill_kill.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from aws_fixtures import boto, make_fleet, put_series
from headroom.sources.aws import ingest
from headroom.sources.aws.session import AwsClients, client_config
from headroom.sources.models import AwsBackfill, BackfillStep
from headroom.timeseries.repository import read_points
from sqlalchemy import func, select, text

DAYS = 7  # 10,080 one-minute points per series: 10 series per 100,800-point page, so the plan has several steps


class Killed(BaseException):
    """Stands for the worker dying: not an Exception, so no handler of the code under test catches it."""


class CallLog:
    """GetMetricData calls as botocore sends them: the queries' entity ids per call."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []
        self.kill_at: int | None = None

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        if self.kill_at is not None and len(self.calls) == self.kill_at:
            raise Killed
        self.calls.append([(q["MetricStat"]["Metric"]["MetricName"], q["MetricStat"]["Metric"]["Dimensions"][0]["Value"])
                           for q in params["MetricDataQueries"]])


def _clients_factory(endpoint: str, log: CallLog) -> Callable[[str], AwsClients]:
    def make(region: str) -> AwsClients:
        session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                        region_name=region)
        # Per call (each NextToken page is a call of its own), with the call's own arguments.
        session.events.register("before-parameter-build.monitoring.GetMetricData", log)
        return AwsClients(session, region, endpoint, client_config(2))

    return make


def _steps(db: Any, source_id: Any) -> list[BackfillStep]:
    return list(db.scalars(select(BackfillStep).where(BackfillStep.source_kind == "aws",
                                                      BackfillStep.source_id == source_id)
                           .order_by(BackfillStep.seq)))


def _step_queries(step: BackfillStep) -> list[tuple[str, str]]:
    # spec query: [metric, entity_kind, entity_id, namespace, metric_name, dimension, statistic, period, unit]
    return [(q[4], q[2]) for q in step.spec["queries"]]


def _start(db: Any, conn: Any, clients: Callable[[str], AwsClients], now: dt.datetime) -> AwsBackfill:
    row = ingest.request_backfill(db, conn, days=DAYS)
    row.state, row.window_end_at = "running", row.window_end_at or now
    for region in conn.regions:
        ingest.sync_inventory(db, conn, clients(region), now)
    ingest.plan_backfill(db, conn, conn.regions, end=row.window_end_at, days=DAYS)
    db.commit()
    return row


def _history(cw: Any, volume: str, now: dt.datetime, salt: int) -> list[tuple[dt.datetime, float]]:
    points = sorted((now - dt.timedelta(minutes=97 * k + salt), float(10 * k + salt)) for k in range(1, 81))
    put_series(cw, "AWS/EBS", "VolumeId", volume, "VolumeReadOps", points)
    return points


def _series_points(db: Any, org_id: Any, volume: str, now: dt.datetime) -> list[tuple[dt.datetime, float]]:
    sid = db.execute(text("SELECT id FROM metric_series WHERE org_id = :o AND entity_id = :e "
                          "AND metric = 'ebs.read_ops'"), {"o": org_id, "e": volume}).scalar_one()
    return read_points(db, org_id, sid, now - dt.timedelta(days=DAYS + 1), now)


@pytest.mark.timeout(600)
def test_backfill_saved_at_step_k_resumes_at_k(db: Any, org_and_connection: Any, region: str,
                                               aws_endpoint_url: str) -> None:
    org, conn = org_and_connection
    fleet = make_fleet(region, aws_endpoint_url)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    cw = boto("cloudwatch", region, aws_endpoint_url)
    expected = {v: _history(cw, v, now, n) for n, v in enumerate(fleet["data"] + fleet["raft"])}

    log = CallLog()
    clients = _clients_factory(aws_endpoint_url, log)
    row = _start(db, conn, clients, now)
    steps = _steps(db, conn.id)
    # 1 instance (11 EC2 series) + gp2 data (10) + gp3 raft (6) volume series; 7 days of 1-minute points.
    assert len(steps) >= 3, "the plan needs several requests for a resume to mean anything"
    total = sum(s.points for s in steps)
    k = 2
    log.kill_at = sum(int(s.spec["pages"]) for s in steps[:k])  # die on the first call of step k (0-based)
    with pytest.raises(Killed):
        ingest.run_backfill(db, conn, row, clients, now=now, checkpoint=db.commit)
    db.rollback()
    db.expire_all()

    done = [s for s in _steps(db, conn.id) if s.done_at is not None]
    assert [s.seq for s in done] == [s.seq for s in steps[:k]]
    row = db.get(AwsBackfill, row.id)
    assert row is not None
    assert row.points_done == sum(s.points for s in steps[:k]) and row.points_total == total
    killed_done = row.points_done

    first_calls = len(log.calls)
    log.kill_at = None
    progress: list[int] = []

    def checkpoint() -> None:
        progress.append(row.points_done)
        db.commit()

    outcome = ingest.run_backfill(db, conn, row, clients, now=now, checkpoint=checkpoint)
    second = log.calls[first_calls:]
    pending = steps[k:]
    # Only the remaining requests, each as planned: same queries, same pages.
    assert len(second) == sum(int(s.spec["pages"]) for s in pending)
    assert sorted(q for call in second for q in call) == sorted(
        q for s in pending for q in _step_queries(s) * int(s.spec["pages"]))
    assert not {q for call in second for q in call} & {q for s in steps[:k] for q in _step_queries(s)}
    assert outcome.steps_run == len(pending) and outcome.steps_skipped == k
    # Progress: starts where the killed run stopped, rises by each step once, ends at the total.
    assert progress == [killed_done + sum(s.points for s in pending[: i + 1]) for i in range(len(pending))]
    assert row.points_done == row.points_total == total
    # The rows are exact: every volume's points as put, nothing duplicated or missing.
    for volume, points in expected.items():
        assert _series_points(db, org.id, volume, now) == points
    assert db.scalar(select(func.count()).select_from(BackfillStep).where(
        BackfillStep.source_id == conn.id, BackfillStep.done_at.is_(None))) == 0


@pytest.mark.timeout(600)
def test_a_volume_added_mid_backfill_is_appended_to_the_plan(db: Any, org_and_connection: Any, region: str,
                                                             aws_endpoint_url: str) -> None:
    org, conn = org_and_connection
    first = make_fleet(region, aws_endpoint_url)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    cw = boto("cloudwatch", region, aws_endpoint_url)
    expected = {first["data"][0]: _history(cw, first["data"][0], now, 3)}
    log = CallLog()
    clients = _clients_factory(aws_endpoint_url, log)
    row = _start(db, conn, clients, now)
    planned = _steps(db, conn.id)
    log.kill_at = int(planned[0].spec["pages"])  # one step stored, then the worker dies
    with pytest.raises(Killed):
        ingest.run_backfill(db, conn, row, clients, now=now, checkpoint=db.commit)
    db.rollback()
    db.expire_all()

    # A second TiKV node (instance, data and raft volume) appears before the restart, with history.
    second = make_fleet(region, aws_endpoint_url)
    expected[second["data"][0]] = _history(cw, second["data"][0], now, 7)
    later = now + dt.timedelta(minutes=30)
    row = _start(db, conn, clients, later)  # the resumed run: same plan, same window, plus the new series
    assert row.window_end_at == now
    steps = _steps(db, conn.id)
    assert steps[: len(planned)] == planned  # the original plan is kept as it was
    added = steps[len(planned):]
    new_entities = {second["instances"][0]["InstanceId"], second["data"][0], second["raft"][0]}
    assert added and {q[2] for s in added for q in s.spec["queries"]} == new_entities
    assert all(s.spec["start"] == planned[0].spec["start"] and s.spec["end"] == planned[0].spec["end"]
               for s in added)

    before = len(log.calls)
    log.kill_at = None
    ingest.run_backfill(db, conn, row, clients, now=later, checkpoint=db.commit)
    assert len(log.calls) - before == sum(int(s.spec["pages"]) for s in steps[1:])
    assert row.points_done == row.points_total == sum(s.points for s in steps)
    for volume, points in expected.items():
        assert _series_points(db, org.id, volume, now) == points


def test_requeue_keeps_an_unfinished_plan_and_a_new_request_starts_over(db: Any, org_and_connection: Any) -> None:
    _org, conn = org_and_connection
    row = ingest.request_backfill(db, conn, days=DAYS)
    row.window_end_at = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    db.add_all([BackfillStep(org_id=conn.org_id, source_kind="aws", source_id=conn.id, seq=i, points=100,
                             spec={"region": conn.regions[0]},
                             done_at=dt.datetime(2026, 11, 2, 12, i, tzinfo=dt.UTC) if i < 2 else None)
                for i in range(4)])
    row.points_done, row.points_total = 200, 400
    db.flush()
    for state in ("running", "failed", "queued"):  # a dead worker, a failure, a lost task: all resume
        row.state = state
        again = ingest.request_backfill(db, conn, days=DAYS)
        assert again.state == "queued" and again.points_done == 200 and again.window_end_at is not None
        assert len(_steps(db, conn.id)) == 4
    # A different span is a new plan.
    fresh = ingest.request_backfill(db, conn, days=DAYS - 1)
    assert fresh.points_done == fresh.points_total == 0 and fresh.window_end_at is None
    assert _steps(db, conn.id) == []
    # So is asking again after it finished.
    db.add(BackfillStep(org_id=conn.org_id, source_kind="aws", source_id=conn.id, seq=0, points=5, spec={},
                        done_at=dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)))
    fresh.state, fresh.points_done, fresh.points_total = "done", 5, 5
    db.flush()
    assert ingest.request_backfill(db, conn, days=DAYS - 1).points_done == 0
    assert _steps(db, conn.id) == []

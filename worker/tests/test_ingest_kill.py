"""A real Celery worker is SIGKILLed in the middle of an AWS backfill; the next run leaves exactly the expected
rows (late acks + idempotent writes: slot-merged points, forward-only watermarks, advisory-lock liveness).

Stand-ins: the moto server for EC2/CloudWatch (HEADROOM_TEST_AWS_ENDPOINT), the test PostgreSQL and Redis.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
import sqlalchemy as sa
from celery_workers import START_SECONDS

REGIONS = ("eu-south-1", "af-south-1")
AMI = "ami-12c6146b"


def _client(service: str, endpoint: str, region: str) -> Any:
    return boto3.client(service, region_name=region, endpoint_url=endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


@pytest.fixture(scope="module")
def env(worker_env: dict[str, str]) -> dict[str, str]:
    endpoint = os.environ.get("HEADROOM_TEST_AWS_ENDPOINT")
    if not endpoint:
        pytest.fail("HEADROOM_TEST_AWS_ENDPOINT is not set: run the suite through `make test`", pytrace=False)
    return {**worker_env, "HEADROOM_AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGIONS[0]}


@pytest.fixture(scope="module")
def celery_app(env: dict[str, str]) -> Any:
    from headroom_worker.celery_app import app

    app.loader.import_default_modules()
    return app


def _start_worker(env: dict[str, str], celery_app: Any, name: str) -> subprocess.Popen[bytes]:
    # The solo pool runs the task in the worker process itself, so SIGKILL stops the task mid-flight.
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "headroom_worker.celery_app", "worker", "--loglevel=INFO",
         "--pool=solo", "-Q", "ingest", "-n", f"{name}@%h", "--without-gossip", "--without-mingle"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if any(name in host for reply in celery_app.control.ping(timeout=1.0) for host in reply):
            return proc
        if proc.poll() is not None:
            raise AssertionError("worker exited at start")
    raise AssertionError(f"worker did not answer a ping within {START_SECONDS} s")


@pytest.fixture()
def fleet(env: dict[str, str]) -> Iterator[dict[str, Any]]:
    endpoint = env["HEADROOM_AWS_ENDPOINT_URL"]
    # moto scans every stored datum per period of a GetMetricData query, so its state is reset first: earlier
    # tests' data would make each 14-day call take minutes. (Tests run serially against the moto server.)
    httpx.post(f"{endpoint}/moto-api/reset", timeout=30).raise_for_status()
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    expected: dict[str, list[tuple[dt.datetime, float]]] = {}
    # One TiKV node per region: the backfill commits after each region's requests, so a kill during the
    # second region's request finds the first one's points committed and the second one's not.
    for n, region in enumerate(REGIONS):
        ec2 = _client("ec2", endpoint, region)
        old = [i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]
               if i["State"]["Name"] != "terminated"]
        if old:
            ec2.terminate_instances(InstanceIds=old)
        for v in ec2.describe_volumes()["Volumes"]:
            for a in v.get("Attachments", []):
                ec2.detach_volume(VolumeId=v["VolumeId"], InstanceId=a["InstanceId"], Force=True)
            ec2.delete_volume(VolumeId=v["VolumeId"])
        az = ec2.describe_availability_zones()["AvailabilityZones"][0]["ZoneName"]
        inst = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="m5.large",
                                 Placement={"AvailabilityZone": az},
                                 TagSpecifications=[{"ResourceType": "instance",
                                                     "Tags": [{"Key": "component", "Value": "tikv"}]}])["Instances"][0]
        data = ec2.create_volume(AvailabilityZone=az, Size=500, VolumeType="gp2")["VolumeId"]
        raft = ec2.create_volume(AvailabilityZone=az, Size=20, VolumeType="gp3")["VolumeId"]
        ec2.attach_volume(VolumeId=data, InstanceId=inst["InstanceId"], Device="/dev/sdf")
        ec2.attach_volume(VolumeId=raft, InstanceId=inst["InstanceId"], Device="/dev/sdg")
        cw = _client("cloudwatch", endpoint, region)
        # 120 points spread over the 14 days.
        points = sorted((now - dt.timedelta(minutes=163 * k + n), float(1000 * n + k)) for k in range(1, 121))
        for i in range(0, len(points), 100):
            cw.put_metric_data(Namespace="AWS/EBS", MetricData=[
                {"MetricName": "VolumeReadOps", "Dimensions": [{"Name": "VolumeId", "Value": data}],
                 "Timestamp": ts, "Value": v, "Unit": "Count"} for ts, v in points[i:i + 100]])
        expected[data] = points
    yield {"now": now, "expected": expected}


@pytest.mark.timeout(900)
def test_killed_backfill_loses_nothing_and_duplicates_nothing(env: dict[str, str], celery_app: Any,
                                                             fleet: dict[str, Any]) -> None:
    from headroom.accounts.models import Organization
    from headroom.platform.db import session_scope
    from headroom.sources.models import AwsConnection
    from headroom.timeseries.repository import read_points

    engine = sa.create_engine(env["DATABASE_URL"])
    with session_scope(env["DATABASE_URL"]) as db:
        org = Organization(name="kill", slug=f"kill-{uuid.uuid4().hex[:10]}", aws_external_id=f"headroom-{uuid.uuid4().hex}")
        db.add(org)
        db.flush()
        conn = AwsConnection(org_id=org.id, name="moto", auth_kind="default_chain", external_id=org.aws_external_id,
                             regions=list(REGIONS))
        db.add(conn)
        db.flush()
        org_id, cid = org.id, conn.id

    def backfill_row() -> Any:
        with engine.connect() as c:
            return c.execute(sa.text("SELECT state, points_done, points_total, points_written FROM aws_backfills "
                                     "WHERE source_id = :s"), {"s": cid}).first()

    kwargs = {"connection_id": str(cid), "days": 14, "now_iso": fleet["now"].isoformat()}
    first = _start_worker(env, celery_app, "kill-a")
    try:
        celery_app.send_task("aws.backfill", kwargs=kwargs, queue="ingest")
        deadline = time.monotonic() + 180
        row = None
        while time.monotonic() < deadline:
            row = backfill_row()
            if row is not None and row.state == "running" and row.points_done > 0:
                break
            time.sleep(0.2)
        assert row is not None and row.state == "running" and row.points_done > 0, row
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    killed = backfill_row()
    assert killed.state == "running" and 0 < killed.points_done < killed.points_total, killed

    second = _start_worker(env, celery_app, "kill-b")
    try:
        result = celery_app.send_task("aws.backfill", kwargs=kwargs, queue="ingest")
        summary = result.get(timeout=600)
    finally:
        second.send_signal(signal.SIGTERM)
        try:
            second.wait(timeout=30)
        except subprocess.TimeoutExpired:
            second.kill()
    assert summary["state"] == "done" and summary["points_done"] == summary["points_total"]

    with session_scope(env["DATABASE_URL"]) as db:
        start = fleet["now"] - dt.timedelta(days=15)
        rows = db.execute(sa.text(
            "SELECT s.entity_id, s.id FROM metric_series s WHERE s.org_id = :o AND s.metric = 'ebs.read_ops'"),
            {"o": org_id}).all()
        series = {eid: sid for eid, sid in rows}
        assert set(fleet["expected"]) <= set(series)
        for vol, points in fleet["expected"].items():
            assert read_points(db, org_id, series[vol], start, fleet["now"]) == points
        # Exactly one hour row per (series, hour) that has a point, nothing else anywhere for this org.
        hours = {(series[v], ts.replace(minute=0)) for v, pts in fleet["expected"].items() for ts, _ in pts}
        stored = db.execute(sa.text("SELECT count(*) FROM metric_points WHERE org_id = :o"), {"o": org_id}).scalar_one()
        assert stored == len(hours)
        marks = db.execute(sa.text("SELECT DISTINCT watermark_at FROM ingest_watermarks WHERE source_id = :s"),
                           {"s": cid}).scalars().all()
        assert marks == [fleet["now"]]
    engine.dispose()

"""End to end on data shaped as AWS delivers it: 5-minute EC2 metrics (basic monitoring) and 1-minute
EBS metrics put into the moto server, swept by the real collector, stored, built into a snapshot and advised.
The numbers in the findings are the numbers put in.

Sources: AWS/EC2 EBS metrics are "5-minute with basic monitoring" and their rate is Sum / 300; AWS/EBS volume
metrics are 1-minute, IOPS = Sum(VolumeReadOps) / 60 (AWS CloudWatch pages for EC2 and EBS; docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
from aws_fixtures import AMI, boto, put_series
from headroom.clusters.models import Cluster
from headroom.domain.advisor import advise
from headroom.inventory.models import TikvNode
from headroom.sources.aws import ingest
from headroom.sources.aws.session import AwsClients, client_config
from headroom.timeseries.repository import read_points
from headroom.timeseries.snapshots import build_snapshot
from sqlalchemy import text

HOURS = 3
# m5.8xlarge: EBS-optimized 6,800 Mbps = 850 MB/s baseline and maximum, 30,000 IOPS; no burst (AWS EBS-optimized
# instances page; docs/reference/ec2-ebs-limits.md#limits-table).
INSTANCE_MBPS = 850.0
# Each 5-minute period: EBSReadBytes Sum = 850 MB/s x 300 s = 255,000,000,000 bytes -> 850 MB/s, pinned at the
# instance's limit for the whole window. Read as a 1-minute Sum it would be 4,250 MB/s, 5x the limit.
PERIOD_READ_BYTES = 850e6 * 300
PERIOD_READ_OPS = 850e6 * 300 / (1024 * 1024)  # 1 MiB reads: 243,186.95 ops per period = 810.6 ops/s
# The gp3 data volume (1,000 GiB, 3,000 IOPS and 125 MiB/s included): 1-minute VolumeReadOps Sum = 3,000 x 60
# = 180,000 ops of 16 KiB (VolumeReadBytes = 180,000 x 16,384 = 2,949,120,000 B/min = 46.9 MiB/s): the volume's
# IOPS ceiling, every minute.
MINUTE_READ_OPS = 3_000 * 60
MINUTE_READ_BYTES = MINUTE_READ_OPS * 16 * 1024


def _clients(region: str, endpoint: str) -> AwsClients:
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region)
    return AwsClients(session, region, endpoint, client_config(2))


def _tikv_instance(ec2: Any) -> tuple[str, dict[str, Any]]:
    """Start an m5.8xlarge tagged as a TiKV of cluster "prod"; return its zone and the instance."""
    az = ec2.describe_availability_zones()["AvailabilityZones"][0]["ZoneName"]
    inst = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="m5.8xlarge",
                             Placement={"AvailabilityZone": az},
                             TagSpecifications=[{"ResourceType": "instance", "Tags": [
                                 {"Key": "tidb_cluster", "Value": "prod"}, {"Key": "component", "Value": "tikv"}]}],
                             )["Instances"][0]  # fmt: skip
    return az, inst


def test_five_minute_ec2_and_one_minute_ebs_data_reach_the_findings_unchanged(
    db: Any, org_and_connection: Any, region: str, aws_endpoint_url: str
) -> None:
    org, conn = org_and_connection
    ec2 = boto("ec2", region, aws_endpoint_url)
    az, inst = _tikv_instance(ec2)
    data = ec2.create_volume(AvailabilityZone=az, Size=1000, VolumeType="gp3", Iops=3000, Throughput=125)["VolumeId"]
    ec2.attach_volume(VolumeId=data, InstanceId=inst["InstanceId"], Device="/dev/sdf")
    cluster = Cluster(org_id=org.id, name="prod", tikv_version="v8.5.1", deployment_kind="tiup")
    db.add(cluster)
    db.flush()
    db.add(TikvNode(org_id=org.id, cluster_id=cluster.id, store_address=f"{inst['PrivateIpAddress']}:20160"))
    db.flush()

    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    end = now - dt.timedelta(minutes=now.minute % 5)  # on a 5-minute boundary
    start = end - dt.timedelta(hours=HOURS)
    cw = boto("cloudwatch", region, aws_endpoint_url)
    periods = [start + dt.timedelta(minutes=5 * k) for k in range(HOURS * 12)]
    minutes = [start + dt.timedelta(minutes=k) for k in range(HOURS * 60)]
    iid = inst["InstanceId"]
    put_series(cw, "AWS/EC2", "InstanceId", iid, "EBSReadBytes", [(t, PERIOD_READ_BYTES) for t in periods])
    put_series(cw, "AWS/EC2", "InstanceId", iid, "EBSReadOps", [(t, PERIOD_READ_OPS) for t in periods])
    put_series(cw, "AWS/EC2", "InstanceId", iid, "EBSWriteBytes", [(t, 0.0) for t in periods])
    put_series(cw, "AWS/EC2", "InstanceId", iid, "EBSWriteOps", [(t, 0.0) for t in periods])
    put_series(cw, "AWS/EBS", "VolumeId", data, "VolumeReadOps", [(t, MINUTE_READ_OPS) for t in minutes])
    put_series(cw, "AWS/EBS", "VolumeId", data, "VolumeReadBytes", [(t, MINUTE_READ_BYTES) for t in minutes])
    put_series(cw, "AWS/EBS", "VolumeId", data, "VolumeWriteOps", [(t, 0.0) for t in minutes])
    put_series(cw, "AWS/EBS", "VolumeId", data, "VolumeWriteBytes", [(t, 0.0) for t in minutes])

    clients = _clients(region, aws_endpoint_url)
    ingest.sync_inventory(db, conn, clients, now)
    ingest.run_sweep(db, conn, clients, now=now, kind="backfill", days=1)

    snapshot = build_snapshot(db, org.id, cluster.id, start=start, end=end)
    steps = {s.metric: s.step_seconds for s in snapshot.series}
    assert steps["ec2.ebs_read_bytes"] == 300 and steps["ebs.read_ops"] == 60  # each series keeps its period
    findings = {f.rule: f for f in advise(snapshot)}

    # The instance: 255,000,000,000 B / 300 s = 850 MB/s = 810.6 MiB/s, its limit, 100 % of the window.
    bound = findings["instance-ebs-bandwidth-bound"]
    assert bound.entity.id == iid
    throughput = next(m for m in bound.evidence.measures if m.unit in ("MiB/s", "MB/s"))
    want = INSTANCE_MBPS if throughput.unit == "MB/s" else INSTANCE_MBPS * 1e6 / 2**20
    assert abs(throughput.value - want) <= 0.001 * want, (throughput, want)
    assert bound.evidence.share_of_window is not None and bound.evidence.share_of_window >= 0.99

    # The volume: 180,000 ops / 60 s = 3,000 IOPS, the gp3 included ceiling, 100 % of the window.
    ceiling = findings["volume-iops-ceiling"]
    assert ceiling.entity.id == data
    iops = next(m for m in ceiling.evidence.measures if m.unit in ("IOPS", "ops/s"))
    assert abs(iops.value - 3_000) <= 3, iops


def test_a_backfill_at_an_odd_minute_and_the_sweeps_after_it_store_each_five_minute_sum_once(
    db: Any, org_and_connection: Any, region: str, aws_endpoint_url: str
) -> None:
    # CloudWatch's periods start at the request's StartTime. A backfill planned from 21:37 back one day would ask
    # for sums of 21:37-21:42, ... while every incremental sweep asks from 21:35, 21:40, ...: both stored, a
    # snapshot's 5-minute step would add overlapping sums (a node at 850 MB/s read as more). The backfill starts
    # on a 5-minute boundary, so the backfill and the sweeps after it write the same slots.
    org, conn = org_and_connection
    ec2 = boto("ec2", region, aws_endpoint_url)
    az, inst = _tikv_instance(ec2)
    iid = inst["InstanceId"]
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    now -= dt.timedelta(minutes=now.minute % 5 - 2 if now.minute % 5 >= 2 else now.minute % 5 + 3)  # hh:m2 / hh:m7
    assert now.minute % 5 == 2
    boundary = now - dt.timedelta(minutes=2)
    # 5-minute sums as AWS stores them for basic monitoring: one datapoint per period, at the period's start
    periods = [boundary - dt.timedelta(minutes=5 * k) for k in range(1, HOURS * 12)]
    cw = boto("cloudwatch", region, aws_endpoint_url)
    put_series(cw, "AWS/EC2", "InstanceId", iid, "EBSReadBytes", [(t, PERIOD_READ_BYTES) for t in periods])

    clients = _clients(region, aws_endpoint_url)
    ingest.sync_inventory(db, conn, clients, now)
    row = ingest.request_backfill(db, conn, days=1)
    row.state, row.window_end_at = "running", now
    ingest.plan_backfill(db, conn, conn.regions, end=now, days=1)
    ingest.run_backfill(db, conn, row, lambda _region: clients, now=now)
    for minute in range(1, 9):  # the sweeps of the next eight minutes
        ingest.run_sweep(db, conn, clients, now=now + dt.timedelta(minutes=minute))
    db.flush()

    sid = db.execute(text("SELECT id, step_seconds FROM metric_series WHERE org_id = :o AND entity_id = :e "
                          "AND metric = 'ec2.ebs_read_bytes'"), {"o": org.id, "e": iid}).one()
    assert sid.step_seconds == 300
    stored = read_points(db, org.id, sid.id, now - dt.timedelta(days=2), now + dt.timedelta(hours=1))
    # every stored sum sits on a 5-minute slot, and each one put in comes back once with its value
    assert [t for t, _ in stored if t.timestamp() % 300] == []
    assert {t: v for t, v in stored if v} == dict.fromkeys(periods, PERIOD_READ_BYTES)

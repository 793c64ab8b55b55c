"""A snapshot built from the store keeps each series' own period (timeseries/snapshots.py).

CloudWatch (docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics): AWS/EBS volume metrics every minute; AWS/EC2 instance metrics every 5 minutes on
basic monitoring, `EBSByteBalance%` only at 5 minutes; `B/s = Sum / period`. The collector stores a 5-minute series
with metric_series.step_seconds = 300; the snapshot must read its Sum as one total per 5 minutes.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Any

import pytest
from headroom.accounts.models import Organization
from headroom.clusters.models import Cluster
from headroom.domain.advisor.context import Context
from headroom.inventory.models import Instance, TikvNode, Volume
from headroom.models import import_all_models
from headroom.platform.errors import InvalidInput
from headroom.platform.security import new_external_id
from headroom.timeseries import repository as ts
from headroom.timeseries.snapshots import build_snapshot

import_all_models()  # the inventory's foreign keys name tables of other features (sources.models)

T0 = dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC)
MIB = 1024 * 1024
# 166 MiB/s for 5 minutes: CloudWatch's 5-minute Sum of EBSWriteBytes is 166 x 1,048,576 x 300 bytes.
FIVE_MINUTE_SUM = 166 * MIB * 300


def _world(db: Any) -> tuple[uuid.UUID, uuid.UUID]:
    org = Organization(
        name="periods", slug=f"periods-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id()
    )
    db.add(org)
    db.flush()
    cluster = Cluster(org_id=org.id, name="c", tikv_version="v8.5.1", deployment_kind="tiup")
    db.add(cluster)
    db.flush()
    inst = Instance(
        org_id=org.id,
        cluster_id=cluster.id,
        instance_id="i-0periods",
        instance_type="m6i.2xlarge",
        region="us-east-1",
        vcpus=8,
        memory_gib=32.0,
    )
    db.add(inst)
    db.flush()
    vol = Volume(
        org_id=org.id,
        cluster_id=cluster.id,
        volume_id="vol-0periods",
        volume_type="gp3",
        size_gib=500,
        iops=3000,
        throughput_mibps=125,
        instance_ref_id=inst.id,
        device="/dev/nvme1n1",
        role="data",
    )
    db.add(vol)
    db.flush()
    db.add(
        TikvNode(
            org_id=org.id,
            cluster_id=cluster.id,
            store_address="10.0.1.5:20160",
            instance_ref_id=inst.id,
            data_volume_ref_id=vol.id,
            version="v8.5.1",
        )
    )
    db.flush()
    return org.id, cluster.id


def _store(
    db: Any, org: uuid.UUID, cluster: uuid.UUID, key: ts.SeriesKey, start: dt.datetime, values: list[float]
) -> None:
    sid = ts.ensure_series(db, org, [key], cluster_id=cluster)[key]
    ts.write_batches(db, org, [ts.SeriesBatch(sid, start, key.step_seconds, values)])


def test_a_five_minute_sum_stays_a_five_minute_sum(db: Any) -> None:
    org, cluster = _world(db)
    # One hour of 5-minute EC2 write bytes (12 periods of 166 MiB/s) and 5-minute EBSByteBalance% (Minimum).
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_write_bytes", "Bytes", step_seconds=300),
        T0,
        [float(FIVE_MINUTE_SUM)] * 12,
    )
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_read_bytes", "Bytes", step_seconds=300),
        T0,
        [0.0] * 12,
    )
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_read_ops", "Count", step_seconds=300),
        T0,
        [0.0] * 12,
    )
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_write_ops", "Count", step_seconds=300),
        T0,
        [166.0 * 4 * 300] * 12,
    )  # 256 KiB writes: 4 per MiB
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_byte_balance", "Percent", step_seconds=300),
        T0,
        [100.0 - 10 * i for i in range(12)],
    )
    # One hour of 1-minute EBS read ops on the volume: 60 a minute = 1 read/s.
    _store(db, org, cluster, ts.SeriesKey("volume", "vol-0periods", "ebs.read_ops", "Count"), T0, [60.0] * 60)

    snap = build_snapshot(db, org, cluster, start=T0, end=T0 + dt.timedelta(hours=1))
    assert snap.window.step_seconds == 60 and snap.window.points == 60
    by_metric = {s.metric: s for s in snap.series}
    writes = by_metric["ec2.ebs_write_bytes"]
    assert writes.step_seconds == 300 and writes.start == T0 and len(writes.values) == 12
    assert writes.values == [float(FIVE_MINUTE_SUM)] * 12  # the stored Sum, not 1/5 of it or 5 x
    assert by_metric["ec2.ebs_byte_balance"].step_seconds == 300
    assert by_metric["ebs.read_ops"].step_seconds == 60 and len(by_metric["ebs.read_ops"].values) == 60

    ctx = Context(snap)
    view = ctx.instance_io("i-0periods")
    assert view is not None and len(view.mibps) == 60
    # 166 x 1,048,576 x 300 bytes / 300 s = 166 MiB/s in every minute (not 830 = the Sum read as a 1-minute sum).
    assert view.mibps.tolist() == pytest.approx([166.0] * 60)
    # The balance's Minimum of each period is held across its five minutes: 100 for 10:00-10:04, 90 for 10:05-...
    balance = ctx.series("instance", "i-0periods", "ec2.ebs_byte_balance")
    assert balance is not None and balance[:6].tolist() == [100.0] * 5 + [90.0]
    volume = ctx.volume_io("vol-0periods")
    assert volume is not None and volume.read_iops.tolist() == pytest.approx([1.0] * 60)


def test_a_window_not_on_a_five_minute_boundary_reads_the_periods_it_overlaps(db: Any) -> None:
    org, cluster = _world(db)
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_write_ops", "Count", step_seconds=300),
        T0,
        [300.0 * (i + 1) for i in range(12)],
    )  # period i: (i + 1) writes/s
    snap = build_snapshot(
        db, org, cluster, start=T0 + dt.timedelta(minutes=7), end=T0 + dt.timedelta(minutes=19)
    )
    writes = next(s for s in snap.series if s.metric == "ec2.ebs_write_ops")
    # The series starts at the period holding 10:07 (10:05) and ends with the one holding 10:18 (10:15-10:20).
    assert writes.start == T0 + dt.timedelta(minutes=5) and writes.step_seconds == 300
    assert writes.values == [600.0, 900.0, 1200.0]
    aligned = Context(snap).series("instance", "i-0periods", "ec2.ebs_write_ops")
    assert aligned is not None
    # On the window's 1-minute grid: 10:07-10:09 at 2/s (120 a minute), 10:10-10:14 at 3/s, 10:15-10:18 at 4/s.
    assert (aligned / 60).tolist() == pytest.approx([2.0] * 3 + [3.0] * 5 + [4.0] * 4)


def test_a_coarser_window_step_aggregates_finer_series_and_keeps_coarse_ones(db: Any) -> None:
    org, cluster = _world(db)
    _store(
        db,
        org,
        cluster,
        ts.SeriesKey("instance", "i-0periods", "ec2.ebs_write_ops", "Count", step_seconds=300),
        T0,
        [300.0] * 12,
    )
    _store(db, org, cluster, ts.SeriesKey("volume", "vol-0periods", "ebs.read_ops", "Count"), T0, [60.0] * 60)
    snap = build_snapshot(db, org, cluster, start=T0, end=T0 + dt.timedelta(hours=1), step_seconds=600)
    by_metric = {s.metric: s for s in snap.series}
    # 10-minute steps: 2 x 300 writes and 10 x 60 reads per step, both 1/s.
    assert by_metric["ec2.ebs_write_ops"].step_seconds == 600
    assert by_metric["ec2.ebs_write_ops"].values == [600.0] * 6
    assert by_metric["ebs.read_ops"].values == [600.0] * 6


def test_an_hourly_snapshot_over_weeks_reads_the_hourly_rollups(db: Any) -> None:
    # Three weeks (more than the 7 days a minute-step snapshot may span): 5-minute EC2 write ops at 1/s then 2/s,
    # 1-minute EBS read ops at 1/s with one minute missing in every hour (CloudWatch leaves gaps), and a 5-minute
    # balance (Minimum). Read through the hourly rollups, an hour's Sum is the hour's total at its own rate.
    org, cluster = _world(db)
    start = T0.replace(hour=0)
    hours = 21 * 24
    _store(db, org, cluster,
           ts.SeriesKey("instance", "i-0periods", "ec2.ebs_write_ops", "Count", step_seconds=300), start,
           [300.0 * (1 if h < hours // 2 else 2) for h in range(hours) for _ in range(12)])
    reads = [60.0] * (hours * 60)
    for h in range(hours):
        reads[h * 60 + 17] = math.nan  # a missed minute each hour
    key = ts.SeriesKey("volume", "vol-0periods", "ebs.read_ops", "Count")
    sid = ts.ensure_series(db, org, [key], cluster_id=cluster)[key]
    ts.write_batches(db, org, [ts.SeriesBatch(sid, start, 60, reads)])
    _store(db, org, cluster,
           ts.SeriesKey("instance", "i-0periods", "ec2.ebs_byte_balance", "Percent", step_seconds=300), start,
           [100.0 - (i % 12) for i in range(hours * 12)])
    end = start + dt.timedelta(hours=hours)
    ts.refresh_rollups(db, start, end)

    with pytest.raises(InvalidInput, match="7 days"):
        build_snapshot(db, org, cluster, start=start, end=end)  # minute steps over 3 weeks: refused
    with pytest.raises(InvalidInput, match="on the hour"):
        build_snapshot(db, org, cluster, start=start + dt.timedelta(minutes=5), end=end, step_seconds=3600)
    snap = build_snapshot(db, org, cluster, start=start, end=end, step_seconds=3600)
    assert snap.window.points == hours
    by_metric = {s.metric: s for s in snap.series}
    writes = by_metric["ec2.ebs_write_ops"]
    assert writes.step_seconds == 3600 and len(writes.values) == hours
    # 1 write/s for an hour = 3,600 a step, then 7,200: twelve 5-minute sums of 300 (600) each
    assert writes.values == [3600.0] * (hours // 2) + [7200.0] * (hours - hours // 2)
    # 59 minutes of 60 reads: the hour's rate (1/s) times an hour, not 3,540 (a missed minute is not idle disk)
    assert by_metric["ebs.read_ops"].values == pytest.approx([3600.0] * hours)
    assert by_metric["ec2.ebs_byte_balance"].values == [89.0] * hours  # the lowest 5-minute Minimum of each hour
    ctx = Context(snap)
    view = ctx.volume_io("vol-0periods")
    assert view is not None and view.read_iops.tolist() == pytest.approx([1.0] * hours)

"""The real collector against the moto server: inventory, node mapping, CloudWatch points in the store."""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
from aws_fixtures import boto, make_fleet, put_series
from headroom.clusters.models import Cluster
from headroom.inventory import limits as inventory_limits
from headroom.inventory.models import Instance, InventoryChange, TikvNode, Volume
from headroom.sources.aws import ingest
from headroom.sources.aws.session import AwsClients, client_config
from headroom.sources.models import CollectionSweep
from headroom.timeseries.repository import read_points
from sqlalchemy import select


def _clients(region: str, endpoint: str) -> AwsClients:
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region)
    return AwsClients(session, region, endpoint, client_config(2))


def _series_id(db: Any, org_id: Any, entity_id: str, metric: str) -> int:
    from sqlalchemy import text

    return int(db.execute(text("SELECT id FROM metric_series WHERE org_id = :o AND entity_id = :e AND metric = :m"),
                          {"o": org_id, "e": entity_id, "m": metric}).scalar_one())


def test_inventory_roles_nodes_and_changes(db: Any, org_and_connection: Any, region: str, aws_endpoint_url: str) -> None:
    org, conn = org_and_connection
    fleet = make_fleet(region, aws_endpoint_url)
    inst = fleet["instances"][0]
    cluster = Cluster(org_id=org.id, name="prod", tikv_version="v8.5.1", deployment_kind="tiup")
    db.add(cluster)
    db.flush()
    node = TikvNode(org_id=org.id, cluster_id=cluster.id, store_address=f"{inst['PrivateIpAddress']}:20160")
    db.add(node)
    db.flush()
    t0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    summary = ingest.sync_inventory(db, conn, _clients(region, aws_endpoint_url), t0)
    assert summary.nodes_matched == 1
    vols = {v.volume_id: v for v in db.scalars(select(Volume).where(Volume.org_id == org.id))}
    assert vols[fleet["data"][0]].role == "data" and vols[fleet["raft"][0]].role == "raft"
    assert node.instance_ref_id is not None
    assert node.data_volume_ref_id == vols[fleet["data"][0]].id
    assert node.raft_volume_ref_id == vols[fleet["raft"][0]].id
    row = db.scalar(select(Instance).where(Instance.instance_id == inst["InstanceId"]))
    assert row.instance_type == "m5.large" and row.cluster_id == cluster.id

    # gp2 -> gp3 and a resize, observed an hour later: logged with time; limits_at answers per side.
    ec2 = boto("ec2", region, aws_endpoint_url)
    ec2.modify_volume(VolumeId=fleet["data"][0], VolumeType="gp3", Size=400, Iops=6000, Throughput=250)
    t1 = t0 + dt.timedelta(hours=1)
    assert ingest.sync_inventory(db, conn, _clients(region, aws_endpoint_url), t1).changes >= 2
    changes = {c.field: (c.old_value, c.new_value) for c in db.scalars(
        select(InventoryChange).where(InventoryChange.entity_id == fleet["data"][0]))}
    assert changes["volume_type"] == ("gp2", "gp3") and changes["size_gib"] == (200, 400)
    t_before, t_after = t0 + dt.timedelta(minutes=30), t1 + dt.timedelta(minutes=1)
    before = inventory_limits.attributes_at(db, org.id, "volume", fleet["data"][0], t_before)
    after = inventory_limits.attributes_at(db, org.id, "volume", fleet["data"][0], t_after)
    assert before is not None and after is not None
    assert before["volume_type"] == "gp2" and before["size_gib"] == 200
    assert after["volume_type"] == "gp3" and after["iops"] == 6000
    limits_before = inventory_limits.limits_at(db, org.id, "volume", fleet["data"][0], t_before)
    limits_after = inventory_limits.limits_at(db, org.id, "volume", fleet["data"][0], t_after)
    assert limits_before is not None and limits_before.volume is not None and limits_before.volume.limits
    assert limits_after is not None and limits_after.volume is not None and limits_after.volume.limits
    # gp2 200 GiB: 3 IOPS/GiB = 600 baseline (docs/reference/gp2-burst.md#baseline-and-burst); gp3 provisioned 6000.
    assert limits_before.volume.limits.baseline_iops == 600
    assert limits_after.volume.limits.baseline_iops == 6000

    # the change ledger lists what the collector saw, once, at the sweep that saw it (docs/changes.md)
    from headroom.changes import service as changes
    from headroom.platform.principal import Principal

    viewer = Principal(user_id=None, org_id=org.id, role="viewer", via="test")
    ledger = changes.cluster_changes(db, viewer, cluster.id, now=t1 + dt.timedelta(minutes=5), predict=False)
    (entry,) = ledger.items
    assert entry.kind == "inventory" and entry.at == t1 and entry.entity_id == fleet["data"][0]
    assert entry.who == "seen by Headroom in the EC2 inventory"
    seen = {c.key: (c.before, c.after) for c in entry.changes}
    assert seen["volume.type"] == ("gp2", "gp3") and seen["volume.size"] == (200, 400)
    assert seen["volume.iops"][1] == 6000 and seen["volume.throughput"][1] == 250
    assert entry.effect is not None and entry.effect.note and entry.effect.note.startswith("Too early")


def test_sweep_writes_cloudwatch_sums_and_is_idempotent(db: Any, org_and_connection: Any, region: str,
                                                        aws_endpoint_url: str) -> None:
    org, conn = org_and_connection
    fleet = make_fleet(region, aws_endpoint_url)
    vol = fleet["data"][0]
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    minutes = [now - dt.timedelta(minutes=k) for k in range(1, 9)]
    cw = boto("cloudwatch", region, aws_endpoint_url)
    put_series(cw, "AWS/EBS", "VolumeId", vol, "VolumeReadOps", [(m, 600.0 + i) for i, m in enumerate(minutes)])
    # Two data in one minute: CloudWatch's Sum adds them (the collector must ask for Sum, not Average).
    put_series(cw, "AWS/EBS", "VolumeId", vol, "VolumeWriteOps", [(minutes[0], 100.0), (minutes[0], 50.0)])
    clients = _clients(region, aws_endpoint_url)
    ingest.sync_inventory(db, conn, clients, now)
    first = ingest.run_sweep(db, conn, clients, now=now)
    assert first.points_written == len(minutes) + 1
    sid = _series_id(db, org.id, vol, "ebs.read_ops")
    got = read_points(db, org.id, sid, now - dt.timedelta(hours=1), now)
    assert got == sorted((m, 600.0 + i) for i, m in enumerate(minutes))
    wid = _series_id(db, org.id, vol, "ebs.write_ops")
    assert read_points(db, org.id, wid, now - dt.timedelta(hours=1), now) == [(minutes[0], 150.0)]
    sweep = first.sweep
    # 2 instances' and volumes' worth of queries fit one request: one call, the lower bound.
    assert sweep.api_calls == sweep.lower_bound_calls == sweep.planned_calls == 1
    assert sweep.metrics_requested == sweep.series == 11 + 10 + 6
    # A re-run of the same window writes the same points again (merged, nothing new) and keeps the rows.
    again = ingest.run_sweep(db, conn, clients, now=now)
    assert read_points(db, org.id, sid, now - dt.timedelta(hours=1), now) == got
    # watermark (now) - 10 min overlap, moved back to a 5-minute boundary: CloudWatch's periods start at StartTime,
    # so every sweep starts its 5-minute EC2 periods on the same clock boundaries (12:05, 12:10, ...).
    overlap_start = now - dt.timedelta(minutes=10)
    assert again.sweep.window_start_at == overlap_start - dt.timedelta(minutes=overlap_start.minute % 5)
    assert again.sweep.window_start_at.minute % 5 == 0
    assert again.sweep.api_calls == again.sweep.lower_bound_calls == 1
    assert db.scalar(select(CollectionSweep.id).where(CollectionSweep.source_id == conn.id).limit(1)) is not None


def test_series_follow_their_volume_into_a_cluster_mapped_later(db: Any, org_and_connection: Any, region: str,
                                                               aws_endpoint_url: str) -> None:
    """AWS connected before the cluster's nodes exist: the volume's series start without a cluster and move to
    it once the inventory maps the volume to a node (one series per volume, its history kept)."""
    from sqlalchemy import text

    org, conn = org_and_connection
    fleet = make_fleet(region, aws_endpoint_url)
    vol, inst = fleet["data"][0], fleet["instances"][0]
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    put_series(boto("cloudwatch", region, aws_endpoint_url), "AWS/EBS", "VolumeId", vol, "VolumeReadOps",
               [(now - dt.timedelta(minutes=2), 60.0)])
    clients = _clients(region, aws_endpoint_url)
    ingest.sync_inventory(db, conn, clients, now)
    ingest.run_sweep(db, conn, clients, now=now)
    sid = _series_id(db, org.id, vol, "ebs.read_ops")
    cluster_of = text("SELECT cluster_id FROM metric_series WHERE id = :s")
    assert db.execute(cluster_of, {"s": sid}).scalar_one() is None

    cluster = Cluster(org_id=org.id, name="prod", tikv_version="v8.5.1", deployment_kind="tiup")
    db.add(cluster)
    db.flush()
    db.add(TikvNode(org_id=org.id, cluster_id=cluster.id, store_address=f"{inst['PrivateIpAddress']}:20160"))
    db.flush()
    later = now + dt.timedelta(minutes=1)
    assert ingest.sync_inventory(db, conn, clients, later).nodes_matched == 1
    ingest.run_sweep(db, conn, clients, now=later)
    assert _series_id(db, org.id, vol, "ebs.read_ops") == sid
    assert db.execute(cluster_of, {"s": sid}).scalar_one() == cluster.id

"""The node API's inventory: each node's EC2 instance with its type's EBS limits and its data/raft volumes,
read with a fixed number of queries however many nodes a cluster has (real PostgreSQL)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from headroom.inventory.models import Instance, InstanceTypeLimits, TikvNode, Volume
from headroom.inventory.service import volume_figures
from helpers import Actor, sign_up
from sqlalchemy import event, select


def _cluster(owner: Actor, addresses: list[str]) -> tuple[str, list[str]]:
    cluster = owner.post("/api/v1/clusters", json={"name": "prod", "tikv_version": "v8.5.1"}).json()
    ids = []
    for address in addresses:
        made = owner.post(f"/api/v1/clusters/{cluster['id']}/nodes", json={"store_address": address})
        assert made.status_code == 201, made.text
        ids.append(made.json()["id"])
    return cluster["id"], ids


def _instance(db: Any, org: uuid.UUID, cluster: str, instance_id: str, itype: str) -> Instance:
    row = Instance(org_id=org, cluster_id=uuid.UUID(cluster), instance_id=instance_id, instance_type=itype,
                   vcpus=8, memory_gib=32.0, availability_zone="us-east-1a", region="us-east-1")
    db.add(row)
    db.flush()
    return row


def _volume(db: Any, org: uuid.UUID, cluster: str, host: Instance | None, volume_id: str, vtype: str, size: int,
            *, role: str, iops: int | None = None, throughput: int | None = None, device: str | None = None
            ) -> Volume:
    row = Volume(org_id=org, cluster_id=uuid.UUID(cluster), volume_id=volume_id, volume_type=vtype, size_gib=size,
                 iops=iops, throughput_mibps=throughput, instance_ref_id=host.id if host else None, role=role,
                 device=device)
    db.add(row)
    db.flush()
    return row


def _map(db: Any, node_id: str, host: Instance, data: Volume | None = None, raft: Volume | None = None) -> None:
    node = db.get(TikvNode, uuid.UUID(node_id))
    node.instance_ref_id = host.id
    node.data_volume_ref_id = data.id if data else None
    node.raft_volume_ref_id = raft.id if raft else None
    db.flush()


@pytest.fixture()
def mapped(client: Any, db: Any) -> dict[str, Any]:
    owner = sign_up(client, org="Inventory Org")
    org = uuid.UUID(owner.org_id)
    cid, (n1, n2, n3) = _cluster(owner, ["10.0.1.5:20160", "10.0.1.6:20160", "10.0.1.7:20160"])
    host1 = _instance(db, org, cid, "i-0aaa", "m5.2xlarge")
    gp2 = _volume(db, org, cid, host1, "vol-data1", "gp2", 500, role="data", iops=1500, device="/dev/sdf")
    gp3 = _volume(db, org, cid, host1, "vol-raft1", "gp3", 1000, role="raft", iops=6000, throughput=500,
                  device="/dev/sdg")
    _volume(db, org, cid, host1, "vol-root1", "gp3", 8, role="other", iops=3000, throughput=125, device="/dev/xvda")
    _map(db, n1, host1, gp2, gp3)
    # a type the built-in catalog lacks, known from EC2's DescribeInstanceTypes answer
    host2 = _instance(db, org, cid, "i-0bbb", "m5.24xlarge")
    db.merge(InstanceTypeLimits(
        instance_type="m5.24xlarge", region="us-east-1", observed_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        entry={"name": "m5.24xlarge", "baseline_bandwidth_mbps": 19000, "max_bandwidth_mbps": 19000,
               "baseline_iops": 80000, "max_iops": 80000}))
    io2 = _volume(db, org, cid, host2, "vol-data2", "io2", 2000, role="data", iops=20000, device="/dev/sdf")
    _map(db, n2, host2, io2)
    db.commit()
    return {"owner": owner, "cid": cid, "nodes": (n1, n2, n3)}


def test_nodes_carry_instance_limits_and_volumes(mapped: dict[str, Any]) -> None:
    response = mapped["owner"].get(f"/api/v1/clusters/{mapped['cid']}/nodes")
    assert response.status_code == 200, response.text
    items = {n["store_address"]: n for n in response.json()["items"]}

    first = items["10.0.1.5:20160"]
    inst = first["instance"]
    assert (inst["instance_id"], inst["instance_type"], inst["vcpus"], inst["memory_gib"]) == (
        "i-0aaa", "m5.2xlarge", 8, 32.0)
    # m5.2xlarge: 2,300 / 4,750 Mbps and 12,000 / 18,750 IOPS at 16 KiB (docs/reference/ec2-ebs-limits.md#limits-table); MB/s = Mbps / 8 (docs/reference/ec2-ebs-limits.md#units)
    ebs = inst["ebs"]
    assert ebs["baseline_throughput_mbps"] == pytest.approx(287.5)
    assert ebs["max_throughput_mbps"] == pytest.approx(593.75)
    assert (ebs["baseline_iops"], ebs["max_iops"], ebs["bursts"]) == (12000, 18750, True)
    assert ebs["source"].startswith("AWS: Amazon EBS-optimized instances (https://docs.aws.amazon.com/")
    assert inst["ebs_note"] is None

    vols = first["volumes"]
    assert [v["volume_id"] for v in vols] == ["vol-data1", "vol-raft1"]  # data then raft; the root volume left out
    data, raft = vols
    # gp2 500 GiB: baseline 3 IOPS/GiB = 1,500, below 3,000 so it bursts; 1,500 × 256 KiB = 375 MiB/s, capped at
    # the 250 MiB/s gp2 maximum (docs/reference/gp2-burst.md#gp2-throughput)
    assert (data["role"], data["volume_type"], data["size_gib"]) == ("data", "gp2", 500)
    assert (data["iops"], data["iops_provisioned"], data["burstable"]) == (1500, False, True)
    assert data["throughput_mibps"] == 250
    # gp3: what was provisioned, no burst bucket (docs/reference/ebs-volume-types.md#limits-per-volume-type)
    assert (raft["role"], raft["iops"], raft["iops_provisioned"], raft["throughput_mibps"], raft["burstable"]) == (
        "raft", 6000, True, 500, False)

    second = items["10.0.1.6:20160"]
    # m5.24xlarge: 19,000 Mbps = 2,375 MB/s, from the stored DescribeInstanceTypes entry, named as the source
    assert second["instance"]["ebs"]["baseline_throughput_mbps"] == pytest.approx(2375)
    assert second["instance"]["ebs"]["bursts"] is False
    assert second["instance"]["ebs"]["source"] == "DescribeInstanceTypes EbsInfo (us-east-1, observed 2026-11-01)"
    assert [(v["volume_id"], v["iops"], v["iops_provisioned"]) for v in second["volumes"]] == [
        ("vol-data2", 20000, True)]

    unmapped = items["10.0.1.7:20160"]
    assert unmapped["instance"] is None and unmapped["volumes"] == []


def test_an_unknown_instance_type_has_no_limits(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Odd Types")
    org = uuid.UUID(owner.org_id)
    cid, (node,) = _cluster(owner, ["10.0.2.5:20160"])
    host = _instance(db, org, cid, "i-0ccc", "zz9.mega")
    _map(db, node, host)
    db.commit()
    body = owner.get(f"/api/v1/clusters/{cid}/nodes").json()["items"][0]
    assert body["instance"]["instance_type"] == "zz9.mega" and body["instance"]["ebs"] is None
    # The resolver's note tells the page why (and that nothing judges this instance's EBS limits).
    assert body["instance"]["ebs_note"].startswith("zz9.mega: EBS limits unknown.")


def test_nodes_sharing_a_host_get_only_their_own_volumes(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Shared Hosts")
    org = uuid.UUID(owner.org_id)
    cid, (a, b) = _cluster(owner, ["10.0.3.5:20160", "10.0.3.5:20161"])
    host = _instance(db, org, cid, "i-0ddd", "m5.2xlarge")
    va = _volume(db, org, cid, host, "vol-a", "gp3", 100, role="data", iops=3000, throughput=125, device="/dev/sdf")
    vb = _volume(db, org, cid, host, "vol-b", "gp3", 100, role="data", iops=3000, throughput=125, device="/dev/sdg")
    _map(db, a, host, va)
    _map(db, b, host, vb)
    db.commit()
    items = {n["id"]: n for n in owner.get(f"/api/v1/clusters/{cid}/nodes").json()["items"]}
    assert [v["volume_id"] for v in items[a]["volumes"]] == ["vol-a"]
    assert [v["volume_id"] for v in items[b]["volumes"]] == ["vol-b"]


def test_listing_takes_the_same_number_of_queries_for_any_number_of_nodes(
    mapped: dict[str, Any], connection: Any, db: Any
) -> None:
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    url = f"/api/v1/clusters/{mapped['cid']}/nodes"
    event.listen(connection, "before_cursor_execute", count)
    try:
        assert len(mapped["owner"].get(url).json()["items"]) == 3
        with_three = len(statements)
        # more mapped nodes, each with its own instance and volumes
        org = uuid.UUID(mapped["owner"].org_id)
        for i in range(4):
            made = mapped["owner"].post(url, json={"store_address": f"10.0.9.{i}:20160"}).json()
            host = _instance(db, org, mapped["cid"], f"i-1{i}", "r5.2xlarge")
            _map(db, made["id"], host, _volume(db, org, mapped["cid"], host, f"vol-x{i}", "gp2", 100, role="data"))
        db.commit()
        statements.clear()
        assert len(mapped["owner"].get(url).json()["items"]) == 7
        assert len(statements) == with_three
    finally:
        event.remove(connection, "before_cursor_execute", count)
    # a node without a mapping costs nothing extra either, and the stored rows are what the API said
    assert db.scalar(select(Volume.size_gib).where(Volume.volume_id == "vol-x0")) == 100


def test_volume_figures_of_a_type_the_catalog_lacks() -> None:
    # "standard" (magnetic) is not in the catalog: report what DescribeVolumes said, no burst claim
    figures = volume_figures("standard", 100, None, None)
    assert (figures.iops, figures.iops_provisioned, figures.throughput_mibps, figures.burstable) == (
        None, False, None, False)


def test_nodes_link_to_the_aws_console_and_to_grafana_given_on_the_prometheus_source(mapped: dict[str, Any]) -> None:
    from urllib.parse import parse_qs, urlsplit

    owner, cid = mapped["owner"], mapped["cid"]
    nodes = {n["store_address"]: n for n in owner.get(f"/api/v1/clusters/{cid}/nodes").json()["items"]}
    first = nodes["10.0.1.5:20160"]
    assert first["instance"]["console_url"] == (
        "https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#InstanceDetails:instanceId=i-0aaa")
    assert [v["console_url"] for v in first["volumes"]] == [
        "https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#VolumeDetails:volumeId=vol-data1",
        "https://us-east-1.console.aws.amazon.com/ec2/home?region=us-east-1#VolumeDetails:volumeId=vol-raft1"]
    assert first["grafana_url"] is None  # no Grafana given yet
    # a Grafana URL on the cluster's Prometheus source: each node with a status address links to TiKV-Details
    bad = owner.post("/api/v1/sources/prometheus", json={"name": "p", "base_url": "http://127.0.0.1:9090",
                                                         "cluster_id": cid, "grafana_url": "javascript:alert(1)"})
    assert bad.status_code == 422 and "grafana_url" in bad.text
    made = owner.post("/api/v1/sources/prometheus", json={"name": "p", "base_url": "http://127.0.0.1:9090",
                                                          "cluster_id": cid,
                                                          "grafana_url": "https://grafana.example.com/"})
    assert made.status_code == 201 and made.json()["grafana_url"] == "https://grafana.example.com", made.text
    node_id = first["id"]
    assert owner.patch(f"/api/v1/clusters/{cid}/nodes/{node_id}",
                       json={"status_address": "10.0.1.5:20180"}).status_code == 200
    linked = {n["store_address"]: n for n in owner.get(f"/api/v1/clusters/{cid}/nodes").json()["items"]}
    url = urlsplit(linked["10.0.1.5:20160"]["grafana_url"])
    assert (url.scheme, url.netloc, url.path) == ("https", "grafana.example.com", "/d/RDVQiEzZz")
    assert parse_qs(url.query) == {"var-instance": ["10.0.1.5:20180"], "from": ["now-6h"], "to": ["now"]}
    assert linked["10.0.1.6:20160"]["grafana_url"] is None  # no status address: no instance to pick


def test_the_console_link_needs_a_real_region() -> None:
    from headroom.inventory.links import aws_console_url

    assert aws_console_url("volume", "vol-1", None) is None
    assert aws_console_url("volume", "vol-1", "not a region") is None
    assert aws_console_url("instance", "i-1", "us-gov-west-1") == (
        "https://console.amazonaws-us-gov.com/ec2/home?region=us-gov-west-1#InstanceDetails:instanceId=i-1")

"""The AWS script of a new volume (the raft-dedicated-volume finding's `volume.create`), run as written by the real
AWS CLI against the moto server (docs/reference/new-volumes.md).

The first run creates and attaches one volume per node, each on the first free device name among those AWS
recommends for EBS on Linux, /dev/sd[f-p] (an instance that already has /dev/sdf gets /dev/sdg); it tags each with the
finding's key and its node, prints the ids and records them in a state file next to the script. A second run finds the
tagged volumes and creates nothing. The rollback refuses while TiKV's live config (its status server's /config)
still puts the Raft directory on the new volume, then detaches, waits and deletes what the tags find: the AWS state
is what it was before. A wrong region, a missing instance, AccessDenied from an IAM policy and an unknown mount point
each stop the script with nothing changed and say why.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import boto3
import pytest
from local_http import QuietHandler
from aws_script_run import REGION, ec2_client, make_instance, run_script
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf import Patch, PatchTarget
from headroom.domain.tikvconf.render import artefact
from test_aws_script_in_aws_cli import iam_moto  # noqa: F401 - the IAM-enforcing moto server fixture


def _az(ec2: Any, instance: str) -> str:
    found = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]
    zone: str = found["Placement"]["AvailabilityZone"]
    return zone


def _cluster() -> str:
    """A cluster name of the test's own: the moto server is shared, and the tags find volumes by it."""
    return f"prod-{uuid.uuid4().hex[:8]}"


def _patch(ec2: Any, instances: list[str], status: list[str], *, cluster: str, mount: bool = True,
           region: str = REGION) -> Patch:
    """One dedicated Raft volume per node, as the raft-dedicated-volume rule proposes, with its finding's key."""
    changes: list[Change] = []
    sources: list[str] = []
    titles: list[str] = []
    nodes = []
    for n, (instance, address) in enumerate(zip(instances, status, strict=True), 1):
        name = f"tikv-{n}"
        spec = {"type": "gp3", "size_gib": 20, "iops": 3000, "throughput_mibps": 125, "role": "raft",
                "attach_to": instance, "node": name, "availability_zone": _az(ec2, instance) if ec2 else None,
                "mount": f"/data/tikv-{n}-raft" if mount else None, "raft_key": "raft-engine.dir",
                "raft_dir": f"/data/tikv-{n}-raft/raft-engine", "raft_dir_now": f"/data/tikv-{n}/raft-engine"}
        changes.append(Change(target="aws", key="volume.create", current=None, proposed=spec, online=True,
                              reason=f"a dedicated 20 GiB gp3 for {name}'s Raft log",
                              entity=EntityRef(kind="instance", id=instance, node=name, instance_id=instance)))
        changes.append(Change(target="tikv", key="raft-engine.dir", current="",
                              proposed=f"/data/tikv-{n}-raft/raft-engine", online=False, reason="its own volume",
                              entity=EntityRef(kind="node", id=name, status_address=address)))
        key = f"raft-dedicated-volume/{cluster}/node:{name}"
        sources += [key, key]
        titles += [f"{name}: the Raft log shares the data volume"] * 2
        nodes.append(PatchTarget(status_address=address, instance_id=instance, name=name))
    return Patch(cluster=cluster, tikv_version="v8.5.1", nodes=tuple(nodes), changes=tuple(changes),
                 sources=tuple(sources), source_titles=tuple(titles), region=region)


def _world(ec2: Any, instances: list[str], cluster: str) -> dict[str, Any]:
    """What the test compares before and after: the test's volumes (id, state, size, attachment: those attached
    to its instances and those tagged with its cluster's finding) and the instances' block device mappings. Not
    every volume: the moto server is shared with the tests running beside this one, which make volumes of their
    own."""
    def ours(v: dict[str, Any]) -> bool:
        finding = {t["Key"]: t["Value"] for t in v.get("Tags", [])}.get("headroom:finding", "")
        return (any(a["InstanceId"] in instances for a in v.get("Attachments", []))
                or f"/{cluster}/" in finding)

    volumes = {
        v["VolumeId"]: (v["State"], v["Size"], v["VolumeType"],
                        tuple((a["InstanceId"], a["Device"]) for a in v.get("Attachments", [])))
        for v in ec2.describe_volumes()["Volumes"] if ours(v)
    }
    mappings = {
        i: sorted(m["DeviceName"] for m in ec2.describe_instances(InstanceIds=[i])["Reservations"][0]["Instances"][0]
                  .get("BlockDeviceMappings", []))
        for i in instances
    }
    return {"volumes": volumes, "mappings": mappings}


def _tagged(ec2: Any, cluster: str, node: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ec2.describe_volumes(Filters=[
        {"Name": "tag:headroom:finding", "Values": [f"raft-dedicated-volume/{cluster}/node:{node}"]},
        {"Name": "tag:headroom:node", "Values": [node]},
    ])["Volumes"]
    return found


class _TikvStatus(QuietHandler):
    """A TiKV status server's GET /config: the JSON TiKV serves ({"raft-engine": {"dir": ...}, ...})."""

    raft_dir: ClassVar[dict[str, str]] = {}

    def do_GET(self) -> None:
        port = str(self.server.server_address[1])
        body = json.dumps({"storage": {"data-dir": "/data/tikv"},
                           "raft-engine": {"enable": True, "dir": self.raft_dir[port]},
                           "raftstore": {"raftdb-path": ""}}, indent=2).encode()
        self.send_response(200 if self.path == "/config" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def _tikvs(count: int) -> Iterator[list[str]]:
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TikvStatus) for _ in range(count)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield [f"127.0.0.1:{s.server_address[1]}" for s in servers]
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def _set_raft_dir(address: str, value: str) -> None:
    _TikvStatus.raft_dir[address.rsplit(":", 1)[1]] = value


def _run(script: str, endpoint: str, tmp_path: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_script(script, endpoint, tmp_path, name, "--yes", *args)


def test_first_run_creates_and_attaches_on_a_free_device_a_second_run_creates_nothing_and_the_rollback_restores(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    busy, free = make_instance(ec2, "m5.2xlarge"), make_instance(ec2, "m5.2xlarge")
    # The first instance already has a data volume on /dev/sdf: the new one must get another name.
    data = ec2.create_volume(AvailabilityZone=_az(ec2, busy), Size=100, VolumeType="gp3")["VolumeId"]
    ec2.get_waiter("volume_available").wait(VolumeIds=[data])
    ec2.attach_volume(VolumeId=data, InstanceId=busy, Device="/dev/sdf")
    cluster = _cluster()
    before = _world(ec2, [busy, free], cluster)

    with _tikvs(2) as status:
        patch = _patch(ec2, [busy, free], status, cluster=cluster)
        for n, address in enumerate(status, 1):
            _set_raft_dir(address, f"/data/tikv-{n}/raft-engine")
        forward = artefact(patch, "aws").body
        # a reader is told the finding in words; its key is only what the tags find the volume by
        assert "; finding: tikv-1: the Raft log shares the data volume" in forward
        key = f"raft-dedicated-volume/{cluster}/node:tikv-1"
        assert [line for line in forward.splitlines() if key in line and line.lstrip().startswith("#")] == []
        assert "/dev/sdf" not in forward.replace("/dev/sdf-/dev/sdp", "").replace("/dev/sdf..", "")
        first = _run(forward, aws_endpoint_url, tmp_path, "prod-aws-modify.sh")
        assert first.returncode == 0, first.stdout + first.stderr
        made = {}
        for node, instance, device in (("tikv-1", busy, "/dev/sdg"), ("tikv-2", free, "/dev/sdf")):
            (volume,) = _tagged(ec2, cluster, node)
            made[node] = volume["VolumeId"]
            assert (volume["State"], volume["Size"], volume["VolumeType"], volume["Iops"], volume["Throughput"]) == (
                "in-use", 20, "gp3", 3000, 125)
            assert [(a["InstanceId"], a["Device"]) for a in volume["Attachments"]] == [(instance, device)]
            tags = {t["Key"]: t["Value"] for t in volume["Tags"]}
            assert tags["Name"] == f"{node}-raft" and tags["headroom:role"] == "raft"
            assert f"{node}-raft: created {volume['VolumeId']}" in first.stdout  # printed
            assert f"{volume['VolumeId']} attached to {instance} as {device}" in first.stdout
        state = (tmp_path / f"{cluster}-new-volumes.tsv").read_text().splitlines()
        recorded = [line.split("\t")[1:6] for line in state]
        assert recorded == [
            ["created", made["tikv-1"], busy, "", "tikv-1-raft"],
            ["attached", made["tikv-1"], busy, "/dev/sdg", "tikv-1-raft"],
            ["created", made["tikv-2"], free, "", "tikv-2-raft"],
            ["attached", made["tikv-2"], free, "/dev/sdf", "tikv-2-raft"],
        ]
        assert "set raft-engine.dir = /data/tikv-1-raft/raft-engine" in first.stdout
        assert "copy /data/tikv-1/raft-engine to /data/tikv-1-raft/raft-engine" in first.stdout

        again = _run(forward, aws_endpoint_url, tmp_path, "prod-aws-modify.sh")
        assert again.returncode == 0, again.stdout + again.stderr
        assert "create-volume" not in again.stdout and "created" not in again.stdout
        for node in ("tikv-1", "tikv-2"):
            assert [v["VolumeId"] for v in _tagged(ec2, cluster, node)] == [made[node]]
            assert f"{made[node]} is already attached" in again.stdout
        assert len(_world(ec2, [busy, free], cluster)["volumes"]) == len(before["volumes"]) + 2

        rollback = artefact(patch, "aws", rollback=True).body
        assert "<its volume id>" not in rollback
        # TiKV still runs its Raft log on the new volume: the rollback refuses and changes nothing.
        _set_raft_dir(status[0], "/data/tikv-1-raft/raft-engine")
        refused = _run(rollback, aws_endpoint_url, tmp_path, "prod-rollback-aws-modify.sh")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert ("tikv-1-raft: TiKV at " + status[0] + " still has raft-engine.dir = /data/tikv-1-raft/raft-engine"
                in refused.stderr)
        assert "Nothing was changed." in refused.stderr
        assert [v["VolumeId"] for v in _tagged(ec2, cluster, "tikv-1")] == [made["tikv-1"]]

        _set_raft_dir(status[0], "/data/tikv-1/raft-engine")  # the config rolled back, TiKV restarted
        back = _run(rollback, aws_endpoint_url, tmp_path, "prod-rollback-aws-modify.sh")
        assert back.returncode == 0, back.stdout + back.stderr
        for node in ("tikv-1", "tikv-2"):
            assert f"{made[node]} deleted" in back.stdout
        assert _world(ec2, [busy, free], cluster) == before
        assert [line.split("\t")[1] for line in (tmp_path / f"{cluster}-new-volumes.tsv").read_text().splitlines()
                ][-4:] == ["detached", "deleted", "detached", "deleted"]

        # Run again: nothing carries the tags any more, nothing to do.
        twice = _run(rollback, aws_endpoint_url, tmp_path, "prod-rollback-aws-modify.sh")
        assert twice.returncode == 0, twice.stdout + twice.stderr
        assert "tikv-1-raft: no volume carries its tags: nothing to remove" in twice.stdout
        assert _world(ec2, [busy, free], cluster) == before


def test_a_volume_made_but_not_attached_is_attached_not_made_again(aws_endpoint_url: str, tmp_path: Path) -> None:
    # A run that stopped after create-volume (or whose answer was lost): the tags find the volume.
    ec2 = ec2_client(aws_endpoint_url)
    instance = make_instance(ec2, "m5.2xlarge")
    cluster = _cluster()
    with _tikvs(1) as status:
        patch = _patch(ec2, [instance], status, cluster=cluster)
        earlier = ec2.create_volume(AvailabilityZone=_az(ec2, instance), Size=20, VolumeType="gp3", TagSpecifications=[
            {"ResourceType": "volume", "Tags": [{"Key": "headroom:finding", "Value": f"raft-dedicated-volume/{cluster}/node:tikv-1"},
                                                {"Key": "headroom:node", "Value": "tikv-1"}]}])["VolumeId"]
        run = _run(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "modify.sh")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"found {earlier}" in run.stdout
    (volume,) = _tagged(ec2, cluster, "tikv-1")
    assert volume["VolumeId"] == earlier and volume["State"] == "in-use"


def test_failures_stop_before_any_change_and_say_why(aws_endpoint_url: str, tmp_path: Path) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    instance = make_instance(ec2, "m5.2xlarge")
    cluster = _cluster()
    with _tikvs(1) as status:
        cases = {
            "wrong region": (_patch(ec2, [instance], status, cluster=cluster, region="us-west-2"),
                             f"STOPPED: tikv-1-raft: cannot describe the instance {instance} in us-west-2"),
            "missing instance": (_patch(None, ["i-0123456789abcdef0"], status, cluster=cluster),
                                 "STOPPED: tikv-1-raft: cannot describe the instance i-0123456789abcdef0"),
            "unknown mount": (_patch(ec2, [instance], status, cluster=cluster, mount=False),
                              "set at the top of this script: MOUNT_TIKV_1_RAFT (an absolute mount point)"),
        }
        for case, (patch, expected) in cases.items():
            before = _world(ec2, [instance], cluster)
            run = _run(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, f"{case}.sh")
            assert run.returncode == 1, case + run.stdout + run.stderr
            assert expected in run.stderr, case + run.stderr
            assert "Nothing was changed." in run.stderr, case
            assert _world(ec2, [instance], cluster) == before, case
            if case == "missing instance":
                assert "InvalidInstanceID.NotFound" in run.stderr  # the CLI's own error, shown


@pytest.fixture(scope="module")
def admin(iam_moto: str) -> dict[str, str]:  # noqa: F811
    """The IAM moto server's admin key: its first three requests (unauthenticated) make it."""
    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=iam_moto, aws_access_key_id="testing",
                       aws_secret_access_key="testing")
    everything = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.create_user(UserName="admin")
    iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(everything))
    key: dict[str, str] = iam.create_access_key(UserName="admin")["AccessKey"]
    return key


def test_access_denied_on_create_volume_changes_nothing(
    iam_moto: str, admin: dict[str, str], tmp_path: Path  # noqa: F811
) -> None:
    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=iam_moto,
                       aws_access_key_id=admin["AccessKeyId"], aws_secret_access_key=admin["SecretAccessKey"])
    # May look (every check passes), may not create volumes.
    limited = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": [
        "ec2:DescribeVolumes", "ec2:DescribeInstances", "ec2:AttachVolume"], "Resource": "*"}]}
    iam.create_user(UserName="raft-operator")
    iam.put_user_policy(UserName="raft-operator", PolicyName="volumes", PolicyDocument=json.dumps(limited))
    key = iam.create_access_key(UserName="raft-operator")["AccessKey"]
    ec2 = ec2_client(iam_moto, key=admin["AccessKeyId"], secret=admin["SecretAccessKey"])
    instance = make_instance(ec2, "m5.2xlarge")
    cluster = _cluster()
    before = _world(ec2, [instance], cluster)
    with _tikvs(1) as status:
        patch = _patch(ec2, [instance], status, cluster=cluster)
        run = run_script(artefact(patch, "aws").body, iam_moto, tmp_path, "modify.sh", "--yes",
                         env={"AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                              "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]})
    assert run.returncode != 0, run.stdout + run.stderr
    assert "checked tikv-1-raft" in run.stdout  # the checks passed; CreateVolume was refused
    assert "not authorized" in run.stderr.lower() or "accessdenied" in run.stderr.lower()
    assert "Nothing was changed." in run.stderr
    assert _world(ec2, [instance], cluster) == before


def test_the_rollback_refuses_when_tikv_cannot_be_asked_unless_told_to_skip(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    instance = make_instance(ec2, "m5.2xlarge")
    cluster = _cluster()
    with _tikvs(1) as status:
        patch = _patch(ec2, [instance], status, cluster=cluster)
    # The status server is gone now (connection refused).
    left = ec2.create_volume(AvailabilityZone=_az(ec2, instance), Size=20, VolumeType="gp3", TagSpecifications=[
        {"ResourceType": "volume", "Tags": [{"Key": "headroom:finding", "Value": f"raft-dedicated-volume/{cluster}/node:tikv-1"},
                                            {"Key": "headroom:node", "Value": "tikv-1"}]}])["VolumeId"]
    rollback = artefact(patch, "aws", rollback=True).body
    refused = _run(rollback, aws_endpoint_url, tmp_path, "rollback.sh")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"tikv-1-raft: cannot read TiKV's config at http://{status[0]}/config" in refused.stderr
    assert "Nothing was changed." in refused.stderr
    assert [v["VolumeId"] for v in _tagged(ec2, cluster, "tikv-1")] == [left]
    skipped = _run(rollback, aws_endpoint_url, tmp_path, "rollback.sh", "--skip-tikv-check")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert f"tikv-1-raft: {left} deleted" in skipped.stdout
    assert _tagged(ec2, cluster, "tikv-1") == []


def test_a_run_refused_half_way_prints_the_volume_it_made_and_the_undo_that_removes_it(
    iam_moto: str, admin: dict[str, str], tmp_path: Path  # noqa: F811
) -> None:
    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=iam_moto,
                       aws_access_key_id=admin["AccessKeyId"], aws_secret_access_key=admin["SecretAccessKey"])
    # May create volumes, may not attach them.
    limited = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": [
        "ec2:DescribeVolumes", "ec2:DescribeInstances", "ec2:CreateVolume", "ec2:CreateTags"], "Resource": "*"}]}
    iam.create_user(UserName="raft-creator")
    iam.put_user_policy(UserName="raft-creator", PolicyName="volumes", PolicyDocument=json.dumps(limited))
    key = iam.create_access_key(UserName="raft-creator")["AccessKey"]
    ec2 = ec2_client(iam_moto, key=admin["AccessKeyId"], secret=admin["SecretAccessKey"])
    instance = make_instance(ec2, "m5.2xlarge")
    cluster = _cluster()
    before = _world(ec2, [instance], cluster)
    with _tikvs(1) as status:
        patch = _patch(ec2, [instance], status, cluster=cluster)
        run = run_script(artefact(patch, "aws").body, iam_moto, tmp_path, "modify.sh", "--yes",
                         env={"AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                              "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]})
    assert run.returncode != 0, run.stdout + run.stderr
    (made,) = _tagged(ec2, cluster, "tikv-1")
    report = run.stderr[run.stderr.index("Changed before stopping:"):]
    assert f"tikv-1-raft: {made['VolumeId']} created" in report
    (undo,) = [line.strip() for line in report.split("To undo, run in this order:")[1].splitlines() if line.strip()]
    assert undo == f"aws --region {REGION} ec2 delete-volume --volume-id {made['VolumeId']}"
    back = run_script(undo + "\n", iam_moto, tmp_path, "undo.sh",
                      env={"AWS_ACCESS_KEY_ID": admin["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": admin["SecretAccessKey"]})
    assert back.returncode == 0, back.stderr
    assert _world(ec2, [instance], cluster) == before

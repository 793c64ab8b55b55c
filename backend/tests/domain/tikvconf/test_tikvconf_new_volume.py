"""A new volume (the raft-dedicated-volume finding's `volume.create`) renders as AWS CLI and Terraform, and its
rollback says how to remove it once TiKV no longer uses it."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf import Patch, PatchTarget
from headroom.domain.tikvconf.render import artefact

SPEC = {"type": "gp3", "size_gib": 20, "iops": 3000, "throughput_mibps": 125, "role": "raft",
        "attach_to": "i-0abc", "mount": "/raft", "availability_zone": "us-east-1a"}


def _patch() -> Patch:
    create = Change(target="aws", key="volume.create", current=None, proposed=SPEC, online=True,
                    reason="a dedicated 20 GiB gp3 for tikv-1's Raft log",
                    entity=EntityRef(kind="instance", id="i-0abc", node="tikv-1", instance_id="i-0abc"))
    raft_dir = Change(target="tikv", key="raft-engine.dir", current="", proposed="/raft/tikv/raft-engine",
                      online=False, reason="put the Raft log on its own volume", entity=EntityRef(kind="node", id="tikv-1", status_address="10.0.1.5:20180"))
    return Patch(cluster="prod", tikv_version="v8.5.1",
                 nodes=(PatchTarget(status_address="10.0.1.5:20180", address="10.0.1.5:20160", instance_id="i-0abc",
                                     name="tikv-1"),),
                 changes=(create, raft_dir))


def test_aws_script_creates_waits_and_attaches() -> None:
    body = artefact(_patch(), "aws").body
    assert ("VOL_TIKV_1_RAFT=$(aws_cli ec2 create-volume --availability-zone us-east-1a --volume-type gp3 --size 20 "
            "--iops 3000 --throughput 125") in body
    assert 'aws_cli ec2 wait volume-available --volume-ids "$VOL_TIKV_1_RAFT"' in body
    assert 'aws_cli ec2 attach-volume --volume-id "$VOL_TIKV_1_RAFT" --instance-id i-0abc --device /dev/sdf' in body
    assert "modify-volume" not in body


def test_terraform_declares_the_volume_and_its_attachment() -> None:
    body = artefact(_patch(), "terraform").body
    assert 'resource "aws_ebs_volume" "tikv_1_raft"' in body
    assert 'resource "aws_volume_attachment" "tikv_1_raft"' in body
    assert "volume_id   = aws_ebs_volume.tikv_1_raft.id" in body
    terraform = shutil.which("terraform")
    if terraform is None:
        pytest.skip("terraform not installed")
    formatted = subprocess.run([terraform, "fmt", "-"], input=body, capture_output=True, text=True, check=True)
    assert formatted.stdout == body


def test_rollback_removes_the_volume_only_after_tikv_stops_using_it() -> None:
    aws = artefact(_patch(), "aws", rollback=True).body
    assert "create-volume" not in aws
    assert "delete-volume" in aws and "no longer uses it" in aws
    tf = artefact(_patch(), "terraform", rollback=True).body
    assert "remove aws_ebs_volume.tikv_1_raft" in tf

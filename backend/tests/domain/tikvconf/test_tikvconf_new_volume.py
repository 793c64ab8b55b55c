"""A new volume (the raft-dedicated-volume finding's `volume.create`) renders as AWS CLI and Terraform, and its
rollback removes what the volume's tags find once TiKV no longer uses it (the AWS script run in the AWS CLI against
moto: backend/tests/patches/test_new_volume_script.py)."""

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


def test_aws_script_tags_finds_creates_and_attaches_on_a_free_device() -> None:
    body = artefact(_patch(), "aws").body
    # tagged with the finding's key (here: the cluster and the volume's name, the patch names no finding) and node
    assert '"Key":"headroom:finding","Value":"prod/tikv-1-raft"' in body
    assert '{"Name":"tag:headroom:node","Values":["tikv-1"]}' in body
    assert ('NEW_ID_TIKV_1_RAFT=$(aws_cli ec2 create-volume --availability-zone "$NEW_AZ_TIKV_1_RAFT" --volume-type gp3 '
            "--size 20 --iops 3000 --throughput 125 --tag-specifications") in body
    assert "check_new_volume tikv-1-raft i-0abc us-east-1a" in body
    assert body.index("check_new_volume") < body.index("confirm ") < body.index("create-volume --availability")
    assert 'attach_new_volume tikv-1-raft "$NEW_ID_TIKV_1_RAFT" i-0abc' in body
    assert "--device /dev/sdf" not in body  # a free name from the instance's block device mappings
    assert "for letter in f g h i j k l m n o p" in body
    # the Raft directory from the patch's own tikv.toml change; where the log is now is unknown: the user sets it
    assert "RAFT_DIR_TIKV_1_RAFT=/raft/tikv/raft-engine" in body
    assert "RAFT_DIR_NOW_TIKV_1_RAFT=''" in body
    assert "modify-volume" not in body


def test_the_finding_key_is_the_patch_label_when_it_has_one() -> None:
    patch = _patch().model_copy(update={"sources": ("raft-dedicated-volume/prod/node:tikv-1",) * 2})
    body = artefact(patch, "aws").body
    assert '"Key":"headroom:finding","Value":"raft-dedicated-volume/prod/node:tikv-1"' in body


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
    assert "create-volume" not in aws and "<its volume id>" not in aws
    assert "check_old_volume tikv-1-raft i-0abc" in aws
    assert "check_raft_moved_back tikv-1-raft 10.0.1.5:20180 raft-engine.dir" in aws
    assert aws.index("check_raft_moved_back tikv") < aws.index("confirm ") < aws.index("remove_volume tikv")
    assert "--skip-tikv-check) SKIP_TIKV_CHECK=1" in aws
    tf = artefact(_patch(), "terraform", rollback=True).body
    assert "remove aws_ebs_volume.tikv_1_raft" in tf


@pytest.mark.parametrize("rollback", [False, True])
def test_the_new_volume_script_is_valid_bash_and_passes_shellcheck(rollback: bool) -> None:
    body = artefact(_patch().model_copy(update={"region": "eu-north-1"}), "aws", rollback=rollback).body
    syntax = subprocess.run(["bash", "-n"], input=body, capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    lint = subprocess.run(["shellcheck", "--severity=warning", "-s", "bash", "-"], input=body, capture_output=True,
                          text=True, check=False)
    assert lint.returncode == 0, lint.stdout

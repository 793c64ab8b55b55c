"""The Terraform artefact's aws_ebs_volume blocks follow the AWS provider's argument rules for the volume type they
set, forward and rollback: gp2 -> gp3 adds iops and throughput, its rollback to gp2 drops both and tells the user
to remove them from the resource, gp3 -> io2 drops throughput and keeps iops.

The rules are restated here from the provider's public source, not imported from the renderer (a renderer that
got them wrong must fail): terraform-provider-aws, internal/service/ec2/ebs_volume.go
(https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/ec2/ebs_volume.go),
resourceEBSVolumeCustomizeDiff ("'iops' must not be set when 'type' is ...": iops only with io1, io2, gp3, required
with io1 and io2; "Throughput is valid only for gp3 volumes") and the schema's throughput IntBetween(125, 1000);
docs/reference/terraform-aws-provider.md#aws_ebs_volume-arguments-by-volume-type. `terraform validate` needs the
provider, which cannot be downloaded here; `terraform fmt -check` runs where the binary is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import hcl2
import pytest
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch
from headroom.domain.tikvconf.render import artefact

VOLUME = "vol-0a1b2c3d4e5f60001"
IOPS_ALLOWED = {"io1", "io2", "gp3"}
IOPS_REQUIRED = {"io1", "io2"}
THROUGHPUT_ALLOWED = {"gp3"}


def _change(key: str, current: object, proposed: object) -> Change:
    return Change(target="aws", key=key, current=current, proposed=proposed,  # type: ignore[arg-type]
                  reason=f"because {key}", entity=EntityRef(kind="volume", id=VOLUME, volume_id=VOLUME))


def _patch(*changes: Change) -> Patch:
    return Patch(cluster="prod-east", changes=changes)


GP2_TO_GP3 = _patch(_change("volume.type", "gp2", "gp3"), _change("volume.iops", None, 6000),
                    _change("volume.throughput", None, 250))
GP3_TO_IO2 = _patch(_change("volume.type", "gp3", "io2"), _change("volume.iops", 3000, 16000))
GP3_TO_IO2_NO_IOPS = _patch(_change("volume.type", "gp3", "io2"))
# A change list that sets an argument the new type cannot take (st1 has no provisioned IOPS): the block drops it.
TO_ST1_WITH_IOPS = _patch(_change("volume.type", "gp3", "st1"), _change("volume.iops", 3000, 500),
                          _change("volume.throughput", 125, 250))


def _volumes(body: str) -> dict[str, dict[str, Any]]:
    parsed = hcl2.loads(body)
    return {name.strip('"'): {key: _unquoted(value) for key, value in block.items() if not key.startswith("__")}
            for resource in parsed.get("resource", []) for kind, blocks in resource.items()
            if kind.strip('"') == "aws_ebs_volume" for name, block in blocks.items()}


def _unquoted(value: Any) -> Any:
    """python-hcl2 keeps a string's quotes ('"gp3"')."""
    return value[1:-1] if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"' else value


def _provider_errors(block: dict[str, Any]) -> list[str]:
    """What the AWS provider says of a block setting `type` (the arguments it cannot take)."""
    kind = block.get("type")
    errors = []
    if kind is None:
        return errors
    if "iops" in block and kind not in IOPS_ALLOWED:
        errors.append(f"'iops' must not be set when 'type' is '{kind}'")
    if "throughput" in block and kind not in THROUGHPUT_ALLOWED:
        errors.append(f"'throughput' must not be set when 'type' is '{kind}'")
    if "throughput" in block and not 125 <= block["throughput"] <= 1000:
        errors.append("expected throughput to be in the range (125 - 1000)")
    return errors


@pytest.mark.parametrize("patch", [GP2_TO_GP3, GP3_TO_IO2, GP3_TO_IO2_NO_IOPS, TO_ST1_WITH_IOPS],
                         ids=["gp2-gp3", "gp3-io2", "io2-bare", "st1-iops"])
@pytest.mark.parametrize("rollback", [False, True])
def test_every_volume_block_passes_the_providers_argument_rules(patch: Patch, rollback: bool) -> None:
    body = artefact(patch, "terraform", rollback=rollback).body
    volumes = _volumes(body)
    assert list(volumes) == ["vol_0a1b2c3d4e5f60001"]
    for block in volumes.values():
        assert _provider_errors(block) == []


def test_the_gp2_rollback_sets_no_iops_or_throughput_and_says_to_remove_them() -> None:
    forward = _volumes(artefact(GP2_TO_GP3, "terraform").body)["vol_0a1b2c3d4e5f60001"]
    assert (forward["type"], forward["iops"], forward["throughput"]) == ("gp3", 6000, 250)
    body = artefact(GP2_TO_GP3, "terraform", rollback=True).body
    block = _volumes(body)["vol_0a1b2c3d4e5f60001"]
    assert block["type"] == "gp2" and "iops" not in block and "throughput" not in block
    inside = body[body.index('resource "aws_ebs_volume"'):]
    assert "REMOVE `iops` and `throughput` from this resource" in inside
    assert "internal/service/ec2/ebs_volume.go" in inside
    # the bundle's rollback carries the same artefact's AWS script, which sets only the type
    assert "--volume-type gp2" in artefact(GP2_TO_GP3, "aws", rollback=True).body


def test_gp3_to_io2_drops_throughput_and_keeps_iops() -> None:
    body = artefact(GP3_TO_IO2, "terraform").body
    block = _volumes(body)["vol_0a1b2c3d4e5f60001"]
    assert block == {"type": "io2", "iops": 16000}
    assert "REMOVE `throughput` from this resource" in body
    # io2 without a proposed iops: the provider requires one, the snippet says to keep it
    bare = artefact(GP3_TO_IO2_NO_IOPS, "terraform").body
    assert "Keep `iops` set in this resource: the AWS provider requires it with type io2" in bare
    # back to gp3: both arguments allowed, nothing to remove
    back = artefact(GP3_TO_IO2, "terraform", rollback=True).body
    assert _volumes(back)["vol_0a1b2c3d4e5f60001"] == {"type": "gp3", "iops": 3000}
    assert "REMOVE" not in back


def test_arguments_the_new_type_cannot_take_are_left_out_and_named() -> None:
    body = artefact(TO_ST1_WITH_IOPS, "terraform").body
    assert _volumes(body)["vol_0a1b2c3d4e5f60001"] == {"type": "st1"}
    assert "REMOVE `iops` and `throughput` from this resource" in body


def test_a_size_change_says_the_filesystem_must_grow_on_the_host() -> None:
    grow = _patch(_change("volume.size", 500, 800))
    body = artefact(grow, "terraform").body
    assert _volumes(body)["vol_0a1b2c3d4e5f60001"] == {"size": 800}
    assert "Terraform stops at ModifyVolume: once the modification is optimizing, grow the partition" in body
    assert "grow the partition" not in artefact(grow, "terraform", rollback=True).body  # EBS cannot shrink


def test_a_throughput_beyond_the_providers_range_is_flagged() -> None:
    body = artefact(_patch(_change("volume.throughput", 1000, 2000), _change("volume.type", "gp3", "gp3")),
                    "terraform").body
    assert "outside 125-1000, the range the AWS provider's schema accepts" in body


@pytest.mark.parametrize("patch", [GP2_TO_GP3, GP3_TO_IO2, GP3_TO_IO2_NO_IOPS, TO_ST1_WITH_IOPS,
                                   _patch(_change("volume.size", 500, 800))])
@pytest.mark.parametrize("rollback", [False, True])
def test_terraform_fmt_leaves_the_snippet_as_it_is(patch: Patch, rollback: bool) -> None:
    terraform = shutil.which("terraform") or (
        "/usr/local/bin/terraform" if Path("/usr/local/bin/terraform").exists() else None)
    if terraform is None:
        pytest.skip("terraform is not installed")
    body = artefact(patch, "terraform", rollback=rollback).body
    formatted = subprocess.run([terraform, "fmt", "-"], input=body, capture_output=True, text=True, timeout=60,
                               check=False)
    assert formatted.returncode == 0, formatted.stderr
    assert formatted.stdout == body

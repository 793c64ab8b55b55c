"""A size change in the exported AWS script, run with the real AWS CLI against moto: after modify-volume --size the
script waits until describe-volumes-modifications shows the modification optimizing or completed (AWS, Monitor the
progress of Amazon EBS volume modifications), then grows the filesystem on the host (docs/reference/
filesystem-grow.md): through `tiup cluster exec <cluster> -N <node> --sudo --command ...` when TIUP_CLUSTER is set
(PingCAP, tiup cluster exec), else it prints the command to run there.

`tiup` is a stand-in that checks its arguments and runs the command with bash, where lsblk and findmnt describe an
ext4 image file as the volume's disk (test_filesystem_grow_host_step.py): the real resize2fs grows it. Moto completes a
modification at once; a proxy in front of it answers `modifying` after the ModifyVolume (as AWS does for minutes) to
check the wait's timeout stops the script and says what changed."""

from __future__ import annotations

import base64
import contextlib
import http.server
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from local_http import QuietHandler
from aws_script_run import REGION, ec2_client, make_instance, run_script
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch, PatchTarget
from headroom.domain.tikvconf.render import artefact
from headroom.domain.tikvconf.shell import HOST_GROW_SCRIPT
from test_filesystem_grow_host_step import block_count, ext4_image, stand_ins

NODE = "10.0.1.5:20160"


def _volume(ec2: Any) -> tuple[str, str]:
    instance = make_instance(ec2, "m5.2xlarge")
    az = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]["Placement"][
        "AvailabilityZone"]
    volume = ec2.create_volume(AvailabilityZone=az, Size=500, VolumeType="gp3", Iops=3000, Throughput=125)["VolumeId"]
    ec2.attach_volume(VolumeId=volume, InstanceId=instance, Device="/dev/sdf")
    return volume, instance


def _patch(volume: str, instance: str, cluster: str = "prod-east") -> Patch:
    node = PatchTarget(status_address="10.0.1.5:20180", address=NODE, instance_id=instance, data_mount="/data1",
                       data_fstype="ext4")
    entity = EntityRef(kind="volume", id=volume, volume_id=volume, instance_id=instance)
    change = Change(target="aws", key="volume.size", current=500, proposed=800, entity=entity, reason="low space")
    return Patch(cluster=cluster, region=REGION, nodes=(node,), changes=(change,))


def _fake_tiup(bin_dir: Path) -> Path:
    """`tiup cluster exec <cluster> -N <node> --sudo --command <command>`: checks the form, runs the command."""
    bin_dir.mkdir(exist_ok=True)
    log = bin_dir / "tiup.log"
    path = bin_dir / "tiup"
    path.write_text(f"""#!/usr/bin/env bash
printf '%s\\n' "$*" >> {log}
[[ "$1 $2" == "cluster exec" && "$4" == -N && "$6" == --sudo && "$7" == --command && $# -eq 8 ]] \\
  || {{ echo "tiup stand-in: unexpected $*" >&2; exit 2; }}
bash -c "$8"
""")
    path.chmod(0o755)
    return log


def test_the_script_waits_for_the_size_then_grows_the_filesystem_through_tiup(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    volume, instance = _volume(ec2)
    image = ext4_image(tmp_path / "nvme1n1", 64)
    before = block_count(image)
    subprocess_truncate(image, 128)
    stand_ins(tmp_path / "bin", disk=str(image), serial=volume.replace("-", ""),
              mounted={str(image): "/data1 ext4"}, children={})
    log = _fake_tiup(tmp_path / "bin")
    script = artefact(_patch(volume, instance), "aws").body
    assert "TIUP_CLUSTER=prod-east" in script
    run = run_script(script, aws_endpoint_url, tmp_path, "resize.sh", "--yes")
    assert run.returncode == 0, run.stdout + run.stderr
    assert ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["Size"] == 800
    # the order: the modification, the wait, then the host step
    out = run.stdout
    assert out.index(f"{volume}: modification completed, the new size can be used") < out.index(
        f"{volume}: filesystem grown on {NODE}")
    assert log.read_text().startswith(f"cluster exec prod-east -N {NODE} --sudo --command echo ")
    assert block_count(image) == 2 * before
    assert f"GROWN: {image} (ext4) at /data1" in out


def subprocess_truncate(path: Path, mib: int) -> None:
    import subprocess

    subprocess.run(["truncate", "-s", f"{mib}M", str(path)], check=True)


def test_without_tiup_the_script_prints_the_host_step(aws_endpoint_url: str, tmp_path: Path) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    volume, instance = _volume(ec2)
    script = artefact(_patch(volume, instance), "aws").body
    run = run_script(script, aws_endpoint_url, tmp_path, "resize.sh", "--yes", "--tiup-cluster", "")
    assert run.returncode == 0, run.stdout + run.stderr
    assert ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["Size"] == 800
    line = next(line for line in run.stdout.splitlines() if line.startswith(f"  {volume} on {NODE}: "))
    found = re.fullmatch(rf"  {volume} on {NODE}: echo (\S+) \| base64 -d \| sudo bash -s -- {volume} ext4 /data1",
                         line)
    assert found, line
    assert base64.b64decode(found.group(1)).decode() == HOST_GROW_SCRIPT  # the same host step, carried intact


def test_a_tiup_host_step_that_refuses_stops_the_script_and_reports_the_change(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    volume, instance = _volume(ec2)
    image = ext4_image(tmp_path / "nvme1n1", 64)
    stand_ins(tmp_path / "bin", disk=str(image), serial=volume.replace("-", ""),
              mounted={str(image): "/data1 xfs"}, children={})  # the host says xfs, node_exporter said ext4
    _fake_tiup(tmp_path / "bin")
    run = run_script(artefact(_patch(volume, instance), "aws").body, aws_endpoint_url, tmp_path, "resize.sh", "--yes")
    assert run.returncode == 1
    assert "is xfs here but node_exporter reported ext4" in run.stderr
    assert f"STOPPED: {volume}: the filesystem on {NODE} was not grown" in run.stderr
    assert "Changed before stopping:" in run.stderr and f"{volume}: 500 GiB -> 800 GiB" in run.stderr


class _ModifyingProxy(QuietHandler):
    """EC2's query API in front of moto: once a volume was modified through it, DescribeVolumesModifications answers
    `modifying` for it (AWS's XML), as AWS does until the modification reaches optimizing."""

    moto = ""
    modified: ClassVar[set[str]] = set()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        form = urllib.parse.parse_qs(body.decode())
        action = form.get("Action", [""])[0]
        asked = [v[0] for k, v in form.items() if k.startswith("VolumeId.")]
        if action == "DescribeVolumesModifications" and asked and set(asked) <= self.modified:
            items = "".join(f"<item><volumeId>{v}</volumeId><modificationState>modifying</modificationState>"
                            "<targetSize>800</targetSize><originalSize>500</originalSize><progress>0</progress>"
                            "<startTime>2026-11-29T01:00:00.000Z</startTime></item>" for v in asked)
            self.answer(200, ('<?xml version="1.0" encoding="UTF-8"?>\n<DescribeVolumesModificationsResponse '
                               'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>1d2e-modifying</requestId>'
                               f"<volumeModificationSet>{items}</volumeModificationSet>"
                               "</DescribeVolumesModificationsResponse>").encode(), "text/xml;charset=UTF-8")
            return
        if action == "ModifyVolume":
            self.modified.add(form.get("VolumeId", [""])[0])
        self.forward(self.moto, body)


@contextlib.contextmanager
def _proxy(moto: str) -> Iterator[str]:
    handler = type("Proxy", (_ModifyingProxy,), {"moto": moto.rstrip("/"), "modified": set()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_modification_that_stays_modifying_stops_the_wait_at_its_timeout(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2 = ec2_client(aws_endpoint_url)
    volume, instance = _volume(ec2)
    log = _fake_tiup(tmp_path / "bin")
    script = artefact(_patch(volume, instance), "aws").body
    with _proxy(aws_endpoint_url) as proxy:
        run = run_script(script, proxy, tmp_path, "resize.sh", "--yes",
                         env={"MODIFY_TIMEOUT": "3", "POLL_SECONDS": "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{volume}: the modification is still modifying after 3s" in run.stderr
    assert f"{volume}: 500 GiB -> 800 GiB" in run.stderr.split("Changed before stopping:")[1]
    assert not log.exists()  # the host step did not run before the new size could be used
    assert ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["Size"] == 800
    # Run again once the modification has moved on (moto: completed): the volume is skipped, the filesystem step runs.
    again = run_script(script, aws_endpoint_url, tmp_path, "resize-again.sh", "--yes", "--tiup-cluster", "")
    assert again.returncode == 0, again.stderr
    assert f"{volume} already has Size=800: skipped" in again.stdout
    assert f"{volume}: modification completed, the new size can be used" in again.stdout
    assert f"  {volume} on {NODE}: echo " in again.stdout


def test_a_volume_that_already_has_its_size_still_gets_the_filesystem_step(aws_endpoint_url: str, tmp_path: Path
                                                                          ) -> None:
    # grown by hand (or by an earlier run) without a record moto keeps: no modification to wait for
    ec2 = ec2_client(aws_endpoint_url)
    instance = make_instance(ec2, "m5.2xlarge")
    az = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]["Placement"][
        "AvailabilityZone"]
    volume = ec2.create_volume(AvailabilityZone=az, Size=800, VolumeType="gp3")["VolumeId"]
    ec2.attach_volume(VolumeId=volume, InstanceId=instance, Device="/dev/sdf")
    run = run_script(artefact(_patch(volume, instance), "aws").body, aws_endpoint_url, tmp_path, "resize.sh",
                     "--yes", "--tiup-cluster", "")
    assert run.returncode == 0, run.stderr
    assert f"{volume} already has Size=800: skipped" in run.stdout
    assert f"{volume}: no modification on record" in run.stdout
    assert "ModifyVolume" not in run.stdout + run.stderr and "modify-volume" not in run.stdout
    assert f"  {volume} on {NODE}: echo " in run.stdout

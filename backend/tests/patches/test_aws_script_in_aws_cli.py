"""The AWS script a patch exports, run as written by the real AWS CLI against the moto server.

The advisor's own findings on example scenarios give the changes (throughputs come out of it as floats, e.g. 250.0:
the AWS CLI refuses `--throughput 250.0` with "invalid literal for int() with base 10", and under
`set -euo pipefail` the script stopped at its first volume). The scenario's volumes are created in moto with their
current type, size, IOPS and throughput; the script is run with `bash`, the AWS CLI from the package registries
(`scripts/bootstrap.sh --test` installs it in .tools/awscli) pointed at moto by AWS_ENDPOINT_URL; then moto must hold
what the finding proposed, and the rollback script must give back what was there.
"""

from __future__ import annotations

import datetime as dt
import http.server
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, ClassVar

import boto3
import pytest
from headroom.domain.advisor import advise
from headroom.domain.model import Change
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate
from headroom.domain.tikvconf.change import Patch
from headroom.domain.tikvconf.render import artefact

ROOT = Path(__file__).resolve().parents[3]
REGION = "eu-north-1"  # a region no other test of the moto server uses
ATTRIBUTES = {"volume.type": "VolumeType", "volume.iops": "Iops", "volume.throughput": "Throughput",
              "volume.size": "Size"}


def _aws_cli() -> str:
    found = os.environ.get("HEADROOM_TEST_AWS_CLI") or str(ROOT / ".tools" / "awscli" / "bin" / "aws")
    if not Path(found).exists() and not shutil.which("aws"):
        pytest.fail("the AWS CLI is not installed: run scripts/bootstrap.sh --test", pytrace=False)
    return found if Path(found).exists() else str(shutil.which("aws"))


def _ec2(endpoint: str) -> Any:
    return boto3.client("ec2", region_name=REGION, endpoint_url=endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def _option_changes(scenario: str, rule: str) -> tuple[list[Change], dict[str, Any]]:
    """The AWS volume changes of the finding's first option, and the scenario's volumes by id."""
    snapshot = simulate(load_scenario(ROOT / "examples" / "scenarios" / f"{scenario}.yaml"), hours=24,
                        start=dt.datetime(2026, 11, 1, tzinfo=dt.UTC), seed=1)
    finding = next(f for f in advise(snapshot) if f.rule == rule)
    changes = [c for c in finding.options[0].changes if c.target == "aws" and c.key in ATTRIBUTES]
    assert changes, f"{rule} on {scenario} proposes no volume change"
    return changes, {v.id: v for v in snapshot.volumes}


def _run(script: str, endpoint: str, tmp_path: Path, name: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / name
    path.write_text(script)
    cli = Path(_aws_cli())
    env = {**os.environ, "PATH": f"{cli.parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "AWS_ENDPOINT_URL": endpoint, "AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_PAGER": ""}
    return subprocess.run(["bash", str(path)], env=env, capture_output=True, text=True, timeout=180, check=False)


def _state(ec2: Any, volume_id: str) -> dict[str, Any]:
    volume = ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
    return {key: volume.get(attr) for key, attr in ATTRIBUTES.items()}


@pytest.mark.parametrize(
    ("scenario", "rule"),
    [
        # gp2 500 GiB out of burst -> gp3 3,000 IOPS, 250.0 MiB/s (the float the CLI refused)
        ("gp2-burst-depletion", "gp2-burst-depletion"),
        # gp3 at its throughput ceiling: 250.0 -> 400.0 MiB/s
        ("compaction-io-titan", "volume-throughput-ceiling"),
        # gp3 at its IOPS ceiling: 3,000 -> 4,000 IOPS and 125.0 -> 175.0 MiB/s in one call
        ("block-cache-read-heavy-at-ceiling", "volume-iops-ceiling"),
    ],
)
def test_the_real_aws_cli_applies_the_script_and_its_rollback(
    scenario: str, rule: str, aws_endpoint_url: str, tmp_path: Path
) -> None:
    changes, volumes = _option_changes(scenario, rule)
    ec2 = _ec2(aws_endpoint_url)
    az = ec2.describe_availability_zones()["AvailabilityZones"][0]["ZoneName"]
    made: dict[str, str] = {}  # scenario volume id -> moto volume id
    for vid in {c.entity.volume() for c in changes if c.entity is not None}:
        assert vid is not None
        v = volumes[vid]
        spec: dict[str, Any] = {"AvailabilityZone": az, "Size": int(v.size_gib), "VolumeType": v.type}
        if v.type in ("gp3", "io1", "io2") and v.iops:
            spec["Iops"] = int(v.iops)
        if v.type == "gp3" and v.throughput_mibps:
            spec["Throughput"] = int(v.throughput_mibps)
        made[vid] = ec2.create_volume(**spec)["VolumeId"]
    before = {m: _state(ec2, m) for m in made.values()}
    moved = [
        c.model_copy(update={"entity": c.entity.model_copy(update={"id": made[vid], "volume_id": made[vid]})})
        for c in changes
        if c.entity is not None and (vid := c.entity.volume()) is not None
    ]
    patch = Patch(cluster=scenario, changes=tuple(moved))

    forward = _run(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "modify.sh")
    assert forward.returncode == 0, forward.stderr
    for c in moved:
        assert c.entity is not None and c.entity.volume_id is not None
        got = _state(ec2, c.entity.volume_id)[c.key]
        assert got == c.proposed, f"{c.key}: moto has {got!r}, the finding proposed {c.proposed!r}"

    back = _run(artefact(patch, "aws", rollback=True).body, aws_endpoint_url, tmp_path, "rollback.sh")
    assert back.returncode == 0, back.stderr
    for moto_id, state in before.items():
        after = _state(ec2, moto_id)
        for key in {c.key for c in moved if c.entity is not None and c.entity.volume_id == moto_id}:
            if key == "volume.size":  # EBS volumes cannot shrink: the rollback says so and keeps the size
                continue
            if state[key] is None:  # gp2 had no provisioned throughput: back on gp2 the value does not apply
                continue
            assert after[key] == state[key], f"{key}: {after[key]!r} after the rollback, {state[key]!r} before"


class _BusyVolumeProxy(http.server.BaseHTTPRequestHandler):
    """EC2's query API in front of moto, answering DescribeVolumesModifications for `busy` volumes as AWS does for
    a modification still in progress (its documented XML: ModificationState optimizing, Progress); every other call
    goes to moto unchanged. Moto completes a modification at once, so it never shows this state itself."""

    moto = ""
    busy: ClassVar[set[str]] = set()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        form = urllib.parse.parse_qs(body.decode())
        asked = [v[0] for k, v in form.items() if k.startswith("VolumeId.")]
        if form.get("Action") == ["DescribeVolumesModifications"] and asked and set(asked) <= self.busy:
            items = "".join(
                f"<item><volumeId>{vid}</volumeId><modificationState>optimizing</modificationState>"
                "<targetVolumeType>gp3</targetVolumeType><originalVolumeType>gp2</originalVolumeType>"
                "<progress>40</progress><startTime>2026-11-24T01:00:00.000Z</startTime></item>"
                for vid in asked
            )
            answer = (
                '<?xml version="1.0" encoding="UTF-8"?>\n<DescribeVolumesModificationsResponse '
                'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>7f1c2a9e-busy</requestId>'
                f"<volumeModificationSet>{items}</volumeModificationSet></DescribeVolumesModificationsResponse>"
            ).encode()
            self._answer(200, answer, "text/xml;charset=UTF-8")
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(self.moto + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - the local moto server
                self._answer(reply.status, reply.read(), reply.headers.get("Content-Type", "text/xml"))
        except urllib.error.HTTPError as error:
            self._answer(error.code, error.read(), error.headers.get("Content-Type", "text/xml"))

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return


def test_a_volume_still_optimizing_stops_the_script_before_any_volume_changes(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    # gp3 at its throughput ceiling; the same fix for two stores' volumes in one patch (two findings' worth):
    # two modify-volume calls, each volume checked before either changes.
    changes, volumes = _option_changes("compaction-io-titan", "volume-throughput-ceiling")
    ec2 = _ec2(aws_endpoint_url)
    az = ec2.describe_availability_zones()["AvailabilityZones"][0]["ZoneName"]
    moved: list[Change] = []
    made: list[str] = []
    for _store in range(2):
        for c in changes:
            assert c.entity is not None and (vid := c.entity.volume()) is not None
            v = volumes[vid]
            if len(made) == _store:
                made.append(ec2.create_volume(AvailabilityZone=az, Size=int(v.size_gib), VolumeType="gp3",
                                              Iops=int(v.iops), Throughput=int(v.throughput_mibps))["VolumeId"])
            moto_id = made[_store]
            moved.append(c.model_copy(update={"entity": c.entity.model_copy(update={"id": moto_id,
                                                                                  "volume_id": moto_id})}))
    before = {m: _state(ec2, m) for m in made}
    busy = made[-1]  # the last volume the preflight checks: the others were already looked at

    handler = type("Proxy", (_BusyVolumeProxy,), {"moto": aws_endpoint_url.rstrip("/"), "busy": {busy}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proxy = f"http://127.0.0.1:{server.server_address[1]}"
        script = artefact(Patch(cluster="compaction-io-titan", changes=tuple(moved)), "aws").body
        assert script.index(busy) < script.index("aws ec2 modify-volume")  # checked before any change
        run = _run(script, proxy, tmp_path, "modify.sh")
    finally:
        server.shutdown()
        server.server_close()
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{busy}: its last modification is still optimizing" in run.stderr
    assert "ModifyVolume" not in run.stdout + run.stderr
    for moto_id, state in before.items():  # all or none: not one volume changed
        assert _state(ec2, moto_id) == state, moto_id

    # Once the modification has completed (moto, without the proxy), the same script goes through.
    done = _run(script, aws_endpoint_url, tmp_path, "modify-again.sh")
    assert done.returncode == 0, done.stderr
    for c in moved:
        assert c.entity is not None and c.entity.volume_id is not None
        assert _state(ec2, c.entity.volume_id)[c.key] == c.proposed

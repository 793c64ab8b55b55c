"""The AWS script a patch exports, run as written by the real AWS CLI against the moto server.

The advisor's own findings on example scenarios give the changes (throughputs come out of it as floats, e.g. 250.0:
the AWS CLI refuses `--throughput 250.0` with "invalid literal for int() with base 10", and under
`set -euo pipefail` the script stopped at its first volume). The scenario's volumes are created in moto with their
current type, size, IOPS and throughput; the script is run with `bash`, the AWS CLI from the package registries
(`scripts/bootstrap.sh --test` installs it in .tools/awscli) pointed at moto by AWS_ENDPOINT_URL; then moto must hold
what the finding proposed, and the rollback script must give back what was there. The volumes are attached to an
instance (in-use), as a TiKV's are.

The preflight fails closed (docs/reference/rolling-restart.md#volume-modifications-all-or-none): a wrong or missing
region, a missing volume, a volume attached elsewhere, a modification still running and AccessDenied from an IAM
policy (a moto server of the test's own that enforces IAM) each stop the script with nothing changed; a modify
refused half way prints what changed and the command that undoes it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import boto3
import pytest
from local_http import QuietHandler
from aws_script_run import REGION, ROOT, ec2_client, make_instance, run_script
from headroom.domain.advisor import advise
from headroom.domain.model import Change
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate
from headroom.domain.tikvconf.change import Patch
from headroom.domain.tikvconf.render import artefact

ATTRIBUTES = {"volume.type": "VolumeType", "volume.iops": "Iops", "volume.throughput": "Throughput",
              "volume.size": "Size"}


def _ec2(endpoint: str) -> Any:
    return ec2_client(endpoint)


def _option_changes(scenario: str, rule: str) -> tuple[list[Change], dict[str, Any]]:
    """The AWS volume changes of the finding's first option, and the scenario's volumes by id."""
    snapshot = simulate(load_scenario(ROOT / "examples" / "scenarios" / f"{scenario}.yaml"), hours=24,
                        start=dt.datetime(2026, 11, 1, tzinfo=dt.UTC), seed=1)
    finding = next(f for f in advise(snapshot) if f.rule == rule)
    changes = [c for c in finding.options[0].changes if c.target == "aws" and c.key in ATTRIBUTES]
    assert changes, f"{rule} on {scenario} proposes no volume change"
    return changes, {v.id: v for v in snapshot.volumes}


def _run(script: str, endpoint: str, tmp_path: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_script(script, endpoint, tmp_path, name, "--yes", *args)


def _attached_volumes(ec2: Any, specs: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """Create the volumes in moto, attached to one new instance (in-use, as a TiKV's volumes are)."""
    instance = make_instance(ec2, "m5.2xlarge")
    az = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]["Placement"][
        "AvailabilityZone"]
    made = []
    for n, spec in enumerate(specs):
        volume = ec2.create_volume(AvailabilityZone=az, **spec)["VolumeId"]
        ec2.attach_volume(VolumeId=volume, InstanceId=instance, Device=f"/dev/sd{'fghijklmnop'[n]}")
        made.append(volume)
    return instance, made


def _moved(c: Change, volume: str, instance: str) -> Change:
    assert c.entity is not None
    return c.model_copy(update={"entity": c.entity.model_copy(update={"id": volume, "volume_id": volume,
                                                                        "instance_id": instance})})


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
    ids = sorted({vid for c in changes if c.entity is not None and (vid := c.entity.volume()) is not None})
    specs: list[dict[str, Any]] = []
    for vid in ids:
        v = volumes[vid]
        spec: dict[str, Any] = {"Size": int(v.size_gib), "VolumeType": v.type}
        if v.type in ("gp3", "io1", "io2") and v.iops:
            spec["Iops"] = int(v.iops)
        if v.type == "gp3" and v.throughput_mibps:
            spec["Throughput"] = int(v.throughput_mibps)
        specs.append(spec)
    instance, created = _attached_volumes(ec2, specs)
    made = dict(zip(ids, created, strict=True))  # scenario volume id -> moto volume id
    before = {m: _state(ec2, m) for m in made.values()}
    moved = [_moved(c, made[vid], instance) for c in changes
             if c.entity is not None and (vid := c.entity.volume()) is not None]
    patch = Patch(cluster=scenario, changes=tuple(moved), region=REGION)

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


class _BusyVolumeProxy(QuietHandler):
    """EC2's query API in front of moto, answering DescribeVolumesModifications for `busy` volumes as AWS does for
    a modification still in progress (its documented XML: ModificationState optimizing, Progress); every other call
    goes to moto unchanged. Moto completes a modification at once, so it never shows this state itself."""

    moto = ""
    busy: ClassVar[set[str]] = set()
    never_modified: ClassVar[set[str]] = set()  # answered as AWS does: InvalidVolumeModification.NotFound
    refuse_modify: ClassVar[set[str]] = set()  # ModifyVolume fails (a modification AWS does not accept now)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        form = urllib.parse.parse_qs(body.decode())
        asked = [v[0] for k, v in form.items() if k.startswith("VolumeId.")]
        action = form.get("Action", [""])[0]
        if action == "DescribeVolumesModifications" and asked and set(asked) <= self.never_modified:
            self._error("InvalidVolumeModification.NotFound",
                        f"Modification for volume '{asked[0]}' does not exist.")
            return
        if action == "ModifyVolume" and form.get("VolumeId", [""])[0] in self.refuse_modify:
            self._error("IncorrectModificationState", "The volume cannot be modified in its current state.")
            return
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
            self.answer(200, answer, "text/xml;charset=UTF-8")
            return
        self.forward(self.moto, body)

    def _error(self, code: str, message: str) -> None:
        answer = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{code}</Code><Message>'
                  f"{message}</Message></Error></Errors><RequestID>5e1c9f2a-err</RequestID></Response>").encode()
        self.answer(400, answer, "text/xml;charset=UTF-8")


def _two_stores(ec2: Any, changes: list[Change], volumes: dict[str, Any]) -> tuple[list[Change], list[str], str]:
    """The same volume fix for two stores' volumes in one patch: two modify-volume calls."""
    (vid,) = {c.entity.volume() for c in changes if c.entity is not None}
    assert vid is not None
    v = volumes[vid]
    spec = {"Size": int(v.size_gib), "VolumeType": "gp3", "Iops": int(v.iops), "Throughput": int(v.throughput_mibps)}
    instance, made = _attached_volumes(ec2, [spec, spec])
    return [_moved(c, moto_id, instance) for moto_id in made for c in changes], made, instance


@contextlib.contextmanager
def _proxy(moto: str, **sets: set[str]) -> Iterator[str]:
    handler = type("Proxy", (_BusyVolumeProxy,), {"moto": moto.rstrip("/"), **sets})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_volume_still_optimizing_stops_the_script_before_any_volume_changes(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    # gp3 at its throughput ceiling; the same fix for two stores' volumes in one patch (two findings' worth):
    # two modify-volume calls, each volume checked before either changes.
    changes, volumes = _option_changes("compaction-io-titan", "volume-throughput-ceiling")
    ec2 = _ec2(aws_endpoint_url)
    moved, made, instance = _two_stores(ec2, changes, volumes)
    before = {m: _state(ec2, m) for m in made}
    busy = made[-1]  # the last volume the preflight checks: the others were already looked at

    script = artefact(Patch(cluster="compaction-io-titan", changes=tuple(moved), region=REGION), "aws").body
    assert script.index(f"check_volume {busy}") < script.index("aws_cli ec2 modify-volume")
    with _proxy(aws_endpoint_url, busy={busy}) as proxy:
        run = _run(script, proxy, tmp_path, "modify.sh")
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{busy}: its last modification is still optimizing" in run.stderr
    assert "ModifyVolume" not in run.stdout + run.stderr
    assert "Nothing was changed." in run.stderr
    for moto_id, state in before.items():  # all or none: not one volume changed
        assert _state(ec2, moto_id) == state, moto_id

    # Once the modification has completed (moto, without the proxy), the same script goes through.
    done = _run(script, aws_endpoint_url, tmp_path, "modify-again.sh")
    assert done.returncode == 0, done.stderr
    for c in moved:
        assert c.entity is not None and c.entity.volume_id is not None
        assert _state(ec2, c.entity.volume_id)[c.key] == c.proposed


def _titan_patch(ec2: Any, **update: Any) -> tuple[Patch, list[str], str, dict[str, Any]]:
    changes, volumes = _option_changes("compaction-io-titan", "volume-throughput-ceiling")
    moved, made, instance = _two_stores(ec2, changes, volumes)
    patch = Patch(cluster="compaction-io-titan", changes=tuple(moved), region=REGION).model_copy(update=update)
    return patch, made, instance, {m: _state(ec2, m) for m in made}


@pytest.mark.parametrize("case", ["wrong region", "no region", "missing volume", "attached elsewhere"])
def test_the_preflight_fails_closed_and_nothing_changes(case: str, aws_endpoint_url: str, tmp_path: Path) -> None:
    ec2 = _ec2(aws_endpoint_url)
    patch, made, instance, before = _titan_patch(ec2)
    expected = ""
    if case == "wrong region":
        patch = patch.model_copy(update={"region": "us-west-2"})  # the volumes are in eu-north-1
        expected = f"STOPPED: {made[0]}: cannot describe the volume in us-west-2"
    elif case == "no region":
        patch = patch.model_copy(update={"region": None})
        expected = "set at the top of this script: REGION (or --region)"
    elif case == "missing volume":
        gone = "vol-0123456789abcdef0"
        patch = patch.model_copy(update={"changes": (*patch.changes, _moved(patch.changes[0], gone, instance))})
        expected = f"STOPPED: {gone}: cannot describe the volume in {REGION}"
    else:
        other = make_instance(ec2, "m5.2xlarge")
        last = _moved(patch.changes[-1], made[-1], other)
        patch = patch.model_copy(update={"changes": (*patch.changes[:-1], last)})
        expected = f"STOPPED: {made[-1]}: attached to {instance}, not to {other}"
    run = _run(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "modify.sh")
    assert run.returncode == 1, run.stdout + run.stderr
    assert expected in run.stderr
    assert "Nothing was changed." in run.stderr
    if case == "missing volume":
        assert "InvalidVolume.NotFound" in run.stderr  # the CLI's own error, shown
    for moto_id, state in before.items():
        assert _state(ec2, moto_id) == state, moto_id


def test_a_volume_never_modified_is_told_apart_from_an_error(aws_endpoint_url: str, tmp_path: Path) -> None:
    # AWS answers InvalidVolumeModification.NotFound for a volume that was never modified (moto an empty list).
    ec2 = _ec2(aws_endpoint_url)
    patch, made, _, _ = _titan_patch(ec2)
    with _proxy(aws_endpoint_url, never_modified=set(made)) as proxy:
        run = _run(artefact(patch, "aws").body, proxy, tmp_path, "modify.sh")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"checked {made[0]}: in-use on" in run.stdout and "last modification: none" in run.stdout
    for c in patch.changes:
        assert c.entity is not None and c.entity.volume_id is not None
        assert _state(ec2, c.entity.volume_id)[c.key] == c.proposed


def test_a_script_that_stops_half_way_prints_what_it_changed_and_the_undo(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2 = _ec2(aws_endpoint_url)
    patch, made, _, before = _titan_patch(ec2)
    with _proxy(aws_endpoint_url, refuse_modify={made[1]}) as proxy:
        run = _run(artefact(patch, "aws").body, proxy, tmp_path, "modify.sh")
    assert run.returncode != 0
    assert "IncorrectModificationState" in run.stderr
    report = run.stderr[run.stderr.index("Changed before stopping:"):]
    assert made[0] in report and made[1] not in report
    assert _state(ec2, made[1]) == before[made[1]]
    assert _state(ec2, made[0]) != before[made[0]]
    (undo,) = [line.strip() for line in report.split("To undo, run in this order:")[1].splitlines() if line.strip()]
    assert undo.startswith(f"aws --region {REGION} ec2 modify-volume --volume-id {made[0]}")
    # Run again once AWS accepts it: the volume already changed is skipped, the other one changes.
    again = _run(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "modify-again.sh")
    assert again.returncode == 0, again.stderr
    assert f"{made[0]} already has" in again.stdout
    assert _state(ec2, made[1]) == _state(ec2, made[0])
    back = run_script(undo + "\n", aws_endpoint_url, tmp_path, "undo.sh")
    assert back.returncode == 0, back.stderr
    assert _state(ec2, made[0]) == before[made[0]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def iam_moto() -> Iterator[str]:
    """A moto server of this module's own that enforces IAM after its first three requests (moto docs, IAM:
    INITIAL_NO_AUTH_ACTION_COUNT): those create an admin user, its policy and its key; the rest is authorized."""
    server = ROOT / ".venv" / "bin" / "moto_server"
    port = _free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    process = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1)  # noqa: S310 - the local moto server
                break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_access_denied_on_the_modification_check_changes_nothing(
    iam_moto: str, tmp_path: Path
) -> None:
    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=iam_moto, aws_access_key_id="testing",
                       aws_secret_access_key="testing")
    everything = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.create_user(UserName="admin")
    iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(everything))
    admin = iam.create_access_key(UserName="admin")["AccessKey"]
    as_admin = {"aws_access_key_id": admin["AccessKeyId"], "aws_secret_access_key": admin["SecretAccessKey"]}
    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=iam_moto, **as_admin)
    # May describe and modify volumes, may not read their modifications: the old preflight read that error as
    # "never modified" and went on to modify.
    limited = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": [
        "ec2:DescribeVolumes", "ec2:DescribeInstances", "ec2:ModifyVolume"], "Resource": "*"}]}
    iam.create_user(UserName="operator")
    iam.put_user_policy(UserName="operator", PolicyName="volumes", PolicyDocument=json.dumps(limited))
    key = iam.create_access_key(UserName="operator")["AccessKey"]

    ec2 = ec2_client(iam_moto, key=admin["AccessKeyId"], secret=admin["SecretAccessKey"])
    patch, made, _, before = _titan_patch(ec2)
    run = run_script(artefact(patch, "aws").body, iam_moto, tmp_path, "modify.sh", "--yes",
                     env={"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]})
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"STOPPED: {made[0]}: cannot read its modifications in {REGION}" in run.stderr
    assert "not authorized" in run.stderr.lower() or "accessdenied" in run.stderr.lower()
    assert "Nothing was changed." in run.stderr
    for moto_id, state in before.items():
        assert _state(ec2, moto_id) == state, moto_id

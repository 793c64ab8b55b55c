"""The instance-type script restarts one TiKV at a time, as docs/reference/rolling-restart.md describes: run by bash
with the real AWS CLI against moto and a stand-in tiup answering as pd-ctl (aws_script_run.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from aws_script_run import (
    REGION,
    ec2_client,
    install_fake_tiup,
    instance_state,
    make_instance,
    pd_state,
    run_script,
)
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch, PatchTarget
from headroom.domain.tikvconf.render import artefact

PD_URL = "http://10.0.3.2:2379"
FAST = {"POLL_SECONDS": "0.1", "EVICT_TIMEOUT": "20", "UP_TIMEOUT": "3", "LEADERS_BACK_TIMEOUT": "20"}


def _cluster(endpoint: str, tmp_path: Path, kind: str = "m5.xlarge", **fake: Any) -> tuple[Any, list[str], Patch, Path]:
    """Two TiKV instances (stores 1 and 4) on m5.xlarge, a patch moving both to m5.2xlarge."""
    ec2 = ec2_client(endpoint)
    instances = [make_instance(ec2, kind) for _ in range(2)]
    nodes = tuple(
        PatchTarget(status_address=f"10.0.1.{10 + i}:20180", address=f"10.0.1.{10 + i}:20160", instance_id=inst,
                    store_id=store)
        for i, (inst, store) in enumerate(zip(instances, (1, 4), strict=True))
    )
    changes = tuple(
        Change(target="aws", key="instance.type", current=kind, proposed="m5.2xlarge", online=False,
               entity=EntityRef(kind="instance", id=inst, instance_id=inst, status_address=node.status_address),
               reason="the instance's EBS bandwidth binds")
        for inst, node in zip(instances, nodes, strict=True)
    )
    patch = Patch(cluster="demo", tikv_version="v7.5.1", nodes=nodes, changes=changes, region=REGION, pd_url=PD_URL)
    state = install_fake_tiup(tmp_path, pd_url=PD_URL, stores={
        1: (instances[0], "10.0.1.10:20160", 8), 4: (instances[1], "10.0.1.11:20160", 6)}, **fake)
    return ec2, instances, patch, state


def test_the_script_restarts_one_store_at_a_time_with_its_leaders_moved_away(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2, (first, second), patch, state = _cluster(aws_endpoint_url, tmp_path)
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", "--yes", env=FAST)
    assert run.returncode == 0, run.stdout + run.stderr
    assert instance_state(ec2, first) == ("running", "m5.2xlarge")
    assert instance_state(ec2, second) == ("running", "m5.2xlarge")
    pd = pd_state(state)
    assert pd["schedulers"] == []  # every evict-leader scheduler removed
    calls = [(entry["call"], entry["instances"]) for entry in pd["log"]]
    assert [call for call, _ in calls] == [
        "scheduler add evict-leader-scheduler 1", "scheduler remove evict-leader-scheduler-1",
        "scheduler add evict-leader-scheduler 4", "scheduler remove evict-leader-scheduler-4",
    ]
    # Store 1's leaders were moved away while both instances still ran the old type; store 4's only once the
    # first instance ran the new type again and its scheduler was gone.
    assert calls[0][1] == {"1": ["running", "m5.xlarge"], "4": ["running", "m5.xlarge"]}
    assert calls[1][1] == {"1": ["running", "m5.2xlarge"], "4": ["running", "m5.xlarge"]}
    assert calls[2][1] == {"1": ["running", "m5.2xlarge"], "4": ["running", "m5.xlarge"]}
    assert pd["stores"]["1"]["leaders"] >= 4  # leaders came back before the next node
    assert "store 1: no leaders left" in run.stdout
    assert run.stdout.index("store 1: Up") < run.stdout.index("store 4: moving its")

    # Run again: both instances already have the new type, nothing is stopped or evicted.
    again = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize-again.sh", "--yes", env=FAST)
    assert again.returncode == 0, again.stderr
    assert f"{first} is already m5.2xlarge: skipped" in again.stdout
    assert len(pd_state(state)["log"]) == 4


def test_a_store_that_never_comes_back_up_stops_the_script_and_leaves_the_next_instance_alone(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2, (first, second), patch, state = _cluster(aws_endpoint_url, tmp_path, never_up=(1,))
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", "--yes", env=FAST)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "STOPPED: store 1 is not Up 3s after" in run.stderr
    assert "PD: Down" in run.stderr
    assert instance_state(ec2, second) == ("running", "m5.xlarge")  # untouched
    assert [e["call"] for e in pd_state(state)["log"]] == ["scheduler add evict-leader-scheduler 1"]
    # It says what it changed and how to undo each, last first.
    report = run.stderr[run.stderr.index("Changed before stopping:"):]
    assert "evict-leader-scheduler added for store 1" in report
    assert f"{first} instance type m5.xlarge -> m5.2xlarge" in report
    assert f"tiup ctl:v7.5.1 pd -u {PD_URL} scheduler remove evict-leader-scheduler-1" in report
    undo = report[report.index("To undo"):]
    # the instance goes back through the rollback artefact, the same rolling way, after the scheduler is gone
    back = f"bash demo-rollback-aws-modify.sh --region {REGION} --pd {PD_URL}"
    assert back in undo
    assert undo.index(back) < undo.index("scheduler remove evict-leader-scheduler-1")
    assert f"{first} stopped" not in report  # it was started again


def test_without_yes_and_without_stdin_nothing_changes(aws_endpoint_url: str, tmp_path: Path) -> None:
    ec2, instances, patch, state = _cluster(aws_endpoint_url, tmp_path)
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", env=FAST,
                     stdin=subprocess.DEVNULL)
    assert run.returncode == 1
    assert "no answer on standard input" in run.stderr
    assert "Nothing was changed." in run.stderr
    assert all(instance_state(ec2, i) == ("running", "m5.xlarge") for i in instances)
    assert pd_state(state)["log"] == []


def test_an_answer_on_stdin_goes_one_node_at_a_time(aws_endpoint_url: str, tmp_path: Path) -> None:
    # "y" for the first node, "n" for the second: the first changes, the second does not.
    ec2, (first, second), patch, state = _cluster(aws_endpoint_url, tmp_path)
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", env=FAST,
                     input_text="y\nn\n")
    assert run.returncode == 1
    assert "STOPPED: not confirmed" in run.stderr
    assert instance_state(ec2, first) == ("running", "m5.2xlarge")
    assert instance_state(ec2, second) == ("running", "m5.xlarge")
    assert pd_state(state)["schedulers"] == []


def test_leaders_that_do_not_move_stop_the_script_before_the_instance_stops(
    aws_endpoint_url: str, tmp_path: Path
) -> None:
    ec2, instances, patch, state = _cluster(aws_endpoint_url, tmp_path, stuck_leaders=(1,))
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", "--yes",
                     env={**FAST, "EVICT_TIMEOUT": "2"})
    assert run.returncode == 1
    assert "STOPPED: store 1 still has 8 leaders after 2s" in run.stderr
    assert "Nothing was changed." in run.stderr  # the scheduler it added is removed again
    assert pd_state(state)["schedulers"] == []
    assert all(instance_state(ec2, i) == ("running", "m5.xlarge") for i in instances)


def test_missing_settings_and_a_wrong_store_stop_before_anything(aws_endpoint_url: str, tmp_path: Path) -> None:
    ec2, instances, patch, state = _cluster(aws_endpoint_url, tmp_path)
    unknown = patch.model_copy(update={"pd_url": None, "nodes": (patch.nodes[0].model_copy(update={"store_id": None}),
                                                                  patch.nodes[1])})
    run = run_script(artefact(unknown, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", "--yes", env=FAST)
    assert run.returncode == 1
    assert "PD_URL (or --pd)" in run.stderr and f"STORES_ON_{instances[0].replace('-', '_')}" in run.stderr
    # PD answers, but store 4 is not the TiKV on the first instance.
    wrong = artefact(patch, "aws").body.replace(f"STORES_ON_{instances[0].replace('-', '_')}=1",
                                                f"STORES_ON_{instances[0].replace('-', '_')}=4")
    run = run_script(wrong, aws_endpoint_url, tmp_path, "wrong.sh", "--yes", env=FAST)
    assert run.returncode == 1
    assert "store 4 is 10.0.1.11:20160 in PD, not on this instance (10.0.1.10:20160)" in run.stderr
    # A PD that does not answer (pd-ctl prints the error and exits 0) is an error, not a state.
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "nopd.sh", "--yes",
                     "--pd", "http://10.9.9.9:2379", env=FAST)
    assert run.returncode == 1
    assert "connection refused" in run.stderr
    assert pd_state(state)["log"] == []
    assert all(instance_state(ec2, i) == ("running", "m5.xlarge") for i in instances)


def test_an_instance_with_instance_store_volumes_is_not_stopped(aws_endpoint_url: str, tmp_path: Path) -> None:
    # AWS, Amazon EC2 instance store: its data is lost when the instance stops (m5d: 150 GB of NVMe).
    ec2, instances, patch, state = _cluster(aws_endpoint_url, tmp_path, kind="m5d.xlarge")
    run = run_script(artefact(patch, "aws").body, aws_endpoint_url, tmp_path, "resize.sh", "--yes", env=FAST)
    assert run.returncode == 1
    assert f"STOPPED: {instances[0]} (m5d.xlarge) has instance store volumes" in run.stderr
    assert "Nothing was changed." in run.stderr
    assert all(instance_state(ec2, i) == ("running", "m5d.xlarge") for i in instances)
    assert pd_state(state)["log"] == []

"""Run an exported AWS script as a user would: `bash` with the real AWS CLI (scripts/bootstrap.sh --test installs it
in .tools/awscli) pointed at a moto server, and, for restarts, a stand-in `tiup` first on PATH that answers
`tiup ctl:<version> pd -u <url> ...` as pd-ctl does (PD Control User Guide, https://docs.pingcap.com/tidb/stable/
pd-control: `store`, `store <id>`, `scheduler add evict-leader-scheduler <id>`, `scheduler remove
evict-leader-scheduler-<id>`; store JSON as PD's API builds it: store.id/address/state_name, status.leader_count)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest

ROOT = Path(__file__).resolve().parents[3]
REGION = "eu-north-1"  # a region no other test of the moto server uses


def aws_cli() -> str:
    found = os.environ.get("HEADROOM_TEST_AWS_CLI") or str(ROOT / ".tools" / "awscli" / "bin" / "aws")
    if not Path(found).exists() and not shutil.which("aws"):
        pytest.fail("the AWS CLI is not installed: run scripts/bootstrap.sh --test", pytrace=False)
    return found if Path(found).exists() else str(shutil.which("aws"))


def ec2_client(endpoint: str, region: str = REGION, key: str = "testing", secret: str = "testing") -> Any:
    return boto3.client("ec2", region_name=region, endpoint_url=endpoint, aws_access_key_id=key,
                        aws_secret_access_key=secret)


def run_script(script: str, endpoint: str, tmp_path: Path, name: str, *args: str,
               env: dict[str, str] | None = None, stdin: int | None = subprocess.DEVNULL,
               input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the script with bash; AWS_DEFAULT_REGION is left out so only the script's own --region counts."""
    path = tmp_path / name
    path.write_text(script)
    cli = Path(aws_cli())
    bin_dir = tmp_path / "bin"
    path_entries = [str(bin_dir)] if bin_dir.exists() else []
    base = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    full_env = {**base, "PATH": os.pathsep.join([*path_entries, str(cli.parent), os.environ.get("PATH", "")]),
                "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_PAGER": "", "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
                "FAKE_PD_STATE": str(tmp_path / "pd-state.json"), **(env or {})}
    return subprocess.run(["bash", str(path), *args], env=full_env, capture_output=True, text=True, timeout=300,
                          check=False, stdin=None if input_text is not None else stdin, input=input_text)


def make_instance(ec2: Any, instance_type: str) -> str:
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    instance_id: str = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType=instance_type)[
        "Instances"][0]["InstanceId"]
    return instance_id


def instance_state(ec2: Any, instance_id: str) -> tuple[str, str]:
    found = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
    return found["State"]["Name"], found["InstanceType"]


FAKE_TIUP = r'''#!{python}
"""A stand-in for `tiup ctl:<version> pd -u <url> <command>`: answers as pd-ctl, from a JSON state file.

A store's state follows its EC2 instance in moto (Disconnected while the instance is not running, as PD reports a
store whose heartbeats stopped); a store listed in never_up is Down once its instance runs another type. Leaders leave a
store while its evict-leader scheduler is there (half per look, then none) and come back once it is removed."""
import json, os, re, sys, urllib.parse, urllib.request

state_path = os.environ["FAKE_PD_STATE"]
with open(state_path) as handle:
    state = json.load(handle)
args = sys.argv[1:]
if len(args) < 4 or not args[0].startswith("ctl:") or args[1] != "pd" or args[2] != "-u":
    print("unexpected tiup call: " + " ".join(args), file=sys.stderr)
    sys.exit(2)
version, url, command = args[0][4:], args[3], args[4:]
seen = {{}}


def instance(store):
    # EC2's query API straight from moto (no SDK: this runs on every pd-ctl call)
    if store["instance"] not in seen:
        ids = sorted({{s["instance"] for s in state["stores"].values()}})
        form = {{"Action": "DescribeInstances", "Version": "2016-11-15"}}
        form.update({{f"InstanceId.{{n + 1}}": i for n, i in enumerate(ids)}})
        request = urllib.request.Request(os.environ["AWS_ENDPOINT_URL"], urllib.parse.urlencode(form).encode(), headers={{
            "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20261128/" + state["region"] + "/ec2/aws4_request, "
                             "SignedHeaders=host, Signature=0"}})
        text = urllib.request.urlopen(request, timeout=30).read().decode()
        for item in re.findall(r"<instanceId>(i-[0-9a-f]+)</instanceId>(.*?)</instanceType>", text, re.S):
            name = re.search(r"<instanceState>.*?<name>(\w+)</name>", item[1], re.S).group(1)
            seen[item[0]] = (name, item[1].rsplit("<instanceType>", 1)[1])
    return seen[store["instance"]]


def look(store_id):
    store = state["stores"][store_id]
    running, kind = instance(store)
    evicting = "evict-leader-scheduler-" + store_id in state["schedulers"]
    store.setdefault("type", kind)
    if running != "running":
        store["state"] = "Disconnected"
    elif kind != store["type"] and store_id in state.get("never_up", []):
        store["state"] = "Down"
    else:
        store["state"] = "Up"
    if evicting and store_id not in state.get("stuck_leaders", []):
        store["leaders"] //= 2
    elif not evicting and store["state"] == "Up" and store["leaders"] < store["initial"]:
        store["leaders"] = min(store["initial"], store["leaders"] + store["initial"] // 2 + 1)
    return {{"store": {{"id": int(store_id), "address": store["address"], "version": version.lstrip("v"),
                      "state_name": store["state"]}},
            "status": {{"capacity": "1TiB", "available": "600GiB", "leader_count": store["leaders"],
                       "leader_weight": 1, "region_count": store["initial"] * 3}}}}


def answer():
    if url != state["pd_url"]:
        return "Failed to get store: Get \"" + url + "/pd/api/v1/stores\": dial tcp: connect: connection refused"
    if command == ["store"]:
        stores = [look(i) for i in state["stores"]]
        return json.dumps({{"count": len(stores), "stores": stores}}, indent=2)
    if len(command) == 2 and command[0] == "store":
        if command[1] not in state["stores"]:
            return "Failed to get store: [404] \"[PD:core:ErrStoreNotFound]store " + command[1] + " not found\""
        return json.dumps(look(command[1]), indent=2)
    if command[:3] == ["scheduler", "add", "evict-leader-scheduler"] and len(command) == 4:
        state["schedulers"].append("evict-leader-scheduler-" + command[3])
        state["log"].append({{"call": " ".join(command), "instances": {{i: instance(s) for i, s in state["stores"].items()}}}})
        return "Success!"
    if command[:2] == ["scheduler", "remove"] and len(command) == 3:
        if command[2] not in state["schedulers"]:
            return "Failed to remove scheduler: [500] scheduler not found"
        state["schedulers"].remove(command[2])
        state["log"].append({{"call": " ".join(command), "instances": {{i: instance(s) for i, s in state["stores"].items()}}}})
        return "Success!"
    return "unknown pd-ctl command: " + " ".join(command)


text = answer()
with open(state_path, "w") as handle:
    json.dump(state, handle)
print(text)  # pd-ctl exits 0 on a failed request too
'''


def install_fake_tiup(tmp_path: Path, *, pd_url: str, stores: dict[int, tuple[str, str, int]],
                      never_up: tuple[int, ...] = (), stuck_leaders: tuple[int, ...] = ()) -> Path:
    """Put the stand-in tiup first on PATH; `stores`: store id -> (instance id, store address, leader count)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tiup = bin_dir / "tiup"
    tiup.write_text(FAKE_TIUP.format(python=sys.executable))
    tiup.chmod(0o755)
    state = tmp_path / "pd-state.json"
    state.write_text(json.dumps({
        "region": REGION, "pd_url": pd_url, "schedulers": [], "log": [],
        "never_up": [str(s) for s in never_up], "stuck_leaders": [str(s) for s in stuck_leaders],
        "stores": {str(i): {"instance": inst, "address": addr, "leaders": n, "initial": n, "state": "Up"}
                   for i, (inst, addr, n) in stores.items()},
    }))
    return state


def pd_state(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded

"""Rendering a patch: each artefact's form follows the cited tool (TiDB SET CONFIG, tikv-ctl, TiUP,
TiDB Operator, AWS CLI, Terraform); rollbacks invert them; every rendered TiKV key is a real key of the
template."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import shutil
import tomllib
from pathlib import Path

import hcl2
import pytest
import yaml
from headroom.domain.advisor.finding import complete_change
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch, PatchTarget, resolve_nodes, target_node
from headroom.domain.tikvconf.errors import PatchConflict, TikvConfError, UnknownFormat
from headroom.domain.tikvconf.keys import template_keys
from headroom.domain.tikvconf.parse import flatten
from headroom.domain.tikvconf.online import can_change_online
from headroom.domain.tikvconf.render import FORMATS, artefact, artefacts, ctl_value, sql_value

ROOT = Path(__file__).resolve().parents[4]
TIUP_FILE = (ROOT / "examples" / "configs" / "tiup-8vcpu-32gib.toml").read_text()
NODES = tuple(
    PatchTarget(
        status_address=f"10.0.1.{4 + i}:20180",
        address=f"10.0.1.{4 + i}:20160",
        name=f"tikv-{i}",
        instance_id=f"i-0a1b2c3d4e5f6000{i}",
    )
    for i in (1, 2, 3)
)
FINDING = "block-cache-undersized:tikv-1"  # the key a patch gives each change (its finding's dedup key)
TITLE = "tikv-1: the block cache of 8 GiB misses"  # the same finding in words, what the comments print


def change(
    key: str,
    proposed: object,
    current: object = None,
    node: str | None = None,
    target: str = "tikv",
    **entity: str,
) -> Change:
    return Change(
        target=target,  # type: ignore[arg-type]
        key=key,
        current=current,  # type: ignore[arg-type]
        proposed=proposed,  # type: ignore[arg-type]
        reason=f"because {key}",
        entity=_entity(node, **entity),
    )


def _entity(node: str | None, volume_id: str | None = None, instance_id: str | None = None) -> EntityRef | None:
    if node is not None:
        return EntityRef(kind="node", id=node, status_address=node)
    if volume_id is not None:
        return EntityRef(kind="volume", id=volume_id, volume_id=volume_id)
    if instance_id is not None:
        return EntityRef(kind="instance", id=instance_id, instance_id=instance_id)
    return None


def patch_of(*changes: Change) -> Patch:
    return Patch(cluster="prod-east", tikv_version="v7.5.1", nodes=NODES, changes=changes,
                 sources=(FINDING,) * len(changes), source_titles=(TITLE,) * len(changes))


def changes_of(findings: list[dict[str, object]], select: tuple[str, ...] = ()) -> list[Change]:
    """The findings' changes as the patch CLI reads them: validated Changes, the finding's entity by default."""
    return [
        complete_change(c, EntityRef.model_validate(f["entity"]))
        for f in findings
        if not select or f["rule"] in select or f["dedup_key"] in select
        for c in f["changes"]  # type: ignore[attr-defined]
    ]


MIXED = patch_of(
    change("storage.block-cache.capacity", "16GiB", "8GiB"),  # online
    change("raftstore.apply-pool-size", 4, 2, node="10.0.1.5:20180"),  # online, one node
    change("rocksdb.titan.enabled", True, False),  # offline
    change("rocksdb.defaultcf.block-size", "32KB", "64KB"),  # offline
    change("rocksdb.rate-limiter-auto-tuned", False, True),  # online (in code)
    change("rocksdb.defaultcf.compression-per-level", ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]),
)


@pytest.mark.parametrize(
    ("value", "sql", "ctl"),
    [
        # docs/reference/tikv-config.md#set-config: `storage.block-cache.capacity`='16GiB' (quoted),
        # `split.qps-threshold`=1000 (bare)
        ("16GiB", "'16GiB'", "16GiB"),
        (1000, "1000", "1000"),
        (True, "true", "true"),  # docs/reference/tikv-config.md#tikv-ctl tikv-ctl: -v true
        (False, "false", "false"),
        ("1h", "'1h'", "1h"),  # tikv-ctl: -v 1h
        ("8MB", "'8MB'", "8MB"),  # tikv-ctl: -v 8MB
        (0.5, "0.5", "0.5"),
        ("it's", "'it''s'", "'it'\"'\"'s'"),  # SQL doubles the quote; the shell needs quoting
    ],
)
def test_value_quoting(value: object, sql: str, ctl: str) -> None:
    assert sql_value(value) == sql
    assert ctl_value(value) == ctl


def test_sql_sets_online_keys_and_lists_the_rest_for_a_restart() -> None:
    body = artefact(MIXED, "sql").body
    statements = re.findall(r"^SET CONFIG .*;$", body, flags=re.MULTILINE)
    assert statements == [
        "SET CONFIG tikv `storage.block-cache.capacity` = '16GiB';",
        'SET CONFIG "10.0.1.5:20180" `raftstore.apply-pool-size` = 4;',  # per instance by status address
        "SET CONFIG tikv `rocksdb.rate-limiter-auto-tuned` = false;",
    ]
    restart = body[body.index("Needs a rolling restart") :]
    for key in (
        "rocksdb.titan.enabled",
        "rocksdb.defaultcf.block-size",
        "rocksdb.defaultcf.compression-per-level",
    ):
        assert f"--   {key} = " in restart
    assert "tiup cluster reload <tiup-cluster-name> -R tikv" in restart
    assert (
        "tiup cluster edit-config <tiup-cluster-name>" in body
    )  # docs/reference/tikv-config.md#set-config caveat: or reload overwrites SET CONFIG
    assert "SHOW WARNINGS;" in body  # batch changes are not atomic


def test_tikv_ctl_one_line_per_node_with_the_server_address() -> None:
    body = artefact(MIXED, "tikv-ctl").body
    lines = re.findall(r"^tikv-ctl .*$", body, flags=re.MULTILINE)
    assert (
        "tikv-ctl --host 10.0.1.5:20160 modify-tikv-config -n storage.block-cache.capacity -v 16GiB" in lines
    )
    assert (
        "tikv-ctl --host 10.0.1.7:20160 modify-tikv-config -n storage.block-cache.capacity -v 16GiB" in lines
    )
    assert "tikv-ctl --host 10.0.1.5:20160 modify-tikv-config -n raftstore.apply-pool-size -v 4" in lines
    assert not any("10.0.1.6" in line and "apply-pool-size" in line for line in lines)
    assert not any("block-size" in line or "titan.enabled" in line for line in lines)
    assert len(lines) == 3 + 1 + 3


def test_toml_fragment_is_valid_and_only_the_changes() -> None:
    body = artefact(MIXED, "toml").body
    parsed = flatten(tomllib.loads(body))
    assert parsed == {c.key: c.proposed for c in MIXED.changes}
    assert set(parsed) <= set(template_keys())
    assert f'# was "8GiB"; finding: {TITLE}' in body
    assert FINDING not in body  # the key is the machine's: a reader gets the finding in words
    assert "# because storage.block-cache.capacity" in body


def test_toml_fragment_refuses_values_that_differ_by_node() -> None:
    patch = patch_of(
        change("raftstore.apply-pool-size", 3, node=NODES[0].status_address),
        change("raftstore.apply-pool-size", 4, node=NODES[1].status_address),
    )
    with pytest.raises(PatchConflict):
        artefact(patch, "toml")
    one = flatten(tomllib.loads(artefact(patch, "toml", node=NODES[1].status_address).body))
    assert one == {"raftstore.apply-pool-size": 4}


def test_the_toml_comment_names_every_node_a_change_is_for_by_its_store_address() -> None:
    # Two of three nodes take the same value: the comment lists both (not just the first), as TiKV, PD and TiDB
    # Dashboard name a store (its server address, :20160), never the status port (:20180).
    first, second, third = NODES
    two = patch_of(*(change("storage.block-cache.capacity", "8GiB", "4GiB", node=n.status_address)
                     for n in (first, second)))
    body = artefact(two, "toml").body
    assert "; only on 10.0.1.5:20160, 10.0.1.6:20160\n" in body
    assert ":20180" not in body
    every = patch_of(*(change("storage.block-cache.capacity", "8GiB", "4GiB", node=n.status_address)
                       for n in NODES))
    assert "; on every node (10.0.1.5:20160, 10.0.1.6:20160, 10.0.1.7:20160)\n" in artefact(every, "toml").body
    one = artefact(patch_of(change("storage.block-cache.capacity", "8GiB", "4GiB", node=third.status_address)),
                   "toml").body
    assert "; only on 10.0.1.7:20160\n" in one
    assert "only on" not in artefact(patch_of(change("storage.block-cache.capacity", "8GiB", "4GiB")), "toml").body


def test_operator_names_nodes_by_store_address() -> None:
    differ = patch_of(change("raftstore.apply-pool-size", 3, node=NODES[0].status_address),
                      change("raftstore.apply-pool-size", 4, node=NODES[1].status_address))
    rendered = artefact(differ, "operator")
    assert "(10.0.1.5:20160: 3, 10.0.1.6:20160: 4)" in " ".join(rendered.notes)
    assert ":20180" not in rendered.body + " ".join(rendered.notes)


def test_merged_and_diff_and_their_rollbacks() -> None:
    patch = patch_of(
        change("storage.block-cache.capacity", "16GiB", "8GiB"), change("rocksdb.titan.enabled", True, False)
    )
    merged = artefact(patch, "merged", config_text=TIUP_FILE)
    assert flatten(tomllib.loads(merged.body))["storage.block-cache.capacity"] == "16GiB"
    assert artefact(patch, "merged", config_text=TIUP_FILE, rollback=True).body == TIUP_FILE
    diff = artefact(patch, "diff", config_text=TIUP_FILE).body
    assert diff.startswith("--- a/tikv.toml\n+++ b/tikv.toml\n")
    assert '-capacity = "8GiB"\n+capacity = "16GiB"\n' in diff
    assert "+[rocksdb.titan]\n+enabled = true\n" in diff
    back = artefact(patch, "diff", config_text=TIUP_FILE, rollback=True).body
    assert '-capacity = "16GiB"\n+capacity = "8GiB"\n' in back
    with pytest.raises(TikvConfError):
        artefact(patch, "merged")  # needs the current tikv.toml


def test_tiup_global_and_per_host() -> None:
    body = artefact(MIXED, "tiup").body
    document = yaml.safe_load(body)
    assert document["server_configs"]["tikv"]["storage.block-cache.capacity"] == "16GiB"
    assert document["tikv_servers"] == [
        {"host": "10.0.1.5", "port": 20160, "config": {"raftstore.apply-pool-size": 4}}
    ]
    assert "tiup cluster reload <tiup-cluster-name> -R tikv" in body
    every_node = patch_of(*(change("raftstore.apply-pool-size", 4, node=n.status_address) for n in NODES))
    promoted = yaml.safe_load(artefact(every_node, "tiup").body)
    assert promoted == {"server_configs": {"tikv": {"raftstore.apply-pool-size": 4}}}


def test_operator_takes_a_toml_string() -> None:
    body = artefact(MIXED, "operator").body
    document = yaml.safe_load(body)
    assert (document["apiVersion"], document["kind"]) == ("pingcap.com/v1alpha1", "TidbCluster")
    config = document["spec"]["tikv"]["config"]
    assert isinstance(config, str)
    assert flatten(tomllib.loads(config))["storage.block-cache.capacity"] == "16GiB"
    assert artefact(MIXED, "operator").notes  # per-node values apply to every pod: said so


def test_operator_whole_string_names_a_real_file_and_says_it_is_the_nodes_config() -> None:
    # With the node's config known the artefact is the whole string; its kubectl line must run as printed
    # (`--patch-file <this file>` was a shell redirection) and say what a merge patch with it replaces.
    body = artefact(patch_of(change("storage.block-cache.capacity", "16GiB", "8GiB")), "operator",
                    config_text=TIUP_FILE).body
    command = next(line for line in body.splitlines() if "kubectl" in line and "--patch-file" in line)
    words = shlex.split(command.lstrip("# "))
    assert words[words.index("--patch-file") + 1] == "prod-east-tidbcluster-tikv-config.yaml"  # its download name
    assert "<" not in command and ">" not in command
    assert "not your manifest's own string" in " ".join(body.split())
    # run by bash as printed (kubectl stood in by a function that echoes its words): the namespace must be set
    line = command.lstrip("# ")
    unset = subprocess.run(["bash", "-c", f"kubectl() {{ printf '%s|' \"$@\"; }}; {line}"], capture_output=True,
                           text=True, env={"PATH": os.environ.get("PATH", "")}, check=False)
    assert unset.returncode != 0 and "set NAMESPACE" in unset.stderr
    ran = subprocess.run(["bash", "-c", f"kubectl() {{ printf '%s|' \"$@\"; }}; {line}"], capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", ""), "NAMESPACE": "tidb"}, check=False)
    assert ran.stdout.split("|")[:-1] == ["-n", "tidb", "patch", "tc", "prod-east", "--type", "merge",
                                          "--patch-file", "prod-east-tidbcluster-tikv-config.yaml"], ran.stderr


VOLUME = "vol-0a1b2c3d4e5f60001"
INSTANCE = "i-0a1b2c3d4e5f60001"
AWS = patch_of(
    change("volume.type", "gp3", "gp2", target="aws", volume_id=VOLUME),
    change("volume.iops", 6000, 3000, target="aws", volume_id=VOLUME),
    change("volume.throughput", 500, 125, target="aws", volume_id=VOLUME),
    change("volume.size", 2048, 1024, target="aws", volume_id=VOLUME),
    change("instance.type", "m6i.4xlarge", "m6i.2xlarge", target="aws", instance_id=INSTANCE),
)


MODIFY = re.compile(r"^\s*aws_cli ec2 modify-volume (.*) --query \S+ --output text$", flags=re.MULTILINE)


def test_aws_batches_a_volume_into_one_call_and_restarts_through_the_rolling_procedure() -> None:
    body = artefact(AWS, "aws").body
    # docs/reference/ebs-volume-types.md#elastic-volumes-modifications: four modifications per rolling 24 hours -> one ModifyVolume per volume
    assert MODIFY.findall(body) == [f"--volume-id {VOLUME} --volume-type gp3 --iops 6000 --throughput 500 --size 2048"]
    assert "four modifications" in body
    # docs/reference/rolling-restart.md: stop / modify / start happen only inside restart_instance, after leader
    # eviction, one instance at a time
    assert re.findall(r"^\s*restart_instance (\S+ \S+ \S+)", body, flags=re.MULTILINE) == [
        f"{INSTANCE} m6i.2xlarge m6i.4xlarge"]
    assert re.findall(r"^aws(_cli)? ec2 (stop|start)-instances", body, flags=re.MULTILINE) == []
    function = body[body.index("restart_instance() {"):]
    steps = ["confirm ", "cluster_healthy", "scheduler add evict-leader-scheduler", "leaders_gone",
             "ec2 stop-instances", "modify-instance-attribute", "ec2 start-instances", "store_up",
             "scheduler remove", "leaders_back"]
    at = 0
    for step in steps:  # each step after the one before (ValueError if one is missing or out of order)
        at = function.index(step, at)
    stop = function.index("ec2 stop-instances")
    assert function.rindex("leaders_gone", 0, stop) < stop < function.index("store_up")
    assert '--instance-type "{\\"Value\\": \\"$to\\"}"' in function
    assert "set -euo pipefail" in body


def test_aws_rollback_restores_previous_values_but_never_shrinks() -> None:
    rollback = artefact(AWS, "aws", rollback=True)
    assert MODIFY.findall(rollback.body) == [f"--volume-id {VOLUME} --throughput 125 --iops 3000 --volume-type gp2"]
    assert f"restart_instance {INSTANCE} m6i.4xlarge m6i.2xlarge" in rollback.body
    assert any("cannot be made smaller" in note for note in rollback.notes)


@pytest.mark.parametrize("rollback", [False, True])
@pytest.mark.parametrize("region", ["eu-north-1", None])
def test_the_aws_script_is_valid_bash_and_passes_shellcheck(rollback: bool, region: str | None, tmp_path: Path) -> None:
    patch = AWS.model_copy(update={"region": region, "pd_url": "http://10.0.3.2:2379"})
    path = tmp_path / "aws-modify.sh"
    path.write_text(artefact(patch, "aws", rollback=rollback).body)
    syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    lint = subprocess.run(["shellcheck", "--severity=warning", str(path)], capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout


def test_terraform_snippet() -> None:
    body = artefact(AWS, "terraform").body
    assert 'resource "aws_ebs_volume" "vol_0a1b2c3d4e5f60001" {' in body
    assert "  iops       = 6000\n" in body
    assert 'instance_type = "m6i.4xlarge"' in body
    # The HCL parses (python-hcl2, the HCL2 grammar Terraform reads), forward and rollback, and
    # numbers are integers where the provider's arguments are (throughput 250.0 -> 250)
    floats = patch_of(change("volume.throughput", 250.0, 125.0, target="aws", volume_id=VOLUME))
    for rendered in (body, artefact(AWS, "terraform", rollback=True).body, artefact(floats, "terraform").body):
        parsed = hcl2.loads(rendered)
        resources = {kind.strip('"'): blocks for block in parsed["resource"] for kind, blocks in block.items()}
        assert set(resources) <= {"aws_ebs_volume", "aws_instance", "aws_volume_attachment"}
    volume = hcl2.loads(artefact(floats, "terraform").body)["resource"][0]['"aws_ebs_volume"']
    assert next(iter(volume.values()))["throughput"] == 250 and "= 250.0" not in artefact(floats, "terraform").body
    # the comments say each value in its unit (250 MiB/s, not 250.0); gp2's IOPS "not set", not a TiKV default
    gp2 = patch_of(change("volume.iops", 3000, None, target="aws", volume_id=VOLUME))
    for fmt in ("terraform", "aws"):
        assert "volume.throughput 125 MiB/s -> 250 MiB/s" in artefact(floats, fmt).body.replace(": ", " ")
        assert "the version's default" not in artefact(gp2, fmt).body
        assert "volume.iops not set -> 3,000 IOPS" in artefact(gp2, fmt).body.replace(": ", " ")
    terraform = shutil.which("terraform") or (
        "/usr/local/bin/terraform" if Path("/usr/local/bin/terraform").exists() else None
    )
    if terraform is not None:  # the registries serve no terraform binary; where one is installed, it checks too
        # `terraform fmt -` formats stdin without providers: unchanged output means the snippet is canonical HCL.
        formatted = subprocess.run(
            [terraform, "fmt", "-"], input=body, capture_output=True, text=True, timeout=60
        )
        assert formatted.returncode == 0, formatted.stderr
        assert formatted.stdout == body


def test_each_rollback_is_a_file_of_its_format_that_runs_in_its_tool(tmp_path: Path) -> None:
    """No bundle: every format's undo is that format's file. The diff's undo applies with GNU patch to the patched
    file and gives the original bytes; the SQL's undo is SET CONFIG statements only; the scripts are bash."""
    patch = patch_of(*MIXED.changes, *AWS.changes)
    for fmt in ("toml", "merged", "diff", "tiup", "operator", "sql", "tikv-ctl", "aws", "terraform"):
        undo = artefact(patch, fmt, config_text=TIUP_FILE, rollback=True)
        forward = artefact(patch, fmt, config_text=TIUP_FILE)
        # the same kind of file, named as the rollback of the forward one
        assert undo.media_type == forward.media_type, fmt
        assert undo.filename == forward.filename.replace("prod-east-", "prod-east-rollback-"), fmt
        assert "=====" not in undo.body, fmt
    (tmp_path / "tikv.toml").write_text(TIUP_FILE)
    for undo, expected in ((False, artefact(patch, "merged", config_text=TIUP_FILE).body), (True, TIUP_FILE)):
        (tmp_path / "step.diff").write_text(artefact(patch, "diff", config_text=TIUP_FILE, rollback=undo).body)
        ran = subprocess.run(["patch", "--batch", "--forward", "--fuzz=0", "-p1", "-i", "step.diff"], cwd=tmp_path,
                             capture_output=True, text=True, check=False)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert (tmp_path / "tikv.toml").read_text() == expected
    sql = artefact(patch, "sql", rollback=True).body
    statements = [line for line in sql.splitlines() if line.strip() and not line.startswith("--")]
    assert "SET CONFIG tikv `storage.block-cache.capacity` = '8GiB';" in statements
    assert all(re.fullmatch(r"(SET CONFIG \S+ `[a-z0-9.-]+` = .+|SHOW WARNINGS|SHOW CONFIG WHERE .+);", s)
               for s in statements), statements
    for fmt in ("tikv-ctl", "aws"):
        script = tmp_path / f"undo-{fmt}.sh"
        script.write_text(artefact(patch, fmt, rollback=True).body)
        syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
        assert syntax.returncode == 0, syntax.stderr


def test_the_old_rollback_format_names_the_rollback_parameter() -> None:
    with pytest.raises(UnknownFormat, match="rollback=true"):
        artefact(MIXED, "rollback")
    assert "rollback" not in FORMATS


def test_rollback_of_an_unset_key_says_remove_it() -> None:
    patch = patch_of(change("coprocessor.region-split-size", "256MiB"))  # current unknown
    body = artefact(patch, "toml", rollback=True).body
    assert "# remove coprocessor.region-split-size" in body
    assert flatten(tomllib.loads(body)) == {}


def test_every_format_has_a_name_and_media_type() -> None:
    rendered = artefacts(patch_of(*MIXED.changes, *AWS.changes), config_text=TIUP_FILE)
    assert set(FORMATS) <= set(rendered)
    expected = {
        "toml": ("prod-east-tikv-patch.toml", "application/toml"),
        "merged": ("prod-east-tikv.toml", "application/toml"),
        "diff": ("prod-east-tikv.toml.diff", "text/x-diff"),
        "tiup": ("prod-east-tiup-edit-config.yaml", "application/yaml"),
        "operator": ("prod-east-tidbcluster-tikv-config.yaml", "application/yaml"),
        "sql": ("prod-east-set-config.sql", "application/sql"),
        "tikv-ctl": ("prod-east-tikv-ctl.sh", "text/x-shellscript"),
        "aws": ("prod-east-aws-modify.sh", "text/x-shellscript"),
        "terraform": ("prod-east-headroom-patch.tf", "text/plain"),
    }
    assert {fmt: (rendered[fmt].filename, rendered[fmt].media_type) for fmt in FORMATS} == expected
    assert rendered["sql.rollback"].filename == "prod-east-rollback-set-config.sql"


# One file of each shape the patcher handles differently: a TiUP file, a real config with comment blocks above its
# tables and CRLF line ends, dotted keys (the one-change-at-a-time path) and an empty file (every table new). TiKV's
# 58 KB template would add 1.5 s of CPU (18 patchings) and no shape these lack.
ONE_PARSE_FILES = {
    "tiup": TIUP_FILE,
    "crlf": (ROOT / "backend/tests/domain/tikvconf/data/tikv-toml/pingcap-tidb-docker-compose-tikv-crlf.toml")
    .read_bytes().decode(),
    "dotted": (ROOT / "examples/configs/manual-dotted-keys.toml").read_text(),
    "empty": "",
}


@pytest.mark.parametrize(
    ("name", "node"),
    # one node's file on the small files only (the CRLF file: 0.5 s of CPU a case)
    [(name, None) for name in ONE_PARSE_FILES] + [(name, "10.0.1.5:20180") for name in ("tiup", "dotted", "empty")],
)
def test_artefacts_from_one_patching_are_those_rendered_one_by_one(name: str, node: str | None) -> None:
    # artefacts() patches the file once and renders every format and rollback from that one result; each must be
    # byte for byte what artefact() renders from a patching of its own, in either order (a renderer that changed
    # the shared result would show in the ones rendered after it).
    other_node = change("raftstore.store-pool-size", 3, 2, node="10.0.1.6:20180")  # not in 10.0.1.5's file
    patch = patch_of(*MIXED.changes, other_node, *AWS.changes)
    text = ONE_PARSE_FILES[name]
    one_by_one = {
        f"{fmt}.rollback" if rollback else fmt: artefact(patch, fmt, config_text=text, node=node, rollback=rollback)
        for fmt in FORMATS
        for rollback in (False, True)
    }
    assert artefacts(patch, config_text=text, node=node) == one_by_one
    backwards = artefacts(patch, config_text=text, node=node, formats=FORMATS[::-1], rollbacks=(True, False))
    assert backwards == one_by_one
    assert list(backwards)[:2] == ["terraform.rollback", "terraform"]


def test_unknown_format() -> None:
    with pytest.raises(UnknownFormat):
        artefact(MIXED, "ansible")


def test_example_findings_render() -> None:
    findings = json.loads((ROOT / "examples" / "findings" / "prod-east.json").read_text())["findings"]
    changes = resolve_nodes(changes_of(findings), NODES)
    # Finding entities name node ids (tikv-1): resolved to status addresses.
    assert {target_node(c) for c in changes if c.target == "tikv"} == {"10.0.1.5:20180"}
    selected = changes_of(findings, ("gp3-throughput-ceiling",))
    assert [c.key for c in selected] == ["volume.iops", "volume.throughput"]
    patch = Patch(cluster="prod-east", nodes=NODES, changes=changes)
    for fmt in FORMATS:
        assert artefact(patch, fmt, config_text=TIUP_FILE).body


def test_a_finding_calling_an_offline_key_online_is_overruled_and_noted() -> None:
    wrong = change("rocksdb.defaultcf.block-size", "32KB", "64KB").model_copy(update={"online": True})
    rendered = artefact(patch_of(wrong), "sql")
    assert "SET CONFIG" not in rendered.body.replace("SET CONFIG also", "")
    assert any("marks it online" in note for note in rendered.notes)


def test_sql_collapses_one_value_on_every_node_into_one_statement() -> None:
    every_node = patch_of(*(change("raftstore.apply-pool-size", 4, node=n.status_address) for n in NODES))
    statements = re.findall(r"^SET CONFIG .*;$", artefact(every_node, "sql").body, flags=re.MULTILINE)
    assert statements == ["SET CONFIG tikv `raftstore.apply-pool-size` = 4;"]
    two_nodes = patch_of(*(change("raftstore.apply-pool-size", 4, node=n.status_address) for n in NODES[:2]))
    statements = re.findall(r"^SET CONFIG .*;$", artefact(two_nodes, "sql").body, flags=re.MULTILINE)
    assert statements == [
        'SET CONFIG "10.0.1.5:20180" `raftstore.apply-pool-size` = 4;',
        'SET CONFIG "10.0.1.6:20180" `raftstore.apply-pool-size` = 4;',
    ]


def test_aws_checks_every_volume_before_changing_any_and_writes_integers() -> None:
    other = "vol-0a1b2c3d4e5f60002"
    patch = patch_of(
        change("volume.throughput", 250.0, 125.0, target="aws", volume_id=VOLUME),
        change("volume.iops", 3000.0, None, target="aws", volume_id=other),
        change("volume.throughput", 187.5, None, target="aws", volume_id=other),
    )
    body = artefact(patch, "aws").body
    lines = body.splitlines()
    checks = [i for i, line in enumerate(lines) if line.startswith("check_volume ")]
    first_modify = next(i for i, line in enumerate(lines) if line.strip().startswith("aws_cli ec2 modify-volume"))
    assert len(checks) == 2 and max(checks) < first_modify  # all volumes checked, then changed: all or none
    assert "modifying|optimizing" not in body and "*) die" in body  # any state but none/completed/failed stops
    assert "2>/dev/null || echo none" not in body  # an error is never read as "never modified"
    assert "InvalidVolumeModification.NotFound" in body
    # the AWS CLI takes integers: 250.0 -> 250; a fractional need is rounded up (187.5 -> 188 MiB/s)
    assert MODIFY.findall(body) == [f"--volume-id {VOLUME} --throughput 250",
                                    f"--volume-id {other} --iops 3000 --throughput 188"]
    assert "6 hours" in body  # the older one-modification-then-6-hours rule is stated


def test_display_names_never_reach_a_shell_line_or_a_kubernetes_name() -> None:
    # Regression: "tiup cluster edit-config demo-prod (demo)" breaks in a shell; "demo-prod (demo)" is not a
    # Kubernetes object name. A name TiUP / Kubernetes could have is used as it is, another becomes a placeholder
    # with a note saying where the real one is.
    shown = Patch(cluster="demo-prod (demo)", tikv_version="v7.5.1", nodes=NODES,
                  changes=(change("storage.block-cache.capacity", "14GiB", "8GiB"),), sources=(FINDING,))
    for fmt, placeholder in (("tiup", "<tiup-cluster-name>"), ("sql", "<tiup-cluster-name>"),
                             ("operator", "<tidbcluster-name>")):
        rendered = artefact(shown, fmt)
        assert "demo-prod (demo)" not in "".join(
            line for line in rendered.body.splitlines(True)
            if "edit-config" in line or "reload" in line or "kubectl -n" in line or line.startswith("  name:")
        )
        assert placeholder in rendered.body, fmt
    assert any("tiup cluster list" in n for n in artefact(shown, "tiup").notes)
    operator = yaml.safe_load(artefact(shown, "operator").body)
    assert operator["metadata"]["name"] == "<tidbcluster-name>"
    assert any("kubectl get tc" in n for n in artefact(shown, "operator").notes)
    # without the current config, the operator file is a fragment: it says not to apply it, and gives no patch
    body = artefact(shown, "operator").body
    assert "--type merge" not in body and "Do NOT apply" in body
    plain = patch_of(change("storage.block-cache.capacity", "14GiB", "8GiB"))
    named = plain.model_copy(update={"tiup_name": "prod-east"})
    assert "tiup cluster edit-config prod-east" in artefact(named, "tiup").body


@pytest.mark.parametrize("fmt", ["tiup", "sql", "tikv-ctl"])
def test_one_rule_names_the_tiup_cluster_whatever_headroom_calls_it(fmt: str) -> None:
    # The CLI's snapshot names the cluster "prod-east", the API's cluster is "demo-prod (demo)": neither is known to
    # be TiUP's name, so both artefacts hold the same placeholder and say what to put there; a TiUP name given
    # (headroom patch --tiup-cluster) is used as it is.
    changes = (change("storage.block-cache.capacity", "14GiB", "8GiB"), change("rocksdb.titan.enabled", True, False))
    commands = {}
    for name in ("prod-east", "demo-prod (demo)"):
        rendered = artefact(Patch(cluster=name, tikv_version="v7.5.1", nodes=NODES, changes=changes), fmt)
        commands[name] = [line.replace(name, "") for line in rendered.body.splitlines()
                          if re.search(r"tiup cluster (edit-config|reload) ", line)]
        assert commands[name] and all("<tiup-cluster-name>" in line for line in commands[name]), rendered.body
        assert "eplace <tiup-cluster-name> with this cluster's name in `tiup cluster list`" in rendered.body
    assert commands["prod-east"] == commands["demo-prod (demo)"]
    given = Patch(cluster="demo-prod (demo)", tiup_name="tidb-prod", nodes=NODES, changes=changes)
    assert "<tiup-cluster-name>" not in artefact(given, fmt).body
    assert "tiup cluster reload tidb-prod -R tikv" in artefact(given, fmt).body


def test_moving_raft_engine_dir_where_raft_engine_is_off_says_it_will_not_take_effect() -> None:
    # With [raft-engine] enable = false TiKV keeps the Raft log in RocksDB (raftstore.raftdb-path), so a
    # new raft-engine.dir moves nothing (TiKV configuration file: raft-engine.enable).
    moved = patch_of(change("raft-engine.dir", "/raft/raft-engine", None))
    off = "[raft-engine]\nenable = false\n"
    notes = artefact(moved, "merged", config_text=off).notes
    assert any("will not take effect" in n and "raftstore.raftdb-path" in n for n in notes)
    assert not any("will not take effect" in n for n in artefact(moved, "merged", config_text="[raft-engine]\n"
                                                                  "enable = true\n").notes)


# Read in TiKV's source at each minor tag (online.ONLINE_SINCE): the release from which each key is online.
@pytest.mark.parametrize(("key", "before", "since"), [
    ("storage.block-cache.capacity", "v4.0.0", "v4.0.3"),  # storage config manager registered in v4.0.3
    ("storage.scheduler-worker-pool-size", "v5.4.3", "v6.0.0"),  # #[online_config(skip)] through v5.4
    ("readpool.unified.max-thread-count", "v5.4.0", "v6.0.0"),  # readpool manager registered in v6.0.0
    ("raftstore.apply-pool-size", "v5.3.0", "v5.4.0"),  # batch systems became submodules in v5.4
    ("raftstore.store-io-pool-size", "v6.5.9", "v6.6.0"),  # #[online_config(skip)] v5.3..v6.5
    ("rocksdb.defaultcf.titan.min-blob-size", "v7.5.1", "v8.0.0"),  # #[online_config(skip)] until v7.6
    ("rocksdb.rate-bytes-per-sec", "v4.0.16", "v5.0.0"),
])
def test_a_key_is_set_online_only_from_the_release_that_allows_it(key: str, before: str, since: str) -> None:
    current, proposed = ("8GiB", "16GiB") if "capacity" in key else ("10GB", "200MB") if "rate" in key else (
        ("32KB", "1KB") if "blob" in key else (2, 4)
    )
    for version, online in ((before, False), (since, True)):
        p = Patch(cluster="prod-east", tikv_version=version, nodes=NODES,
                  changes=(change(key, proposed, current),), sources=(FINDING,))
        body = artefact(p, "sql").body
        statements = re.findall(r"^SET CONFIG .*;$", body, flags=re.MULTILINE)
        assert bool(statements) is online, (version, body)
        if not online:
            restart = body[body.index("Needs a rolling restart"):]
            assert f"--   {key} = " in restart
            assert f"not online on TiKV {before}" in restart and since in restart  # the source says why
            assert f"https://github.com/tikv/tikv/blob/{since}/" in restart


def test_an_unknown_version_says_which_statements_assume_a_recent_tikv() -> None:
    p = Patch(cluster="prod-east", tikv_version=None, nodes=NODES,
              changes=(change("raftstore.store-io-pool-size", 2, 1), change("log.level", "warn", "info")),
              sources=(FINDING, FINDING))
    body = artefact(p, "sql").body
    assert "SET CONFIG tikv `raftstore.store-io-pool-size` = 2;" in body
    assert "raftstore.store-io-pool-size is online only from TiKV v6.6.0" in body
    assert "log.level is online only" not in body  # no release rule: online on every supported version
    known = artefact(patch_of(change("raftstore.store-io-pool-size", 2, 1)), "sql").body  # v7.5.1
    assert "assume a recent release" not in known


def test_an_advisor_change_on_an_old_node_is_not_marked_online() -> None:
    assert can_change_online("storage.scheduler-worker-pool-size", 4, 6, "v5.4.0") is False
    assert can_change_online("storage.scheduler-worker-pool-size", 4, 6, "v6.1.0") is True
    assert can_change_online("storage.scheduler-worker-pool-size", 4, 6, None) is True


def test_the_tiup_file_says_each_reason_once_however_many_instances_take_it() -> None:
    # One finding's change on every node (a value sized per host): the reason is said once, not per instance.
    reason = "The block cache is small for this host's memory."
    changes = tuple(
        Change(target="tikv", key="storage.block-cache.capacity", current="8GiB", proposed=f"{10 + i}GiB",
               reason=reason, entity=_entity(node.status_address))
        for i, node in enumerate(NODES)
    )
    body = artefact(Patch(cluster="prod-east", nodes=NODES, changes=changes), "tiup").body
    assert body.count(reason) == 1, body
    document = yaml.safe_load(body)
    assert [s["config"]["storage.block-cache.capacity"] for s in document["tikv_servers"]] == ["11GiB", "12GiB"]


@pytest.mark.parametrize("fmt", ["toml", "tiup", "operator", "sql", "tikv-ctl"])
def test_a_control_character_from_stored_text_never_reaches_an_artefact_raw(fmt: str) -> None:
    # A cluster name saved before names refused control characters (an outside probe's U+0002): the artefact is
    # still valid YAML / TOML, the character written as its escape where a person can see it
    changes = (change("storage.block-cache.capacity", "14GiB", "8GiB"),)
    body = artefact(Patch(cluster="prod\x02east\x7f", tikv_version="v7.5.1", nodes=NODES, changes=changes), fmt).body
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", body), repr(body[:300])
    assert "prod\\u0002east\\u007F" in body
    if fmt in ("tiup", "operator"):
        yaml.safe_load(body)
    if fmt == "toml":
        tomllib.loads(body)

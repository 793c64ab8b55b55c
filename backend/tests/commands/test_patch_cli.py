"""`headroom patch` through Typer's CliRunner, on a snapshot written with the snapshot schema's fields and the
example findings in examples/findings/prod-east.json."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from headroom.cli import app
from typer.testing import CliRunner

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[3]
FINDINGS = ROOT / "examples" / "findings" / "prod-east.json"
TIUP_FILE = ROOT / "examples" / "configs" / "tiup-8vcpu-32gib.toml"


def snapshot_document() -> dict[str, Any]:
    nodes, instances, volumes = [], [], []
    for i in (1, 2, 3):
        ip, iid, vid = f"10.0.1.{4 + i}", f"i-0a1b2c3d4e5f6000{i}", f"vol-0a1b2c3d4e5f6000{i}"
        instances.append({"id": iid, "type": "m6i.2xlarge", "vcpus": 8, "memory_gib": 32})
        volumes.append(
            {
                "id": vid,
                "type": "gp3",
                "size_gib": 1024,
                "iops": 3000,
                "throughput_mibps": 250,
                "instance_id": iid,
                "role": "data",
            }
        )
        nodes.append(
            {
                "id": f"tikv-{i}",
                "store_id": i,
                "address": f"{ip}:20160",
                "status_address": f"{ip}:20180",
                "instance_id": iid,
                "instance_type": "m6i.2xlarge",
                "vcpus": 8,
                "memory_gib": 32,
                "tikv_version": "v7.5.1",
                "host": ip,
                "data_volume_ids": [vid],
                "config": {"storage": {"block-cache": {"capacity": "8GiB"}}},
            }
        )
    return {
        "schema_version": 1,
        "generated_at": "2026-11-20T00:00:00Z",
        "source": {"kind": "demo"},
        "cluster": {"name": "prod-east", "tikv_version": "v7.5.1", "deployment": "tiup"},
        "window": {"start": "2026-11-13T00:00:00Z", "end": "2026-11-20T00:00:00Z", "step_seconds": 60},
        "nodes": nodes,
        "instances": instances,
        "volumes": volumes,
        "series": [],
    }


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot_document()))
    return path


def run(*args: str) -> Any:
    return runner.invoke(app, ["patch", *args])


def test_sql_for_one_finding(snapshot: Path) -> None:
    result = run(
        str(snapshot),
        "--findings",
        str(FINDINGS),
        "--format",
        "sql",
        "--finding",
        "block-cache-undersized:tikv-1",
    )
    assert result.exit_code == 0, result.stderr
    assert "SET CONFIG \"10.0.1.5:20180\" `storage.block-cache.capacity` = '14GiB';" in result.stdout
    assert "rate-bytes-per-sec" not in result.stdout  # other findings not selected


def test_merged_applies_every_tikv_change_to_the_file(snapshot: Path) -> None:
    result = run(str(snapshot), "--findings", str(FINDINGS), "--format", "merged", "--config", str(TIUP_FILE))
    assert result.exit_code == 0, result.stderr
    parsed = tomllib.loads(result.stdout)
    assert parsed["storage"]["block-cache"]["capacity"] == "14GiB"
    assert parsed["rocksdb"]["rate-bytes-per-sec"] == "160MiB"
    assert parsed["rocksdb"]["defaultcf"]["block-size"] == "32KB"
    assert "# Shared block cache: we leave room for the page cache (OPS-1432)." in result.stdout


def test_rollback_of_merged_is_the_original(snapshot: Path) -> None:
    result = run(
        str(snapshot),
        "--findings",
        str(FINDINGS),
        "--format",
        "merged",
        "--config",
        str(TIUP_FILE),
        "--rollback",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == TIUP_FILE.read_text()


def test_aws_by_rule(snapshot: Path) -> None:
    result = run(
        str(snapshot), "--findings", str(FINDINGS), "--format", "aws", "--finding", "gp3-throughput-ceiling"
    )
    assert result.exit_code == 0, result.stderr
    assert (
        "aws_cli ec2 modify-volume --volume-id vol-0a1b2c3d4e5f60001 --iops 6000 --throughput 500 --query"
        in result.stdout
    )
    # the snapshot's region, passed to every AWS call (aws_cli adds --region)
    assert re.search(r"^REGION=(\S+)", result.stdout, flags=re.MULTILINE) is not None


def test_node_filter_by_node_id(snapshot: Path) -> None:
    result = run(str(snapshot), "--findings", str(FINDINGS), "--format", "toml", "--node", "tikv-2")
    assert result.exit_code == 0, result.stderr
    assert tomllib.loads(result.stdout) == {}  # every tikv change is for tikv-1


@pytest.mark.parametrize(
    ("config_text", "fragment"),
    [
        ('[storage]\ncapacity = "8GiB\n', "line 2, column 17: "),
        ("[rocksdb\n", "line 1, column 9: "),
        # A value the config store refuses is refused here too, naming key and line
        ("[rocksdb]\nrate-bytes-per-sec = nan\n", "line 2, column 22: rocksdb.rate-bytes-per-sec: nan is not a "),
    ],
)
def test_malformed_toml_exits_with_line_and_column(
    snapshot: Path, tmp_path: Path, config_text: str, fragment: str
) -> None:
    config = tmp_path / "tikv.toml"
    config.write_text(config_text)
    result = run(str(snapshot), "--findings", str(FINDINGS), "--format", "merged", "--config", str(config))
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"headroom: error: {config} {fragment}")


def test_unknown_key_exits(snapshot: Path, tmp_path: Path) -> None:
    findings = {
        "findings": [
            {
                "rule": "r",
                "dedup_key": "r:1",
                "changes": [
                    {"target": "tikv", "key": "storage.block-cache.size", "current": None, "proposed": "1GiB"}
                ],
            }
        ]
    }
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(findings))
    result = run(str(snapshot), "--findings", str(path), "--format", "sql")
    assert result.exit_code != 0
    assert "unknown TiKV config key 'storage.block-cache.size'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "ansible"], "unknown format 'ansible'"),
        # the one-file bundle is gone: each format has its own rollback
        (["--format", "rollback"], "--format sql --rollback"),
        (
            ["--format", "sql", "--finding", "no-such-rule"],
            "no finding matching no-such-rule proposes a change",
        ),
        (["--format", "merged"], "needs the current tikv.toml"),
    ],
)
def test_bad_input_exits_with_one_line(snapshot: Path, args: list[str], message: str) -> None:
    result = run(str(snapshot), "--findings", str(FINDINGS), *args)
    assert result.exit_code != 0
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unvalidated_snapshot_still_names_cluster_and_nodes(tmp_path: Path) -> None:
    # A snapshot missing series/window still gives the cluster and nodes a patch needs.
    document = snapshot_document()
    del document["window"]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(document))
    result = run(str(path), "--findings", str(FINDINGS), "--format", "tikv-ctl")
    assert result.exit_code == 0, result.stderr
    assert (
        "tikv-ctl --host 10.0.1.5:20160 modify-tikv-config -n storage.block-cache.capacity -v 14GiB"
        in result.stdout
    )


def test_missing_snapshot_exits(tmp_path: Path) -> None:
    result = run(str(tmp_path / "nope.json"), "--findings", str(FINDINGS))
    assert result.exit_code != 0
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_current_comes_from_the_snapshot(snapshot: Path, tmp_path: Path) -> None:
    findings = {
        "findings": [
            {
                "rule": "r",
                "dedup_key": "r:1",
                "entity": {"kind": "node", "id": "tikv-2"},
                "changes": [
                    {
                        "target": "tikv",
                        "key": "storage.block-cache.capacity",
                        "proposed": "14GiB",
                        "reason": "more cache",
                    }
                ],
            }
        ]
    }
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(findings))
    result = run(str(snapshot), "--findings", str(path), "--format", "sql", "--rollback")
    assert result.exit_code == 0, result.stderr
    # The snapshot's node config says 8GiB on tikv-2: the rollback sets it back.
    assert "SET CONFIG \"10.0.1.6:20180\" `storage.block-cache.capacity` = '8GiB';" in result.stdout


def test_a_crlf_config_stays_crlf_and_its_diff_applies_with_gnu_patch(snapshot: Path, tmp_path: Path) -> None:
    # Regression: the CLI read the file with read_text(), which turns CRLF into LF: the merged file changed every
    # line ending, the rollback was not the original and the diff did not apply to the file on disk. Run as a
    # user does: the installed `headroom` command, its output redirected to files, GNU patch on a copy.
    crlf = tmp_path / "tikv.toml"
    crlf.write_bytes(TIUP_FILE.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    headroom = shutil.which("headroom") or str(Path(sys.executable).with_name("headroom"))

    def cli(*args: str) -> bytes:
        done = subprocess.run([headroom, "patch", str(snapshot), "--findings", str(FINDINGS), "--config", str(crlf),
                               *args], capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout

    merged, diff = cli("--format", "merged"), cli("--format", "diff")
    assert merged.count(b"\r\n") == merged.count(b"\n") > 0  # every line CRLF, the new ones too
    assert tomllib.loads(merged.decode())["storage"]["block-cache"]["capacity"] == "14GiB"
    copy = tmp_path / "applied.toml"
    copy.write_bytes(crlf.read_bytes())
    (tmp_path / "change.diff").write_bytes(diff)
    applied = subprocess.run(["patch", "--batch", str(copy), str(tmp_path / "change.diff")], capture_output=True,
                             timeout=60, check=False)
    assert applied.returncode == 0, applied.stdout.decode() + applied.stderr.decode()
    assert copy.read_bytes() == merged
    # the rollback's merged file (made from the same original, as test_rollback_of_merged_is_the_original) is the
    # original byte for byte, and its diff turns the patched copy back into it
    assert cli("--format", "merged", "--rollback") == crlf.read_bytes()
    (tmp_path / "undo.diff").write_bytes(cli("--format", "diff", "--rollback"))
    undone = subprocess.run(["patch", "--batch", str(copy), str(tmp_path / "undo.diff")], capture_output=True,
                            timeout=60, check=False)
    assert undone.returncode == 0, undone.stdout.decode() + undone.stderr.decode()
    assert copy.read_bytes() == crlf.read_bytes()


def test_operator_with_the_users_manifest_prints_a_json_patch_of_only_the_changed_keys(snapshot: Path) -> None:
    # tidb-operator's examples/basic keeps spec.tikv.config as a YAML map; the patch names the object
    # and changes only the proposed keys (tests/domain/tikvconf/data/operator/README.md names the source).
    manifest = ROOT / "backend" / "tests" / "domain" / "tikvconf" / "data" / "operator" / "basic-tidb-cluster.yaml"
    result = run(str(snapshot), "--findings", str(FINDINGS), "--format", "operator", "--manifest", str(manifest),
                 "--finding", "block-cache-undersized:tikv-1")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [
        {"op": "add", "path": "/spec/tikv/config/storage/block-cache", "value": {"capacity": "14GiB"}}
    ]
    # runs as printed: the patch inline, quoted for the shell (was `--patch-file <this file>`, a redirection)
    command = result.stderr.split("apply with: ", 1)[1].splitlines()[0]
    assert shlex.split(command) == ["kubectl", "patch", "tc", "basic", "--type", "json", "-p",
                                    json.dumps(json.loads(result.stdout), separators=(",", ":"))]
    # the rollback takes the key out again (the manifest had none), each step tested first
    undo = run(str(snapshot), "--findings", str(FINDINGS), "--format", "operator", "--manifest", str(manifest),
               "--finding", "block-cache-undersized:tikv-1", "--rollback")
    assert undo.exit_code == 0, undo.stderr
    assert json.loads(undo.stdout) == [
        {"op": "test", "path": "/spec/tikv/config/storage/block-cache", "value": {"capacity": "14GiB"}},
        {"op": "remove", "path": "/spec/tikv/config/storage/block-cache"},
    ]
    wrong = run(str(snapshot), "--findings", str(FINDINGS), "--format", "sql", "--manifest", str(manifest))
    assert wrong.exit_code != 0 and "--manifest goes with --format operator" in wrong.stderr


def test_tiup_with_the_users_topology_prints_it_patched_in_place(snapshot: Path, tmp_path: Path) -> None:
    # TiUP precedence: the topology's own instance config for 10.0.1.5 overrides server_configs; both get the value.
    topology = tmp_path / "topology.yaml"
    topology.write_text(
        "# prod-east\nserver_configs:\n  tikv:\n    storage.block-cache.capacity: 8GiB\ntikv_servers:\n"
        "  - host: 10.0.1.5\n    config:\n      storage.block-cache.capacity: 10GiB\n  - host: 10.0.1.6\n"
    )
    result = run(str(snapshot), "--findings", str(FINDINGS), "--format", "tiup", "--topology", str(topology),
                 "--finding", "block-cache-undersized:tikv-1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# prod-east\n")
    from headroom.domain.tikvconf.parse import tiup_topology_view

    view = tiup_topology_view(result.stdout)
    assert view.for_instance("10.0.1.5", 20160)["storage.block-cache.capacity"] == "14GiB"
    # the snapshot's name is Headroom's: the command holds the placeholder, as the API's does, and says what to put
    assert ("tiup cluster edit-config '<tiup-cluster-name>' --topology-file topology.yaml && tiup cluster reload "
            "'<tiup-cluster-name>' -R tikv") in result.stderr
    assert "replace <tiup-cluster-name> with this cluster's name in `tiup cluster list`" in result.stderr
    named = run(str(snapshot), "--findings", str(FINDINGS), "--format", "tiup", "--topology", str(topology),
                "--finding", "block-cache-undersized:tikv-1", "--tiup-cluster", "prod-east")
    assert ("tiup cluster edit-config prod-east --topology-file topology.yaml && tiup cluster reload prod-east -R "
            "tikv") in named.stderr
    sql = run(str(snapshot), "--findings", str(FINDINGS), "--format", "sql", "--tiup-cluster", "prod-east")
    assert "tiup cluster edit-config prod-east" in sql.stdout and "<tiup-cluster-name>" not in sql.stdout
    # the rollback is the topology as given, byte for byte: no value pinned on 10.0.1.6
    undo = run(str(snapshot), "--findings", str(FINDINGS), "--format", "tiup", "--topology", str(topology),
               "--finding", "block-cache-undersized:tikv-1", "--rollback")
    assert undo.exit_code == 0, undo.stderr
    assert undo.stdout == topology.read_text()


@pytest.mark.parametrize(
    "name",
    [
        "tikv-v8.5.0-config-template.toml",  # TiKV's own template: every table introduced by a comment block
        "pingcap-br-restore-tikv.toml",  # pingcap/br's test config: an inline table, no newline at the end
    ],
)
def test_patch_on_real_configs_applies_with_gnu_patch(snapshot: Path, tmp_path: Path, name: str) -> None:
    # Real tikv.toml files (tests/domain/tikvconf/data/tikv-toml/README.md names their sources) through
    # the command (in-process: the installed command's start-up costs ~10 s here, and the CRLF test above runs
    # it): the diff applies with GNU patch to give the merged bytes, the merged file's rollback is the original
    # byte for byte, and each table keeps the comment block above its header.
    original = ROOT / "backend" / "tests" / "domain" / "tikvconf" / "data" / "tikv-toml" / name
    config = tmp_path / "tikv.toml"
    config.write_bytes(original.read_bytes())

    def cli(*args: str) -> bytes:
        result = run(str(snapshot), "--findings", str(FINDINGS), "--config", str(config), "--node", "tikv-1", *args)
        assert result.exit_code == 0, result.stderr
        return result.stdout_bytes

    merged, diff = cli("--format", "merged"), cli("--format", "diff")
    values = tomllib.loads(merged.decode())
    assert values["storage"]["block-cache"]["capacity"] == "14GiB"
    assert values["rocksdb"]["defaultcf"]["block-size"] == "32KB"
    assert cli("--format", "merged", "--rollback") == original.read_bytes()
    (tmp_path / "change.diff").write_bytes(diff)
    applied = subprocess.run(["patch", "--batch", "--fuzz=0", "-p1", "-i", "change.diff"], cwd=tmp_path,
                             capture_output=True, timeout=60, check=False)
    assert applied.returncode == 0, applied.stdout.decode() + applied.stderr.decode()
    assert config.read_bytes() == merged
    if name.startswith("tikv-v8.5.0"):
        documented = '## Options for "Default" Column Family, which stores actual user data.\n[rocksdb.defaultcf]\n'
        assert documented in merged.decode()

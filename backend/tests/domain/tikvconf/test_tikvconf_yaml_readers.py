"""TiUP topologies as both Go parsers TiUP has used read them, and rollbacks that give the user's file back.

TiUP read topologies with gopkg.in/yaml.v2 (YAML 1.1: a plain `no` is false, https://yaml.org/type/bool.html) up to
v1.16.2 and with gopkg.in/yaml.v3 from v1.16.3 (pingcap/tiup CHANGELOG, #2558). Every topology Headroom writes (the
user's own topology patched in place, the tiup artefact) is read here by both (goyaml_readers.py: a Go program
built from goyaml/), and each changed key must read as the value meant, types included; nothing else may read
differently than before the patch.

Data: data/tiup (pingcap/tiup's example topologies, README there) and data/operator (tidb-operator's examples,
README there).
"""

from __future__ import annotations

import copy
import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from goyaml_readers import PARSERS, flatten, meant, read
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch, PatchTarget
from headroom.domain.tikvconf.errors import TikvConfError
from headroom.domain.tikvconf.operator import _BlockDumper, patch_manifest, rollback_manifest
from headroom.domain.tikvconf.render import artefact
from headroom.domain.tikvconf.tiup import patch_topology, rollback_topology
from headroom.domain.tikvconf.yamlscalar import needs_quotes
from ruamel.yaml import YAML

DATA = Path(__file__).parent / "data"
TOPOLOGIES = ["topology.example.yaml", "multi-dc.yaml", "minimal.yaml"]
LEVELS = ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]

# Strings a YAML 1.1 or 1.2 reader, or yaml.v2/v3, could read as another type (yaml.org/type: bool, int, float,
# null, timestamp, merge, value; the YAML 1.2 core schema), and strings TiKV's config holds that none of them does.
TRICKY = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
    "on", "On", "ON", "off", "Off", "OFF",
    "nO", "oFF", "tRUE",  # no reader takes these for bools: quoted all the same (any case)
    "~", "null", "Null", "NULL", "<<", "=",
    "0", "7", "-19", "+12", "017", "08", "0o17", "-0o17", "0x1F", "0X1f", "0b101", "-0b1", "1_000", "0x_1F",
    "1:20", "190:20:30", "1:20.5", "-1:20",
    "1.5", "-1.5", ".5", "+.5", "1e3", "6.8523015e+5", "685.230_15e+03", "1.", ".inf", "-.Inf", "+.INF", ".nan",
    ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14T21:59:43Z",
]
PLAIN = ["16GiB", "14745MiB", "32KB", "0MB", "8MB", "1h", "10ms", "1d", "2h30m", "1s", "lz4", "zstd", "none",
         "gzip", "info", "warn", "/var/lib/tikv", "10.0.1.16:20160", "us-east-1a", "0.0.0.0", "1.5GiB", "v8.5.0",
         "Inf", "nan", "yess", "onn", "1-2", "12:30pm", "2001-12", "0x", "0b2", "1e", "e5", "_1"]


def _plain_readings(values: list[str]) -> dict[str, list[Any]]:
    """Each value written plain (`- value`) read by yaml.v2, yaml.v3, PyYAML (1.1) and ruamel.yaml (1.2)."""
    text = "k:\n" + "".join(f"  - {v}\n" for v in values)
    go = read(text)
    readings = {p: go[p]["k"] for p in PARSERS}
    readings["pyyaml"] = [_one(yaml.safe_load, v) for v in values]
    readings["ruamel"] = [_one(YAML(typ="safe", pure=True).load, v) for v in values]
    return readings


def _one(load: Any, value: str) -> Any:
    try:
        return meant(load(f"k: {value}\n")["k"])
    except Exception as error:  # PyYAML refuses a plain `<<` or `=` as a value: that is a misreading too
        return ("error", type(error).__name__)


def test_quotes_exactly_the_strings_some_reader_takes_for_another_type() -> None:
    values = TRICKY + PLAIN
    readings = _plain_readings(values)
    misread = {v for reader in readings.values() for v, got in zip(values, reader, strict=True)
               if got != ("str", v)}
    words = {v for v in values if v.lower() in {"y", "n", "yes", "no", "on", "off", "true", "false"}}
    assert {v for v in values if needs_quotes(v)} == misread | words
    assert set(TRICKY) == misread | words, "each of TRICKY is misread somewhere"
    assert not misread & set(PLAIN), "TiKV's own values stay plain"
    # the four readers do disagree: that is why every one is asked
    assert readings["v2"][values.index("no")] == ("bool", False) != readings["v3"][values.index("no")]
    assert readings["ruamel"][values.index("0o17")] == ("int", 15) != readings["pyyaml"][values.index("0o17")]


def _node(host: str, port: int, status: int) -> EntityRef:
    return EntityRef(kind="node", id=f"{host}:{port}", node=f"{host}:{port}", status_address=f"{host}:{status}")


def _servers(doc: Any) -> list[tuple[str, int, int]]:
    return [(s["host"], int(s.get("port") or 20160), int(s.get("status_port") or 20180))
            for s in doc.get("tikv_servers") or []]


def _changes(doc: Any) -> list[Change]:
    """A forward change set whose current values are what the nodes ran (live /config), as a patch holds them;
    per node on every instance, and cluster-wide; values YAML 1.1 reads as other types among them."""
    servers = _servers(doc)
    wide = [
        Change(target="tikv", key="rocksdb.defaultcf.compression-per-level", current=LEVELS,
               proposed=["no", "no", "lz4", "lz4", "zstd", "zstd", "zstd"], reason="r"),
        Change(target="tikv", key="security.cert-allowed-cn", current=[], proposed=TRICKY + PLAIN, reason="r"),
        Change(target="tikv", key="server.grpc-compression-type", current="none", proposed="gzip", reason="r"),
    ]
    per_node = [Change(target="tikv", key="storage.block-cache.capacity", current="14745MiB", proposed="8GiB",
                       reason="r", entity=_node(*s)) for s in servers]
    per_node.append(Change(target="tikv", key="log.level", current="info", proposed="off", reason="r",
                           entity=_node(*servers[0])))
    return wide + per_node


def _targets(doc: Any) -> tuple[PatchTarget, ...]:
    return tuple(PatchTarget(status_address=f"{h}:{s}", address=f"{h}:{p}", name=f"{h}:{p}")
                 for h, p, s in _servers(doc))


def _effective(reading: Any) -> dict[tuple[str, int], dict[str, Any]]:
    """Each instance's TiKV keys after TiUP's precedence (an instance's own config over server_configs.tikv)."""
    cluster = flatten((reading.get("server_configs") or {}).get("tikv") or {})
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for server in reading.get("tikv_servers") or []:
        merged = dict(cluster)
        merged.update(flatten(server.get("config") or {}))
        port = server.get("port")
        out[(server["host"][1], port[1] if port else 20160)] = merged
    return out


def _mismatches(text: str, changes: list[Change], before_text: str) -> list[str]:
    """Where yaml.v2 or yaml.v3 reads a changed key of the patched topology as anything but the value meant, or
    any other key of any instance differently than in the topology before the patch."""
    after, before = read(text), read(before_text)
    wrong: list[str] = []
    for parser in PARSERS:
        views, old = _effective(after[parser]), _effective(before[parser])
        for instance, keys in views.items():
            host = f"{instance[0]}:{instance[1]}"
            wanted = {c.key: c.proposed for c in changes if c.entity is None}
            wanted.update({c.key: c.proposed for c in changes if c.entity is not None and c.entity.node == host})
            for key, value in wanted.items():
                if keys.get(key) != meant(value):
                    wrong.append(f"{parser} {host} {key}: {keys.get(key)!r}")
            for key in set(keys) | set(old[instance]):
                if key not in wanted and keys.get(key) != old[instance].get(key):
                    wrong.append(f"{parser} {host} {key} moved: {old[instance].get(key)!r} -> {keys.get(key)!r}")
    return wrong


@pytest.mark.parametrize("name", TOPOLOGIES)
def test_both_go_parsers_read_the_patched_topology_as_meant(name: str) -> None:
    text = (DATA / "tiup" / name).read_text()
    doc = YAML(typ="safe", pure=True).load(text)
    changes = _changes(doc)
    result = patch_topology(text, changes, _targets(doc), name)
    assert _mismatches(result.text, changes, text) == []
    assert "- 'no'" not in result.text and '- "no"' in result.text  # quoted, in TiUP's own double quotes
    # the values TiUP would put back by a rollback made from the patch, written the same way
    undo = [c.model_copy(update={"current": c.proposed, "proposed": c.current}) for c in changes]
    assert _mismatches(patch_topology(result.text, undo, _targets(doc), name).text, undo, result.text) == []


@pytest.mark.parametrize("rollback", [False, True])
def test_both_go_parsers_read_the_tiup_artefact_as_meant(rollback: bool) -> None:
    nodes = (PatchTarget(status_address="10.0.1.1:20180", address="10.0.1.1:20160"),
             PatchTarget(status_address="10.0.1.2:20180", address="10.0.1.2:20160"))
    changes = (
        Change(target="tikv", key="rocksdb.defaultcf.compression-per-level", current=LEVELS,
               proposed=["no", "lz4", "lz4", "lz4", "lz4", "zstd", "zstd"], reason="r"),
        Change(target="tikv", key="security.cert-allowed-cn", current=TRICKY + PLAIN, proposed=["TiDB"],
               reason="r"),
        Change(target="tikv", key="log.level", current="info", proposed="warn", reason="r",
               entity=_node("10.0.1.1", 20160, 20180)),
    )
    rendered = artefact(Patch(cluster="prod", tikv_version="8.5.0", nodes=nodes, changes=changes), "tiup",
                        rollback=rollback)
    body = rendered.body
    # made without the user's topology, the rollback can only pin values: it says so, and where the exact one is
    assert any("pinned" in n and "--topology FILE --rollback" in n for n in rendered.notes) == rollback
    wanted = {c.key: (c.current if rollback else c.proposed) for c in changes if c.entity is None}
    for parser, reading in read(body).items():
        got = flatten(reading["server_configs"]["tikv"])
        assert {k: got.get(k) for k in wanted} == {k: meant(v) for k, v in wanted.items()}, parser
        (server,) = reading["tikv_servers"]
        assert server["config"] == {"log.level": ("str", "info" if rollback else "warn")}, parser


def test_the_operator_merge_patch_writer_quotes_them_too() -> None:
    # the merge patch body is YAML as well (kubectl reads it with sigs.k8s.io/yaml, a yaml.v2 fork)
    body = yaml.dump({"spec": {"values": TRICKY + PLAIN, "config": "[log]\nlevel = 'no'\n"}}, Dumper=_BlockDumper)
    assert "config: |" in body
    for parser, reading in read(body).items():
        assert reading["spec"]["values"] == meant(TRICKY + PLAIN), parser


# -------------------------------------------------------------------------------------------- rollbacks give back
@pytest.mark.parametrize("name", TOPOLOGIES)
def test_the_topology_rollback_is_the_users_file_byte_for_byte(name: str) -> None:
    text = (DATA / "tiup" / name).read_text()
    doc = YAML(typ="safe", pure=True).load(text)
    changes = _changes(doc)
    forward = patch_topology(text, changes, _targets(doc), name, cluster="prod", topology_file="topology.yaml")
    undo = rollback_topology(text, changes, _targets(doc), name, cluster="prod",
                             topology_file="topology-rollback.yaml")
    # edit-config --topology-file replaces the whole topology: after forward then rollback TiUP holds the file
    assert undo.text == text
    assert shlex.split(undo.command.split(" && ")[0])[-1] == "topology-rollback.yaml"
    # no value is pinned: the instances of multi-dc.yaml read exactly what they read before the patch
    for parser in PARSERS:
        assert _effective(read(undo.text)[parser]) == _effective(read(text)[parser])
    assert forward.text != text
    # given the patched topology instead, it says so rather than handing back a no-op
    with pytest.raises(TikvConfError, match="made from"):
        rollback_topology(forward.text, changes, _targets(doc), name)


def _object(text: str) -> dict[str, Any]:
    (found,) = [d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind") in
                ("TidbCluster", "TiKVGroup")]
    return found


def _kubectl_local(obj: dict[str, Any], command: str, tmp: Path) -> dict[str, Any] | None:
    """`kubectl patch --local` with the printed patch, where kubectl is installed (no cluster needed)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    words = shlex.split(command)
    source = tmp / "object.json"
    source.write_text(json.dumps(obj))
    ran = subprocess.run([kubectl, "patch", "--local", "-f", str(source), "--type", words[words.index("--type") + 1],
                          "-p", words[words.index("-p") + 1], "-o", "json"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def _apply(obj: dict[str, Any], command: str, tmp: Path) -> dict[str, Any]:
    words = shlex.split(command)
    payload = json.loads(words[words.index("-p") + 1])
    if words[words.index("--type") + 1] == "json":
        applied = jsonpatch.apply_patch(obj, payload)
    else:
        from test_tikvconf_operator_examples import merge_patch
        applied = merge_patch(obj, payload)
    local = _kubectl_local(obj, command, tmp)
    if local is not None:
        assert local == applied, "kubectl patch --local and the RFC's reading differ"
    return applied  # type: ignore[no-any-return]


OPERATOR = [
    "operator/v1/basic-tidb-cluster.yaml",  # config as a map
    "operator/v1/advanced-tidb-cluster.yaml",  # config as a TOML string
    "operator/v1/initialize-tidb-cluster.yaml",  # no config
    "operator/v2/basic-02-tikv.yaml",  # TiKVGroup, TOML string
    "operator/v2/overlay-02-tikv.yaml",  # TiKVGroup, no config
]
EMPTY_MAP = ("apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: basic, namespace: tidb}\n"
             "spec:\n  tikv:\n    replicas: 3\n    config: {}\n")


@pytest.mark.parametrize("name", [*OPERATOR, "config: {}"])
def test_the_manifest_rollback_after_the_patch_gives_back_the_users_object(name: str, tmp_path: Path) -> None:
    text = EMPTY_MAP if name == "config: {}" else (DATA / name).read_text()
    original = _object(text)
    changes = [
        # the node ran 14745MiB (45 % of its memory, TiKV's default); the manifest did not set the key
        Change(target="tikv", key="storage.block-cache.capacity", current="14745MiB", proposed="8GiB", reason="r"),
        Change(target="tikv", key="rocksdb.defaultcf.compression-per-level", current=LEVELS,
               proposed=["no", "lz4", "lz4", "lz4", "lz4", "zstd", "zstd"], reason="r"),
        Change(target="tikv", key="log.level", current="info", proposed="warn", reason="r"),
    ]
    forward = patch_manifest(text, changes, name)
    patched = _apply(original, forward.command, tmp_path)
    assert patched != original
    undo = rollback_manifest(text, changes, name)
    assert undo.patch_type == "json" and json.loads(undo.body) == json.loads(
        shlex.split(undo.command)[shlex.split(undo.command).index("-p") + 1])
    restored = _apply(patched, undo.command, tmp_path)
    assert restored == original  # key for key: no block-cache capacity written in, the string byte for byte
    assert undo.document == original
    # edited since: the tests fail and nothing changes
    edited = copy.deepcopy(patched)
    path = ["spec", "tikv", "config"] if original["kind"] == "TidbCluster" else ["spec", "template", "spec", "config"]
    holder = edited
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = ({**holder[path[-1]], "log": {"level": "error"}} if isinstance(holder[path[-1]], dict)
                        else holder[path[-1]] + "# edited\n")
    with pytest.raises(jsonpatch.JsonPatchTestFailed):
        jsonpatch.apply_patch(edited, json.loads(undo.body))
    with pytest.raises(TikvConfError, match="made from"):
        rollback_manifest(yaml.safe_dump(patched, sort_keys=False), changes, name)


def test_no_go_means_a_clear_failure_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    import goyaml_readers

    goyaml_readers._binary.cache_clear()
    monkeypatch.setattr(goyaml_readers, "_go", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="Go is not installed"):
        goyaml_readers.read("a: 1\n")
    goyaml_readers._binary.cache_clear()


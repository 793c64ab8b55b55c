"""The TiUP artefact applied to TiUP's own example topologies: after TiUP's precedence each TiKV instance
runs exactly the proposed values, and nothing else of any instance moves.

Data: data/tiup/ (README names the source): pingcap/tiup embed/examples/cluster/topology.example.yaml (six TiKV on
three hosts, two per host, every option commented), multi-dc.yaml (server_configs.tikv and per-instance configs,
one with its own raftstore keys) and minimal.yaml (port-less instances).

TiUP's precedence, as read in its source (pkg/cluster/spec/server_config.go, Merge2Toml -> MergeConfig, written
again here, not copied): each of server_configs.tikv and the instance's `config` is flattened to dotted keys
(FlattenMap: every nested map, server.labels included) and folded back into tables (FoldMap); the instance's
tables are then laid over the cluster's (patch): maps merge key by key, and any other value, lists included,
replaces what the cluster had at that path, a whole table included. Two spellings of one key in one map (dotted
and nested) fold in Go's random map order, so the tests also require that no map holds two.
TiUP reads the topology with gopkg.in/yaml.v3 since v1.16.3 (YAML 1.2: `no` and `off` are strings), as the tests
here do; up to v1.16.2 it read it with yaml.v2 (YAML 1.1), which test_tikvconf_yaml_readers.py checks with the Go
parsers themselves.
"""

from __future__ import annotations

import copy
import io
import shlex
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import PatchTarget
from headroom.domain.tikvconf.tiup import patch_topology
from ruamel.yaml import YAML

DATA = Path(__file__).parent / "data" / "tiup"
LEVELS = ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]  # `no` stays a string under YAML 1.2


def load_12(text: str) -> Any:
    """The topology as TiUP's YAML 1.2 reader gives it (ruamel's safe loader, YAML 1.2 by default)."""
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def tiup_flatten(tree: Any, prefix: str = "", spelled: dict[str, str] | None = None) -> dict[str, Any]:
    """FlattenMap: every nested map to dotted keys. A key reached through two spellings is an error (TiUP would
    keep one of them at random)."""
    out: dict[str, Any] = {}
    spelled = {} if spelled is None else spelled
    for key, value in (tree or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(tiup_flatten(value, name + ".", spelled))
            continue
        assert name not in spelled, f"{name} is spelled twice in one map: {spelled[name]!r} and {key!r}"
        spelled[name] = key
        out[name] = value
    return out


def tiup_effective(cluster: Any, instance: Any) -> dict[str, Any]:
    """MergeConfig(server_configs.tikv, instance config): the instance's leaves replace the cluster's at the same
    path, and any cluster leaf above or below that path (a value replaced by a table, or a table by a value)."""
    merged = tiup_flatten(cluster)
    for key, value in tiup_flatten(instance).items():
        for other in [k for k in merged if k == key or k.startswith(key + ".") or key.startswith(k + ".")]:
            del merged[other]
        merged[key] = value
    return merged


def _servers(doc: Any) -> list[dict[str, Any]]:
    return list(doc.get("tikv_servers") or [])


def _address(server: dict[str, Any]) -> tuple[str, int, int]:
    return server["host"], int(server.get("port") or 20160), int(server.get("status_port") or 20180)


def _views(doc: Any) -> dict[tuple[str, int], dict[str, Any]]:
    cluster = (doc.get("server_configs") or {}).get("tikv")
    return {_address(s)[:2]: tiup_effective(cluster, s.get("config")) for s in _servers(doc)}


def _node(host: str, port: int, status: int) -> EntityRef:
    return EntityRef(
        kind="node", id=f"{host}:{port}", node=f"{host}:{port}", status_address=f"{host}:{status}"
    )


def _skeleton(doc: Any) -> Any:
    """The topology without the TiKV configs: everything the patch must leave as it was."""
    rest = copy.deepcopy(doc)
    if isinstance(rest.get("server_configs"), dict):
        rest["server_configs"].pop("tikv", None)
        if not rest["server_configs"]:
            rest.pop("server_configs")
    for server in _servers(rest):
        server.pop("config", None)
    return rest


def _changes(name: str, doc: Any) -> tuple[list[Change], dict[tuple[str, int], dict[str, Any]]]:
    """A cluster-wide change set and per-node changes (different values on different instances); the proposed
    values per instance."""
    servers = [_address(s) for s in _servers(doc)]
    wide = [
        Change(target="tikv", key="storage.block-cache.capacity", proposed="8GiB", reason="r"),
        Change(target="tikv", key="readpool.unified.max-thread-count", proposed=10, reason="r"),
        Change(target="tikv", key="rocksdb.defaultcf.compression-per-level", proposed=LEVELS, reason="r"),
    ]
    if name == "multi-dc.yaml":
        # already in server_configs.tikv; and set only in 10.0.1.23's own config, which wins there
        wide += [
            Change(
                target="tikv", key="server.grpc-compression-type", current="gzip", proposed="none", reason="r"
            ),
            Change(target="tikv", key="raftstore.raft-min-election-timeout-ticks", proposed=900, reason="r"),
        ]
    per_node: list[Change] = []
    for index, (host, port, status) in enumerate(servers):
        per_node.append(
            Change(
                target="tikv",
                key="storage.scheduler-worker-pool-size",
                proposed=4 + index,
                reason="r",
                entity=_node(host, port, status),
            )
        )
        if index % 2 == 0:
            per_node.append(
                Change(
                    target="tikv",
                    key="raftstore.store-io-pool-size",
                    proposed=1 + index // 2,
                    reason="r",
                    entity=_node(host, port, status),
                )
            )
    if name == "multi-dc.yaml":  # a key 10.0.1.23 sets in its own config, on that instance only
        per_node.append(
            Change(
                target="tikv",
                key="raftstore.raft-max-election-timeout-ticks",
                current=1020,
                proposed=1100,
                reason="r",
                entity=_node("10.0.1.23", 20160, 20180),
            )
        )
    expected: dict[tuple[str, int], dict[str, Any]] = {}
    for host, port, _ in servers:
        mine = {c.key: c.proposed for c in wide}
        mine.update({c.key: c.proposed for c in per_node if c.entity and c.entity.node == f"{host}:{port}"})
        expected[(host, port)] = mine
    return wide + per_node, expected


@pytest.mark.parametrize("name", ["topology.example.yaml", "multi-dc.yaml", "minimal.yaml"])
def test_each_instance_runs_exactly_the_proposed_values_after_tiups_precedence(name: str) -> None:
    text = (DATA / name).read_text()
    before_doc = load_12(text)
    changes, expected = _changes(name, before_doc)
    nodes = tuple(
        PatchTarget(status_address=f"{h}:{s}", address=f"{h}:{p}", name=f"{h}:{p}")
        for h, p, s in map(_address, _servers(before_doc))
    )
    result = patch_topology(text, changes, nodes, name)
    after_doc = load_12(result.text)
    before, after = _views(before_doc), _views(after_doc)
    assert before.keys() == after.keys() == expected.keys()
    for instance, proposed in expected.items():
        # exactly the proposed values, every other key as it was
        assert {k: after[instance].get(k) for k in proposed} == proposed, instance
        assert {k: v for k, v in after[instance].items() if k not in proposed} == {
            k: v for k, v in before[instance].items() if k not in proposed
        }, instance
    assert after[next(iter(after))]["rocksdb.defaultcf.compression-per-level"] == LEVELS  # strings, not false
    assert _skeleton(after_doc) == _skeleton(before_doc)  # hosts, ports, dirs, other components: unchanged
    for line in text.splitlines():  # comments kept
        if line.strip().startswith("#"):
            assert line in result.text, line
    # ... and still above the line they document: keys added to a map (server_configs.tikv, an instance's config,
    # a new config or server_configs) go above the comment lines that followed it (the next instance's
    # "# # The ip address of the TiKV Server.", multi-dc's "# tiflash-learner:", a section's heading)
    lines, out = text.splitlines(), result.text.splitlines()
    for comment, documented in zip(lines, lines[1:], strict=False):
        if (
            comment.strip().startswith("#")
            and documented.strip()
            and not documented.strip().startswith("#")
            and lines.count(documented) == 1
            and out.count(documented) == 1
        ):
            assert out[out.index(documented) - 1] == comment, (comment, documented)
    assert not any("no tikv_servers entry" in n for n in result.notes)


def test_a_cluster_wide_change_reaches_the_instance_whose_own_config_sets_the_key() -> None:
    # multi-dc.yaml: 10.0.1.23's config sets raftstore.raft-min-election-timeout-ticks: 1000, which TiUP lays over
    # server_configs.tikv; a cluster-wide change only there would leave 1000 on 10.0.1.23.
    text = (DATA / "multi-dc.yaml").read_text()
    change = Change(
        target="tikv", key="raftstore.raft-min-election-timeout-ticks", current=1000, proposed=900, reason="r"
    )
    result = patch_topology(text, [change], ())
    views = _views(load_12(result.text))
    assert {v["raftstore.raft-min-election-timeout-ticks"] for v in views.values()} == {900}
    assert any("10.0.1.23" in n and "raft-min-election-timeout-ticks" in n for n in result.notes)


def test_a_portless_instance_keeps_its_config_to_itself() -> None:
    # minimal.yaml: three port-less instances (TiUP's default port 20160); a change for 10.0.1.18 lands on it only
    text = (DATA / "minimal.yaml").read_text()
    change = Change(
        target="tikv",
        key="raftstore.store-io-pool-size",
        proposed=2,
        reason="r",
        entity=_node("10.0.1.18", 20160, 20180),
    )
    nodes = tuple(
        PatchTarget(status_address=f"10.0.1.{i}:20180", address=f"10.0.1.{i}:20160") for i in (17, 18, 19)
    )
    views = _views(load_12(patch_topology(text, [change], nodes).text))
    assert [views[(f"10.0.1.{i}", 20160)].get("raftstore.store-io-pool-size") for i in (17, 18, 19)] == [
        None,
        2,
        None,
    ]


@pytest.mark.parametrize(
    ("cluster", "name"),
    [("prod-east", "prod-east"), ("tidb_prod.v2", "tidb_prod.v2"), ("demo-prod (demo)", "<tiup-cluster-name>"),
     ("it's; rm -rf /", "<tiup-cluster-name>")],
)
def test_the_command_names_the_cluster_and_the_file_one_shell_word_each(cluster: str, name: str) -> None:
    # TiUP docs (Modify the configuration): edit-config, then reload -R tikv; `--topology-file` (TiUP v1.8.0+)
    # and a long --transfer-timeout (docs/reference/rolling-restart.md#config-changes-that-need-a-restart)
    # takes the patched file instead of an editor. A name TiUP could not have (letters, digits, '-', '_', '.')
    # becomes a placeholder, quoted so the shell neither runs nor redirects anything.
    text = (DATA / "minimal.yaml").read_text()
    change = Change(target="tikv", key="storage.block-cache.capacity", proposed="8GiB", reason="r")
    command = patch_topology(text, [change], (), cluster=cluster, topology_file="my topology.yaml").command
    edit, reload = command.split(" && ")
    assert shlex.split(edit) == ["tiup", "cluster", "edit-config", name, "--topology-file", "my topology.yaml"]
    assert shlex.split(reload) == ["tiup", "cluster", "reload", name, "-R", "tikv", "--transfer-timeout", "3600"]
    for step in (edit, reload):
        assert shlex.join(shlex.split(step)) == step
    # no TiUP name given: the placeholder, and a note that names it with Headroom's name for the cluster
    unnamed = patch_topology(text, [change], (), display_name="demo-prod")
    assert shlex.split(unnamed.command.split(" && ")[0])[3] == "<tiup-cluster-name>"
    assert any("<tiup-cluster-name>" in n and "'demo-prod'" in n and "tiup cluster list" in n for n in unnamed.notes)

"""The TiUP artefact applied to a topology: after TiUP's precedence every instance runs exactly the
proposed values, every other key of every instance is as before, and comments stay.

TiUP's rule (topology file reference): server_configs.tikv applies to every TiKV; an instance's own config wins.
data/topology-multi-dc.yaml has the shapes TiUP's examples have (see its header): dotted and nested keys, two
instances on one host, per-instance overrides, comments.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import PatchTarget
from headroom.domain.tikvconf.parse import tiup_topology_view
from headroom.domain.tikvconf.tiup import patch_topology

TOPOLOGY = (Path(__file__).parent / "data" / "topology-multi-dc.yaml").read_text()
INSTANCES = [("10.0.1.16", 20160), ("10.0.1.16", 20161), ("10.0.1.17", 20160), ("10.0.1.18", 20160)]
NODES = tuple(
    PatchTarget(status_address=f"{h}:{p + 20}", address=f"{h}:{p}", name=f"{h}:{p}") for h, p in INSTANCES
)


def _node(address: str) -> EntityRef:
    host, port = address.split(":")
    status = f"{host}:{int(port) + 20}"
    return EntityRef(kind="node", id=address, node=address, status_address=status)


def test_cluster_wide_and_per_node_changes_reach_every_instance_through_tiups_precedence() -> None:
    changes = [
        # cluster-wide: server_configs.tikv has it ("24GiB"), and 10.0.1.16:20161 overrides it ("20GiB")
        Change(target="tikv", key="storage.block-cache.capacity", current="24GiB", proposed="16GiB", reason="r"),
        # cluster-wide, new: nested under rocksdb nowhere yet
        Change(target="tikv", key="rocksdb.max-background-jobs", current=8, proposed=6, reason="r"),
        # one node: 10.0.1.18 has no config of its own yet
        Change(target="tikv", key="raftstore.apply-pool-size", current=3, proposed=4, reason="r",
               entity=_node("10.0.1.18:20160")),
    ]
    before = tiup_topology_view(TOPOLOGY)
    result = patch_topology(TOPOLOGY, changes, NODES)
    after = tiup_topology_view(result.text)
    for host, port in INSTANCES:
        old, new = before.for_instance(host, port), after.for_instance(host, port)
        assert new["storage.block-cache.capacity"] == "16GiB", (host, port)
        assert new["rocksdb.max-background-jobs"] == 6
        assert new["raftstore.apply-pool-size"] == (4 if host == "10.0.1.18" else 3)
        changed = {c.key for c in changes}
        assert {k: v for k, v in new.items() if k not in changed} == {k: v for k, v in old.items() if k not in changed}
    # the override on 10.0.1.16:20161 was changed too, and said so
    assert any("10.0.1.16:20161" in n and "storage.block-cache.capacity" in n for n in result.notes)
    # edited in place: one spelling of each key, the comments and other sections as they were
    assert result.text.count("storage.block-cache.capacity") == TOPOLOGY.count("storage.block-cache.capacity")
    for line in TOPOLOGY.splitlines():
        if line.strip().startswith("#"):
            assert line in result.text
    assert 'log.slow-threshold: 300' in result.text and "replication.max-replicas: 5" in result.text
    # a minimal diff: every changed line is a changed key's, a new `config:` for it, or the flow map ruamel
    # re-spaces ({ a } -> {a})
    edited = [line for line in difflib.unified_diff(TOPOLOGY.splitlines(), result.text.splitlines(), lineterm="")
              if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert edited and all(
        any(c.key in line for c in changes) or "server.labels: {" in line or line[1:].strip() in ("config:", "")
        for line in edited
    ), edited


def test_a_node_without_an_entry_is_said_not_invented() -> None:
    stray = Change(target="tikv", key="raftstore.apply-pool-size", proposed=4, reason="r",
                   entity=_node("10.0.9.9:20160"))
    result = patch_topology(TOPOLOGY, [stray], NODES)
    assert any("no tikv_servers entry" in n for n in result.notes)
    assert tiup_topology_view(result.text).for_instance("10.0.1.18", 20160) == tiup_topology_view(
        TOPOLOGY
    ).for_instance("10.0.1.18", 20160)


def test_a_config_shared_through_an_anchor_is_not_changed_for_its_other_instances() -> None:
    # data/topology-anchors.yaml: 10.0.2.1's config is the anchor &zone-a, 10.0.2.3's is the alias *zone-a and
    # 10.0.2.2 merges it (<<: *zone-a) with its own raftstore.store-io-pool-size: 2.
    text = (Path(__file__).parent / "data" / "topology-anchors.yaml").read_text()
    nodes = tuple(PatchTarget(status_address=f"10.0.2.{i}:20180", address=f"10.0.2.{i}:20160") for i in (1, 2, 3))
    change = Change(target="tikv", key="raftstore.store-io-pool-size", current=1, proposed=3, reason="r",
                    entity=EntityRef(kind="node", id="10.0.2.1:20160", status_address="10.0.2.1:20180"))
    result = patch_topology(text, [change], nodes)
    after = tiup_topology_view(result.text)
    assert [after.for_instance(f"10.0.2.{i}", 20160)["raftstore.store-io-pool-size"] for i in (1, 2, 3)] == [3, 2, 1]
    assert after.for_instance("10.0.2.3", 20160)["server.labels"] == {"zone": "us-east-1a", "since": "2024-05-01"}
    assert any("YAML anchor" in n for n in result.notes)

"""Config is cluster-wide (docs/thresholds/cluster-config.md): per-node tikv.toml findings become one finding per group of like stores.

Sources for the cases:
- TiUP topology reference: `server_configs.tikv` applies to every TiKV; an instance's own `config` under
  `tikv_servers` takes precedence for that instance.
- TiDB Operator: `spec.tikv.config` is one TOML string shared by every TiKV pod (no per-pod form).
- m6i.2xlarge: 8 vCPUs, 32 GiB; r6i.4xlarge: 16 vCPUs, 128 GiB (AWS instance type pages, docs/reference/ec2-ebs-limits.md).
- storage.scheduler-worker-pool-size defaults to clamp(vCPUs, 1, 4) = 4 on both (docs/reference/tikv-config.md#keys-and-defaults); a pool "should be
  less than total CPU cores" (TiKV config template): budget 8 − 1 = 7 threads on m6i.2xlarge, 16 − 1 = 15 on
  r6i.4xlarge.
Headroom's own choices (groups by instance type and role, the largest need within every budget) are in
docs/thresholds/cluster-config.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from advisor_fixtures import SCENARIOS, START, scenario_snapshot
from headroom.domain.advisor import Finding, advise
from headroom.domain.advisor.consolidate import GUIDE, consolidate_config, store_groups
from headroom.domain.advisor.context import Context
from headroom.domain.snapshot.scenario import scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

RULE = "thread-pool-saturation"
KEY = "storage.scheduler-worker-pool-size"


def _variant(mutate: Callable[[dict[str, Any]], None]) -> Snapshot:
    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / "thread-pool-saturation.yaml").read_text())
    mutate(doc)
    return simulate(scenario_from_dict(doc), hours=24.0, seed=0, start=START)


def _mixed(doc: dict[str, Any]) -> None:
    """2 m6i.2xlarge + 1 r6i.4xlarge, same disks and the same per-node load."""
    (tikv,) = doc["nodes"]
    doc["nodes"] = [{**tikv, "count": 2}, {**tikv, "name": "big", "count": 1, "instance_type": "r6i.4xlarge"}]


def _operator(doc: dict[str, Any]) -> None:
    _mixed(doc)
    doc["cluster"]["deployment"] = "operator"


def _needs(f: Finding) -> dict[str, Any]:
    return {n.node: n.needs[KEY] for n in f.evidence.per_node}


def test_three_identical_nodes_get_one_finding_and_the_largest_need() -> None:
    snapshot = scenario_snapshot("thread-pool-saturation")
    per_node = advise(snapshot, rules=[RULE], cluster_wide=False)
    # What the rule says one store at a time: three findings, and, sized per node, 6, 5 and 5 threads.
    assert len(per_node) == 3
    own = {f.entity.id: f.changes[0].proposed for f in per_node}
    (finding,) = advise(snapshot, rules=[RULE])
    assert finding.entity.kind == "cluster"
    assert finding.dedup_key == f"{RULE}/thread-pool-saturation/cluster:tikv@m6i.2xlarge/scheduler"
    # Per-node evidence: every store's own measures and need, as the rule made them.
    assert _needs(finding) == own
    assert [n.instance_type for n in finding.evidence.per_node] == ["m6i.2xlarge"] * 3
    assert all(n.measures and n.share_of_window for n in finding.evidence.per_node)
    # One value: the largest need (6 > 5), within every store's budget of 8 − 1 = 7 threads.
    (change,) = finding.changes
    assert change.proposed == max(own.values()) <= 7
    assert change.current == 4  # clamp(8 vCPUs, 1, 4), docs/reference/tikv-config.md#keys-and-defaults
    # The group is every TiKV with the same value today: one change for the whole cluster (no node).
    assert change.entity is not None and change.entity.kind == "cluster" and change.entity.tikv_node() is None
    assert finding.title.startswith("tikv-1, tikv-2, tikv-3 (m6i.2xlarge stores): ")
    assert GUIDE in finding.sources
    if len(set(own.values())) > 1:
        assert any("the largest need" in note for note in finding.notes)


def test_a_store_that_did_not_fire_gets_the_value_too() -> None:
    snapshot = scenario_snapshot("thread-pool-saturation")
    ctx = Context(snapshot)
    per_node = advise(snapshot, rules=[RULE], cluster_wide=False)
    two = [f for f in per_node if f.entity.id != "tikv-3"]
    (finding,) = consolidate_config(two, ctx)
    assert [n.node for n in finding.evidence.per_node] == ["tikv-1", "tikv-2"]
    assert finding.title.startswith("tikv-1, tikv-2 (2 of 3 m6i.2xlarge stores): ")
    (change,) = finding.changes  # still one change for the cluster: tikv-3 is the same kind of host
    assert change.entity is not None and change.entity.kind == "cluster"


def _own_need(ctx: Context, like: Finding, node_id: str, threads: int) -> Finding:
    """The rule's per-node finding as it would read on `node_id` needing `threads` (input built for the case)."""
    entity = ctx.entity_for_node(node_id)
    change = like.changes[0].model_copy(update={"entity": entity, "proposed": threads})
    return like.model_copy(
        update={
            "entity": entity,
            "changes": [change],
            "title": like.title.replace(f"{like.entity.id}: ", f"{node_id}: ", 1),
            "dedup_key": like.dedup_key.replace(f"node:{like.entity.id}/", f"node:{node_id}/"),
        }
    )


def test_mixed_instance_types_with_tiup_are_two_groups() -> None:
    snapshot = _variant(_mixed)
    ctx = Context(snapshot)
    assert {g.id for g in store_groups(ctx).values()} == {"tikv@m6i.2xlarge", "tikv@r6i.4xlarge"}
    # The simulated load saturates the two m6i.2xlarge (4 threads on 8 vCPUs) but not the r6i.4xlarge.
    (small,) = advise(snapshot, rules=[RULE])
    assert small.dedup_key == f"{RULE}/thread-pool-saturation/cluster:tikv@m6i.2xlarge/scheduler"
    assert sorted(_needs(small)) == ["tikv-1", "tikv-2"]
    # Not every TiKV: one value, as per-instance changes (TiUP tikv_servers[].config); the r6i.4xlarge untouched.
    assert sorted(c.entity.node or "" for c in small.changes if c.entity) == ["tikv-1", "tikv-2"]
    assert {c.proposed for c in small.changes} == {max(_needs(small).values())}
    assert max(_needs(small).values()) <= 7  # m6i.2xlarge: 8 − 1
    assert any("tikv_servers[].config" in note for note in small.notes)
    # Had the r6i.4xlarge needed 10 threads (within its 16 − 1 = 15): its own group and value.
    per_node = advise(snapshot, rules=[RULE], cluster_wide=False)
    both = {
        f.dedup_key.split("/")[2]: f
        for f in consolidate_config([*per_node, _own_need(ctx, per_node[0], "big-1", 10)], ctx)
    }
    assert set(both) == {"cluster:tikv@m6i.2xlarge", "cluster:tikv@r6i.4xlarge"}
    big = both["cluster:tikv@r6i.4xlarge"]
    assert [(c.entity.node if c.entity else None, c.proposed) for c in big.changes] == [("big-1", 10)]
    assert [c.proposed for c in both["cluster:tikv@m6i.2xlarge"].changes] == [max(_needs(small).values())] * 2


def test_operator_gets_one_value_every_pod_can_take() -> None:
    snapshot = _variant(_operator)
    ctx = Context(snapshot)
    (finding,) = advise(snapshot, rules=[RULE])
    assert finding.dedup_key == f"{RULE}/thread-pool-saturation/cluster:tikv/scheduler"
    assert sorted(_needs(finding)) == ["tikv-1", "tikv-2"]
    # One value for every pod. The r6i.4xlarge did not fire and already runs 8 threads (TiKV's default on 16
    # vCPUs): a raise does not lower it, but 8 is beyond the m6i.2xlarge's 8 − 1 = 7, so every pod gets 7.
    assert max(_needs(finding).values()) <= 7
    assert [(c.entity.node if c.entity else None, c.current, c.proposed) for c in finding.changes] == [
        ("tikv-1", 4, 7),
        ("tikv-2", 4, 7),
        ("big-1", 8, 7),
    ]
    assert any("big-1 already runs with 8" in note for note in finding.notes)
    assert any("big-1 has 8 today" in note for note in finding.notes)  # the one value lowers it: said so
    assert any("spec.tikv.config" in note and "per-pod" in note for note in finding.notes)
    # Had the r6i.4xlarge needed 10 threads (within its 15): beyond the m6i.2xlarge's 8 − 1 = 7, so every pod
    # gets 7, the most the smallest host takes, and the finding says so.
    per_node = advise(snapshot, rules=[RULE], cluster_wide=False)
    (cut,) = consolidate_config([*per_node, _own_need(ctx, per_node[0], "big-1", 10)], ctx)
    assert {c.proposed for c in cut.changes} == {7}
    assert any("budget of 7" in note for note in cut.notes)
    # The title states the one value proposed and the store that bounds it, not big-1's own need of 10.
    assert cut.title.endswith(
        f": set {KEY} to 7 on every store (one value for the group, bounded by tikv-1: the most its m6i.2xlarge "
        "with 8 vCPUs would get on its own)"
    ), cut.title
    assert "to 10" not in cut.title
    assert _needs(cut)["big-1"] == 10  # the pod's own need stays in its evidence


def test_findings_that_change_no_tikv_key_pass_through() -> None:
    snapshot = scenario_snapshot("volume-iops-ceiling")
    ctx = Context(snapshot)
    aws_only = [
        f
        for f in advise(snapshot, cluster_wide=False)
        if not any(c.target == "tikv" for c in [*f.changes, *(c for o in f.options for c in o.changes)])
    ]
    assert aws_only
    assert consolidate_config(aws_only, ctx) == aws_only


def _unlike_memory(doc: dict[str, Any]) -> None:
    """One TiDB Operator cluster of 3 r6i.xlarge (4 vCPUs, 32 GiB) and 3 r6i.2xlarge (8 vCPUs, 64 GiB): AWS's
    memory-optimized instance table (https://aws.amazon.com/ec2/instance-types/r6i/). The scenario's 8 GiB block
    cache is 25% and 12.5% of their memory, under the config template's 30%-50%."""
    (tikv,) = doc["nodes"]
    doc["nodes"] = [{**tikv, "name": "small", "instance_type": "r6i.xlarge"},
                    {**tikv, "name": "big", "instance_type": "r6i.2xlarge"}]
    doc["cluster"]["deployment"] = "operator"


def test_one_value_for_unlike_stores_is_what_the_smallest_store_would_get_alone() -> None:
    # TiKV's default block cache is 45% of memory (docs/reference/tikv-config.md#keys-and-defaults): alone, a
    # 32 GiB store is raised to floor(14.4) = 14 GiB and a 64 GiB store to floor(28.8) = 28 GiB. One
    # spec.tikv.config for all six pods must be safe for the 32 GiB ones: 14 GiB, not 50% of their memory (16).
    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / "block-cache-memory-rich.yaml").read_text())
    _unlike_memory(doc)
    snapshot = simulate(scenario_from_dict(doc), hours=24.0, seed=0, start=START)
    key = "storage.block-cache.capacity"
    alone = {f.entity.id: f.changes[0].proposed for f in advise(snapshot, rules=["block-cache-size"], cluster_wide=False)}
    assert alone == {**{f"small-{i}": "14GiB" for i in (1, 2, 3)}, **{f"big-{i}": "28GiB" for i in (1, 2, 3)}}
    (finding,) = advise(snapshot, rules=["block-cache-size"])
    assert {(c.key, c.proposed) for c in finding.changes} == {(key, "14GiB")}
    # the finding names the store that bounds the value
    assert any("small-1 bounds the group's one value" in note for note in finding.notes), finding.notes
    # The title states the one value proposed (14 GiB, written as the sentence writes sizes) and the store that
    # bounds it, and reads from that store's own situation (8 GiB of its 32 GiB); never the 64 GiB stores' 28 GiB.
    assert finding.title.endswith(
        f": set {key} to 14 GiB on every store (one value for the group, bounded by small-1: the most its "
        "r6i.xlarge with 32 GiB would get on its own)"
    ), finding.title
    assert "block cache is 8 GiB of 32 GiB memory (25%)" in finding.title
    assert "28" not in finding.title and "14GiB" not in finding.title

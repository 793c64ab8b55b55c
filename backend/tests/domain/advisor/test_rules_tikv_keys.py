"""The TiKV rule families together: valid keys, online flags from tikvconf, consistent directions per node."""

from __future__ import annotations

from functools import lru_cache

import pytest
from advisor_fixtures import SCENARIOS, START, scenario_snapshot
from headroom.domain.advisor import Finding, advise
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.engine import Rule, discover_rules
from headroom.domain.model import Change
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate
from headroom.domain.tikvconf import can_change_online, is_valid_key
from headroom.domain.tikvconf.keys import check_value
from headroom.domain.units import parse_size

TIKV_RULES = (
    "block-cache-size",
    "block-size",
    "thread-pool-saturation",
    "compaction-rate-limit",
    "raft-dedicated-volume",
    "compaction-io-titan",
)
SCENARIO_NAMES = sorted(p.stem for p in SCENARIOS.glob("*.yaml"))


def _number(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(parse_size(value))
        except ValueError:
            return None
    return None


def _direction(change: Change) -> int | None:
    """+1 raise, -1 lower, None when current or proposed is not a number or a size."""
    cur, new = _number(change.current), _number(change.proposed)
    if cur is None or new is None:
        return None
    return (new > cur) - (new < cur)


def _rules() -> dict[str, Rule]:
    return {r.id: r for r in discover_rules() if r.id in TIKV_RULES}


@lru_cache(maxsize=64)
def _raw(name: str) -> tuple[Finding, ...]:
    """Every finding of the TiKV rules on a scenario, before the engine resolves conflicts."""
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")  # demo.yaml has no start of its own
    ctx = Context(simulate(scenario, hours=24.0, seed=0, start=scenario.start or START))
    return tuple(f for rule in _rules().values() for f in rule.evaluate(ctx))


def test_every_tikv_rule_is_discovered_once_with_its_family() -> None:
    rules = _rules()
    assert sorted(rules) == sorted(TIKV_RULES)
    assert {r.family for r in rules.values()} == {"tikv"}


@pytest.mark.parametrize("rule_id", TIKV_RULES)
def test_every_key_a_rule_can_propose_exists_in_tikv(rule_id: str) -> None:
    rule = _rules()[rule_id]
    assert rule.tikv_keys
    for key in rule.tikv_keys:
        assert is_valid_key(key), f"{rule_id} can propose {key}, which the TiKV template does not have"


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_emitted_changes_are_valid_and_flagged_by_tikvconf(name: str) -> None:
    rules = _rules()
    for f in _raw(name):
        changes = [c for option in f.options for c in option.changes] + list(f.changes)
        for c in changes:
            if c.target == "aws":
                assert c.key in rules[f.rule].aws_actions
                continue
            assert c.key in rules[f.rule].tikv_keys
            assert is_valid_key(c.key)
            check_value(c.key, c.proposed)  # a size is a size, a bool a bool (template's kind)
            assert c.online == can_change_online(c.key, c.current, c.proposed)
            assert c.proposed != c.current
        assert all(c.entity is not None for c in f.changes)  # the patcher's records, each naming its entity


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_no_node_gets_opposite_advice_from_the_tikv_rules(name: str) -> None:
    """Before the engine's conflict resolution: one direction per (node, key), one finding per rule and node."""
    directions: dict[tuple[str, str], set[int]] = {}
    per_rule_node: dict[tuple[str, str], int] = {}
    for f in _raw(name):
        if f.rule != "thread-pool-saturation":  # one finding per pool there
            per_rule_node[(f.rule, f.entity.id)] = per_rule_node.get((f.rule, f.entity.id), 0) + 1
        for c in f.changes:
            if c.target != "tikv":
                continue
            d = _direction(c)
            if d is not None:
                directions.setdefault((f.entity.id, c.key), set()).add(d)
    assert all(len(v) == 1 for v in directions.values()), directions
    assert all(n == 1 for n in per_rule_node.values()), per_rule_node


@pytest.mark.parametrize("name", ["healthy"])
def test_healthy_raises_nothing_from_the_tikv_rules(name: str) -> None:
    assert [f for f in advise(scenario_snapshot(name)) if f.rule in TIKV_RULES] == []


def test_each_rule_fires_on_its_own_scenario() -> None:
    expected = {
        "block-cache-size": ("block-cache-read-heavy-at-ceiling", "block-cache-memory-rich"),
        "block-size": ("block-size",),
        "thread-pool-saturation": ("thread-pool-saturation",),
        "compaction-rate-limit": ("compaction-rate-limit",),
        "raft-dedicated-volume": ("raft-dedicated-volume",),
        "compaction-io-titan": ("compaction-io-titan",),
    }
    for rule, names in expected.items():
        for name in names:
            assert [f for f in _raw(name) if f.rule == rule], f"{rule} is silent on {name}"


@pytest.mark.parametrize("name", [n for n in SCENARIO_NAMES if n.startswith("near-miss-tikv-")])
def test_tikv_near_misses_raise_nothing_from_the_tikv_rules(name: str) -> None:
    """Each near-miss-tikv-*.yaml sits at ~89% of one TiKV rule's threshold: no TiKV rule may fire."""
    assert [(f.rule, f.entity.id) for f in _raw(name)] == []

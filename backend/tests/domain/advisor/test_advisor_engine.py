"""The engine: rule discovery, the rule catalog, keys every rule may emit, conflict resolution, conversion."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from advisor_fixtures import AWS_RULES, scenario_findings
from headroom.domain.advisor import (
    Finding,
    Rule,
    advise,
    discover_rules,
    make_dedup_key,
    resolve_conflicts,
    rule_catalog,
)
from headroom.domain.advisor.engine import sort_findings
from headroom.domain.model import Change, EntityRef, Evidence, Impact
from headroom.domain.tikvconf import is_valid_key, target_node

# The AWS actions the patcher renders (tikvconf.render) plus the RAID 0 option (options only, never primary).
AWS_ACTIONS = {"volume.type", "volume.iops", "volume.throughput", "volume.size", "instance.type"}
OPTION_ONLY_ACTIONS = {"volume.raid0-stripes"}
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def test_every_aws_rule_is_discovered_once() -> None:
    ids = [r.id for r in discover_rules()]
    assert len(ids) == len(set(ids))
    assert set(AWS_RULES) <= set(ids)


def test_rule_catalog_shape() -> None:
    catalog = {r["id"]: r for r in rule_catalog()}
    for rule_id in AWS_RULES:
        entry = catalog[rule_id]
        assert entry["description"]
        assert entry["aws_actions"]
        assert set(entry["aws_actions"]) <= AWS_ACTIONS | OPTION_ONLY_ACTIONS
    assert catalog["instance-ebs-bandwidth-bound"]["aws_actions"] == ["instance.type"]


@pytest.mark.parametrize("rule", discover_rules(), ids=lambda r: r.id)
def test_every_declared_tikv_key_exists_in_the_template(rule: Rule) -> None:
    for key in rule.tikv_keys:
        assert is_valid_key(key), f"{rule.id}: {key} is not in tikv-config-template.toml"


SCENARIOS = [
    "volume-iops-ceiling",
    "volume-throughput-ceiling",
    "gp2-burst-depletion",
    "gp2-to-gp3",
    "volume-overprovisioned",
    "instance-ebs-bandwidth-bound",
    "instance-ebs-burst-depletion",
    "pingcap-aws-m5-2xlarge-io1",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_emitted_changes_are_declared_and_valid(scenario: str) -> None:
    rules = {r.id: r for r in discover_rules()}
    findings = scenario_findings(scenario)
    assert findings
    for f in findings:
        rule = rules[f.rule]
        for option in [*f.options, None]:
            changes = option.changes if option is not None else f.changes
            for c in changes:
                if c.target == "tikv":
                    assert is_valid_key(c.key) and c.key in rule.tikv_keys
                else:
                    assert c.key in rule.aws_actions
                    assert c.key in AWS_ACTIONS or (option is not None and c.key in OPTION_ONLY_ACTIONS)
        # the patcher reads the JSON form, validated by the same model
        converted = [Change.model_validate(c) for c in f.to_dict()["changes"]]
        assert [c.key for c in converted] == [c.key for c in f.changes]
        for c in converted:
            if c.target == "aws":
                assert c.entity is not None and (c.entity.volume() or c.entity.instance())


def test_dedup_keys_are_stable_across_days_and_unique() -> None:
    from datetime import timedelta

    from advisor_fixtures import SCENARIOS
    from headroom.domain.snapshot.scenario import load_scenario
    from headroom.domain.snapshot.simulate import simulate

    today = scenario_findings("volume-iops-ceiling")
    keys = [f.dedup_key for f in today]
    assert len(keys) == len(set(keys))
    assert all(k.startswith(f.rule + "/") for k, f in zip(keys, today, strict=True))
    # the same fleet a day later, other noise: the same conditions give the same keys (no numbers in them)
    scenario = load_scenario(SCENARIOS / "volume-iops-ceiling.yaml")
    tomorrow = advise(simulate(scenario, hours=24, seed=7, start=T0 + timedelta(days=1)))
    ceiling_keys = {f.dedup_key for f in tomorrow if f.rule == "volume-iops-ceiling"}
    assert ceiling_keys == {f.dedup_key for f in today if f.rule == "volume-iops-ceiling"}


# ---------------------------------------------------------------------------------------------------------
# Conflict resolution on hand-made findings


def _finding(
    rule: str, severity: str, changes: list[Change], node: str = "tikv-1", confidence: float = 0.7
) -> Finding:
    entity = EntityRef(kind="node", id=node, node=node)
    return Finding(
        rule=rule,
        severity=severity,  # type: ignore[arg-type]
        entity=entity,
        title=f"{rule} on {node}",
        evidence=Evidence(window_start=T0, window_end=T0, step_seconds=60, condition="test"),
        why="test",
        changes=changes,
        impact=Impact(summary="test"),
        confidence=confidence,
        dedup_key=make_dedup_key(rule, "c", entity),
    )


def _cache(current: str, proposed: str) -> Change:
    return Change(
        target="tikv", key="storage.block-cache.capacity", current=current, proposed=proposed
    )


def test_opposite_directions_keep_the_higher_ranked_finding_only() -> None:
    lower = _finding("a-shrink", "critical", [_cache("14GiB", "4GiB")])
    raise_ = _finding("b-grow", "info", [_cache("14GiB", "28GiB")])
    out = resolve_conflicts([raise_, lower])
    assert [f.rule for f in out] == ["a-shrink"]
    assert any("overrides b-grow" in n for n in out[0].notes)


def test_same_direction_converges_on_the_furthest_value() -> None:
    a = _finding("a", "warning", [_cache("14GiB", "8GiB")], confidence=0.9)
    b = _finding("b", "warning", [_cache("14GiB", "4GiB")], confidence=0.5)
    out = {f.rule: f for f in resolve_conflicts([a, b])}
    assert out["a"].changes[0].proposed == "4GiB"
    assert out["b"].changes[0].proposed == "4GiB"


def test_different_nodes_do_not_conflict() -> None:
    a = _finding("a", "warning", [_cache("14GiB", "4GiB")], node="tikv-1")
    b = _finding("b", "warning", [_cache("14GiB", "28GiB")], node="tikv-2")
    assert len(resolve_conflicts([a, b])) == 2


def test_non_numeric_conflict_drops_the_lower_ranked_change() -> None:
    vol = EntityRef(kind="volume", id="vol-1", volume_id="vol-1")
    to_gp3 = Change(target="aws", key="volume.type", current="gp2", proposed="gp3", entity=vol)
    to_io2 = Change(target="aws", key="volume.type", current="gp2", proposed="io2", entity=vol)
    keep = Change(target="aws", key="volume.iops", current=None, proposed=6000, entity=vol)
    a = _finding("a", "critical", [to_gp3])
    b = _finding("b", "warning", [to_io2, keep])
    out = {f.rule: f for f in resolve_conflicts([a, b])}
    assert [c.proposed for c in out["b"].changes] == [6000]
    assert any("dropped conflicting" in n for n in out["b"].notes)


def test_supersession_and_dedup() -> None:
    a = _finding("winner", "warning", [])
    b = _finding("loser", "critical", [])
    dup = _finding("winner", "info", [])
    out = resolve_conflicts([a, b, dup], {"winner": ("loser",)})
    assert [(f.rule, f.severity) for f in out] == [("winner", "warning")]


def test_sorting_puts_critical_first() -> None:
    fs = [_finding("z", "info", []), _finding("a", "warning", []), _finding("m", "critical", [])]
    assert [f.severity for f in sort_findings(fs)] == ["critical", "warning", "info"]


def test_advise_with_a_custom_rule_and_unknown_rule() -> None:
    from advisor_fixtures import scenario_snapshot

    snap = scenario_snapshot("healthy")
    custom = Rule(id="always", description="test", evaluate=lambda ctx: [_finding("always", "info", [])])
    assert [f.rule for f in advise(snap, rules=[custom])] == ["always"]
    with pytest.raises(KeyError):
        advise(snap, rules=["no-such-rule"])


def test_a_change_without_an_entity_takes_the_findings_and_survives_json() -> None:
    f = _finding("a", "warning", [_cache("14GiB", "4GiB")])
    (change,) = f.changes
    assert change.entity == f.entity
    assert target_node(change) == "tikv-1"
    assert Finding.model_validate(f.to_dict()).changes == f.changes

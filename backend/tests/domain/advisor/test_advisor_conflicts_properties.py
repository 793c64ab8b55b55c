"""Property: after conflict resolution no (target, key, entity) is moved two ways or to two values."""

from __future__ import annotations

from datetime import UTC, datetime

from headroom.domain.advisor import Finding, make_dedup_key, resolve_conflicts
from headroom.domain.model import Change, EntityRef, Evidence, Impact
from hypothesis import given, settings
from hypothesis import strategies as st

T0 = datetime(2026, 1, 5, tzinfo=UTC)
KEYS = ["storage.block-cache.capacity", "rocksdb.rate-bytes-per-sec"]
NODES = ["tikv-1", "tikv-2"]
SIZES = ["1GiB", "2GiB", "4GiB", "8GiB", "16GiB"]

change_st = st.builds(
    lambda key, node, cur, new: Change(
        target="tikv", key=key, current=cur, proposed=new, entity=EntityRef(kind="node", id=node, node=node)
    ),
    st.sampled_from(KEYS),
    st.sampled_from(NODES),
    st.sampled_from(SIZES),
    st.sampled_from(SIZES),
)


def _finding(i: int, severity: str, changes: list[Change]) -> Finding:
    entity = EntityRef(kind="node", id=f"tikv-{i % 2 + 1}")
    return Finding(
        rule=f"rule-{i}",
        severity=severity,  # type: ignore[arg-type]
        entity=entity,
        title="t",
        evidence=Evidence(window_start=T0, window_end=T0, step_seconds=60, condition="c"),
        why="w",
        changes=changes,
        impact=Impact(summary="s"),
        confidence=0.5,
        dedup_key=make_dedup_key(f"rule-{i}", "c", entity),
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["critical", "warning", "info"]), st.lists(change_st, min_size=1, max_size=3)
        ),
        max_size=6,
    )
)
def test_one_value_per_changed_thing(raw: list[tuple[str, list[Change]]]) -> None:
    findings = [_finding(i, sev, changes) for i, (sev, changes) in enumerate(raw)]
    out = resolve_conflicts(findings)
    seen: dict[tuple[str, str, str], object] = {}
    for f in out:
        assert f.changes, "a finding whose changes all lost is dropped"
        for c in f.changes:
            assert c.entity is not None
            where = (c.target, c.key, c.entity.id)
            assert seen.setdefault(where, c.proposed) == c.proposed
    # idempotent: resolving again changes nothing
    again = resolve_conflicts(out)
    assert [(f.dedup_key, [c.proposed for c in f.changes]) for f in again] == [
        (f.dedup_key, [c.proposed for c in f.changes]) for f in out
    ]

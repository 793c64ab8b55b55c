"""A what-if re-run reuses the run's per-entity work only where the changes leave it alone (Context's `base`).

The grouping's what-if (advisor/groups.py) applies a candidate fix and runs the members' rules again on the
changed snapshot. Its context takes the run's context as `base`: each node's data path and per-node findings are
taken from the run when none of the node's volumes, instance or node entry changed, and computed again where they
did. Reuse is only allowed to save work: a re-run with `base` must give exactly the findings of a re-run without.

gp2-burst-depletion scenario (see test_advisor_groups.py): 3 nodes, each on its own 500 GiB gp2 data volume out
of burst (baseline 3 IOPS/GiB x 500 GiB = 1,500 IOPS, AWS gp2 docs). Moving one of them to gp3 at 3,000 IOPS
changes that node's data-path IOPS ceiling from 1,500 (out of credits) / 3,000 (bursting) to 3,000 at every
step; the two other nodes' data paths are the run's own objects.
"""

from __future__ import annotations

import numpy as np
from advisor_fixtures import scenario_snapshot
from headroom.domain.advisor.apply import apply_changes
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.engine import discover_rules, run_rules
from headroom.domain.advisor.rules._tikv_helpers import data_path
from headroom.domain.model import Change, EntityRef


def _to_gp3(volume_id: str) -> list[Change]:
    entity = EntityRef(kind="volume", id=volume_id, volume_id=volume_id)
    return [
        Change(target="aws", key="volume.type", current="gp2", proposed="gp3", entity=entity),
        Change(target="aws", key="volume.iops", current=None, proposed=3000, entity=entity),
        Change(target="aws", key="volume.throughput", current=None, proposed=125.0, entity=entity),
    ]


def test_only_the_changed_nodes_data_path_is_computed_again() -> None:
    snap = scenario_snapshot("gp2-burst-depletion")
    base = Context(snap)
    before = {n.id: data_path(base, n) for n in snap.nodes}
    changed = snap.nodes[0]
    after = apply_changes(snap, _to_gp3(changed.data_volume_ids[0]))
    ctx = Context(after, base=base)
    for n in after.nodes:
        path = data_path(ctx, n)
        assert path is not None
        if n.id == changed.id:
            old = before[n.id]
            assert path is not old and old is not None
            # gp3 3,000 IOPS at every step, where the gp2 ceiling fell to its 1,500 IOPS baseline out of credits.
            assert float(np.min(path.iops_ceiling)) == 3000.0
            assert float(np.min(old.iops_ceiling)) == 1500.0
        else:
            assert path is before[n.id]


def test_a_context_without_base_reuses_nothing() -> None:
    snap = scenario_snapshot("gp2-burst-depletion")
    base = Context(snap)
    node = snap.nodes[1]
    first = data_path(base, node)
    assert data_path(Context(snap), node) is not first
    assert data_path(Context(snap, base=base), node) is first


def test_a_rerun_with_base_finds_exactly_what_a_fresh_rerun_finds() -> None:
    # Every finding's own changes applied alone, the rules run again with and without the run's context.
    for name in ("gp2-burst-depletion", "block-cache-read-heavy-at-ceiling", "compaction-io-titan", "demo"):
        snap = scenario_snapshot(name)
        base = Context(snap)
        first = run_rules(snap, group=False)
        # Fill the base context as the run does (the engine passes its own context).
        for rule in discover_rules():
            rule.evaluate(base)
        for f in first.findings:
            if not f.changes:
                continue
            try:
                after = apply_changes(snap, f.changes)
            except ValueError:
                continue
            fresh = run_rules(after, group=False).findings
            reused = run_rules(after, group=False, base=base).findings
            assert [g.model_dump() for g in reused] == [g.model_dump() for g in fresh], (name, f.dedup_key)


def test_a_retyped_volume_keeps_its_observed_io_but_not_its_burst_series() -> None:
    # gp2 -> gp3: both are SSD volumes counted in 256 KiB chunks (AWS EBS I/O characteristics), and the what-if keeps
    # the observed I/O series, so the I/O view is the run's; BurstBalance is dropped, so the ceiling is new.
    snap = scenario_snapshot("gp2-burst-depletion")
    base = Context(snap)
    vid = snap.nodes[0].data_volume_ids[0]
    view, ceiling = base.volume_io(vid), base.volume_iops_ceiling(vid)
    after = apply_changes(snap, _to_gp3(vid))
    ctx = Context(after, base=base)
    assert ctx.volume_io(vid) is view
    assert ctx.series("volume", vid, "ebs.burst_balance") is None
    new_ceiling = ctx.volume_iops_ceiling(vid)
    assert ceiling is not None and new_ceiling is not None
    assert float(np.min(ceiling)) == 1500.0 and float(np.min(new_ceiling)) == 3000.0

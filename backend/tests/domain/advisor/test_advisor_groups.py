"""Findings that share a cause are linked (domain/advisor/groups.py; docs/thresholds/finding-groups.md).

Written from the sources: PingCAP's AWS guide ("Best Practices for TiDB on AWS Cloud", docs/reference/pingcap-guidance.md#block-cache-on-ebs) shrinks
the block cache "to avoid read IOPS from hitting the EBS limit" and sizes gp2 past its burst (over 1 TB, "to avoid
unpredictable performance caused by bursting"; gp3 came later); AWS's gp2 documentation (docs/reference/gp2-burst.md#the-credit-bucket) gives the bucket. So on one node a gp2
volume out of burst and "shrink the block cache" are one cause, and moving that volume to gp3 resolves both.

gp2-burst-depletion scenario, per node: a 500 GiB gp2 data volume; baseline 3 IOPS/GiB x 500 GiB = 1,500 IOPS,
burst 3,000 IOPS from a 5.4 M credit bucket (at 3,000 IOPS it lasts 5.4e6 / (3,000 - 1,500) = 3,600 s). Peak
reads are ~1,800/s x 1.5 (diurnal amplitude 0.5) = ~2,700/s > 1,500: the bucket empties every afternoon, the
reads sit at the 1,500 IOPS baseline, and the block-cache rule sees reads at the read-IOPS ceiling (shrink).
gp3 at 3,000 IOPS has no bucket (3,000 IOPS baseline, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025): 2,700 < 3,000, so after the change the
burst rule has no BurstBalance to judge and reads are no longer at the ceiling: both findings go.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import yaml
from advisor_fixtures import SCENARIOS, START, scenario_snapshot
from headroom.domain.advisor import Finding, advise
from headroom.domain.advisor.engine import run_rules
from headroom.domain.advisor.apply import apply_changes
from headroom.domain.advisor.groups import (
    MATERIAL_REDUCTION,
    group_findings,
    group_id,
    materially_reduced,
    related_pairs,
)
from headroom.domain.advisor.whatif import what_if
from headroom.domain.snapshot.scenario import scenario_from_dict
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate


@cache
def scenario_findings(name: str) -> tuple[Finding, ...]:
    """The scenario's findings one store at a time (the advisor merges config findings per group of like stores;
    these cases are written per node: cluster_wide=False keeps the rules' per-node findings)."""
    return tuple(run_rules(scenario_snapshot(name), cluster_wide=False).findings)


def groups_of(findings: Sequence[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        if f.group is not None:
            out.setdefault(f.group.id, []).append(f)
    return out


def test_gp2_out_of_burst_and_block_cache_on_one_node_are_one_group_and_gp3_resolves_both() -> None:
    findings = scenario_findings("gp2-burst-depletion")
    snap = scenario_snapshot("gp2-burst-depletion")
    groups = groups_of(findings)
    # 3 nodes, each with its own gp2 volume out of burst and its own block-cache shrink: 3 groups of 2.
    assert len(groups) == 3
    for members in groups.values():
        assert sorted(f.rule for f in members) == ["block-cache-size", "gp2-burst-depletion"]
        burst = next(f for f in members if f.rule == "gp2-burst-depletion")
        cache = next(f for f in members if f.rule == "block-cache-size")
        # Same node: the volume's node is the block-cache finding's node.
        assert burst.entity.node == cache.entity.id
        group = burst.group
        assert group is not None and cache.group == group
        assert group.primary == burst.dedup_key
        assert group.fix == [burst.dedup_key]
        assert group.related == [cache.dedup_key]
        assert group.measured
        assert sorted(group.resolves) == sorted([burst.dedup_key, cache.dedup_key])
        assert group.remaining == []
        assert group.summary.startswith("Primary fix: gp3") and group.summary.endswith("resolves 2 of 2")
        assert {c.key: c.proposed for c in burst.changes}["volume.type"] == "gp3"
    # The same what-if through the public what-if machinery, on the advisor's real (cluster-wide)
    # output: gp3 on the three volumes resolves the three burst findings and the one block-cache shrink of the
    # three m5.2xlarge stores.
    real = advise(snap)
    bursts = [f for f in real if f.rule == "gp2-burst-depletion"]
    shrinks = [f for f in real if f.rule == "block-cache-size"]
    assert len(bursts) == 3 and len(shrinks) == 1
    resolved = what_if(snap, [c for f in bursts for c in f.changes]).to_dict()["resolved"]
    assert {f.dedup_key for f in [*bursts, *shrinks]} <= set(resolved)


def test_block_cache_shrink_alone_does_not_resolve_the_volume_finding() -> None:
    """The what-if keeps observed I/O: shrinking the cache does not lower the simulated reads, so the volume finding
    stays. That is why gp3 (2 of 2), not the cache (at most 1 of 2), is primary."""
    findings = scenario_findings("gp2-burst-depletion")
    snap = scenario_snapshot("gp2-burst-depletion")
    cache = next(f for f in findings if f.rule == "block-cache-size")
    burst_keys = {f.dedup_key for f in findings if f.rule == "gp2-burst-depletion"}
    after = what_if(snap, cache.changes).to_dict()
    assert burst_keys <= set(after["remaining"])


def test_findings_on_other_nodes_stay_apart() -> None:
    # volume-throughput-ceiling: tikv-gp2-1 (a 300 GiB gp2: baseline 3 x 300 = 900 IOPS) and two tikv-gp3 nodes
    # (1,000 GiB gp3 at its 125 MiB/s default, compaction-heavy). Each node's findings form their own group.
    findings = scenario_findings("volume-throughput-ceiling")
    for members in groups_of(findings).values():
        nodes = {m.entity.node or m.entity.id for m in members}
        assert len(nodes) == 1, [m.dedup_key for m in members]
    assert len(groups_of(findings)) == 3


def test_unrelated_findings_stay_ungrouped() -> None:
    # Thread pools (CPU), a block cache that should grow (memory) and cost findings (a volume made cheaper) are
    # not disk-path findings: alone on their nodes, they stay without a group.
    for name in ("thread-pool-saturation", "block-cache-memory-rich", "volume-overprovisioned", "gp2-to-gp3"):
        assert all(f.group is None for f in scenario_findings(name)), name
    assert all(f.group is None for f in scenario_findings("healthy"))


def test_cpu_finding_on_the_same_node_is_not_linked_to_the_disk_group() -> None:
    burst = scenario_findings("gp2-burst-depletion")
    threads = scenario_findings("thread-pool-saturation")
    # Same node ids (tikv-1..3) in both scenarios; judge the links on the gp2 snapshot's entity chain.
    mixed = [*burst, *[t.model_copy(update={"group": None}) for t in threads]]
    pairs = related_pairs(scenario_snapshot("gp2-burst-depletion"), mixed)
    for i, j in pairs:
        assert mixed[i].rule != "thread-pool-saturation" and mixed[j].rule != "thread-pool-saturation"


def test_two_findings_on_the_same_compaction_evidence_are_one_cause() -> None:
    # compaction-io-titan: per node, compression (titan rule) and the compaction rate limit both judge the
    # node's compaction share of the write bandwidth, and the gp3 volume is at its 125 MiB/s ceiling.
    findings = scenario_findings("compaction-io-titan")
    groups = groups_of(findings)
    assert len(groups) == 3
    for members in groups.values():
        rules = sorted(m.rule for m in members)
        assert rules == ["compaction-io-titan", "compaction-rate-limit", "volume-throughput-ceiling"]
        titan = next(m for m in members if m.rule == "compaction-io-titan")
        limit = next(m for m in members if m.rule == "compaction-rate-limit")
        shared = {(s.entity_id, s.metric) for s in titan.evidence.series} & {
            (s.entity_id, s.metric) for s in limit.evidence.series
        }
        assert (titan.entity.id, "tikv.pending_compaction_bytes") in shared


def test_an_instance_upgrade_resolves_the_bandwidth_cap_and_the_compression_advice() -> None:
    # pingcap-aws-m5-2xlarge-io1: m5.2xlarge's EBS bandwidth is 287.5 MiB/s baseline, 593.75 MiB/s burst (AWS
    # EBS-optimized table, docs/reference/ec2-ebs-limits.md); m5.4xlarge has 593.75 MiB/s sustained, twice the node's cap, which lifts
    # the instance finding and the compression advice (compaction no longer fights for 287.5 MiB/s): 2 of 2.
    findings = scenario_findings("pingcap-aws-m5-2xlarge-io1")
    groups = groups_of(findings)
    assert len(groups) == 3
    for members in groups.values():
        group = members[0].group
        assert group is not None
        primary = next(m for m in members if m.dedup_key == group.primary)
        assert primary.rule == "instance-ebs-bandwidth-bound"
        assert sorted(m.rule for m in members) == ["compaction-io-titan", "instance-ebs-bandwidth-bound"]
        assert group.summary.endswith("resolves 2 of 2") and group.remaining == []


def test_a_fix_that_resolves_one_of_two_says_which_remains() -> None:
    # pingcap-aws-m5-4xlarge-io1: per node the io1 data volume is at its throughput ceiling and the raft log
    # shares it. Resizing the volume (a simulated modify-volume) lifts the ceiling: 1 of 2. The raft finding's
    # fix creates a new volume, which the what-if cannot simulate: it counts only itself (1, not measured), so
    # the measured volume fix is primary and the raft finding remains.
    findings = scenario_findings("pingcap-aws-m5-4xlarge-io1")
    groups = groups_of(findings)
    assert len(groups) == 3
    for members in groups.values():
        group = members[0].group
        assert group is not None and group.measured
        primary = next(m for m in members if m.dedup_key == group.primary)
        assert primary.rule == "volume-throughput-ceiling"
        assert group.summary.endswith("resolves 1 of 2")
        (left,) = group.remaining
        assert left.startswith("raft-dedicated-volume/")


def test_group_ids_are_stable_across_runs_and_orders() -> None:
    snap = scenario_snapshot("gp2-burst-depletion")
    first = {f.dedup_key: f.group for f in run_rules(snap, cluster_wide=False).findings}
    second = {f.dedup_key: f.group for f in run_rules(snap, cluster_wide=False).findings}
    assert first == second
    keys = ["b/x", "a/y", "c/z"]
    assert group_id(keys) == group_id(list(reversed(keys))) == group_id(sorted(keys))
    assert group_id(keys) != group_id(keys[:2])


def test_grouping_does_not_change_the_findings() -> None:
    snap = scenario_snapshot("gp2-burst-depletion")
    plain = run_rules(snap, group=False, cluster_wide=False).findings
    grouped = run_rules(snap, cluster_wide=False).findings
    assert [f.model_copy(update={"group": None}) for f in grouped] == plain
    assert all(f.group is None for f in plain)


def test_a_fix_that_cannot_be_simulated_is_not_claimed_to_resolve_others() -> None:
    findings = list(scenario_findings("gp2-burst-depletion"))
    snap = scenario_snapshot("gp2-burst-depletion")

    def failing(after: Snapshot, rules: Sequence[str]) -> list[Finding]:
        raise RuntimeError("a rule that cannot judge the changed snapshot")

    out = group_findings(snap, [f.model_copy(update={"group": None}) for f in findings], failing)
    for f in out:
        if f.group is None:
            continue
        assert not f.group.measured
        assert set(f.group.resolves) == set(f.group.fix)
        assert "not simulated" in f.group.summary


def test_every_group_is_simulated_in_one_what_if_when_the_first_candidates_settle_them() -> None:
    """Groups are disjoint: the 3 nodes' gp3 moves are applied together and the members' rules run once."""
    snap = scenario_snapshot("gp2-burst-depletion")
    plain = run_rules(snap, group=False, cluster_wide=False).findings
    calls: list[tuple[list[str], list[str]]] = []

    def rerun(after: Snapshot, rules: Sequence[str]) -> list[Finding]:
        calls.append((sorted(v.id for v in after.volumes if v.type == "gp3"), list(rules)))
        return run_rules(after, rules=list(rules), group=False, cluster_wide=False).findings

    out = group_findings(snap, plain, rerun)
    assert len(calls) == 1
    gp3, rules = calls[0]
    assert len(gp3) == 3 and rules == ["block-cache-size", "gp2-burst-depletion"]
    assert {f.group.summary.split(" resolves ")[1] for f in out if f.group} == {"2 of 2"}


def test_a_raft_volume_out_of_credits_and_a_data_volume_at_its_ceiling_are_two_causes() -> None:
    # Two m6i.2xlarge stores (volume-throughput-ceiling scenario): a 1,000 GiB gp3 data volume at its 125 MiB/s
    # baseline throughput (docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025) and, added here, a 20 GiB
    # gp2 Raft volume: 3 IOPS/GiB gives it the 100 IOPS minimum baseline
    # (docs/reference/gp2-burst.md#the-credit-bucket), which 400 fsyncs a second drain. The instance's own EBS limit (m6i.2xlarge: 1,250 MB/s baseline,
    # docs/reference/ec2-ebs-limits.md#limits-table) is far away. Moving the Raft volume to gp3 does nothing for
    # the data volume's throughput, and no limit is shared: the findings stand apart (before, they were one
    # "disk I/O of node" group whose own summary said its primary fix "resolves 4 of 6").
    doc = yaml.safe_load((SCENARIOS / "volume-throughput-ceiling.yaml").read_text())
    doc["workload"]["fsyncs_per_sec"] = 400.0
    doc["nodes"] = [n for n in doc["nodes"] if n["name"] == "tikv-gp3"]
    doc["nodes"][0]["volumes"].append({"role": "raft", "type": "gp2", "size_gib": 20})
    findings = advise(simulate(scenario_from_dict(doc), hours=24.0, seed=0, start=START))
    raft = [f for f in findings if f.rule == "gp2-burst-depletion"]
    data = [f for f in findings if f.rule == "volume-throughput-ceiling"]
    assert len(raft) == 2 and len(data) == 2
    assert all(f.group is None for f in raft), [f.group.summary for f in raft if f.group]
    # the data volumes' own group still holds, and its primary fix resolves every member it names
    groups = groups_of(findings)
    assert groups, "the data volumes and the compaction findings on them share the volumes"
    for members in groups.values():
        group = members[0].group
        assert group is not None and not {f.dedup_key for f in raft} & set(group.members)
        assert len(group.resolves) == len(group.members), group.summary


def _one_node(name: str, mutate: Callable[[dict[str, Any]], None]) -> Snapshot:
    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    doc["nodes"] = doc["nodes"][:1]
    doc["nodes"][0]["count"] = 1
    mutate(doc)
    return simulate(scenario_from_dict(doc), hours=24.0, seed=0, start=START)


def _rerun_of(snap: Snapshot) -> Callable[[Snapshot, Sequence[str]], Sequence[Finding]]:
    def rerun(after: Snapshot, rules: Sequence[str]) -> Sequence[Finding]:
        return run_rules(after, rules=list(rules), group=False, cluster_wide=False).findings

    return rerun


def test_growing_a_full_gp2_past_1_tib_for_space_also_ends_its_burst_a_what_if_link() -> None:
    # PD stops placing regions on a store past schedule.low-space-ratio, 0.8 of its capacity (PingCAP, "PD
    # Configuration File", https://docs.pingcap.com/tidb/stable/pd-configuration-file#low-space-ratio): 690 GiB of
    # data on an 800 GiB gp2 is ~88% of its filesystem. AWS gp2 (docs/reference/gp2-burst.md#baseline-and-burst,
    # https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html): baseline 3 IOPS/GiB, so 800 GiB =
    # 2,400 IOPS and a ~3,200 reads/s peak drains the 5.4 M credit bucket; "from 1 TiB up the baseline is at least
    # the burst rate and the volume never bursts". The space fix grows the volume to 1,010 GiB: 3 x 1,010 = 3,030
    # IOPS >= 3,000, no bucket left to drain. The two findings are about different limits (space, IOPS), so rule 1
    # does not link them; the what-if does: growing the volume for space resolves the burst finding too.
    def full_gp2(doc: dict[str, Any]) -> None:
        doc["workload"]["reads_per_sec"] = 3200.0
        doc["nodes"][0]["volumes"][0]["size_gib"] = 800
        doc["nodes"][0]["workload"] = {"data_size_gib": 690}

    snap = _one_node("gp2-burst-depletion", full_gp2)
    plain = run_rules(snap, group=False, cluster_wide=False).findings
    space = next(i for i, f in enumerate(plain) if f.rule == "disk-low-space")
    burst = next(i for i, f in enumerate(plain) if f.rule == "gp2-burst-depletion")
    grown = {c.key: c.proposed for c in plain[space].changes}["volume.size"]
    assert isinstance(grown, float) and 3 * grown >= 3000 > 3 * 800
    pair = (min(space, burst), max(space, burst))
    assert pair not in related_pairs(snap, plain)  # no shared limit
    assert pair in related_pairs(snap, plain, _rerun_of(snap))  # the what-if link
    after = what_if(snap, plain[space].changes).to_dict()
    assert plain[burst].dedup_key in after["resolved"]
    grouped = group_findings(snap, plain, _rerun_of(snap))
    group = grouped[space].group
    assert group is not None and grouped[burst].group == group
    assert group.primary == plain[space].dedup_key
    assert {plain[space].dedup_key, plain[burst].dedup_key} <= set(group.resolves)
    # the summary counts what the what-if resolved, and lists the rest as remaining
    assert group.summary.endswith(f"resolves {len(group.resolves)} of {len(group.members)}")
    assert len(group.resolves) + len(group.remaining) == len(group.members)


def test_a_gp2_raft_volume_and_a_gp3_data_volume_at_its_ceiling_are_not_linked_by_the_what_if() -> None:
    # A 20 GiB gp2 Raft volume: 3 IOPS/GiB x 20 = 60, so the 100 IOPS floor
    # (docs/reference/gp2-burst.md#baseline-and-burst), drained by 400 fsyncs/s; a 1,000 GiB gp3 data volume at
    # its 125 MiB/s baseline throughput (docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025,
    # https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html); an m6i.2xlarge's own EBS limit
    # (1,250 MB/s, docs/reference/ec2-ebs-limits.md#limits-table) far away. gp3 on the Raft volume does nothing for the data volume's bytes,
    # and more data-volume throughput does nothing for the Raft volume's credits: two causes, never one group.
    def raft_on_gp2(doc: dict[str, Any]) -> None:
        doc["workload"]["fsyncs_per_sec"] = 400.0
        doc["nodes"] = [n for n in doc["nodes"] if n["name"] == "tikv-gp3"]
        doc["nodes"][0]["count"] = 1
        doc["nodes"][0]["volumes"].append({"role": "raft", "type": "gp2", "size_gib": 20})

    doc: dict[str, Any] = yaml.safe_load((SCENARIOS / "volume-throughput-ceiling.yaml").read_text())
    raft_on_gp2(doc)
    snap = simulate(scenario_from_dict(doc), hours=24.0, seed=0, start=START)
    plain = run_rules(snap, group=False, cluster_wide=False).findings
    raft = [i for i, f in enumerate(plain) if f.rule == "gp2-burst-depletion"]
    data = [i for i, f in enumerate(plain) if f.rule == "volume-throughput-ceiling"]
    assert len(raft) == 1 and len(data) == 1
    pairs = related_pairs(snap, plain, _rerun_of(snap))
    assert (min(raft[0], data[0]), max(raft[0], data[0])) not in pairs
    # the what-if says why: each fix leaves the other finding in place, no lighter
    after_raft_fix = {f.dedup_key: f for f in _rerun_of(snap)(apply_changes(snap, plain[raft[0]].changes),
                                                              ["volume-throughput-ceiling"])}
    still = after_raft_fix[plain[data[0]].dedup_key]
    assert not materially_reduced(plain[data[0]], still)
    grouped = group_findings(snap, plain, _rerun_of(snap))
    # Two causes: the Raft volume's finding stands alone, and the data volume's ceiling is one group with the
    # compaction findings that spend the same 125 MiB/s (rule 1), all resolved by more throughput on that volume.
    assert grouped[raft[0]].group is None
    group = grouped[data[0]].group
    assert group is not None and plain[raft[0]].dedup_key not in group.members
    assert sorted(f.rule for f in grouped if f.group == group) == [
        "compaction-io-titan", "compaction-rate-limit", "volume-throughput-ceiling"
    ]
    assert group.summary.endswith("resolves 3 of 3") and group.remaining == []


def test_two_volumes_behind_one_instance_at_its_ebs_limit_are_one_group_and_the_instance_fixes_all() -> None:
    # PingCAP's m5.2xlarge TPC-C setup (docs/reference/pingcap-guidance.md#instance-ebs-bandwidth,
    # https://www.pingcap.com/blog/best-practices-for-tidb-on-aws-cloud/): "the actual performance is tightly
    # bounded by EC2 bandwidth". m5.2xlarge: 2,300 Mbps baseline = 287.5 MB/s ~ 274 MiB/s; m5.4xlarge: 4,750 Mbps
    # ~ 566 MiB/s sustained (AWS "Amazon EBS-optimized instances", docs/reference/ec2-ebs-limits.md#limits-table).
    # Here the node has two volumes behind that one instance (its io1 data volume and, added, a gp3 Raft volume):
    # every finding about the data path sits behind the instance's bandwidth, so they are one group, and the
    # instance upgrade (twice the bandwidth) resolves every member.
    def raft_volume(doc: dict[str, Any]) -> None:
        doc["nodes"][0]["volumes"].append({"role": "raft", "type": "gp3", "size_gib": 50})

    snap = _one_node("pingcap-aws-m5-2xlarge-io1", raft_volume)
    assert len(snap.volumes) == 2 and {v.instance_id for v in snap.volumes} == {snap.instances[0].id}
    findings = run_rules(snap, cluster_wide=False).findings
    groups = groups_of(findings)
    assert len(groups) == 1
    (members,) = groups.values()
    assert len(members) == len(findings) >= 2
    group = members[0].group
    assert group is not None and group.measured
    primary = next(m for m in members if m.dedup_key == group.primary)
    assert primary.rule == "instance-ebs-bandwidth-bound"
    assert {c.key: c.proposed for c in primary.changes}["instance.type"] == "m5.4xlarge"
    assert group.remaining == [] and group.summary.endswith(f"resolves {len(members)} of {len(members)}")


def test_materially_reduced_is_a_quarter_of_the_pressure_or_a_lower_severity() -> None:
    # The threshold of docs/thresholds/finding-groups.md, on a real finding: the gp2 volume's drain-period demand
    # against its 1,500 IOPS baseline (500 GiB x 3 IOPS/GiB, AWS gp2).
    f = next(f for f in scenario_findings("gp2-burst-depletion") if f.rule == "gp2-burst-depletion")
    measure = next(m for m in f.evidence.measures if m.ratio and m.ratio >= 1)  # drain-period demand / baseline, ~1.41

    def scaled(limit_factor: float) -> Finding:
        measures = [
            m.model_copy(update={"limit": m.limit * limit_factor}) if m is measure and m.limit else m
            for m in f.evidence.measures
        ]
        return f.model_copy(update={"evidence": f.evidence.model_copy(update={"measures": measures})})

    assert MATERIAL_REDUCTION == 0.25
    assert materially_reduced(f, scaled(1.4))  # limit x 1.4: the ratio falls by 29%, more than a quarter
    assert not materially_reduced(f, scaled(1.25))  # limit x 1.25: by a fifth, not material
    assert not materially_reduced(f, f)
    assert f.severity == "critical"
    assert materially_reduced(f, f.model_copy(update={"severity": "warning"}))

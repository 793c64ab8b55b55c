"""Findings that share a cause are linked (pure; runs after the rules and their conflict resolution).

A gp2 volume out of burst and "shrink the block cache" on the same node are two views of one problem: the node's
reads are held at the disk's ceiling. This pass finds such groups, picks the primary fix (the one that resolves
the most members) and says which members it resolves, measured by a what-if: the candidate fix's changes are
applied to the snapshot's inventory and config (`apply.apply_changes`, the what-if's) and the members' rules run again.

API (pure):
    group_findings(snapshot, findings, rerun, *, max_candidates=MAX_CANDIDATES) -> list[Finding]
        the same findings, in the same order, each member of a group of two or more carrying `group`
        (headroom.domain.model.FindingGroup); `rerun(snapshot_after, rule_ids)` returns the findings those rules
        produce on the changed snapshot (the engine passes its own pipeline without this pass)
    related_pairs(snapshot, findings) -> set[tuple[int, int]]    which findings are linked (by index)

Grouping rule (our choice; docs/thresholds/finding-groups.md explains each part):
1. Same cause, same place: both findings say the disk path is the binding limit (DISK_IO: volume and instance
   ceilings, gp2 and instance burst buckets, and the TiKV settings whose fix changes how much disk I/O a node
   makes: block cache shrink, block size, compaction rate limit and compression, a raft volume), and they touch
   the same TiKV node through the entity chain node -> instance -> volumes (a finding's entity and its evidence
   series both count, so a cluster-level finding with per-node evidence touches each of those nodes).
2. Same evidence: two findings whose evidence charts the same series of the same entity (other than context
   series every I/O finding shows: latency, queue length, free memory) are built on the same observation.
   Findings that move a limit the other way (cost findings that lower a volume, a block cache that should grow)
   are never linked by rule 1; by rule 2 only when they share such a series.
Groups are the connected components of these links with at least two members.

Primary fix: each rule in the group is a candidate fix (its members' changes applied together, so a cluster-wide
group can be fixed on every volume at once); the candidates are simulated in rank order (severity, confidence,
rule id), at most `max_candidates` of them; the primary is the one that resolves the most members, ties going to
the higher-ranked candidate. A candidate whose changes cannot be simulated (e.g. creating a new volume) resolves
only its own findings, unmeasured, and is primary only when no simulated candidate resolves as many members.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from headroom.domain.advisor.apply import WhatIfError, apply_changes
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding
from headroom.domain.model import Change, FindingGroup, severity_rank
from headroom.domain.snapshot.schema import Snapshot

# Rules whose findings say the disk path (EBS volume, EC2 EBS bandwidth, their burst buckets) is the binding
# limit, or whose fix changes how much disk I/O a node makes. The block cache only in its "shrink" aspect (grow
# and shared-host are about memory).
DISK_IO_RULES = frozenset(
    {
        "gp2-burst-depletion",
        "volume-iops-ceiling",
        "volume-throughput-ceiling",
        "instance-ebs-bandwidth-bound",
        "instance-ebs-burst-depletion",
        "block-size",
        "compaction-rate-limit",
        "compaction-io-titan",
        "raft-dedicated-volume",
    }
)
DISK_IO_ASPECTS = {"block-cache-size": frozenset({"shrink"})}
# Series that many findings chart as context; sharing one of them is not sharing a cause.
CONTEXT_METRICS = frozenset(
    {
        "derived.read_latency_ms",
        "derived.write_latency_ms",
        "ebs.queue_length",
        "node.memory_available",
        "tikv.memory_rss",
    }
)
# At most this many candidate fixes are simulated per group (each is one what-if over the group's rules).
MAX_CANDIDATES = 4

Rerun = Callable[[Snapshot, Sequence[str]], Sequence[Finding]]


def _aspect(f: Finding) -> str:
    """Return the dedup key's aspect (the part after `<rule>/<cluster>/<kind>:<id>`), or ""."""
    parts = f.dedup_key.split("/")
    return parts[3] if len(parts) > 3 else ""


def is_disk_io(f: Finding) -> bool:
    """True when the finding says the disk path binds (rule 1's family)."""
    if f.rule in DISK_IO_RULES:
        return True
    aspects = DISK_IO_ASPECTS.get(f.rule)
    return aspects is not None and _aspect(f) in aspects


class _Chain:
    """The snapshot's entity chain: which TiKV nodes an entity (volume, instance, node) belongs to."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.ctx = Context(snapshot)
        self.node_ids = {n.id for n in snapshot.nodes}

    def nodes_of(self, kind: str, eid: str) -> set[str]:
        if kind == "node":
            return {eid} if eid in self.node_ids else set()
        if kind == "volume":
            n = self.ctx.node_of_volume(eid)
            return {n.id} if n is not None else set()
        if kind == "instance":
            return {n.id for n in self.ctx.nodes_on_instance(eid)}
        return set()

    def anchors(self, f: Finding) -> set[str]:
        """Return the TiKV nodes a finding touches: its entity's chain and its evidence series' entities'."""
        ent = f.entity
        out = self.nodes_of(ent.kind, ent.id)
        if ent.node:
            out.add(ent.node)
        if ent.instance_id:
            out |= self.nodes_of("instance", ent.instance_id)
        if ent.volume_id:
            out |= self.nodes_of("volume", ent.volume_id)
        for s in f.evidence.series:
            out |= self.nodes_of(s.entity_kind, s.entity_id)
        return out


def _cause_series(f: Finding) -> set[tuple[str, str, str]]:
    return {
        (s.entity_kind, s.entity_id, s.metric) for s in f.evidence.series if s.metric not in CONTEXT_METRICS
    }


def related_pairs(snapshot: Snapshot, findings: Sequence[Finding]) -> set[tuple[int, int]]:
    """Return the (i, j), i < j, of findings that share a cause (rules 1 and 2 of the module docstring)."""
    return _pairs(_Chain(snapshot), findings)


def _pairs(chain: _Chain, findings: Sequence[Finding]) -> set[tuple[int, int]]:
    anchors = [chain.anchors(f) for f in findings]
    disk = [is_disk_io(f) for f in findings]
    series = [_cause_series(f) for f in findings]
    pairs: set[tuple[int, int]] = set()
    for i in range(len(findings)):
        for j in range(i + 1, len(findings)):
            if (disk[i] and disk[j] and anchors[i] & anchors[j]) or series[i] & series[j]:
                pairs.add((i, j))
    return pairs


def _components(n: int, pairs: set[tuple[int, int]]) -> list[list[int]]:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in sorted(pairs):
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    comps: dict[int, list[int]] = {}
    for i in range(n):
        comps.setdefault(find(i), []).append(i)
    return [c for c in comps.values() if len(c) >= 2]


def _rank(f: Finding) -> tuple[int, float, str, str]:
    return (severity_rank(f.severity), -f.confidence, f.rule, f.dedup_key)


@dataclass(frozen=True)
class _Outcome:
    rule: str
    fix: list[Finding]
    resolves: list[str]
    measured: bool


def _simulate(snapshot: Snapshot, members: list[Finding], fix: list[Finding], rerun: Rerun) -> _Outcome:
    """Apply the fix's changes, run the members' rules again, and return which members are gone."""
    changes: list[Change] = [c for f in fix for c in f.changes]
    own = [f.dedup_key for f in fix]
    try:
        after = apply_changes(snapshot, changes)
    except WhatIfError:
        return _Outcome(fix[0].rule, fix, own, measured=False)
    rules = sorted({m.rule for m in members})
    try:
        still = {f.dedup_key for f in rerun(after, rules)}
    except Exception:  # a rule that cannot judge the changed snapshot: not measured (not "resolving")
        return _Outcome(fix[0].rule, fix, own, measured=False)
    return _Outcome(
        fix[0].rule, fix, [m.dedup_key for m in members if m.dedup_key not in still], measured=True
    )


def _subset(snapshot: Snapshot, nodes: set[str]) -> Snapshot:
    """Return the snapshot cut down to these TiKV nodes, their instances and volumes, and their series."""
    kept_nodes = [n for n in snapshot.nodes if n.id in nodes]
    instances = {n.instance_id for n in kept_nodes}
    volumes = {v for n in kept_nodes for v in (*n.data_volume_ids, *n.raft_volume_ids)}
    volumes |= {v.id for v in snapshot.volumes if v.instance_id in instances}
    keep = {"node": nodes, "instance": instances, "volume": volumes}
    return snapshot.model_copy(
        update={
            "nodes": kept_nodes,
            "instances": [i for i in snapshot.instances if i.id in instances],
            "volumes": [v for v in snapshot.volumes if v.id in volumes],
            "series": [s for s in snapshot.series if s.entity.id in keep[s.entity.kind]],
        }
    )


def _scope(snapshot: Snapshot, members: list[Finding], nodes: set[str], rerun: Rerun) -> Snapshot:
    """Return the snapshot the group's what-ifs run on: its nodes only, when the members' rules find every member
    there again unchanged (else the whole snapshot). A group of one node in a six-node cluster costs a sixth."""
    if not nodes or len(nodes) == len(snapshot.nodes):
        return snapshot
    sub = _subset(snapshot, nodes)
    try:
        again = {f.dedup_key for f in rerun(sub, sorted({m.rule for m in members}))}
    except Exception:  # a rule that needs the rest of the cluster: use all of it
        return snapshot
    return sub if all(m.dedup_key in again for m in members) else snapshot


def _fix_label(fix: list[Finding]) -> str:
    first = fix[0]
    if first.options:
        label = first.options[0].label
    elif first.changes:
        label = ", ".join(f"{c.key} = {c.proposed}" for c in first.changes[:3])
    else:
        label = first.title
    if len(fix) > 1:
        kinds = {f.entity.kind for f in fix}
        kind = kinds.pop() if len(kinds) == 1 else "entity"
        label = f"{label} (on {len(fix)} {kind}s)"
    return label


def _cause(members: list[Finding], chain_nodes: set[str]) -> str:
    nodes = sorted(chain_nodes)
    where = (
        f"node {nodes[0]}"
        if len(nodes) == 1
        else f"nodes {', '.join(nodes)}"
        if nodes
        else "the same entities"
    )
    if all(is_disk_io(m) for m in members):
        return f"disk I/O of {where}"
    return f"shared evidence on {where}"


def group_id(member_keys: Sequence[str]) -> str:
    """Return the group's id: stable for the same members, whatever their order or which one is primary."""
    digest = hashlib.sha256("\n".join(sorted(member_keys)).encode()).hexdigest()[:16]
    return f"group-{digest}"


def _group(
    snapshot: Snapshot, members: list[Finding], chain: _Chain, rerun: Rerun, max_candidates: int
) -> FindingGroup:
    members = sorted(members, key=_rank)
    by_rule: dict[str, list[Finding]] = {}
    for m in members:
        if m.changes:
            by_rule.setdefault(m.rule, []).append(m)
    candidates = list(by_rule.values())[:max_candidates]  # rank order of each rule's best member
    nodes: set[str] = set()
    for m in members:
        nodes |= chain.anchors(m)
    scope = _scope(snapshot, members, nodes, rerun) if candidates else snapshot
    best: _Outcome | None = None
    for fix in candidates:  # the most resolved; a measured outcome before an unmeasured one; then rank order
        o = _simulate(scope, members, fix, rerun)
        if best is None or (len(o.resolves), o.measured) > (len(best.resolves), best.measured):
            best = o
        if best.measured and len(best.resolves) == len(members):
            break  # nothing can resolve more
    keys = [m.dedup_key for m in members]
    if best is None:  # no member proposes a change: linked, nothing to simulate
        primary = members[0]
        fix_keys = [primary.dedup_key]
        resolves: list[str] = []
        measured = False
        label = primary.title
    else:
        fix_keys = [f.dedup_key for f in best.fix]
        resolves = best.resolves
        measured = best.measured
        label = _fix_label(best.fix)
        primary = best.fix[0]
    ordered = [*fix_keys, *[k for k in keys if k not in fix_keys]]
    n_res = len(resolves)
    summary = f"Primary fix: {label} resolves {n_res} of {len(keys)}"
    if not measured:
        summary += " (not simulated: counts only the findings it fixes directly)"
    return FindingGroup(
        id=group_id(keys),
        cause=_cause(members, nodes),
        primary=primary.dedup_key,
        fix=fix_keys,
        fix_label=label,
        members=ordered,
        related=[k for k in ordered if k not in fix_keys],
        resolves=[k for k in ordered if k in set(resolves)],
        remaining=[k for k in ordered if k not in set(resolves)],
        measured=measured,
        summary=summary,
    )


def group_findings(
    snapshot: Snapshot, findings: Sequence[Finding], rerun: Rerun, *, max_candidates: int = MAX_CANDIDATES
) -> list[Finding]:
    """Return the findings (same order), each member of a group of two or more carrying its `group`."""
    items = list(findings)
    if len(items) < 2:
        return items
    chain = _Chain(snapshot)
    comps = _components(len(items), _pairs(chain, items))
    out = list(items)
    for comp in comps:
        group = _group(snapshot, [items[i] for i in comp], chain, rerun, max_candidates)
        for i in comp:
            out[i] = items[i].model_copy(update={"group": group})
    return out

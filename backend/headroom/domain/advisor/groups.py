"""Findings that share a cause are linked (pure; runs after the rules and their conflict resolution).

A gp2 volume out of burst and "shrink the block cache" on the same node are two views of one problem: the node's
reads are held at the disk's ceiling. This pass finds such groups, picks the primary fix (the one that resolves
the most members) and says which members it resolves, measured by a what-if: the candidate fix's changes are
applied to the snapshot's inventory and config (`apply.apply_changes`, the what-if's) and the members' rules
run again.

API (pure):
    group_findings(snapshot, findings, rerun, *, max_candidates=MAX_CANDIDATES) -> list[Finding]
        the same findings, in the same order, each member of a group of two or more carrying `group`
        (headroom.domain.model.FindingGroup); `rerun(snapshot_after, rule_ids)` returns the findings those rules
        produce on the changed snapshot (the engine passes its own pipeline without this pass)
    related_pairs(snapshot, findings, rerun=None) -> set[tuple[int, int]]    which findings are linked (by
        index): rule 1 alone without `rerun`, rules 1 and 2 with it
    materially_reduced(before, after) -> bool    the same finding, lighter by MATERIAL_REDUCTION once a fix applies

Grouping rule (our choice; docs/thresholds/finding-groups.md explains each part):
1. Same limit: both findings say the disk path is the binding limit (DISK_IO: volume and instance
   ceilings, gp2 and instance burst buckets, and the TiKV settings whose fix changes how much disk I/O a node
   makes: block cache shrink, block size, compaction rate limit and compression, a raft volume), and they are
   about the same limit (`_Chain.limits`): one EBS volume (a TiKV setting's finding is about its node's data
   volume), or an instance's EBS bandwidth and a volume or node behind it. Two limits of one node are two causes.
2. What-if: two findings on one TiKV node (their entity chains or evidence series meet there) that rule 1 does
   not link are linked when applying one's fix (its changes, `apply.apply_changes`) and running the other's rule
   again makes the other disappear or **materially reduces** it: its severity drops, or a measure it compares to
   a limit (value / limit) falls by at least MATERIAL_REDUCTION (a quarter). Sharing a chart is not enough: a
   Raft volume out of credits and a data volume at its throughput ceiling on one node need two fixes.
   Probes whose nodes and changed entities are disjoint run in one what-if per round.
Groups are the connected components of these links with at least two members.

Primary fix: each rule in the group is a candidate fix (its members' changes applied together, so a cluster-wide
group can be fixed on every volume at once); the candidates are simulated in rank order (severity, confidence,
rule id), at most `max_candidates` of them; the primary is the one that resolves the most members, ties going to
the higher-ranked candidate. A candidate whose changes cannot be simulated (e.g. creating a new volume) resolves
only its own findings, unmeasured, and is primary only when no simulated candidate resolves as many members.
Cost: groups are disjoint, so round k applies the k-th candidate of every group not yet settled (one that
resolves all its members is) in one what-if and runs the members' rules once: usually one rule run in all. That
re-run gets the run's context as its base (Context's `base`): every node the candidates leave alone (its volumes,
instance and node entry unchanged) keeps the run's data path and per-node findings, so only the changed nodes are
judged again.
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
# The rules whose limit is the instance's EBS bandwidth (every volume attached to it sits behind it).
INSTANCE_RULES = frozenset({"instance-ebs-bandwidth-bound", "instance-ebs-burst-depletion"})
# A finding a fix leaves in place is still "materially reduced" by it when a measure it compares to a limit
# (value / limit) falls by at least this share, or its severity drops (docs/thresholds/finding-groups.md).
MATERIAL_REDUCTION = 0.25
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


    def _volume_limit(self, volume_id: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        own = {("volume", volume_id)}
        try:
            instance_id = self.ctx.volume(volume_id).instance_id
        except KeyError:
            instance_id = None
        return own, ({("instance", instance_id)} if instance_id else set())

    def _node_limit(self, node_id: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """A TiKV setting's disk I/O lands on the node's data volume(s), behind its instance's EBS bandwidth."""
        if node_id not in self.node_ids:
            return set(), set()
        volumes = self.ctx.node_volumes(node_id, "data") or self.ctx.node_volumes(node_id)
        own = {("volume", v.id) for v in volumes}
        instance_id = self.ctx.node(node_id).instance_id
        return own, ({("instance", instance_id)} if instance_id else set())

    def limits(self, f: Finding) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """Return (the limits a disk-path finding is about, the limits it sits behind).

        A volume finding is about its volume and sits behind its instance's EBS bandwidth; an instance finding is
        about that bandwidth; a TiKV setting's finding on a node is about the node's data volume. A cluster-level
        finding is about the limits of the entities its evidence charts.
        """
        ent = f.entity
        if f.rule in INSTANCE_RULES:
            instance_id = ent.instance_id or (ent.id if ent.kind == "instance" else None)
            bandwidth = {("instance", instance_id)} if instance_id else set()
            bandwidth |= {("instance", s.entity_id) for s in f.evidence.series if s.entity_kind == "instance"}
            return bandwidth, set()
        if ent.kind == "volume" or ent.volume_id:
            return self._volume_limit(ent.volume_id or ent.id)
        if ent.kind == "node" or ent.node:
            return self._node_limit(ent.node or ent.id)
        own: set[tuple[str, str]] = set()
        behind: set[tuple[str, str]] = set()
        for s in f.evidence.series:
            if s.entity_kind == "volume":
                o, b = self._volume_limit(s.entity_id)
            elif s.entity_kind == "node":
                o, b = self._node_limit(s.entity_id)
            elif s.entity_kind == "instance":
                o, b = {("instance", s.entity_id)}, set()
            else:
                continue
            own |= o
            behind |= b
        return own, behind


def _share_a_limit(a: tuple[set[tuple[str, str]], set[tuple[str, str]]],
                   b: tuple[set[tuple[str, str]], set[tuple[str, str]]]) -> bool:
    """Both about one limit, or one about the limit the other sits behind (an instance's EBS bandwidth)."""
    return bool(a[0] & b[0] or a[0] & b[1] or a[1] & b[0])


def related_pairs(
    snapshot: Snapshot, findings: Sequence[Finding], rerun: Rerun | None = None
) -> set[tuple[int, int]]:
    """Return the (i, j), i < j, of findings that share a cause: the same limit (rule 1 of the module docstring)
    and, given `rerun`, the what-if link (rule 2: one's fix resolves or materially reduces the other)."""
    chain = _Chain(snapshot)
    pairs = _limit_pairs(chain, findings)
    if rerun is not None:
        pairs |= _whatif_pairs(snapshot, chain, findings, pairs, rerun)
    return pairs


def _limit_pairs(chain: _Chain, findings: Sequence[Finding]) -> set[tuple[int, int]]:
    disk = [is_disk_io(f) for f in findings]
    limits = [chain.limits(f) if disk[i] else (set(), set()) for i, f in enumerate(findings)]
    pairs: set[tuple[int, int]] = set()
    for i in range(len(findings)):
        for j in range(i + 1, len(findings)):
            if disk[i] and disk[j] and _share_a_limit(limits[i], limits[j]):
                pairs.add((i, j))
    return pairs


def _pressure(f: Finding) -> dict[str, float]:
    """The finding's measures compared to a limit, by label: value / limit (how hard it presses on it)."""
    return {m.label: r for m in f.evidence.measures if (r := m.ratio) is not None and r > 0}


def materially_reduced(before: Finding, after: Finding) -> bool:
    """True when `after` (the same finding once a fix is applied) is at least MATERIAL_REDUCTION lighter: a lower
    severity, or a measure that was at or over its limit (value / limit >= 1: the ones that made the finding; a
    floor such as a minimum burst balance sits under its limit and is not a pressure) down by that share."""
    if severity_rank(after.severity) > severity_rank(before.severity):
        return True
    now = _pressure(after)
    return any(
        label in now and now[label] <= (1.0 - MATERIAL_REDUCTION) * ratio
        for label, ratio in _pressure(before).items()
        if ratio >= 1.0
    )


def _effect(member: Finding, after: dict[str, Finding]) -> str:
    """"resolves", "reduces" or "" for one member once a fix is applied (`after`: the re-run's findings by key)."""
    still = after.get(member.dedup_key)
    if still is None:
        return "resolves"
    return "reduces" if materially_reduced(member, still) else ""


def _whatif_pairs(
    snapshot: Snapshot, chain: _Chain, findings: Sequence[Finding], linked: set[tuple[int, int]], rerun: Rerun
) -> set[tuple[int, int]]:
    """The pairs on one TiKV node, not already linked by a limit, where one's fix resolves or materially reduces
    the other in a what-if. Probes whose nodes and changed entities are disjoint run in one what-if per round."""
    anchors = [chain.anchors(f) for f in findings]
    partners: dict[int, set[int]] = {}
    for i in range(len(findings)):
        for j in range(len(findings)):
            if i != j and (min(i, j), max(i, j)) not in linked and anchors[i] & anchors[j] and findings[i].changes:
                partners.setdefault(i, set()).add(j)
    probes: list[int] = []
    for i in sorted(partners):
        try:
            apply_changes(snapshot, list(findings[i].changes))
        except WhatIfError:  # a fix the what-if cannot apply links nothing by itself
            continue
        probes.append(i)
    pairs: set[tuple[int, int]] = set()
    while probes:
        batch: list[int] = []
        nodes: set[str] = set()
        where: set[tuple[str, str | None]] = set()
        rest: list[int] = []
        for i in probes:
            reach = anchors[i].union(*(anchors[j] for j in partners[i]))
            targets = {(c.target, c.applies_to()) for c in findings[i].changes}
            if reach & nodes or targets & where:
                rest.append(i)
                continue
            batch.append(i)
            nodes |= reach
            where |= targets
        probes = rest
        rules = sorted({findings[j].rule for i in batch for j in partners[i]})
        try:
            after_snapshot = apply_changes(snapshot, [c for i in batch for c in findings[i].changes])
            after = {f.dedup_key: f for f in rerun(after_snapshot, rules)}
        except Exception:  # a rule that cannot judge the changed snapshot: no link is measured
            continue
        for i in batch:
            for j in partners[i]:
                if _effect(findings[j], after):
                    pairs.add((min(i, j), max(i, j)))
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
    fix: list[Finding]
    resolves: list[str]
    measured: bool
    reduces: tuple[str, ...] = ()


@dataclass
class _Pending:
    """One group while its candidate fixes are simulated."""

    members: list[Finding]  # rank order
    candidates: list[list[Finding]]  # one per rule with changes, in rank order
    outcomes: list[_Outcome]

    def best(self) -> _Outcome | None:
        """The most resolved; a measured outcome before an unmeasured one; then the earlier (higher-ranked)."""
        best: _Outcome | None = None
        for o in self.outcomes:
            if best is None or (len(o.resolves), o.measured) > (len(best.resolves), best.measured):
                best = o
        return best

    def settled(self) -> bool:
        best = self.best()
        return best is not None and best.measured and len(best.resolves) == len(self.members)


def _changes(fix: list[Finding]) -> list[Change]:
    return [c for f in fix for c in f.changes]


def _simulate_round(snapshot: Snapshot, batch: list[tuple[_Pending, list[Finding]]], rerun: Rerun) -> None:
    """Simulate one candidate of each group in the batch with one what-if: groups are disjoint (no finding, node
    or changed entity in two groups), so their fixes are applied together and the rules run once."""
    runnable: list[tuple[_Pending, list[Finding]]] = []
    later: list[tuple[_Pending, list[Finding]]] = []
    touched: set[tuple[str, str | None]] = set()
    for pending, fix in batch:
        try:
            apply_changes(snapshot, _changes(fix))  # alone first: one unappliable fix must not sink the rest
        except WhatIfError:
            pending.outcomes.append(_Outcome(fix, [f.dedup_key for f in fix], measured=False))
            continue
        where = {(c.target, c.applies_to()) for c in _changes(fix)}
        if where & touched:  # two fixes on one volume, instance or node: simulate this one on its own
            later.append((pending, fix))
            continue
        touched |= where
        runnable.append((pending, fix))
    for item in later:
        _simulate_round(snapshot, [item], rerun)
    if not runnable:
        return
    rules = sorted({m.rule for pending, _ in runnable for m in pending.members})
    try:
        after = apply_changes(snapshot, [c for _, fix in runnable for c in _changes(fix)])
        still = {f.dedup_key: f for f in rerun(after, rules)}
    except Exception:  # a rule that cannot judge the changed snapshot: not measured (not "resolving")
        for pending, fix in runnable:
            pending.outcomes.append(_Outcome(fix, [f.dedup_key for f in fix], measured=False))
        return
    for pending, fix in runnable:
        effects = {m.dedup_key: _effect(m, still) for m in pending.members}
        gone = [k for k, e in effects.items() if e == "resolves"]
        lighter = tuple(k for k, e in effects.items() if e == "reduces")
        pending.outcomes.append(_Outcome(fix, gone, measured=True, reduces=lighter))


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
    return f"findings on {where} that one fix resolves or reduces"


def group_id(member_keys: Sequence[str]) -> str:
    """Return the group's id: stable for the same members, whatever their order or which one is primary."""
    digest = hashlib.sha256("\n".join(sorted(member_keys)).encode()).hexdigest()[:16]
    return f"group-{digest}"


def _pending(members: list[Finding], max_candidates: int) -> _Pending:
    members = sorted(members, key=_rank)
    by_rule: dict[str, list[Finding]] = {}
    for m in members:
        if m.changes:
            by_rule.setdefault(m.rule, []).append(m)
    return _Pending(members, list(by_rule.values())[:max_candidates], [])


def _finish(pending: _Pending, chain: _Chain) -> FindingGroup:
    members = pending.members
    keys = [m.dedup_key for m in members]
    best = pending.best()
    if best is None:  # no member proposes a change: linked, nothing to simulate
        primary = members[0]
        fix_keys = [primary.dedup_key]
        resolves: list[str] = []
        measured = False
        label = primary.title
    else:
        primary = best.fix[0]
        fix_keys = [f.dedup_key for f in best.fix]
        resolves = best.resolves
        measured = best.measured
        label = _fix_label(best.fix)
    ordered = [*fix_keys, *[k for k in keys if k not in fix_keys]]
    nodes: set[str] = set()
    for m in members:
        nodes |= chain.anchors(m)
    summary = f"Primary fix: {label} resolves {len(resolves)} of {len(keys)}"
    reduced = [k for k in (best.reduces if best is not None else ()) if k in keys]
    if reduced:
        summary += f" and materially reduces {len(reduced)} more"
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
    comps = _components(len(items), related_pairs(snapshot, items, rerun))
    chain = _Chain(snapshot)
    pending = [_pending([items[i] for i in comp], max_candidates) for comp in comps]
    # Round k simulates every unsettled group's k-th candidate, all in one what-if.
    for k in range(max_candidates):
        batch = [(p, p.candidates[k]) for p in pending if k < len(p.candidates) and not p.settled()]
        if not batch:
            break
        _simulate_round(snapshot, batch, rerun)
    out = list(items)
    for comp, p in zip(comps, pending, strict=True):
        group = _finish(p, chain)
        for i in comp:
            out[i] = items[i].model_copy(update={"group": group})
    return out

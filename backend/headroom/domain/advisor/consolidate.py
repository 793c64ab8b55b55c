"""One value per group of like stores: per-node TiKV config findings become one cluster-level finding (pure).

TiUP's `server_configs.tikv` sets a key for every TiKV and TiDB Operator's `spec.tikv.config` has no per-pod form,
so a rule's per-node proposals ("tikv-1: 6 threads", "tikv-2: 5", "tikv-3: 5") are not something an operator can
apply. This post-pass, run by the engine on the rules' output (before conflict resolution), turns them into one
finding per rule, aspect and group of like stores, with one value and every store's own evidence.
The choices are Headroom's own; docs/thresholds/cluster-config.md explains each:

- **Groups**: stores of the same EC2 instance type and role (their `server.labels` other than placement labels
  such as zone, rack or host) take one value. A TiDB Operator cluster is one group (every pod shares
  `spec.tikv.config`).
- **One value**: the largest need (a raise) or the furthest cut (a lowering) among the stores that fired, within
  every store's budget where the key has one (`BUDGETS`: thread pools at most vCPUs − 1, the block cache at most
  what the block-cache rule gives that store alone: 45% of its memory). A need beyond the smallest budget is cut
  to it, and the finding names the store that bounds it.
- **Where it applies**: when the group is every TiKV of the cluster and they all hold the same value today, one
  change for the whole cluster (TiUP `server_configs.tikv`, Operator `spec.tikv.config`, `SET CONFIG tikv`);
  otherwise one change per store of the group with the same value (TiUP `tikv_servers[].config`).
  Stores of the group that did not fire get the value too (they are the same kind of host): a note names any
  store that value would move the other way.
- **Keys**: `<rule>/<cluster>/cluster:<group>[/<aspect>]` with group `tikv@<instance type>[/<role>]`, or `tikv`
  for an Operator cluster: stable while the hardware is, whichever stores fire on a given day.

A finding is a config finding when its rule declares the tikv.toml keys it proposes (`Rule.tikv_keys`), its entity is
a TiKV node and it (or one of its options) changes a tikv.toml key; everything else passes through unchanged. AWS changes of merged findings (e.g. a new Raft volume per node)
keep their own volume or instance.

API:
    consolidate_config(findings, ctx, rules=None) -> list[Finding]   rules: ids of the config-sizing rules
    store_groups(ctx) -> dict[node id, StoreGroup]
    config_number(value) -> float | None     a config value as a number (sizes in bytes), None if not numeric
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rules._tikv_helpers import size_text, size_words
from headroom.domain.advisor.rules.block_cache import grow_target_bytes, memory_share_bytes
from headroom.domain.advisor.rules.thread_pools import max_threads
from headroom.domain.model import (
    Change,
    ChangeValue,
    EntityRef,
    Impact,
    NodeEvidence,
    Option,
    SeriesRef,
    severity_rank,
)
from headroom.domain.references import decides_page
from headroom.domain.snapshot.schema import Node
from headroom.domain.tikvconf.online import can_change_online
from headroom.domain.tikvconf.parse import config_number, same_value
from headroom.domain.units import format_quantity

GUIDE = decides_page("cluster-config.md")
TIUP_DOC = (
    "TiUP topology: server_configs.tikv applies to every TiKV, tikv_servers[].config overrides it per instance "
    "(https://docs.pingcap.com/tidb/stable/tiup-cluster-topology-reference)"
)
OPERATOR_DOC = (
    "TiDB Operator: spec.tikv.config is shared by every TiKV pod "
    "(https://docs.pingcap.com/tidb-in-kubernetes/stable/configure-a-tidb-cluster)"
)
# Labels that say where a store is, not what it is for: stores that differ only in these are one group.
PLACEMENT_LABELS = frozenset({"zone", "region", "rack", "host", "dc", "az", "idc"})
# Titles name the stores up to this many, then count them.
NAMED_IN_TITLE = 3


# ----------------------------------------------------------------------------------------------------
# Budgets: the furthest a key may go on one store (its host's resources)


def _thread_budget(ctx: Context, node: Node) -> ChangeValue:
    # TiKV's config template: a pool "should be less than total CPU cores" (thread_pools.max_threads).
    return max_threads(node.vcpus)


def _block_cache_budget(ctx: Context, node: Node) -> ChangeValue:
    # What the block-cache rule gives this store alone when it raises it: TiKV's default share, 45% of the memory
    # the store may plan with (docs/reference/tikv-config.md#keys-and-defaults), inside the config template's
    # "30%-50% of system's total memory". One value for unlike stores is never more than the smallest store
    # would get on its own (docs/thresholds/cluster-config.md).
    return size_text(grow_target_bytes(memory_share_bytes(ctx, node)))


BUDGETS: dict[str, Callable[[Context, Node], ChangeValue]] = {
    "storage.scheduler-worker-pool-size": _thread_budget,
    "raftstore.apply-pool-size": _thread_budget,
    "raftstore.store-pool-size": _thread_budget,
    "readpool.unified.max-thread-count": _thread_budget,
    "storage.block-cache.capacity": _block_cache_budget,
}


# ----------------------------------------------------------------------------------------------------
# Groups


@dataclass(frozen=True)
class StoreGroup:
    """Stores that take one value: `id` goes into the dedup key, `label` into titles and notes."""

    id: str
    label: str
    instance_type: str
    nodes: tuple[Node, ...]


def _role(ctx: Context, node: Node) -> str:
    labels = ctx.config(node.id, "server.labels").value
    if not isinstance(labels, dict):
        return ""
    kept = sorted((str(k), str(v)) for k, v in labels.items() if str(k).lower() not in PLACEMENT_LABELS)
    return ",".join(f"{k}={v}" for k, v in kept)


def store_groups(ctx: Context) -> dict[str, StoreGroup]:
    """Return each store's group: same instance type and role (TiUP, by hand), or every store (Operator)."""
    nodes = list(ctx.nodes)
    if ctx.cluster.deployment == "operator":
        types = sorted({n.instance_type for n in nodes})
        group = StoreGroup("tikv", f"TiKV pods ({', '.join(types)})", "/".join(types), tuple(nodes))
        return {n.id: group for n in nodes}
    members: dict[tuple[str, str], list[Node]] = {}
    for n in nodes:
        members.setdefault((n.instance_type, _role(ctx, n)), []).append(n)
    out: dict[str, StoreGroup] = {}
    for (itype, role), group_nodes in members.items():
        gid = f"tikv@{itype}" + (f"/{role}" if role else "")
        label = f"{itype} stores" + (f" ({role})" if role else "")
        group = StoreGroup(gid, label, itype, tuple(group_nodes))
        for n in group_nodes:
            out[n.id] = group
    return out


# ----------------------------------------------------------------------------------------------------
# The post-pass


def _is_config_finding(f: Finding) -> bool:
    if f.entity.kind != "node":
        return False
    changes = [*f.changes, *(c for o in f.options for c in o.changes)]
    return any(c.target == "tikv" for c in changes)


def _aspect(f: Finding, ctx: Context) -> str:
    prefix = make_dedup_key(f.rule, ctx.cluster_key, f.entity)
    return f.dedup_key[len(prefix) :].lstrip("/") if f.dedup_key.startswith(prefix) else ""


def _rank(f: Finding) -> tuple[int, float, str]:
    return (severity_rank(f.severity), -f.confidence, f.entity.id)


def consolidate_config(
    findings: Sequence[Finding], ctx: Context, rules: Collection[str] | None = None
) -> list[Finding]:
    """Merge the per-node config findings of one rule and aspect within each group of like stores.

    `rules`: the ids of the rules whose findings are config sizing (the engine passes those that declare
    `tikv_keys`); None: every rule's."""
    groups = store_groups(ctx)
    out: list[Finding] = []
    buckets: dict[tuple[str, str, str], list[Finding]] = {}
    for f in findings:
        node_id = f.entity.id
        if (rules is not None and f.rule not in rules) or not _is_config_finding(f) or node_id not in groups:
            out.append(f)
            continue
        buckets.setdefault((f.rule, _aspect(f, ctx), groups[node_id].id), []).append(f)
    for (rule, aspect, _), members in buckets.items():
        group = groups[members[0].entity.id]
        out.append(_merge(rule, aspect, sorted(members, key=_rank), group, ctx))
    return out


@dataclass(frozen=True)
class _Value:
    key: str
    value: ChangeValue | None  # None: the stores' values cannot be merged (non-numeric and different)
    proposer: str | None  # the store whose own need is the value (None: cut to a budget)
    notes: tuple[str, ...]
    bound_by: str | None = None  # the store that set the value when it is not a store's own need
    bound_why: str | None = None  # why that store sets it, for the title


def _direction(change: Change) -> int:
    cur, new = config_number(change.current), config_number(change.proposed)
    if cur is None or new is None:
        return 1
    return (new > cur) - (new < cur) or 1


def _one_value(key: str, proposals: list[tuple[str, Change]], group: StoreGroup, ctx: Context) -> _Value:
    """The one value of `key` for the group: the largest need (or furthest cut) within every store's budget."""
    first = proposals[0][1]
    numbers = [config_number(c.proposed) for _, c in proposals]
    if any(n is None for n in numbers):
        if all(same_value(key, first.proposed, c.proposed) for _, c in proposals):
            return _Value(key, first.proposed, proposals[0][0], ())
        return _Value(key, None, None, ())
    direction = _direction(first)
    pick = max if direction > 0 else min
    node_id, change = pick(proposals, key=lambda p: (config_number(p[1].proposed) or 0.0) * direction)
    value: ChangeValue | None = change.proposed
    proposer: str | None = node_id
    notes: list[str] = []
    bound_by: str | None = None
    bound_why: str | None = None
    needs = sorted({str(c.proposed) for _, c in proposals}, key=lambda v: config_number(v) or 0.0)
    if len(needs) > 1:
        notes.append(
            f"{key}: the stores' own needs are {', '.join(needs)}; one value for the {group.label}: "
            f"{value} ({'the largest need' if direction > 0 else 'the furthest cut'}, from {node_id})"
        )
    if direction > 0:
        # A raise never lowers a store of the group that already runs with more (it did not fire: it has room).
        fired = {n for n, _ in proposals}
        above = [
            (n.id, current)
            for n in group.nodes
            if n.id not in fired
            and (cur := config_number(current := ctx.config(n.id, key).value)) is not None
            and cur > (config_number(value) or 0.0)
        ]
        if above:
            top_id, top = max(above, key=lambda b: config_number(b[1]) or 0.0)
            notes.append(
                f"{key}: {top_id} already runs with {top}; the group's one value does not go below it"
            )
            value, proposer = top, None
            bound_by, bound_why = top_id, "it already runs with that much and a raise does not lower it"
    budget_of = BUDGETS.get(key)
    if budget_of is not None and direction > 0:
        budgets = [(n.id, budget_of(ctx, n)) for n in group.nodes]
        tight_id, tight = min(budgets, key=lambda b: config_number(b[1]) or 0.0)
        if (config_number(tight) or 0.0) < (config_number(value) or 0.0):
            notes.append(
                f"{key}: {value} is beyond {tight_id}'s budget of {tight} (the most that store would get on its "
                f"own); {tight_id} bounds the group's one value, and every store of the group gets {tight}"
            )
            value, proposer = tight, None
            node = ctx.node(tight_id)
            what = (
                format_quantity(node.memory_gib, "GiB")
                if key == "storage.block-cache.capacity"
                else f"{node.vcpus} vCPUs"
            )
            bound_by, bound_why = tight_id, f"the most its {node.instance_type} with {what} would get on its own"
    return _Value(key, value, proposer, tuple(notes), bound_by, bound_why)


def _group_changes(
    chosen: _Value, proposals: list[tuple[str, Change]], group: StoreGroup, ctx: Context
) -> tuple[list[Change], list[str]]:
    """The changes that put `chosen.value` on every store of the group (one cluster-wide change when they can)."""
    key, value = chosen.key, chosen.value
    reason_from = next((c for n, c in proposals if n == chosen.proposer), proposals[0][1])
    reason = (
        f"{reason_from.reason}; one value for the {group.label} (the largest need, within every store's budget: "
        f"{GUIDE})"
    )
    currents = {n.id: ctx.config(n.id, key).value for n in group.nodes}
    direction = _direction(proposals[0][1])
    notes: list[str] = []
    for n in group.nodes:
        cur, new = config_number(currents[n.id]), config_number(value)
        if cur is not None and new is not None and (new - cur) * direction < 0:
            notes.append(
                f"{key}: {n.id} has {currents[n.id]} today; the group's one value moves it to {value}"
            )
    every_store = {n.id for n in group.nodes} == {n.id for n in ctx.nodes}
    first_current = currents[group.nodes[0].id]
    uniform = all(same_value(key, first_current, c) for c in currents.values())
    if every_store and uniform:
        change = Change(
            target="tikv",
            key=key,
            entity=ctx.cluster_entity(),
            current=first_current,
            proposed=value,
            online=all(can_change_online(key, currents[n.id], value, n.tikv_version) for n in group.nodes),
            reason=reason,
        )
        return [change], notes
    changes = [
        Change(
            target="tikv",
            key=key,
            entity=ctx.entity_for_node(n.id),
            current=currents[n.id],
            proposed=value,
            online=can_change_online(key, currents[n.id], value, n.tikv_version),
            reason=reason,
        )
        for n in group.nodes
        if not same_value(key, currents[n.id], value)
    ]
    return changes, notes


def _merge_changes(
    per_node: list[tuple[str, list[Change]]], group: StoreGroup, ctx: Context
) -> tuple[list[Change], list[_Value], list[str]]:
    """Merge the stores' changes: one value per tikv key for the group, AWS changes kept as they are."""
    by_key: dict[str, list[tuple[str, Change]]] = {}
    out: list[Change] = []
    values: list[_Value] = []
    notes: list[str] = []
    for node_id, changes in per_node:
        for c in changes:
            if c.target == "tikv":
                if c.key not in by_key:
                    by_key[c.key] = []
                    out.append(c)  # a placeholder: replaced below, keeps the first store's order of keys
                by_key[c.key].append((node_id, c))
            elif c not in out:
                out.append(c)
    merged: list[Change] = []
    for c in out:
        if c.target != "tikv" or c is not by_key[c.key][0][1]:
            merged.append(c)
            continue
        proposals = by_key[c.key]
        chosen = _one_value(c.key, proposals, group, ctx)
        values.append(chosen)
        if chosen.value is None:  # different non-numeric values: each store keeps its own
            merged.extend(p for _, p in proposals)
            notes.append(f"{c.key}: the stores need different values; each keeps its own")
            continue
        group_changes, moved = _group_changes(chosen, proposals, group, ctx)
        merged.extend(group_changes)
        notes.extend([*chosen.notes, *moved])
    return merged, values, notes


def _summed_impact(base: Impact, impacts: list[Impact]) -> Impact:
    """The base impact with the monthly costs summed over the stores (each store pays for its own AWS change)."""
    update: dict[str, float] = {}
    for name in ("monthly_cost_before_usd", "monthly_cost_after_usd", "monthly_cost_delta_usd"):
        parts = [getattr(i, name) for i in impacts]
        if parts and all(p is not None for p in parts):
            update[name] = float(sum(parts))
    return base.model_copy(update=update) if update else base


def _store_names(members: list[Finding], group: StoreGroup) -> str:
    names = sorted(m.entity.id for m in members)
    shown = ", ".join(names) if len(names) <= NAMED_IN_TITLE else f"{len(names)} stores"
    scope = (
        f"{len(names)} of {len(group.nodes)} {group.label}" if len(names) < len(group.nodes) else group.label
    )
    return f"{shown} ({scope})"


def _strip_node(title: str, node_id: str) -> str:
    prefix = f"{node_id}: "
    return title[len(prefix) :] if title.startswith(prefix) else title


def _value_words(value: ChangeValue | None) -> str:
    """Write a config value in a sentence: a size as "14 GiB", a count as "7" (tikv.toml's "14GiB" is for the file)."""
    number = config_number(value)
    if number is None:
        return str(value)
    if isinstance(value, str):
        return size_words(number)
    return format_quantity(number, "")


def _bounded_title(title: str, cut: list[_Value]) -> str:
    """Replace the base store's own action ("raise it to 28 GiB") with the one value the group gets and the store
    that bounds it: the title states the change the finding makes, never a need the group cannot take."""
    situation = title.rsplit(": ", 1)[0] if title.count(": ") >= 2 else title
    actions = [
        f"set {v.key} to {_value_words(v.value)} on every store (one value for the group"
        + (f", bounded by {v.bound_by}: {v.bound_why})" if v.bound_by else ")")
        for v in cut
    ]
    return f"{situation}: {'; '.join(actions)}"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _merge(rule: str, aspect: str, members: list[Finding], group: StoreGroup, ctx: Context) -> Finding:
    changes, values, notes = _merge_changes([(m.entity.id, list(m.changes)) for m in members], group, ctx)
    # The finding's text comes from the store whose own need is the group's value, else the store that bounds it,
    # else the most severe one.
    proposers = [v.proposer for v in values if v.proposer is not None]
    bounders = [v.bound_by for v in values if v.proposer is None and v.bound_by is not None]
    speaker = proposers[0] if proposers else bounders[0] if bounders else None
    base = next((m for m in members if m.entity.id == speaker), members[0])
    options: list[Option] = []
    for option in base.options:
        same = [(m.entity.id, o) for m in members for o in m.options if o.label == option.label]
        o_changes, _, _ = _merge_changes([(n, list(o.changes)) for n, o in same], group, ctx)
        options.append(
            option.model_copy(
                update={
                    "changes": o_changes,
                    "impact": _summed_impact(option.impact, [o.impact for _, o in same]),
                }
            )
        )
    title = f"{_store_names(members, group)}: {_strip_node(base.title, base.entity.id)}"
    cut = [v for v in values if v.value is not None and v.proposer is None]
    if cut:
        title = _bounded_title(title, cut)
    per_node = [
        NodeEvidence(
            node=m.entity.id,
            instance_type=ctx.node(m.entity.id).instance_type,
            severity=m.severity,
            title=m.title,
            measures=list(m.evidence.measures),
            share_of_window=m.evidence.share_of_window,
            longest_run_minutes=m.evidence.longest_run_minutes,
            needs={c.key: c.proposed for c in m.changes if c.target == "tikv" and c.proposed is not None},
        )
        for m in sorted(members, key=lambda m: m.entity.id)
    ]
    series: list[SeriesRef] = []
    for s in (s for m in [base, *members] for s in m.evidence.series):
        if s not in series:
            series.append(s)
    evidence = base.evidence.model_copy(update={"per_node": per_node, "series": series})
    deployment = ctx.cluster.deployment
    if deployment == "operator":
        notes.append(
            "TiDB Operator: every TiKV pod shares spec.tikv.config, so this is one value for all pods"
            + (
                " (different instance types: a per-pod value cannot be expressed)"
                if "/" in group.instance_type
                else ""
            )
        )
    elif {n.id for n in group.nodes} != {n.id for n in ctx.nodes}:
        notes.append(
            f"the cluster also runs other kinds of store: with TiUP, set this under tikv_servers[].config for the "
            f"{group.label} only (server_configs.tikv would set it on every TiKV)"
        )
    return Finding(
        rule=rule,
        severity=min((m.severity for m in members), key=severity_rank),
        entity=ctx.cluster_entity(),
        title=title,
        evidence=evidence,
        why=base.why,
        changes=changes,
        options=options,
        impact=_summed_impact(base.impact, [m.impact for m in members]),
        confidence=base.confidence,
        dedup_key=make_dedup_key(
            rule, ctx.cluster_key, EntityRef(kind="cluster", id=group.id), aspect or None
        ),
        sources=_unique([*base.sources, GUIDE, OPERATOR_DOC if deployment == "operator" else TIUP_DOC]),
        notes=_unique([*(n for m in members for n in m.notes), *notes]),
    )

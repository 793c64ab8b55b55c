"""The advisor engine: snapshot in, findings out (pure: no database, no network, no clock).

API (stable):
    Rule(id, description, evaluate, family="", tikv_keys=(), aws_actions=(), supersedes=(), sources=())
        evaluate: Callable[[Context], list[Finding]]  (pure; may return [])
        supersedes: rule ids whose findings on the same entity this rule's findings replace
    discover_rules() -> tuple[Rule, ...]          every `RULES` of the modules headroom.domain.advisor.rules lists
    rule_catalog() -> list[dict]                  id, description, family, tikv_keys, aws_actions, sources
    advise(snapshot, *, now=None, rules=None, cluster_wide=True) -> list[Finding]
        now: the evaluation time (default: the end of the snapshot window); rules: ids or Rule objects to run
        (default: all discovered); cluster_wide=False: per-node config findings as the rules made them
    run_rules(snapshot, *, now=None, rules=None, on_error="raise"|"skip", cluster_wide=True) -> Advice
        the same, and with on_error="skip" a rule that raises becomes a RuleFailure instead of an exception;
        the Advice holds the run's Context too
    resolve_conflicts(findings) -> list[Finding]  dedup, supersede, and one value per (target, key, entity)
    sort_findings(findings) -> list[Finding]      critical first, then rule id, entity, dedup key

Rules: `headroom.domain.advisor.rules.RULE_MODULES` lists the rule modules (an explicit list, imported at the top:
the rules import `Rule` from `advisor.rule`, never this engine, so there is no cycle to hide); each exposes
`RULES: Sequence[Rule]`. Rule ids are unique across modules (a duplicate raises at discovery).

Cluster-wide config (before conflict resolution, `advisor/consolidate.py`): per-node findings of the rules that
declare `tikv_keys` become one finding per rule, aspect and group of like stores (same instance type and role; every pod of a
TiDB Operator cluster), with one value (the largest need within every store's budget) and each store's evidence
in `evidence.per_node` (docs/thresholds/cluster-config.md).

Conflict resolution (in this order):
1. Same dedup key twice: keep the more severe, then more confident, finding.
2. Supersession: a finding of rule A drops findings of the rules in `A.supersedes` on the same entity
   (a note on the survivor says so).
3. One value per changed thing: changes are grouped by (target, key, entity the change applies to). Within a
   group the finding that ranks first (severity, confidence, rule id) wins. Every change that moves the key
   the same way as the winner (both raise, or both lower) converges on the value that goes furthest, so applying
   them all is consistent; changes that move it the other way, or to a different non-numeric value, are lost.
   A finding left without changes by this step is dropped, and the winner notes which finding it overrode.
   So the engine never emits "raise block cache" and "lower block cache" for one node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from headroom.domain.advisor import rules as rule_modules
from headroom.domain.advisor.consolidate import consolidate_config
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding
from headroom.domain.advisor.groups import group_findings
from headroom.domain.advisor.rule import Rule, RuleDiscoveryError
from headroom.domain.model import Change, severity_rank
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.tikvconf.parse import config_number


def discover_rules() -> tuple[Rule, ...]:
    """Return every rule exposed as `RULES` by the modules headroom.domain.advisor.rules lists, ordered by id."""
    found: dict[str, Rule] = {}
    for module in rule_modules.RULE_MODULES:
        for rule in getattr(module, "RULES", ()):
            if not isinstance(rule, Rule):
                raise RuleDiscoveryError(f"{module.__name__}.RULES holds {rule!r}, not a Rule")
            if rule.id in found:
                raise RuleDiscoveryError(f"rule id {rule.id!r} is defined twice ({module.__name__})")
            found[rule.id] = rule
    return tuple(found[k] for k in sorted(found))


def rule_catalog() -> list[dict[str, Any]]:
    """Return every rule's id, description and what it can propose (tikv keys, AWS actions)."""
    return [rule.to_dict() for rule in discover_rules()]


def _select(rules: Sequence[str | Rule] | None) -> tuple[Rule, ...]:
    if rules is None:
        return discover_rules()
    known = {r.id: r for r in discover_rules()}
    out: list[Rule] = []
    for r in rules:
        if isinstance(r, Rule):
            out.append(r)
        elif r in known:
            out.append(known[r])
        else:
            raise KeyError(f"unknown rule {r!r} (known: {', '.join(sorted(known))})")
    return tuple(out)


@dataclass(frozen=True)
class RuleFailure:
    """A rule that raised instead of returning findings (only collected with on_error="skip")."""

    rule: str
    error: str


@dataclass(frozen=True)
class Advice:
    """The findings of one run, the rules that failed (empty unless on_error="skip") and the run's Context (what
    else reads the same window takes its numbers from it: the burst forecasts the pages show)."""

    findings: list[Finding]
    failures: list[RuleFailure]
    context: Context


def run_rules(
    snapshot: Snapshot,
    *,
    now: datetime | None = None,
    rules: Sequence[str | Rule] | None = None,
    on_error: str = "raise",
    cluster_wide: bool = True,
    group: bool = True,
    base: Context | None = None,
) -> Advice:
    """Run the rules; with on_error="skip" a rule that raises is reported in `failures`, the others still run.

    cluster_wide=False leaves the rules' per-node config findings as the rules made them (a rule's own tests
    judge one store at a time); the default merges them per group of like stores (advisor/consolidate.py).
    `group`: link findings that share a cause (advisor/groups.py; its what-if re-runs this without grouping).
    `base`: the run's context when this is a what-if re-run of it (its aligned series, and each unchanged node's,
    volume's and instance's work, are reused: Context's `base`)."""
    selected = _select(rules)
    ctx = Context(snapshot, now=now, base=base)
    findings: list[Finding] = []
    failures: list[RuleFailure] = []
    for rule in selected:
        try:
            produced = rule.evaluate(ctx)
        except Exception as exc:  # a broken rule must not hide every other finding
            if on_error != "skip":
                raise
            failures.append(RuleFailure(rule.id, f"{type(exc).__name__}: {exc}"))
            continue
        for finding in produced:
            if finding.rule != rule.id:
                raise ValueError(f"rule {rule.id} returned a finding of rule {finding.rule}")
            findings.append(finding)
    supersedes = {r.id: r.supersedes for r in selected}
    sizing = {r.id for r in selected if r.tikv_keys}  # the rules that propose tikv.toml keys
    merged = consolidate_config(findings, ctx, sizing) if cluster_wide else findings
    resolved = sort_findings(resolve_conflicts(merged, supersedes))
    if group:
        resolved = group_findings(snapshot, resolved, _rerun(selected, now, cluster_wide, ctx))
    return Advice(resolved, failures, ctx)


def _rerun(
    selected: Sequence[Rule], now: datetime | None, cluster_wide: bool, base: Context
) -> Callable[[Snapshot, Sequence[str]], list[Finding]]:
    """Return how the grouping's what-if runs rules again: those named and the ones that supersede them (with the
    same cluster-wide merging, so the dedup keys compare)."""

    def rerun(after: Snapshot, ids: Sequence[str]) -> list[Finding]:
        wanted = [r for r in selected if r.id in ids or set(r.supersedes) & set(ids)]
        return run_rules(
            after, now=now, rules=wanted, group=False, cluster_wide=cluster_wide, base=base
        ).findings

    return rerun


def advise(
    snapshot: Snapshot,
    *,
    now: datetime | None = None,
    rules: Sequence[str | Rule] | None = None,
    cluster_wide: bool = True,
) -> list[Finding]:
    """Run the rules over a snapshot and return the resolved, sorted findings (see run_rules for cluster_wide)."""
    return run_rules(snapshot, now=now, rules=rules, cluster_wide=cluster_wide).findings


# ----------------------------------------------------------------------------------------------------
# Conflict resolution


def _rank(f: Finding) -> tuple[int, float, str, str]:
    return (severity_rank(f.severity), -f.confidence, f.rule, f.dedup_key)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Sort critical first, then by rule id, entity and dedup key (deterministic)."""
    return sorted(findings, key=lambda f: (severity_rank(f.severity), f.rule, f.entity.id, f.dedup_key))


def _change_target(change: Change, finding: Finding) -> tuple[str, str, str]:
    """Return what a change changes: target, key and the node, volume or instance (one value per such thing)."""
    ent = change.entity or finding.entity
    if change.target == "tikv":
        where = ent.node or ent.status_address or ent.id
    elif change.key.startswith("volume."):
        where = ent.volume() or ent.id
    elif change.key.startswith("instance."):
        where = ent.instance() or ent.id
    else:
        where = ent.id
    return change.target, change.key, where


_numeric = config_number


def _direction(change: Change, reference: Change | None = None) -> int | None:
    """Return +1 (raise), -1 (lower), 0 (same) or None (not comparable), from `reference`'s current value."""
    base = reference.current if reference is not None else change.current
    cur, new = _numeric(base), _numeric(change.proposed)
    if cur is None or new is None:
        return None
    return (new > cur) - (new < cur)


def _dedup(findings: list[Finding]) -> list[Finding]:
    best: dict[str, Finding] = {}
    for f in findings:
        other = best.get(f.dedup_key)
        if other is None or _rank(f) < _rank(other):
            best[f.dedup_key] = f
    return list(best.values())


def _supersede(findings: list[Finding], supersedes: dict[str, tuple[str, ...]]) -> list[Finding]:
    dropped: set[str] = set()
    notes: dict[str, list[str]] = {}
    for f in findings:
        for victim_rule in supersedes.get(f.rule, ()):
            for g in findings:
                if g.rule == victim_rule and g.entity.kind == f.entity.kind and g.entity.id == f.entity.id:
                    dropped.add(g.dedup_key)
                    notes.setdefault(f.dedup_key, []).append(f"replaces {g.rule} on {g.entity.label()}")
    out = []
    for f in findings:
        if f.dedup_key in dropped and f.dedup_key not in notes:
            continue
        extra = notes.get(f.dedup_key)
        out.append(f.model_copy(update={"notes": [*f.notes, *extra]}) if extra else f)
    return out


def resolve_conflicts(
    findings: Sequence[Finding], supersedes: dict[str, tuple[str, ...]] | None = None
) -> list[Finding]:
    """Deduplicate, apply supersession, and leave exactly one direction and value per changed thing."""
    current = _supersede(_dedup(list(findings)), supersedes or {})
    ranked = sorted(current, key=_rank)
    # group -> (winning change, its finding): the first in rank order
    winners: dict[tuple[str, str, str], tuple[Change, Finding]] = {}
    members: dict[tuple[str, str, str], list[Change]] = {}
    for f in ranked:
        for c in f.changes:
            group = _change_target(c, f)
            winners.setdefault(group, (c, f))
            members.setdefault(group, []).append(c)
    # The value every same-direction change of a group converges to: the one that goes furthest.
    settled: dict[tuple[str, str, str], Any] = {}
    for group, (win, _) in winners.items():
        d_win = _direction(win)
        value = win.proposed
        if d_win:
            for c in members[group]:
                if _direction(c, win) == d_win:
                    new_c, new_v = _numeric(c.proposed), _numeric(value)
                    assert new_c is not None and new_v is not None
                    if (new_c > new_v) if d_win > 0 else (new_c < new_v):
                        value = c.proposed
        settled[group] = value
    out: list[Finding] = []
    overridden: dict[str, list[str]] = {}
    for f in ranked:
        kept: list[Change] = []
        lost: list[str] = []
        for c in f.changes:
            group = _change_target(c, f)
            win, win_f = winners[group]
            value = settled[group]
            d_win = _direction(win)
            # Directions are judged from the winner's current value, so every member of a group agrees.
            if c.proposed == value or c.proposed == win.proposed or (d_win and _direction(c, win) == d_win):
                kept.append(c if c.proposed == value else c.model_copy(update={"proposed": value}))
                continue
            lost.append(f"{c.key}={c.proposed!r}")
            overridden.setdefault(win_f.dedup_key, []).append(
                f"overrides {f.rule} ({c.key} -> {c.proposed!r}) on {group[2]}"
            )
        if f.changes and not kept:
            continue
        if lost:
            f = f.model_copy(
                update={
                    "changes": kept,
                    "notes": [*f.notes, f"dropped conflicting change(s): {', '.join(lost)}"],
                }
            )
        elif kept != f.changes:
            f = f.model_copy(update={"changes": kept})
        out.append(f)
    final: list[Finding] = []
    for f in out:
        extra = overridden.get(f.dedup_key)
        final.append(f.model_copy(update={"notes": [*f.notes, *sorted(set(extra))]}) if extra else f)
    return final

"""Findings in the store: the advice run (snapshot -> advisor -> upsert by (org, dedup key)) and the user's
lifecycle actions (acknowledge, snooze, resolve, reopen). Callers commit.

Lifecycle of one advice run at time `now` for one cluster:
- a new dedup key -> an `open` finding, first_seen_at = last_seen_at = now;
- a key seen again -> last_seen_at = now, title/why/severity/evidence/impact/confidence refreshed, its
  recommendations replaced by the finding's current changes; a `resolved` finding reopens (`open`), a
  `snoozed` one stays snoozed until snoozed_until (then it is `open` again), an `acknowledged` one stays so;
- an active finding (open, acknowledged, or snoozed past its snooze) of the cluster that the run did not
  produce -> `resolved`, resolved_at = now;
- a run older than what a finding already saw (a late worker) changes nothing on it.
Runs of one cluster are serialised by a transaction-scoped advisory lock; user actions lock the row
(SELECT ... FOR UPDATE). Same input twice gives the same rows (recommendations are upserted by position).

History: every transition is a row of the org's audit log (target_kind "finding"): the advisor's as
`finding.opened/reopened/resolved/unsnoozed` without an actor, the user's as `finding.acknowledged`, ... with one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from sqlalchemy import case, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.accounts.models import AuditLog
from headroom.accounts.service import Principal, audit
from headroom.clusters import service as clusters_service
from headroom.clusters.models import Cluster
from headroom.alerts import service as alerts_service
from headroom.projections import service as projections_service
from headroom.domain.model import (
    SEVERITIES,
    SEVERITY_RANK,
    Change,
    Evidence,
    FindingGroup,
    Impact,
    Option,
    severity_rank,
)
from headroom.findings.models import FindingRecord, Recommendation
from headroom.findings.schemas import (
    FindingPatchRef,
    FindingRead,
    FindingSummary,
    HistoryEntry,
    RelatedFinding,
    WhatIfCeiling,
    WhatIfCost,
    WhatIfDays,
    WhatIfFinding,
    WhatIfProjection,
    WhatIfRead,
)
from headroom.platform.errors import InvalidInput, NotFound
from headroom.platform.logging import get_logger

log = get_logger("headroom.findings.service")

ACTIVE = ("open", "acknowledged", "snoozed")
ENTITY_KIND = {"node": "tikv_node", "volume": "volume", "instance": "instance", "cluster": "cluster"}
DEDUP_KEY_MAX = 300
# Extra keys kept in the evidence JSON next to the advisor's Evidence fields (the table has no columns for them).
EVIDENCE_EXTRAS = ("options", "sources", "notes")

Advise = Callable[..., Sequence[Any]]
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class RunSummary:
    """What one advice run did to one cluster's findings."""

    cluster_id: uuid.UUID
    produced: int
    opened: int
    reopened: int
    updated: int
    resolved: int
    skipped: str | None = None
    # (event, finding row) for alerts: "opened" (new or reopened), "escalated" (severity rose), "resolved"
    events: tuple[tuple[str, Any], ...] = ()
    # (finding row, soonest forecast before the run, after it) of each open finding that carries a forecast, for
    # the alerts' horizons: {"burst_empty": seconds, "ceiling": seconds}; "before" is {} for a finding just opened.
    forecasts: tuple[tuple[Any, dict[str, float], dict[str, float]], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"cluster_id": str(self.cluster_id), "produced": self.produced, "opened": self.opened,
                "reopened": self.reopened, "updated": self.updated, "resolved": self.resolved,
                "skipped": self.skipped}


def stored_dedup_key(key: str) -> str:
    """Return the key as stored: the advisor's key, or (when longer than the column) its prefix plus a hash."""
    if len(key) <= DEDUP_KEY_MAX:
        return key
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"{key[: DEDUP_KEY_MAX - 17]}#{digest}"


FORECAST_KINDS = ("burst_empty", "ceiling")


def soonest_forecasts(evidence: Any) -> dict[str, float]:
    """The soonest `within_seconds` of each alerting forecast kind in a stored evidence JSON (none: not there)."""
    out: dict[str, float] = {}
    for f in (evidence or {}).get("forecasts") or ():
        kind, within = f.get("kind"), f.get("within_seconds")
        if kind in FORECAST_KINDS and isinstance(within, int | float):
            out[kind] = min(float(within), out.get(kind, float("inf")))
    return out


def _row_values(finding: Any) -> dict[str, Any]:
    evidence = finding.evidence.model_dump(mode="json")
    evidence["options"] = [o.model_dump(mode="json") for o in finding.options]
    evidence["sources"] = list(finding.sources)
    evidence["notes"] = list(finding.notes)
    return {
        "rule": finding.rule,
        "entity_kind": ENTITY_KIND[finding.entity.kind],
        "entity_id": finding.entity.id,
        "severity": finding.severity,
        "title": finding.title[:500],
        "why": finding.why,
        "evidence": evidence,
        "impact": finding.impact.model_dump(mode="json"),
        "confidence": float(finding.confidence),
        **_group_values(getattr(finding, "group", None)),
    }


def _group_values(group: FindingGroup | None) -> dict[str, Any]:
    """Return the finding's group columns: its id and the group with every key as stored (None: no group)."""
    if group is None:
        return {"group_id": None, "finding_group": None}
    stored = group.model_copy(
        update={
            name: (
                stored_dedup_key(getattr(group, name))
                if name == "primary"
                else [stored_dedup_key(k) for k in getattr(group, name)]
            )
            for name in ("primary", "fix", "members", "related", "resolves", "remaining")
        }
    )
    return {"group_id": group.id, "finding_group": stored.model_dump(mode="json")}


def _replace_recommendations(db: Session, row: FindingRecord, changes: Sequence[Change]) -> None:
    """Store the finding's changes as the advisor made them, one row per position (rows are updated in place)."""
    if changes:
        stmt = insert(Recommendation).values(
            [{"org_id": row.org_id, "finding_id": row.id, "position": position, "change": change}
             for position, change in enumerate(changes)]
        )
        stmt = stmt.on_conflict_do_update(index_elements=["finding_id", "position"],
                                          set_={"change": stmt.excluded.change})
        db.execute(stmt)
    db.execute(
        delete(Recommendation).where(Recommendation.finding_id == row.id, Recommendation.position >= len(changes))
    )


def _event(db: Session, org_id: uuid.UUID, action: str, finding_id: uuid.UUID, details: dict[str, object]) -> None:
    audit(db, org_id, action, target_kind="finding", target_id=finding_id, details={"by": "advisor", **details})


def record_findings(
    db: Session, cluster: Cluster, findings: Sequence[Any], *, now: dt.datetime
) -> RunSummary:
    """Upsert one advice run's findings (advisor Finding objects) for a cluster and resolve the vanished ones."""
    db.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": f"advice:{cluster.id}"})
    produced: dict[str, Any] = {}
    for f in findings:
        produced.setdefault(stored_dedup_key(f.dedup_key), f)
    existing = {
        row.dedup_key: row
        for row in db.scalars(
            select(FindingRecord)
            .where(
                FindingRecord.org_id == cluster.org_id,
                (FindingRecord.dedup_key.in_(list(produced)))
                | ((FindingRecord.cluster_id == cluster.id) & FindingRecord.status.in_(ACTIVE)),
            )
            .with_for_update()
        )
    }
    opened = reopened = updated = resolved = 0
    events: list[tuple[str, FindingRecord]] = []
    forecasts: list[tuple[FindingRecord, dict[str, float], dict[str, float]]] = []
    for key, f in produced.items():
        values = _row_values(f)
        row = existing.get(key)
        if row is None:
            inserted = db.execute(
                insert(FindingRecord)
                .values(org_id=cluster.org_id, cluster_id=cluster.id, dedup_key=key, status="open",
                        first_seen_at=now, last_seen_at=now, **values)
                .on_conflict_do_nothing(index_elements=["org_id", "dedup_key"])
                .returning(FindingRecord.id)
            ).scalar_one_or_none()
            if inserted is None:  # a concurrent writer created it after our SELECT: take it from there
                row = db.scalar(
                    select(FindingRecord).where(FindingRecord.org_id == cluster.org_id, FindingRecord.dedup_key == key).with_for_update()
                )
                assert row is not None
            else:
                db.flush()
                row = db.get_one(FindingRecord, inserted)
                opened += 1
                _event(db, cluster.org_id, "finding.opened", row.id, {"severity": f.severity})
                _replace_recommendations(db, row, f.changes)
                events.append(("opened", row))
                if after := soonest_forecasts(values["evidence"]):
                    forecasts.append((row, {}, after))
                continue
        if row.last_seen_at > now:
            continue  # a newer run already saw it
        old_severity = row.severity
        before = {} if row.status == "resolved" else soonest_forecasts(row.evidence)
        for name, value in values.items():
            setattr(row, name, value)
        row.cluster_id = cluster.id
        row.last_seen_at = now
        if row.status == "resolved":
            row.status, row.resolved_at, row.snoozed_until = "open", None, None
            reopened += 1
            _event(db, cluster.org_id, "finding.reopened", row.id, {"severity": f.severity})
            events.append(("opened", row))
        elif row.status == "snoozed" and (row.snoozed_until is None or row.snoozed_until <= now):
            row.status, row.snoozed_until = "open", None
            _event(db, cluster.org_id, "finding.unsnoozed", row.id, {})
            updated += 1
        else:
            updated += 1
            if row.status != "snoozed" and severity_rank(row.severity) < severity_rank(old_severity):
                events.append(("escalated", row))
                _event(db, cluster.org_id, "finding.escalated", row.id,
                       {"from": old_severity, "to": row.severity, "at": now.isoformat()})
        _replace_recommendations(db, row, f.changes)
        if row.status == "open" and (after := soonest_forecasts(values["evidence"])):
            forecasts.append((row, before, after))
    for key, row in existing.items():
        if key in produced or row.cluster_id != cluster.id or row.last_seen_at >= now:
            continue
        if row.status == "snoozed" and row.snoozed_until is not None and row.snoozed_until > now:
            continue
        row.status, row.resolved_at, row.snoozed_until = "resolved", now, None
        resolved += 1
        _event(db, cluster.org_id, "finding.resolved", row.id, {"reason": "no longer observed"})
        events.append(("resolved", row))
    db.flush()
    return RunSummary(cluster.id, len(produced), opened, reopened, updated, resolved, events=tuple(events),
                      forecasts=tuple(forecasts))


def advise_cluster(
    db: Session,
    cluster: Cluster,
    *,
    now: dt.datetime,
    window: dt.timedelta = dt.timedelta(hours=24),
    rules: Sequence[Any] | None = None,
    advise: Advise | None = None,
) -> RunSummary:
    """Build the cluster's snapshot of the window ending at `now`, run the advisor and record its findings.

    A cluster without any series in the window is skipped (no data is not "all clear": nothing is resolved).
    """
    from headroom.timeseries.snapshots import build_snapshot

    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    snapshot = build_snapshot(db, cluster.org_id, cluster.id, start=end - window, end=end)
    if not snapshot.series or (not snapshot.nodes and not snapshot.volumes):
        return RunSummary(cluster.id, 0, 0, 0, 0, 0, skipped="no data in the window")
    snapshot = projections_service.with_projections(db, cluster, snapshot)
    if advise is None:
        from headroom.domain.advisor.engine import advise as engine_advise

        advise = engine_advise
    findings = advise(snapshot, now=end, rules=rules) if rules is not None else advise(snapshot, now=end)
    summary = record_findings(db, cluster, findings, now=end)
    if summary.events or summary.forecasts:
        from headroom.domain.advisor.engine import discover_rules

        families = {rule.id: rule.family for rule in discover_rules()}
        alerts_service.queue_finding_events(db, cluster, summary.events, now=end, families=families)
        alerts_service.queue_forecast_events(db, cluster, summary.forecasts, now=end, families=families,
                                             announced=[row for kind, row in summary.events if kind != "resolved"])
    log.info("advice.recorded", cluster_id=str(cluster.id), **{k: v for k, v in summary.as_dict().items()
                                                                if k != "cluster_id"})
    return summary


# ---------------------------------------------------------------------------------------------------- reads


SORTS = ("severity", "impact")


def _stored(model: type[M], data: Any, row: FindingRecord, what: str) -> M | None:
    """Validate one stored JSON object; None for an empty one (or, logged, one no longer valid)."""
    if not isinstance(data, dict) or not data:
        return None
    # Keys a later version dropped are ignored; a field added since takes its default.
    known = {key: value for key, value in data.items() if key in model.model_fields}
    try:
        return model.model_validate(known)
    except ValidationError as exc:
        log.warning("finding.stored_json_invalid", finding_id=str(row.id), part=what, errors=exc.error_count())
        return None


def stored_impact(row: FindingRecord) -> Impact | None:
    """Return the finding's impact as stored (None when it has none)."""
    return _stored(Impact, row.impact, row, "impact")


@dataclass(frozen=True)
class StoredEvidence:
    """A finding's evidence column: the advisor's Evidence and the extras kept next to it."""

    evidence: Evidence | None
    options: list[Option]
    sources: list[str]
    notes: list[str]


def stored_evidence(row: FindingRecord) -> StoredEvidence:
    """Return the finding's evidence, options, sources and notes as stored."""
    data = dict(row.evidence or {})
    extras = {key: data.pop(key, None) for key in EVIDENCE_EXTRAS}
    options = [_stored(Option, o, row, "option") for o in extras["options"] or []]
    return StoredEvidence(
        evidence=_stored(Evidence, data, row, "evidence"),
        options=[o for o in options if o is not None],
        sources=[str(s) for s in extras["sources"] or []],
        notes=[str(n) for n in extras["notes"] or []],
    )


def stored_group(row: FindingRecord) -> FindingGroup | None:
    """Return the finding's group as stored (None when it stands alone)."""
    return _stored(FindingGroup, row.finding_group, row, "group") if row.group_id else None


def group_members(db: Session, row: FindingRecord) -> list[FindingRecord]:
    """Return the stored findings of the row's group (itself included) in the group's order: the primary fix's
    findings first. A member the latest run did not produce again is missing (or resolved, with a later group)."""
    group = stored_group(row)
    if group is None or row.group_id is None:
        return []
    rows = {
        r.dedup_key: r
        for r in db.scalars(
            select(FindingRecord).where(
                FindingRecord.org_id == row.org_id,
                FindingRecord.cluster_id == row.cluster_id,
                FindingRecord.dedup_key.in_(group.members),
            )
        )
    }
    return [rows[k] for k in group.members if k in rows]


def impact_basis(impact: Impact | None) -> str:
    """Return what impact_score measures: "headroom" (points gained), "metric" (relative change, %) or "none"."""
    if impact is None:
        return "none"
    if impact.headroom_before_pct is not None and impact.headroom_after_pct is not None:
        return "headroom"
    if impact.before is not None and impact.after is not None and impact.before != 0:
        return "metric"
    return "none"


def impact_score(impact: Impact | None) -> float:
    """Return how much a finding's fix moves things: headroom points gained, else the metric's relative change (%)."""
    if impact is None:
        return 0.0
    if impact.headroom_before_pct is not None and impact.headroom_after_pct is not None:
        return impact.headroom_after_pct - impact.headroom_before_pct
    if impact.before is not None and impact.after is not None and impact.before != 0:
        return 100 * abs(impact.after - impact.before) / abs(impact.before)
    return 0.0


# A measured headroom gain (points of a limit) ranks before a relative change of some other metric (a config value
# cut from 10 GiB/s to 62 MiB/s is a 99 % change but wins back no measured headroom): the two are not one scale.
BASIS_RANK = {"headroom": 0, "metric": 1, "none": 2}


def _impact_order(row: FindingRecord) -> tuple[int, float, int, float]:
    impact = stored_impact(row)
    saving = -(impact.monthly_cost_delta_usd or 0.0) if impact is not None else 0.0
    return (BASIS_RANK[impact_basis(impact)], -impact_score(impact), severity_rank(row.severity), -saving)


def list_findings(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    *,
    statuses: Sequence[str] = (),
    severities: Sequence[str] = (),
    rules: Sequence[str] = (),
    sort: str = "severity",
) -> tuple[list[FindingRecord], dict[str, int]]:
    """Return the cluster's findings (filtered) and counts by severity over the status and rule filters.

    sort="severity": most severe first; sort="impact": measured headroom gains first, then relative metric changes,
    then the rest; within each the largest impact_score, then most severe, then the largest monthly saving.
    """
    query = select(FindingRecord).where(FindingRecord.org_id == principal.org_id, FindingRecord.cluster_id == cluster_id)
    if statuses:
        query = query.where(FindingRecord.status.in_(list(statuses)))
    if rules:
        query = query.where(FindingRecord.rule.in_(list(rules)))
    counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
    filtered = query.subquery()
    for severity, n in db.execute(select(filtered.c.severity, func.count()).group_by(filtered.c.severity)):
        counts[severity] = int(n)
    if severities:
        query = query.where(FindingRecord.severity.in_(list(severities)))
    by_severity = case(dict(SEVERITY_RANK), value=FindingRecord.severity, else_=len(SEVERITIES) + 1)
    items = list(db.scalars(query.order_by(by_severity, FindingRecord.rule, FindingRecord.entity_id, FindingRecord.dedup_key)))
    if sort == "impact":
        items.sort(key=_impact_order)  # stable: equal keys keep the severity order above
    return items, counts


def get_finding(db: Session, principal: Principal, finding_id: uuid.UUID, *, lock: bool = False) -> FindingRecord:
    """Return the org's finding; another org's finding is indistinguishable from a missing one."""
    query = select(FindingRecord).where(FindingRecord.id == finding_id, FindingRecord.org_id == principal.org_id)
    row = db.scalar(query.with_for_update() if lock else query)
    if row is None:
        raise NotFound("Finding not found.")
    return row


def recommendations(db: Session, finding: FindingRecord) -> list[Recommendation]:
    return list(
        db.scalars(
            select(Recommendation)
            .where(Recommendation.org_id == finding.org_id, Recommendation.finding_id == finding.id)
            .order_by(Recommendation.position)
            .execution_options(populate_existing=True)  # rows are upserted with Core statements
        )
    )


def history(db: Session, finding: FindingRecord) -> list[AuditLog]:
    """Return the finding's transitions, oldest first."""
    return list(
        db.scalars(
            select(AuditLog)
            .where(AuditLog.org_id == finding.org_id, AuditLog.target_kind == "finding",
                   AuditLog.target_id == str(finding.id))
            .order_by(AuditLog.created_at, AuditLog.id)
        )
    )


# ---------------------------------------------------------------------------------------------------- API reads


class PatchStamp(Protocol):
    """A patch generated from a finding, as the finding's read lists it."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def created_at(self) -> dt.datetime: ...
    @property
    def applied_at(self) -> dt.datetime | None: ...


# The patches generated from one finding (db, org id, finding id), oldest first. The patches feature knows them and
# reads the findings to make them, so this feature does not import it back: the API's composition root
# (api.app.create_app) passes patches.service.patches_of_finding to the findings router, which passes it here.
PatchesOf = Callable[[Session, uuid.UUID, uuid.UUID], Sequence[PatchStamp]]


def finding_summary(row: FindingRecord) -> FindingSummary:
    """Return the finding as the list shows it: its columns, its stored impact and how that ranks."""
    impact = stored_impact(row)
    summary = FindingSummary.model_validate(
        {
            **{name: getattr(row, name) for name in FindingSummary.model_fields if hasattr(row, name)},
            "severity_rank": severity_rank(row.severity),
            "impact_summary": impact.summary if impact is not None else None,
            "headroom_before_pct": impact.headroom_before_pct if impact is not None else None,
            "headroom_after_pct": impact.headroom_after_pct if impact is not None else None,
            "monthly_cost_delta_usd": impact.monthly_cost_delta_usd if impact is not None else None,
            "impact_score": impact_score(impact),
            "impact_basis": impact_basis(impact),
            "group": stored_group(row),
        }
    )
    if summary.headroom_before_pct is not None and summary.headroom_after_pct is not None:
        summary.headroom_gain_pct = summary.headroom_after_pct - summary.headroom_before_pct
    return summary


def finding_read(db: Session, row: FindingRecord, patches_of: PatchesOf) -> FindingRead:
    """Return the finding as its page shows it: evidence, changes, history, its patches and related findings."""
    stored = stored_evidence(row)
    return FindingRead(
        **finding_summary(row).model_dump(),
        why=row.why,
        evidence=stored.evidence,
        impact=stored_impact(row),
        changes=[r.change for r in recommendations(db, row)],
        options=stored.options,
        sources=stored.sources,
        notes=stored.notes,
        history=[
            HistoryEntry(at=e.created_at, action=e.action, actor_user_id=e.actor_user_id, details=dict(e.details))
            for e in history(db, row)
        ],
        patches=[FindingPatchRef.model_validate(p) for p in patches_of(db, row.org_id, row.id)],
        related=_related(db, row),
    )


def _related(db: Session, row: FindingRecord) -> list[RelatedFinding]:
    group = stored_group(row)
    if group is None:
        return []
    return [
        RelatedFinding(
            id=r.id,
            rule=r.rule,
            title=r.title,
            severity=r.severity,
            status=r.status,
            dedup_key=r.dedup_key,
            entity_kind=r.entity_kind,
            entity_id=r.entity_id,
            role="primary" if r.dedup_key == group.primary else "fix" if r.dedup_key in group.fix else "related",
            resolved_by_primary=r.dedup_key in group.resolves,
        )
        for r in group_members(db, row)
        if r.id != row.id
    ]


# ---------------------------------------------------------------------------------------------------- actions


def _act(db: Session, principal: Principal, finding_id: uuid.UUID, action: str, details: dict[str, object],
         change: Callable[[FindingRecord], None]) -> FindingRecord:
    principal.require("admin")
    row = get_finding(db, principal, finding_id, lock=True)
    before = row.status
    change(row)
    db.flush()
    audit(db, principal, f"finding.{action}", target_kind="finding", target_id=row.id,
          details={"from": before, "to": row.status, **details})
    return row


def acknowledge(db: Session, principal: Principal, finding_id: uuid.UUID) -> FindingRecord:
    """Mark a finding seen by a person: it stays active and keeps being refreshed."""

    def change(row: FindingRecord) -> None:
        if row.status == "resolved":
            raise InvalidInput("status: a resolved finding cannot be acknowledged; reopen it first",
                               details={"field": "status"})
        row.status, row.snoozed_until = "acknowledged", None

    return _act(db, principal, finding_id, "acknowledged", {}, change)


def snooze(db: Session, principal: Principal, finding_id: uuid.UUID, *, until: dt.datetime,
           now: dt.datetime) -> FindingRecord:
    """Hide a finding until `until` (it is not resolved meanwhile, and reopens as open afterwards)."""
    if until.tzinfo is None:
        raise InvalidInput("until: give a timezone (e.g. 2026-11-09T00:00:00Z)", details={"field": "until"})
    if until <= now:
        raise InvalidInput("until: must be in the future", details={"field": "until"})

    def change(row: FindingRecord) -> None:
        row.status, row.snoozed_until, row.resolved_at = "snoozed", until, None

    return _act(db, principal, finding_id, "snoozed", {"until": until.isoformat()}, change)


def resolve(db: Session, principal: Principal, finding_id: uuid.UUID, *, now: dt.datetime) -> FindingRecord:
    """Close a finding by hand (it reopens if the advisor sees the condition again)."""

    def change(row: FindingRecord) -> None:
        if row.status != "resolved":
            row.status, row.resolved_at, row.snoozed_until = "resolved", now, None

    return _act(db, principal, finding_id, "resolved", {}, change)


def reopen(db: Session, principal: Principal, finding_id: uuid.UUID) -> FindingRecord:
    """Make a finding open again (from resolved, snoozed or acknowledged)."""

    def change(row: FindingRecord) -> None:
        row.status, row.resolved_at, row.snoozed_until = "open", None, None

    return _act(db, principal, finding_id, "reopened", {}, change)


# ---------------------------------------------------------------------------------------------------- what-if


def what_if_cluster(
    db: Session, principal: Principal, cluster_id: uuid.UUID, changes: Sequence[Change], *, now: dt.datetime,
    window: dt.timedelta = dt.timedelta(hours=24), as_it_was: Sequence[Change] = (),
) -> WhatIfRead:
    """Try `changes` on the cluster's last day: the ceilings they move, the findings they clear, keep or cause,
    the stored projections whose ceiling moves (days until it, before and after) and the monthly cost before and
    after. Nothing is stored. `as_it_was`: changes that first set the inventory and config back to what they were
    at `now` (a snapshot carries today's inventory; the change ledger asks what a past change was expected to do)."""
    from headroom.domain.advisor.engine import advise
    from headroom.domain.advisor.whatif import WhatIfError, apply_changes, what_if
    from headroom.domain.forecast.capacity import cluster_ceilings
    from headroom.projections import service as projections_service
    from headroom.timeseries.snapshots import build_snapshot

    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    snapshot = build_snapshot(db, cluster.org_id, cluster.id, start=end - window, end=end)
    if not snapshot.series:
        raise InvalidInput("changes: the cluster has no data in the last day to try them on",
                           details={"field": "changes"})
    snapshot = projections_service.with_projections(db, cluster, snapshot)
    if as_it_was:
        try:
            snapshot = apply_changes(snapshot, as_it_was)
        except WhatIfError as exc:
            raise InvalidInput(f"the state before the changes: {exc}", details={"field": "as_it_was"}) from exc
    # Name the first change that cannot apply after the ones before it (applied in order, as the what-if does: a
    # type change, then IOPS only the new type allows, is fine); applying is cheap, advising is not.
    for i in range(len(changes)):
        try:
            apply_changes(snapshot, changes[: i + 1])
        except WhatIfError as exc:
            raise InvalidInput(f"changes[{i}]: {exc}", details={"field": f"changes[{i}]"}) from exc
    result = what_if(snapshot, changes, now=end, findings_before=advise(snapshot, now=end))
    body = result.to_dict()
    by_key = {f.dedup_key: f for f in (*result.findings_before, *result.findings_after)}
    stored = {stored_dedup_key(k): k for k in by_key}
    finding_ids = {stored[key]: fid for fid, key in db.execute(
        select(FindingRecord.id, FindingRecord.dedup_key).where(
            FindingRecord.org_id == cluster.org_id, FindingRecord.cluster_id == cluster.id,
            FindingRecord.dedup_key.in_(list(stored))))}

    def described(keys: list[str]) -> list[WhatIfFinding]:
        return [WhatIfFinding(dedup_key=k, rule=by_key[k].rule, severity=by_key[k].severity, title=by_key[k].title,
                              finding_id=finding_ids.get(k)) for k in keys]

    ceilings_before, ceilings_after = cluster_ceilings(result.snapshot_before), cluster_ceilings(result.snapshot_after)
    moved = {key: (before, ceilings_after[key]) for key, before in ceilings_before.items()
             if key in ceilings_after and ceilings_after[key] != before}
    projections = [
        WhatIfProjection(
            entity_kind=m.entity_kind, entity_id=m.entity_id, metric=m.metric, unit=m.unit, ceiling=m.ceiling_before,
            ceiling_after=m.ceiling_after, before=WhatIfDays(**vars(m.before)), after=WhatIfDays(**vars(m.after)),
            level_now=m.level_now, horizon_days=m.horizon_days, interval=m.interval, fitted_at=m.fitted_at,
        )
        for m in projections_service.moved_projections(db, cluster.org_id, cluster.id, moved)
    ]
    return WhatIfRead(
        window_start=snapshot.window.start, window_end=snapshot.window.end,
        ceilings=[WhatIfCeiling.model_validate({**c, "entity_kind": c["entity"]["kind"], "entity_id": c["entity"]["id"]})
                  for c in body["ceilings"]],
        resolved=described(body["resolved"]), remaining=described(body["remaining"]), new=described(body["new"]),
        projections=projections, cost=WhatIfCost(**body["cost"]),
    )

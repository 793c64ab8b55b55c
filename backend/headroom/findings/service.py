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
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict
from sqlalchemy import and_, case, delete, func, literal, or_, select, text, type_coerce
from sqlalchemy.dialects.postgresql import JSONB, aggregate_order_by, insert
from sqlalchemy.orm import Session

from headroom.accounts.models import AuditLog
from headroom.accounts.service import Principal, audit
from headroom.clusters import service as clusters_service
from headroom.clusters.models import Cluster
from headroom.alerts import service as alerts_service
from headroom.metrics import service as metrics_service
from headroom.projections import service as projections_service
from headroom.domain.model import (
    SEVERITIES,
    SEVERITY_RANK,
    Change,
    Evidence,
    FindingGroup,
    Impact,
    Option,
    Severity,
    severity_rank,
)
from headroom.domain.advisor.context import Context
from headroom.domain.snapshot.schema import Snapshot
from headroom.findings.models import FindingRecord, Recommendation
from headroom.findings.stored import StoredEvidence
from headroom.findings.schemas import (
    EntityKind,
    FindingPatchRef,
    FindingRead,
    FindingStatus,
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

Advise = Callable[..., Sequence[Any]]


class StoredFinding(BaseModel):
    """A stored finding as the other features read it (digest, alerts, fleet, changes, patches): its columns and
    its typed evidence, options, sources, notes, impact and group. Built from a row by `StoredFinding.of`."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    id: uuid.UUID
    org_id: uuid.UUID
    cluster_id: uuid.UUID
    rule: str
    entity_kind: EntityKind
    entity_id: str
    severity: Severity
    status: FindingStatus
    title: str
    why: str
    confidence: float
    dedup_key: str
    first_seen_at: dt.datetime
    last_seen_at: dt.datetime
    resolved_at: dt.datetime | None
    snoozed_until: dt.datetime | None
    evidence: Evidence | None
    options: tuple[Option, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...]
    impact: Impact | None
    group: FindingGroup | None

    @classmethod
    def of(cls, row: FindingRecord) -> StoredFinding:
        return cls.model_validate(row, from_attributes=True)

    @property
    def severity_rank(self) -> int:
        return severity_rank(self.severity)

    @property
    def impact_summary(self) -> str | None:
        return self.impact.summary if self.impact is not None else None

    @property
    def headroom_before_pct(self) -> float | None:
        return self.impact.headroom_before_pct if self.impact is not None else None

    @property
    def headroom_after_pct(self) -> float | None:
        return self.impact.headroom_after_pct if self.impact is not None else None

    @property
    def headroom_gain_pct(self) -> float | None:
        before, after = self.headroom_before_pct, self.headroom_after_pct
        return after - before if before is not None and after is not None else None

    @property
    def monthly_cost_delta_usd(self) -> float | None:
        return self.impact.monthly_cost_delta_usd if self.impact is not None else None

    @property
    def monthly_saving_usd(self) -> float:
        """What the fix saves a month (0 when it costs more or says nothing)."""
        delta = self.monthly_cost_delta_usd
        return -delta if delta is not None and delta < 0 else 0.0

    @property
    def impact_basis(self) -> str:
        return impact_basis(self.impact)

    @property
    def impact_score(self) -> float:
        return impact_score(self.impact)


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
    # (event, finding) for alerts: "opened" (new or reopened), "escalated" (severity rose), "resolved"
    events: tuple[tuple[str, StoredFinding], ...] = ()
    # (finding, soonest forecast before the run, after it) of each open finding that carries a forecast, for
    # the alerts' horizons: {"burst_empty": seconds, "ceiling": seconds}; "before" is {} for a finding just opened.
    forecasts: tuple[tuple[StoredFinding, dict[str, float], dict[str, float]], ...] = ()

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


def soonest_forecasts(evidence: Evidence | None) -> dict[str, float]:
    """The soonest `within_seconds` of each alerting forecast kind of an evidence (none: not there)."""
    out: dict[str, float] = {}
    for f in evidence.forecasts if evidence is not None else ():
        if f.kind in FORECAST_KINDS and f.within_seconds is not None:
            out[f.kind] = min(float(f.within_seconds), out.get(f.kind, float("inf")))
    return out


def _row_values(finding: Any) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "entity_kind": ENTITY_KIND[finding.entity.kind],
        "entity_id": finding.entity.id,
        "severity": finding.severity,
        "title": finding.title[:500],
        "why": finding.why,
        "stored_evidence": StoredEvidence(evidence=finding.evidence, options=tuple(finding.options),
                                          sources=tuple(finding.sources), notes=tuple(finding.notes)),
        "impact": finding.impact,
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
    return {"group_id": group.id, "finding_group": stored}


def _stored_changes(db: Session, org_id: uuid.UUID, finding_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    """Each finding's stored recommendations in position order, as their JSON (keys sorted): one query."""
    out: dict[uuid.UUID, list[str]] = {fid: [] for fid in finding_ids}
    if finding_ids:
        for fid, change in db.execute(
            select(Recommendation.finding_id, type_coerce(Recommendation.change, JSONB))
            .where(Recommendation.org_id == org_id, Recommendation.finding_id.in_(list(finding_ids)))
            .order_by(Recommendation.finding_id, Recommendation.position)
        ):
            out[fid].append(json.dumps(change, sort_keys=True))
    return out


def _replace_recommendations(db: Session, row: FindingRecord, changes: Sequence[Change],
                             stored: list[str] | None = None) -> None:
    """Store the finding's changes as the advisor made them, one row per position (rows are updated in place).
    `stored`: the finding's stored ones (_stored_changes); when they are these changes already, nothing is written
    (a finding seen again usually recommends what it did 15 minutes ago)."""
    if stored is not None and stored == [json.dumps(c.model_dump(mode="json"), sort_keys=True) for c in changes]:
        return
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
    stored_changes = _stored_changes(db, cluster.org_id, [row.id for key, row in existing.items() if key in produced])
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
                if after := soonest_forecasts(f.evidence):
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
        _replace_recommendations(db, row, f.changes, stored_changes.get(row.id))
        if row.status == "open" and (after := soonest_forecasts(f.evidence)):
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
    return RunSummary(cluster.id, len(produced), opened, reopened, updated, resolved,
                      events=tuple((kind, StoredFinding.of(row)) for kind, row in events),
                      forecasts=tuple((StoredFinding.of(row), before, after) for row, before, after in forecasts))



def _with_lookback(db: Session, cluster: Cluster, snapshot: Snapshot) -> Snapshot:
    """Add the peaks over the cluster's lookback (its own, else its organisation's) that cuts are judged on."""
    from headroom.timeseries.snapshots import with_lookback

    days = clusters_service.cluster_lookback_days(db, cluster)
    return with_lookback(db, cluster.org_id, snapshot, days)


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
    snapshot = _with_lookback(db, cluster, snapshot)
    judged: Context | None = None
    if advise is None:
        from headroom.domain.advisor.engine import run_rules

        advice = run_rules(snapshot, now=end, rules=rules)
        findings: Sequence[Any] = advice.findings
        judged = advice.context
    else:
        findings = advise(snapshot, now=end, rules=rules) if rules is not None else advise(snapshot, now=end)
    summary = record_findings(db, cluster, findings, now=end)
    clusters_service.record_advised(db, cluster, end)
    # The round's burst forecasts, which every page then reads: the advisor's own, on its Context, when it judged
    # the window the pages judge (the scheduled rounds' 24 hours); else computed on that window.
    metrics_service.store_burst_forecasts(db, cluster, judged if window == metrics_service.JUDGED_WINDOW else None)
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


def group_members(db: Session, row: FindingRecord) -> list[FindingRecord]:
    """Return the stored findings of the row's group (itself included) in the group's order: the primary fix's
    findings first. A member the latest run did not produce again is missing (or resolved, with a later group)."""
    group = row.group
    if group is None:
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
    impact = row.impact
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


# ------------------------------------------------------------------------------------- reads for other features
# The digest, alerts, fleet, change ledger and patches read findings only through these (an import contract in
# pyproject.toml keeps them off the findings tables): typed reads, so a renamed field fails the type check.

def _active_at(now: dt.datetime) -> Any:
    """Active at `now`: open, acknowledged, or snoozed until a time already past."""
    return or_(FindingRecord.status.in_(("open", "acknowledged")),
               and_(FindingRecord.status == "snoozed", FindingRecord.snoozed_until <= now))


def version(db: Session, org_id: uuid.UUID) -> str:
    """A fingerprint of the org's findings that changes whenever one appears, is seen again by an advice run, or
    changes status, severity, snooze or resolution (one query; a cache key for what is built from them)."""
    row = func.concat_ws("|", FindingRecord.id, FindingRecord.status, FindingRecord.severity,
                         FindingRecord.last_seen_at, FindingRecord.resolved_at, FindingRecord.snoozed_until,
                         FindingRecord.group_id)
    count, digest = db.execute(select(func.count(), func.md5(func.coalesce(
        func.string_agg(row, aggregate_order_by(literal(","), FindingRecord.id)), "")))
        .where(FindingRecord.org_id == org_id)).one()
    return f"{count}:{digest}"


def findings_active_at(db: Session, org_id: uuid.UUID, *, now: dt.datetime) -> list[StoredFinding]:
    """Return the org's findings active at `now` (the weekly email's open findings), by cluster, rule, entity."""
    rows = db.scalars(select(FindingRecord).where(FindingRecord.org_id == org_id, _active_at(now))
                      .order_by(FindingRecord.cluster_id, FindingRecord.rule, FindingRecord.entity_id,
                                FindingRecord.dedup_key))
    return [StoredFinding.of(r) for r in rows]


def findings_of_cluster(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, *,
                        ids: Sequence[uuid.UUID] | None = None,
                        statuses: Sequence[str] | None = None) -> list[StoredFinding]:
    """Return the cluster's findings (those of `ids` when given, else all) with one of `statuses` (default any)."""
    query = select(FindingRecord).where(FindingRecord.org_id == org_id, FindingRecord.cluster_id == cluster_id)
    if ids is not None:
        query = query.where(FindingRecord.id.in_(list(ids)))
    if statuses is not None:
        query = query.where(FindingRecord.status.in_(list(statuses)))
    return [StoredFinding.of(r) for r in db.scalars(query.order_by(FindingRecord.id))]


def findings_by_id(db: Session, org_id: uuid.UUID, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, StoredFinding]:
    """Return the org's findings of `ids` (another org's or a missing id is left out)."""
    if not ids:
        return {}
    rows = db.scalars(select(FindingRecord).where(FindingRecord.org_id == org_id, FindingRecord.id.in_(list(ids))))
    return {r.id: StoredFinding.of(r) for r in rows}


def recommended_changes(db: Session, org_id: uuid.UUID,
                        finding_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[Change]]:
    """Return each finding's recommended changes in order (a finding without any is left out)."""
    out: dict[uuid.UUID, list[Change]] = {}
    if not finding_ids:
        return out
    for rec in db.scalars(select(Recommendation)
                          .where(Recommendation.org_id == org_id, Recommendation.finding_id.in_(list(finding_ids)))
                          .order_by(Recommendation.finding_id, Recommendation.position)):
        out.setdefault(rec.finding_id, []).append(rec.change)
    return out


@dataclass(frozen=True)
class RecommendedChange:
    """One change a finding of a cluster recommends, with when the finding was open (for the change ledger)."""

    finding_id: uuid.UUID
    change: Change
    first_seen_at: dt.datetime
    resolved_at: dt.datetime | None


def recommended_changes_of_cluster(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> list[RecommendedChange]:
    """Return every change the cluster's findings recommend, whatever their status."""
    rows = db.execute(
        select(Recommendation.finding_id, Recommendation.change, FindingRecord.first_seen_at, FindingRecord.resolved_at)
        .join(FindingRecord, FindingRecord.id == Recommendation.finding_id)
        .where(Recommendation.org_id == org_id, FindingRecord.org_id == org_id, FindingRecord.cluster_id == cluster_id)
        .order_by(FindingRecord.first_seen_at, FindingRecord.dedup_key, Recommendation.position))
    return [RecommendedChange(fid, change, first, resolved) for fid, change, first, resolved in rows]


@dataclass(frozen=True)
class OpenTally:
    """A cluster's findings open or acknowledged: how many of each severity, and what their fixes save a month."""

    by_severity: dict[str, int]
    monthly_saving_usd: float


def open_tally_by_cluster(db: Session, org_id: uuid.UUID) -> dict[uuid.UUID, OpenTally]:
    """Return the tally of each of the org's clusters that has an open or acknowledged finding."""
    counts: dict[uuid.UUID, dict[str, int]] = {}
    savings: dict[uuid.UUID, float] = {}
    for cluster_id, severity, impact in db.execute(
            select(FindingRecord.cluster_id, FindingRecord.severity, FindingRecord.impact)
            .where(FindingRecord.org_id == org_id, FindingRecord.status.in_(("open", "acknowledged")))):
        by_severity = counts.setdefault(cluster_id, dict.fromkeys(SEVERITIES, 0))
        by_severity[severity] = by_severity.get(severity, 0) + 1
        delta = impact.monthly_cost_delta_usd if impact is not None else None
        savings[cluster_id] = savings.get(cluster_id, 0.0) + (-delta if delta is not None and delta < 0 else 0.0)
    return {cid: OpenTally(by_severity, savings[cid]) for cid, by_severity in counts.items()}


@dataclass(frozen=True)
class WeekCounts:
    """Per cluster: findings first seen, and findings resolved, in a period."""

    opened: dict[uuid.UUID, int]
    resolved: dict[uuid.UUID, int]


def counts_in_period(db: Session, org_id: uuid.UUID, *, start: dt.datetime, end: dt.datetime) -> WeekCounts:
    """Return per cluster how many findings were first seen, and how many resolved, in [start, end)."""
    opened = db.execute(
        select(FindingRecord.cluster_id, func.count())
        .where(FindingRecord.org_id == org_id, FindingRecord.first_seen_at >= start, FindingRecord.first_seen_at < end)
        .group_by(FindingRecord.cluster_id))
    resolved = db.execute(
        select(FindingRecord.cluster_id, func.count())
        .where(FindingRecord.org_id == org_id, FindingRecord.status == "resolved", FindingRecord.resolved_at >= start,
               FindingRecord.resolved_at < end)
        .group_by(FindingRecord.cluster_id))
    return WeekCounts(opened={cid: int(n) for cid, n in opened}, resolved={cid: int(n) for cid, n in resolved})


def cluster_ids_of(db: Session, org_id: uuid.UUID, finding_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    """Return the cluster of each of the org's findings of `finding_ids` (one entry per finding found)."""
    if not finding_ids:
        return []
    return list(db.scalars(select(FindingRecord.cluster_id).where(FindingRecord.org_id == org_id,
                                                                  FindingRecord.id.in_(list(finding_ids)))))


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
    return FindingSummary.model_validate(StoredFinding.of(row), from_attributes=True)


def finding_read(db: Session, row: FindingRecord, patches_of: PatchesOf) -> FindingRead:
    """Return the finding as its page shows it: evidence, changes, history, its patches and related findings."""
    stored = StoredFinding.of(row)
    return FindingRead(
        **FindingSummary.model_validate(stored, from_attributes=True).model_dump(),
        why=stored.why,
        evidence=stored.evidence,
        impact=stored.impact,
        changes=[r.change for r in recommendations(db, row)],
        options=list(stored.options),
        sources=list(stored.sources),
        notes=list(stored.notes),
        history=[
            HistoryEntry(at=e.created_at, action=e.action, actor_user_id=e.actor_user_id, details=dict(e.details))
            for e in history(db, row)
        ],
        patches=[FindingPatchRef.model_validate(p) for p in patches_of(db, row.org_id, row.id)],
        related=_related(db, row),
    )


def _related(db: Session, row: FindingRecord) -> list[RelatedFinding]:
    group = row.group
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
    """Close a finding by hand (it reopens if the advisor sees the condition again). The channels told about it
    get its resolution, as when the advisor resolves it (PagerDuty resolves the incident, Alertmanager ends the
    alert it would otherwise keep re-posting)."""
    closed = False

    def change(row: FindingRecord) -> None:
        nonlocal closed
        if row.status != "resolved":
            row.status, row.resolved_at, row.snoozed_until = "resolved", now, None
            closed = True

    row = _act(db, principal, finding_id, "resolved", {}, change)
    cluster = db.get(Cluster, row.cluster_id) if closed else None
    if cluster is not None:
        from headroom.domain.advisor.engine import discover_rules

        alerts_service.queue_finding_events(db, cluster, [("resolved", StoredFinding.of(row))], now=now,
                                            families={rule.id: rule.family for rule in discover_rules()})
    return row


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
    snapshot = _with_lookback(db, cluster, snapshot)  # the same peaks as the run, so the same cuts
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
    moved = {key: (before.value, ceilings_after[key].value) for key, before in ceilings_before.items()
             if key in ceilings_after and ceilings_after[key].value != before.value}
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

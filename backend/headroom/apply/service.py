"""Apply, verify, roll back (docs/apply.md): the opt-in and the plans. Nothing here touches AWS or a TiKV node;
the run that carries out an approved plan reads the plan and its step rows.

Safety rules, each checked here and tested through the API:
- Apply is off by default for an organisation and for each cluster; it is allowed on a cluster only when both
  are on (a cluster narrows its organisation, never widens it). Only an owner turns either on or off.
- A plan is built from one finding's fix; if any change of the fix cannot be applied online (a TiKV restart, an
  instance stop, a volume that grows), the whole fix is refused for apply and stays a downloadable patch.
- An admin or owner proposes; another owner or admin approves: nobody approves their own plan.
- Every opt-in change, proposal and decision is in the audit log.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from headroom.accounts.models import User
from headroom.accounts.service import audit, get_organization
from headroom.apply.models import OPEN_PLAN_STATUSES, ApplyPlan, ApplyStepRun
from headroom.apply.schemas import (
    WHAT_APPLY_ALLOWS,
    WHAT_APPLY_NEVER_DOES,
    ApplyPlanCreate,
    ApplyPlanPreview,
    ApplyPlanRead,
    OrgApplySettingsUpdate,
    StepRunRead,
)
from headroom.clusters.service import get_cluster
from headroom.domain.apply.guards import BURST_BUCKET_TYPES, plan_guards
from headroom.domain.apply.run import GuardReading
from headroom.domain.apply.plan import build_steps
from headroom.domain.model import Change
from headroom.domain.tikvconf.change import PatchTarget, resolve_nodes
from headroom.domain.tikvconf.defaults import parse_version
from headroom.findings import service as findings_service
from headroom.inventory import service as inventory_service
from headroom.platform.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from headroom.platform.principal import Principal

ORG_OFF = "Apply is turned off for your organisation: an owner can turn it on in Settings › Apply."
CLUSTER_OFF = "Apply is turned off for this cluster: an owner can turn it on in the cluster's settings."


# ------------------------------------------------------------------------------------------------- the opt-in


def org_settings(db: Session, principal: Principal) -> dict[str, Any]:
    """Return the organisation's apply switch, write role and volume tag, with what apply allows."""
    org = get_organization(db, principal)
    return {"enabled": org.apply_enabled, "role_arn": org.apply_role_arn, "volume_tag_key": org.apply_volume_tag_key,
            "volume_tag_value": org.apply_volume_tag_value, "allows": WHAT_APPLY_ALLOWS,
            "never": WHAT_APPLY_NEVER_DOES}


def set_org_settings(db: Session, principal: Principal, body: OrgApplySettingsUpdate) -> dict[str, Any]:
    """Turn apply on or off for the organisation and set its write role and volume tag (owners only)."""
    principal.require("owner")
    org = get_organization(db, principal)
    before = {"enabled": org.apply_enabled, "role_arn": org.apply_role_arn,
              "volume_tag_key": org.apply_volume_tag_key, "volume_tag_value": org.apply_volume_tag_value}
    if body.volume_tag_value is not None and body.volume_tag_key is None:
        raise InvalidInput("Volume tag value: give the tag's key as well", details={"field": "volume_tag_key"})
    org.apply_enabled = body.enabled
    org.apply_role_arn = body.role_arn
    org.apply_volume_tag_key = body.volume_tag_key
    org.apply_volume_tag_value = body.volume_tag_value
    db.flush()
    after = {"enabled": org.apply_enabled, "role_arn": org.apply_role_arn,
             "volume_tag_key": org.apply_volume_tag_key, "volume_tag_value": org.apply_volume_tag_value}
    audit(db, principal, "apply.org_settings_updated", target_kind="organization", target_id=org.id,
          details={"before": before, "after": after})
    return org_settings(db, principal)


def cluster_settings(db: Session, principal: Principal, cluster_id: uuid.UUID) -> dict[str, Any]:
    """Return the cluster's apply switch, its organisation's and whether apply is allowed (both on)."""
    cluster = get_cluster(db, principal, cluster_id)
    org_on = get_organization(db, principal).apply_enabled
    return {"enabled": cluster.apply_enabled, "organization_enabled": org_on,
            "effective_enabled": org_on and cluster.apply_enabled, "allows": WHAT_APPLY_ALLOWS}


def set_cluster_settings(db: Session, principal: Principal, cluster_id: uuid.UUID, enabled: bool) -> dict[str, Any]:
    """Turn apply on or off for one cluster (owners only); it counts only while the organisation's is on."""
    principal.require("owner")
    cluster = get_cluster(db, principal, cluster_id)
    before = cluster.apply_enabled
    cluster.apply_enabled = enabled
    db.flush()
    audit(db, principal, "apply.cluster_settings_updated", target_kind="cluster", target_id=cluster.id,
          details={"enabled": enabled, "previous_enabled": before})
    return cluster_settings(db, principal, cluster_id)


# ------------------------------------------------------------------------------------------------------ plans


def _finding(db: Session, principal: Principal, finding_id: uuid.UUID) -> findings_service.StoredFinding:
    found = findings_service.findings_by_id(db, principal.org_id, [finding_id]).get(finding_id)
    if found is None:
        raise NotFound("finding not found")
    return found


def _fix(db: Session, finding: findings_service.StoredFinding) -> list[Change]:
    """The finding's fix: its recommended changes (its first option's when none are recorded)."""
    changes = findings_service.recommended_changes(db, finding.org_id, [finding.id]).get(finding.id)
    if changes:
        return changes
    return list(finding.options[0].changes) if finding.options else []


def _open_plan(db: Session, org_id: uuid.UUID, finding_id: uuid.UUID) -> ApplyPlan | None:
    return db.scalar(select(ApplyPlan).where(ApplyPlan.org_id == org_id, ApplyPlan.finding_id == finding_id,
                                             ApplyPlan.status.in_(OPEN_PLAN_STATUSES)))


def preview(db: Session, principal: Principal, finding_id: uuid.UUID) -> ApplyPlanPreview:
    """Build the plan of a finding's fix without storing it, with why it cannot be proposed now (if so)."""
    finding = _finding(db, principal, finding_id)
    cluster = get_cluster(db, principal, finding.cluster_id)
    org = get_organization(db, principal)
    nodes = inventory_service.list_nodes(db, principal, cluster.id)
    targets = [PatchTarget(status_address=n.status_address, address=n.store_address, store_id=n.store_id)
               for n in nodes if n.status_address]
    # The oldest release among the nodes decides what is online (a key online from v6.0 is refused on a v5.4 node).
    known = [(parsed, v) for v in {n.version for n in nodes if n.version} | {cluster.tikv_version}
             if (parsed := parse_version(v)) is not None]
    version = min(known)[1] if known else cluster.tikv_version
    changes = resolve_nodes(_fix(db, finding), targets)
    steps, refusals = build_steps(changes, tikv_nodes=[t.status_address for t in targets], version=version)
    metric = finding.evidence.series[0].metric if finding.evidence and finding.evidence.series else None
    guards = plan_guards(metric, burst_bucket_removed=any(
        s.change.key == "volume.type" and str(s.change.proposed) not in BURST_BUCKET_TYPES for s in steps))
    blocked: list[str] = []
    if not org.apply_enabled:
        blocked.append(ORG_OFF)
    if not cluster.apply_enabled:
        blocked.append(CLUSTER_OFF)
    if finding.status not in ("open", "acknowledged"):
        blocked.append("The finding is not open.")
    if not changes:
        blocked.append("The finding has no fix to apply.")
    if refusals:
        blocked.append("Part of this fix cannot be applied by Headroom; the whole fix stays a downloadable patch: "
                       + " ".join(r.reason for r in refusals))
    if any(s.kind == "ebs_modify_volume" for s in steps) and not org.apply_role_arn:
        blocked.append("No write role is set for your organisation: volume changes cannot be applied. Create it "
                       "from the template in Settings › Apply and paste its ARN there.")
    if _open_plan(db, principal.org_id, finding.id) is not None:
        blocked.append("A plan for this finding is already waiting for approval or running.")
    return ApplyPlanPreview(finding_id=finding.id, finding_title=finding.title, cluster_id=cluster.id,
                            tikv_version=version, steps=steps, refusals=refusals, guards=guards,
                            predicted=finding.impact, blocked=blocked)


def propose(db: Session, principal: Principal, cluster_id: uuid.UUID, body: ApplyPlanCreate, *,
            now: dt.datetime) -> ApplyPlanRead:
    """Propose a plan from a finding's fix (admins and owners); refused with the reason when it cannot be."""
    principal.require("admin")
    cluster = get_cluster(db, principal, cluster_id)
    plan = preview(db, principal, body.finding_id)
    if plan.cluster_id != cluster.id:
        raise NotFound("finding not found")
    org_on = get_organization(db, principal).apply_enabled
    if not org_on:
        raise PermissionDenied(ORG_OFF, code="apply_off")
    if not cluster.apply_enabled:
        raise PermissionDenied(CLUSTER_OFF, code="apply_off")
    if plan.blocked:
        raise InvalidInput(f"Finding: {plan.blocked[0]}", details={"field": "finding_id", "reasons": plan.blocked})
    row = ApplyPlan(
        org_id=principal.org_id, cluster_id=cluster.id, finding_id=plan.finding_id, finding_title=plan.finding_title,
        status="proposed", tikv_version=plan.tikv_version, steps=plan.steps, refusals=plan.refusals,
        guards=plan.guards, predicted=plan.predicted, maintenance_window=body.maintenance_window,
        proposed_by_user_id=principal.user_id, proposed_at=now,
    )
    db.add(row)
    try:
        db.flush()
    except IntegrityError as exc:  # a concurrent proposal for the same finding
        raise Conflict("A plan for this finding is already waiting for approval or running.") from exc
    db.add_all(ApplyStepRun(org_id=principal.org_id, plan_id=row.id, position=s.position, status="pending")
               for s in plan.steps)
    db.flush()
    audit(db, principal, "apply.plan_proposed", target_kind="apply_plan", target_id=row.id,
          details={"finding_id": str(plan.finding_id), "cluster_id": str(cluster.id), "steps": len(plan.steps),
                   "maintenance_window": body.maintenance_window.model_dump() if body.maintenance_window else None})
    return plan_read(db, row)


def _plan(db: Session, principal: Principal, plan_id: uuid.UUID, *, lock: bool = False) -> ApplyPlan:
    query = select(ApplyPlan).where(ApplyPlan.org_id == principal.org_id, ApplyPlan.id == plan_id)
    row = db.scalar(query.with_for_update() if lock else query)
    if row is None:
        raise NotFound("plan not found")
    return row


def get_plan(db: Session, principal: Principal, plan_id: uuid.UUID) -> ApplyPlanRead:
    """Return one of the organisation's plans."""
    return plan_read(db, _plan(db, principal, plan_id))


def list_plans(db: Session, principal: Principal, cluster_id: uuid.UUID) -> list[ApplyPlanRead]:
    """Return the cluster's plans, newest first."""
    get_cluster(db, principal, cluster_id)
    rows = db.scalars(select(ApplyPlan).where(ApplyPlan.org_id == principal.org_id, ApplyPlan.cluster_id == cluster_id)
                      .order_by(ApplyPlan.proposed_at.desc(), ApplyPlan.id).limit(100))
    return [plan_read(db, row) for row in rows]


def approve(db: Session, principal: Principal, plan_id: uuid.UUID, note: str, *, now: dt.datetime) -> ApplyPlanRead:
    """Approve a proposed plan: an owner or admin who did not propose it, while apply is still on."""
    principal.require("admin")
    row = _plan(db, principal, plan_id, lock=True)
    if row.status != "proposed":
        raise Conflict(f"This plan is {row.status.replace('_', ' ')}; only a proposed plan can be approved.")
    if principal.user_id is None or principal.user_id == row.proposed_by_user_id:
        raise PermissionDenied("You proposed this plan: another owner or admin must approve it.",
                               code="own_plan")
    cluster = get_cluster(db, principal, row.cluster_id)
    if not get_organization(db, principal).apply_enabled:
        raise PermissionDenied(ORG_OFF, code="apply_off")
    if not cluster.apply_enabled:
        raise PermissionDenied(CLUSTER_OFF, code="apply_off")
    return _decide(db, principal, row, "approved", note, now)


def reject(db: Session, principal: Principal, plan_id: uuid.UUID, note: str, *, now: dt.datetime) -> ApplyPlanRead:
    """Reject a proposed or approved plan that has not started (its proposer withdrawing it: cancelled)."""
    principal.require("admin")
    row = _plan(db, principal, plan_id, lock=True)
    if row.status not in ("proposed", "approved"):
        raise Conflict(f"This plan is {row.status.replace('_', ' ')}; it can no longer be stopped this way.")
    status = "cancelled" if principal.user_id == row.proposed_by_user_id else "rejected"
    return _decide(db, principal, row, status, note, now)


def _decide(db: Session, principal: Principal, row: ApplyPlan, status: str, note: str,
            now: dt.datetime) -> ApplyPlanRead:
    row.status, row.decided_by_user_id, row.decided_at, row.decision_note = status, principal.user_id, now, note
    db.flush()
    audit(db, principal, f"apply.plan_{status}", target_kind="apply_plan", target_id=row.id,
          details={"finding_id": str(row.finding_id) if row.finding_id else None, "note": note})
    return plan_read(db, row)


def plan_read(db: Session, row: ApplyPlan) -> ApplyPlanRead:
    """Return a stored plan as the API shows it."""
    people = (row.proposed_by_user_id, row.decided_by_user_id, row.run_by_user_id)
    emails = {u.id: u.email for u in db.scalars(select(User).where(User.id.in_([i for i in people if i is not None])))}
    runs = db.scalars(select(ApplyStepRun).where(ApplyStepRun.org_id == row.org_id, ApplyStepRun.plan_id == row.id)
                      .order_by(ApplyStepRun.position))
    return ApplyPlanRead(
        id=row.id, finding_id=row.finding_id, finding_title=row.finding_title, cluster_id=row.cluster_id,
        tikv_version=row.tikv_version, steps=row.steps, refusals=row.refusals, guards=row.guards,
        predicted=row.predicted, blocked=[], status=row.status,
        maintenance_window=row.maintenance_window,
        proposed_by=emails.get(row.proposed_by_user_id) if row.proposed_by_user_id else None,
        proposed_at=row.proposed_at,
        decided_by=emails.get(row.decided_by_user_id) if row.decided_by_user_id else None,
        decided_at=row.decided_at, decision_note=row.decision_note,
        run_by=emails.get(row.run_by_user_id) if row.run_by_user_id else None, run_started_at=row.run_started_at,
        run_finished_at=row.run_finished_at, stop_requested_at=row.stop_requested_at, outcome=row.outcome,
        step_runs=[_step_read(r) for r in runs],
    )


def _step_read(run: ApplyStepRun) -> StepRunRead:
    seen = run.observed

    def scalar(key: str) -> Any:
        value = seen.get(key)
        return value if isinstance(value, str | int | float | bool) or value is None else str(value)

    return StepRunRead(position=run.position, status=run.status, started_at=run.started_at,
                       finished_at=run.finished_at, watch_until=run.watch_until, undo_not_before=run.undo_not_before,
                       undo_confirmed_at=run.undo_confirmed_at, before=scalar("before"), read_back=scalar("read_back"),
                       restored=scalar("restored"),
                       modification_state=scalar("undo_modification_state") or scalar("modification_state"),
                       note=scalar("note"), guard_readings=[GuardReading.model_validate(g) for g in run.guard_readings],
                       error=run.error)


@dataclass(frozen=True)
class AppliedChange:
    """A change a run made (or set back), as the change ledger lists it."""

    id: str
    at: dt.datetime
    plan_id: uuid.UUID
    finding_id: uuid.UUID | None
    undo: bool
    change: Change  # current: the value read before; proposed: the value read back after
    who: str


def applied_changes(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, since: dt.datetime) -> list[AppliedChange]:
    """Every change the cluster's runs made since `since`, and every one they set back, with the values read."""
    plans = {p.id: p for p in db.scalars(select(ApplyPlan).where(
        ApplyPlan.org_id == org_id, ApplyPlan.cluster_id == cluster_id, ApplyPlan.run_started_at.is_not(None)))}
    if not plans:
        return []
    runs = db.scalars(select(ApplyStepRun).where(ApplyStepRun.org_id == org_id,
                                                 ApplyStepRun.plan_id.in_(list(plans)),
                                                 ApplyStepRun.finished_at >= since))
    emails = {u.id: u.email for u in db.scalars(select(User).where(
        User.id.in_([p.run_by_user_id for p in plans.values() if p.run_by_user_id])))}
    out: list[AppliedChange] = []
    for run in runs:
        seen = run.observed
        if "read_back" not in seen or run.finished_at is None:
            continue
        plan = plans[run.plan_id]
        step = next(s for s in plan.steps if s.position == run.position)
        runner = emails.get(plan.run_by_user_id) if plan.run_by_user_id else None
        who = f"Headroom, plan run by {runner or 'a former member'}"
        out.append(AppliedChange(id=f"apply:{run.id}", at=run.finished_at, plan_id=plan.id,
                                 finding_id=plan.finding_id, undo=False, who=who,
                                 change=step.change.model_copy(update={"current": seen.get("before"),
                                                                       "proposed": seen["read_back"]})))
        restored = seen.get("restored")
        restored_at = seen.get("restored_at")
        if run.status == "undone" and restored is not None and restored_at:
            out.append(AppliedChange(id=f"apply_undo:{run.id}", at=dt.datetime.fromisoformat(restored_at),
                                     plan_id=plan.id, finding_id=plan.finding_id, undo=True, who=who,
                                     change=step.change.model_copy(update={"current": seen["read_back"],
                                                                           "proposed": restored})))
    return out

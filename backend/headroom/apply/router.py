"""Apply (docs/apply.md): the opt-in per organisation and per cluster, and plans made from a finding's fix."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, status

from headroom.api.deps import DB, Caller, Context
from headroom.apply import run, service
from headroom.apply.schemas import (
    ApplyDecision,
    ApplyStopAll,
    ApplyPlanCreate,
    ApplyPlanPreview,
    ApplyPlanRead,
    ClusterApplySettingsRead,
    ClusterApplySettingsUpdate,
    OrgApplySettingsRead,
    OrgApplySettingsUpdate,
)

router = APIRouter(tags=["apply"])


@router.get("/org/apply-settings", response_model=OrgApplySettingsRead)
def get_org_apply(caller: Caller, db: DB) -> object:
    """Whether Headroom may apply fixes in your organisation (off by default), the write role and volume tag."""
    return service.org_settings(db, caller)


@router.put("/org/apply-settings", response_model=OrgApplySettingsRead)
def put_org_apply(body: OrgApplySettingsUpdate, caller: Caller, db: DB) -> object:
    """Turn apply on or off for the organisation, with its write role and volume tag (owners only)."""
    return service.set_org_settings(db, caller, body)


@router.get("/clusters/{cluster_id}/apply-settings", response_model=ClusterApplySettingsRead)
def get_cluster_apply(cluster_id: uuid.UUID, caller: Caller, db: DB) -> object:
    """Whether Headroom may apply fixes on this cluster: its switch and its organisation's must both be on."""
    return service.cluster_settings(db, caller, cluster_id)


@router.put("/clusters/{cluster_id}/apply-settings", response_model=ClusterApplySettingsRead)
def put_cluster_apply(cluster_id: uuid.UUID, body: ClusterApplySettingsUpdate, caller: Caller, db: DB) -> object:
    """Turn apply on or off for this cluster (owners only)."""
    return service.set_cluster_settings(db, caller, cluster_id, body.enabled)


@router.get("/findings/{finding_id}/apply-plan", response_model=ApplyPlanPreview)
def preview_plan(finding_id: uuid.UUID, caller: Caller, db: DB) -> ApplyPlanPreview:
    """What applying the finding's fix would do: the steps in order, what is refused and why, the guards, the
    predicted effect and cost, and why it cannot be proposed now (if so). Nothing is stored."""
    return service.preview(db, caller, finding_id)


@router.get("/clusters/{cluster_id}/apply-plans", response_model=list[ApplyPlanRead])
def list_plans(cluster_id: uuid.UUID, caller: Caller, db: DB) -> list[ApplyPlanRead]:
    """The cluster's plans, newest first."""
    return service.list_plans(db, caller, cluster_id)


@router.post("/clusters/{cluster_id}/apply-plans", response_model=ApplyPlanRead, status_code=status.HTTP_201_CREATED)
def propose_plan(cluster_id: uuid.UUID, body: ApplyPlanCreate, caller: Caller, db: DB, ctx: Context) -> ApplyPlanRead:
    """Propose a plan from a finding's fix (admins and owners); another owner or admin approves it."""
    return service.propose(db, caller, cluster_id, body, now=ctx.clock())


@router.get("/apply-plans/{plan_id}", response_model=ApplyPlanRead)
def get_plan(plan_id: uuid.UUID, caller: Caller, db: DB) -> ApplyPlanRead:
    return service.get_plan(db, caller, plan_id)


@router.post("/apply-plans/{plan_id}/approve", response_model=ApplyPlanRead)
def approve_plan(plan_id: uuid.UUID, body: ApplyDecision, caller: Caller, db: DB, ctx: Context) -> ApplyPlanRead:
    """Approve a proposed plan: an owner or admin who did not propose it."""
    return service.approve(db, caller, plan_id, body.note, now=ctx.clock())


@router.post("/apply-plans/{plan_id}/reject", response_model=ApplyPlanRead)
def reject_plan(plan_id: uuid.UUID, body: ApplyDecision, caller: Caller, db: DB, ctx: Context) -> ApplyPlanRead:
    """Reject a plan that has not started (its proposer withdrawing it: cancelled)."""
    return service.reject(db, caller, plan_id, body.note, now=ctx.clock())


def _queue(db: DB, ctx: Context, plan_id: uuid.UUID, what: str) -> None:
    """Commit, then queue the plan's advance (the minute tick advances it too, should the queue be down)."""
    database_url = ctx.job_database_url()
    if database_url:
        from headroom.platform.jobs.dispatch import enqueue_after_commit

        enqueue_after_commit(db, "apply.advance", ctx.settings, database_url, what=what,
                             recorded="The request is saved; the run is advanced within a minute once the queue is "
                                      "back.", plan_id=str(plan_id))


@router.post("/apply-plans/{plan_id}/run", response_model=ApplyPlanRead, status_code=status.HTTP_202_ACCEPTED)
def run_plan(plan_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> ApplyPlanRead:
    """Run an approved plan, one step at a time, each verified and watched (admins and owners). Refused while
    apply is off for the organisation or the cluster, or outside the plan's maintenance window."""
    row = run.start_run(db, caller, plan_id, now=ctx.clock())
    view = service.plan_read(db, row)
    _queue(db, ctx, plan_id, "the run")
    return view


@router.post("/apply-plans/{plan_id}/stop", response_model=ApplyPlanRead)
def stop_plan(plan_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> ApplyPlanRead:
    """Stop a running plan at once (admins and owners): no further step starts; the step being carried out
    finishes its read-back; every step ends done, not started, rolled back, stopped or unknown (with what was
    last read)."""
    row = run.stop_run(db, caller, plan_id, now=ctx.clock())
    view = service.plan_read(db, row)
    _queue(db, ctx, plan_id, "the stop")
    return view


@router.post("/org/apply-stop", response_model=ApplyStopAll)
def stop_all_plans(caller: Caller, db: DB, ctx: Context) -> ApplyStopAll:
    """Stop every running plan of the organisation (admins and owners)."""
    stopped = run.stop_all(db, caller, now=ctx.clock())
    for plan_id in stopped:
        _queue(db, ctx, plan_id, "the stop")
    db.commit()
    return ApplyStopAll(stopped=stopped)


@router.post("/apply-plans/{plan_id}/undo", response_model=ApplyPlanRead)
def undo_plan(plan_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> ApplyPlanRead:
    """Confirm the undo of the plan's applied changes (admins and owners): TiKV settings are set back at once, each
    read back; a volume change only once AWS allows the volume to be modified again, six hours after its
    modification started (refused with 409 and the time when nothing else is left to undo)."""
    row = run.confirm_undo(db, caller, plan_id, now=ctx.clock())
    view = service.plan_read(db, row)
    _queue(db, ctx, plan_id, "the undo")
    return view

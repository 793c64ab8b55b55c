"""Findings: list a cluster's findings, read one with its evidence, changes and history, and act on it
(acknowledge, snooze, resolve, reopen: admins, audit-logged); run the advisor on a cluster now."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, status

from headroom.accounts.service import audit
from headroom.api.deps import DB, AppContext, Caller, Context, ReadDB
from headroom.clusters import service as clusters_service
from headroom.domain.model import Severity
from headroom.findings import advice_runs, evidence_series, service
from headroom.findings.schemas import (
    AdviseQueued,
    EvidenceChartRead,
    EvidenceSeriesRead,
    FindingList,
    FindingRead,
    FindingStatus,
    SeverityCounts,
    SnoozeBody,
    WhatIfRead,
    WhatIfRequest,
)
from headroom.platform.errors import QueueUnavailable, RateLimited
from headroom.platform.schemas import ErrorResponse

router = APIRouter(tags=["findings"])
ADVICE_JOB = "advice.run"


def get_patches_of(request: Request) -> service.PatchesOf:
    """The patches feature's lister of a finding's patches, wired in by the composition root (api.app)."""
    patches_of: service.PatchesOf = request.app.state.finding_patches
    return patches_of


PatchesOf = Annotated[service.PatchesOf, Depends(get_patches_of)]


@router.get("/clusters/{cluster_id}/findings", response_model=FindingList)
def list_findings(
    cluster_id: uuid.UUID,
    caller: Caller,
    db: ReadDB,
    status_: list[FindingStatus] = Query(default=[], alias="status", description="Repeatable; default all."),
    severity: list[Severity] = Query(default=[], description="Repeatable; default all."),
    rule: list[str] = Query(default=[], description="Rule ids; repeatable; default all."),
    sort: Literal["severity", "impact"] = Query(
        default="severity",
        description="severity: most severe first; impact: measured headroom gains first, then relative changes of "
        "the impact metric, then the rest, each by impact_score (ties: most severe, then the largest monthly saving).",
    ),
) -> FindingList:
    """List the cluster's findings, most severe (or most impactful) first, with counts by severity."""
    cluster = clusters_service.get_cluster(db, caller, cluster_id)
    items, counts = service.list_findings(
        db, caller, cluster.id, statuses=status_, severities=severity, rules=rule, sort=sort
    )
    return FindingList(items=[service.finding_summary(f) for f in items], total=len(items),
                       counts=SeverityCounts(**counts))


@router.get("/findings/{finding_id}", response_model=FindingRead)
def get_finding(finding_id: uuid.UUID, caller: Caller, db: ReadDB, patches_of: PatchesOf) -> FindingRead:
    """Read a finding: evidence, why, recommended changes, impact, confidence and history."""
    return service.finding_read(db, service.get_finding(db, caller, finding_id), patches_of)


@router.get("/findings/{finding_id}/evidence/series", response_model=EvidenceChartRead)
def get_evidence_series(finding_id: uuid.UUID, caller: Caller, db: ReadDB) -> EvidenceChartRead:
    """The points of the finding's evidence series over its window, with their reference lines (ceilings)."""
    row = service.get_finding(db, caller, finding_id)
    chart = evidence_series.evidence_series(db, row)
    return EvidenceChartRead(
        finding_id=row.id,
        window_start=chart.window_start,
        window_end=chart.window_end,
        step_seconds=chart.step_seconds,
        series=[
            EvidenceSeriesRead.model_validate(
                {"entity_kind": s.entity_kind, "entity_id": s.entity_id, "metric": s.metric, "label": s.label,
                 "unit": s.unit, "t": s.t, "values": s.values, "reference_lines": s.reference_lines,
                 "found": s.found, "entity_name": s.entity_name}
            )
            for s in chart.series
        ],
    )


@router.post("/findings/{finding_id}/acknowledge", response_model=FindingRead)
def acknowledge(finding_id: uuid.UUID, caller: Caller, db: DB, patches_of: PatchesOf) -> FindingRead:
    """Mark the finding as seen (admin); it stays active."""
    return service.finding_read(db, service.acknowledge(db, caller, finding_id), patches_of)


@router.post("/findings/{finding_id}/snooze", response_model=FindingRead)
def snooze(finding_id: uuid.UUID, body: SnoozeBody, caller: Caller, db: DB, ctx: Context,
           patches_of: PatchesOf) -> FindingRead:
    """Hide the finding until a time (admin); the advisor does not resolve or reopen it meanwhile."""
    row = service.snooze(db, caller, finding_id, until=body.until, now=ctx.clock())
    return service.finding_read(db, row, patches_of)


@router.post("/findings/{finding_id}/resolve", response_model=FindingRead)
def resolve(finding_id: uuid.UUID, caller: Caller, db: DB, ctx: Context,
           patches_of: PatchesOf) -> FindingRead:
    """Close the finding (admin); it reopens if the advisor sees the condition again."""
    return service.finding_read(db, service.resolve(db, caller, finding_id, now=ctx.clock()), patches_of)


@router.post("/findings/{finding_id}/reopen", response_model=FindingRead)
def reopen(finding_id: uuid.UUID, caller: Caller, db: DB, patches_of: PatchesOf) -> FindingRead:
    """Make the finding open again (admin)."""
    return service.finding_read(db, service.reopen(db, caller, finding_id), patches_of)


@router.post(
    "/clusters/{cluster_id}/advise",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=AdviseQueued,
    responses={503: {"model": ErrorResponse, "description": "The job queue is unreachable; nothing was queued."}},
)
def advise_now(cluster_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> AdviseQueued:
    """Run the advisor on the cluster now (admin); returns the job's task id.

    One run per cluster at a time: while one is queued or running, this returns its task id with
    `already_queued` and queues nothing. New runs are limited per organisation (429 with Retry-After); when the
    job queue is unreachable nothing is queued or recorded (503 with Retry-After)."""
    from headroom.platform.jobs import dispatch

    caller.require("admin")
    cluster = clusters_service.get_cluster(db, caller, cluster_id)
    now = ctx.clock()
    pending = advice_runs.pending_run(db, cluster, now)
    if pending is not None:
        return AdviseQueued(task_id=pending.task_id, job=ADVICE_JOB, already_queued=True)
    _limit_new_runs(ctx, caller.org_id)
    task_id, new = advice_runs.claim_run(db, cluster, now)
    if not new:  # a concurrent request queued it
        return AdviseQueued(task_id=task_id, job=ADVICE_JOB, already_queued=True)
    db.commit()  # the run's row exists before its job can end and release it
    try:
        dispatch.enqueue(ADVICE_JOB, ctx.settings, ctx.job_database_url(), task_id=task_id, what="advice",
                         cluster_id=str(cluster.id), run_id=task_id)
    except QueueUnavailable:
        advice_runs.release_run(db, cluster.id, task_id)
        db.commit()
        raise
    audit(db, caller, "cluster.advise_requested", target_kind="cluster", target_id=cluster.id,
          details={"task_id": task_id})
    return AdviseQueued(task_id=task_id, job=ADVICE_JOB)


def _limit_new_runs(ctx: AppContext, org_id: uuid.UUID) -> None:
    """Count a new run against the org's limit (kept in this process while Redis is down: the enqueue that follows
    then answers 503)."""
    try:
        ctx.rate_limiter.hit(f"advise:org:{org_id}", advice_runs.ADVISE_PER_ORG, advice_runs.ADVISE_WINDOW_SECONDS)
    except RateLimited as exc:
        raise RateLimited(
            f"This organisation queued {advice_runs.ADVISE_PER_ORG} advice runs in the last "
            f"{advice_runs.ADVISE_WINDOW_SECONDS} seconds; try again in {exc.retry_after_seconds} s "
            "(the scheduled run advises every cluster every 15 minutes).",
            retry_after_seconds=exc.retry_after_seconds,
        ) from exc


@router.post("/clusters/{cluster_id}/what-if", response_model=WhatIfRead)
def what_if(cluster_id: uuid.UUID, body: WhatIfRequest, caller: Caller, db: DB, ctx: Context) -> WhatIfRead:
    """Try changes on the cluster's last day of data: the ceilings they move (with the p99 against them), the
    findings they clear, keep or cause, and the monthly cost before and after. Nothing is stored or applied."""
    return service.what_if_cluster(db, caller, cluster_id, body.changes, now=ctx.clock())

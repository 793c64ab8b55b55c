"""The change ledger of a cluster (its changes, the findings they addressed, their measured effect and outcome),
and each advisor rule's record of predictions that held."""

from __future__ import annotations

import contextlib
import uuid

from fastapi import APIRouter, Query

from headroom.api.deps import Caller, Context, ReadDB
from headroom.changes import service
from headroom.changes.schemas import ChangeLedger, RuleList
from headroom.platform.errors import QueueUnavailable
from headroom.platform.shared_cache import shared_cache

router = APIRouter(tags=["changes"])


@router.get("/clusters/{cluster_id}/changes", response_model=ChangeLedger)
def list_changes(
    cluster_id: uuid.UUID, caller: Caller, db: ReadDB, ctx: Context,
    days: int = Query(default=90, ge=1, le=400, description="How far back to list changes (days)."),
) -> ChangeLedger:
    """Patches marked applied and the changes Headroom saw (EC2 inventory, live TiKV config), newest first, each
    with the findings it addressed (predicted effect, status now) and its measured effect before and after."""
    def later() -> None:
        from headroom.platform.jobs import dispatch

        # Redis down: the next load tries its share again; the page says they are pending
        with contextlib.suppress(QueueUnavailable):
            dispatch.enqueue("changes.predict", ctx.settings, ctx.job_database_url(), what="the predicted effects",
                             cluster_id=str(cluster_id), org_id=str(caller.org_id))

    return service.cluster_changes(db, caller, cluster_id, now=ctx.clock(), days=days,
                                   cache=shared_cache(ctx.settings.redis_url),
                                   predict_in_request=service.PREDICT_IN_REQUEST, on_deferred=later)


@router.get("/rules", response_model=RuleList)
def list_rules(
    caller: Caller, db: ReadDB, ctx: Context,
    days: int = Query(default=90, ge=1, le=400, description="How far back to count applied fixes (days)."),
) -> RuleList:
    """Every advisor rule, with how often its prediction held for this organisation's applied fixes: held, partly
    or missed against the measured effect of the change (How Headroom decides: Fix outcomes)."""
    return service.rule_accuracy(db, caller, now=ctx.clock(), days=days)

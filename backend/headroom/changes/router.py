"""The change ledger of a cluster (its changes, the findings they addressed, their measured effect and outcome),
and each advisor rule's record of predictions that held."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Query

from headroom.api.deps import Caller, Context, ReadDB
from headroom.changes import service
from headroom.changes.schemas import ChangeLedger, RuleList

router = APIRouter(tags=["changes"])


@router.get("/clusters/{cluster_id}/changes", response_model=ChangeLedger)
def list_changes(
    cluster_id: uuid.UUID, caller: Caller, db: ReadDB, ctx: Context,
    days: int = Query(default=90, ge=1, le=400, description="How far back to list changes (days)."),
) -> ChangeLedger:
    """Patches marked applied and the changes Headroom saw (EC2 inventory, live TiKV config), newest first, each
    with the findings it addressed (predicted effect, status now) and its measured effect before and after."""
    return service.cluster_changes(db, caller, cluster_id, now=ctx.clock(), days=days)


@router.get("/rules", response_model=RuleList)
def list_rules(
    caller: Caller, db: ReadDB, ctx: Context,
    days: int = Query(default=90, ge=1, le=400, description="How far back to count applied fixes (days)."),
) -> RuleList:
    """Every advisor rule, with how often its prediction held for this organisation's applied fixes: held, partly
    or missed against the measured effect of the change (How Headroom decides: Fix outcomes)."""
    return service.rule_accuracy(db, caller, now=ctx.clock(), days=days)

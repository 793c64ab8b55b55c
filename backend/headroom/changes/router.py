"""The change ledger of a cluster: patches applied and changes seen, with the findings and measured effect."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Query

from headroom.api.deps import Caller, Context, ReadDB
from headroom.changes import service
from headroom.changes.schemas import ChangeLedger

router = APIRouter(prefix="/clusters/{cluster_id}/changes", tags=["changes"])


@router.get("", response_model=ChangeLedger)
def list_changes(
    cluster_id: uuid.UUID, caller: Caller, db: ReadDB, ctx: Context,
    days: int = Query(default=90, ge=1, le=400, description="How far back to list changes (days)."),
) -> ChangeLedger:
    """Patches marked applied and the changes Headroom saw (EC2 inventory, live TiKV config), newest first, each
    with the findings it addressed (predicted effect, status now) and its measured effect before and after."""
    return service.cluster_changes(db, caller, cluster_id, now=ctx.clock(), days=days)

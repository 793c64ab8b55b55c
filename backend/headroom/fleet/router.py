"""The fleet overview: every cluster of the organisation, its health, nearest ceiling, spend and savings."""

from __future__ import annotations

from fastapi import APIRouter

from headroom.api.deps import Caller, Context, ReadDB
from headroom.fleet import service
from headroom.fleet.schemas import FleetRead

router = APIRouter(prefix="/fleet", tags=["fleet"])


@router.get("", response_model=FleetRead)
def read_fleet(caller: Caller, db: ReadDB, ctx: Context) -> FleetRead:
    """Each cluster with its open findings by severity, headroom score (the tightest ceiling's peak use over the
    last day), nearest projected ceiling, monthly spend on the volumes and instances Headroom sees, and the savings
    its open findings' fixes offer."""
    return service.fleet(db, caller, now=ctx.clock())

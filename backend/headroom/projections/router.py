"""Projections: days until each ceiling of a cluster's volumes, instances and stores."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Query

from headroom.api.deps import Caller, ReadDB
from headroom.projections import service
from headroom.projections.schemas import ProjectionList

router = APIRouter(prefix="/clusters/{cluster_id}/projections", tags=["projections"])


@router.get("", response_model=ProjectionList)
def list_projections(
    cluster_id: uuid.UUID,
    caller: Caller,
    db: ReadDB,
    bands: bool = Query(default=True, description="Include each projection's forecast path (band); false for a "
                                                  "list of days, a few KB instead of hundreds."),
) -> ProjectionList:
    """Every projected ceiling of the cluster, the nearest first, with its 90 % interval, method and history."""
    return service.list_projections(db, caller, cluster_id, bands=bands)

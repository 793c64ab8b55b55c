"""Clusters: create, list, read, update, delete (admins write, viewers read)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from headroom.api.deps import DB, Caller, ReadDB
from headroom.clusters import service
from headroom.clusters.schemas import (
    ClusterCreate,
    ClusterList,
    ClusterPreferencesRead,
    ClusterPreferencesUpdate,
    ClusterRead,
    ClusterUpdate,
)

router = APIRouter(prefix="/clusters", tags=["clusters"])


@router.get("", response_model=ClusterList)
def list_clusters(caller: Caller, db: ReadDB) -> ClusterList:
    items = service.list_clusters(db, caller)
    return ClusterList(items=[ClusterRead.model_validate(c) for c in items], total=len(items))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=ClusterRead)
def create_cluster(body: ClusterCreate, caller: Caller, db: DB) -> object:
    return service.create_cluster(db, caller, **body.model_dump())


@router.get("/{cluster_id}", response_model=ClusterRead)
def get_cluster(cluster_id: uuid.UUID, caller: Caller, db: ReadDB) -> object:
    return service.get_cluster(db, caller, cluster_id)


@router.patch("/{cluster_id}", response_model=ClusterRead)
def update_cluster(cluster_id: uuid.UUID, body: ClusterUpdate, caller: Caller, db: DB) -> object:
    return service.update_cluster(db, caller, cluster_id, **body.model_dump(exclude_unset=True))


@router.delete("/{cluster_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_cluster(cluster_id: uuid.UUID, caller: Caller, db: DB) -> Response:
    service.delete_cluster(db, caller, cluster_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{cluster_id}/recommendation-preferences", response_model=ClusterPreferencesRead)
def get_cluster_preferences(cluster_id: uuid.UUID, caller: Caller, db: ReadDB) -> object:
    """The cluster's lookback: its own (null: its organisation's) and the one the advisor uses."""
    return service.preferences(db, caller, cluster_id)


@router.put("/{cluster_id}/recommendation-preferences", response_model=ClusterPreferencesRead)
def put_cluster_preferences(
    cluster_id: uuid.UUID, body: ClusterPreferencesUpdate, caller: Caller, db: DB
) -> object:
    """Set the cluster's lookback: 14, 32 or 93 days, or null to inherit its organisation's (admins and owners)."""
    return service.set_lookback_days(db, caller, cluster_id, body.lookback_days)

"""Clusters: org-owned records of TiDB/TiKV clusters. Every query is scoped to the caller's organisation."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from headroom.accounts.models import Organization
from headroom.accounts.service import Principal, audit, get_organization
from headroom.clusters.models import Cluster
from headroom.domain.snapshot.lookback import DEFAULT_LOOKBACK_DAYS, effective_lookback_days
from headroom.domain.snapshot.schema import LookbackDays
from headroom.platform.errors import Conflict, NotFound


def list_clusters(db: Session, principal: Principal) -> list[Cluster]:
    return list(db.scalars(select(Cluster).where(Cluster.org_id == principal.org_id).order_by(Cluster.name)))


def get_cluster(db: Session, principal: Principal, cluster_id: uuid.UUID) -> Cluster:
    """Return the org's cluster; another org's cluster is indistinguishable from a missing one."""
    cluster = db.scalar(select(Cluster).where(Cluster.id == cluster_id, Cluster.org_id == principal.org_id))
    if cluster is None:
        raise NotFound("Cluster not found.")
    return cluster


def record_advised(db: Session, cluster: Cluster, at: dt.datetime) -> None:
    """Note that the advisor ran over the cluster's data at `at` (the cluster's edit time is left alone)."""
    db.execute(update(Cluster).where(Cluster.id == cluster.id, Cluster.org_id == cluster.org_id)
               .values(advised_at=at, updated_at=Cluster.updated_at))
    cluster.advised_at = at
    db.flush()


def _name_taken(db: Session, principal: Principal, name: str, exclude: uuid.UUID | None = None) -> bool:
    query = select(func.count()).select_from(Cluster).where(Cluster.org_id == principal.org_id, Cluster.name == name)
    if exclude is not None:
        query = query.where(Cluster.id != exclude)
    return bool(db.scalar(query))


def create_cluster(db: Session, principal: Principal, **fields: Any) -> Cluster:
    principal.require("admin")
    if _name_taken(db, principal, fields["name"]):
        raise Conflict(f"A cluster named {fields['name']!r} already exists.", code="cluster_name_taken")
    cluster = Cluster(org_id=principal.org_id, **fields)
    db.add(cluster)
    try:
        db.flush()
    except IntegrityError as exc:  # a concurrent create with the same name
        raise Conflict(f"A cluster named {fields['name']!r} already exists.", code="cluster_name_taken") from exc
    audit(db, principal, "cluster.created", target_kind="cluster", target_id=cluster.id, details={"name": cluster.name})
    return cluster


def update_cluster(db: Session, principal: Principal, cluster_id: uuid.UUID, **fields: Any) -> Cluster:
    principal.require("admin")
    cluster = get_cluster(db, principal, cluster_id)
    if "name" in fields and _name_taken(db, principal, fields["name"], exclude=cluster.id):
        raise Conflict(f"A cluster named {fields['name']!r} already exists.", code="cluster_name_taken")
    for key, value in fields.items():
        setattr(cluster, key, value)
    db.flush()
    audit(db, principal, "cluster.updated", target_kind="cluster", target_id=cluster.id, details=fields)
    return cluster


def preferences(db: Session, principal: Principal, cluster_id: uuid.UUID) -> dict[str, int | None]:
    """Return the cluster's own lookback, its organisation's and the one in force (another org's cluster: 404)."""
    return _preferences(get_cluster(db, principal, cluster_id), get_organization(db, principal).lookback_days)


def _preferences(cluster: Cluster, org_days: int) -> dict[str, int | None]:
    return {
        "lookback_days": cluster.lookback_days,
        "organization_lookback_days": org_days,
        "effective_lookback_days": effective_lookback_days(org_days, cluster.lookback_days),
    }


def set_lookback_days(
    db: Session, principal: Principal, cluster_id: uuid.UUID, days: int | None
) -> dict[str, int | None]:
    """Set (or with None, clear) the cluster's own lookback (admins and owners); audit-logged."""
    principal.require("admin")
    cluster = get_cluster(db, principal, cluster_id)
    before = cluster.lookback_days
    cluster.lookback_days = days
    db.flush()
    audit(db, principal, "cluster.preferences_updated", target_kind="cluster", target_id=cluster.id,
          details={"lookback_days": days, "previous_lookback_days": before})
    return _preferences(cluster, get_organization(db, principal).lookback_days)


def cluster_lookback_days(db: Session, cluster: Cluster) -> LookbackDays:
    """Return the lookback in force for a cluster: its own, else its organisation's."""
    org_days = db.scalar(select(Organization.lookback_days).where(Organization.id == cluster.org_id))
    return effective_lookback_days(org_days if org_days is not None else DEFAULT_LOOKBACK_DAYS, cluster.lookback_days)


def delete_cluster(db: Session, principal: Principal, cluster_id: uuid.UUID) -> None:
    principal.require("admin")
    cluster = get_cluster(db, principal, cluster_id)
    db.delete(cluster)
    audit(db, principal, "cluster.deleted", target_kind="cluster", target_id=cluster_id, details={"name": cluster.name})

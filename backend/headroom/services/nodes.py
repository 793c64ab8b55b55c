"""TiKV nodes of a cluster: listed, added by hand (store + status address), or found by a Prometheus source."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from headroom.collect.tikv_status import config_url
from headroom.core.errors import Conflict, NotFound
from headroom.core.outbound import require_allowed_url
from headroom.services.accounts import Principal, audit
from headroom.services.clusters import get_cluster
from headroom.store.models import TikvNode


def list_nodes(db: Session, principal: Principal, cluster_id: uuid.UUID) -> list[TikvNode]:
    """Return the org's cluster's TiKV nodes ordered by store address."""
    get_cluster(db, principal, cluster_id)
    return list(
        db.scalars(
            select(TikvNode)
            .where(TikvNode.org_id == principal.org_id, TikvNode.cluster_id == cluster_id)
            .order_by(TikvNode.store_address)
        )
    )


def get_node(db: Session, principal: Principal, cluster_id: uuid.UUID, node_id: uuid.UUID) -> TikvNode:
    """Return one node of the org's cluster; another org's node is a 404."""
    node = db.scalar(
        select(TikvNode).where(
            TikvNode.id == node_id, TikvNode.cluster_id == cluster_id, TikvNode.org_id == principal.org_id
        )
    )
    if node is None:
        raise NotFound("TiKV node not found.")
    return node


def create_node(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    *,
    store_address: str,
    status_address: str | None = None,
    store_id: int | None = None,
    version: str | None = None,
) -> TikvNode:
    """Add a node by hand (when Prometheus can't tell its status address, or there is no Prometheus)."""
    principal.require("admin")
    get_cluster(db, principal, cluster_id)
    if status_address:
        require_allowed_url(config_url(status_address), field="status_address")
    taken = db.scalar(
        select(TikvNode.id).where(TikvNode.cluster_id == cluster_id, TikvNode.store_address == store_address)
    )
    if taken is not None:
        raise Conflict(f"The cluster already has a node at {store_address}.", code="node_exists")
    node = TikvNode(
        org_id=principal.org_id,
        cluster_id=cluster_id,
        store_address=store_address,
        status_address=status_address,
        store_id=store_id,
        version=version,
    )
    db.add(node)
    db.flush()
    audit(
        db,
        principal,
        "tikv_node.created",
        target_kind="tikv_node",
        target_id=node.id,
        details={"store_address": store_address, "status_address": status_address},
    )
    return node


def update_node(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    node_id: uuid.UUID,
    *,
    status_address: str | None,
) -> TikvNode:
    """Set (or clear) a node's status address by hand."""
    principal.require("admin")
    node = get_node(db, principal, cluster_id, node_id)
    if status_address:
        require_allowed_url(config_url(status_address), field="status_address")
    node.status_address = status_address
    db.flush()
    audit(
        db,
        principal,
        "tikv_node.updated",
        target_kind="tikv_node",
        target_id=node.id,
        details={"status_address": status_address},
    )
    return node

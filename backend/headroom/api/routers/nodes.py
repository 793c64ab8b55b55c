"""TiKV nodes of a cluster and their config versions (status port, uploaded tikv.toml, TiUP topology)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Query, status

from headroom.api.deps import DB, Caller, Context
from headroom.api.schemas.nodes import ConfigRead, ConfigUpload, NodeCreate, NodeList, NodeRead, NodeUpdate
from headroom.services import nodes as service
from headroom.services import tikv_configs
from headroom.store.models import TikvConfig, TikvNode

router = APIRouter(prefix="/clusters/{cluster_id}/nodes", tags=["nodes"])


def _node_read(db: DB, node: TikvNode) -> NodeRead:
    read = NodeRead.model_validate(node)
    read.config_versions = tikv_configs.config_versions(db, node)
    return read


def _config_read(row: TikvConfig, created: bool = True) -> ConfigRead:
    read = ConfigRead.model_validate(row)
    read.created = created
    return read


@router.get("", response_model=NodeList)
def list_nodes(cluster_id: uuid.UUID, caller: Caller, db: DB) -> NodeList:
    items = [_node_read(db, n) for n in service.list_nodes(db, caller, cluster_id)]
    return NodeList(items=items, total=len(items))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=NodeRead)
def create_node(cluster_id: uuid.UUID, body: NodeCreate, caller: Caller, db: DB) -> NodeRead:
    """Add a node by hand, e.g. to give a status address Prometheus can't tell."""
    return _node_read(db, service.create_node(db, caller, cluster_id, **body.model_dump()))


@router.patch("/{node_id}", response_model=NodeRead)
def update_node(
    cluster_id: uuid.UUID, node_id: uuid.UUID, body: NodeUpdate, caller: Caller, db: DB
) -> NodeRead:
    return _node_read(
        db, service.update_node(db, caller, cluster_id, node_id, status_address=body.status_address)
    )


@router.get("/{node_id}/config", response_model=ConfigRead)
def get_config(
    cluster_id: uuid.UUID,
    node_id: uuid.UUID,
    caller: Caller,
    db: DB,
    version: int | None = Query(default=None, ge=1, description="A stored version; the latest when omitted."),
) -> ConfigRead:
    return _config_read(tikv_configs.get_config(db, caller, cluster_id, node_id, version))


@router.post("/{node_id}/config", status_code=status.HTTP_201_CREATED, response_model=ConfigRead)
def upload_config(
    cluster_id: uuid.UUID, node_id: uuid.UUID, body: ConfigUpload, caller: Caller, db: DB, ctx: Context
) -> ConfigRead:
    """Upload a tikv.toml (or a TiUP topology); malformed input answers 422 naming the line and column."""
    stored = tikv_configs.upload_config(
        db, caller, cluster_id, node_id, content=body.content, format=body.format, now=ctx.clock()
    )
    return _config_read(stored.config, stored.created)


@router.post("/{node_id}/config/refresh", response_model=ConfigRead)
def refresh_config(
    cluster_id: uuid.UUID, node_id: uuid.UUID, caller: Caller, db: DB, ctx: Context
) -> ConfigRead:
    """Read the node's live config from its status port now (`GET http://<status_address>/config`)."""
    caller.require("admin")
    node = service.get_node(db, caller, cluster_id, node_id)
    result = tikv_configs.poll_status_port(db, node, now=ctx.clock())
    if result.error is not None:
        from headroom.core.errors import ServiceUnavailable

        raise ServiceUnavailable(f"Could not read the config: {result.error}", code="status_port_unreachable")
    return _config_read(tikv_configs.get_config(db, caller, cluster_id, node_id), result.created)

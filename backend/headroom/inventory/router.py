"""TiKV nodes of a cluster and their config versions (status port, uploaded tikv.toml, TiUP topology)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status

from headroom.api.deps import DB, Caller, Context, ReadDB, outbound_slot, release_connection
from headroom.inventory import service
from headroom.inventory.schemas import (
    ConfigRead,
    ConfigUpload,
    NodeCreate,
    NodeList,
    NodeRead,
    NodeUpdate,
)
from headroom.platform import outbound
from headroom.platform.schemas import INT32_MAX, ErrorResponse

# Uploads are parsed one at a time per API process (platform/isolated.py), each within 2 CPU seconds: 30 a minute
# is far beyond a person uploading their nodes' files, and keeps one organisation from queueing the parser for all
# (docs/upload-limits.md).
UPLOADS_PER_ORG_PER_MINUTE = 30

router = APIRouter(prefix="/clusters/{cluster_id}/nodes", tags=["nodes"])
REFRESH_BUDGET_SECONDS = 30.0  # all attempts of a status-port read from a request (docs/outbound.md)


def get_grafana_of(request: Request) -> service.GrafanaOf | None:
    """What the sources feature provides (api.app): the Grafana URL of a cluster's Prometheus source."""
    grafana_of: service.GrafanaOf | None = getattr(request.app.state, "grafana_of", None)
    return grafana_of


GrafanaOf = Annotated[service.GrafanaOf | None, Depends(get_grafana_of)]


@router.get("", response_model=NodeList)
def list_nodes(cluster_id: uuid.UUID, caller: Caller, db: ReadDB, grafana_of: GrafanaOf) -> NodeList:
    items = service.node_reads(db, service.list_nodes(db, caller, cluster_id), grafana_of)
    return NodeList(items=items, total=len(items))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=NodeRead)
def create_node(cluster_id: uuid.UUID, body: NodeCreate, caller: Caller, db: DB) -> NodeRead:
    """Add a node by hand, e.g. to give a status address Prometheus can't tell."""
    return service.node_reads(db, [service.create_node(db, caller, cluster_id, **body.model_dump())])[0]


@router.patch("/{node_id}", response_model=NodeRead)
def update_node(
    cluster_id: uuid.UUID, node_id: uuid.UUID, body: NodeUpdate, caller: Caller, db: DB
) -> NodeRead:
    node = service.update_node(db, caller, cluster_id, node_id, status_address=body.status_address)
    return service.node_reads(db, [node])[0]


@router.get("/{node_id}/config", response_model=ConfigRead)
def get_config(
    cluster_id: uuid.UUID,
    node_id: uuid.UUID,
    caller: Caller,
    db: ReadDB,
    version: int | None = Query(default=None, ge=1, le=INT32_MAX,
                                description="A stored version; the latest when omitted."),
) -> ConfigRead:
    return service.config_read(service.get_config(db, caller, cluster_id, node_id, version))


@router.post(
    "/{node_id}/config",
    status_code=status.HTTP_201_CREATED,
    response_model=ConfigRead,
    responses={413: {"model": ErrorResponse, "description": "Over 256 KiB (tikv.toml) or 512 KiB (topology)."},
               429: {"model": ErrorResponse, "description": "Over 30 uploads by the organisation in a minute."}},
)
def upload_config(
    cluster_id: uuid.UUID, node_id: uuid.UUID, body: ConfigUpload, caller: Caller, db: DB, ctx: Context
) -> ConfigRead:
    """Upload a tikv.toml (or a TiUP topology); malformed input answers 422 naming the key, line and column.

    Limits (docs/upload-limits.md): size before parsing (413), YAML aliases and expansion, JSON-only YAML tags,
    no nan/inf or NUL values, and the topology sections read are type-checked (422). Nothing is stored on a
    refusal. At most 30 uploads per organisation per minute (429 with Retry-After)."""
    ctx.rate_limiter.hit(f"config-upload:org:{caller.org_id}", UPLOADS_PER_ORG_PER_MINUTE, 60,
                         f"Your organisation uploaded {UPLOADS_PER_ORG_PER_MINUTE} configs in the last minute; "
                         "try again in a minute.")
    stored = service.upload_config(
        db, caller, cluster_id, node_id, content=body.content, format=body.format, now=ctx.clock()
    )
    return service.config_read(stored.config, stored.created, stored.warnings)


@router.post("/{node_id}/config/refresh", response_model=ConfigRead,
             responses={503: {"model": ErrorResponse, "description": "The node's status port could not be read."}})
def refresh_config(
    cluster_id: uuid.UUID, node_id: uuid.UUID, caller: Caller, db: DB, ctx: Context
) -> ConfigRead:
    """Read the node's live config from its status port now (`GET http://<status_address>/config`), within
    15 s per attempt and 4 MiB; shares the organisation's limit of 4 outbound checks at once (429 beyond)."""
    from headroom.platform.errors import ServiceUnavailable

    caller.require("admin")
    now = ctx.clock()
    address = service.get_node(db, caller, cluster_id, node_id).status_address
    if not address:
        raise ServiceUnavailable("Could not read the config: no status address", code="status_port_unreachable")
    release_connection(db)  # no pool connection is held while the status port answers
    with outbound_slot(ctx, caller), outbound.limits(seconds=REFRESH_BUDGET_SECONDS):
        decoded, error = service.read_status_port(address)
    if decoded is None:
        raise ServiceUnavailable(f"Could not read the config: {error}", code="status_port_unreachable")
    node = service.get_node(db, caller, cluster_id, node_id)
    result = service.store_polled(db, node, decoded, now=now)
    return service.config_read(service.get_config(db, caller, cluster_id, node_id), result.created)

"""Data sources: AWS connections and Prometheus servers. Secrets are write-only."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Response, status

from headroom.api.deps import DB, Caller, Context
from headroom.sources import service
from headroom.sources.schemas import (
    AwsConnectionRead,
    AwsConnectionUpdate,
    PrometheusSourceCreate,
    PrometheusSourceRead,
    PrometheusSourceUpdate,
)

router = APIRouter(prefix="/sources", tags=["sources"])
# POST /sources/aws (connect: save, test, then import) is in headroom.sources.aws.router, with the test.


@router.get("/aws", response_model=list[AwsConnectionRead])
def list_aws(caller: Caller, db: DB) -> list[AwsConnectionRead]:
    return [service.aws_connection_read(r) for r in service.list_aws_connections(db, caller)]


# `:uuid` so that GET /sources/aws/setup (routers/sources_aws_setup.py, discovered after this module) is not
# taken for a connection id.
@router.get("/aws/{connection_id:uuid}", response_model=AwsConnectionRead)
def get_aws(connection_id: uuid.UUID, caller: Caller, db: DB) -> AwsConnectionRead:
    return service.aws_connection_read(service.get_aws_connection(db, caller, connection_id))


@router.patch("/aws/{connection_id}", response_model=AwsConnectionRead)
def update_aws(connection_id: uuid.UUID, body: AwsConnectionUpdate, caller: Caller, db: DB,
               ctx: Context) -> AwsConnectionRead:
    fields: dict[str, Any] = body.model_dump(exclude_unset=True)
    return service.aws_connection_read(service.update_aws_connection(db, caller, ctx.secret_box, connection_id, **fields))


@router.delete("/aws/{connection_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_aws(connection_id: uuid.UUID, caller: Caller, db: DB) -> Response:
    service.delete_aws_connection(db, caller, connection_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/prometheus", response_model=list[PrometheusSourceRead])
def list_prometheus(caller: Caller, db: DB) -> list[PrometheusSourceRead]:
    return [service.prometheus_source_read(r) for r in service.list_prometheus_sources(db, caller)]


@router.post("/prometheus", status_code=status.HTTP_201_CREATED, response_model=PrometheusSourceRead)
def create_prometheus(body: PrometheusSourceCreate, caller: Caller, db: DB, ctx: Context) -> PrometheusSourceRead:
    fields = body.model_dump()
    fields["base_url"] = str(body.base_url)
    fields["grafana_url"] = str(body.grafana_url).rstrip("/") if body.grafana_url else None
    return service.prometheus_source_read(service.create_prometheus_source(db, caller, ctx.secret_box, **fields))


@router.get("/prometheus/{source_id}", response_model=PrometheusSourceRead)
def get_prometheus(source_id: uuid.UUID, caller: Caller, db: DB) -> PrometheusSourceRead:
    return service.prometheus_source_read(service.get_prometheus_source(db, caller, source_id))


@router.patch("/prometheus/{source_id}", response_model=PrometheusSourceRead)
def update_prometheus(source_id: uuid.UUID, body: PrometheusSourceUpdate, caller: Caller, db: DB,
                      ctx: Context) -> PrometheusSourceRead:
    fields: dict[str, Any] = body.model_dump(exclude_unset=True)
    if "base_url" in fields:
        fields["base_url"] = str(body.base_url)
    if "grafana_url" in fields:
        fields["grafana_url"] = str(body.grafana_url).rstrip("/") if body.grafana_url else None
    return service.prometheus_source_read(service.update_prometheus_source(db, caller, ctx.secret_box, source_id, **fields))


@router.delete("/prometheus/{source_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_prometheus(source_id: uuid.UUID, caller: Caller, db: DB) -> Response:
    service.delete_prometheus_source(db, caller, source_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

"""AWS connection operations: test permissions, start and watch the CloudWatch backfill, list sweeps."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from headroom.api.deps import DB, Caller, Context, outbound_slot, release_connection
from headroom.platform.jobs.dispatch import BACKFILL_NOT_QUEUED
from headroom.platform.logging import get_logger
from headroom.platform.schemas import ErrorResponse
from headroom.sources.aws import service
from headroom.sources.aws.schemas import (
    AwsBackfillRead,
    AwsBackfillRequest,
    AwsConnectionTestRead,
    CollectionSweepRead,
)
from headroom.sources.aws.session import AwsClients, clients_for

router = APIRouter(prefix="/sources/aws", tags=["sources"])
log = get_logger("headroom.api.sources_aws_ops")


@router.post("/{connection_id}/test", response_model=AwsConnectionTestRead)
def test_aws(connection_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> AwsConnectionTestRead:
    """Call each API Headroom needs once (Describe*, GetMetricData, ListMetrics) and report per IAM action
    whether it is allowed; record the outcome on the connection's health. Shares the organisation's limit of
    4 outbound checks at once (429 beyond)."""

    def make_clients(connection: service.ConnectionCredentials, region: str) -> AwsClients:
        return clients_for(connection, region, ctx.secret_box, endpoint_url=ctx.settings.aws_endpoint_url,
                           max_attempts=3)

    now = ctx.clock()
    connection = service.prepare_test(db, caller, connection_id)
    release_connection(db)  # no pool connection is held while AWS (or a proxy in the way) answers
    with outbound_slot(ctx, caller):
        report = service.run_test(connection, make_clients=make_clients, now=now)
    service.record_test(db, caller, connection_id, report, now)
    return AwsConnectionTestRead.model_validate(report.to_dict())


@router.get("/{connection_id}/backfill", response_model=AwsBackfillRead)
def get_aws_backfill(connection_id: uuid.UUID, caller: Caller, db: DB) -> AwsBackfillRead:
    """Progress of the CloudWatch history import (datapoints done / total)."""
    return AwsBackfillRead.model_validate(service.backfill_view(service.backfill_status(db, caller, connection_id)))


@router.post("/{connection_id}/backfill", status_code=202, response_model=AwsBackfillRead,
             responses={503: {"model": ErrorResponse, "description": BACKFILL_NOT_QUEUED}})
def start_aws_backfill(connection_id: uuid.UUID, body: AwsBackfillRequest, caller: Caller, db: DB,
                       ctx: Context) -> AwsBackfillRead:
    """(Re)import the connection's history; the job is queued once the request is recorded (committed).
    When the job queue is unreachable: 503, and the recorded request is queued by the collection sweep later."""
    row = service.start_backfill(db, caller, connection_id, days=body.days)
    database_url = ctx.job_database_url()
    view = AwsBackfillRead.model_validate({**service.backfill_view(row), "queued": bool(database_url)})
    if database_url:
        from headroom.platform.jobs.dispatch import enqueue_after_commit

        enqueue_after_commit(db, "aws.backfill", ctx.settings, database_url, what="the history import",
                             recorded=BACKFILL_NOT_QUEUED, connection_id=str(connection_id))
    else:
        log.info("aws.backfill_not_queued", reason="no DATABASE_URL; the ingest job will queue it")
    return view


@router.get("/{connection_id}/sweeps", response_model=list[CollectionSweepRead])
def list_aws_sweeps(connection_id: uuid.UUID, caller: Caller, db: DB,
                    limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[CollectionSweepRead]:
    """The connection's recent collection sweeps with their CloudWatch cost (calls, metrics requested)."""
    return [CollectionSweepRead.model_validate(s) for s in service.list_sweeps(db, caller, connection_id, limit=limit)]

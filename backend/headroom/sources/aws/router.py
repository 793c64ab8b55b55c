"""AWS connection operations: test permissions, start and watch the CloudWatch backfill, list sweeps."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal
from headroom.api.deps import DB, AppContext, Caller, Context, outbound_slot, release_connection
from headroom.platform.errors import QueueUnavailable, RateLimited, ServiceUnavailable
from headroom.platform.jobs.dispatch import BACKFILL_NOT_QUEUED
from headroom.platform.logging import get_logger
from headroom.platform.schemas import ErrorResponse
from headroom.sources import service as sources
from headroom.sources.aws import service
from headroom.sources.aws.schemas import (
    AwsBackfillRead,
    AwsBackfillRequest,
    AwsConnectionCreated,
    AwsConnectionTestRead,
    CollectionSweepRead,
)
from headroom.sources.schemas import AwsConnectionCreate

router = APIRouter(prefix="/sources/aws", tags=["sources"])
log = get_logger("headroom.api.sources_aws_ops")


def _test(db: Session, caller: Principal, ctx: AppContext, connection_id: uuid.UUID, *,
          on_save: bool = False) -> AwsConnectionTestRead:
    """Test the connection (no pool connection held while AWS answers), record the outcome, and queue the history
    import when this was its first passing test."""
    make_clients = service.probe_clients(ctx.aws_clients, ctx.secret_box, ctx.settings.aws_endpoint_url)
    now = ctx.clock()
    connection = service.prepare_test(db, caller, connection_id)
    release_connection(db)  # no pool connection is held while AWS (or a proxy in the way) answers
    with outbound_slot(ctx, caller):
        report = service.run_test(connection, make_clients=make_clients, now=now)
    import_started = service.record_test(db, caller, connection_id, report, now, on_save=on_save)
    db.commit()  # the job reads the import request: queue it once it is committed
    if import_started:
        from headroom.platform.jobs.dispatch import enqueue

        try:
            enqueue("aws.backfill", ctx.settings, ctx.job_database_url(), connection_id=str(connection_id))
        except QueueUnavailable:
            # The import is recorded as queued: the collection sweep queues it once it is stale.
            log.warning("aws.backfill_not_queued", connection_id=str(connection_id), reason="queue unreachable")
    return AwsConnectionTestRead.model_validate({**report.to_dict(), "import_started": import_started})


@router.post("", status_code=status.HTTP_201_CREATED, response_model=AwsConnectionCreated)
def create_aws(body: AwsConnectionCreate, caller: Caller, db: DB, ctx: Context) -> AwsConnectionCreated:
    """Connect an AWS account: a read-only IAM role (with your org's external ID), static keys, or the
    default credential chain of a self-hosted install. The connection is saved, then tested (credentials and
    each IAM action, as POST .../test): a passing test starts the 14-day history import; a failing one leaves
    the connection saved and unhealthy with the reason, and no import until a test passes."""
    connection = sources.create_aws_connection(db, caller, ctx.secret_box, **body.model_dump())
    db.commit()
    try:
        report: AwsConnectionTestRead | None = _test(db, caller, ctx, connection.id, on_save=True)
    except (RateLimited, ServiceUnavailable):  # every outbound slot busy: saved, tested later from its page
        report = None
    saved = sources.get_aws_connection(db, caller, connection.id)
    return AwsConnectionCreated.model_validate({**sources.aws_connection_read(saved).model_dump(), "test": report})


@router.post("/{connection_id}/test", response_model=AwsConnectionTestRead)
def test_aws(connection_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> AwsConnectionTestRead:
    """Call each API Headroom needs once (Describe*, GetMetricData, ListMetrics) and report per IAM action
    whether it is allowed; record the outcome on the connection's health. The first passing test starts the
    history import. Shares the organisation's limit of 4 outbound checks at once (429 beyond)."""
    return _test(db, caller, ctx, connection_id)


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

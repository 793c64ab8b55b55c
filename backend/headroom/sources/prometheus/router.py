"""Prometheus source operations: test the connection, start and watch the history backfill."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from headroom.api.deps import DB, Caller, Context, outbound_slot, release_connection
from headroom.platform.jobs.dispatch import BACKFILL_NOT_QUEUED
from headroom.platform.logging import get_logger
from headroom.platform.schemas import ErrorResponse
from headroom.sources.prometheus import service
from headroom.sources.prometheus.schemas import BackfillRead, BackfillRequest, ConnectionTestRead

router = APIRouter(prefix="/sources/prometheus", tags=["sources"])
log = get_logger("headroom.api.sources_prometheus_ops")


@router.post("/{source_id}/test", response_model=ConnectionTestRead)
def test_prometheus(source_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> ConnectionTestRead:
    """Check reachability and credentials, that TiKV series exist under the label selector, and which of the
    metrics the advisor reads are missing; record the outcome on the source's health. At most 4 tests (and
    status-port reads) run at once per organisation (429 beyond), each within 20 s."""
    make_client = service.box_client_factory(
        ctx.secret_box, timeout_seconds=15.0, deadline_seconds=15.0,
        max_response_bytes=service.TEST_MAX_RESPONSE_BYTES,
    )
    now = ctx.clock()
    probe = service.prepare_test(db, caller, source_id, make_client=make_client)
    release_connection(db)  # no pool connection is held while the tenant's server answers
    with outbound_slot(ctx, caller):
        report = service.run_probe(probe, now)
    service.record_test(db, caller, source_id, report, now)
    return ConnectionTestRead.model_validate(report.to_dict())


@router.get("/{source_id}/backfill", response_model=BackfillRead)
def get_backfill(source_id: uuid.UUID, caller: Caller, db: DB) -> BackfillRead:
    """Progress of the source's history import (query steps done / total, points written)."""
    return BackfillRead.model_validate(service.backfill_view(service.backfill_status(db, caller, source_id)))


@router.post("/{source_id}/backfill", status_code=202, response_model=BackfillRead,
             responses={503: {"model": ErrorResponse, "description": BACKFILL_NOT_QUEUED}})
def start_backfill(source_id: uuid.UUID, body: BackfillRequest, caller: Caller, db: DB, ctx: Context) -> BackfillRead:
    """(Re)import the source's history; the job is queued once the request is recorded (committed).
    When the job queue is unreachable: 503, and the recorded request is queued by the collection sweep later."""
    row, needs_run = service.start_backfill(db, caller, source_id, now=ctx.clock(), days=body.days)
    view = BackfillRead.model_validate({**service.backfill_view(row), "queued": needs_run})
    database_url = ctx.job_database_url()
    if needs_run and database_url:
        from headroom.platform.jobs.dispatch import enqueue_after_commit

        enqueue_after_commit(db, "prometheus.backfill", ctx.settings, database_url, what="the history import",
                             recorded=BACKFILL_NOT_QUEUED, source_id=str(source_id))
    elif needs_run:
        log.info("prometheus.backfill_not_queued", reason="no DATABASE_URL; the ingest job will queue it")
    return view

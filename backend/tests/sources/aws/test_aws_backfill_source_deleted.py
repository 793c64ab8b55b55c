"""A connection deleted while its CloudWatch history is being imported: the import ends cleanly (its rows went
with the connection, so nothing is left to import or record) instead of failing the task with StaleDataError.
Real parts: the moto server, the test PostgreSQL with committed transactions (the deletion is another session's,
as a user pressing Delete in the API would be), and the backfill job's own units of work."""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
from aws_fixtures import boto, make_fleet, make_org_and_connection, put_series
from headroom.accounts.models import Organization
from headroom.platform.db import session_scope
from headroom.platform.jobs.context import job_context
from headroom.sources.aws import service as aws_service
from headroom.sources.aws.session import AwsClients, client_config
from headroom.sources.models import AwsBackfill, AwsConnection, BackfillStep
from sqlalchemy import delete, func, select
from structlog.testing import capture_logs


def test_a_connection_deleted_mid_import_ends_the_import_cleanly(
    database_url: str, settings: Any, region: str, aws_endpoint_url: str
) -> None:
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    fleet = make_fleet(region, aws_endpoint_url)
    cw = boto("cloudwatch", region, aws_endpoint_url)
    for n, volume in enumerate(fleet["data"] + fleet["raft"]):
        put_series(cw, "AWS/EBS", "VolumeId", volume, "VolumeReadOps",
                   [(now - dt.timedelta(minutes=97 * k + n), float(k)) for k in range(1, 40)])
    with session_scope(database_url) as db:
        org, conn = make_org_and_connection(db, region, "Deleted mid-import")
        org_id, cid = org.id, conn.id

    calls: list[int] = []
    second_step_first_call: list[int] = []

    def on_call(params: dict[str, Any], **_: Any) -> None:
        calls.append(1)
        if len(calls) == 1:  # the plan is committed before the first request: where its second step starts
            with session_scope(database_url) as db:
                pages = db.scalars(select(BackfillStep.spec).where(BackfillStep.source_id == cid)
                                   .order_by(BackfillStep.seq)).all()
            assert len(pages) >= 2, "the plan needs two steps for a deletion between them"
            second_step_first_call.append(int(pages[0]["pages"]) + 1)
        if len(calls) == second_step_first_call[0]:
            # the first step is stored (its checkpoint committed); a user deletes the connection now
            with session_scope(database_url) as db:
                db.execute(delete(AwsConnection).where(AwsConnection.id == cid))

    def clients_for(account: Any, region_name: str, box: Any, endpoint_url: str | None = None) -> AwsClients:
        session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                        region_name=region_name)
        session.events.register("before-parameter-build.monitoring.GetMetricData", on_call)
        return AwsClients(session, region_name, endpoint_url, client_config(2))

    try:
        with capture_logs() as logs:
            result = aws_service.backfill(job_context(database_url, settings), now, str(cid), days=7,
                                          clients_for=clients_for)
        assert result == {"skipped": "connection deleted during the import"}, result
        events = [e["event"] for e in logs]
        assert "aws.backfill_source_deleted" in events and "aws.backfill_failed" not in events, events
        assert len(calls) >= second_step_first_call[0]
        with session_scope(database_url) as db:
            assert db.scalar(select(func.count()).select_from(AwsBackfill).where(AwsBackfill.source_id == cid)) == 0
    finally:
        with session_scope(database_url) as db:
            db.execute(delete(Organization).where(Organization.id == org_id))

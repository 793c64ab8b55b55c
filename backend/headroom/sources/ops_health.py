"""The sources' collection health for Headroom's own /metrics (headroom.platform.telemetry): every source's
status and last success, and each AWS connection's last finished incremental sweep. Across organisations and by
source id only: names never leave this module."""

from __future__ import annotations

from sqlalchemy import select, true
from sqlalchemy.orm import Session

from headroom.platform.telemetry import DeploymentState, SourceHealthRow, SweepRow
from headroom.sources.models import AwsConnection, CollectionSweep, PrometheusSource


def deployment_state(db: Session) -> DeploymentState:
    """Every source's health and every AWS connection's last finished incremental sweep."""
    sources: list[SourceHealthRow] = []
    for kind, model in (("aws", AwsConnection), ("prometheus", PrometheusSource)):
        rows = db.execute(
            select(model.id, model.status, model.last_success_at, model.consecutive_failures).order_by(
                model.id
            )
        )
        sources += [
            SourceHealthRow(kind, str(r.id), r.status, r.last_success_at, r.consecutive_failures)
            for r in rows
        ]
    # One index range scan per connection (ix_collection_sweeps_source_started, read backwards), not a scan of the
    # whole history: the table keeps every sweep.
    last = (
        select(
            CollectionSweep.source_kind,
            CollectionSweep.started_at,
            CollectionSweep.finished_at,
            CollectionSweep.api_calls,
            CollectionSweep.points_written,
            CollectionSweep.error,
        )
        .where(
            CollectionSweep.source_id == AwsConnection.id,
            CollectionSweep.kind == "incremental",
            CollectionSweep.finished_at.is_not(None),
        )
        .order_by(CollectionSweep.started_at.desc())
        .limit(1)
        .lateral()
    )
    rows = db.execute(select(AwsConnection.id, last).join(last, true()).order_by(AwsConnection.id))
    sweeps = [
        SweepRow(
            r.source_kind,
            str(r.id),
            r.started_at,
            r.finished_at,
            r.api_calls,
            r.points_written,
            r.error is not None,
        )
        for r in rows
    ]
    return DeploymentState(sources=sources, sweeps=sweeps)

"""The prometheus.ingest / prometheus.backfill jobs against the real Prometheus of conftest.py.

The jobs call services.prometheus_ops with a JobContext; here the context's units of work are the test's session,
so everything stays inside the test's rolled-back transaction, and its queue records what was queued rather than
sending it. (The backfill's liveness lock is a session advisory lock on a connection of its own: it gets the real
database URL.)
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from typing import Any

from conftest import PromEnv
from headroom.inventory.models import TikvConfig
from headroom.jobs import job as find_job
from headroom.platform.jobs.context import JobContext
from headroom.sources.models import PrometheusSource
from headroom.sources.prometheus import service
from headroom.sources.prometheus.models import PrometheusBackfill
from headroom.timeseries.models import MetricSeries
from headroom.timeseries.repository import read_points
from headroom.timeseries.watermarks import get_watermarks
from helpers import sign_up
from sqlalchemy import func, select


def test_jobs_are_registered() -> None:
    ingest = find_job("prometheus.ingest")
    assert ingest.queue == "ingest" and ingest.schedule is not None and ingest.schedule.minute == "*"
    backfill = find_job("prometheus.backfill")
    assert backfill.schedule is None and backfill.queue == "ingest"


def test_ingest_queues_a_backfill_then_pulls_incrementally(
    prom_env: PromEnv, client: Any, db: Any, settings: Any, database_url: str
) -> None:
    settings = settings.model_copy(update={"redis_url": None})  # no broker: the job runs the sources in turn
    owner = sign_up(client)
    cluster = owner.post("/api/v1/clusters", json={"name": "healthy", "tikv_version": "v8.5.1"}).json()
    made = owner.post(
        "/api/v1/sources/prometheus",
        json={
            "name": "p",
            "base_url": prom_env.url,
            "cluster_id": cluster["id"],
            "auth_kind": "bearer",
            "secret": "unused-by-prometheus",
        },
    ).json()

    @contextlib.contextmanager
    def test_session() -> Iterator[Any]:
        yield db
        db.flush()

    queued: list[tuple[str, dict[str, Any]]] = []

    def record(name: str, **params: Any) -> str:
        queued.append((name, params))
        return f"recorded:{name}"

    def context(settings: Any, url: str = "unused") -> JobContext:
        return JobContext(settings=settings, database_url=url, units=test_session, queue=record)

    start = prom_env.end - dt.timedelta(minutes=9)  # minute 50: also polls the status ports
    first = service.ingest_sources(context(settings), start)
    assert first["backfills_queued"] >= 1
    assert ("prometheus.backfill", {"source_id": made["id"]}) in queued
    row = db.scalar(select(PrometheusBackfill).where(PrometheusBackfill.source_id == made["id"]))
    assert row is not None and row.status == "queued"

    done = service.backfill(context(settings, database_url), start, source_id=made["id"])
    assert done["status"] == "done" and done["points"] > 0
    assert service.backfill(context(settings, database_url), start) == {"skipped": "no source_id"}
    configs = db.scalar(select(func.count()).select_from(TikvConfig).where(TikvConfig.org_id == owner.org_id))
    assert configs == 3

    later_at = prom_env.end
    later = service.ingest_sources(context(settings), later_at, source_id=made["id"])
    assert later["failed"] == 0 and later["points"] > 0
    source = db.get(PrometheusSource, made["id"])
    assert source.status == "ok" and source.last_success_at == prom_env.end
    # with a broker the scheduled run only fans out, one task per source
    queued.clear()
    fanned = service.ingest_sources(context(settings.model_copy(update={"redis_url": "redis://broker"})), later_at)
    # each task runs for the scheduled minute and expires as the per-minute schedule does (55 s)
    assert fanned["fanned_out"] is True and fanned["queued"] == len(queued) >= 1
    assert ("prometheus.ingest", {"source_id": made["id"], "now_iso": later_at.isoformat(),
                                  "expires_seconds": 55}) in queued

    ids = list(db.scalars(select(MetricSeries.id).where(MetricSeries.org_id == owner.org_id)))
    marks = get_watermarks(db, source.org_id, "prometheus", source.id, ids)
    # Every series caught up to "now": its watermark is its newest stored point, at "now" unless the simulated
    # scrapes failed in the last minutes (then Prometheus answers no rate there: a minute without a point; which
    # minutes fail depends on the clock, so the test allows the lookback's 5 minutes; CI hit 00:58 for one).
    assert len(ids) > 90 and max(marks.values()) == prom_env.end
    newest = {sid: read_points(db, source.org_id, sid, prom_env.end - dt.timedelta(days=2),
                               prom_env.end + dt.timedelta(minutes=1))[-1][0] for sid in ids}
    assert marks == newest
    assert all(prom_env.end - dt.timedelta(minutes=5) <= m <= prom_env.end for m in marks.values())

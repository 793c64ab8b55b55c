"""Projections: fit every ceiling of a cluster once a day from weeks of hourly history, store the result, serve it.

project_cluster(db, cluster, now=...) builds the cluster's hourly snapshot of the last HISTORY (hourly rollups,
headroom.timeseries.snapshots), projects each volume's IOPS and throughput, each instance's EBS IOPS and
bandwidth and each store's used space (headroom.domain.forecast.capacity.cluster_growth), and replaces the
cluster's rows: one per (entity, metric), so a re-run never duplicates and an entity gone since drops out.
A cluster fitted within REFIT_AFTER is left alone (the job runs every 10 minutes and picks the clusters due in
one query, so a new cluster, the demo's included, gets its projections within minutes of its first data, and
each series is fitted once a day). Callers commit.

moved_projections(db, org_id, cluster_id, ceilings) reads the days until a moved ceiling off the stored bands
without refitting (the what-if's "new projections": fast enough to answer as a form changes).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, exists, func, select, tuple_
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, defer

from headroom.clusters import service as clusters_service
from headroom.clusters.models import Cluster
from headroom.domain.forecast.capacity import CeilingForecast, CeilingKey, cluster_growth, days_on_band
from headroom.domain.forecast.crossing import Crossing as BandDays
from headroom.domain.snapshot.schema import Entity, ForecastBand, ProjectedCeiling, Snapshot
from headroom.domain.units import format_days, format_quantity
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.principal import Principal
from headroom.projections.models import Projection
from headroom.projections.schemas import ProjectionBand, ProjectionList, ProjectionRead

log = get_logger("headroom.projections")

# Four weeks: two weekly seasons and a trend (the fit caps its history at 8 weeks; docs/projections.md).
HISTORY = dt.timedelta(weeks=4)
# How far ahead a ceiling is looked for: a fix sized today has to hold for a quarter (docs/projections.md).
HORIZON_DAYS = 90.0
REFIT_AFTER = dt.timedelta(hours=20)
BAND_STEP_HOURS = 6  # the stored path for charts: 4 points a day over 90 days = 360 per series


def _band(fc: CeilingForecast) -> dict[str, Any]:
    f = fc.forecast
    pick = range(0, len(f.timestamps), BAND_STEP_HOURS)
    return {
        "t": [f.timestamps[i].isoformat() for i in pick],
        "point": [round(f.point[i], 4) for i in pick],
        "low": [round(f.low[i], 4) for i in pick],
        "high": [round(f.high[i], 4) for i in pick],
    }


def _row(cluster: Cluster, fc: CeilingForecast, *, start: dt.datetime, end: dt.datetime, now: dt.datetime,
         horizon_days: float) -> dict[str, Any]:
    f = fc.forecast
    return {
        "org_id": cluster.org_id, "cluster_id": cluster.id, "entity_kind": fc.entity_kind,
        "entity_id": fc.entity_id, "metric": fc.metric, "unit": fc.unit, "ceiling": fc.ceiling,
        "ceiling_source": fc.ceiling_source, "target": fc.target, "method": f.method, "history_hours": f.history_hours,
        "level_now": f.level_now, "growth_percent_per_week": f.growth_percent_per_week,
        "days": f.days_until_ceiling, "days_low": f.days_until_ceiling_low, "days_high": f.days_until_ceiling_high,
        "hits_at": f.hits_at, "horizon_days": horizon_days, "interval": f.interval, "band": _band(fc),
        "notes": list(f.notes), "history_start": start, "history_end": end, "fitted_at": now,
    }


def project_cluster(
    db: Session,
    cluster: Cluster,
    *,
    now: dt.datetime,
    force: bool = False,
    history: dt.timedelta = HISTORY,
    horizon_days: float = HORIZON_DAYS,
) -> dict[str, Any]:
    """Fit the cluster's ceilings on the history ending at the hour before `now` and store them (see module)."""
    from headroom.timeseries.snapshots import build_snapshot

    summary: dict[str, Any] = {"cluster_id": str(cluster.id)}
    newest = db.scalar(select(func.max(Projection.fitted_at)).where(Projection.org_id == cluster.org_id,
                                                                    Projection.cluster_id == cluster.id))
    if not force and newest is not None and newest > now - REFIT_AFTER:
        return {**summary, "skipped": "fitted within the last day"}
    end = now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    start = end - history
    snapshot = build_snapshot(db, cluster.org_id, cluster.id, start=start, end=end, step_seconds=3600)
    if not snapshot.series:
        return {**summary, "skipped": "no data in the history"}
    forecasts = cluster_growth(snapshot, horizon_days=horizon_days, seed=0)
    rows = [_row(cluster, fc, start=start, end=end, now=now, horizon_days=horizon_days) for fc in forecasts]
    keys = [(r["entity_kind"], r["entity_id"], r["metric"]) for r in rows]
    gone = delete(Projection).where(Projection.org_id == cluster.org_id, Projection.cluster_id == cluster.id)
    if keys:
        gone = gone.where(tuple_(Projection.entity_kind, Projection.entity_id, Projection.metric).not_in(keys))
    db.execute(gone)
    if rows:
        stmt = insert(Projection).values(rows)
        db.execute(stmt.on_conflict_do_update(
            index_elements=[Projection.cluster_id, Projection.entity_kind, Projection.entity_id, Projection.metric],
            set_={c: stmt.excluded[c] for c in rows[0] if c not in ("org_id", "cluster_id", "entity_kind",
                                                                     "entity_id", "metric")},
        ))
    within = [r for r in rows if r["days"] is not None]
    log.info("projections.fitted", cluster_id=str(cluster.id), series=len(rows), within_horizon=len(within))
    return {**summary, "fitted": len(rows), "within_horizon": len(within)}


def list_projections(db: Session, principal: Principal, cluster_id: uuid.UUID, *, bands: bool = True) -> ProjectionList:
    """The cluster's projections, the nearest ceiling first (another org's cluster is NotFound). `bands=False`
    leaves out each forecast path (most of the bytes: ~700 KB for the demo cluster), for a list that shows days."""
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    query = select(Projection).where(Projection.org_id == principal.org_id, Projection.cluster_id == cluster.id)
    rows = list(db.scalars(query if bands else query.options(defer(Projection.band))))
    rows.sort(key=lambda r: (r.days is None, r.days if r.days is not None else 0.0, r.entity_kind, r.entity_id,
                             r.metric))
    items = [ProjectionRead(
        id=r.id, entity_kind=r.entity_kind, entity_id=r.entity_id, metric=r.metric, unit=r.unit,
        ceiling=r.ceiling, ceiling_source=r.ceiling_source, target=r.target, method=r.method,
        history_hours=r.history_hours,
        level_now=r.level_now, growth_percent_per_week=r.growth_percent_per_week, days=r.days,
        days_low=r.days_low, days_high=r.days_high, hits_at=r.hits_at, horizon_days=r.horizon_days,
        interval=r.interval, band=ProjectionBand.model_validate(r.band) if bands else None, notes=list(r.notes),
        history_start=r.history_start, history_end=r.history_end, fitted_at=r.fitted_at,
    ) for r in rows]
    fitted = max((r.fitted_at for r in rows), default=None)
    return ProjectionList(items=items, total=len(items), fitted_at=fitted)


_METRIC_WORDS = {"iops": "IOPS", "mibps": "throughput", "used_gib": "disk space"}
_ENTITY_WORDS = {"volume": "Volume", "instance": "Instance EBS", "node": "Store"}


def ceiling_subject(r: Projection) -> str:
    """What a projection is of, in words: "Volume vol-0abc IOPS", "Store tikv-1 disk space"."""
    return f"{_ENTITY_WORDS.get(r.entity_kind, r.entity_kind)} {r.entity_id} {_METRIC_WORDS.get(r.metric, r.metric)}"


def nearest_by_cluster(db: Session, org_id: uuid.UUID) -> dict[uuid.UUID, Projection]:
    """Each cluster's nearest projected ceiling (fewest days; a ceiling reached already is 0 days), ties by entity
    and metric: what the fleet page and the weekly email both call "the nearest ceiling"."""
    first = (select(Projection.cluster_id, func.min(Projection.days).label("days"))
             .where(Projection.org_id == org_id, Projection.days.is_not(None)).group_by(Projection.cluster_id)
             .subquery())
    nearest: dict[uuid.UUID, Projection] = {}
    for row in db.scalars(select(Projection).join(first, (first.c.cluster_id == Projection.cluster_id)
                                                  & (first.c.days == Projection.days))
                          .where(Projection.org_id == org_id)
                          .order_by(Projection.entity_kind, Projection.entity_id, Projection.metric)):
        nearest.setdefault(row.cluster_id, row)
    return nearest


def nearest_ceilings(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, *, limit: int = 3) -> list[str]:
    """The cluster's nearest projected crossings ahead in words a person plans with (days, not minutes), nearest
    first: "Volume vol-0abc IOPS: the 4,000 IOPS ceiling in 12 days (9-16 days), around 2026-12-09"; then, in one
    line, the ceilings already reached (their findings say what to do; they are not what lies ahead)."""
    rows = list(db.scalars(select(Projection).where(
        Projection.org_id == org_id, Projection.cluster_id == cluster_id, Projection.days.is_not(None))
        .order_by(Projection.days, Projection.entity_kind, Projection.entity_id, Projection.metric)))
    ahead = [r for r in rows if (r.days or 0.0) > 0][:limit]
    reached = [r for r in rows if (r.days or 0.0) <= 0]

    out = []
    for r in ahead:
        ceiling = f"the {format_quantity(r.ceiling, r.unit)} ceiling"
        band = ""
        if r.days_low is not None:
            band = (f" ({format_days(r.days_low, r.days_high)})" if r.days_high is not None
                    else f" ({format_days(r.days_low)} or more)")
        when = f", around {r.hits_at:%Y-%m-%d}" if r.hits_at is not None else ""
        out.append(f"{ceiling_subject(r)}: {ceiling} in {format_days(max(1.0, r.days or 0.0))}{band}{when}")
    if reached:
        names = ", ".join(f"{ceiling_subject(r)} ({format_quantity(r.ceiling, r.unit)})" for r in reached[:limit])
        more = f" and {len(reached) - limit} more" if len(reached) > limit else ""
        out.append(f"Already at the ceiling (hourly average): {names}{more}")
    return out


def stored(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID,
           keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], Projection]:
    """The stored projections of (entity kind, entity id, metric) keys of one cluster (absent: not fitted)."""
    if not keys:
        return {}
    rows = db.scalars(select(Projection).where(
        Projection.org_id == org_id, Projection.cluster_id == cluster_id,
        tuple_(Projection.entity_kind, Projection.entity_id, Projection.metric).in_(keys)))
    return {(r.entity_kind, r.entity_id, r.metric): r for r in rows}


def with_projections(db: Session, cluster: Cluster, snapshot: Snapshot) -> Snapshot:
    """The snapshot with the cluster's stored projections (those of entities it holds) for the advisor to read:
    the projected-ceiling and disk rules warn from them (headroom.domain.advisor.rules.projected, .disk)."""
    rows = db.scalars(select(Projection).where(Projection.org_id == cluster.org_id,
                                               Projection.cluster_id == cluster.id))
    known = {"volume": {v.id for v in snapshot.volumes}, "instance": {i.id for i in snapshot.instances},
             "node": {n.id for n in snapshot.nodes}}
    projections = [
        ProjectedCeiling(
            entity=Entity(kind=r.entity_kind, id=r.entity_id), metric=r.metric, unit=r.unit,
            ceiling=r.ceiling, ceiling_source=r.ceiling_source, method=r.method, history_hours=r.history_hours,
            level_now=r.level_now, growth_percent_per_week=r.growth_percent_per_week, days=r.days,
            days_low=r.days_low, days_high=r.days_high, horizon_days=r.horizon_days, interval=r.interval,
            fitted_at=r.fitted_at, history_end=r.history_end, band=ForecastBand.model_validate(r.band),
        )
        for r in sorted(rows, key=lambda r: (r.entity_kind, r.entity_id, r.metric))
        if r.entity_id in known.get(r.entity_kind, set()) and r.ceiling > 0
    ]
    return snapshot.model_copy(update={"projections": projections}) if projections else snapshot


@dataclass(frozen=True)
class MovedProjection:
    """One stored projection read against its ceiling before and after a change (days from its history's end)."""

    entity_kind: str
    entity_id: str
    metric: str
    unit: str
    ceiling_before: float
    ceiling_after: float
    before: BandDays
    after: BandDays
    level_now: float
    horizon_days: float
    interval: float
    history_end: dt.datetime
    fitted_at: dt.datetime


def moved_projections(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, ceilings: Mapping[CeilingKey, tuple[float, float]]
) -> list[MovedProjection]:
    """For each (entity kind, id, metric) -> (ceiling before, after) with a stored projection, the days until each
    ceiling read off the stored band (both from the band, so the two compare at the same 6-hour resolution; the
    fit's own days can differ from `before` by up to that step). The nearest `after` first."""
    if not ceilings:
        return []
    rows = db.scalars(select(Projection).where(
        Projection.org_id == org_id, Projection.cluster_id == cluster_id,
        tuple_(Projection.entity_kind, Projection.entity_id, Projection.metric).in_(list(ceilings)),
    ))
    out = []
    for r in rows:
        before, after = ceilings[(r.entity_kind, r.entity_id, r.metric)]
        t = [dt.datetime.fromisoformat(x) for x in r.band["t"]]
        band = (t, r.band["point"], r.band["low"], r.band["high"])
        out.append(MovedProjection(
            entity_kind=r.entity_kind, entity_id=r.entity_id, metric=r.metric, unit=r.unit,
            ceiling_before=before, ceiling_after=after,
            before=days_on_band(r.history_end, *band, ceiling=before),
            after=days_on_band(r.history_end, *band, ceiling=after),
            level_now=r.level_now, horizon_days=r.horizon_days, interval=r.interval, history_end=r.history_end,
            fitted_at=r.fitted_at,
        ))
    out.sort(key=lambda m: (m.after.days is None, m.after.days or 0.0, m.entity_kind, m.entity_id, m.metric))
    return out


# --- the job's work (headroom.projections.jobs) ------------------------------------------------------------


def project_clusters(ctx: JobContext, now: dt.datetime, cluster_id: str | None = None, force: bool = False) -> dict[str, Any]:
    """Fit every cluster due (or the one given), each in its own unit of work: one failing cluster is logged and
    the others go on. With Celery workers the scheduled round queues one task per cluster due instead."""
    with ctx.unit() as db:
        query = select(Cluster.id).order_by(Cluster.created_at)
        if cluster_id is not None:
            query = query.where(Cluster.id == uuid.UUID(cluster_id))
        elif not force:  # only the clusters due: one query, not one per cluster
            fresh = exists().where(Projection.cluster_id == Cluster.id, Projection.fitted_at > now - REFIT_AFTER)
            query = query.where(~fresh)
        ids = list(db.scalars(query))
    if cluster_id is None and not force:  # the scheduled round: one task per cluster due, with Celery workers
        fanned = ctx.fan_out("projections.run", "cluster_id", ids, now)
        if fanned is not None:
            return {"clusters": [], "failed": 0, **fanned}
    results: list[dict[str, Any]] = []
    failed = 0
    for cid in ids:
        try:
            with ctx.unit() as db:
                cluster = db.get(Cluster, cid)
                if cluster is None:
                    continue
                results.append(project_cluster(db, cluster, now=now, force=force))
        except Exception:  # noqa: BLE001 - one cluster's bad data must not stop the others; it is logged
            failed += 1
            log.exception("projections.failed", cluster_id=str(cid))
    return {"clusters": results, "failed": failed}

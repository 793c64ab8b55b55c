"""The fleet overview (docs/fleet.md): each cluster of the organisation with

- open findings by severity (open and acknowledged; snoozed ones are out of the count, as in the default list);
- its **headroom score**: 100 - the highest peak use of any IOPS or throughput ceiling (data and raft volumes,
  instance EBS) over the last WINDOW, each 5-minute bucket against the ceiling in force then (the metrics overview),
  floored at 0: "22" reads "at its busiest moment of the day, the tightest ceiling was 78 % used";
- its nearest projected ceiling (the projections job: days until it, the interval);
- monthly spend on the EBS volumes and EC2 instances Headroom sees (on-demand, AWS price lists as the catalog
  holds them; what has no price is listed, never counted as free);
- savings available: the monthly cost the open findings' primary fixes would save (those that cost less).
One query per table for the organisation. The score is the metrics overview of the cluster's last day, which
reads every node's series (~0.1 s a cluster): the `fleet.score` job stores it every 15 minutes (FleetScore), and
the page reads the stored row, computing live only a cluster with none, or none newer than SCORE_STALE (a new
cluster, workers down). The bench/load_test.py run that found the page linear in the org's clusters is in
docs/scaling.md.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.clusters.models import Cluster
from headroom.domain.model import SEVERITIES
from headroom.findings import service as findings_service
from headroom.fleet.models import FleetScore
from headroom.fleet.schemas import ClusterHealth, FleetRead, NearestCeiling, TightestCeiling
from headroom.inventory.limits import resolve_instance_types, volume_limits_of
from headroom.inventory.models import Instance, TikvNode, Volume
from headroom.metrics import service as metrics_service
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.principal import Principal
from headroom.projections import service as projections_service

WINDOW = dt.timedelta(hours=24)
# A stored score older than this is not shown: the page computes the cluster live instead. Three missed runs of
# the 15-minute job (docs/fleet.md).
SCORE_STALE = dt.timedelta(minutes=45)

log = get_logger("headroom.fleet.service")
SCORE_DEFINITION = (
    "Headroom score = 100 - the highest peak use, over the last 24 hours, of any IOPS or throughput ceiling of the "
    "cluster (data and raft volumes, instance EBS), each 5-minute average against the ceiling in force then; 0 at "
    "or above a ceiling. It says how close the busiest moment came to the tightest wall, not how healthy "
    "everything else is: read it with the findings and the nearest projected ceiling."
)


def _spend(db: Session, org_id: object, clusters: list[Cluster]) -> dict[object, tuple[float, list[str]]]:
    ids = [c.id for c in clusters]
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.org_id == org_id, TikvNode.cluster_id.in_(ids))))
    volumes = list(db.scalars(select(Volume).where(Volume.org_id == org_id, Volume.cluster_id.in_(ids))))
    refs = {n.instance_ref_id for n in nodes if n.instance_ref_id} | {v.instance_ref_id for v in volumes
                                                                      if v.instance_ref_id}
    instances = list(db.scalars(select(Instance).where(
        Instance.org_id == org_id, Instance.cluster_id.in_(ids) | Instance.id.in_(list(refs)))))
    cluster_of_instance = {i.id: i.cluster_id for i in instances}
    for n in nodes:  # an instance found through its TiKV node belongs to the node's cluster
        if n.instance_ref_id is not None and cluster_of_instance.get(n.instance_ref_id) is None:
            cluster_of_instance[n.instance_ref_id] = n.cluster_id
    limits = resolve_instance_types(db, {i.instance_type for i in instances})
    out: dict[object, tuple[float, list[str]]] = defaultdict(lambda: (0.0, []))
    for v in volumes:
        total, unpriced = out[v.cluster_id]
        resolved = volume_limits_of(v, region=v.availability_zone[:-1] if v.availability_zone else "us-east-1")
        if resolved.limits is None:
            out[v.cluster_id] = (total, [*unpriced, f"{v.volume_id} ({v.volume_type})"])
        else:
            out[v.cluster_id] = (total + resolved.limits.monthly_cost_usd, unpriced)
    for i in instances:
        cid = cluster_of_instance.get(i.id)
        if cid is None:
            continue
        total, unpriced = out[cid]
        lim = limits[i.instance_type].limits
        if lim is None or lim.monthly_price_usd is None:
            out[cid] = (total, [*unpriced, f"{i.instance_id} ({i.instance_type})"])
        else:
            out[cid] = (total + lim.monthly_price_usd, unpriced)
    return out


def fleet(db: Session, principal: Principal, *, now: dt.datetime) -> FleetRead:
    """The organisation's clusters with their health, nearest ceiling, spend and savings (see the module)."""
    org_id = principal.org_id
    clusters = list(db.scalars(select(Cluster).where(Cluster.org_id == org_id).order_by(Cluster.name)))
    tallies = findings_service.open_tally_by_cluster(db, org_id)
    nearest = projections_service.nearest_by_cluster(db, org_id)
    spend = _spend(db, org_id, clusters)
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    start = end - WINDOW
    stored = {row.cluster_id: row for row in db.scalars(
        select(FleetScore).where(FleetScore.org_id == org_id, FleetScore.window_end > end - SCORE_STALE))}
    items = []
    for c in clusters:
        kept = stored.get(c.id)
        score, tightest, scored_at = ((kept.headroom_score, kept.tightest, kept.window_end) if kept is not None
                                      else (*_score(db, principal, c.id, end, now), end))
        p = nearest.get(c.id)
        total, unpriced = spend[c.id]
        tally = tallies.get(c.id)
        items.append(ClusterHealth(
            id=c.id, name=c.name, is_demo=c.is_demo, tikv_version=c.tikv_version, advised_at=c.advised_at,
            open_by_severity=tally.by_severity if tally else dict.fromkeys(SEVERITIES, 0),
            headroom_score=score,
            tightest=TightestCeiling.model_validate(tightest) if tightest is not None else None,
            scored_at=scored_at,
            nearest_ceiling=NearestCeiling(
                entity_kind=p.entity_kind, entity_id=p.entity_id, metric=p.metric, unit=p.unit,
                ceiling=p.ceiling, days=p.days or 0.0, days_low=p.days_low, days_high=p.days_high, hits_at=p.hits_at,
            ) if p is not None else None,
            monthly_spend_usd=round(total, 2), unpriced=unpriced,
            savings_usd=round(tally.monthly_saving_usd if tally else 0.0, 2),
        ))
    return FleetRead(items=items, total_spend_usd=round(sum(i.monthly_spend_usd for i in items), 2),
                     total_savings_usd=round(sum(i.savings_usd for i in items), 2), window_start=start,
                     window_end=end, score_definition=SCORE_DEFINITION)


def _score(db: Session, principal: Principal, cluster_id: uuid.UUID, end: dt.datetime,
           now: dt.datetime) -> tuple[int | None, dict[str, Any] | None]:
    """The headroom score over the day ending at `end` and its tightest ceiling (TightestCeiling's fields)."""
    ov = metrics_service.cluster_overview(db, principal, cluster_id, start=end - WINDOW, end=end, now=now)
    cells = [(n.refs.node.store_address, cell) for n in ov.nodes for cell in n.cells if cell.peak is not None]
    if not cells:
        return None, None
    node, tight = max(cells, key=lambda x: x[1].peak.percent)  # type: ignore[union-attr]
    assert tight.peak is not None
    tightest = TightestCeiling(node=node, metric=tight.metric, peak_percent=round(tight.peak.percent, 1),
                               ceiling=tight.ceiling.label if tight.ceiling else None)
    return max(0, round(100 - tight.peak.percent)), tightest.model_dump(mode="json")


def score_cluster(db: Session, cluster: Cluster, now: dt.datetime) -> int | None:
    """Compute and store the cluster's score over the day ending at `now` (the minute), the burst forecasts of its
    last advice round unless that round stored them (metrics.service.ensure_burst_forecasts) and the overview's
    peaks over the 7 days ending then (metrics.service.store_week_peaks); return the score."""
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    # First the burst forecasts of the last advice round, which every surface then reads (and this score's
    # overview too, instead of computing them): the advice run stores them; a round that did not gets them here
    metrics_service.ensure_burst_forecasts(db, cluster)
    job = Principal(user_id=None, org_id=cluster.org_id, role="viewer", via="job")
    score, tightest = _score(db, job, cluster.id, end, now)
    # and the overview's 7-day peaks, which its 7-day range then reads
    metrics_service.store_week_peaks(db, cluster, end, now)
    values = {"org_id": cluster.org_id, "window_end": end, "headroom_score": score, "tightest": tightest}
    db.execute(insert(FleetScore).values(cluster_id=cluster.id, **values)
               .on_conflict_do_update(index_elements=[FleetScore.cluster_id], set_=values,
                                      where=FleetScore.window_end <= end))
    return score


def score_clusters(ctx: JobContext, now: dt.datetime, cluster_id: str | None = None) -> dict[str, Any]:
    """Score every cluster (or the one given), each in its own unit of work; with Celery workers the scheduled
    round queues one task per cluster instead."""
    with ctx.unit() as db:
        query = select(Cluster.id).order_by(Cluster.created_at)
        if cluster_id is not None:
            query = query.where(Cluster.id == uuid.UUID(cluster_id))
        ids = list(db.scalars(query))
    if cluster_id is None:
        fanned = ctx.fan_out("fleet.score", "cluster_id", ids, now)
        if fanned is not None:
            return {"clusters": len(ids), **fanned}
    scored = failed = 0
    for cid in ids:
        try:
            with ctx.unit() as db:
                cluster = db.get(Cluster, cid)
                if cluster is None:  # deleted since the list was read
                    continue
                score_cluster(db, cluster, now)
                scored += 1
        except Exception:  # noqa: BLE001 - one cluster's bad data must not stop the others; it is logged
            failed += 1
            log.exception("fleet.score_failed", cluster_id=str(cid))
    return {"clusters": scored, "failed": failed}

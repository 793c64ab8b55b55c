"""Metrics for the UI: a node's panels (series, ceilings in force, burst forecasts) and the cluster overview."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from fastapi import APIRouter, Query
from pydantic import Field

from headroom.api.deps import Caller, Context, ReadDB
from headroom.domain.model import Ceiling, CeilingKind, Series
from headroom.metrics import service
from headroom.platform.schemas import Instant, Output

router = APIRouter(prefix="/clusters/{cluster_id}/metrics", tags=["metrics"])

PanelId = service.PanelId  # one list of panels: the service's


class CeilingRead(Output):
    """A ceiling on a chart: the domain's Ceiling (headroom.domain.model), over the part of the window it held."""

    id: str
    label: str
    value: float
    unit: str
    kind: CeilingKind = Field(description="sustained, burst (only while credits last), provisioned or configured.")
    source: str = Field(description="Where the number comes from: the public document (with its link) or the EC2 API answer.")
    valid_from: dt.datetime
    valid_to: dt.datetime


class ForecastPathRead(Output):
    t: list[int] = Field(description="Epoch seconds from the forecast's `now`.")
    percent: list[float] = Field(description="Balance % along the projected demand.")
    lower: list[float] = Field(description="Balance % at the band's high demand (lower edge).")
    upper: list[float] = Field(description="Balance % at the band's low demand (upper edge).")


class ForecastRead(Output):
    id: str
    label: str
    entity_kind: str
    entity_id: str
    bucket: str
    now: dt.datetime
    balance_percent: float
    unit: str
    baseline: float
    burst_rate: float
    demand: float
    seconds_to_empty: float | None
    seconds_to_empty_low: float | None
    seconds_to_empty_high: float | None
    empties_at: dt.datetime | None
    empties_at_earliest: dt.datetime | None
    empties_at_latest: dt.datetime | None
    fallback_iops: float | None
    fallback_mibps: float | None
    refill_seconds: float | None
    method: str
    notes: list[str]
    path: ForecastPathRead


class ProjectionPathRead(Output):
    """A panel's growth projection: days until its ceiling and the forecast path with its 90 % band."""

    ceiling: float
    ceiling_source: str
    target: Ceiling | None = Field(description="The ceiling the projection runs toward (value, kind, source); null for "
                                   "a projection fitted before it was stored.")
    unit: str
    method: str = Field(description="ets-weekly, ets-daily, holt, theil-sen or constant (docs/projections.md).")
    history_hours: int
    fitted_at: dt.datetime
    days: float | None = Field(description="Days from the end of the fitted history; null: not within the horizon.")
    days_low: float | None
    days_high: float | None
    hits_at: dt.datetime | None
    horizon_days: float
    t: list[int] = Field(description="Epoch seconds (UTC), every 6 hours, cut a week past the latest crossing.")
    point: list[float]
    low: list[float]
    high: list[float]


class PanelRead(Output):
    id: PanelId
    title: str
    unit: str
    series: list[Series] = Field(
        description="Each line in the one series shape a finding's evidence uses too, of its entity (volume, "
        "instance or store). A series longer than `points` is cut with M4: of each equal span of the window its "
        "first, lowest, highest and last point, so peaks and dips (a minute at a ceiling) are kept and no mean is "
        "drawn that was not stored (docs/metrics-downsampling.md); values carry 6 significant digits.")
    ceilings: list[CeilingRead]
    forecasts: list[ForecastRead]
    notes: list[str]
    projection: ProjectionPathRead | None = Field(
        default=None, description="Present with ?projections=true when the panel's ceiling has a stored fit.")


class VolumeBrief(Output):
    volume_id: str
    volume_type: str
    size_gib: int


class NodeBrief(Output):
    id: uuid.UUID
    store_address: str
    instance_id: str | None
    instance_type: str | None
    data_volume: VolumeBrief | None
    raft_volume: VolumeBrief | None = Field(description="Null when the Raft log shares the data volume.")


class NodeMetricsRead(Output):
    cluster_id: uuid.UUID
    node: NodeBrief | None = Field(description="Null when the cluster has no TiKV node yet.")
    start: dt.datetime
    end: dt.datetime
    resolution_seconds: int = Field(description="60 (raw points) up to 6 h, 300 up to 8 days, else 3600.")
    resolution_source: Literal["raw", "rollup"]
    points: int = Field(description="The most points any series has in this answer (the `points` asked for).")
    panels: list[PanelRead]


class UtilisationRead(Output):
    metric: Literal["data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops",
                    "instance_throughput"]
    peak_percent: float | None = Field(
        description="Highest value / the ceiling in force then, in % (the advisor's rule: a burst ceiling only while "
        "the credit balance lasts). 1-minute points up to 24 h (the advisor's window), else bucket averages.")
    peak_at: dt.datetime | None
    peak_value: float | None
    ceiling: Ceiling | None = Field(description="The ceiling in force at the peak.")
    ceiling_now: Ceiling | None = Field(description="The ceiling in force at the window's last point.")


class BurstLeftRead(Output):
    id: str
    label: str
    entity_id: str
    balance_percent: float
    seconds_to_empty: float | None
    seconds_to_empty_low: float | None
    seconds_to_empty_high: float | None


class NodeOverviewRead(Output):
    node: NodeBrief
    utilisation: list[UtilisationRead]
    burst: list[BurstLeftRead]
    burst_seconds_left: float | None = Field(description="Soonest time to empty of a draining bucket; null: none.")


class ClusterOverviewRead(Output):
    cluster_id: uuid.UUID
    start: dt.datetime
    end: dt.datetime
    resolution_seconds: int
    resolution_source: Literal["raw", "rollup"]
    nodes: list[NodeOverviewRead]
    peaks_stored: bool = Field(description="True: the peaks of the 7 days ending at `end`, as stored every 15 minutes "
                                           "by the fleet's scoring; false: computed for this request.")


@router.get("", response_model=NodeMetricsRead)
def node_metrics(
    cluster_id: uuid.UUID,
    caller: Caller,
    db: ReadDB,
    ctx: Context,
    node_id: uuid.UUID | None = Query(default=None, description="A node of the cluster; the first by address when "
                                                                "omitted."),
    panel: list[PanelId] | None = Query(default=None, description="Panels to return (repeat); all when omitted."),
    start: Instant | None = Query(default=None, description="Window start (ISO 8601 with zone); end - 6 h by "
                                                                "default."),
    end: Instant | None = Query(default=None, description="Window end; now by default."),
    projections: bool = Query(default=False, description="Add each panel's growth projection (days until its "
                                                         "ceiling, the path with its band)."),
    points: int = Query(default=service.DEFAULT_POINTS, ge=service.MIN_POINTS, le=service.MAX_POINTS,
                        description="The most points per series: ask for your chart's width in points; a longer "
                                    "series is cut with M4 (first, lowest, highest, last of each span), peaks kept."),
) -> NodeMetricsRead:
    """A node's charts: series at a resolution chosen from the window, the ceilings in force, burst forecasts."""
    result = service.node_metrics(db, caller, cluster_id, node_id=node_id, panels=panel, start=start, end=end,
                                  now=ctx.clock(), with_projections=projections, points=points)
    if result is None:
        lo, hi = service.validate_window(start, end, ctx.clock())
        res = service.choose_resolution(lo, hi)
        return NodeMetricsRead(cluster_id=cluster_id, node=None, start=lo, end=hi, resolution_seconds=res,
                               resolution_source="raw" if res == 60 else "rollup", points=points, panels=[])
    return NodeMetricsRead.model_validate(result, from_attributes=True)


@router.get("/overview", response_model=ClusterOverviewRead)
def cluster_overview(
    cluster_id: uuid.UUID,
    caller: Caller,
    db: ReadDB,
    ctx: Context,
    start: Instant | None = Query(default=None, description="Window start; end - 6 h by default."),
    end: Instant | None = Query(default=None, description="Window end; now by default."),
) -> ClusterOverviewRead:
    """Per node: peak use of each IOPS / throughput ceiling in force over the window, and burst time left."""
    ov = service.cluster_overview(db, caller, cluster_id, start=start, end=end, now=ctx.clock())
    return ClusterOverviewRead.model_validate(ov, from_attributes=True)

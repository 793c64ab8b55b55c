"""The fleet overview's API shapes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import Field

from headroom.platform.schemas import Output


class NearestCeiling(Output):
    """The cluster's nearest projected ceiling (the projections job's daily fit)."""

    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str
    metric: Literal["iops", "mibps", "used_gib"]
    unit: str
    ceiling: float
    days: float = Field(description="Days from the end of the fitted history; 0: reached already.")
    days_low: float | None
    days_high: float | None
    hits_at: dt.datetime | None


class TightestCeiling(Output):
    """The ceiling whose busiest moment of the last day came closest to it."""

    node: str
    metric: Literal["data_iops", "data_throughput", "raft_iops", "raft_throughput", "instance_iops",
                    "instance_throughput"]
    peak_percent: float = Field(description="Highest bucket average / the ceiling in force then, in %.")
    ceiling: str | None = Field(description="The ceiling, with its value.")


class ClusterHealth(Output):
    """One cluster of the fleet."""

    id: uuid.UUID
    name: str
    is_demo: bool
    tikv_version: str
    advised_at: dt.datetime | None = Field(description="When the advisor last ran over the cluster's data; null: "
                                                       "never yet, the first analysis is still running, so the "
                                                       "findings, savings and ceiling below are not known yet.")
    open_by_severity: dict[str, int] = Field(description="Open and acknowledged findings by severity.")
    headroom_score: int | None = Field(description="100 - the tightest ceiling's peak use over the last day (%), "
                                                   "floored at 0; null without I/O data (docs/fleet.md).")
    tightest: TightestCeiling | None
    scored_at: dt.datetime = Field(description="End of the day the score covers: stored every 15 minutes by the "
                                               "fleet.score job, or now when the page computed it.")
    nearest_ceiling: NearestCeiling | None = Field(description="Null: nothing projected within the horizon.")
    monthly_spend_usd: float = Field(description="On-demand monthly cost of the EBS volumes and EC2 instances "
                                                 "Headroom sees in the cluster (AWS price lists).")
    unpriced: list[str] = Field(description="What has no price in the catalog (not counted as free).")
    savings_usd: float = Field(description="Monthly savings of the open findings' fixes that cost less.")


class FleetRead(Output):
    """Every cluster of the organisation; the client sorts."""

    items: list[ClusterHealth]
    total_spend_usd: float
    total_savings_usd: float
    window_start: dt.datetime
    window_end: dt.datetime
    score_definition: str

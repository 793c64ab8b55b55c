"""The projections API's shapes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import BaseModel, Field

from headroom.domain.model import Ceiling


class ProjectionBand(BaseModel):
    """The forecast path to draw: times and the point forecast with its band (same length)."""

    t: list[dt.datetime]
    point: list[float]
    low: list[float]
    high: list[float]


class ProjectionRead(BaseModel):
    """One ceiling of one volume, instance or store, projected from its history."""

    id: uuid.UUID
    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str = Field(description="Volume id, instance id, or the store's address.")
    metric: Literal["iops", "mibps", "used_gib"]
    unit: str
    ceiling: float
    ceiling_source: str = Field(description="Where the ceiling comes from (the AWS or PingCAP page).")
    target: Ceiling | None = Field(description="The ceiling the projection runs toward (value, kind, source), as the "
                                   "charts show it; null for a projection fitted before it was stored.")
    method: str = Field(description="ets-weekly, ets-daily, holt, theil-sen or constant (docs/projections.md).")
    history_hours: int = Field(description="Hours of history the fit used.")
    level_now: float
    growth_percent_per_week: float | None
    days: float | None = Field(description="Days from the end of the history until the ceiling; null: not within "
                                           "the horizon.")
    days_low: float | None = Field(description="Earliest, at the interval's edge.")
    days_high: float | None = Field(description="Latest, at the interval's edge (null: beyond the horizon).")
    hits_at: dt.datetime | None
    horizon_days: float
    interval: float = Field(description="The band's coverage, e.g. 0.9 for 5-95 %.")
    band: ProjectionBand | None = Field(description="The forecast path; null when listed with bands=false.")
    notes: list[str]
    history_start: dt.datetime
    history_end: dt.datetime
    fitted_at: dt.datetime


class ProjectionList(BaseModel):
    """A cluster's projections, the nearest ceiling first (those beyond the horizon last)."""

    items: list[ProjectionRead]
    total: int
    fitted_at: dt.datetime | None = Field(description="When the newest fit ran; null: never yet.")

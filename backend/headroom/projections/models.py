"""The stored projections: one row per (cluster, entity, metric), replaced by each fit (so a re-run never
duplicates) and deleted when its entity or ceiling is gone."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy import DateTime, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from headroom.domain.model import Ceiling
from headroom.platform.orm import Base, fk_column, uuid_pk


class CeilingJSON(TypeDecorator[Ceiling]):
    """A Ceiling in a JSONB column: validated on the way in, read leniently (a row written before the column, or by
    a version whose Ceiling no longer validates, reads as None; the next daily fit rewrites it)."""

    impl = JSONB
    cache_ok = True

    def process_bind_param(self, value: Ceiling | None, dialect: Dialect) -> Any:
        return None if value is None else Ceiling.model_validate(value).model_dump(mode="json")

    def process_result_value(self, value: Any, dialect: Dialect) -> Ceiling | None:
        if not isinstance(value, dict):
            return None
        try:
            return Ceiling.model_validate({k: v for k, v in value.items() if k in Ceiling.model_fields})
        except ValidationError:
            return None


class Projection(Base):
    """One ceiling of one entity projected: days until it is reached (with a 90 % interval), how, and the band."""

    __tablename__ = "projections"
    __table_args__ = (UniqueConstraint("cluster_id", "entity_kind", "entity_id", "metric"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = fk_column("clusters.id")
    entity_kind: Mapped[str] = mapped_column(String(16))  # volume, instance, node
    entity_id: Mapped[str] = mapped_column(String(200))
    metric: Mapped[str] = mapped_column(String(16))  # iops, mibps, used_gib
    unit: Mapped[str] = mapped_column(String(16))
    ceiling: Mapped[float] = mapped_column(Float)
    ceiling_source: Mapped[str] = mapped_column(Text)
    # The ceiling itself (`ceiling` and `ceiling_source` are its value and source); None on rows fitted before.
    target: Mapped[Ceiling | None] = mapped_column(CeilingJSON, nullable=True)
    method: Mapped[str] = mapped_column(String(16))
    history_hours: Mapped[int] = mapped_column(Integer)
    level_now: Mapped[float] = mapped_column(Float)
    growth_percent_per_week: Mapped[float | None] = mapped_column(Float, nullable=True)
    days: Mapped[float | None] = mapped_column(Float, nullable=True)  # None: not within the horizon
    days_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    days_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    hits_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    horizon_days: Mapped[float] = mapped_column(Float)
    interval: Mapped[float] = mapped_column(Float)
    # The forecast path for charts, every BAND_STEP_HOURS: {"t": [ISO 8601], "point": [...], "low": [...],
    # "high": [...]}; notes: what the method says about itself (e.g. too little history for a weekly season).
    band: Mapped[dict[str, Any]] = mapped_column(JSONB)
    notes: Mapped[list[str]] = mapped_column(JSONB)
    history_start: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    history_end: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    fitted_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))

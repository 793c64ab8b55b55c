"""The time-series tables (see docs/timeseries.md): `metric_series` names a series; `metric_points`
packs one series' hour of 1-minute points into one row (60 slots packed by headroom.timeseries.codec),
range-partitioned by day; `metric_rollups` packs a series' day of 5-minute or 1-hour aggregates (avg, max,
min, count arrays); ingest watermarks."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import (
    ARRAY,
    BigInteger,
    CheckConstraint,
    DateTime,
    Double,
    ForeignKey,
    Identity,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import ENTITY_KINDS, Base, created_at_column, enum_column, fk_column

ROLLUP_RESOLUTIONS = (300, 3600)  # 5-minute and 1-hour buckets (docs/timeseries.md)
# --- time series -----------------------------------------------------------------------------------------


class MetricSeries(Base):
    __tablename__ = "metric_series"
    # A TiKV node's (or a cluster's) series belong to their cluster: two clusters of one org may reuse store
    # addresses (Operator DNS names, re-used private IPs), so the cluster is part of their identity. EC2
    # instances and EBS volumes have globally unique ids: one series per org, and cluster_id is an attribute
    # that follows the inventory's node mapping. NULLS NOT DISTINCT: a cluster-less node series is still unique.
    __table_args__ = (
        Index(
            "uq_metric_series_cluster_scoped",
            "org_id",
            "cluster_id",
            "entity_kind",
            "entity_id",
            "metric",
            "labels",
            unique=True,
            postgresql_nulls_not_distinct=True,
            postgresql_where=text("entity_kind IN ('cluster', 'tikv_node')"),
        ),
        Index(
            "uq_metric_series_org_scoped",
            "org_id",
            "entity_kind",
            "entity_id",
            "metric",
            "labels",
            unique=True,
            postgresql_where=text("entity_kind IN ('instance', 'volume')"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = fk_column("clusters.id", nullable=True)
    entity_kind: Mapped[str] = mapped_column(enum_column("series_entity_kind", ENTITY_KINDS))
    entity_id: Mapped[str] = mapped_column(String(255))
    metric: Mapped[str] = mapped_column(String(200))
    unit: Mapped[str] = mapped_column(String(32))
    labels: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    step_seconds: Mapped[int] = mapped_column(Integer, default=60, server_default="60")
    created_at: Mapped[dt.datetime] = created_at_column()


class MetricPoints(Base):
    """One series' hour of points: slot i holds the point at bucket_at + i minutes, `vals` packs the 60 slots
    (headroom.timeseries.codec: a presence bitmap and decimal deltas)."""

    __tablename__ = "metric_points"
    __table_args__ = ({"postgresql_partition_by": "RANGE (bucket_at)"},)

    series_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"), primary_key=True
    )
    bucket_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(nullable=False)
    vals: Mapped[bytes] = mapped_column(LargeBinary)


class MetricRollup(Base):
    """One series' day of aggregates at one resolution (288 five-minute or 24 hourly slots)."""

    __tablename__ = "metric_rollups"
    __table_args__ = (
        CheckConstraint("resolution_seconds IN (300, 3600)", name="resolution"),
        {"postgresql_partition_by": "RANGE (day_at)"},
    )

    series_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"), primary_key=True
    )
    resolution_seconds: Mapped[int] = mapped_column(Integer, primary_key=True)
    day_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(nullable=False)
    avg: Mapped[list[float | None]] = mapped_column(ARRAY(Double))
    max: Mapped[list[float | None]] = mapped_column(ARRAY(Double))
    min: Mapped[list[float | None]] = mapped_column(ARRAY(Double))
    cnt: Mapped[list[int]] = mapped_column(ARRAY(SmallInteger))


class MetricRollupDirty(Base):
    """A run of consecutive hours of one series whose raw points changed since their rollups were computed: the
    write path records it in the same transaction as the points (one row per series and run, merged with the
    runs already queued), and `timeseries.drain_rollups` expands its hours that have settled, recomputes their
    rollup buckets and deletes it, or cuts it to the hours still open (a queue kept in the database, so a crash
    between the two loses nothing)."""

    __tablename__ = "metric_rollup_dirty"
    __table_args__ = (CheckConstraint("hours >= 1", name="hours_positive"),)

    series_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"), primary_key=True
    )
    first_hour_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    hours: Mapped[int] = mapped_column(Integer)  # the run: first_hour_at and the hours after it, `hours` in all
    org_id: Mapped[uuid.UUID] = mapped_column(nullable=False)
    marked_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class IngestWatermark(Base):
    __tablename__ = "ingest_watermarks"
    __table_args__ = (UniqueConstraint("source_kind", "source_id", "series_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    source_kind: Mapped[str] = mapped_column(String(32))  # cloudwatch | prometheus | demo
    source_id: Mapped[uuid.UUID] = mapped_column()
    series_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"))
    watermark_at: Mapped[dt.datetime]
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())

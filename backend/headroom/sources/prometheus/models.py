"""Prometheus history backfills and the node targets a Prometheus source maps to TiKV nodes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    BigInteger,
    Enum,
    ForeignKey,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, uuid_pk

BACKFILL_STATUSES = ("queued", "running", "done", "failed")
FLAVOURS = ("tiup", "operator")


class PrometheusBackfill(Base):
    """One source's history import: the range, and progress in query steps (series-minutes) done / total."""

    __tablename__ = "prometheus_backfills"
    __table_args__ = (UniqueConstraint("source_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    source_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("prometheus_sources.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(
        Enum(
            *BACKFILL_STATUSES, name="backfill_status", native_enum=False, create_constraint=True, length=16
        ),
        default="queued",
        server_default="queued",
    )
    range_start_at: Mapped[dt.datetime]
    range_end_at: Mapped[dt.datetime]
    steps_total: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    steps_done: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    points_written: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    dropped_non_finite: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    dropped_outside: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = created_at_column()
    started_at: Mapped[dt.datetime | None]
    finished_at: Mapped[dt.datetime | None]
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class PrometheusNodeTarget(Base):
    """A TiKV scrape target of a source (its `instance` label) and the tikv_nodes row it feeds."""

    __tablename__ = "prometheus_node_targets"
    __table_args__ = (UniqueConstraint("source_id", "instance"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    source_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("prometheus_sources.id", ondelete="CASCADE"))
    node_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("tikv_nodes.id", ondelete="CASCADE"), index=True)
    instance: Mapped[str] = mapped_column(String(255))
    flavour: Mapped[str] = mapped_column(
        Enum(*FLAVOURS, name="prom_flavour", native_enum=False, create_constraint=True, length=16)
    )
    labels: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    first_seen_at: Mapped[dt.datetime] = created_at_column()
    last_seen_at: Mapped[dt.datetime] = mapped_column(server_default=func.now())

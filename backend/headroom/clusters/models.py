"""TiKV clusters: one row per cluster an organisation watches (demo clusters are marked)."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Index,
    SmallInteger,
    String,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, enum_column, fk_column, uuid_pk

DEPLOYMENT_KINDS = ("tiup", "operator", "manual")
# --- clusters and sources --------------------------------------------------------------------------------


class Cluster(Base):
    __tablename__ = "clusters"
    __table_args__ = (
        UniqueConstraint("org_id", "name"),
        # At most one demo cluster per org: demo seeding finds it by this flag, which no API field can edit
        # (its name and tags are the user's).
        Index("uq_clusters_demo_per_org", "org_id", unique=True, postgresql_where=text("is_demo")),
        CheckConstraint("lookback_days IS NULL OR lookback_days IN (14, 32, 93)", name="lookback_days"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    name: Mapped[str] = mapped_column(String(800))  # 200 characters as shown (platform/schemas.py Name200)
    tikv_version: Mapped[str] = mapped_column(String(40))
    deployment_kind: Mapped[str] = mapped_column(enum_column("deployment_kind", DEPLOYMENT_KINDS))
    tags: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    # Set only by demo seeding (services.demo); the simulated fleet and its first advice are found by it.
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # When the advisor last ran over the cluster's data (findings.service.advise_cluster); None: never yet, the
    # first analysis is pending (the pages say so instead of showing no findings).
    advised_at: Mapped[dt.datetime | None]
    # The cluster's own lookback in days (14, 32 or 93; docs/reference/lookback.md); None: its organisation's.
    lookback_days: Mapped[int | None] = mapped_column(SmallInteger)
    # Apply (docs/apply.md): off until an owner turns it on; it only counts when the organisation's is on too.
    apply_enabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    created_at: Mapped[dt.datetime] = created_at_column()
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())

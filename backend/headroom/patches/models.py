"""Saved patches: the selected findings' changes, rendered per target on request."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    ARRAY,
    Uuid,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, fk_column, uuid_pk


class Patch(Base):
    __tablename__ = "patches"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = fk_column("clusters.id")
    created_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    finding_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(Uuid))
    base_config_id: Mapped[uuid.UUID | None] = fk_column(
        "tikv_configs.id", nullable=True, ondelete="SET NULL"
    )
    changes: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    notes: Mapped[list[str]] = mapped_column(JSONB, default=list)
    created_at: Mapped[dt.datetime] = created_at_column()
    applied_at: Mapped[dt.datetime | None]
    applied_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")

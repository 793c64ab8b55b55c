"""Saved patches: the selected findings' changes, rendered per target on request."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import ARRAY, Uuid, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.domain.model import Change
from headroom.platform.orm import Base, ChangeListJSON, created_at_column, fk_column, uuid_pk


class PatchRecord(Base):
    __tablename__ = "patches"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = fk_column("clusters.id")
    created_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    finding_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(Uuid))
    base_config_id: Mapped[uuid.UUID | None] = fk_column(
        "tikv_configs.id", nullable=True, ondelete="SET NULL"
    )
    changes: Mapped[list[Change]] = mapped_column(ChangeListJSON)
    # The label of the finding each change comes from (its dedup key), in the order of `changes`.
    change_sources: Mapped[list[str]] = mapped_column(JSONB, default=list, server_default=text("'[]'::jsonb"))
    notes: Mapped[list[str]] = mapped_column(JSONB, default=list)
    created_at: Mapped[dt.datetime] = created_at_column()
    applied_at: Mapped[dt.datetime | None]
    applied_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")

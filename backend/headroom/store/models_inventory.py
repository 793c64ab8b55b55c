"""Inventory history: field changes of instances and volumes with the time they were observed, and the EBS
limits of instance types as DescribeInstanceTypes reported them (global facts, not tenant data)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Identity, Index, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.store.base import Base, created_at_column


class InventoryChange(Base):
    """One field of an instance or volume changed (gp2 -> gp3, a resize, a new instance type) at observed_at."""

    __tablename__ = "inventory_changes"
    __table_args__ = (Index("ix_inventory_changes_entity", "org_id", "entity_kind", "entity_id", "observed_at"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    aws_connection_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("aws_connections.id", ondelete="SET NULL"), index=True
    )
    entity_kind: Mapped[str] = mapped_column(String(16))  # instance | volume
    entity_id: Mapped[str] = mapped_column(String(32))  # i-... | vol-...
    field: Mapped[str] = mapped_column(String(64))
    old_value: Mapped[Any] = mapped_column(JSONB, nullable=True)
    new_value: Mapped[Any] = mapped_column(JSONB, nullable=True)
    observed_at: Mapped[dt.datetime]


class InstanceTypeLimits(Base):
    """EbsInfo of an instance type from DescribeInstanceTypes (domain.md §2.3), newest observation."""

    __tablename__ = "instance_type_limits"

    instance_type: Mapped[str] = mapped_column(String(40), primary_key=True)
    entry: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    region: Mapped[str | None] = mapped_column(String(32))
    observed_at: Mapped[dt.datetime] = created_at_column()

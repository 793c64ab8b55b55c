"""What runs where: EC2 instances, EBS volumes, TiKV nodes, their config versions, inventory changes
and the account's DescribeInstanceTypes limits."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    BigInteger,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, enum_column, fk_column, uuid_pk

VOLUME_ROLES = ("data", "raft", "other")
CONFIG_SOURCES = ("status_port", "upload", "tiup", "simulated")
# --- inventory -------------------------------------------------------------------------------------------


class Instance(Base):
    __tablename__ = "instances"
    __table_args__ = (UniqueConstraint("org_id", "instance_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = fk_column("clusters.id", nullable=True, ondelete="SET NULL")
    aws_connection_id: Mapped[uuid.UUID | None] = fk_column(
        "aws_connections.id", nullable=True, ondelete="SET NULL"
    )
    instance_id: Mapped[str] = mapped_column(String(32))
    instance_type: Mapped[str] = mapped_column(String(40))
    region: Mapped[str | None] = mapped_column(String(32))
    availability_zone: Mapped[str | None] = mapped_column(String(32))
    vcpus: Mapped[int | None] = mapped_column(SmallInteger)
    memory_gib: Mapped[float | None] = mapped_column(Float)
    private_ip: Mapped[str | None] = mapped_column(String(64))
    private_dns: Mapped[str | None] = mapped_column(String(255))
    tags: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    first_seen_at: Mapped[dt.datetime] = created_at_column()
    last_seen_at: Mapped[dt.datetime] = mapped_column(server_default=func.now())


class Volume(Base):
    __tablename__ = "volumes"
    __table_args__ = (UniqueConstraint("org_id", "volume_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = fk_column("clusters.id", nullable=True, ondelete="SET NULL")
    volume_id: Mapped[str] = mapped_column(String(32))
    volume_type: Mapped[str] = mapped_column(String(16))
    size_gib: Mapped[int] = mapped_column(Integer)
    iops: Mapped[int | None] = mapped_column(Integer)
    throughput_mibps: Mapped[int | None] = mapped_column(Integer)
    instance_ref_id: Mapped[uuid.UUID | None] = fk_column("instances.id", nullable=True, ondelete="SET NULL")
    device: Mapped[str | None] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(enum_column("volume_role", VOLUME_ROLES), default="other")
    availability_zone: Mapped[str | None] = mapped_column(String(32))
    tags: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    first_seen_at: Mapped[dt.datetime] = created_at_column()
    last_seen_at: Mapped[dt.datetime] = mapped_column(server_default=func.now())
    # When a Headroom apply run last changed the type, IOPS or throughput (the values AWS read back are written
    # on the row at once; the next inventory sweep reads the same from AWS). None: never by Headroom.
    modified_at: Mapped[dt.datetime | None]


class TikvNode(Base):
    __tablename__ = "tikv_nodes"
    __table_args__ = (UniqueConstraint("cluster_id", "store_address"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = fk_column("clusters.id")
    store_id: Mapped[int | None] = mapped_column(BigInteger)
    store_address: Mapped[str] = mapped_column(String(255))
    status_address: Mapped[str | None] = mapped_column(String(255))
    instance_ref_id: Mapped[uuid.UUID | None] = fk_column("instances.id", nullable=True, ondelete="SET NULL")
    data_volume_ref_id: Mapped[uuid.UUID | None] = fk_column("volumes.id", nullable=True, ondelete="SET NULL")
    raft_volume_ref_id: Mapped[uuid.UUID | None] = fk_column("volumes.id", nullable=True, ondelete="SET NULL")
    version: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[dt.datetime] = created_at_column()
    last_seen_at: Mapped[dt.datetime] = mapped_column(server_default=func.now())


class TikvConfig(Base):
    __tablename__ = "tikv_configs"
    __table_args__ = (UniqueConstraint("node_id", "version"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    node_id: Mapped[uuid.UUID] = fk_column("tikv_nodes.id")
    version: Mapped[int] = mapped_column(Integer)  # 1, 2, ... per node
    source: Mapped[str] = mapped_column(enum_column("config_source", CONFIG_SOURCES))
    config: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # The uploaded file as written (comments and order), so patches can be merged into it.
    raw_text: Mapped[str | None] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))
    captured_at: Mapped[dt.datetime] = created_at_column()


class InventoryChange(Base):
    """One field of an instance or volume changed (gp2 -> gp3, a resize, a new instance type) at observed_at."""

    __tablename__ = "inventory_changes"
    __table_args__ = (
        Index("ix_inventory_changes_entity", "org_id", "entity_kind", "entity_id", "observed_at"),
    )

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
    """EbsInfo of an instance type from DescribeInstanceTypes (docs/reference/ec2-ebs-limits.md#describeinstancetypes), newest observation."""

    __tablename__ = "instance_type_limits"

    instance_type: Mapped[str] = mapped_column(String(40), primary_key=True)
    entry: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    region: Mapped[str | None] = mapped_column(String(32))
    observed_at: Mapped[dt.datetime] = created_at_column()

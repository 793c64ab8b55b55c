"""Headroom's tables (SQLAlchemy 2 typed models). Every tenant-owned table carries org_id.

Time series layout (see docs/timeseries.md): `metric_series` names a series; `metric_points` packs one series'
hour of 1-minute points into one row (a 60-slot float8 array, NULL where no point), range-partitioned by day;
`metric_rollups` packs a series' day of 5-minute or 1-hour aggregates (avg, max, min, count arrays).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Double,
    Enum,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.domain.model import SEVERITIES
from headroom.store.base import Base, created_at_column, uuid_pk

ROLES = ("owner", "admin", "viewer")
DEPLOYMENT_KINDS = ("tiup", "operator", "manual")
SOURCE_STATUSES = ("unknown", "ok", "failing")
VOLUME_ROLES = ("data", "raft", "other")
ENTITY_KINDS = ("cluster", "tikv_node", "instance", "volume")
FINDING_STATUSES = ("open", "acknowledged", "snoozed", "resolved")
CONFIG_SOURCES = ("status_port", "upload", "tiup", "simulated")
AWS_AUTH_KINDS = ("assume_role", "static_keys", "default_chain")
PROM_AUTH_KINDS = ("none", "bearer", "basic")
CHANGE_TARGETS = ("tikv", "aws")
ROLLUP_RESOLUTIONS = (300, 3600)  # 5-minute and 1-hour buckets (issue 2)


def _enum(name: str, values: tuple[str, ...]) -> Enum:
    # VARCHAR + CHECK instead of native PG enums: adding a value later is a plain migration.
    return Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)


def _fk(target: str, *, nullable: bool = False, ondelete: str = "CASCADE") -> Any:
    return mapped_column(ForeignKey(target, ondelete=ondelete), nullable=nullable, index=True)


# --- tenancy and auth ------------------------------------------------------------------------------------


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    # STS external ID the org's IAM role trust policy must require (confused-deputy protection).
    aws_external_id: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[dt.datetime] = created_at_column()


class User(Base):
    __tablename__ = "users"
    __table_args__ = (Index("uq_users_email_lower", func.lower(text("email")), unique=True),)

    id: Mapped[uuid.UUID] = uuid_pk()
    email: Mapped[str] = mapped_column(String(320))
    full_name: Mapped[str] = mapped_column(String(200), default="", server_default="")
    password_hash: Mapped[str] = mapped_column(String(255))
    is_active: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    created_at: Mapped[dt.datetime] = created_at_column()
    last_login_at: Mapped[dt.datetime | None]


class Membership(Base):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("org_id", "user_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    user_id: Mapped[uuid.UUID] = _fk("users.id")
    role: Mapped[str] = mapped_column(_enum("membership_role", ROLES))
    created_at: Mapped[dt.datetime] = created_at_column()


class UserSession(Base):
    __tablename__ = "user_sessions"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    user_id: Mapped[uuid.UUID] = _fk("users.id")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = created_at_column()
    expires_at: Mapped[dt.datetime]
    last_seen_at: Mapped[dt.datetime | None]
    ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(400))


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    created_by_user_id: Mapped[uuid.UUID | None] = _fk("users.id", nullable=True, ondelete="SET NULL")
    name: Mapped[str] = mapped_column(String(200))
    # The token is shown once; only its SHA-256 and a short prefix (to recognise it in lists) are stored.
    token_prefix: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(_enum("api_token_role", ROLES))
    created_at: Mapped[dt.datetime] = created_at_column()
    last_used_at: Mapped[dt.datetime | None]
    expires_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]


class Invitation(Base):
    __tablename__ = "invitations"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(_enum("invitation_role", ROLES))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    invited_by_user_id: Mapped[uuid.UUID | None] = _fk("users.id", nullable=True, ondelete="SET NULL")
    created_at: Mapped[dt.datetime] = created_at_column()
    expires_at: Mapped[dt.datetime]
    accepted_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]


class AuditLog(Base):
    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_org_created", "org_id", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    actor_user_id: Mapped[uuid.UUID | None] = _fk("users.id", nullable=True, ondelete="SET NULL")
    actor_token_id: Mapped[uuid.UUID | None] = _fk("api_tokens.id", nullable=True, ondelete="SET NULL")
    action: Mapped[str] = mapped_column(String(100))
    target_kind: Mapped[str | None] = mapped_column(String(50))
    target_id: Mapped[str | None] = mapped_column(String(100))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    ip: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = created_at_column()


# --- clusters and sources --------------------------------------------------------------------------------


class Cluster(Base):
    __tablename__ = "clusters"
    __table_args__ = (
        UniqueConstraint("org_id", "name"),
        # At most one demo cluster per org: demo seeding finds it by this flag, which no API field can edit
        # (its name and tags are the user's).
        Index("uq_clusters_demo_per_org", "org_id", unique=True, postgresql_where=text("is_demo")),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    name: Mapped[str] = mapped_column(String(200))
    tikv_version: Mapped[str] = mapped_column(String(40))
    deployment_kind: Mapped[str] = mapped_column(_enum("deployment_kind", DEPLOYMENT_KINDS))
    tags: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    # Set only by demo seeding (services.demo); the simulated fleet and its first advice are found by it.
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    created_at: Mapped[dt.datetime] = created_at_column()
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class AdviceRun(Base):
    """A queued or running on-demand advice run, one per cluster (the natural key): a second request while one
    is pending gets the same task id instead of queuing again. The job deletes its row when it ends; a row older
    than jobs.advice.ADVICE_RUN_STALE (its worker died, or the queue lost it) is replaced by the next request."""

    __tablename__ = "advice_runs"

    cluster_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    task_id: Mapped[str] = mapped_column(String(200))
    requested_at: Mapped[dt.datetime]


class _SourceHealth:
    """Health columns shared by every data source (last success, last error, consecutive failures)."""

    status: Mapped[str] = mapped_column(
        _enum("source_status", SOURCE_STATUSES), default="unknown", server_default="unknown"
    )
    last_success_at: Mapped[dt.datetime | None]
    last_error_at: Mapped[dt.datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class AwsConnection(_SourceHealth, Base):
    __tablename__ = "aws_connections"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    name: Mapped[str] = mapped_column(String(200))
    auth_kind: Mapped[str] = mapped_column(_enum("aws_auth_kind", AWS_AUTH_KINDS))
    role_arn: Mapped[str | None] = mapped_column(String(2048))
    external_id: Mapped[str] = mapped_column(String(100))
    regions: Mapped[list[str]] = mapped_column(ARRAY(String(32)))
    access_key_id: Mapped[str | None] = mapped_column(String(128))
    # Fernet ciphertext (headroom.platform.security.SecretBox); never returned by the API.
    secret_access_key_enc: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = created_at_column()


class PrometheusSource(_SourceHealth, Base):
    __tablename__ = "prometheus_sources"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = _fk("clusters.id", nullable=True, ondelete="SET NULL")
    name: Mapped[str] = mapped_column(String(200))
    base_url: Mapped[str] = mapped_column(String(2048))
    auth_kind: Mapped[str] = mapped_column(_enum("prom_auth_kind", PROM_AUTH_KINDS), default="none")
    username: Mapped[str | None] = mapped_column(String(200))
    # Bearer token or basic-auth password, Fernet-encrypted.
    secret_enc: Mapped[str | None] = mapped_column(Text)
    # PromQL label matchers that pick one TiDB cluster, e.g. tidb_cluster="prod".
    label_selector: Mapped[str] = mapped_column(String(1000), default="", server_default="")
    created_at: Mapped[dt.datetime] = created_at_column()


# --- inventory -------------------------------------------------------------------------------------------


class Instance(Base):
    __tablename__ = "instances"
    __table_args__ = (UniqueConstraint("org_id", "instance_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = _fk("clusters.id", nullable=True, ondelete="SET NULL")
    aws_connection_id: Mapped[uuid.UUID | None] = _fk("aws_connections.id", nullable=True, ondelete="SET NULL")
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
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = _fk("clusters.id", nullable=True, ondelete="SET NULL")
    volume_id: Mapped[str] = mapped_column(String(32))
    volume_type: Mapped[str] = mapped_column(String(16))
    size_gib: Mapped[int] = mapped_column(Integer)
    iops: Mapped[int | None] = mapped_column(Integer)
    throughput_mibps: Mapped[int | None] = mapped_column(Integer)
    instance_ref_id: Mapped[uuid.UUID | None] = _fk("instances.id", nullable=True, ondelete="SET NULL")
    device: Mapped[str | None] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(_enum("volume_role", VOLUME_ROLES), default="other")
    availability_zone: Mapped[str | None] = mapped_column(String(32))
    tags: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    first_seen_at: Mapped[dt.datetime] = created_at_column()
    last_seen_at: Mapped[dt.datetime] = mapped_column(server_default=func.now())


class TikvNode(Base):
    __tablename__ = "tikv_nodes"
    __table_args__ = (UniqueConstraint("cluster_id", "store_address"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID] = _fk("clusters.id")
    store_id: Mapped[int | None] = mapped_column(BigInteger)
    store_address: Mapped[str] = mapped_column(String(255))
    status_address: Mapped[str | None] = mapped_column(String(255))
    instance_ref_id: Mapped[uuid.UUID | None] = _fk("instances.id", nullable=True, ondelete="SET NULL")
    data_volume_ref_id: Mapped[uuid.UUID | None] = _fk("volumes.id", nullable=True, ondelete="SET NULL")
    raft_volume_ref_id: Mapped[uuid.UUID | None] = _fk("volumes.id", nullable=True, ondelete="SET NULL")
    version: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[dt.datetime] = created_at_column()
    last_seen_at: Mapped[dt.datetime] = mapped_column(server_default=func.now())


class TikvConfig(Base):
    __tablename__ = "tikv_configs"
    __table_args__ = (UniqueConstraint("node_id", "version"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    node_id: Mapped[uuid.UUID] = _fk("tikv_nodes.id")
    version: Mapped[int] = mapped_column(Integer)  # 1, 2, ... per node
    source: Mapped[str] = mapped_column(_enum("config_source", CONFIG_SOURCES))
    config: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # The uploaded file as written (comments and order), so patches can be merged into it.
    raw_text: Mapped[str | None] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))
    captured_at: Mapped[dt.datetime] = created_at_column()


# --- time series -----------------------------------------------------------------------------------------


class MetricSeries(Base):
    __tablename__ = "metric_series"
    # A TiKV node's (or a cluster's) series belong to their cluster: two clusters of one org may reuse store
    # addresses (Operator DNS names, re-used private IPs), so the cluster is part of their identity. EC2
    # instances and EBS volumes have globally unique ids: one series per org, and cluster_id is an attribute
    # that follows the inventory's node mapping. NULLS NOT DISTINCT: a cluster-less node series is still unique.
    __table_args__ = (
        Index(
            "uq_metric_series_cluster_scoped", "org_id", "cluster_id", "entity_kind", "entity_id", "metric",
            "labels", unique=True, postgresql_nulls_not_distinct=True,
            postgresql_where=text("entity_kind IN ('cluster', 'tikv_node')"),
        ),
        Index(
            "uq_metric_series_org_scoped", "org_id", "entity_kind", "entity_id", "metric", "labels", unique=True,
            postgresql_where=text("entity_kind IN ('instance', 'volume')"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = _fk("clusters.id", nullable=True)
    entity_kind: Mapped[str] = mapped_column(_enum("series_entity_kind", ENTITY_KINDS))
    entity_id: Mapped[str] = mapped_column(String(255))
    metric: Mapped[str] = mapped_column(String(200))
    unit: Mapped[str] = mapped_column(String(32))
    labels: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    step_seconds: Mapped[int] = mapped_column(Integer, default=60, server_default="60")
    created_at: Mapped[dt.datetime] = created_at_column()


class MetricPoints(Base):
    """One series' hour of points: slot i holds the point at bucket_at + i minutes (NULL = none)."""

    __tablename__ = "metric_points"
    __table_args__ = (
        CheckConstraint("cardinality(vals) = 60", name="sixty_slots"),
        {"postgresql_partition_by": "RANGE (bucket_at)"},
    )

    series_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"), primary_key=True
    )
    bucket_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(nullable=False)
    vals: Mapped[list[float | None]] = mapped_column(ARRAY(Double))


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
    """A (series, day) whose raw points changed since its rollups were computed: the write path records it in
    the same transaction as the points, and `timeseries.drain_rollups` recomputes and deletes it (a queue kept
    in the database, so a crash between the two loses nothing)."""

    __tablename__ = "metric_rollup_dirty"

    series_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"), primary_key=True
    )
    day_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(nullable=False)
    marked_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class IngestWatermark(Base):
    __tablename__ = "ingest_watermarks"
    __table_args__ = (UniqueConstraint("source_kind", "source_id", "series_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    source_kind: Mapped[str] = mapped_column(String(32))  # cloudwatch | prometheus | demo
    source_id: Mapped[uuid.UUID] = mapped_column()
    series_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("metric_series.id", ondelete="CASCADE"))
    watermark_at: Mapped[dt.datetime]
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


# --- advice ----------------------------------------------------------------------------------------------


class Finding(Base):
    __tablename__ = "findings"
    __table_args__ = (
        UniqueConstraint("org_id", "dedup_key"),
        Index("ix_findings_org_cluster_status", "org_id", "cluster_id", "status"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(64))
    entity_kind: Mapped[str] = mapped_column(_enum("finding_entity_kind", ENTITY_KINDS))
    entity_id: Mapped[str] = mapped_column(String(255))
    severity: Mapped[str] = mapped_column(_enum("severity", SEVERITIES))
    status: Mapped[str] = mapped_column(_enum("finding_status", FINDING_STATUSES), default="open")
    title: Mapped[str] = mapped_column(String(500))
    why: Mapped[str] = mapped_column(Text, default="", server_default="")
    evidence: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    impact: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    dedup_key: Mapped[str] = mapped_column(String(300))
    first_seen_at: Mapped[dt.datetime]
    last_seen_at: Mapped[dt.datetime]
    resolved_at: Mapped[dt.datetime | None]
    snoozed_until: Mapped[dt.datetime | None]


class Recommendation(Base):
    __tablename__ = "recommendations"
    __table_args__ = (UniqueConstraint("finding_id", "position"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    finding_id: Mapped[uuid.UUID] = _fk("findings.id")
    position: Mapped[int] = mapped_column(SmallInteger)
    target: Mapped[str] = mapped_column(_enum("change_target", CHANGE_TARGETS))
    key: Mapped[str] = mapped_column(String(200))
    entity: Mapped[str | None] = mapped_column(String(255))
    current: Mapped[Any] = mapped_column(JSONB, nullable=True)
    proposed: Mapped[Any] = mapped_column(JSONB, nullable=True)
    online: Mapped[bool] = mapped_column(Boolean)
    reason: Mapped[str] = mapped_column(Text)


class Patch(Base):
    __tablename__ = "patches"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = _fk("organizations.id")
    cluster_id: Mapped[uuid.UUID] = _fk("clusters.id")
    created_by_user_id: Mapped[uuid.UUID | None] = _fk("users.id", nullable=True, ondelete="SET NULL")
    finding_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(Uuid))
    base_config_id: Mapped[uuid.UUID | None] = _fk("tikv_configs.id", nullable=True, ondelete="SET NULL")
    changes: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    notes: Mapped[list[str]] = mapped_column(JSONB, default=list)
    created_at: Mapped[dt.datetime] = created_at_column()
    applied_at: Mapped[dt.datetime | None]
    applied_by_user_id: Mapped[uuid.UUID | None] = _fk("users.id", nullable=True, ondelete="SET NULL")

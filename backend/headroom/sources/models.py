"""Data sources (AWS connections, Prometheus sources) with their health, and collection bookkeeping:
one row per sweep and the history backfills' progress and planned steps, so a killed backfill resumes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    Enum,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, enum_column, fk_column, uuid_pk

SOURCE_STATUSES = ("unknown", "ok", "failing")
AWS_AUTH_KINDS = ("assume_role", "static_keys", "default_chain")
PROM_AUTH_KINDS = ("none", "bearer", "basic")


class _SourceHealth:
    """Health columns shared by every data source (last success, last error, consecutive failures)."""

    status: Mapped[str] = mapped_column(
        enum_column("source_status", SOURCE_STATUSES), default="unknown", server_default="unknown"
    )
    last_success_at: Mapped[dt.datetime | None]
    last_error_at: Mapped[dt.datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class AwsConnection(_SourceHealth, Base):
    __tablename__ = "aws_connections"
    __table_args__ = (
        UniqueConstraint("org_id", "name"),
        # At most one demo source per org: demo seeding finds it by this flag, which no API field can set.
        Index("uq_aws_connections_demo_per_org", "org_id", unique=True, postgresql_where=text("is_demo")),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    name: Mapped[str] = mapped_column(String(800))  # 200 characters as shown (platform/schemas.py Name200)
    auth_kind: Mapped[str] = mapped_column(enum_column("aws_auth_kind", AWS_AUTH_KINDS))
    role_arn: Mapped[str | None] = mapped_column(String(2048))
    external_id: Mapped[str] = mapped_column(String(100))
    regions: Mapped[list[str]] = mapped_column(ARRAY(String(32)))
    access_key_id: Mapped[str | None] = mapped_column(String(128))
    # Fernet ciphertext (headroom.platform.security.SecretBox); never returned by the API.
    secret_access_key_enc: Mapped[str | None] = mapped_column(Text)
    # Set only by demo seeding (sources.demo): the demo organisation's example of a healthy source. Nothing of it
    # reaches AWS: its test, sweeps and import are the simulator's.
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    created_at: Mapped[dt.datetime] = created_at_column()


class PrometheusSource(_SourceHealth, Base):
    __tablename__ = "prometheus_sources"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID | None] = fk_column("clusters.id", nullable=True, ondelete="SET NULL")
    name: Mapped[str] = mapped_column(String(800))  # 200 characters as shown (platform/schemas.py Name200)
    base_url: Mapped[str] = mapped_column(String(2048))
    auth_kind: Mapped[str] = mapped_column(enum_column("prom_auth_kind", PROM_AUTH_KINDS), default="none")
    username: Mapped[str | None] = mapped_column(String(200))
    # Bearer token or basic-auth password, Fernet-encrypted.
    secret_enc: Mapped[str | None] = mapped_column(Text)
    # PromQL label matchers that pick one TiDB cluster, e.g. tidb_cluster="prod".
    label_selector: Mapped[str] = mapped_column(String(1000), default="", server_default="")
    # The Grafana that shows this Prometheus's TiKV dashboards (a link target only: Headroom never calls it).
    grafana_url: Mapped[str | None] = mapped_column(String(2048))
    created_at: Mapped[dt.datetime] = created_at_column()


SWEEP_KINDS = ("incremental", "backfill", "inventory", "test")
AWS_BACKFILL_STATES = ("queued", "running", "done", "failed")
BACKFILL_SOURCE_KINDS = ("aws", "prometheus")


class CollectionSweep(Base):
    __tablename__ = "collection_sweeps"
    __table_args__ = (Index("ix_collection_sweeps_source_started", "source_id", "started_at"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    source_kind: Mapped[str] = mapped_column(String(32))  # aws
    source_id: Mapped[uuid.UUID] = mapped_column()
    kind: Mapped[str] = mapped_column(
        Enum(*SWEEP_KINDS, name="sweep_kind", native_enum=False, create_constraint=True, length=16)
    )
    region: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[dt.datetime]
    finished_at: Mapped[dt.datetime | None]
    window_start_at: Mapped[dt.datetime | None]
    window_end_at: Mapped[dt.datetime | None]
    series: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    api_calls: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    planned_calls: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    lower_bound_calls: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    metrics_requested: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    datapoints: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    points_written: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    dropped: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    retries: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)


class AwsBackfill(Base):
    """One AWS connection's history import: points done / total (worst-case datapoints of the plan)."""

    __tablename__ = "aws_backfills"
    __table_args__ = (UniqueConstraint("source_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    source_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("aws_connections.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(
        Enum(
            *AWS_BACKFILL_STATES,
            name="aws_backfill_state",
            native_enum=False,
            create_constraint=True,
            length=16,
        ),
        default="queued",
        server_default="queued",
    )
    days: Mapped[int] = mapped_column(Integer, default=14, server_default="14")
    points_total: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    points_done: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    points_written: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # The end of the planned window, fixed when the plan is made: a resumed run reads the same window.
    window_end_at: Mapped[dt.datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = created_at_column()
    started_at: Mapped[dt.datetime | None]
    finished_at: Mapped[dt.datetime | None]
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class BackfillStep(Base):
    """One planned unit of a history backfill: an AWS GetMetricData request, or a Prometheus query's chunk.

    The plan is written whole when a backfill starts; a step's `done_at` is set in the same transaction as the
    points it fetched, so a killed worker's successor skips exactly the steps whose data is stored. `points` is
    the step's weight in the progress figures (AWS: worst-case datapoints; Prometheus: query steps), so
    done / total are sums over these rows and can neither double count nor go backwards.
    """

    __tablename__ = "backfill_steps"
    # The unique key's index also serves "the plan's pending steps in order".
    __table_args__ = (UniqueConstraint("source_kind", "source_id", "seq"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    source_kind: Mapped[str] = mapped_column(
        Enum(
            *BACKFILL_SOURCE_KINDS,
            name="backfill_source_kind",
            native_enum=False,
            create_constraint=True,
            length=16,
        )
    )
    source_id: Mapped[uuid.UUID] = mapped_column()
    seq: Mapped[int] = mapped_column(Integer)  # execution order within the plan
    spec: Mapped[dict[str, Any]] = mapped_column(JSONB)  # what to fetch (window, queries / query and chunk)
    points: Mapped[int] = mapped_column(BigInteger)
    done_at: Mapped[dt.datetime | None]

"""Alert channels and the delivery record of each event to each channel (the unique key that keeps an event from
being sent twice)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, Identity, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, enum_column, fk_column, uuid_pk

CHANNEL_KINDS = ("slack", "webhook", "pagerduty", "alertmanager", "email")
DELIVERY_STATUSES = ("pending", "sending", "sent", "failed")


class AlertChannel(Base):
    """Where an organisation's alerts go, and which ones."""

    __tablename__ = "alert_channels"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    name: Mapped[str] = mapped_column(String(400))  # 100 characters as shown (platform/schemas.py Name100)
    kind: Mapped[str] = mapped_column(enum_column("alert_channel_kind", CHANNEL_KINDS))
    # Slack's incoming-webhook URL is itself the secret: stored encrypted like the other secrets.
    url_enc: Mapped[str] = mapped_column(Text)
    url_hint: Mapped[str] = mapped_column(String(200))  # what the UI shows: scheme and host only
    secret_enc: Mapped[str | None] = mapped_column(Text, nullable=True)  # webhook HMAC key, PagerDuty routing key
    min_severity: Mapped[str] = mapped_column(String(16), default="warning")
    families: Mapped[list[str]] = mapped_column(JSONB, default=list)  # empty: every rule family
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # Quiet hours (UTC, [start, end) wrapping midnight when start > end): alerts below critical wait until they end.
    quiet_start_hour: Mapped[int | None] = mapped_column(Integer, nullable=True)
    quiet_end_hour: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Send a finding that stays open again every so many hours (None: once).
    renotify_hours: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Forecast horizons (None: off): alert when a burst bucket is forecast to empty within so many hours, or a
    # ceiling (IOPS, throughput, disk space) to be reached within so many days.
    burst_horizon_hours: Mapped[int | None] = mapped_column(Integer, nullable=True)
    ceiling_horizon_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[dt.datetime] = created_at_column()


class AlertDelivery(Base):
    """One event for one channel: claimed before it is sent, retried on transient errors, never sent twice."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (UniqueConstraint("channel_id", "event_key"), Index("ix_alert_deliveries_due", "status",
                                                                         "next_attempt_at"))

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    channel_id: Mapped[uuid.UUID] = fk_column("alert_channels.id")
    event_key: Mapped[str] = mapped_column(String(300))
    event: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(enum_column("alert_delivery_status", DELIVERY_STATUSES), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    claimed_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    sent_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

"""Tables of the weekly advisory email: per-org settings, per-(user, org) preferences, one row per (org, ISO week)
send and one per recipient it reached, verified emails. `digest_sends` is the idempotency record: its unique (org_id, week_start) key is claimed with
INSERT ... ON CONFLICT before anything is sent, so a retried or duplicated task never sends a week twice."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import (
    ARRAY,
    Boolean,
    Date,
    Enum,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, created_at_column, uuid_pk

# sending: claimed, SMTP in progress; sent: accepted by the server; retrying: a transient failure, the task
# retries; failed: a permanent failure (recorded with its reason); skipped: nothing to send (no recipients).
DIGEST_SEND_STATUSES = ("sending", "sent", "retrying", "failed", "skipped")


class OrgDigestSettings(Base):
    """An organisation's digest settings; no row means the defaults (on, admins and owners only)."""

    __tablename__ = "org_digest_settings"

    org_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    enabled: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    include_viewers: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class DigestSend(Base):
    """One organisation's digest for one ISO week (week_start is that week's Monday)."""

    __tablename__ = "digest_sends"
    __table_args__ = (UniqueConstraint("org_id", "week_start"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    week_start: Mapped[dt.date] = mapped_column(Date)
    status: Mapped[str] = mapped_column(
        Enum(
            *DIGEST_SEND_STATUSES,
            name="digest_send_status",
            native_enum=False,
            create_constraint=True,
            length=16,
        )
    )
    recipients: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    claimed_at: Mapped[dt.datetime | None]
    sent_at: Mapped[dt.datetime | None]
    created_at: Mapped[dt.datetime] = created_at_column()


class EmailVerification(Base):
    """A user proved they read mail at `email` (by the link in a test digest); valid while it is their email."""

    __tablename__ = "email_verifications"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    verified_at: Mapped[dt.datetime] = created_at_column()


class DigestPreference(Base):
    """One member's choices for one organisation's weekly email; no row means the defaults (on, every cluster).

    `cluster_ids` None is every cluster (including ones added later); a list is those clusters only (ids of clusters
    deleted since simply match nothing). `unsubscribed_at` is when the one-click link turned the email off."""

    __tablename__ = "digest_preferences"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    weekly_email: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    cluster_ids: Mapped[list[uuid.UUID] | None] = mapped_column(ARRAY(Uuid))
    unsubscribed_at: Mapped[dt.datetime | None]
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class DigestDelivery(Base):
    """One recipient's copy of one week's send, recorded when the server accepted it: a retried send skips them."""

    __tablename__ = "digest_deliveries"

    send_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("digest_sends.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    delivered_at: Mapped[dt.datetime] = created_at_column()

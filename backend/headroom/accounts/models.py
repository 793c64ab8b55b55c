"""Organisations, users, memberships (roles), sessions, API tokens, invitations and the audit log."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Identity,
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

ROLES = ("owner", "admin", "viewer")
# --- tenancy and auth ------------------------------------------------------------------------------------


class Organization(Base):
    __tablename__ = "organizations"
    __table_args__ = (CheckConstraint("lookback_days IN (14, 32, 93)", name="lookback_days"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(800))  # 200 characters as shown (platform/schemas.py Name200)
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    # STS external ID the org's IAM role trust policy must require (confused-deputy protection).
    aws_external_id: Mapped[str] = mapped_column(String(100), unique=True)
    # Days of history a cut is judged on (AWS Compute Optimizer's look-back period: 14, 32 or 93;
    # docs/reference/lookback.md); a cluster may override it.
    lookback_days: Mapped[int] = mapped_column(SmallInteger, default=14, server_default="14")
    # Apply (docs/apply.md): off until an owner turns it on; a cluster must be turned on as well.
    apply_enabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # The write role (ec2:ModifyVolume on volumes carrying this tag only) the customer created from the template.
    apply_role_arn: Mapped[str | None] = mapped_column(String(2048))
    apply_volume_tag_key: Mapped[str | None] = mapped_column(String(128))
    apply_volume_tag_value: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[dt.datetime] = created_at_column()


class User(Base):
    __tablename__ = "users"
    __table_args__ = (Index("uq_users_email_lower", func.lower(text("email")), unique=True),)

    id: Mapped[uuid.UUID] = uuid_pk()
    email: Mapped[str] = mapped_column(String(320))
    full_name: Mapped[str] = mapped_column(String(800), default="", server_default="")  # Name200
    password_hash: Mapped[str] = mapped_column(String(255))
    is_active: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    created_at: Mapped[dt.datetime] = created_at_column()
    last_login_at: Mapped[dt.datetime | None]


class Membership(Base):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("org_id", "user_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    user_id: Mapped[uuid.UUID] = fk_column("users.id")
    role: Mapped[str] = mapped_column(enum_column("membership_role", ROLES))
    created_at: Mapped[dt.datetime] = created_at_column()


class UserSession(Base):
    __tablename__ = "user_sessions"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    user_id: Mapped[uuid.UUID] = fk_column("users.id")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = created_at_column()
    expires_at: Mapped[dt.datetime]
    last_seen_at: Mapped[dt.datetime | None]
    ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(400))


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    created_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    name: Mapped[str] = mapped_column(String(800))  # 200 characters as shown (platform/schemas.py Name200)
    # The token is shown once; only its SHA-256 and a short prefix (to recognise it in lists) are stored.
    token_prefix: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(enum_column("api_token_role", ROLES))
    created_at: Mapped[dt.datetime] = created_at_column()
    last_used_at: Mapped[dt.datetime | None]
    expires_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]


class Invitation(Base):
    __tablename__ = "invitations"

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(enum_column("invitation_role", ROLES))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    invited_by_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    created_at: Mapped[dt.datetime] = created_at_column()
    expires_at: Mapped[dt.datetime]
    accepted_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]


class AuditLog(Base):
    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_org_created", "org_id", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    actor_user_id: Mapped[uuid.UUID | None] = fk_column("users.id", nullable=True, ondelete="SET NULL")
    actor_token_id: Mapped[uuid.UUID | None] = fk_column("api_tokens.id", nullable=True, ondelete="SET NULL")
    action: Mapped[str] = mapped_column(String(100))
    target_kind: Mapped[str | None] = mapped_column(String(50))
    target_id: Mapped[str | None] = mapped_column(String(100))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=text("'{}'::jsonb"))
    ip: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = created_at_column()

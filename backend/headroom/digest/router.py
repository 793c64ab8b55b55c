"""The caller's organisation's weekly advisory email: settings and last sends, a preview of this week's email,
a test send to the caller (with a link that verifies their address), and that verification (/org/digest); the
caller's own preferences (/digest/preferences) and the one-click unsubscribe that needs no log-in
(/digest/unsubscribe, RFC 8058)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from fastapi import APIRouter, Query
from pydantic import Field

from headroom.api.deps import DB, Caller, Context
from headroom.digest import service
from headroom.platform.schemas import Input, Output
from headroom.platform.shared_cache import shared_cache

router = APIRouter(tags=["digest"])
org_digest = APIRouter(prefix="/org/digest")
my_digest = APIRouter(prefix="/digest")


class DigestSendRead(Output):
    id: uuid.UUID
    week_start: dt.date
    status: str
    recipients: int
    attempts: int
    error: str | None
    sent_at: dt.datetime | None
    created_at: dt.datetime


class DigestSettingsRead(Output):
    enabled: bool = Field(description="Whether the organisation gets the weekly email (Mondays 08:00 UTC).")
    include_viewers: bool = Field(description="Viewers get it too; admins and owners always do.")
    smtp_configured: bool = Field(description="False: this installation has no mail server; nothing is sent.")
    recipients: list[str] = Field(description="Who this week's email goes to: members with a verified email.")
    caller_email_verified: bool
    last_sends: list[DigestSendRead]


class DigestSettingsUpdate(Input):
    enabled: bool | None = None
    include_viewers: bool | None = None


class DigestPreview(Output):
    week_start: dt.date
    subject: str
    text: str
    html: str
    all_clear: bool


class SendTestResult(Output):
    status: Literal["sent", "skipped", "failed"]
    to: str
    detail: str


class EmailVerified(Output):
    email: str
    verified: bool


def _read(db: DB, caller: Caller, smtp_configured: bool) -> DigestSettingsRead:
    prefs = service.prefs(db, caller.org_id)
    user = service.caller_user(db, caller) if caller.user_id else None
    return DigestSettingsRead(
        enabled=prefs.enabled,
        include_viewers=prefs.include_viewers,
        smtp_configured=smtp_configured,
        recipients=service.recipients(db, caller.org_id, include_viewers=prefs.include_viewers),
        caller_email_verified=user is not None and service.is_verified(db, user),
        last_sends=[DigestSendRead.model_validate(s) for s in service.last_sends(db, caller.org_id)],
    )


@org_digest.get("", response_model=DigestSettingsRead)
def get_digest(caller: Caller, db: DB, ctx: Context) -> DigestSettingsRead:
    """The weekly email's settings, who gets it, and the last sends with their outcome."""
    return _read(db, caller, service.smtp_configured(ctx.settings))


@org_digest.patch("", response_model=DigestSettingsRead)
def update_digest(body: DigestSettingsUpdate, caller: Caller, db: DB, ctx: Context) -> DigestSettingsRead:
    """Turn the weekly email on or off, or include viewers (admins and owners)."""
    service.update_prefs(db, caller, enabled=body.enabled, include_viewers=body.include_viewers)
    return _read(db, caller, service.smtp_configured(ctx.settings))


@org_digest.get("/preview", response_model=DigestPreview)
def preview_digest(caller: Caller, db: DB, ctx: Context) -> DigestPreview:
    """This week's email as it would be sent now (subject, text and HTML; the charts inline as data: URIs); rendered
    after each advice round and whenever a finding, a setting or the hour changes, then served as stored."""
    made = service.preview(db, caller.org_id, now=ctx.clock(), public_url=ctx.settings.public_url,
                           cache=shared_cache(ctx.settings.redis_url))
    return DigestPreview(week_start=made.week_start, subject=made.subject, text=made.text, html=made.html,
                         all_clear=made.all_clear)


@org_digest.post("/send-test", response_model=SendTestResult)
def send_test(caller: Caller, db: DB, ctx: Context) -> SendTestResult:
    """Send this week's email to you now (admins and owners), with a link that verifies your address."""
    caller.require("admin")
    sent = service.send_test(db, caller, ctx.settings, now=ctx.clock())
    return SendTestResult(status=sent.status, to=sent.to, detail=sent.detail)


@org_digest.post("/verify/{token}", response_model=EmailVerified)
def verify_email(token: str, caller: Caller, db: DB, ctx: Context) -> EmailVerified:
    """Verify your email with the link from a test send (only your own, current address)."""
    email = service.verify_email(db, caller, token, secret_key=ctx.settings.secret_key, now=ctx.clock())
    return EmailVerified(email=email, verified=True)


class DigestPreferencesRead(Output):
    weekly_email: bool = Field(description="Whether you get this organisation's weekly email.")
    cluster_ids: list[uuid.UUID] | None = Field(
        description="The clusters your email covers; null is every cluster, including ones added later."
    )
    unsubscribed_at: dt.datetime | None = Field(description="When an email's unsubscribe link turned it off.")


class DigestPreferencesUpdate(Input):
    weekly_email: bool
    cluster_ids: list[uuid.UUID] | None = Field(
        default=None, max_length=1000, description="null: every cluster; a list: those clusters only."
    )


class UnsubscribeResult(Output):
    email: str
    organization: str
    weekly_email: Literal[False] = False
    already_unsubscribed: bool = Field(description="True: the link had been used before; nothing changed.")


def _prefs_read(prefs: service.MemberPrefs) -> DigestPreferencesRead:
    return DigestPreferencesRead(
        weekly_email=prefs.weekly_email,
        cluster_ids=list(prefs.cluster_ids) if prefs.cluster_ids is not None else None,
        unsubscribed_at=prefs.unsubscribed_at,
    )


@my_digest.get("/preferences", response_model=DigestPreferencesRead)
def get_preferences(caller: Caller, db: DB) -> DigestPreferencesRead:
    """Your own choices for this organisation's weekly email: on or off, and which clusters."""
    user = service.caller_user(db, caller)
    return _prefs_read(service.member_prefs(db, user.id, caller.org_id))


@my_digest.put("/preferences", response_model=DigestPreferencesRead)
def put_preferences(body: DigestPreferencesUpdate, caller: Caller, db: DB) -> DigestPreferencesRead:
    """Replace your choices for this organisation's weekly email (any member)."""
    prefs = service.update_member_prefs(db, caller, weekly_email=body.weekly_email, cluster_ids=body.cluster_ids)
    return _prefs_read(prefs)


@my_digest.post("/unsubscribe", response_model=UnsubscribeResult)
def unsubscribe(db: DB, ctx: Context, token: str = Query(max_length=200)) -> UnsubscribeResult:
    """Turn off the weekly email for the member and organisation in the email's signed link; no log-in. Mail
    clients POST here (List-Unsubscribe-Post: List-Unsubscribe=One-Click, RFC 8058); doing it twice is fine."""
    done = service.unsubscribe(db, token, secret_key=ctx.settings.secret_key, now=ctx.clock())
    return UnsubscribeResult(email=done.email, organization=done.org_name, already_unsubscribed=not done.changed)


router.include_router(org_digest)
router.include_router(my_digest)

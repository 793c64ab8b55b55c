"""The caller's organisation's weekly advisory email: settings and last sends, a preview of this week's email,
a test send to the caller (with a link that verifies their address), and that verification."""

from __future__ import annotations

import datetime as dt
import html
import uuid
from typing import Literal

from fastapi import APIRouter
from pydantic import Field

from headroom.api.deps import DB, Caller, Context
from headroom.digest import service
from headroom.digest.build import iso_week_start
from headroom.digest.send import SendError, compose, config_from_settings, send_message
from headroom.platform.logging import get_logger
from headroom.platform.schemas import Input, Output

log = get_logger("headroom.api.org_digest")

router = APIRouter(prefix="/org/digest", tags=["digest"])


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


@router.get("", response_model=DigestSettingsRead)
def get_digest(caller: Caller, db: DB, ctx: Context) -> DigestSettingsRead:
    """The weekly email's settings, who gets it, and the last sends with their outcome."""
    return _read(db, caller, config_from_settings(ctx.settings) is not None)


@router.patch("", response_model=DigestSettingsRead)
def update_digest(body: DigestSettingsUpdate, caller: Caller, db: DB, ctx: Context) -> DigestSettingsRead:
    """Turn the weekly email on or off, or include viewers (admins and owners)."""
    service.update_prefs(db, caller, enabled=body.enabled, include_viewers=body.include_viewers)
    return _read(db, caller, config_from_settings(ctx.settings) is not None)


@router.get("/preview", response_model=DigestPreview)
def preview_digest(caller: Caller, db: DB, ctx: Context) -> DigestPreview:
    """This week's email as it would be sent now (subject, text and HTML)."""
    now = ctx.clock()
    digest = service.render(db, caller.org_id, now=now, public_url=ctx.settings.public_url)
    return DigestPreview(week_start=iso_week_start(now.date()), subject=digest.subject, text=digest.text,
                         html=digest.html, all_clear=digest.all_clear)


@router.post("/send-test", response_model=SendTestResult)
def send_test(caller: Caller, db: DB, ctx: Context) -> SendTestResult:
    """Send this week's email to you now (admins and owners), with a link that verifies your address."""
    caller.require("admin")
    user = service.caller_user(db, caller)
    config = config_from_settings(ctx.settings)
    if config is None:
        log.info("digest.test_skipped", reason="smtp not configured (HEADROOM_SMTP_HOST is unset)")
        return SendTestResult(status="skipped", to=user.email,
                              detail="No mail server is configured (HEADROOM_SMTP_HOST); nothing was sent.")
    now = ctx.clock()
    digest = service.render(db, caller.org_id, now=now, public_url=ctx.settings.public_url)
    token = service.verification_token(ctx.settings.secret_key, user.id, user.email, now=now)
    link = f"{ctx.settings.public_url.rstrip('/')}/settings/digest?verify={token}"
    text = f"{digest.text}\nThis is a test send. Confirm that you read this address to get the weekly email: {link}\n"
    body_html = digest.html.replace(
        "</body>",
        f'<p>This is a test send. <a href="{html.escape(link)}">Confirm that you read this address</a> to get the weekly '
        "email.</p></body>",
    )
    message = compose(config.sender, [user.email], f"Test send: {digest.subject}", text, body_html)
    try:
        send_message(config, message, [user.email])
    except SendError as exc:
        return SendTestResult(status="failed", to=user.email, detail=str(exc))
    service.audit_test_send(db, caller)
    return SendTestResult(status="sent", to=user.email, detail="Sent; follow its link to verify your address.")


@router.post("/verify/{token}", response_model=EmailVerified)
def verify_email(token: str, caller: Caller, db: DB, ctx: Context) -> EmailVerified:
    """Verify your email with the link from a test send (only your own, current address)."""
    email = service.verify_email(db, caller, token, secret_key=ctx.settings.secret_key, now=ctx.clock())
    return EmailVerified(email=email, verified=True)

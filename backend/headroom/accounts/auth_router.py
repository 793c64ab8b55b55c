"""Sign-up, log-in and log-out with a session cookie, and who-am-I."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, BackgroundTasks, Request, Response, status

from headroom.accounts import login_limits
from headroom.accounts import service as accounts
from headroom.accounts.login_limits import LoginLimits
from headroom.accounts.schemas import (
    InvitationAccept,
    LoginCreate,
    SessionRead,
    SignupConfirm,
    SignupCreate,
    SignupStarted,
)
from headroom.api.deps import (
    CSRF_COOKIE,
    DB,
    SESSION_COOKIE,
    AppContext,
    Caller,
    Context,
    client_ip,
)
from headroom.platform.errors import InvalidCredentials, NotAuthenticated
from headroom.platform.logging import get_logger
from headroom.platform.security import csrf_token_for

router = APIRouter(prefix="/auth", tags=["auth"])
log = get_logger("headroom.api.auth")
SIGNUP_MAILS_PER_ADDRESS_PER_HOUR = 5


def _set_session_cookies(response: Response, ctx: AppContext, token: str) -> None:
    max_age = ctx.settings.session_ttl_hours * 3600
    secure = ctx.settings.secure_cookies
    response.set_cookie(
        SESSION_COOKIE, token, max_age=max_age, httponly=True, samesite="lax", secure=secure, path="/"
    )
    # Readable by the front end, which echoes it in X-CSRF-Token (double-submit, bound to the session by HMAC).
    response.set_cookie(
        CSRF_COOKIE,
        csrf_token_for(token, ctx.settings.secret_key),
        max_age=max_age,
        httponly=False,
        samesite="lax",
        secure=secure,
        path="/",
    )


def _session_read(session: accounts.SignedIn) -> SessionRead:
    return SessionRead.model_validate(
        {"user": session.user, "organization": session.organization, "role": session.role}
    )


def _started(request: Request, response: Response, ctx: AppContext, session: accounts.SignedIn) -> SessionRead:
    assert session.token is not None
    _set_session_cookies(response, ctx, session.token)
    return _session_read(session)


def _session_kwargs(request: Request, ctx: AppContext) -> dict[str, Any]:
    return {
        "now": ctx.clock(),
        "ttl": dt.timedelta(hours=ctx.settings.session_ttl_hours),
        "ip": client_ip(request),
        "user_agent": request.headers.get("user-agent"),
    }


@router.post("/signup", status_code=status.HTTP_202_ACCEPTED, response_model=SignupStarted)
def signup(body: SignupCreate, request: Request, db: DB, ctx: Context, background: BackgroundTasks) -> SignupStarted:
    """Start a sign-up: we email the address a link that creates the account and its organisation (you become its
    owner) and logs you in. The answer is the same whether or not the address already has an account; its owner
    is told by email instead, so sign-up never reveals who is registered."""
    ctx.rate_limiter.hit(f"signup:ip:{client_ip(request)}", ctx.settings.login_rate_per_ip,
                         ctx.settings.login_rate_window_seconds)
    email = str(body.email).strip()
    # Sealing the link hashes the password: done for both answers, so their timing matches too.
    token = accounts.signup_token(ctx.secret_box, email=email, password=body.password,
                                  organization_name=body.organization_name, full_name=body.full_name,
                                  now=ctx.clock())
    base = ctx.settings.public_url.rstrip("/")
    existing = accounts.find_user_by_email(db, email)
    if existing is None:
        link = f"{base}/signup/confirm?token={quote(token, safe='')}"
        subject, text = "Finish creating your Headroom account", (
            f"Someone (we hope you) asked to create a Headroom account for {email}.\n\n"
            f"Follow this link within 24 hours to finish and log in:\n{link}\n\n"
            "If it was not you, ignore this email: nothing is created until the link is followed.\n"
        )
    else:
        subject, text = "Someone tried to sign up with your address", (
            f"Someone tried to create a new Headroom account for {existing.email}, which already has one.\n\n"
            f"If it was you, log in instead: {base}/login\n\n"
            "If it was not you, you need not do anything: your account is unchanged.\n"
        )
    # At most a few emails an hour to one address, however many addresses the sign-ups come from, so sign-up
    # cannot flood someone's inbox; beyond that the answer stays the same and nothing is sent.
    if ctx.rate_limiter.add(f"signup:mail:{email.lower()}", 3600) <= SIGNUP_MAILS_PER_ADDRESS_PER_HOUR:
        background.add_task(ctx.mailer.send, existing.email if existing else email, subject, text)
    else:
        log.info("signup.mail_suppressed", reason="too many sign-up emails to this address this hour")
    message = "Check your email: we have sent you a link to finish creating your account (it works for 24 hours)."
    if not ctx.settings.smtp_host:
        message += (" No mail server is configured here, so the email was written to the server's outbox"
                    " (HEADROOM_DATA_DIR/outbox); ask the administrator.")
    return SignupStarted(message=message)


@router.post("/signup/confirm", status_code=status.HTTP_201_CREATED, response_model=SessionRead)
def confirm_signup(body: SignupConfirm, request: Request, response: Response, db: DB, ctx: Context) -> SessionRead:
    """Follow the emailed sign-up link: create the account and its organisation, and log in."""
    ctx.rate_limiter.hit(f"signup:ip:{client_ip(request)}", ctx.settings.login_rate_per_ip,
                         ctx.settings.login_rate_window_seconds)
    user, org, membership = accounts.confirm_sign_up(db, ctx.secret_box, body.token, now=ctx.clock())
    accounts.audit(db, org.id, "auth.signup_confirmed", target_kind="user", target_id=user.id,
                   actor_user_id=user.id, ip=client_ip(request))
    return _started(request, response, ctx, accounts.start_session(db, user, membership, **_session_kwargs(request, ctx)))


@router.post("/login", response_model=SessionRead)
def login(body: LoginCreate, request: Request, response: Response, db: DB, ctx: Context) -> SessionRead:
    """Log in with email and password; failures back off per account and IP, per IP and per account
    (docs/login-limits.md)."""
    email, ip = str(body.email).lower(), client_ip(request)
    limits = LoginLimits.from_settings(ctx.settings)
    login_limits.before_attempt(ctx.rate_limiter, limits, email=email, ip=ip)
    try:
        user = accounts.authenticate(db, email, body.password)
    except InvalidCredentials:
        login_limits.after_failure(ctx.rate_limiter, limits, email=email, ip=ip)
        raise
    login_limits.after_success(ctx.rate_limiter, limits, email=email, ip=ip)
    membership = accounts.primary_membership(db, user.id)
    accounts.audit(db, membership.org_id, "auth.login", target_kind="user", target_id=user.id,
                   actor_user_id=user.id, ip=client_ip(request))
    return _started(request, response, ctx, accounts.start_session(db, user, membership, **_session_kwargs(request, ctx)))


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(caller: Caller, db: DB) -> Response:
    """End this session (the cookie is cleared)."""
    if caller.session_id is not None:
        accounts.close_session(db, caller.session_id)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")
    return response


@router.get("/me", response_model=SessionRead)
def me(caller: Caller, db: DB) -> SessionRead:
    """The signed-in user, their organisation and role."""
    if caller.user_id is None:
        raise NotAuthenticated("This API token has no user.")
    session = _session_read(accounts.signed_in(db, caller.user_id, caller.org_id))
    session.role = caller.role  # type: ignore[assignment]
    return session


@router.post("/accept-invitation", response_model=SessionRead)
def accept_invitation(body: InvitationAccept, request: Request, response: Response, db: DB,
                      ctx: Context) -> SessionRead:
    """Join an organisation with an invitation token (creating the account if needed), and log in."""
    ctx.rate_limiter.hit(f"invite:ip:{client_ip(request)}", ctx.settings.login_rate_per_ip,
                         ctx.settings.login_rate_window_seconds)
    user, membership = accounts.accept_invitation(
        db, token=body.token, password=body.password, full_name=body.full_name, now=ctx.clock()
    )
    return _started(request, response, ctx, accounts.start_session(db, user, membership, **_session_kwargs(request, ctx)))

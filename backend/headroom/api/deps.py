"""Request dependencies: one DB session per request (committed when the handler succeeds), a read-only session
for the dashboard's reads (on the read replica when one is configured and safe to read, platform/replica.py), the
caller's principal from a session cookie (with CSRF on writes) or a bearer API token, and role checks."""

from __future__ import annotations

import datetime as dt
import hmac
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from headroom.platform.errors import CsrfFailed, NotAuthenticated, RateLimited, ServiceUnavailable
from headroom.platform.mail import Mailer, OutboxMailer
from headroom.platform.outbound import OrgSlots, TooManyOutbound
from headroom.platform.principal import Principal, PrincipalResolvers
from headroom.platform.ratelimit import RateLimiter
from headroom.platform.replica import NOT_CONFIGURED, REPLICA_FAILED, ReplicaReadFailed, ReplicaRouter, count_read
from headroom.platform.security import API_TOKEN_PREFIX, SecretBox, csrf_token_for
from headroom.platform.settings import Settings

SESSION_COOKIE = "headroom_session"
CSRF_COOKIE = "headroom_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class AppContext:
    """What the API shell needs, built once per app (tests build their own)."""

    settings: Settings
    sessions: sessionmaker[Session]
    rate_limiter: RateLimiter
    secret_box: SecretBox
    clock: Callable[[], dt.datetime] = field(default=utcnow)
    ready_checks: dict[str, Callable[[], None]] = field(default_factory=dict)
    # outbound checks (source tests, status-port reads) running at once, per organisation and in all
    outbound_slots: OrgSlots = field(default_factory=OrgSlots)
    # Account email (sign-up links); build_context picks SMTP or the log/outbox from the settings.
    mailer: Mailer = field(default_factory=lambda: OutboxMailer(None))
    # Builds boto3 clients for an AWS connection; None: sources.aws.session.clients_for. Tests pass their own.
    aws_clients: Callable[..., Any] | None = None
    # The read replica's sessions and routing (DATABASE_REPLICA_URL); None: every read uses `sessions`.
    replica: ReplicaRouter | None = None

    def job_database_url(self) -> str:
        """The URL a queued job connects to: DATABASE_URL, else the app's own engine (embedded PostgreSQL)."""
        if self.settings.database_url:
            return self.settings.database_url
        bind = self.sessions.kw.get("bind")  # an Engine, or a Connection in tests
        engine = getattr(bind, "engine", bind)
        return str(engine.url.render_as_string(hide_password=False)) if engine is not None else ""


def get_context(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx


Context = Annotated[AppContext, Depends(get_context)]


def get_db(request: Request, ctx: Context) -> Iterator[Session]:
    """Yield the request's session; commit when the handler returned, roll back when it raised.

    With a read replica, a write request's commit records the primary's WAL position for the caller's
    organisation, so that its next reads wait for the replica to replay it (or go to the primary)."""
    db = ctx.sessions()
    try:
        yield db
        db.commit()
        principal: Principal | None = getattr(request.state, "principal", None)
        if ctx.replica is not None and principal is not None and request.method not in SAFE_METHODS:
            ctx.replica.note_write(str(principal.org_id), db)
    except BaseException:
        db.rollback()
        raise
    finally:
        db.close()


DB = Annotated[Session, Depends(get_db, scope="function")]


def client_ip(request: Request) -> str:
    """The caller's IP: the TCP peer, or, behind a proxy listed in HEADROOM_TRUSTED_PROXIES, the address that
    proxy saw (resolved from X-Forwarded-For by the app's ProxyHeadersMiddleware, see api.app.create_app)."""
    return request.client.host if request.client else "unknown"


def get_principal(request: Request, db: DB, ctx: Context) -> Principal:
    """Authenticate the caller: `Authorization: Bearer hr_...` or the session cookie (+ CSRF for writes).

    The accounts feature resolves the credential (its resolvers are on the app, put there by api.app.create_app)."""
    resolvers: PrincipalResolvers = request.app.state.principal_resolvers
    now = ctx.clock()
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        token = auth[7:].strip()
        if not token.startswith(API_TOKEN_PREFIX):
            raise NotAuthenticated("The API token is invalid, expired or revoked.")
        principal = resolvers.from_api_token(db, token, now=now)
        request.state.principal = principal
        return principal
    session_token = request.cookies.get(SESSION_COOKIE)
    if not session_token:
        raise NotAuthenticated("Log in, or send an API token as 'Authorization: Bearer <token>'.")
    principal = resolvers.from_session(db, session_token, now=now)
    if request.method not in SAFE_METHODS:
        expected = csrf_token_for(session_token, ctx.settings.secret_key)
        sent = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(expected, sent):
            raise CsrfFailed(f"Missing or wrong {CSRF_HEADER} header for a cookie-authenticated write.")
    request.state.principal = principal
    return principal


Caller = Annotated[Principal, Depends(get_principal)]


def get_read_db(request: Request, db: DB, caller: Caller, ctx: Context) -> Iterator[Session]:
    """Yield a session for a read-only route: on the replica when it is safe to read there for the caller's
    organisation, else the request's own session on the primary. The caller is authenticated on the primary.

    A route that takes it must never write (a hot standby refuses: "cannot execute ... in a read-only
    transaction"). When the replica fails under the read (connection lost, a query cancelled by a recovery
    conflict: OperationalError), ReplicaFallback (api.app) handles the request again on the primary."""
    if ctx.replica is None:
        count_read("primary", NOT_CONFIGURED)
        yield db
        return
    if getattr(request.state, "replica_failed", False):
        count_read("primary", REPLICA_FAILED)
        yield db
        return
    replica, _reason = ctx.replica.read_session(str(caller.org_id))
    if replica is None:
        yield db
        return
    # The primary's part (authentication) is done: hand its pooled connection back during the read.
    release_connection(db)
    try:
        yield replica
    except OperationalError as exc:
        ctx.replica.read_failed(exc)
        raise ReplicaReadFailed from exc
    finally:
        replica.close()


ReadDB = Annotated[Session, Depends(get_read_db, scope="function")]


def release_connection(db: Session) -> None:
    """Commit what the request did so far, handing its pool connection back before a slow outbound call.

    The request's session keeps working afterwards: its next statement begins a new transaction on a (new)
    pooled connection, so the result of the call is recorded in a short transaction of its own.
    """
    db.commit()


@contextmanager
def outbound_slot(ctx: AppContext, principal: Principal) -> Iterator[None]:
    """Hold one of the organisation's outbound slots for the block; 429 (or 503 when the whole server is busy)
    when none is free."""
    try:
        ctx.outbound_slots.acquire(principal.org_id)
    except TooManyOutbound as busy:
        if busy.scope in ("organisation", "share"):
            error = RateLimited(
                f"{busy.limit} connection tests or status-port reads are already running for your organisation; "
                + ("try again when one has finished." if busy.scope == "organisation" else
                   "the server is busy and keeps its last free slots for other organisations: try again when one "
                   "has finished."),
                retry_after_seconds=5,
            )
            error.code = "outbound_busy"
            raise error from None
        raise ServiceUnavailable(
            f"This server is already running {busy.limit} connection tests or status-port reads; try again in a "
            "few seconds.",
            code="outbound_busy",
        ) from None
    try:
        yield
    finally:
        ctx.outbound_slots.release(principal.org_id)

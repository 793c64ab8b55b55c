"""The FastAPI application: /api/v1 routers, one error shape, health probes and the built front end."""

from __future__ import annotations

import functools
import mimetypes
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from headroom.accounts import auth_router, org_router
from headroom.accounts import service as accounts_service
from headroom.api.deps import SESSION_COOKIE, AppContext
from headroom.api.inputs import BodySizeLimit, refuse_nul_characters
from headroom.clusters import router as clusters_router
from headroom.digest import router as digest_router
from headroom.domain.catalog.instance_types import use_override_file
from headroom.findings import router as findings_router
from headroom.inventory import router as inventory_router
from headroom.metrics import router as metrics_router
from headroom.patches import router as patches_router
from headroom.patches import service as patches_service
from headroom.platform.compression import accepted_encodings, Compression
from headroom.platform.db import POOL_CONNECTIONS, OutageLog, is_database_outage, session_factory
from headroom.platform import telemetry
from headroom.platform.errors import AppError, QueueUnavailable, RateLimited
from headroom.platform.labels import field_label
from headroom.platform.jobs.dispatch import inprocess_pending_by_queue
from headroom.platform.inflight import InFlightLimit
from headroom.platform.jobs.registry import QUEUES
from headroom.platform.logging import (
    bind_request_secrets,
    get_logger,
    mark_logged,
    register_secret_values,
    settings_secret_values,
)
from headroom.platform.mail import mailer_from_settings
from headroom.platform.principal import PrincipalResolvers
from headroom.platform.ratelimit import MemoryRateLimiter, RedisRateLimiter
from headroom.platform.redis_client import redis_client
from headroom.platform.replica import MemoryWriteMarks, RedisWriteMarks, ReplicaFallback, ReplicaRouter, WriteMarks
from headroom.platform.schemas import ErrorResponse
from headroom.platform.security import SecretBox
from headroom.platform.security_headers import SecurityHeaders, docs_csp
from headroom.platform.settings import Settings
from headroom.sources import ops_health
from headroom.sources import router as sources_router
from headroom.sources import service as sources_service
from headroom.sources.aws import router as aws_router
from headroom.sources.demo import router as demo_router
from headroom.sources.aws import setup_router as aws_setup_router
from headroom.sources.prometheus import router as prometheus_router
from headroom.projections import router as projections_router
from headroom.changes import router as changes_router
from headroom.fleet import router as fleet_router
from headroom.alerts import router as alerts_router
from headroom.apply import router as apply_router
from headroom.timeseries import router as snapshots_router

API_PREFIX = "/api/v1"
_HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
DOCS_PATH = "/api/docs"
SPA_PATH = "/{path:path}"  # the built front end: every path not matched before
# How long a client is asked to wait when the database is unreachable: PostgreSQL restarts (a failover, a minor
# upgrade) take seconds, and /readyz tells a load balancer the same in the meantime.
DATABASE_RETRY_AFTER_SECONDS = 5
# How long /readyz waits for Redis (the job broker) before calling it not ready: well under a load balancer's
# usual health-check timeout (5 s on an AWS target group), so a slow Redis is reported, not timed out.
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/target-group-health-checks.html
BROKER_READY_TIMEOUT_SECONDS = 2.0
log = get_logger("headroom.api")


def _error(status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message, "details": details}}, status_code=status, headers=headers
    )


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "cookie")]
    return ".".join(parts) or str(loc[-1] if loc else "request")


def _field_titles(request: Request) -> dict[str, str]:
    """The `Field(title=...)` of the route's request body model, by field name ({} when there is none)."""
    route = request.scope.get("route")
    field = getattr(route, "body_field", None)
    model = getattr(getattr(field, "field_info", None), "annotation", None)
    fields = getattr(model, "model_fields", None)
    if not isinstance(fields, dict):
        return {}
    return {name: info.title for name, info in fields.items() if getattr(info, "title", None)}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(_: Request, exc: AppError) -> JSONResponse:
        retry_after = exc.retry_after_seconds if isinstance(exc, RateLimited | QueueUnavailable) else None
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        return _error(exc.status_code, exc.code, exc.message, exc.details, headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        titles = _field_titles(request)
        details = [{"field": _field_name(tuple(e["loc"])), "loc": list(e["loc"]),
                    "label": field_label(tuple(e["loc"]), titles), "message": e["msg"]} for e in exc.errors()]
        first = details[0] if details else {"label": "Request", "message": "invalid"}
        return _error(422, "validation_error", f"{first['label']}: {first['message']}", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
        code = codes.get(exc.status_code, "http_error")
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return _error(exc.status_code, code, str(exc.detail), headers=headers or None)

    # A plain function: Starlette runs it in the threadpool, so rendering the traceback never holds up the event
    # loop (and with it every other request). The traceback has no local variables and is bounded and scrubbed
    # of secrets by the log formatter (headroom.platform.logging).
    def _internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("api.unhandled_error", path=request.url.path, error_type=type(exc).__name__, exc_info=exc)
        mark_logged(exc)
        return _error(500, "internal_error", "Something went wrong on our side; it has been logged.",
                      headers=_request_id_header(request))

    app.exception_handler(Exception)(_internal_error)

    # The database down (or refusing connections, or the pool empty for its whole timeout) is not a bug: every
    # request answers 503 with Retry-After, as /readyz does, and the log gets one line per outage instead of a
    # traceback per request (platform/db.py: is_database_outage, OutageLog). Any other database error is a 500.
    outages = OutageLog()

    def _database_error(request: Request, exc: Exception) -> JSONResponse:
        if not is_database_outage(exc):
            return _internal_error(request, exc)
        mark_logged(exc)
        starts, turned_away = outages.record()
        if starts:
            orig = getattr(exc, "orig", None) or exc
            log.warning("api.database_unavailable", path=request.url.path, error_type=type(orig).__name__,
                        sqlstate=getattr(orig, "sqlstate", None), previous_outage_turned_away=turned_away,
                        message=str(orig).splitlines()[0][:300] if str(orig) else None)
        headers = {"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS), **(_request_id_header(request) or {})}
        return _error(503, "database_unavailable",
                      "The database cannot be reached right now; try again in a few seconds.",
                      headers=headers)

    app.exception_handler(DBAPIError)(_database_error)
    app.exception_handler(SQLAlchemyTimeoutError)(_database_error)


def allowed_methods(request: Request) -> str:
    """Every method some route answers at this path, for a 405's Allow header (RFC 9110 section 15.5.6: "MUST
    generate an Allow header field ... containing a list of the target resource's currently supported methods").
    Starlette names only the methods of the first route whose path matched, and FastAPI makes one route per
    method, so `PUT /api/v1/clusters` said `Allow: GET` though POST is answered too."""
    path = request.scope.get("path", request.url.path)
    methods: set[str] = set()
    for method in _HTTP_METHODS:
        probe = {**request.scope, "method": method}
        for route in request.app.router.routes:
            match, child = route.matches(probe)
            if match is not Match.FULL:
                continue
            matched = child.get("route")
            if getattr(matched, "path", None) == SPA_PATH and path.startswith(API_PREFIX + "/"):
                continue  # the front end's catch-all answers /api/... with 404, not the page
            methods.add(method)
            break
    return ", ".join(sorted(methods))


def _request_id_header(request: Request) -> dict[str, str] | None:
    # These handlers answer outside RequestTelemetry (Starlette's outermost middleware runs them): they return the
    # request's id themselves, so a user can quote it.
    request_id = request.scope.get("state", {}).get("request_id")
    return {telemetry.REQUEST_ID_HEADER: request_id} if request_id else None


class _BindRequestSecrets:
    """Pure ASGI middleware: the request's bearer token, cookies and CSRF token are scrubbed from any log line
    written while it is handled (including its 500 report and the server's access and error lines)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            values: list[str] = []
            for name, raw in scope.get("headers", ()):
                if name in (b"authorization", b"x-csrf-token", b"x-api-key"):
                    value = raw.decode("latin-1")
                    values += [value, value.split(" ", 1)[-1].strip()]
                elif name == b"cookie":
                    for part in raw.decode("latin-1").split(";"):
                        values.append(part.partition("=")[2].strip())
            bind_request_secrets(values)
        await self.app(scope, receive, send)


# Every feature's router, in the order routes are matched (the old modules' name order). An explicit list:
# a new feature adds its router here.
ROUTER_MODULES = (
    auth_router,
    clusters_router,
    findings_router,
    metrics_router,
    inventory_router,
    org_router,
    digest_router,
    patches_router,
    snapshots_router,
    sources_router,
    aws_router,
    aws_setup_router,
    demo_router,
    prometheus_router,
    projections_router,
    changes_router,
    fleet_router,
    alerts_router,
    apply_router,
)


def build_context(settings: Settings, database_url: str) -> AppContext:
    """Wire the app's dependencies from settings: DB sessions, the rate limiter, the secret box, probes."""
    use_override_file(settings.instance_catalog)
    sessions = session_factory(database_url)
    limiter = RedisRateLimiter(settings.redis_url) if settings.redis_url else MemoryRateLimiter()
    ctx = AppContext(settings=settings, sessions=sessions, rate_limiter=limiter, secret_box=SecretBox(settings.secret_key),
                     mailer=mailer_from_settings(settings))

    def database() -> None:
        with sessions() as db:
            db.execute(text("SELECT 1"))

    ctx.ready_checks["database"] = database
    if settings.database_replica_url:
        # Not a ready check: without its replica the API still answers, from the primary.
        marks: WriteMarks = RedisWriteMarks(settings.redis_url) if settings.redis_url else MemoryWriteMarks()
        ctx.replica = ReplicaRouter(settings.database_replica_url, marks,
                                    max_lag_seconds=settings.replica_max_lag_seconds)
    if settings.redis_url:
        client = redis_client(settings.redis_url, BROKER_READY_TIMEOUT_SECONDS)
        ctx.ready_checks["broker"] = lambda: None if client.ping() else None
    return ctx


@functools.cache
def api_router() -> APIRouter:
    """The /api/v1 routes, one router per process: it holds no state of an app, and FastAPI resolves every route
    it includes (parameters, response models) when a router is included, which an app built per test paid again."""
    # Every API error has one shape; documenting it here also replaces FastAPI's default 422 schema.
    error = {"model": ErrorResponse}
    api = APIRouter(
        prefix=API_PREFIX,
        # 400: a body that is not UTF-8 JSON at all; 413: over HEADROOM_MAX_BODY_BYTES; 503: the database (or the
        # job queue, or the outbound slots) unavailable, with Retry-After.
        responses={400: error, 401: error, 403: error, 404: error, 409: error, 413: error, 422: error, 429: error,
                   503: error},
        dependencies=[Depends(refuse_nul_characters)],
    )
    for router in (module.router for module in ROUTER_MODULES):
        api.include_router(router)
    return api


def create_app(ctx: AppContext, *, frontend_dist: Path | None = None) -> FastAPI:
    """Build the ASGI app around an AppContext."""
    app = FastAPI(
        title="Headroom API",
        version="0.1.0",
        description="Storage advisor for TiKV on AWS EC2 + EBS. Authenticate with the session cookie "
        "(plus X-CSRF-Token on writes) or `Authorization: Bearer <API token>`.",
        # /api/docs is served below, with its own Content-Security-Policy; no OAuth2 flow, so no redirect page.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        openapi_url=f"{API_PREFIX}/openapi.json",
    )
    app.state.ctx = ctx
    # What a feature lends code that cannot import it without a cycle: api.deps resolves the caller with the accounts
    # feature's resolvers (the accounts routers use api.deps), and the findings router lists the patches made from
    # a finding (patches.service reads the findings to make them).
    app.state.principal_resolvers = PrincipalResolvers(
        from_api_token=accounts_service.principal_from_api_token, from_session=accounts_service.principal_from_session
    )
    app.state.finding_patches = patches_service.patches_of_finding
    app.state.grafana_of = sources_service.grafana_url_of
    register_secret_values(settings_secret_values(ctx.settings))
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=ctx.settings.max_body_bytes)
    # No more requests at once than the database pool has connections (platform/inflight.py says why).
    app.add_middleware(InFlightLimit, limit=POOL_CONNECTIONS)
    if ctx.replica is not None:
        # A read the replica failed under is answered again on the primary (platform/replica.py).
        app.add_middleware(ReplicaFallback)
    app.add_middleware(_BindRequestSecrets)
    if ctx.settings.trusted_proxy_list:
        # The one place X-Forwarded-For is read (uvicorn runs with proxy_headers off): only from a trusted proxy,
        # taking the rightmost entry that is not itself a trusted proxy (api.deps.client_ip reads the result).
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=ctx.settings.trusted_proxy_list)
    # Security headers on every answer (platform/security_headers.py, docs/security-headers.md); HSTS only when
    # the public URL is https.
    # JSON answers compressed with the best coding the browser accepts (platform/compression.py).
    app.add_middleware(Compression)
    app.add_middleware(SecurityHeaders, https=ctx.settings.public_url.startswith("https://"))
    # Outermost: the request id is bound before anything else logs, and the latency covers every layer.
    app.add_middleware(telemetry.RequestTelemetry)

    app.include_router(api_router())

    @app.get(DOCS_PATH, include_in_schema=False)
    def docs() -> HTMLResponse:
        """FastAPI's Swagger UI page, under a policy that allows exactly what it loads (security_headers.docs_csp)."""
        page = get_swagger_ui_html(openapi_url=app.openapi_url or "", title=f"{app.title} - Swagger UI")
        html = bytes(page.body).decode()
        return HTMLResponse(html, headers={"Content-Security-Policy": docs_csp(html)})

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: {"description": "The database or the broker is unreachable."}})
    def readyz() -> JSONResponse:
        """The database and the broker are reachable."""
        checks: dict[str, str] = {}
        for name, check in ctx.ready_checks.items():
            try:
                check()
                checks[name] = "ok"
            except Exception as exc:  # noqa: BLE001 - report any failure as not ready
                checks[name] = f"error: {type(exc).__name__}"
        if "broker" not in ctx.ready_checks:
            checks["broker"] = "in-process scheduler (no REDIS_URL)"
        ready = all(v == "ok" or v.startswith("in-process") for v in checks.values())
        return JSONResponse({"status": "ok" if ready else "unavailable", "checks": checks},
                            status_code=200 if ready else 503)

    deployment = deployment_collector(ctx)

    @app.get("/metrics", include_in_schema=False)
    def metrics(request: Request) -> Response:
        """Headroom's own health in Prometheus's text format (docs/operations.md); needs HEADROOM_METRICS_TOKEN."""
        token = ctx.settings.metrics_token
        if token is None:
            return _error(404, "not_found", "Not Found")
        if not telemetry.bearer_matches(request.headers.get("authorization"), token.get_secret_value()):
            return _error(401, "not_authenticated", "/metrics needs Authorization: Bearer <HEADROOM_METRICS_TOKEN>.",
                          headers={"WWW-Authenticate": "Bearer"})
        return Response(telemetry.exposition([deployment]), media_type=CONTENT_TYPE_LATEST)

    if frontend_dist is not None and (frontend_dist / "index.html").is_file():
        _mount_frontend(app, frontend_dist)
    return app


def deployment_collector(ctx: AppContext) -> telemetry.DeploymentCollector:
    """What /metrics reads at scrape time: the sources' health (database), the queues and the job runs (Redis, or
    this process's pools and counts without it)."""
    redis_url = ctx.settings.redis_url

    def database() -> Any:
        with ctx.sessions() as db:
            state = ops_health.deployment_state(db)
        return telemetry.state_families(state, ctx.clock())

    def queues() -> Any:
        if redis_url:
            depths, unacked = telemetry.redis_queue_depths(redis_url, QUEUES)
            return telemetry.queue_families(depths, unacked)
        pending = inprocess_pending_by_queue()
        return telemetry.queue_families({q: pending.get(q, 0) for q in QUEUES}, None)

    def jobs() -> Any:
        return telemetry.job_families(telemetry.job_stats(redis_url).read())

    parts = {"database": database, "queues": queues, "jobs": jobs}
    replica = ctx.replica
    if replica is not None:

        def read_replica() -> Any:
            try:
                lag = replica.status().lag_seconds
            except Exception:  # noqa: BLE001 - an unreachable replica is a value (up 0), not a failed scrape
                return telemetry.replica_families(None, up=False)
            return telemetry.replica_families(lag, up=True)

        parts["replica"] = read_replica
    return telemetry.DeploymentCollector(parts)


# The build writes a .br and a .gz beside each text file (frontend/vite.config.ts, precompress); the best one the
# browser accepts is sent as it is (the Compression middleware leaves an answer with a Content-Encoding alone); the
# API's answers are compressed per request (platform/compression.py).
_PRECOMPRESSED = (("br", ".br"), ("gzip", ".gz"))
# Vite names the files under assets/ by a hash of their content: a new build makes new names, so a browser may keep
# them for a year without asking again (RFC 8246 immutable). Everything else (index.html, which names the current
# hashes, and the unhashed icons) is revalidated on each use.
_HASHED_CACHE = "public, max-age=31536000, immutable"
_REVALIDATE_CACHE = "no-cache"


def _static_file(file: Path, accept_encoding: str, cache_control: str) -> FileResponse:
    headers = {"Cache-Control": cache_control}
    variants = [(coding, file.with_name(file.name + suffix)) for coding, suffix in _PRECOMPRESSED]
    variants = [(coding, variant) for coding, variant in variants if variant.is_file()]
    if not variants:
        return FileResponse(file, headers=headers)
    headers["Vary"] = "Accept-Encoding"
    accepted = accepted_encodings(accept_encoding)
    for coding, variant in variants:
        if coding in accepted:
            # The original's type (as FileResponse would guess it), not application/gzip.
            media_type = mimetypes.guess_type(file.name)[0] or "text/plain"
            return FileResponse(variant, media_type=media_type, headers=headers | {"Content-Encoding": coding})
    return FileResponse(file, headers=headers)


# A signed-in browser's first page asks for its session before anything else (the app draws nothing until it has
# it), but only once the entry script has arrived and run. The page served to a browser with a session cookie says
# so in its head, so the browser starts that request beside the scripts; the app's own fetch of it (same URL, CORS
# mode, same-origin credentials: crossorigin="anonymous") takes the preloaded answer. Without the cookie the page
# is the built file as it is (a visitor's request would answer 401).
SESSION_PRELOAD = b'<link rel="preload" href="/api/v1/auth/me" as="fetch" crossorigin="anonymous">'


def _page(index: Path) -> HTMLResponse:
    """The app's page with the session's preload in the head, after the entry script's tags."""
    page = index.read_bytes().replace(b"</head>", SESSION_PRELOAD + b"\n  </head>", 1)
    # The page now depends on the cookie: no cache may give one browser's page to another (Vary).
    return HTMLResponse(page, headers={"Cache-Control": _REVALIDATE_CACHE, "Vary": "Cookie"})


def _mount_frontend(app: FastAPI, dist: Path) -> None:
    root = dist.resolve()
    index = root / "index.html"

    @app.get(SPA_PATH, include_in_schema=False)
    def spa(path: str, request: Request) -> Any:
        if path.startswith("api/"):
            return _error(404, "not_found", "Not Found")
        if path.endswith(".map"):
            # Source maps are not served: they would publish the front end's full source.
            return _error(404, "not_found", "Not Found")
        accept_encoding = request.headers.get("accept-encoding", "")
        candidate = (root / path).resolve()
        # Dot folders (the build's .vite/manifest.json) are for the build tools, not the browser.
        hidden = any(part.startswith(".") for part in Path(path).parts)
        if path and not hidden and candidate.is_file() and candidate.is_relative_to(root):
            hashed = candidate.parent == root / "assets"
            return _static_file(candidate, accept_encoding, _HASHED_CACHE if hashed else _REVALIDATE_CACHE)
        # The route's own chunks are not named here with modulepreload: on 2 cores that made the first chart slower
        # (bench/metrics_first_chart.md, route modulepreload measured back to back: p50 1,221 ms with it, 869 ms
        # without).
        if SESSION_COOKIE in request.cookies:
            return _page(index)
        return _static_file(index, accept_encoding, _REVALIDATE_CACHE)

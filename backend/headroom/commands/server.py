"""`headroom up` / `headroom serve`: run the API and the built front end, embedded defaults when unset."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import typer

from headroom.platform.logging import configure_logging, get_logger, settings_secret_values
from headroom.platform.settings import get_settings

log = get_logger("headroom.server")


def _frontend_dist(explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    for parent in Path(__file__).resolve().parents:
        dist = parent / "frontend" / "dist"
        if (dist / "index.html").is_file():
            return dist
    return None


def serve(
    host: str | None = typer.Option(None, help="Interface to bind (default HEADROOM_HOST, 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port (default HEADROOM_PORT, 8000)."),
    migrate: bool = typer.Option(True, help="Apply database migrations before serving."),
) -> None:
    """Serve Headroom: API, front end and (without REDIS_URL) the in-process job scheduler."""
    import uvicorn

    from headroom.api.app import build_context, create_app
    from headroom.jobs import all_jobs
    from headroom.platform.embedded import start_embedded_postgres
    from headroom.platform.jobs.runtime import start_inprocess_scheduler
    from headroom.platform.migrate import upgrade_to_head

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json, secrets=settings_secret_values(settings))
    jobs = all_jobs()  # installs the job table that queuing a job (dispatch) looks the job up in
    database_url = settings.database_url or start_embedded_postgres(settings.data_dir / "postgres")
    if migrate:
        upgrade_to_head(database_url)
    demo_login = _ensure_demo(database_url, settings) if settings.demo_fleet and settings.environment != "production" else None
    if demo_login is not None:
        typer.echo("Loading the demo fleet's data and running its first analysis…")
        prepare_demo(database_url, settings, dt.datetime.now(dt.UTC))
    ctx = build_context(settings, database_url)
    app = create_app(ctx, frontend_dist=_frontend_dist(settings.frontend_dist))
    if not settings.redis_url:
        start_inprocess_scheduler(jobs, database_url, settings)
    _warm_up_charts()
    bind_host, bind_port = host or settings.host, port or settings.port
    url = f"http://{bind_host}:{bind_port}"
    typer.echo(f"Headroom is running at {url}  (API docs: {url}/api/docs)")
    typer.echo("Sign up at that address to create your organisation; the first user is its owner.")
    if not settings.smtp_host:
        typer.echo("No mail server (HEADROOM_SMTP_HOST): sign-up emails with their links are kept in "
                   f"{(settings.data_dir / 'outbox').resolve()}; open the link to finish signing up.")
    if demo_login is not None:
        typer.echo(f"Demo fleet: log in as {demo_login[0]} with password {demo_login[1]} "
                   f"(kept in {settings.data_dir / 'demo-password.txt'}; HEADROOM_DEMO_FLEET=false turns it off)")
    if not settings.database_url:
        typer.echo(f"Embedded PostgreSQL data: {(settings.data_dir / 'postgres').resolve()}")
    uvicorn.Server(uvicorn_config(app, bind_host, bind_port, settings.log_level)).run()


def _warm_up_charts() -> None:
    """Load the weekly email's chart library in the background, so the first preview does not wait for it."""
    import threading

    from headroom.digest.service import warm_up

    threading.Thread(target=warm_up, name="charts-warm-up", daemon=True).start()


KEEP_ALIVE_SECONDS = 65


def uvicorn_config(app: Any, host: str, port: int, log_level: str = "INFO") -> Any:
    """How uvicorn serves the app. Its own proxy-header handling is off (it would believe X-Forwarded-For from
    any loopback peer): the app trusts exactly HEADROOM_TRUSTED_PROXIES (headroom.api.app.create_app)."""
    import uvicorn

    # log_config=None: uvicorn's error and access loggers go through our root handler (one format, scrubbed of
    # secrets such as a query-string token in an access line) instead of uvicorn's own stderr handlers.
    # timeout_keep_alive: an idle keep-alive connection is kept 65 s (uvicorn's default is 5 s). A load balancer
    # reuses its idle connections to the API for up to its own idle timeout (an AWS Application Load Balancer's
    # default is 60 s, and AWS asks for a longer one in the application: "Connection idle timeout",
    # https://docs.aws.amazon.com/elasticloadbalancing/latest/application/application-load-balancers.html);
    # with 5 s, a request sent as the API closes the connection is reset (a 502 at the balancer). The load
    # test (bench/load_test.py) saw these resets from clients that pause 2-6 s between pages.
    return uvicorn.Config(app, host=host, port=port, log_level=log_level.lower(), proxy_headers=False,
                          log_config=None, timeout_keep_alive=KEEP_ALIVE_SECONDS)


# What the demo needs before its first page: its data, the advice over it, then what the pages read from both.
# Each job is asked for the demo clusters one by one, so it runs here even when Celery workers share the work.
DEMO_START_JOBS = ("demo.ingest", "advice.run", "projections.run", "fleet.score")


def prepare_demo(database_url: str, settings: Any, now: dt.datetime) -> list[str]:
    """Load the demo clusters' data and advise them before the server says it is running, so the first page shows
    findings (the scheduler's first round runs every job at once, advice before the demo's data landed)."""
    from headroom.jobs import job
    from headroom.platform.db import session_scope
    from headroom.platform.jobs.runner import run_job
    from headroom.sources.demo.service import demo_clusters

    with session_scope(database_url) as db:
        ids = [str(c.id) for c in demo_clusters(db)]
    ran: list[str] = []
    for cluster_id in ids:
        for name in DEMO_START_JOBS:
            try:
                run_job(job(name), database_url, settings, now, cluster_id=cluster_id)
                ran.append(name)
            except Exception:  # noqa: BLE001 - the scheduler tries again; the server starts either way
                log.exception("demo.prepare_failed", job=name, cluster_id=cluster_id)
    return ran


def _ensure_demo(database_url: str, settings: object) -> tuple[str, str]:
    from headroom.platform.db import session_scope
    from headroom.sources.demo.service import ensure_demo_account

    with session_scope(database_url) as db:
        email, password, _ = ensure_demo_account(db, get_settings().data_dir / "demo-password.txt")
    return email, password


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("up", help="Alias of `serve`: start Headroom with embedded defaults.")(serve)

"""`headroom migrate` and `headroom openapi`."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from headroom.commands._output import fail
from headroom.platform.settings import get_settings


def migrate() -> None:
    """Apply database migrations (DATABASE_URL, or the embedded database)."""
    from headroom.platform.embedded import start_embedded_postgres
    from headroom.platform.migrate import upgrade_to_head

    settings = get_settings()
    url = settings.database_url or start_embedded_postgres(settings.data_dir / "postgres")
    upgrade_to_head(url)
    typer.echo("database is at the newest migration")


def openapi(out: Path | None = typer.Option(None, help="Write to this file instead of stdout.")) -> None:
    """Print the API's OpenAPI schema (the front end's client is generated from it)."""
    from headroom.api.app import build_context, create_app
    from headroom.platform.settings import Settings

    try:
        # No database is touched: building the schema only needs the routes.
        app = create_app(build_context(Settings(), "postgresql+psycopg://schema-only@localhost/none"))
    except Exception as exc:  # noqa: BLE001
        fail(f"cannot build the app: {exc}")
    text = json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
    app.command("openapi")(openapi)

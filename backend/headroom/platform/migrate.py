"""Run Alembic migrations from code (the `headroom migrate` command and the embedded start)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from headroom.platform.db import normalise_database_url


def _find_alembic_ini() -> Path:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "alembic.ini"
        if candidate.is_file():
            return candidate
    raise RuntimeError("alembic.ini not found: run from a Headroom checkout")


def alembic_config(database_url: str) -> Config:
    cfg = Config(str(_find_alembic_ini()))
    cfg.attributes["url"] = normalise_database_url(database_url)
    cfg.attributes["configure_logger"] = False
    return cfg


def upgrade_to_head(database_url: str) -> None:
    """Bring the database schema to the newest migration."""
    command.upgrade(alembic_config(database_url), "head")

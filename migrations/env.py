"""Alembic environment: the URL comes from `-x url=...`, DATABASE_URL, or the embedded database."""

from __future__ import annotations

import os
import re
from logging.config import fileConfig

from alembic import context
from headroom.models import import_all_models
from headroom.platform.db import normalise_database_url
from headroom.platform.orm import Base
from sqlalchemy import engine_from_config, pool

import_all_models()  # registers every table (headroom.models lists the model modules)

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata

# Partitions of the time-series tables are created and dropped at run time (headroom.timeseries.repository), so
# autogenerate must not see them as drift.
_PARTITION = re.compile(r"^(metric_points|metric_rollups)_p\d+$")


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    return not (type_ == "table" and name is not None and _PARTITION.match(name))


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.attributes.get("url")
    url = url or os.environ.get("DATABASE_URL")
    if not url:
        raise SystemExit("no database URL: set DATABASE_URL or pass -x url=...")
    return normalise_database_url(url)


def run_migrations_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        include_name=include_name,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    section = config.get_section(config.config_ini_section) or {}
    section["sqlalchemy.url"] = _url()
    engine = engine_from_config(section, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with engine.connect() as conn:
        _run(conn)


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        include_name=include_name,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

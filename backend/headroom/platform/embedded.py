"""Embedded PostgreSQL for the one-command start: the `pgserver` package's bundled server, with the
machine's PostgreSQL binaries as a fallback. Data lives under HEADROOM_DATA_DIR and survives restarts."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
from pathlib import Path

from headroom.platform.logging import get_logger

log = get_logger("headroom.embedded")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or reuse) a PostgreSQL cluster in data_dir and return a SQLAlchemy URL for it."""
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        import pgserver

        server = pgserver.get_server(str(data_dir / "pgserver"), cleanup_mode="stop")  # type: ignore[attr-defined]
        uri = server.get_uri()
        log.info("embedded_postgres.started", engine="pgserver", data_dir=str(data_dir / "pgserver"))
        return uri.replace("postgresql://", "postgresql+psycopg://", 1)
    except Exception as exc:  # noqa: BLE001 - any failure falls back to the local binaries
        log.warning("embedded_postgres.pgserver_failed", error=str(exc))
    return _start_local_binaries(data_dir / "pglocal")


def _start_local_binaries(pgdata: Path) -> str:
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    bin_dir = Path(bins[-1]) if bins else None
    initdb = shutil.which("initdb") or (str(bin_dir / "initdb") if bin_dir else None)
    if initdb is None or not Path(initdb).exists():
        raise RuntimeError("no embedded PostgreSQL: install the pgserver package or PostgreSQL, or set DATABASE_URL")
    pg_ctl = str(Path(initdb).with_name("pg_ctl"))
    prefix: list[str] = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if os.geteuid() == 0:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        shutil.chown(pgdata.parent, "postgres", "postgres")
    if not (pgdata / "PG_VERSION").exists():
        subprocess.run([*prefix, initdb, "-D", str(pgdata), "-U", "postgres", "-A", "trust", "-E", "UTF8"],
                       check=True, capture_output=True)
    port = _free_port()
    sock_dir = pgdata / "run"
    sock_dir.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(sock_dir, "postgres", "postgres")
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(pgdata), "-l", str(pgdata / "postgres.log"), "-w", "-o",
         f"-p {port} -k {sock_dir} -c listen_addresses=''", "start"],
        check=True, capture_output=True,
    )
    log.info("embedded_postgres.started", engine="local-binaries", data_dir=str(pgdata))
    return f"postgresql+psycopg://postgres@/postgres?host={sock_dir}&port={port}"

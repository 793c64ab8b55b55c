"""PostgreSQL's own tools for tests that need a server of their own (a streaming replica, a copy to stop): where
the binaries are, running them as the postgres user when the tests run as root, and a standalone copy of the test
database on a free port."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url


def pg_bin() -> Path:
    configured = os.environ.get("HEADROOM_TEST_PG_BIN")
    if configured:
        return Path(configured)
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_basebackup").is_file():
            return candidate
    found = shutil.which("pg_basebackup")
    if found is None:
        pytest.fail("PostgreSQL's binaries are not installed (scripts/services.sh finds them the same way)")
    return Path(found).parent


def as_postgres(args: list[str]) -> list[str]:
    """initdb, pg_basebackup and postgres refuse to run as root: run them as the postgres user (as services.sh)."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgCopy:
    """A PostgreSQL server of its own holding a copy of the test database (schema and rows as they were)."""

    url: str
    data: Path
    options: str

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(as_postgres([str(pg_bin() / "pg_ctl"), "-D", str(self.data), *args]), check=True,
                       capture_output=True, timeout=120)

    def start(self) -> None:
        self._pg_ctl("-l", str(self.data.parent / "postgres.log"), "-w", "-t", "60", "-o", self.options, "start")

    def stop(self) -> None:
        self._pg_ctl("-m", "fast", "-w", "stop")


@contextmanager
def standalone_copy(database_url: str) -> Iterator[PgCopy]:
    """pg_basebackup of the test PostgreSQL started as a primary of its own on a free 127.0.0.1 port (no -R: it
    does not follow the original); stopped and removed at the end."""
    primary = make_url(database_url)
    root = Path(tempfile.mkdtemp(prefix="headroom-pgcopy-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = free_port()
    subprocess.run(
        as_postgres([str(pg_bin() / "pg_basebackup"), "-D", str(data), "-X", "stream", "-c", "fast",
                     "-h", primary.host or "127.0.0.1", "-p", str(primary.port), "-U", primary.username or "postgres"]),
        check=True, capture_output=True, timeout=300,
    )
    copy = PgCopy(url=primary.set(port=port).render_as_string(hide_password=False), data=data,
                  options=f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off")
    copy.start()
    try:
        yield copy
    finally:
        subprocess.run(as_postgres([str(pg_bin() / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, check=False, timeout=120)
        shutil.rmtree(root, ignore_errors=True)

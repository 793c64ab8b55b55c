"""Real Celery workers for the kill-and-resume tests: start one as a process, wait until it answers, stop it;
and a thread that watches a backfill's progress row while it runs (what the API's backfill endpoint shows)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

# Generous: a worker's start imports the whole app, and this machine's 2 cores are shared with other runs.
START_SECONDS = 180


@contextmanager
def client_app(redis_url: str) -> Iterator[Any]:
    """A Celery client of its own on `redis_url` (the shared headroom_worker app may already be bound to another
    test's broker in this session); tasks are sent by name and the workers run the real app."""
    from celery import Celery

    app = Celery("headroom-test-client", broker=redis_url, backend=redis_url)
    app.conf.task_default_queue = "ingest"
    app.control.purge()  # tasks an aborted earlier run left queued would keep the workers busy
    try:
        yield app
    finally:
        app.close()


def start_worker(env: dict[str, str], app: Any, name: str, log: Path) -> subprocess.Popen[bytes]:
    """Start a solo-pool worker on the "ingest" queue (SIGKILL stops its task mid-flight); wait for its ping."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "headroom_worker.celery_app", "worker", "--loglevel=INFO",
         "--pool=solo", "-Q", "ingest", "-n", f"{name}@%h", "--without-gossip", "--without-mingle",
         f"--logfile={log}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if any(name in host for reply in app.control.ping(timeout=1.0) for host in reply):
            return proc
        if proc.poll() is not None:
            raise AssertionError(
                "worker exited at start: " + (log.read_text()[-3000:] if log.exists() else "")
            )
    proc.kill()
    tail = log.read_text()[-3000:] if log.exists() else "(no log)"
    raise AssertionError(f"worker did not answer a ping within {START_SECONDS} s; its log ends:\n{tail}")


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (a warm shutdown), then SIGKILL after 30 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


class ProgressWatch:
    """Polls a backfill row every 50 ms in a thread: `query` selects (state, done, total) for :s = source id."""

    def __init__(self, engine: sa.Engine, query: str, source_id: Any) -> None:
        self.engine, self.query, self.source_id = engine, sa.text(query), source_id
        self.seen: list[tuple[str, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self.engine.connect() as c:
                row = c.execute(self.query, {"s": self.source_id}).first()
            if row is not None:
                self.seen.append((row[0], row[1], row[2]))
            time.sleep(0.05)

    def __enter__(self) -> ProgressWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

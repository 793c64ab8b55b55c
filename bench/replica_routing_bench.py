"""What routing a read to the read replica costs (docs/operations.md "Read replica").

Times, against a real primary, a real streaming replica of it and a real Redis:
- `route`: the per-request check a read does (headroom.platform.replica.ReplicaRouter.read_session: the
  organisation's write position from Redis, a pooled replica connection with its pre-ping, the one status query),
  next to `primary`: what a read on the primary pays for its session (a pooled connection with its pre-ping and a
  `SELECT 1`);
- `mark`: what a write request adds after its commit (the primary's WAL insert position, stored in Redis);
- `request`: GET /api/v1/clusters through the whole app (authentication on the primary included), with the replica
  and without it.

    uv run python bench/replica_routing_bench.py --primary-url URL --replica-url URL --redis-url URL [-n 2000]

bench/run.sh replica makes the replica with pg_basebackup and runs it. Results: bench/results/replica_routing.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from headroom.platform.db import session_factory
from headroom.platform.replica import RedisWriteMarks, ReplicaRouter
from headroom.platform.telemetry import PROCESS_REGISTRY
from sqlalchemy import text

RESULTS = Path(__file__).resolve().parent / "results" / "replica_routing.json"


def _interleaved(fns: dict[str, Callable[[], Any]], n: int) -> dict[str, dict[str, float]]:
    """Time each function n times, taking turns, so that the machine's load drifts over all of them alike."""
    for fn in fns.values():  # warm the pools
        for _ in range(min(50, n)):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(n):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - started) * 1e6)
    out = {}
    for name, values in samples.items():
        values.sort()
        out[name] = {
            "n": n,
            "p50_us": round(statistics.median(values), 1),
            "p95_us": round(values[int(0.95 * (n - 1))], 1),
            "p99_us": round(values[int(0.99 * (n - 1))], 1),
        }
    return out


def _app_reader(
    args: argparse.Namespace, replica_url: str | None, cleanup: list[Callable[[], None]]
) -> Callable[[], Any]:
    """GET /api/v1/clusters as a new organisation's owner, through an app built as `headroom serve` builds it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend" / "tests"))
    from fastapi.testclient import TestClient
    from headroom.api.app import build_context, create_app
    from headroom.platform.ratelimit import MemoryRateLimiter
    from headroom.platform.settings import Settings
    from helpers import sign_up

    values = {
        "HEADROOM_ENV": "test",
        "HEADROOM_SECRET_KEY": "bench-secret-" + "x" * 32,
        "REDIS_URL": args.redis_url,
        "HEADROOM_DATA_DIR": tempfile.mkdtemp(prefix="replica-bench-"),
    }
    if replica_url:
        values["DATABASE_REPLICA_URL"] = replica_url
    ctx = build_context(Settings(**values), args.primary_url)
    ctx.rate_limiter = MemoryRateLimiter()
    client = TestClient(create_app(ctx))
    email = f"bench-{uuid.uuid4().hex[:8]}@example.com"
    owner = sign_up(client, email=email)

    def remove() -> None:
        with session_factory(args.primary_url)() as db:
            db.execute(text("DELETE FROM organizations WHERE id = :o"), {"o": owner.org_id})
            db.execute(text("DELETE FROM users WHERE email = :e"), {"e": email})
            db.commit()

    cleanup.append(remove)
    return lambda: owner.get("/api/v1/clusters").raise_for_status()


def _replica_reads() -> float:
    labels = {"target": "replica", "reason": "replica"}
    return PROCESS_REGISTRY.get_sample_value("headroom_db_reads_total", labels) or 0.0


def _replayed(primary_url: str, router: ReplicaRouter) -> None:
    """Wait until the replica has replayed the sign-ups (and so the organisations' write marks): a transaction
    with an id commits after the insert position is read, as the insert position can lie past the last record."""
    with session_factory(primary_url)() as db:
        target = int(db.execute(text("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")).scalar_one())
        db.execute(text("SELECT pg_current_xact_id()"))
        db.commit()
    deadline = time.monotonic() + 60
    while (router.status().replay_lsn or 0) < target:
        assert time.monotonic() < deadline, "the replica did not catch up"
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--primary-url", required=True)
    parser.add_argument("--replica-url", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("-n", type=int, default=2000)
    args = parser.parse_args()

    marks = RedisWriteMarks(args.redis_url)
    router = ReplicaRouter(args.replica_url, marks, max_lag_seconds=5.0)
    org, writer = str(uuid.uuid4()), str(uuid.uuid4())  # the marks the bench writes must not hold `org` back
    primary_sessions = session_factory(args.primary_url)

    def route() -> None:
        session, reason = router.read_session(org)
        assert session is not None, reason
        session.close()

    def primary() -> None:
        with primary_sessions() as db:
            db.execute(text("SELECT 1"))

    def mark() -> None:
        with primary_sessions() as db:
            router.note_write(writer, db)

    results = _interleaved({"route": route, "primary": primary, "mark": mark}, args.n)
    cleanup: list[Callable[[], None]] = []
    try:
        readers = {
            "request_with_replica": _app_reader(args, args.replica_url, cleanup),
            "request_primary_only": _app_reader(args, None, cleanup),
        }
        _replayed(args.primary_url, router)
        on_replica = _replica_reads()
        results |= _interleaved(readers, max(args.n // 4, 50))
        routed = _replica_reads() - on_replica
        assert routed >= max(args.n // 4, 50), f"only {routed} reads ran on the replica"
    finally:
        for remove in cleanup:
            remove()
    results["note"] = (
        "latency in microseconds; 2-core container, see bench/README.md for the load at the time"
    )
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    router.dispose()


if __name__ == "__main__":
    main()

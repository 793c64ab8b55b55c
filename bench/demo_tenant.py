"""What the per-cluster benches share: one demo tenant seeded as the product seeds it, and a meter of a step's CPU
(this process and the connection's PostgreSQL backend) and WAL. Used by ingest_cost_bench.py,
round_cost_bench.py and load/worker.py, which run as scripts from this folder."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from typing import Any

import psutil
from sqlalchemy import text
from sqlalchemy.orm import Session


class Meter:
    """CPU of this process, CPU of the connection's PostgreSQL backend, WAL position: deltas around a step."""

    def __init__(self, db: Session) -> None:
        self.db = db
        self.backend = psutil.Process(int(db.execute(text("SELECT pg_backend_pid()")).scalar_one()))

    def wal(self) -> int:
        return int(self.db.execute(text("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')")).scalar_one())

    def backend_cpu(self) -> float:
        t = self.backend.cpu_times()
        return float(t.user + t.system)

    def start(self) -> tuple[float, float, float, int]:
        return time.process_time(), time.perf_counter(), self.backend_cpu(), self.wal()

    def stop(self, began: tuple[float, float, float, int]) -> dict[str, float]:
        cpu, wall, pg, wal = began
        return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
                "postgres_cpu_s": self.backend_cpu() - pg, "wal_bytes": self.wal() - wal}


def seed_demo_tenant(db: Session, cluster_name: str, around: dt.datetime) -> Any:
    """A new organisation with the demo cluster (returned) and its demo AWS source, and the points partitions
    from 16 days before `around` to 2 days after it; committed. Its first ingest (the 7-day backfill) is the
    caller's to run and time."""
    from headroom.accounts.models import Organization
    from headroom.platform.security import new_external_id
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts

    org = Organization(name="bench", slug=f"bench-{uuid.uuid4().hex[:6]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    cluster = demo.seed_demo_cluster(db, org.id, name=cluster_name)
    demo.seed_demo_source(db, org.id)
    ts.ensure_partitions(db, around - dt.timedelta(days=16), around + dt.timedelta(days=2))
    db.commit()
    return cluster


def wrap_simulate(demo: Any) -> Callable[[], float]:
    """Time every simulate() the demo service calls; return a reader of the CPU seconds spent in it so far."""
    real = demo.simulate
    spent = [0.0]

    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - t

    demo.simulate = timed
    return lambda: spent[0]

"""What one demo cluster costs per minute, split: the simulator, the ingest pipeline, the rollups.

`demo.ingest` simulates a demo cluster's newest minutes (plus the 10-minute overlap a collector rewrites) and
writes them through the store, as collected data is written; `timeseries.rollups` then recomputes the rollups
those writes changed. The load test measures the two jobs whole. This bench takes one cluster apart:

1. Seeds one organisation with the demo cluster and its demo AWS source, and runs its first `ingest_demo` (the
   7-day backfill and the hourly history), then drains the rollups; both timed.
2. Replays `--minutes` live minutes: minute m runs `ingest_demo(now = start + m min)` in one transaction and
   commits, then drains the rollup queue in another with the same clock, as the two jobs do each minute. The
   drain computes an hour once it has settled (a quarter of an hour after its end), so the rollups' cost comes
   once an hour: replay at least 60 minutes (the default) so that each run counts it exactly once and the means
   are that hour's cost spread over its minutes.

Per minute it records:
- CPU seconds of this process (the worker's share), split into the simulator (every call of `simulate` made by
  the demo service, timed by wrapping it) and the pipeline (the rest: inventory upsert, series lookup, the
  store's write, watermarks, the demo source's sweep record);
- CPU seconds of the PostgreSQL backend serving the bench's one connection (psutil);
- rows written: inserts and updates this transaction made in the points partitions, the merge's staging table
  and the rollup queue (pg_stat_xact_all_tables, read at the transaction's start and before its commit), and
  the settled queue marks it left;
- WAL bytes: pg_current_wal_insert_lsn() before and after the transaction, with the commit;
- the same CPU and WAL figures for the minute's rollup drain.

Run it against a disposable database migrated to the code under test (nothing else may write to that
PostgreSQL while it runs, or the WAL figures include that):

    HEADROOM_BENCH_DATABASE_URL=... uv run python bench/ingest_cost_bench.py --label after

Several labels (e.g. the same script run with the previous commit's package first on PYTHONPATH, against a
database migrated by that commit) accumulate in one results file, bench/results/ingest_cost.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from demo_tenant import Meter, seed_demo_tenant, wrap_simulate

REPO = Path(__file__).resolve().parent.parent


WRITTEN = text(
    "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del) FILTER (WHERE relname LIKE 'metric_points_p%'), 0), "
    "coalesce(sum(n_tup_ins) FILTER (WHERE relname = '_points_stage'), 0), "
    "coalesce(sum(n_tup_ins + n_tup_upd) FILTER (WHERE relname = 'metric_rollup_dirty'), 0) "
    "FROM pg_stat_xact_all_tables"
)


def with_clock(fn: Callable[..., Any], now: dt.datetime) -> dict[str, Any]:
    """`now=` for a store function that takes the clock (the drain of settled hours); none for older code, whose
    drain takes every queued hour, so one script measures both."""
    return {"now": now} if "now" in inspect.signature(fn).parameters else {}


def drain(db: Session, ts: Any, now: dt.datetime) -> int:
    marks = 0
    while True:
        done = ts.drain_rollups(db, **with_clock(ts.drain_rollups, now))
        db.commit()
        if not done:
            return marks
        marks += done


def summary(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = rows[0].keys()
    return {f"{k}_mean": round(statistics.fmean(r[k] for r in rows), 4) for k in keys} | {
        f"{k}_median": round(statistics.median(r[k] for r in rows), 4) for k in keys}


def run(url: str, minutes: int, start: dt.datetime | None = None) -> dict[str, Any]:
    from headroom.jobs import all_jobs
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts

    all_jobs()
    simulator_cpu = wrap_simulate(demo)
    engine = create_engine(url, pool_size=1, max_overflow=0)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    now = (start or dt.datetime.now(dt.UTC)).replace(second=0, microsecond=0)
    out: dict[str, Any] = {"simulated_start": now.isoformat()}
    with sessions() as db:
        meter = Meter(db)
        cluster = seed_demo_tenant(db, "ingest-cost", now)

        began, sim0 = meter.start(), simulator_cpu()
        backfill = demo.ingest_demo(db, cluster, now=now)
        db.commit()
        out["backfill"] = meter.stop(began) | {"simulator_cpu_s": simulator_cpu() - sim0,
                                               "points": backfill["points"]}
        began = meter.start()
        marks = drain(db, ts, now)
        out["backfill_rollups"] = meter.stop(began) | {"marks": marks}

        per_minute: list[dict[str, float]] = []
        for m in range(1, minutes + 1):
            began, sim0 = meter.start(), simulator_cpu()
            minute = now + dt.timedelta(minutes=m)
            # The counts are read at the transaction's start too: PostgreSQL flushes a backend's table counts at
            # most once a second, so those of the previous transactions (a drain a few ms ago) may still be in
            # pg_stat_xact_all_tables.
            written_before = db.execute(WRITTEN).one()
            result = demo.ingest_demo(db, cluster, now=minute)
            points_rows, staged, queue_rows = (int(n) - int(b) for n, b in zip(db.execute(WRITTEN).one(),
                                                                              written_before, strict=True))
            db.commit()
            ingest = meter.stop(began)
            queued = ts.rollups_pending(db, **with_clock(ts.rollups_pending, minute))
            db.commit()
            began = meter.start()
            rolled = drain(db, ts, minute)
            rollups = meter.stop(began)
            sim = simulator_cpu() - sim0
            per_minute.append({
                "points_offered": result["points"],
                "points_rows_written": points_rows, "staging_rows": staged, "queue_rows_written": queue_rows,
                "marks_queued": queued, "marks_rolled": rolled, "minute_of_hour": minute.minute,
                "ingest_cpu_s": ingest["cpu_s"], "simulator_cpu_s": sim, "pipeline_cpu_s": ingest["cpu_s"] - sim,
                "ingest_wall_s": ingest["wall_s"], "ingest_postgres_cpu_s": ingest["postgres_cpu_s"],
                "ingest_wal_bytes": ingest["wal_bytes"],
                "rollups_cpu_s": rollups["cpu_s"], "rollups_wall_s": rollups["wall_s"],
                "rollups_postgres_cpu_s": rollups["postgres_cpu_s"], "rollups_wal_bytes": rollups["wal_bytes"],
            })
        # Outside the measurement: roll the hours still open, so a later run in this database starts with an
        # empty queue instead of rolling this run's last hours in its own minutes.
        drain(db, ts, now + dt.timedelta(minutes=minutes) + dt.timedelta(days=1))
    engine.dispose()
    out["minutes"] = per_minute
    out["per_minute"] = summary(per_minute)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--label", default="current")
    parser.add_argument("--start", type=dt.datetime.fromisoformat,
                        help="the simulated clock's first minute, ISO 8601 with a zone (default: now); the time of "
                             "day sets how much of the day's rollup rows exists when the replay's hours roll")
    parser.add_argument("--code", help="the commit whose package runs (default: this checkout's HEAD)")
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/ingest_cost.json")
    args = parser.parse_args()
    url = os.environ.get("HEADROOM_BENCH_DATABASE_URL") or os.environ.get("HEADROOM_TEST_DATABASE_URL")
    if not url:
        sys.exit("set HEADROOM_BENCH_DATABASE_URL (a migrated, disposable database)")
    commit = args.code or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                         text=True).stdout.strip()
    load_before = os.getloadavg()
    result = run(url, args.minutes, args.start)
    recorded = json.loads(args.out.read_text()) if args.out.is_file() else {}
    recorded.setdefault("runs", {})[args.label] = {
        "code": commit, "minutes_replayed": args.minutes,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cores": psutil.cpu_count(), "load_average_1m_before": round(load_before[0], 2),
                    "load_average_1m_after": round(os.getloadavg()[0], 2)},
        **result,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(recorded, indent=1) + "\n")
    print(json.dumps({"label": args.label, "backfill": result["backfill"],
                      "backfill_rollups": result["backfill_rollups"], "per_minute": result["per_minute"]}, indent=1))


if __name__ == "__main__":
    main()

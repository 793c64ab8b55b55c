"""What one demo cluster's 15-minute round costs: the advice run and the fleet score, split by phase.

`advice.run` (every 15 minutes) builds the cluster's snapshot of the last 24 hours from the store, runs the
advisor and records its findings; `fleet.score` (5 minutes later) stores the burst forecasts of that advice
round, the headroom score (the overview of the last 24 hours) and the overview's 7-day peaks. The load test
measures them whole; this bench takes one cluster's round apart:

1. Seeds one organisation with the demo cluster and its demo AWS source, runs its first `ingest_demo` (the
   7-day backfill and the hourly history) and drains the rollups (not measured).
2. Replays `--rounds` rounds 15 minutes apart from `--start` (a quarter hour): the demo ingest brings the
   cluster up to the round's minute and the rollups are drained (not measured), then `advise_cluster` runs in one
   transaction and commits; the ingest brings the cluster 5 minutes further, then `score_cluster` runs in one
   transaction and commits, as the two jobs do.

Per job it records the CPU seconds of this process (the worker's share), of the PostgreSQL backend serving the
bench's one connection (psutil) and the WAL bytes written (pg_current_wal_insert_lsn() around the transaction);
and the worker's CPU by phase: process time spent inside each of a list of functions (PHASES), nested phases
named by their path ("advice/snapshot/read"), so a parent includes its children. A function the code under test
does not have is skipped, so one script measures an older commit too.

The first round opens every finding (inserts); the rounds after it are the steady state the means are taken over.

    HEADROOM_BENCH_DATABASE_URL=... uv run python bench/round_cost_bench.py --label after

Several labels (e.g. the same script run with the previous commit's package first on PYTHONPATH) accumulate in
bench/results/round_cost.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.orm import Session, sessionmaker

from demo_tenant import Meter, seed_demo_tenant

REPO = Path(__file__).resolve().parent.parent

# (phase name, module, attribute): process time inside each, by the path of phases it runs in. Patched on the
# module that defines it and on every loaded headroom module that imported the same function by name.
PHASES: list[tuple[str, str, str]] = [
    ("advice", "headroom.findings.service", "advise_cluster"),
    ("snapshot", "headroom.timeseries.snapshots", "build_snapshot"),
    ("read", "headroom.timeseries.snapshots", "_series"),
    ("read_grid", "headroom.timeseries.repository", "read_grid"),
    ("projections", "headroom.projections.service", "with_projections"),
    ("lookback", "headroom.timeseries.snapshots", "with_lookback"),
    ("advisor", "headroom.domain.advisor.engine", "run_rules"),
    ("context", "headroom.domain.advisor.engine", "Context"),
    ("consolidate", "headroom.domain.advisor.engine", "consolidate_config"),
    ("conflicts", "headroom.domain.advisor.engine", "resolve_conflicts"),
    ("groups", "headroom.domain.advisor.engine", "group_findings"),
    ("record", "headroom.findings.service", "record_findings"),
    ("advised", "headroom.clusters.service", "record_advised"),
    ("alerts", "headroom.alerts.service", "queue_finding_events"),
    ("alerts_forecasts", "headroom.alerts.service", "queue_forecast_events"),
    ("fleet", "headroom.fleet.service", "score_cluster"),
    ("burst_store", "headroom.metrics.service", "store_burst_forecasts"),
    ("burst_context", "headroom.metrics.service", "forecast_context"),
    ("burst_forecasts", "headroom.metrics.service", "node_forecasts"),
    ("score", "headroom.fleet.service", "_score"),
    ("overview_cells", "headroom.metrics.service", "_overview_cells"),
    ("read_columns", "headroom.timeseries.repository", "read_columns"),
    ("ceilings", "headroom.metrics.service", "node_ceilings_many"),
    ("burst_read", "headroom.metrics.service", "cluster_burst_forecasts"),
    ("week_peaks", "headroom.metrics.service", "store_week_peaks"),
]


class Phases:
    """Process time spent inside the PHASES functions, keyed by the path of phases active when each ran."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.stack: list[str] = []

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.stack.append(name)
            path = "/".join(self.stack)
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[path] += time.process_time() - t
                self.calls[path] += 1
                self.stack.pop()

        return timed

    def install(self) -> list[str]:
        """Wrap every phase the code under test has; return the names of those it lacks."""
        missing = []
        for name, module, attr in PHASES:
            mod = importlib.import_module(module)
            fn = getattr(mod, attr, None)
            if fn is None:
                missing.append(name)
                continue
            timed = self.wrap(name, fn)
            if isinstance(fn, type):  # a class: only where the phase names it (isinstance checks elsewhere)
                setattr(mod, attr, timed)
                continue
            for loaded in list(sys.modules.values()):
                if getattr(loaded, "__name__", "").startswith("headroom") and getattr(loaded, attr, None) is fn:
                    setattr(loaded, attr, timed)
        return missing

    @contextmanager
    def taken(self) -> Iterator[dict[str, float]]:
        """Yield a dict filled, when the block ends, with the phases' seconds spent inside it."""
        before = dict(self.spent)
        out: dict[str, float] = {}
        yield out
        out.update({k: round(v - before.get(k, 0.0), 5) for k, v in self.spent.items() if v - before.get(k, 0.0) > 0})


def drain(db: Session, ts: Any, now: dt.datetime) -> None:
    while ts.drain_rollups(db, now=now):
        db.commit()
    db.commit()


def summary(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = sorted({k for r in rows for k in r})
    return {k: round(statistics.fmean(r.get(k, 0.0) for r in rows), 5) for k in keys}


def run(url: str, rounds: int, start: dt.datetime, profile: str | None = None) -> dict[str, Any]:
    import headroom.findings.service
    import headroom.fleet.service
    import headroom.metrics.service  # noqa: F401 - loaded so that Phases.install patches its imports too
    from headroom.clusters.models import Cluster
    from headroom.jobs import all_jobs
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts

    all_jobs()
    phases = Phases()
    missing = phases.install()
    engine = create_engine(url, pool_size=1, max_overflow=0)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    out: dict[str, Any] = {"simulated_start": start.isoformat(), "phases_missing": missing}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
    with sessions() as db:
        meter = Meter(db)
        cluster = seed_demo_tenant(db, "round-cost", start)
        cluster_id = cluster.id
        began = time.perf_counter()
        demo.ingest_demo(db, cluster, now=start)
        db.commit()
        drain(db, ts, start)
        out["seed_wall_s"] = round(time.perf_counter() - began, 1)

        per_round: list[dict[str, Any]] = []
        for r in range(rounds):
            at = start + dt.timedelta(minutes=15 * r)
            row: dict[str, Any] = {"round": r, "at": at.isoformat()}
            for job, when in (("advice", at), ("fleet", at + dt.timedelta(minutes=5))):
                cluster = db.get_one(Cluster, cluster_id)
                if when > start:
                    demo.ingest_demo(db, cluster, now=when)
                    db.commit()
                    drain(db, ts, when)
                cluster = db.get_one(Cluster, cluster_id)
                with phases.taken() as spent:
                    began_job = meter.start()
                    if profiler is not None and profile == job and r > 0:
                        profiler.enable()
                    if job == "advice":
                        summary_ = headroom.findings.service.advise_cluster(db, cluster, now=when)
                        row["findings"] = summary_.produced
                    else:
                        row["score"] = headroom.fleet.service.score_cluster(db, cluster, when)
                    db.commit()
                    if profiler is not None:
                        profiler.disable()
                    row[job] = meter.stop(began_job)
                row[f"{job}_phases"] = spent
            per_round.append(row)
            print(f"round {r}: advice {row['advice']['cpu_s']:.3f} s (pg {row['advice']['postgres_cpu_s']:.3f}), "
                  f"fleet {row['fleet']['cpu_s']:.3f} s (pg {row['fleet']['postgres_cpu_s']:.3f}), "
                  f"{row['findings']} findings, score {row['score']}", file=sys.stderr)
    engine.dispose()
    if profiler is not None:
        profiler.dump_stats(f"/tmp/round_cost_{profile}.prof")
    steady = per_round[1:] or per_round
    out["rounds"] = per_round
    out["steady"] = {
        job: summary([r[job] for r in steady]) for job in ("advice", "fleet")
    } | {f"{job}_phases": summary([r[f"{job}_phases"] for r in steady]) for job in ("advice", "fleet")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--start", help="the first round's minute, UTC (default: the last quarter hour)")
    parser.add_argument("--label", default="current")
    parser.add_argument("--profile", choices=["advice", "fleet"], help="cProfile that job (rounds after the first)")
    parser.add_argument("--commit", default="", help="the commit of a package outside a git work tree")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "round_cost.json"))
    args = parser.parse_args()
    url = os.environ.get("HEADROOM_BENCH_DATABASE_URL")
    if not url:
        sys.exit("set HEADROOM_BENCH_DATABASE_URL to a disposable database migrated to the code under test")
    if args.start:
        start = dt.datetime.fromisoformat(args.start).astimezone(dt.UTC)
    else:
        now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
        start = now - dt.timedelta(minutes=now.minute % 15)
    load_before = os.getloadavg()
    result = run(url, args.rounds, start, args.profile)
    load_after = os.getloadavg()
    import headroom

    commit = subprocess.run(["git", "-C", str(Path(headroom.__file__).parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or args.commit
    entry = {"label": args.label, "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
             "package": str(Path(headroom.__file__).parent), "commit": commit,
             "load_average_before": [round(x, 2) for x in load_before],
             "load_average_after": [round(x, 2) for x in load_after], **result}
    path = Path(args.out)
    runs = json.loads(path.read_text())["runs"] if path.exists() else []
    runs = [r for r in runs if r["label"] != args.label] + [entry]
    path.write_text(json.dumps({"bench": "round_cost", "runs": runs}, indent=1) + "\n")
    print(json.dumps({"label": args.label, "load": entry["load_average_before"], **result["steady"]}, indent=1))


if __name__ == "__main__":
    main()

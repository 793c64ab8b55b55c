"""Advisor throughput: the advisor over many simulated 6-node, 7-day clusters, snapshot JSON load time
and building a snapshot from the store.

Parts (default: advisor and load; `store` needs a migrated database in HEADROOM_BENCH_DATABASE_URL, which
`bench/run.sh advisor` provides):

    uv run python bench/advisor_bench.py advisor --clusters 1000 --procs 2
    uv run python bench/advisor_bench.py load
    HEADROOM_BENCH_DATABASE_URL=... uv run python bench/advisor_bench.py store

advisor: each of `--procs` worker processes simulates `--variants` clusters of the demo fleet
(examples/scenarios/demo.yaml: 6 TiKV nodes) over 7 days at 1-minute steps (seeds differ), runs the advisor
once to warm up, then, once every worker is ready, runs the whole advisor (`run_rules`: every rule, conflict
resolution; a fresh analysis context each time, nothing carried over between runs) on its share of
`--clusters`, cycling through its snapshots. Wall time is from the common start to the last worker's end;
clusters per core-second = clusters / (wall time x procs). Simulating and holding 1,000 distinct 7-day snapshots
would take ~100 GB of memory, hence the cycling; the runs share nothing but the immutable snapshot objects.

load: the demo fleet's 7-day snapshot written as JSON (`headroom snapshot` format), then read back with
`headroom.domain.snapshot.files.load_snapshot` (median of 3).

store: the same cluster ingested into the store (services.demo), then `services.snapshots.build_snapshot` over
the 7 days (median of 3).

Results: printed as Markdown and merged into bench/results/advisor.json under `--label`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "advisor.json"
DEMO = REPO / "examples" / "scenarios" / "demo.yaml"
END = dt.datetime(2026, 1, 12, tzinfo=dt.UTC)
HOURS = 168.0


def demo_snapshot(seed: int) -> Any:
    from headroom.domain.snapshot.scenario import load_scenario
    from headroom.domain.snapshot.simulate import simulate

    scenario = load_scenario(DEMO)
    return simulate(scenario, hours=HOURS, seed=seed, start=END - dt.timedelta(hours=HOURS))


def _worker(index: int, share: int, variants: int, barrier: Any, out: Any) -> None:
    from headroom.domain.advisor.engine import run_rules

    snapshots = [demo_snapshot(seed=index * variants + k) for k in range(variants)]
    expected = [len(run_rules(s).findings) for s in snapshots]  # warm-up: imports, catalog, first-call caches
    barrier.wait()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    per_run: list[float] = []
    for i in range(share):
        t = time.perf_counter()
        advice = run_rules(snapshots[i % variants])
        per_run.append(time.perf_counter() - t)
        if len(advice.findings) != expected[i % variants]:
            raise SystemExit(
                f"worker {index}: run {i} found {len(advice.findings)} findings, expected {expected}"
            )
    out.put(
        {
            "worker": index,
            "runs": share,
            "end": time.time(),
            "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - cpu0,
            "median_run_s": statistics.median(per_run) if per_run else None,
            "findings_per_snapshot": expected,
        }
    )


def bench_advisor(clusters: int, procs: int, variants: int) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(procs + 1)
    out = ctx.Queue()
    shares = [clusters // procs + (1 if i < clusters % procs else 0) for i in range(procs)]
    workers = [ctx.Process(target=_worker, args=(i, shares[i], variants, barrier, out)) for i in range(procs)]
    setup0 = time.perf_counter()
    for w in workers:
        w.start()
    barrier.wait()
    start = time.time()
    setup = time.perf_counter() - setup0
    results = [out.get() for _ in workers]
    for w in workers:
        w.join()
        if w.exitcode:
            raise SystemExit(f"a worker failed (exit {w.exitcode})")
    wall = max(r["end"] for r in results) - start
    return {
        "clusters": clusters,
        "processes": procs,
        "distinct_snapshots": procs * variants,
        "wall_seconds": round(wall, 2),
        "clusters_per_core_second": round(clusters / (wall * procs), 3),
        "cpu_seconds": round(sum(r["cpu_seconds"] for r in results), 2),
        # The same throughput counted on the CPU time the workers actually got (a shared machine lends less
        # than 2 cores; this figure is what a quiet 2-core machine would reach).
        "clusters_per_cpu_second": round(clusters / sum(r["cpu_seconds"] for r in results), 3),
        "median_run_seconds": round(statistics.median(r["median_run_s"] for r in results), 3),
        "setup_seconds": round(setup, 1),
        "findings_per_snapshot": [
            f for r in sorted(results, key=lambda r: r["worker"]) for f in r["findings_per_snapshot"]
        ],
        "load_average_1min_after": round(os.getloadavg()[0], 1),
    }


def bench_load(repeats: int = 3) -> dict[str, Any]:
    from headroom.domain.snapshot.files import load_snapshot, save_snapshot

    snap = demo_snapshot(seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = save_snapshot(snap, Path(tmp) / "demo-7d.json")
        size = path.stat().st_size
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            loaded = load_snapshot(path)
            times.append(time.perf_counter() - t)
        assert len(loaded.series) == len(snap.series)
    return {
        "json_mb": round(size / 1e6, 1),
        "series": len(snap.series),
        "load_seconds": round(statistics.median(times), 2),
        "load_seconds_all": [round(t, 2) for t in times],
    }


def bench_store(url: str, repeats: int = 3) -> dict[str, Any]:
    import uuid

    from headroom.accounts.models import Organization
    from headroom.domain.snapshot.scenario import load_scenario
    from headroom.models import import_all_models
    from headroom.platform.security import new_external_id
    from headroom.sources.demo.service import ingest_window, seed_demo_cluster
    from headroom.timeseries.snapshots import build_snapshot
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    import_all_models()  # the demo ingest touches tables of several features
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine)
    start = END - dt.timedelta(hours=HOURS)
    with sessions() as db:
        org = Organization(
            name="bench", slug=f"bench-{uuid.uuid4().hex[:6]}", aws_external_id=new_external_id()
        )
        db.add(org)
        db.flush()
        cluster = seed_demo_cluster(db, org.id, name="advisor-bench")
        t = time.perf_counter()
        ingest_window(db, cluster, load_scenario(DEMO), start, END)
        db.commit()
        ingest = time.perf_counter() - t
        org_id, cluster_id = org.id, cluster.id
    times = []
    for _ in range(repeats):
        with sessions() as db:
            t = time.perf_counter()
            snap = build_snapshot(db, org_id, cluster_id, start=start, end=END)
            times.append(time.perf_counter() - t)
    return {
        "series": len(snap.series),
        "ingest_seconds": round(ingest, 1),
        "build_seconds": round(statistics.median(times), 2),
        "build_seconds_all": [round(t, 2) for t in times],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("parts", nargs="*", default=["advisor", "load"], choices=["advisor", "load", "store"])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--variants", type=int, default=3, help="distinct snapshots per process")
    parser.add_argument("--label", default="current")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "recorded": dt.datetime.now(dt.UTC).isoformat(timespec="minutes"),
        "cpus": os.cpu_count(),
        "load_average_1min_before": round(os.getloadavg()[0], 1),
    }
    if "advisor" in args.parts:
        result["advisor"] = bench_advisor(args.clusters, args.procs, args.variants)
        a = result["advisor"]
        print(
            f"| advisor: {a['clusters']} clusters (6 nodes x 7 days), {a['processes']} processes | "
            f"{a['wall_seconds']} s wall | {a['clusters_per_core_second']} clusters/core-s | "
            f"{a['clusters_per_cpu_second']} clusters/CPU-s | median run {a['median_run_seconds']} s |",
            flush=True,
        )
    if "load" in args.parts:
        result["load"] = bench_load()
        print(
            f"| snapshot JSON load ({result['load']['json_mb']} MB) | {result['load']['load_seconds']} s |",
            flush=True,
        )
    if "store" in args.parts:
        url = os.environ.get("HEADROOM_BENCH_DATABASE_URL")
        if not url:
            sys.exit("store: set HEADROOM_BENCH_DATABASE_URL (bench/run.sh advisor does)")
        result["store"] = bench_store(url)
        print(
            f"| build snapshot from the store ({result['store']['series']} series) | "
            f"{result['store']['build_seconds']} s |",
            flush=True,
        )
    recorded = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    recorded.setdefault(args.label, {}).update(result)
    RESULTS.write_text(json.dumps(recorded, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

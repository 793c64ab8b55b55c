"""Time-series store benchmarks: ingest vs bare COPY, bytes per point, dashboard reads vs Prometheus.

Data: 100 nodes x 6 series x DAYS days at 1-minute resolution (600 series; 30 days = 25.9 M points), a
deterministic random walk with a daily cycle. Runs against the PostgreSQL in HEADROOM_BENCH_DATABASE_URL (or the
test services: `bench/run.sh` starts them) and, with --prometheus, a real Prometheus backfilled with promtool
from the same values.

    uv run python bench/timeseries_bench.py --days 30 --prometheus
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from headroom.accounts.models import Organization
from headroom.platform.security import new_external_id
from headroom.timeseries import repository as ts
from headroom.timeseries import codec
from headroom.timeseries.copy_binary import encode_packed_rows
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

NODES, METRICS = 100, ("read_iops", "write_iops", "read_mibps", "write_mibps", "queue_length", "burst_balance")
END = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
SETTLED = END + ts.SETTLED_ALL  # the drain's clock: every hour written has settled


def generate(days: int, seed: int = 7) -> np.ndarray:
    """Return a (600, days*1440) array of realistic-looking metric values."""
    rng = np.random.default_rng(seed)
    n = days * 1440
    minutes = np.arange(n)
    daily = 1 + 0.3 * np.sin(2 * np.pi * minutes / 1440)
    base = rng.uniform(50, 3000, size=(NODES * len(METRICS), 1))
    walk = np.cumsum(rng.normal(0, 0.002, size=(NODES * len(METRICS), n)), axis=1)
    return np.round(base * daily * np.exp(walk), 3)


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def percentiles(samples: list[float]) -> tuple[float, float]:
    qs = statistics.quantiles(samples, n=100, method="inclusive")
    return qs[49] * 1000, qs[94] * 1000


def reset_points(db: Session) -> None:
    db.execute(text("TRUNCATE metric_points, metric_rollups, metric_rollup_dirty"))
    db.commit()


def bench_postgres(url: str, data: np.ndarray, days: int, results: dict[str, Any], pairs: int = 3
                   ) -> tuple[uuid.UUID, list[int]]:
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine)
    start = END - dt.timedelta(days=days)
    with sessions() as db:
        org = Organization(name="bench", slug=f"bench-{uuid.uuid4().hex[:6]}", aws_external_id=new_external_id())
        db.add(org)
        db.flush()
        keys = [ts.SeriesKey("tikv_node", f"node-{n:03d}", f"bench.{m}", "count")
                for n in range(NODES) for m in METRICS]
        ids = ts.ensure_series(db, org.id, keys)
        series_ids = [ids[k] for k in keys]
        ts.ensure_partitions(db, start, END)
        db.commit()
        org_id = org.id
    points = int(data.size)
    batches = [ts.SeriesBatch(sid, start, 60, data[i]) for i, sid in enumerate(series_ids)]
    chunk = 50  # series per transaction, as a collector commits per sweep

    # 1. Production path: collector output (whole series) -> write_batches, committed per chunk.
    with sessions() as db:  # warm up (imports, plans) outside the clock
        ts.write_batches(db, org_id, [ts.SeriesBatch(series_ids[0], start, 60, data[0, :60])])
        db.commit()
        reset_points(db)

    def production() -> None:
        for i in range(0, len(batches), chunk):
            with sessions() as db:
                ts.write_batches(db, org_id, batches[i : i + chunk])
                db.commit()

    # 2. Ceiling: the same hour rows, packed beforehand, with a bare binary COPY into the same table.
    packed, _, _ = ts.pack_batches(batches)
    stream = encode_packed_rows(packed.series, packed.bucket_micros(), codec.encode_groups(packed.values),
                                org_id)  # encoded before the clock

    def bare_copy() -> None:
        raw = engine.raw_connection()
        try:
            with raw.cursor() as cur, cur.copy(  # type: ignore[attr-defined]
                "COPY metric_points (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.write(stream)
            raw.commit()
        finally:
            raw.close()

    # The two are timed in `pairs` pairs, each into emptied tables, in the order A B, B A, A B, ... so that a
    # machine getting faster or slower during the run weighs on both alike; the ratio is the median of the
    # pairs' ratios. The production path runs last, so its rows stay for the steps below.
    t_prods: list[float] = []
    t_copies: list[float] = []
    for pair in range(pairs):
        for step in ((bare_copy, production) if pair % 2 == 0 else (production, bare_copy)):
            with sessions() as db:
                reset_points(db)
            (t_prods if step is production else t_copies).append(timed(step))
    if pairs % 2 == 0:  # the last pair ended with the bare COPY: its rows, not the production path's
        with sessions() as db:
            reset_points(db)
        production()
    ratios = [c / p for c, p in zip(t_copies, t_prods, strict=True)]
    t_prod, t_copy = statistics.median(t_prods), statistics.median(t_copies)

    # 1b. The rollups of what was written: the timeseries.rollups job drains the queue (runs of hours per series).
    def drain() -> None:
        while True:
            with sessions() as db:
                done = ts.drain_rollups(db, now=SETTLED)
                db.commit()
            if not done:
                break

    t_drain = timed(drain)

    # 3. Re-running the last day of every series (the overlap path): must write nothing new.
    last_day = [ts.SeriesBatch(b.series_id, END - dt.timedelta(days=1), 60, data[i, -1440:])
                for i, b in enumerate(batches)]

    def rerun() -> None:
        for i in range(0, len(last_day), chunk):
            with sessions() as db:
                ts.write_batches(db, org_id, last_day[i : i + chunk])
                db.commit()

    t_rerun = timed(rerun)
    with sessions() as db:
        requeued = ts.rollups_pending(db, now=SETTLED)
    with engine.connect() as conn:
        # A packed row's bytes 4-11 are its presence bitmap (headroom.timeseries.codec): one bit a stored point.
        stored = conn.execute(text(
            "SELECT sum(bit_count(substring(vals FROM 4 FOR 8))) FROM metric_points")).scalar_one()
        size = conn.execute(text(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'metric_points'")).scalar_one()
    assert stored == points, f"stored {stored} points, expected {points}"

    with sessions() as db:
        t_rollup = timed(lambda: (ts.refresh_rollups(db, start, END), db.commit()))
    with engine.connect() as conn:
        rollup_size = conn.execute(text(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'metric_rollups'")).scalar_one()
        conn.execute(text("ANALYZE metric_points; ANALYZE metric_rollups"))
        conn.commit()

    results["ingest"] = {
        "points": points,
        "production_points_per_s": round(points / t_prod),
        "bare_copy_points_per_s": round(points / t_copy),
        "ratio_vs_bare_copy": round(statistics.median(ratios), 3),
        "ratio_pairs": [round(r, 3) for r in ratios],
        "rollup_drain_seconds": round(t_drain, 1),
        "end_to_end_points_per_s": round(points / (t_prod + t_drain)),
        "rerun_last_day_seconds": round(t_rerun, 2),
        "rerun_requeued_pairs": requeued,
        "rollup_refresh_seconds": round(t_rollup, 1),
    }
    results["storage"] = {
        "points_table_bytes": int(size),
        "bytes_per_point": round(int(size) / points, 2),
        "rollups_bytes": int(rollup_size),
    }
    return org_id, series_ids


def bench_reads(url: str, org_id: uuid.UUID, series_ids: list[int], results: dict[str, Any], runs: int,
                days: int) -> None:
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine)
    node = series_ids[:6]
    node_window = (END - dt.timedelta(days=7), END)
    cluster_window = (END - dt.timedelta(days=1), END)
    out: dict[str, Any] = {}
    with sessions() as db:
        for name, ids, res, (lo, hi), expect in (
            ("node_6_series_7d_5m", node, 300, node_window, 6 * min(7, days) * 288),
            ("cluster_600_series_24h_1h", series_ids, 3600, cluster_window, 600 * min(1, days) * 24),
        ):
            samples = []
            for i in range(runs + 3):
                t0 = time.perf_counter()
                got = ts.read_rollups(db, org_id, ids, res, lo, hi)
                elapsed = time.perf_counter() - t0
                if i >= 3:  # warm
                    samples.append(elapsed)
            n = sum(len(v) for v in got.values())
            assert n == expect, f"{name}: {n} points, expected {expect}"
            p50, p95 = percentiles(samples)
            out[name] = {"points": n, "p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}
    results["reads_postgres"] = out


def bench_prometheus(data: np.ndarray, days: int, results: dict[str, Any], runs: int) -> None:
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if not (promtool and prometheus):
        results["reads_prometheus"] = "skipped: prometheus/promtool not installed"
        return
    work = Path(tempfile.mkdtemp(prefix="headroom-prom-bench-"))
    try:
        keep_days = min(days, 8)  # enough for both reads; Prometheus serves them from the newest blocks
        n = keep_days * 1440
        start = END - dt.timedelta(days=keep_days)
        stamps = (int(start.timestamp()) + 60 * np.arange(n)).astype(str)
        om = work / "data.om"
        with om.open("w") as f:
            # One family with a `metric` label, so functions that drop __name__ keep series apart.
            f.write("# TYPE bench_value gauge\n")
            for m, metric_name in enumerate(METRICS):
                for node in range(NODES):
                    values = data[node * len(METRICS) + m, -n:].astype(str)
                    prefix = f'bench_value{{metric="{metric_name}",node="node-{node:03d}"}} '
                    f.write("".join(prefix + v + " " + s + "\n" for v, s in zip(values, stamps, strict=True)))
            f.write("# EOF\n")
        tsdb = work / "tsdb"
        t0 = time.perf_counter()
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(om), str(tsdb)],
                       check=True, capture_output=True)
        backfill_s = time.perf_counter() - t0
        om.unlink()
        config = work / "prometheus.yml"
        config.write_text("scrape_configs: []\n")
        port = 19090 + os.getpid() % 1000
        proc = subprocess.Popen(
            [prometheus, f"--storage.tsdb.path={tsdb}", f"--web.listen-address=127.0.0.1:{port}",
             f"--config.file={config}", "--storage.tsdb.retention.time=10y"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    urllib.request.urlopen(base + "/-/ready", timeout=1)
                    break
                except OSError:
                    time.sleep(0.2)

            def query(q: str, lo: dt.datetime, hi: dt.datetime, step: int) -> int:
                params = urllib.parse.urlencode({"query": q, "start": lo.timestamp(), "end": hi.timestamp() - step,
                                                 "step": step})
                body = json.loads(urllib.request.urlopen(f"{base}/api/v1/query_range?{params}", timeout=60).read())
                return sum(len(r["values"]) for r in body["data"]["result"])

            out: dict[str, Any] = {"backfill_seconds": round(backfill_s, 1), "days_loaded": keep_days}
            cases = (
                ("node_6_series_7d_5m", 'bench_value{node="node-000"}', 300, dt.timedelta(days=min(7, days))),
                ("cluster_600_series_24h_1h", "bench_value", 3600, dt.timedelta(days=1)),
            )
            for name, selector, step, span in cases:
                q = f"avg_over_time({selector}[{step}s])"
                samples = []
                for i in range(runs + 3):
                    t0 = time.perf_counter()
                    got = query(q, END - span + dt.timedelta(seconds=step), END + dt.timedelta(seconds=step), step)
                    if i >= 3:
                        samples.append(time.perf_counter() - t0)
                p50, p95 = percentiles(samples)
                out[name] = {"points": got, "p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}
            results["reads_prometheus"] = out
            blocks = [d for d in tsdb.iterdir() if (d / "meta.json").is_file()]
            usage = sum(f.stat().st_size for d in blocks for f in d.rglob("*") if f.is_file())
            out["bytes_per_sample"] = round(usage / (data.shape[0] * n), 2)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pairs", type=int, default=3,
                        help="production path and bare COPY timed this many times each, interleaved")
    parser.add_argument("--prometheus", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("bench/results/timeseries.json"))
    args = parser.parse_args()
    url = os.environ.get("HEADROOM_BENCH_DATABASE_URL") or os.environ.get("HEADROOM_TEST_DATABASE_URL")
    if not url:
        sys.exit("set HEADROOM_BENCH_DATABASE_URL (a migrated, disposable database) or run bench/run.sh")
    data = generate(args.days)
    results: dict[str, Any] = {"days": args.days, "series": int(data.shape[0]), "points": int(data.size),
                               "machine": f"{os.cpu_count()} cores", "date": dt.date.today().isoformat()}
    org_id, series_ids = bench_postgres(url, data, args.days, results, args.pairs)
    bench_reads(url, org_id, series_ids, results, args.runs, args.days)
    if args.prometheus:
        bench_prometheus(data, args.days, results, args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""What one scrape of Headroom's own /metrics costs as the fleet grows (docs/operations.md).

For N AWS connections and N Prometheus sources, each connection with a history of S incremental sweeps (one a
minute: S = 1440 is a day) interleaved with backfill sweeps, times the database part of a scrape (the sources'
health and each connection's last finished sweep, headroom.sources.ops_health) and the rendering of the whole
exposition, and records its size. Runs inside one transaction that is rolled back: nothing stays in the database
(HEADROOM_BENCH_DATABASE_URL or HEADROOM_TEST_DATABASE_URL, migrated).

    uv run python bench/ops_metrics_bench.py --sources 100 1000 10000 --sweeps 1440
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from headroom.platform import telemetry
from headroom.sources.ops_health import deployment_state
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session


def _seed(db: Session, sources: int, sweeps: int) -> None:
    org = uuid.uuid4()
    db.execute(
        text("INSERT INTO organizations (id, name, slug, aws_external_id) VALUES (:o, 'bench', :s, :s)"),
        {"o": org, "s": f"bench-{org.hex[:12]}"},
    )
    db.execute(
        text("""
        INSERT INTO aws_connections (id, org_id, name, auth_kind, external_id, regions, status, last_success_at)
        SELECT gen_random_uuid(), :o, 'c' || i, 'default_chain', 'x', ARRAY['us-east-1'], 'ok',
               now() - (i % 120) * interval '1 second'
        FROM generate_series(1, :n) i"""),
        {"o": org, "n": sources},
    )
    db.execute(
        text("""
        INSERT INTO prometheus_sources (id, org_id, name, base_url, auth_kind, status, last_success_at)
        SELECT gen_random_uuid(), :o, 'p' || i, 'http://prom:9090', 'none', 'ok', now()
        FROM generate_series(1, :n) i"""),
        {"o": org, "n": sources},
    )
    # One incremental sweep a minute and, every tenth minute, a backfill step between them (the sweeps the scrape
    # must skip to find the last incremental one).
    db.execute(
        text("""
        INSERT INTO collection_sweeps (org_id, source_kind, source_id, kind, region, started_at, finished_at,
                                       api_calls, points_written)
        SELECT :o, 'aws', c.id, CASE WHEN k % 10 = 0 THEN 'backfill' ELSE 'incremental' END, 'us-east-1',
               now() - k * interval '1 minute', now() - k * interval '1 minute' + interval '8 seconds', 12, 900
        FROM aws_connections c, generate_series(1, :s) k WHERE c.org_id = :o"""),
        {"o": org, "s": sweeps},
    )
    db.execute(text("ANALYZE aws_connections; ANALYZE prometheus_sources; ANALYZE collection_sweeps"))


def bench(url: str, sources: int, sweeps: int, runs: int) -> dict[str, Any]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            trans = conn.begin()
            try:
                db = Session(bind=conn)
                started = time.perf_counter()
                _seed(db, sources, sweeps)
                seed_seconds = time.perf_counter() - started
                reads, renders, size = [], [], 0
                for _ in range(runs):
                    t0 = time.perf_counter()
                    state = deployment_state(db)
                    t1 = time.perf_counter()
                    body = telemetry.exposition([_Families(state)])
                    t2 = time.perf_counter()
                    reads.append(t1 - t0)
                    renders.append(t2 - t1)
                    size = len(body)
            finally:
                trans.rollback()
    finally:
        engine.dispose()
    return {
        "sources_per_kind": sources,
        "sweeps_per_connection": sweeps,
        "sweep_rows": sources * sweeps,
        "seed_s": round(seed_seconds, 1),
        "database_read_ms_p50": round(statistics.median(reads) * 1000, 1),
        "database_read_ms_max": round(max(reads) * 1000, 1),
        "render_ms_p50": round(statistics.median(renders) * 1000, 1),
        "exposition_kib": round(size / 1024, 1),
        "series": sum(1 for line in body.decode().splitlines() if line and not line.startswith("#")),
    }


class _Families:
    def __init__(self, state: telemetry.DeploymentState) -> None:
        self.state = state

    def collect(self) -> Any:
        return telemetry.state_families(self.state, dt.datetime.now(dt.UTC))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sources", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--sweeps", type=int, default=1440)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("bench/results/ops_metrics.json"))
    args = parser.parse_args()
    url = os.environ.get("HEADROOM_BENCH_DATABASE_URL") or os.environ.get("HEADROOM_TEST_DATABASE_URL")
    if not url:
        sys.exit("set HEADROOM_BENCH_DATABASE_URL (a migrated, disposable database) or run bench/run.sh")
    results = {
        "machine": f"{os.cpu_count()} cores",
        "date": dt.date.today().isoformat(),
        "load_average": os.getloadavg()[0],
        "runs": [bench(url, n, args.sweeps, args.runs) for n in args.sources],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

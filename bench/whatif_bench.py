"""What-if answer time for the demo cluster (goal: the answer comes back within 1 s).

The demo cluster (examples/scenarios/demo.yaml, 6 TiKV nodes) is ingested into a real PostgreSQL the way the
demo source writes it (1-minute EBS, 5-minute EC2, Prometheus series), its hourly rollups refreshed and its
projections fitted, then `findings.service.what_if_cluster` (what `POST /clusters/{id}/what-if` runs, on the
request's session) answers a few typical changes, each `--runs` times, and the answer is serialised as the API
sends it. Anchor in the same run: the advisor's plain `advise` on the same day's snapshot (built once), so the
figure reads as "advice runs' worth" on a faster or slower machine.

    HEADROOM_BENCH_DATABASE_URL=... uv run python bench/whatif_bench.py [--runs 20] [--label NAME]

(`bench/run.sh whatif` migrates a throw-away database and sets the URL.) Results: bench/results/whatif.json
(appended), summarised in bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "whatif.json"
# The demo scenario's afternoon (as the advice tests use): the hot gp3 volume pins, the gp2 volumes drain.
END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
HOURS = (
    26  # the what-if's day of 1-minute data, and two hours more for the hourly rollups the projections fit
)


def _percentiles(samples: list[float]) -> dict[str, float]:
    qs = statistics.quantiles(samples, n=100, method="inclusive")
    return {
        "p50_seconds": round(statistics.median(samples), 3),
        "p95_seconds": round(qs[94], 3),
        "max_seconds": round(max(samples), 3),
    }


def _changes(snapshot: Any) -> dict[str, list[dict[str, Any]]]:
    """Typical changes on the demo: the gp2 volume to gp3, more IOPS on the hot gp3 volume, a bigger instance,
    a TiKV key on every node."""
    import numpy as np
    from headroom.domain.snapshot.views import volume_io

    gp2 = next(v for v in snapshot.volumes if v.type == "gp2")
    data = {vid: n for n in snapshot.nodes for vid in n.data_volume_ids}
    hot_data = max(
        (v for v in snapshot.volumes if v.type == "gp3" and v.id in data),
        key=lambda v: float(np.nanmax(volume_io(snapshot, v.id).counted_iops)),
    )
    hot = data[hot_data.id]
    vol = lambda v: {"kind": "volume", "id": v.id, "volume_id": v.id}  # noqa: E731
    return {
        "gp2 to gp3": [{"target": "aws", "key": "volume.type", "entity": vol(gp2), "proposed": "gp3"}],
        "hot gp3 to 6000 IOPS, 500 MiB/s": [
            {"target": "aws", "key": "volume.iops", "entity": vol(hot_data), "proposed": 6000},
            {"target": "aws", "key": "volume.throughput", "entity": vol(hot_data), "proposed": 500},
        ],
        "instance to m6i.4xlarge": [
            {
                "target": "aws",
                "key": "instance.type",
                "proposed": "m6i.4xlarge",
                "entity": {"kind": "instance", "id": hot.instance_id},
            }
        ],
        "tikv key on every node": [{"target": "tikv", "key": "raftstore.store-io-pool-size", "proposed": 2}],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    url = os.environ.get("HEADROOM_BENCH_DATABASE_URL")
    if not url:
        sys.exit("set HEADROOM_BENCH_DATABASE_URL to a migrated database (bench/run.sh whatif does)")

    from headroom.accounts.models import Organization
    from headroom.domain.advisor.engine import advise
    from headroom.domain.model import Change
    from headroom.domain.snapshot.scenario import load_scenario
    from headroom.findings import service as findings
    from headroom.models import import_all_models
    from headroom.platform.principal import Principal
    from headroom.platform.security import new_external_id
    from headroom.projections import service as projections
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts
    from headroom.timeseries.snapshots import build_snapshot
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    import_all_models()
    sessions = sessionmaker(bind=create_engine(url))
    start = END - dt.timedelta(hours=HOURS)
    now = END + dt.timedelta(minutes=5)
    with sessions() as db:
        org = Organization(
            name="whatif-bench", slug=f"whatif-{uuid.uuid4().hex[:6]}", aws_external_id=new_external_id()
        )
        db.add(org)
        db.flush()
        cluster = demo.seed_demo_cluster(db, org.id, name="whatif-bench")
        demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), start, END)
        db.commit()
        ts.refresh_rollups(db, start, END)
        fitted = projections.project_cluster(db, cluster, now=now)
        findings.advise_cluster(db, cluster, now=now)
        db.commit()
        org_id, cluster_id = org.id, cluster.id
    principal = Principal(user_id=None, org_id=org_id, role="viewer", via="token")

    with sessions() as db:
        t = time.perf_counter()
        snapshot = build_snapshot(db, org_id, cluster_id, start=END - dt.timedelta(hours=24), end=END)
        build_seconds = time.perf_counter() - t
    anchor = []
    for _ in range(max(3, args.runs // 4)):
        t = time.perf_counter()
        advise(snapshot, now=END)
        anchor.append(time.perf_counter() - t)

    cases: dict[str, Any] = {}
    for name, raw in _changes(snapshot).items():
        changes = [Change.model_validate(c) for c in raw]
        samples, answer = [], None
        for _ in range(args.runs):
            with sessions() as db:  # one session per request, as the API has
                t = time.perf_counter()
                read = findings.what_if_cluster(db, principal, cluster_id, changes, now=now)
                body = read.model_dump_json()
                samples.append(time.perf_counter() - t)
                answer = json.loads(body)
        assert answer is not None
        cases[name] = {
            **_percentiles(samples),
            "runs": len(samples),
            "answer": {
                "ceilings_moved": len(answer["ceilings"]),
                "resolved": len(answer["resolved"]),
                "remaining": len(answer["remaining"]),
                "new": len(answer["new"]),
                "projections_moved": len(answer.get("projections", [])),
                "cost_delta_usd": answer["cost"]["delta_usd"],
            },
        }
    anchor_p50 = statistics.median(anchor)
    for row in cases.values():
        row["advise_runs_worth"] = round(row["p50_seconds"] / anchor_p50, 1)
    result = {
        "label": args.label,
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "cluster": {
            "nodes": len(snapshot.nodes),
            "volumes": len(snapshot.volumes),
            "series": len(snapshot.series),
            "projections": fitted.get("fitted", 0),
        },
        "anchor_advise_p50_seconds": round(anchor_p50, 3),
        "build_snapshot_24h_seconds": round(build_seconds, 3),
        "cases": cases,
    }
    print(json.dumps(result, indent=2))
    history = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    RESULTS.write_text(json.dumps([*history, result], indent=2) + "\n")


if __name__ == "__main__":
    main()

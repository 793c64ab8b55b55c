"""Projections' cost per cluster: how long `cluster_growth` takes to fit every ceiling of a cluster,
for the demo cluster and for one of 100 stores, on four weeks of hourly history (what the daily job fits).

The snapshots are simulated at an hourly step (`headroom.domain.snapshot.simulate`) so the fit sees what
`build_snapshot(step_seconds=3600)` hands it; building that snapshot from the store is measured separately in
tests. Anchor in the same run: one `forecast_growth` fit of one series of the same length, so the per-cluster
figure reads as "fits' worth" and holds on a faster or slower machine.

    uv run python bench/projections_bench.py [--stores 100] [--days 28] [--label NAME]

Results: bench/results/projections.json (appended), summarised in bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from headroom.domain.forecast.capacity import cluster_growth
from headroom.domain.forecast.growth import forecast_growth
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import DEMO_SCENARIO, simulate

RESULTS = Path(__file__).resolve().parent / "results" / "projections.json"


def _scaled(stores: int):  # noqa: ANN202 - a Scenario
    """The demo scenario with its node groups scaled so the cluster has about `stores` TiKV stores."""
    scenario = load_scenario(DEMO_SCENARIO)
    total = sum(group.count for group in scenario.nodes)
    factor = stores / total
    groups = [group.model_copy(update={"count": max(1, round(group.count * factor))}) for group in scenario.nodes]
    return scenario.model_copy(update={"nodes": groups})


def _time_cluster(scenario, days: int) -> dict[str, float]:  # noqa: ANN001
    t0 = time.perf_counter()
    snapshot = simulate(scenario, hours=days * 24, seed=1, step_seconds=3600,
                        start=dt.datetime(2026, 10, 5, tzinfo=dt.UTC))
    simulated = time.perf_counter() - t0
    t0 = time.perf_counter()
    forecasts = cluster_growth(snapshot, horizon_days=90.0, seed=0)
    fitted = time.perf_counter() - t0
    return {"stores": len(snapshot.nodes), "volumes": len(snapshot.volumes), "instances": len(snapshot.instances),
            "fits": len(forecasts), "fit_seconds": round(fitted, 2), "simulate_seconds": round(simulated, 2),
            "fits_per_second": round(len(forecasts) / fitted, 2), "seconds_per_fit": round(fitted / len(forecasts), 3)}


def _anchor(days: int) -> float:
    hours = days * 24
    t = np.arange(hours, dtype=np.float64)
    series = 1000 * (1.1 ** (t / 168)) * (1 + 0.3 * np.sin(2 * np.pi * t / 24))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        forecast_growth(series, step_seconds=3600, start=dt.datetime(2026, 1, 1, tzinfo=dt.UTC), horizon_days=90.0,
                        ceiling=5000.0, seed=0)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=int, default=100)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    anchor = _anchor(args.days)
    demo = _time_cluster(load_scenario(DEMO_SCENARIO), args.days)
    big = _time_cluster(_scaled(args.stores), args.days)
    for row in (demo, big):
        row["fits_worth_of_anchor"] = round(row["fit_seconds"] / anchor, 1)
    result = {
        "label": args.label, "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "days_of_history": args.days, "anchor_one_fit_seconds": round(anchor, 3), "demo": demo, "large": big,
    }
    print(json.dumps(result, indent=2))
    history = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    RESULTS.write_text(json.dumps([*history, result], indent=2) + "\n")


if __name__ == "__main__":
    main()

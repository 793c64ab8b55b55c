"""CloudWatch efficiency: GetMetricData calls and metrics requested per sweep vs the lower bound and vs the
naive way (one GetMetricStatistics call per series and 1,440-datapoint chunk).

Part 1 (`plan`): the planner (headroom.sources.aws.metric_plan) on fleets of 1,000 volumes.
Part 2 (`moto`): the real collector (headroom.sources.aws.cloudwatch.fetch_sweep) against a moto server on a smaller
fleet; calls are counted by a botocore event hook, independently of the collector's own counters.

Usage: uv run python bench/cloudwatch_efficiency.py [plan|moto]   (prints Markdown tables)
Limits and prices: docs/reference/cloudwatch.md#pricing (500 queries / 100,800 datapoints per GetMetricData call; GetMetricStatistics
returns <= 1,440 datapoints per call; $0.01 per 1,000 metrics requested [3rd-party]).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from headroom.sources.aws import cloudwatch as cw
from headroom.sources.aws.metric_plan import plan_sweep, points_in

GMS_MAX_DATAPOINTS = 1_440  # docs/reference/cloudwatch.md#getmetricdata
PRICE_PER_1000_METRICS = 0.01  # docs/reference/cloudwatch.md#pricing [3rd-party]
MINUTES_PER_MONTH = 30 * 24 * 60


def fleet_queries(volumes: int, volume_type: str, instances: int, *, detailed: bool) -> list[cw.MetricQuery]:
    """`volumes` volumes of a type spread over `instances` burst-capable instances."""
    out: list[cw.MetricQuery] = []
    for i in range(instances):
        out += cw.queries_for_instance(f"i-{i:017x}", detailed_monitoring=detailed, bursts=True)
    for v in range(volumes):
        out += cw.queries_for_volume(f"vol-{v:017x}", volume_type)
    return out


def naive_calls(queries: list[cw.MetricQuery], window_seconds: int) -> int:
    return sum(math.ceil(points_in(window_seconds, q.period) / GMS_MAX_DATAPOINTS) for q in queries)


def plan_table() -> str:
    fleets = [
        ("1,000 gp3 volumes (500 nodes x data+raft), 500 m6i.2xlarge basic", 1000, "gp3", 500, False),
        ("1,000 gp2 volumes (500 nodes x data+raft), 500 m6i.2xlarge detailed", 1000, "gp2", 500, True),
        ("1,000 gp3 volumes only (instances not swept)", 1000, "gp3", 0, False),
    ]
    windows = [("incremental (10 min overlap + 1 min)", 11 * 60), ("catch-up 3 h", 3 * 3600),
               ("backfill 14 days", 14 * 86400)]
    lines = ["| fleet | sweep | series | worst-case datapoints | GetMetricData calls | lower bound | "
             "metrics requested | naive GetMetricStatistics calls | plan time |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, volumes, vtype, instances, detailed in fleets:
        queries = fleet_queries(volumes, vtype, instances, detailed=detailed)
        for wname, window in windows:
            t0 = time.perf_counter()
            plan = plan_sweep([q.period for q in queries], window)
            elapsed = time.perf_counter() - t0
            lines.append(f"| {name} | {wname} | {len(queries):,} | {plan.datapoints:,} | {plan.calls:,} | "
                         f"{plan.lower_bound:,} | {plan.metrics_requested:,} | {naive_calls(queries, window):,} | "
                         f"{elapsed * 1000:.0f} ms |")
    queries = fleet_queries(1000, "gp3", 500, detailed=False)
    per_sweep = plan_sweep([q.period for q in queries], 11 * 60).metrics_requested
    month = per_sweep * MINUTES_PER_MONTH
    lines += ["", f"Per-minute incremental sweeps of the first fleet for a 30-day month: {per_sweep:,} metrics "
              f"requested per sweep x {MINUTES_PER_MONTH:,} sweeps = {month:,} metrics = "
              f"${month / 1000 * PRICE_PER_1000_METRICS:,.0f} at $0.01 per 1,000 metrics."]
    return "\n".join(lines)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def moto_table() -> str:
    import boto3
    import httpx

    endpoint = os.environ.get("HEADROOM_TEST_AWS_ENDPOINT")
    proc = None
    if not endpoint:
        port = _free_port()
        moto = Path(sys.executable).parent / "moto_server"
        proc = subprocess.Popen([str(moto), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(f"{endpoint}/moto-api/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
    try:
        region = "eu-west-1"
        client = boto3.client("cloudwatch", region_name=region, endpoint_url=endpoint, aws_access_key_id="x",
                              aws_secret_access_key="x")
        calls = {"n": 0}
        client.meta.events.register("before-call.monitoring.GetMetricData",
                                    lambda **_kw: calls.__setitem__("n", calls["n"] + 1))
        now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
        lines = ["| fleet | window | series | GetMetricData calls (counted) | lower bound | metrics requested | "
                 "points returned | naive GetMetricStatistics calls | wall time |", "|---|---|---|---|---|---|---|---|---|"]
        for volumes, instances in ((40, 20), (100, 50)):
            queries = fleet_queries(volumes, "gp3", instances, detailed=False)
            vol_ids = sorted({q.entity_id for q in queries if q.entity_kind == "volume"})
            for vid in vol_ids:  # a few real points per volume
                client.put_metric_data(Namespace="AWS/EBS", MetricData=[
                    {"MetricName": "VolumeReadOps", "Dimensions": [{"Name": "VolumeId", "Value": vid}],
                     "Timestamp": now - dt.timedelta(minutes=k), "Value": 100.0 + k, "Unit": "Count"}
                    for k in range(1, 6)])
            for wname, window in (("11 min", 11 * 60), ("1 day", 86400)):
                plan = plan_sweep([q.period for q in queries], window)
                calls["n"] = 0
                counters = cw.SweepCounters()
                t0 = time.perf_counter()
                got = sum(len(p) for r in cw.fetch_sweep(client, queries, plan, now - dt.timedelta(seconds=window),
                                                         now, counters=counters) for p in r.points.values())
                elapsed = time.perf_counter() - t0
                lines.append(f"| {volumes} gp3 volumes + {instances} instances | {wname} | {len(queries)} | "
                             f"{calls['n']} | {plan.lower_bound} | {counters.metrics_requested} | {got} | "
                             f"{naive_calls(queries, window)} | {elapsed:.1f} s |")
        lines += ["", "moto does not page (it returns every datapoint in one answer), so counted calls equal the "
                  "planned requests; on AWS a request of more than 100,800 datapoints adds NextToken pages, which "
                  "the plan already counts."]
        return "\n".join(lines)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)


def main(argv: list[str]) -> None:
    parts = argv[1:] or ["plan", "moto"]
    if "plan" in parts:
        print("### Planner, 1,000 volumes\n")
        print(plan_table())
        print()
    if "moto" in parts:
        print("### Real collector against moto\n")
        print(moto_table())


if __name__ == "__main__":
    main(sys.argv)

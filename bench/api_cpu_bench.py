"""CPU time per request of the dashboard's routes, in-process, on one demo tenant with 7 days of data.

The load test (docs/scaling.md) found one API process saturating at about 50 requests/s; this bench measures
what a request costs the API process itself: `time.process_time()` (CPU of every thread of this process, the
app's and the test client's) around N requests to each route the locust users make (bench/load/locustfile.py),
through the app `headroom serve` builds (build_context + create_app: every middleware, compression included,
the request's log lines at WARNING as the load test ran). PostgreSQL's CPU is another process's and is not
counted. `/healthz` is the anchor measured in the same run: it costs the same client, middleware and logging
as every route and no work of its own, so `route - anchor` is the route's own work on any machine.

The tenant (a sign-up, the demo cluster, a 7-day backfill, rollups, advice, projections and a fleet score) is
seeded once into the database given and kept: `--tenant FILE` records it, and a later run reuses it (same data
for a before / after pair; the windows end "now", so reuse it within the hour).

The summary also weighs the routes as the locust users make them (LOCUST_MIX): the mean CPU per dashboard
request, the figure docs/scaling.md puts at about 15 ms from the load test. To see where a route's time goes,
profile every thread (the app answers on the test client's portal and worker threads):
`uv run --group bench py-spy record --gil -f raw -o prof.txt -- python bench/api_cpu_bench.py ... --only NAME`.

    uv run python bench/api_cpu_bench.py --database-url postgresql+psycopg://.../headroom_bench \\
        --tenant /tmp/api-bench-tenant.json --out bench/results/api_cpu.json --label after
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PASSWORD = "bench-password-123"
SECRET = "api-cpu-bench-secret-" + "x" * 32


def seed(database_url: str) -> dict[str, str]:
    """One tenant as bench/load_test.py seeds it, plus a fleet score (the fleet.score job's)."""
    from headroom.accounts import service as accounts
    from headroom.findings import service as findings
    from headroom.fleet import service as fleet
    from headroom.jobs import all_jobs
    from headroom.platform.db import session_scope
    from headroom.projections import service as projections
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts

    all_jobs()
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    email = f"api-bench-{uuid.uuid4().hex[:6]}@example.com"
    with session_scope(database_url) as db:
        ts.ensure_partitions(db, now - dt.timedelta(days=9), now + dt.timedelta(days=2))
    with session_scope(database_url) as db:
        _user, org, _ = accounts.sign_up(db, email=email, password=PASSWORD, organization_name="API bench")
        cluster = demo.seed_demo_cluster(db, org.id, name="api-bench")
        demo.seed_demo_source(db, org.id)
        org_id, cluster_id = org.id, cluster.id
    with session_scope(database_url) as db:
        demo.ingest_demo(db, db.get(demo.Cluster, cluster_id), now=now)
    with session_scope(database_url) as db:
        while ts.drain_rollups(db, now=now, org_id=org_id):
            db.commit()
    with session_scope(database_url) as db:
        cluster = db.get(demo.Cluster, cluster_id)
        findings.advise_cluster(db, cluster, now=now, window=dt.timedelta(hours=24))
        projections.project_cluster(db, cluster, now=now, force=True)
        fleet.score_cluster(db, cluster, now)
    return {"email": email, "cluster_id": str(cluster_id), "seeded_at": now.isoformat()}


def _window(hours: int) -> dict[str, str]:
    end = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    fmt = "%Y-%m-%dT%H:%M:%S.000Z"
    return {"start": (end - dt.timedelta(hours=hours)).strftime(fmt), "end": end.strftime(fmt)}


def routes(client: Any, cluster: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, path, query) of each route the locust users make (bench/load/locustfile.py)."""
    base = f"/api/v1/clusters/{cluster}"
    nodes = client.get(f"{base}/nodes").json()
    node = (nodes.get("items", nodes) if isinstance(nodes, dict) else nodes)[0]["id"]
    found = client.get(f"{base}/findings", params={"status": ["open", "acknowledged"], "sort": "impact"}).json()
    finding = found["items"][0]["id"]
    six, seven = _window(6), _window(24 * 7)
    return [
        ("GET /healthz (anchor)", "/healthz", {}),
        ("GET /auth/me", "/api/v1/auth/me", {}),
        ("GET /clusters/{id}", base, {}),
        ("GET /clusters", "/api/v1/clusters", {}),
        ("GET /fleet", "/api/v1/fleet", {}),
        ("GET /sources/aws", "/api/v1/sources/aws", {}),
        ("GET /sources/prometheus", "/api/v1/sources/prometheus", {}),
        ("GET /clusters/{id}/findings (open, by impact)", f"{base}/findings",
         {"status": ["open", "acknowledged"], "sort": "impact"}),
        ("GET /clusters/{id}/findings", f"{base}/findings", {}),
        ("GET /clusters/{id}/projections", f"{base}/projections", {"bands": "false"}),
        ("GET /clusters/{id}/changes", f"{base}/changes", {}),
        ("GET /clusters/{id}/nodes", f"{base}/nodes", {}),
        ("GET /clusters/{id}/metrics/overview (6 h)", f"{base}/metrics/overview", six),
        ("GET /clusters/{id}/metrics/overview (7 d)", f"{base}/metrics/overview", seven),
        ("GET /clusters/{id}/metrics (6 h)", f"{base}/metrics", {"projections": "false", "points": "112", **six}),
        ("GET /clusters/{id}/metrics (7 d)", f"{base}/metrics", {"projections": "false", "points": "112", **seven}),
        ("GET /findings/{id}", f"/api/v1/findings/{finding}", {}),
        ("GET /findings/{id}/evidence/series", f"/api/v1/findings/{finding}/evidence/series", {}),
        ("GET /clusters/{id}/nodes/{id}/config", f"{base}/nodes/{node}/config", {}),
        ("GET /clusters/{id}/patches", f"{base}/patches", {}),
        # the Weekly email page's preview (not in the locust mix: an admin's page, opened now and then)
        ("GET /org/digest/preview", "/api/v1/org/digest/preview", {}),
    ]


# The locust users' pages (bench/load/locustfile.py): (task weight, the requests of one visit).
_PAGE = ["GET /auth/me", "GET /clusters/{id}"]
LOCUST_MIX: list[tuple[int, list[str]]] = [
    (4, [*_PAGE, "GET /sources/aws", "GET /sources/prometheus", "GET /clusters/{id}/findings (open, by impact)",
         "GET /clusters/{id}/projections", "GET /clusters/{id}/changes", "GET /clusters/{id}/nodes"]),
    (3, [*_PAGE, "GET /clusters/{id}/metrics/overview (6 h)", "GET /clusters/{id}/metrics (6 h)"]),
    (1, [*_PAGE, "GET /clusters/{id}/metrics/overview (7 d)", "GET /clusters/{id}/metrics (7 d)"]),
    (2, [*_PAGE, "GET /clusters/{id}/findings"]),
    (2, ["GET /auth/me", "GET /findings/{id}", "GET /findings/{id}/evidence/series"]),
    (1, [*_PAGE, "GET /clusters/{id}/findings (open, by impact)", "GET /clusters/{id}/nodes",
         "GET /clusters/{id}/nodes/{id}/config"]),
    (1, [*_PAGE, "GET /clusters/{id}/patches"]),
    (2, ["GET /auth/me", "GET /clusters", "GET /fleet"]),
]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def measure(client: Any, path: str, params: dict[str, Any], n: int, warmup: int) -> dict[str, Any]:
    """CPU ms (this process) and wall ms per request, over `n` requests after `warmup`; the answers' bytes."""
    for _ in range(warmup):
        client.get(path, params=params).raise_for_status()
    cpu: list[float] = []
    wall: list[float] = []
    size = 0
    for _ in range(n):
        c0, w0 = time.process_time(), time.perf_counter()
        response = client.get(path, params=params)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
        response.raise_for_status()
        size = len(response.content)
    return {"n": n, "cpu_ms_mean": round(statistics.fmean(cpu), 2), "cpu_ms_median": round(statistics.median(cpu), 2),
            "cpu_ms_p95": round(_p95(cpu), 2), "wall_ms_median": round(statistics.median(wall), 2),
            "wall_ms_p95": round(_p95(wall), 2), "bytes": size,
            "encoding": response.headers.get("content-encoding")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default=None, help="REDIS_URL of the app (as the load test ran it)")
    parser.add_argument("--tenant", type=Path, required=True, help="the seeded tenant (written when missing)")
    parser.add_argument("-n", type=int, default=30, help="requests per route")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--only", default="", help="measure only these routes (names, comma-separated)")
    parser.add_argument("--out", type=Path, default=None, help="JSON file to record the run in (under --label)")
    parser.add_argument("--label", default="run")
    args = parser.parse_args()

    import logging

    from fastapi.testclient import TestClient
    from headroom.api.app import build_context, create_app
    from headroom.platform.logging import configure_logging
    from headroom.platform.ratelimit import MemoryRateLimiter
    from headroom.platform.settings import Settings

    if not args.tenant.exists():
        started = time.perf_counter()
        args.tenant.write_text(json.dumps(seed(args.database_url)))
        print(f"seeded in {time.perf_counter() - started:.1f} s")
    tenant = json.loads(args.tenant.read_text())
    values = {"HEADROOM_ENV": "development", "HEADROOM_SECRET_KEY": SECRET, "DATABASE_URL": args.database_url,
              "HEADROOM_LOG_LEVEL": "WARNING", "HEADROOM_DATA_DIR": tempfile.mkdtemp(prefix="api-cpu-bench-")}
    if args.redis_url:
        values["REDIS_URL"] = args.redis_url
    settings = Settings(**values)
    configure_logging(settings.log_level, settings.log_json)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    ctx = build_context(settings, args.database_url)
    ctx.rate_limiter = MemoryRateLimiter()
    client = TestClient(create_app(ctx), headers={"Accept-Encoding": "gzip, deflate, br"})
    client.post("/api/v1/auth/login", json={"email": tenant["email"], "password": PASSWORD}).raise_for_status()
    # The app's CSRF-free GETs need only the session cookie the login set.
    measured: dict[str, Any] = {}
    load_before = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]] \
        if Path("/proc/loadavg").exists() else []
    todo = [r for r in routes(client, tenant["cluster_id"])
            if not args.only or r[0] in args.only.split(",") or r[1] == "/healthz"]
    for name, path, params in todo:
        measured[name] = measure(client, path, params, args.n, args.warmup)
        print(f"{name:55s} {measured[name]['cpu_ms_mean']:8.2f} ms CPU  {measured[name]['wall_ms_median']:8.2f} ms wall"
              f"  {measured[name]['bytes']:>8} B")
    anchor = measured["GET /healthz (anchor)"]["cpu_ms_mean"]
    dashboard = [v["cpu_ms_mean"] for k, v in measured.items() if "anchor" not in k and "digest" not in k]
    summary = {"anchor_cpu_ms": anchor, "routes_mean_cpu_ms": round(statistics.fmean(dashboard), 2),
               "routes_mean_cpu_ms_over_anchor": round(statistics.fmean(dashboard) - anchor, 2)}
    if not args.only:
        mix = sum(w * sum(measured[r]["cpu_ms_mean"] for r in page) for w, page in LOCUST_MIX)
        requests = sum(w * len(page) for w, page in LOCUST_MIX)
        summary["locust_mix_cpu_ms_per_request"] = round(mix / requests, 2)
        summary["locust_mix_cpu_ms_per_request_over_anchor"] = round(mix / requests - anchor, 2)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    summary["load_average_before"] = load_before
    summary["load_average_after"] = [float(x) for x in load]
    print(json.dumps(summary))
    if args.out:
        recorded = json.loads(args.out.read_text()) if args.out.exists() else {}
        recorded[args.label] = {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                                "machine": f"{platform.machine()}, {platform.python_version()}",
                                "requests_per_route": args.n, "summary": summary, "routes": measured}
        args.out.write_text(json.dumps(recorded, indent=2) + "\n")


if __name__ == "__main__":
    main()

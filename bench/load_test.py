"""Headroom under load: N demo-sized clusters ingested every minute and advised by Celery worker processes while M
dashboard users (locust) browse, on this machine; records API latency, the pipeline's health and which resource
saturates, step by step (docs/scaling.md reads the results).

The pipeline is the production one: PostgreSQL and Redis (scripts/services.sh), `headroom serve` API
process(es) with REDIS_URL, and a Celery worker (`celery -A headroom_worker.celery_app worker`) with W
processes on every queue. Each organisation has one demo cluster (the demo fleet's scenario, 9 TiKV nodes,
examples/scenarios/demo.yaml) and one user, as a tenant of the SaaS would; its data comes from the simulator
(`demo.ingest`), written through the same store as collected data.

The clock is this script's, not Celery beat's, so every step sees the same work: at each minute it queues every
job the job table has due that minute (headroom.jobs, Schedule.is_due: demo.ingest, the rollups, alerts, the AWS
and Prometheus pulls, projections) as beat would, with the schedule's expiry. The 15-minute advice round is
queued at the start of every step instead, so each step measures the busiest minutes: the users, the minute's
ingest and a whole advice round of N clusters at once.

Per step (N clusters, M users), recorded in bench/results/load_test.json:
- API latency from locust: p50/p95/p99 of all requests and per endpoint, requests/s, failures;
- the pipeline: demo.ingest and advice.run tasks run and their mean time (Headroom's own job stats in Redis),
  the advice round's duration (queued -> every cluster advised), the ingest lag (now - each cluster's newest
  stored minute, sampled every 5 s) and the queue depths;
- CPU: cores used by the API, the workers, PostgreSQL, Redis and locust itself (psutil, process trees), and the
  machine's total.

    uv run --group bench python bench/load_test.py --clusters 25 50 100 --users 10 25 50 --step-seconds 120

Seeding (per organisation: sign-up, the demo cluster, a 7-day backfill, rollups, first advice and projections)
runs before the workers start, in 2 processes; its time is recorded too.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PASSWORD = "load-test-password-1"  # every load-test user's; these accounts exist only in the bench's database
SECRET = "load-test-secret-key-" + "x" * 32
QUEUES = ("ingest", "advice", "email", "alerts", "maintenance")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- services and processes ----------------------------------------------------------------------------------


@contextmanager
def services() -> Iterator[dict[str, str]]:
    """PostgreSQL and Redis from scripts/services.sh in a throw-away directory, migrated."""
    svc = Path(tempfile.mkdtemp(prefix="headroom-load."))
    subprocess.run([str(REPO / "scripts/services.sh"), "start", str(svc)], check=True, stdout=subprocess.DEVNULL)
    env: dict[str, str] = {}
    for line in (svc / "env").read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[7:].partition("=")
            env[key] = value
    try:
        subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=REPO, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env={**os.environ, "DATABASE_URL": env["HEADROOM_TEST_DATABASE_URL"]})
        env["svc"] = str(svc)
        yield env
    finally:
        subprocess.run([str(REPO / "scripts/services.sh"), "stop", str(svc)], check=False, stdout=subprocess.DEVNULL)
        if not os.environ.get("HEADROOM_LOAD_KEEP_SERVICES"):  # set it to read the services' logs afterwards
            shutil.rmtree(svc, ignore_errors=True)


def headroom_env(database_url: str, redis_url: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "HEADROOM_ENV": "development",
            "HEADROOM_SECRET_KEY": SECRET, "HEADROOM_DEMO_FLEET": "true", "HEADROOM_LOG_LEVEL": "WARNING",
            # every locust user logs in from 127.0.0.1: the per-IP login limits would refuse them
            "HEADROOM_LOGIN_RATE_PER_IP": "100000", "HEADROOM_LOGIN_RATE_PER_ACCOUNT_IP": "100000",
            "HEADROOM_LOGIN_RATE_PER_ACCOUNT": "100000"}


def start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=REPO,
                            start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_http(url: str, seconds: float = 90) -> None:
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


# --- seeding -------------------------------------------------------------------------------------------------


def _seed_one(database_url: str, index: int, now_iso: str) -> dict[str, Any]:
    """One tenant: sign-up, demo cluster and source, 7 days of data, rollups, first advice and projections."""
    from headroom.accounts import service as accounts
    from headroom.findings import service as findings
    from headroom.jobs import all_jobs
    from headroom.platform.db import session_scope
    from headroom.projections import service as projections
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts

    all_jobs()
    now = dt.datetime.fromisoformat(now_iso)
    times: dict[str, float] = {}
    t = time.perf_counter()
    email = f"load-{index:04d}-{uuid.uuid4().hex[:6]}@example.com"
    with session_scope(database_url) as db:
        _user, org, _ = accounts.sign_up(db, email=email, password=PASSWORD, organization_name=f"Load {index}")
        cluster = demo.seed_demo_cluster(db, org.id, name=f"load-{index:04d}")
        demo.seed_demo_source(db, org.id)
        org_id, cluster_id = org.id, cluster.id
    times["account"] = time.perf_counter() - t
    t = time.perf_counter()
    with session_scope(database_url) as db:
        result = demo.ingest_demo(db, db.get(demo.Cluster, cluster_id), now=now)
    times["backfill"] = time.perf_counter() - t
    t = time.perf_counter()
    with session_scope(database_url) as db:
        while ts.drain_rollups(db, now=now, org_id=org_id):
            db.commit()
    times["rollups"] = time.perf_counter() - t
    t = time.perf_counter()
    with session_scope(database_url) as db:
        cluster = db.get(demo.Cluster, cluster_id)
        findings.advise_cluster(db, cluster, now=now, window=dt.timedelta(hours=24))
        projections.project_cluster(db, cluster, now=now, force=True)
    times["advice_and_projections"] = time.perf_counter() - t
    return {"email": email, "password": PASSWORD, "cluster_id": str(cluster_id), "points": result["points"],
            "seconds": times}


def seed(database_url: str, first: int, count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from headroom.platform.db import engine_for, session_scope
    from headroom.timeseries import repository as ts

    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    # The backfill's day partitions first, in one transaction: two backfills that both create a partition deadlock
    # (the partition's foreign key locks metric_series, which each has written to; PostgreSQL aborts one). In
    # production the hourly timeseries.maintain creates the coming days' partitions ahead of the writes, and a
    # backfill's aborted transaction is retried by Celery; here the seeding would just stop.
    with session_scope(database_url) as db:
        ts.ensure_partitions(db, now - dt.timedelta(days=9), now + dt.timedelta(days=2))
    engine_for(database_url).dispose()  # no pooled connection may be inherited by the forked seeding processes
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        made = list(pool.map(_seed_one, [database_url] * count, range(first, first + count),
                             [now.isoformat()] * count))
    wall = time.perf_counter() - started
    summary = {"tenants": count, "wall_seconds": round(wall, 1),
               "points_per_tenant": made[0]["points"] if made else 0,
               "mean_seconds": {k: round(statistics.fmean(m["seconds"][k] for m in made), 3)
                                for k in (made[0]["seconds"] if made else {})}}
    return made, summary


def database_bytes(database_url: str) -> int:
    from sqlalchemy import create_engine, text

    from headroom.platform.db import normalise_database_url

    engine = create_engine(normalise_database_url(database_url))
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    finally:
        engine.dispose()


# --- the clock: what beat would queue --------------------------------------------------------------------------


class Clock(threading.Thread):
    """Queue, at each minute, every scheduled job due that minute except the advice round (queued per step)."""

    SKIP = {"advice.run", "fleet.score", "digest.weekly"}

    def __init__(self, database_url: str, redis_url: str) -> None:
        super().__init__(daemon=True)
        self.database_url, self.redis_url = database_url, redis_url
        self.halt = threading.Event()
        self.sent: list[tuple[str, str]] = []

    def settings(self) -> Any:
        from headroom.platform.settings import Settings

        return Settings(HEADROOM_ENV="development", HEADROOM_SECRET_KEY=SECRET, REDIS_URL=self.redis_url)

    def queue(self, name: str, at: dt.datetime) -> None:
        from headroom.platform.jobs import dispatch
        from headroom.platform.jobs.registry import job

        schedule = job(name).schedule
        dispatch.enqueue(name, self.settings(), self.database_url, now_iso=at.isoformat(),
                         expires_seconds=schedule.expires_seconds if schedule else None)
        self.sent.append((at.isoformat(), name))

    def run(self) -> None:
        from headroom.jobs import all_jobs

        jobs = [j for j in all_jobs() if j.schedule is not None and j.name not in self.SKIP]
        while not self.halt.is_set():
            now = dt.datetime.now(dt.UTC)
            minute = now.replace(second=0, microsecond=0)
            for entry in jobs:
                assert entry.schedule is not None
                if entry.schedule.is_due(minute):
                    self.queue(entry.name, minute)
            nxt = minute + dt.timedelta(minutes=1)
            self.halt.wait(max(0.0, (nxt - dt.datetime.now(dt.UTC)).total_seconds()))


# --- sampling --------------------------------------------------------------------------------------------------


def _tree(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _trees(pids: list[int]) -> list[psutil.Process]:
    return [p for pid in pids for p in _tree(psutil.Process(pid))]


def _cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for p in procs:
        try:
            # children_*: the processes it waited for, e.g. PostgreSQL backends of closed connections, whose
            # time would otherwise leave the sum when they exit
            times = p.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            pass
    return total


class Sampler(threading.Thread):
    """Every 5 s: the ingest lag of every cluster, the queue depths and the CPU seconds of each component."""

    def __init__(self, database_url: str, redis_url: str, components: dict[str, Any]) -> None:
        super().__init__(daemon=True)
        import redis
        from sqlalchemy import create_engine

        from headroom.platform.db import normalise_database_url

        self.engine = create_engine(normalise_database_url(database_url), pool_size=1)
        self.redis = redis.Redis.from_url(redis_url)
        self.components = components  # name -> callable returning the processes
        self.halt = threading.Event()
        self.samples: list[dict[str, Any]] = []

    def cpu(self) -> dict[str, float]:
        return {name: _cpu_seconds(find()) for name, find in self.components.items()}

    def sample(self) -> dict[str, Any]:
        from sqlalchemy import text

        with self.engine.connect() as conn:
            lags = [float(r[0]) for r in conn.execute(text(
                "SELECT extract(epoch FROM now() - max(watermark_at)) FROM ingest_watermarks "
                "WHERE source_kind = 'demo' GROUP BY source_id"))]
            active = conn.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid()")).scalar()
        depths = {q: int(self.redis.llen(q)) for q in QUEUES}
        return {"t": time.time(), "lag_max": max(lags, default=0.0),
                "lag_p50": statistics.median(lags) if lags else 0.0, "queues": depths, "pg_active": active}

    def run(self) -> None:
        while not self.halt.wait(5):
            self.samples.append(self.sample())


def job_totals(redis_url: str) -> Any:
    from headroom.platform.telemetry import RedisJobStats

    return RedisJobStats(redis_url).read()


def job_delta(before: Any, after: Any, name: str) -> dict[str, Any]:
    runs = after.runs.get((name, "succeeded"), 0) - before.runs.get((name, "succeeded"), 0)
    failed = after.runs.get((name, "failed"), 0) - before.runs.get((name, "failed"), 0)
    seconds = after.seconds.get(name, 0.0) - before.seconds.get(name, 0.0)
    return {"succeeded": runs, "failed": failed, "mean_seconds": round(seconds / runs, 3) if runs else None}


# --- locust ----------------------------------------------------------------------------------------------------


def run_locust(hosts: list[str], users: int, seconds: int, accounts_file: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HEADROOM_LOAD_ACCOUNTS": str(accounts_file), "HEADROOM_LOAD_HOSTS": ",".join(hosts)}
    cmd = [sys.executable, "-m", "locust", "-f", str(REPO / "bench/load/locustfile.py"), "--headless",
           "-u", str(users), "-r", str(max(1, users // 5)), "-t", f"{seconds}s", "--host", hosts[0],
           "--csv", str(out), "--only-summary", "--stop-timeout", "10", "--loglevel", "WARNING"]
    return subprocess.Popen(cmd, env=env, stdout=(out.parent / "locust.log").open("ab"), stderr=subprocess.STDOUT,
                            cwd=REPO, start_new_session=True)


def locust_stats(prefix: Path) -> dict[str, Any]:
    rows = list(csv.DictReader((prefix.parent / f"{prefix.name}_stats.csv").open()))

    def figures(row: dict[str, str]) -> dict[str, Any]:
        return {"requests": int(row["Request Count"]), "failures": int(row["Failure Count"]),
                "rps": round(float(row["Requests/s"]), 1), "p50_ms": float(row["50%"]), "p95_ms": float(row["95%"]),
                "p99_ms": float(row["99%"]), "max_ms": round(float(row["Max Response Time"]), 0)}

    total = next(r for r in rows if r["Name"] == "Aggregated")
    endpoints = {f'{r["Name"]}': figures(r) for r in rows if r["Name"] != "Aggregated"}
    return {"all": figures(total), "endpoints": endpoints}


def after_logins(prefix: Path) -> dict[str, Any] | None:
    """Latency of the requests that started once every user had logged in (the locustfile's per-request file):
    what a user waits for on a page, without the step's opening burst of password hashing."""
    path = prefix.parent / f"{prefix.name}_requests.tsv"
    if not path.is_file():
        return None
    rows = [line.split("\t") for line in path.read_text().splitlines() if line.count("\t") == 3]
    logins = [float(r[0]) + float(r[2]) / 1000 for r in rows if r[1] == "POST /auth/login"]
    settled = max(logins, default=0.0)
    times = sorted(float(r[2]) for r in rows if r[1] != "POST /auth/login" and float(r[0]) >= settled)
    if not times:
        return None
    first = min(float(r[0]) for r in rows)

    def pct(q: float) -> float:
        return round(times[min(len(times) - 1, int(q * len(times)))], 1)

    return {"requests": len(times), "p50_ms": pct(0.5), "p95_ms": pct(0.95), "p99_ms": pct(0.99),
            "failures": sum(int(r[3]) for r in rows if r[1] != "POST /auth/login" and float(r[0]) >= settled),
            "from_second": round(settled - first, 1)}


# --- a step ----------------------------------------------------------------------------------------------------


def step(cfg: argparse.Namespace, env: dict[str, str], hosts: list[str], clusters: int, users: int,
         accounts_file: Path, sampler: Sampler, work: Path) -> dict[str, Any]:
    from headroom.platform.jobs import dispatch
    from headroom.platform.settings import Settings

    database_url, redis_url = env["HEADROOM_TEST_DATABASE_URL"], env["HEADROOM_TEST_REDIS_URL"]
    settings = Settings(HEADROOM_ENV="development", HEADROOM_SECRET_KEY=SECRET, REDIS_URL=redis_url)
    totals = job_totals(redis_url)
    cpu0, wall0, machine0 = sampler.cpu(), time.monotonic(), psutil.cpu_times()
    first_sample = len(sampler.samples)
    # the advice round, as beat queues it every 15 minutes: one advice.run that fans out one task per cluster
    now = dt.datetime.now(dt.UTC)
    dispatch.enqueue("advice.run", settings, database_url, now_iso=now.isoformat(), expires_seconds=600)
    dispatch.enqueue("fleet.score", settings, database_url, now_iso=now.isoformat(), expires_seconds=600)
    round_started = time.monotonic()
    prefix = work / f"locust-{clusters}-{users}-{len(hosts)}"
    locust = run_locust(hosts, users, cfg.step_seconds, accounts_file, prefix)
    round_seconds = None
    locust_cpu = 0.0  # its CPU seconds, read while it runs (an exited child's are gone)
    while locust.poll() is None:
        locust_cpu = max(locust_cpu, _cpu_seconds(_tree(psutil.Process(locust.pid))))
        time.sleep(1)
        if round_seconds is None:
            done = job_delta(totals, job_totals(redis_url), "advice.run")["succeeded"]
            if done >= clusters + 1:
                round_seconds = round(time.monotonic() - round_started, 1)
    wall = time.monotonic() - wall0
    cpu1, machine1 = sampler.cpu(), psutil.cpu_times()
    after = job_totals(redis_url)
    samples = sampler.samples[first_sample:]
    busy = (sum(machine1) - machine1.idle - machine1.iowait) - (sum(machine0) - machine0.idle - machine0.iowait)
    return {
        "clusters": clusters,
        "users": users,
        "api_processes": len(hosts),
        "seconds": round(wall, 1),
        "api": locust_stats(prefix) | {"without_login": after_logins(prefix)},
        "advice_round_seconds": round_seconds,
        "jobs": {name: job_delta(totals, after, name) for name in ("demo.ingest", "advice.run", "fleet.score",
                                                                  "timeseries.rollups", "alerts.deliver",
                                                                  "projections.run")},
        "ingest_lag_seconds": {"max": round(max((s["lag_max"] for s in samples), default=0), 1),
                               "p50_of_clusters_mean": round(statistics.fmean(s["lag_p50"] for s in samples), 1)
                               if samples else None},
        "queue_depth_max": {q: max((s["queues"][q] for s in samples), default=0) for q in QUEUES},
        "pg_active_max": max((s["pg_active"] for s in samples), default=0),
        "cores": {name: round((cpu1[name] - cpu0[name]) / wall, 2) for name in cpu0}
        | {"locust": round(locust_cpu / wall, 2), "machine": round(busy / wall, 2), "machine_of": psutil.cpu_count(),
           "load_average_1m": round(os.getloadavg()[0], 2)},
    }


def table(results: dict[str, Any]) -> str:
    """The steps as the Markdown table docs/scaling.md and bench/README.md show."""
    lines = ["| clusters | users | API processes | requests/s | p50 | p95 | p99 | failed | p95 after logins | "
             "cores: API / workers / PostgreSQL / locust / machine | advice round (N clusters) | ingest lag max |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in results["steps"]:
        a, c = s["api"]["all"], s["cores"]
        dash = (s["api"].get("without_login") or {}).get("p95_ms")
        rounds = s["advice_round_seconds"]
        advice = f"{rounds} s" if rounds is not None else "not done within the step"
        lines.append(
            f"| {s['clusters']} | {s['users']} | {s.get('api_processes', 1)} | {a['rps']:.1f} | {a['p50_ms']:.0f} ms | "
            f"{a['p95_ms']:,.0f} ms | {a['p99_ms']:,.0f} ms | {a['failures']} | "
            f"{f'{dash:,.0f} ms' if dash is not None else '-'} | "
            f"{c['api']:.2f} / {c['workers']:.2f} / {c['postgres']:.2f} / {c['locust']:.2f} / {c['machine']:.2f} | "
            f"{advice} | {s['ingest_lag_seconds']['max']:.0f} s |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clusters", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--users", type=int, nargs="+", default=[10, 25, 50])
    parser.add_argument("--step-seconds", type=int, default=120)
    parser.add_argument("--warmup-seconds", type=int, default=60)
    parser.add_argument("--worker-processes", type=int, default=2)
    parser.add_argument("--workers", choices=("shared", "split"), default="shared",
                        help="shared: one worker on every queue; split: ingest/alerts/maintenance apart from advice")
    parser.add_argument("--api-processes", type=int, nargs="+", default=[1],
                        help="API processes; with several values, the largest cluster count is run with each")
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/load_test.json")
    parser.add_argument("--table", type=Path, help="print the Markdown table of a results file and stop")
    parser.add_argument("--recompute", type=Path, help="a run's working directory: add the after-login figures")
    cfg = parser.parse_args()
    if cfg.table:
        print(table(json.loads(cfg.table.read_text())))
        return
    if cfg.recompute:  # add the after-login figures to a results file from a run's working files
        recorded = json.loads(cfg.out.read_text())
        for s in recorded["steps"]:
            prefix = cfg.recompute / f"locust-{s['clusters']}-{s['users']}-{s.get('api_processes', 1)}"
            if not (prefix.parent / f"{prefix.name}_requests.tsv").is_file():
                prefix = cfg.recompute / f"locust-{s['clusters']}-{s['users']}"
            s["api"]["without_login"] = s["api"].get("without_login") or after_logins(prefix)
        cfg.out.write_text(json.dumps(recorded, indent=1) + "\n")
        return

    results: dict[str, Any] = {
        "machine": {"cores": psutil.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / 2**30, 1)},
        "config": {"worker_processes": cfg.worker_processes, "workers": cfg.workers,
                   "api_processes": cfg.api_processes,
                   "step_seconds": cfg.step_seconds, "warmup_seconds": cfg.warmup_seconds},
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "seeding": [], "steps": [],
    }
    from headroom.jobs import all_jobs
    from headroom.platform.logging import configure_logging

    configure_logging("WARNING", False)  # this script's own enqueue lines would drown its progress
    all_jobs()  # the job table dispatch.enqueue reads
    work = Path(tempfile.mkdtemp(prefix="headroom-load-run."))
    print(f"working files: {work}", flush=True)
    with services() as env:
        database_url, redis_url = env["HEADROOM_TEST_DATABASE_URL"], env["HEADROOM_TEST_REDIS_URL"]
        henv = headroom_env(database_url, redis_url)
        accounts: list[dict[str, Any]] = []
        accounts_file = work / "accounts.json"
        postmaster = next(p for p in psutil.process_iter(["name", "cmdline"])
                          if p.info["name"] == "postgres" and env["svc"] in " ".join(p.info["cmdline"] or []))
        redis_proc = next(p for p in psutil.process_iter(["name", "cmdline"])
                          if "redis-server" in (p.info["name"] or "") and
                          env["HEADROOM_TEST_REDIS_URL"].rsplit(":", 1)[1].split("/")[0]
                          in " ".join(p.info["cmdline"] or []))
        runs = [(n, cfg.api_processes[0]) for n in sorted(cfg.clusters)]
        runs += [(max(cfg.clusters), a) for a in cfg.api_processes[1:]]
        for n, api_processes in runs:
            ports = [_free_port() for _ in range(api_processes)]
            hosts = [f"http://127.0.0.1:{p}" for p in ports]
            if n > len(accounts):
                print(f"seeding {n - len(accounts)} tenants ...", flush=True)
                made, summary = seed(database_url, len(accounts), n - len(accounts))
                accounts.extend(made)
                summary["database_bytes_after"] = database_bytes(database_url)
                summary["clusters_after"] = len(accounts)
                results["seeding"].append(summary)
                print(f"  {summary}", flush=True)
            accounts_file.write_text(json.dumps(accounts[:n]))
            # the API's demo fleet off: `serve` would otherwise add the demo account's own cluster
            apis = [start([str(BIN / "headroom"), "serve", "--no-migrate", "--port", str(p)],
                          henv | {"HEADROOM_DEMO_FLEET": "false"}, work / "api.log") for p in ports]
            # shared: one worker on every queue; split: docker-compose.yml's two services (per-minute queues and
            # advice), the same processes in all, halved between them
            layout = ([(QUEUES, cfg.worker_processes)] if cfg.workers == "shared" else
                      [(("ingest", "alerts", "maintenance"), max(1, cfg.worker_processes // 2)),
                       (("advice", "email"), max(1, cfg.worker_processes // 2))])
            workers = [start([sys.executable, "-m", "celery", "-A", "headroom_worker.celery_app", "worker",
                              "--loglevel=WARNING", "-Q", ",".join(queues), f"--concurrency={processes}",
                              "--without-gossip", "--without-mingle", "-n", f"load{n}-{api_processes}-{i}@%h"],
                             henv, work / "worker.log") for i, (queues, processes) in enumerate(layout)]
            clock = Clock(database_url, redis_url)
            for h in hosts:
                wait_http(f"{h}/readyz")
            components = {
                "api": partial(_trees, [a.pid for a in apis]),
                "workers": partial(_trees, [w.pid for w in workers]),
                "postgres": lambda: _tree(postmaster),
                "redis": lambda: _tree(redis_proc),
            }
            sampler = Sampler(database_url, redis_url, components)
            clock.start()
            sampler.start()
            try:
                time.sleep(cfg.warmup_seconds)
                for m in cfg.users:
                    print(f"step: {n} clusters, {m} users, {api_processes} API process(es)", flush=True)
                    result = step(cfg, env, hosts, n, m, accounts_file, sampler, work)
                    results["steps"].append(result)
                    a = result["api"]["all"]
                    print(f"  p50 {a['p50_ms']} ms, p95 {a['p95_ms']} ms, {a['rps']} req/s, {a['failures']} failed; "
                          f"advice round {result['advice_round_seconds']} s; lag max "
                          f"{result['ingest_lag_seconds']['max']} s; cores {result['cores']}", flush=True)
                    cfg.out.write_text(json.dumps(results, indent=1) + "\n")
            finally:
                clock.halt.set()
                sampler.halt.set()
                for proc in [*apis, *workers]:
                    stop(proc)
    results["finished_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    cfg.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"recorded {cfg.out}")


if __name__ == "__main__":
    main()

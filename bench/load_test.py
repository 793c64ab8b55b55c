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
ingest and a whole advice round of N clusters at once; the fleet-score round follows 5 minutes later, as its
schedule has it (in a step of 5 minutes or less, at the start with the advice round).

Per step (N clusters, M users), recorded in bench/results/load_test.json:
- API latency from locust: p50/p95/p99 of all requests and per endpoint, requests/s, failures;
- the pipeline: demo.ingest and advice.run tasks run and their mean time (Headroom's own job stats in Redis),
  the advice round's duration (queued -> every cluster advised), the ingest lag (now - each cluster's newest
  stored minute, sampled every 5 s) and the queue depths;
- CPU: cores used by the API, the workers, PostgreSQL, Redis and locust itself (psutil, process trees), and the
  machine's total.

    uv run --group bench python bench/load_test.py --clusters 25 50 100 --users 10 25 50 --step-seconds 120

Seeding (per organisation: sign-up, the demo cluster, a 7-day backfill, rollups, first advice and projections)
runs before the workers start, in 2 processes; its time is recorded too. It costs about 5 s of CPU per tenant
(2.7 s of wall time on 2 quiet cores, 11-18 s at a load of 5-6), so 1,000 tenants would take 45 minutes to
hours. `--seed copies` seeds one tenant so and copies it in PostgreSQL (bench/tenant_clone.py: every row it owns,
new ids, its 7 days of points and rollups included) at about 1 s per copy on the shared machine; each copy then
ingests, is advised and is browsed on its own from where the original stopped, and the copies are checked for any
row naming the original's ids or another organisation's series. What a copy does not reproduce: its simulated
workload is the original's (the same 7 days; the live minutes differ, the seed being the cluster's name).

For many clusters (docker compose's layout, seeded once and kept):

    uv run --group bench python bench/load_test.py --services /tmp/load-svc --seed copies --seed-only --clusters 1000
    uv run --group bench python bench/load_test.py --services /tmp/load-svc --seed copies --clusters 1000 \
        --users 25 --workers compose --warmup-seconds 60 --settle-lag 150 --step-seconds 600 --sample-seconds 10

`--workers compose` runs docker-compose.yml's two worker services (`worker`: ingest and alerts; `worker-advice`:
advice, maintenance and email; 2 processes each) through bench/load/worker.py, which also counts each job's CPU
seconds (and the demo simulator's share), so a step records worker CPU per cluster per minute by job.
`--settle-lag` waits after the warm-up until the p95 ingest lag over clusters is that low (copies made earlier
catch up first).
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
from load.compose import DEFAULT_SHARES, CpuGroups, WorkerService, cpu_shares, worker_services
from load.compose import services as compose_file

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PASSWORD = "load-test-password-1"  # every load-test user's; these accounts exist only in the bench's database
SECRET = "load-test-secret-key-" + "x" * 32
QUEUES = ("ingest", "advice", "email", "alerts", "maintenance")
FLEET_SCORE_AFTER_SECONDS = 300  # the fleet-score round's minutes are the advice round's plus 5 (headroom.fleet.jobs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- services and processes ----------------------------------------------------------------------------------


@contextmanager
def services(keep: Path | None = None) -> Iterator[dict[str, str]]:
    """PostgreSQL and Redis from scripts/services.sh, migrated: in a throw-away directory, or in `keep`, started
    there if it has none yet and left running (a later run given the same directory reuses its data)."""
    reuse = keep is not None and (keep / "env").is_file()
    svc = keep if keep is not None else Path(tempfile.mkdtemp(prefix="headroom-load."))
    if not reuse:
        subprocess.run([str(REPO / "scripts/services.sh"), "start", str(svc)], check=True, stdout=subprocess.DEVNULL)
    env: dict[str, str] = {}
    for line in (svc / "env").read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[7:].partition("=")
            env[key] = value
    try:
        if not reuse:
            subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=REPO, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL,
                           env={**os.environ, "DATABASE_URL": env["HEADROOM_TEST_DATABASE_URL"]})
        env["svc"] = str(svc)
        yield env
    finally:
        if keep is None:
            subprocess.run([str(REPO / "scripts/services.sh"), "stop", str(svc)], check=False,
                           stdout=subprocess.DEVNULL)
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


def _copy_batch(database_url: str, org_id: str, first: int, count: int) -> dict[str, Any]:
    from tenant_clone import Cloner

    made = Cloner(database_url, uuid.UUID(org_id)).copy(first, count)
    for account in made["accounts"]:
        account["password"] = PASSWORD  # the copy's user has the original's password hash
    return made


def seed_copies(database_url: str, original: dict[str, Any], first: int, count: int,
                batch: int = 25) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`count` copies of the tenant `original` (a seeded account), numbered from `first`, made in PostgreSQL
    (bench/tenant_clone.py) by 2 processes, `batch` copies per transaction; then checked (no copied row names the
    original's ids or another organisation's series)."""
    from sqlalchemy import create_engine, text

    from headroom.platform.db import normalise_database_url
    from tenant_clone import Cloner

    from headroom.platform.db import engine_for, session_scope
    from headroom.sources.demo import service as demo

    # the original brought up to now first (its ingest since it was seeded or last ran): each copy starts from the
    # minute it is made, as a tenant seeded now would
    with session_scope(database_url) as db:
        demo.ingest_demo(db, db.get(demo.Cluster, uuid.UUID(original["cluster_id"])), now=dt.datetime.now(dt.UTC))
    engine_for(database_url).dispose()  # no pooled connection may be inherited by the forked processes
    engine = create_engine(normalise_database_url(database_url))
    with engine.connect() as conn:
        org_id = str(conn.execute(text("SELECT org_id FROM clusters WHERE id = :c"),
                                  {"c": original["cluster_id"]}).scalar_one())
    engine.dispose()
    cloner = Cloner(database_url, uuid.UUID(org_id))  # creates the id maps' tables before the processes share them
    starts = list(range(first, first + count, batch))
    sizes = [min(batch, first + count - a) for a in starts]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        made = list(pool.map(_copy_batch, [database_url] * len(starts), [org_id] * len(starts), starts, sizes))
    wall = time.perf_counter() - started
    t = time.perf_counter()
    # every copy up to 200; past that an even sample of 50 (the check reads every point of the copies it checks)
    sample = None if count <= 200 else list(range(first, first + count, count // 50))
    leaks = cloner.check_copies(sample)
    checked = time.perf_counter() - t
    if any(leaks.values()):
        raise RuntimeError(f"copied rows name the original's ids or another org's series: {leaks}")
    cloner.engine.dispose()
    accounts = [a for m in made for a in m["accounts"]]
    return accounts, {"copies": len(accounts), "of_cluster": original["cluster_id"], "wall_seconds": round(wall, 1),
                      "seconds_per_copy": round(wall / max(1, len(accounts)), 3),
                      "check_seconds": round(checked, 1), "copies_checked": len(sample) if sample else len(accounts),
                      "rows_naming_the_original": sum(leaks.values()),
                      "slowest_tables_first_batch": made[0]["slowest_tables"] if made else {}}


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
    """Every `every` s: the ingest lag of every cluster, the queue depths and the CPU seconds of each component."""

    def __init__(self, database_url: str, redis_url: str, components: dict[str, Any], every: float = 5) -> None:
        super().__init__(daemon=True)
        self.every = every
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
                "lag_p50": statistics.median(lags) if lags else 0.0, "lags": lags, "queues": depths,
                "pg_active": active}

    def run(self) -> None:
        while not self.halt.wait(self.every):
            self.samples.append(self.sample())


def job_totals(redis_url: str) -> Any:
    from headroom.platform.telemetry import RedisJobStats

    return RedisJobStats(redis_url).read()


def job_delta(before: Any, after: Any, name: str) -> dict[str, Any]:
    runs = after.runs.get((name, "succeeded"), 0) - before.runs.get((name, "succeeded"), 0)
    failed = after.runs.get((name, "failed"), 0) - before.runs.get((name, "failed"), 0)
    expired = after.runs.get((name, "expired"), 0) - before.runs.get((name, "expired"), 0)
    seconds = after.seconds.get(name, 0.0) - before.seconds.get(name, 0.0)
    return {"succeeded": runs, "failed": failed, "expired": expired,
            "mean_seconds": round(seconds / runs, 3) if runs else None}


def lag_figures(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The ingest lag over every (cluster, sample) pair of `samples`: p50, p95, max, in seconds. A cluster's lag is
    the age of its newest stored minute's start (its watermark), so it is never under 60 s: a cluster ingested
    the instant each minute ends has lags spread evenly over 60-120 s (p95 117 s). `since_minute_end` is the same
    figures less that minute: how long after the newest stored minute ended its data was still the newest."""
    lags = sorted(x for s in samples for x in s["lags"])
    if not lags:
        return {"p50": None, "p95": None, "max": None, "samples": len(samples)}

    def pct(q: float) -> float:
        return round(lags[min(len(lags) - 1, int(q * len(lags)))], 1)

    return {"p50": pct(0.5), "p95": pct(0.95), "max": round(lags[-1], 1), "samples": len(samples),
            "p50_of_clusters_mean": round(statistics.fmean(s["lag_p50"] for s in samples), 1),
            "since_minute_end": {"p50": round(pct(0.5) - 60, 1), "p95": round(pct(0.95) - 60, 1),
                                 "max": round(lags[-1] - 60, 1)}}


def job_cpu(before: dict[str, float], after: dict[str, float], clusters: int, seconds: float,
            runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Worker CPU seconds by job over a step (bench/load/worker.py counts them): per cluster per minute of the
    step (what ran; a run that expired unrun costs nothing), and per run."""
    per = clusters * seconds / 60
    spent = {k: after[k] - before.get(k, 0.0) for k in sorted(after) if after[k] - before.get(k, 0.0) > 0}
    out: dict[str, Any] = {k: round(v / per, 4) for k, v in spent.items()}
    out["all jobs"] = round(sum(v for k, v in out.items() if not k.endswith("|simulator")), 4)
    out["per_run"] = {k: round(v / runs[k.split("|")[0]]["succeeded"], 4) for k, v in spent.items()
                      if runs.get(k.split("|")[0], {}).get("succeeded")}
    return out


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
    from load.worker import read_cpu, read_replays

    totals, jobs_cpu0, replays0 = job_totals(redis_url), read_cpu(redis_url), read_replays(redis_url)
    cpu0, wall0, machine0 = sampler.cpu(), time.monotonic(), psutil.cpu_times()
    load0 = os.getloadavg()
    first_sample = len(sampler.samples)
    # the advice round, as beat queues it every 15 minutes: one advice.run that fans out one task per cluster; the
    # fleet-score round 5 minutes after it, as its schedule has it (headroom.fleet.jobs), or at the start when the
    # step is shorter than that
    def queue_round(name: str) -> None:
        now = dt.datetime.now(dt.UTC)
        dispatch.enqueue(name, settings, database_url, now_iso=now.isoformat(), expires_seconds=600)

    queue_round("advice.run")
    score_after = FLEET_SCORE_AFTER_SECONDS if cfg.step_seconds > FLEET_SCORE_AFTER_SECONDS else 0
    score_queued = False
    round_started = time.monotonic()
    prefix = work / f"locust-{clusters}-{users}-{len(hosts)}"
    locust = run_locust(hosts, users, cfg.step_seconds, accounts_file, prefix)
    round_seconds = None
    locust_cpu = 0.0  # its CPU seconds, read while it runs (an exited child's are gone)
    while locust.poll() is None:
        if not score_queued and time.monotonic() - round_started >= score_after:
            queue_round("fleet.score")
            score_queued = True
        locust_cpu = max(locust_cpu, _cpu_seconds(_tree(psutil.Process(locust.pid))))
        time.sleep(1)
        if round_seconds is None:
            advice = job_delta(totals, job_totals(redis_url), "advice.run")
            if advice["succeeded"] + advice["failed"] + advice["expired"] >= clusters + 1:
                round_seconds = round(time.monotonic() - round_started, 1)
    wall = time.monotonic() - wall0
    cpu1, machine1 = sampler.cpu(), psutil.cpu_times()
    after, jobs_cpu1, replays1 = job_totals(redis_url), read_cpu(redis_url), read_replays(redis_url)
    samples = sampler.samples[first_sample:]
    busy = (sum(machine1) - machine1.idle - machine1.iowait) - (sum(machine0) - machine0.idle - machine0.iowait)
    return {
        "clusters": clusters,
        "users": users,
        "api_processes": len(hosts),
        "seconds": round(wall, 1),
        "api": locust_stats(prefix) | {"without_login": after_logins(prefix)},
        "advice_round_seconds": round_seconds,
        "started_at": dt.datetime.fromtimestamp(time.time() - wall, dt.UTC).isoformat(timespec="seconds"),
        "jobs": (jobs := {name: job_delta(totals, after, name) for name in sorted({n for n, _ in after.runs})}),
        "worker_cpu_per_cluster_minute": job_cpu(jobs_cpu0, jobs_cpu1, clusters, wall, jobs),
        "ingest_lag_seconds": lag_figures(samples),
        "demo_windows": {k: v - replays0.get(k, 0) for k, v in replays1.items()},
        "queue_depth_max": {q: max((s["queues"][q] for s in samples), default=0) for q in QUEUES},
        "pg_active_max": max((s["pg_active"] for s in samples), default=0),
        "cores": {name: round((cpu1[name] - cpu0[name]) / wall, 2) for name in cpu0}
        | {"locust": round(locust_cpu / wall, 2), "machine": round(busy / wall, 2), "machine_of": psutil.cpu_count(),
           "load_average_1m": round(os.getloadavg()[0], 2),
           "load_average_at_start": [round(x, 2) for x in load0],
           "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
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
    parser.add_argument("--workers", choices=("shared", "split", "compose"), default="shared",
                        help="shared: one worker on every queue; split: ingest/alerts/maintenance apart from advice; "
                             "compose: docker-compose.yml's worker services (worker: ingest, alerts; worker-advice: "
                             "advice, maintenance, email), each in a cgroup with its cpu_shares where it can")
    parser.add_argument("--no-cpu-weights", dest="cpu_weights", action="store_false",
                        help="with --workers compose: leave docker-compose.yml's cpu_shares out (every process "
                             "weighs the same), to compare")
    parser.add_argument("--seed", choices=("full", "copies"), default="full",
                        help="full: every tenant seeded as the product does; copies: one seeded, the rest copied "
                             "in PostgreSQL (bench/tenant_clone.py)")
    parser.add_argument("--services", type=Path,
                        help="a services directory to keep (and reuse when it exists): its data and tenants stay")
    parser.add_argument("--seed-only", action="store_true", help="seed the tenants and stop (with --services)")
    parser.add_argument("--settle-lag", type=float,
                        help="after the warm-up, wait until the p95 ingest lag over clusters is at most this (s)")
    parser.add_argument("--settle-max", type=float, default=900, help="the longest wait for --settle-lag (s)")
    parser.add_argument("--sample-seconds", type=float, default=5, help="how often the lag and CPU are sampled")
    parser.add_argument("--replay", action="store_true",
                        help="the workers replay each demo window they simulated once (bench/load/worker.py)")
    parser.add_argument("--append", action="store_true", help="add this run's steps to --out's recorded ones")
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

    run_config = {"worker_processes": cfg.worker_processes, "workers": cfg.workers,
                  "api_processes": cfg.api_processes, "seed": cfg.seed,
                  "step_seconds": cfg.step_seconds, "warmup_seconds": cfg.warmup_seconds,
                  "settle_lag_seconds": cfg.settle_lag, "sample_seconds": cfg.sample_seconds,
                  "replay": cfg.replay}
    results: dict[str, Any] = {
        "machine": {"cores": psutil.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / 2**30, 1)},
        "config": run_config,
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "seeding": [], "steps": [],
    }
    if cfg.append and cfg.out.is_file():  # earlier runs' steps stay; this run's carry their own config
        results = json.loads(cfg.out.read_text())
        results.setdefault("runs", []).append({"config": run_config, "seeding": [],
                                               "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
    this_run = results["runs"][-1] if cfg.append and "runs" in results else results
    from headroom.jobs import all_jobs
    from headroom.platform.logging import configure_logging

    configure_logging("WARNING", False)  # this script's own enqueue lines would drown its progress
    all_jobs()  # the job table dispatch.enqueue reads
    work = Path(tempfile.mkdtemp(prefix="headroom-load-run."))
    groups: CpuGroups | None = None
    if cfg.workers == "compose" and cfg.cpu_weights and not cfg.seed_only:
        groups = CpuGroups(work.name.rsplit(".", 1)[-1])
        if not groups.available():
            print("cpu weights: not applied (needs root and a writable cgroup tree); every process weighs the same",
                  flush=True)
            groups = None
    run_config["cpu_weights"] = groups is not None
    print(f"working files: {work}", flush=True)
    with services(cfg.services) as env:
        database_url, redis_url = env["HEADROOM_TEST_DATABASE_URL"], env["HEADROOM_TEST_REDIS_URL"]
        henv = headroom_env(database_url, redis_url)
        svc = Path(env["svc"])
        # a kept services directory remembers its tenants (and how they were seeded) for the next run
        accounts: list[dict[str, Any]] = (json.loads((svc / "accounts.json").read_text())
                                          if (svc / "accounts.json").is_file() else [])
        seeded: list[dict[str, Any]] = (json.loads((svc / "seeding.json").read_text())
                                        if (svc / "seeding.json").is_file() else [])
        accounts_file = work / "accounts.json"
        postmaster = next(p for p in psutil.process_iter(["name", "cmdline"])
                          if p.info["name"] == "postgres" and env["svc"] in " ".join(p.info["cmdline"] or []))
        redis_proc = next(p for p in psutil.process_iter(["name", "cmdline"])
                          if "redis-server" in (p.info["name"] or "") and
                          env["HEADROOM_TEST_REDIS_URL"].rsplit(":", 1)[1].split("/")[0]
                          in " ".join(p.info["cmdline"] or []))
        runs = [(n, cfg.api_processes[0]) for n in sorted(cfg.clusters)]
        runs += [(max(cfg.clusters), a) for a in cfg.api_processes[1:]]
        def record_seeding(summary: dict[str, Any], method: str) -> None:
            summary.update(method=method, at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                           load_average=[round(x, 2) for x in os.getloadavg()],
                           database_bytes_after=database_bytes(database_url), clusters_after=len(accounts))
            seeded.append(summary)
            print(f"  {summary}", flush=True)

        for n, api_processes in runs:
            ports = [_free_port() for _ in range(api_processes)]
            hosts = [f"http://127.0.0.1:{p}" for p in ports]
            if n > len(accounts):
                print(f"seeding {n - len(accounts)} tenants ({cfg.seed}) ...", flush=True)
                if cfg.seed == "full" or not accounts:
                    made, summary = seed(database_url, len(accounts), n - len(accounts) if cfg.seed == "full" else 1)
                    accounts.extend(made)
                    record_seeding(summary, "full")
                if n > len(accounts):
                    made, summary = seed_copies(database_url, accounts[0], len(accounts), n - len(accounts))
                    accounts.extend(made)
                    record_seeding(summary, "copies")
                if cfg.services is not None:
                    (svc / "accounts.json").write_text(json.dumps(accounts))
                    (svc / "seeding.json").write_text(json.dumps(seeded, indent=1))
            this_run["seeding"] = seeded
            if cfg.seed_only:
                continue
            # the users browse tenants spread over the whole fleet (originals and copies alike)
            stride = max(1, n // max(cfg.users))
            spread = accounts[:n][::stride] + [a for i, a in enumerate(accounts[:n]) if i % stride]
            accounts_file.write_text(json.dumps(spread))
            # the API's demo fleet off: `serve` would otherwise add the demo account's own cluster
            apis = [start([str(BIN / "headroom"), "serve", "--no-migrate", "--port", str(p)],
                          henv | {"HEADROOM_DEMO_FLEET": "false"}, work / "api.log") for p in ports]
            # shared: one worker on every queue; split: the same processes halved between the per-minute queues and
            # advice; compose: docker-compose.yml's two services, `worker` (ingest, alerts) and `worker-advice`
            # (advice, maintenance, email), 2 processes each
            # compose's services, queues, processes and weights are read from docker-compose.yml itself
            layout = ([WorkerService("worker", QUEUES, cfg.worker_processes, DEFAULT_SHARES)]
                      if cfg.workers == "shared" else
                      [WorkerService("worker", ("ingest", "alerts", "maintenance"),
                                     max(1, cfg.worker_processes // 2), DEFAULT_SHARES),
                       WorkerService("worker-advice", ("advice", "email"), max(1, cfg.worker_processes // 2),
                                     DEFAULT_SHARES)]
                      if cfg.workers == "split" else worker_services())
            workers = [start([sys.executable, str(REPO / "bench/load/worker.py"), "-A", "headroom_worker.celery_app",
                              "worker", "--loglevel=WARNING", "-Q", ",".join(w.queues), f"--concurrency={w.processes}",
                              "--without-gossip", "--without-mingle", "-n", f"load{n}-{api_processes}-{i}@%h"],
                             henv | ({"HEADROOM_LOAD_REPLAY": "1"} if cfg.replay else {}), work / "worker.log")
                       for i, w in enumerate(layout)]
            clock = Clock(database_url, redis_url)
            for h in hosts:
                wait_http(f"{h}/readyz")
            if groups is not None:  # each service in a cgroup of its own with compose's weight, as Docker runs it
                compose_services = compose_file()
                time.sleep(5)  # the workers' pools have forked (a process forked later inherits its group)
                groups.place("api", cpu_shares(compose_services["api"]), [a.pid for a in apis])
                for proc, service in zip(workers, layout, strict=True):
                    groups.place(service.name, service.cpu_shares, [proc.pid])
                groups.place("postgres", cpu_shares(compose_services["postgres"]), [postmaster.pid])
                groups.place("redis", cpu_shares(compose_services["redis"]), [redis_proc.pid])
                this_run.setdefault("cpu_groups", []).append(groups.shares())
                print(f"cpu weights: {groups.shares()}", flush=True)
            components = {
                "api": partial(_trees, [a.pid for a in apis]),
                "workers": partial(_trees, [w.pid for w in workers]),
                **{f"workers {'+'.join(service.queues)}": partial(_trees, [proc.pid])
                   for proc, service in zip(workers, layout, strict=True) if len(layout) > 1},
                "postgres": lambda: _tree(postmaster),
                "redis": lambda: _tree(redis_proc),
            }
            sampler = Sampler(database_url, redis_url, components, every=cfg.sample_seconds)
            clock.start()
            sampler.start()
            try:
                time.sleep(cfg.warmup_seconds)
                settled = settle(sampler, cfg.settle_lag, cfg.settle_max)
                for m in cfg.users:
                    print(f"step: {n} clusters, {m} users, {api_processes} API process(es)", flush=True)
                    result = step(cfg, env, hosts, n, m, accounts_file, sampler, work)
                    result["config"] = run_config
                    result["before_step"] = settled
                    results["steps"].append(result)
                    a = result["api"]["all"]
                    print(f"  p50 {a['p50_ms']} ms, p95 {a['p95_ms']} ms, {a['rps']} req/s, {a['failures']} failed; "
                          f"after logins {result['api']['without_login']}; "
                          f"advice round {result['advice_round_seconds']} s; lag {result['ingest_lag_seconds']}; "
                          f"cores {result['cores']}; jobs {result['jobs']}; "
                          f"cpu {result['worker_cpu_per_cluster_minute']}", flush=True)
                    cfg.out.write_text(json.dumps(results, indent=1) + "\n")
                    settled = None
            finally:
                clock.halt.set()
                sampler.halt.set()
                for proc in [*apis, *workers]:
                    stop(proc)
                if groups is not None:
                    groups.close()
    if cfg.seed_only:  # the services directory keeps the seeding's record; the step run that uses it records it
        print(f"seeded; recorded in {cfg.services}/seeding.json")
        return
    this_run["finished_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    cfg.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"recorded {cfg.out}")


def settle(sampler: Sampler, lag: float | None, most: float) -> dict[str, Any] | None:
    """Wait (at most `most` s) until the newest sample's p95 ingest lag over clusters is at most `lag` s: the
    copies' first ingest brings each from the minute it was copied at. Return the wait and the lag of the last
    2 minutes before the step (None: not asked)."""
    if lag is None:
        return None
    began = time.monotonic()
    while time.monotonic() - began < most:
        if sampler.samples:
            lags = sorted(sampler.samples[-1]["lags"])
            if lags and lags[min(len(lags) - 1, int(0.95 * len(lags)))] <= lag:
                break
        time.sleep(sampler.every)
    recent = [s for s in sampler.samples if s["t"] >= time.time() - 120]
    return {"waited_seconds": round(time.monotonic() - began, 1), "settled": time.monotonic() - began < most,
            "ingest_lag_seconds_last_2_minutes": lag_figures(recent)}


if __name__ == "__main__":
    main()

"""Headroom's own /metrics (docs/operations.md): off without HEADROOM_METRICS_TOKEN, behind it as a bearer token
otherwise; the exposition parsed with prometheus_client's own parser, its families, labels and values checked
against rows written to the real PostgreSQL, messages put in the real Redis and jobs run through the one job
wrapper. No organisation's, cluster's or source's name appears in it (the tenancy case of this org-free route).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from fastapi.testclient import TestClient
from headroom.api.app import create_app
from headroom.platform import telemetry
from headroom.platform.jobs.registry import QUEUES, Job
from headroom.platform.jobs.runner import run_job
from headroom.sources.models import AwsConnection, CollectionSweep, PrometheusSource
from helpers import sign_up
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

TOKEN = "metrics-token-" + "k" * 24


@pytest.fixture()
def metrics_app(app_ctx: Any) -> Any:
    app_ctx.settings = app_ctx.settings.model_copy(update={"metrics_token": _secret(TOKEN)})
    return create_app(app_ctx)


@pytest.fixture()
def broker(app_ctx: Any) -> Any:
    """The app's Redis database (the tests' broker no worker reads), emptied of the queues and job counts."""
    client = redis.Redis.from_url(app_ctx.settings.redis_url)
    keys = [telemetry.JOB_STATS_KEY, *[q + s for q in QUEUES for s in telemetry._PRIORITY_SUFFIXES]]
    client.delete(*keys)
    yield client
    client.delete(*keys)


def _secret(value: str) -> Any:
    from pydantic import SecretStr

    return SecretStr(value)


def _scrape(client: TestClient) -> tuple[str, dict[str, list[Sample]]]:
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    families: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(response.text):
        families.setdefault(family.name, []).extend(family.samples)
    return response.text, families


def _value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [
        s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (name, labels, [s for s in samples if s.name == name])
    return found[0]


def test_metrics_is_off_without_a_token(client: TestClient) -> None:
    response = client.get("/metrics")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_metrics_needs_the_bearer_token(metrics_app: Any) -> None:
    client = TestClient(metrics_app)
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer " + TOKEN[:-1] + "x"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    ok = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and "headroom_queue_depth" in ok.text


def test_a_short_metrics_token_is_refused() -> None:
    from headroom.platform.settings import Settings
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="HEADROOM_METRICS_TOKEN must be at least 16"):
        Settings(HEADROOM_METRICS_TOKEN="short")
    assert Settings(HEADROOM_METRICS_TOKEN="").metrics_token is None  # compose's unset `${X:-}`


def _seed_sources(db: Any, org_id: uuid.UUID, now: dt.datetime) -> tuple[AwsConnection, PrometheusSource]:
    aws = AwsConnection(
        org_id=org_id,
        name="acme-prod-aws-account",
        auth_kind="default_chain",
        external_id="x" * 20,
        regions=["us-east-1"],
        status="ok",
        last_success_at=now - dt.timedelta(seconds=90),
    )
    prom = PrometheusSource(
        org_id=org_id,
        name="acme-prom-source",
        base_url="http://prom.acme.internal:9090",
        status="failing",
        consecutive_failures=4,
    )
    db.add_all([aws, prom])
    db.flush()
    started = now - dt.timedelta(minutes=3)
    db.add_all(
        [
            # An older sweep, and the last finished one (12 s, 7 API calls); a running one (not finished) is ignored.
            CollectionSweep(
                org_id=org_id,
                source_kind="aws",
                source_id=aws.id,
                kind="incremental",
                started_at=started - dt.timedelta(minutes=1),
                finished_at=started,
                api_calls=99,
            ),
            CollectionSweep(
                org_id=org_id,
                source_kind="aws",
                source_id=aws.id,
                kind="incremental",
                started_at=started,
                finished_at=started + dt.timedelta(seconds=12),
                api_calls=7,
                points_written=1234,
            ),
            CollectionSweep(
                org_id=org_id,
                source_kind="aws",
                source_id=aws.id,
                kind="incremental",
                started_at=now - dt.timedelta(seconds=5),
                finished_at=None,
                api_calls=1,
            ),
            CollectionSweep(
                org_id=org_id,
                source_kind="aws",
                source_id=aws.id,
                kind="backfill",
                started_at=now - dt.timedelta(seconds=4),
                finished_at=now,
                api_calls=500,
            ),
        ]
    )
    db.commit()
    return aws, prom


def _fail(*_: Any, **__: Any) -> dict[str, Any]:
    raise RuntimeError("the test job fails")


def test_the_exposition_reports_the_deployment(
    metrics_app: Any, app_ctx: Any, sessions: Any, broker: Any, clock: Any
) -> None:
    client = TestClient(metrics_app, raise_server_exceptions=False)
    # Source counts are over the whole database: other test files may have committed sources of their own before
    # this one (on a shared xdist worker's database), so the counts are judged against a scrape taken first.
    _, before = _scrape(client)
    owner = sign_up(client, org="Zebra Confidential Holdings")
    with sessions() as db:
        aws, prom = _seed_sources(db, uuid.UUID(owner.org_id), clock())
    cluster = owner.post("/api/v1/clusters", json={"name": "zebra-secret-cluster", "tikv_version": "v8.5.1"})
    assert cluster.status_code == 201, cluster.text
    cluster_id = cluster.json()["id"]
    assert owner.get(f"/api/v1/clusters/{cluster_id}").status_code == 200
    assert owner.get(f"/api/v1/clusters/{uuid.uuid4()}").status_code == 404
    # Three waiting advice jobs (two of priority 0, one of priority 3) and one ingest job.
    broker.lpush("advice", b"m1", b"m2")
    broker.lpush("advice\x06\x163", b"m3")
    broker.lpush("ingest", b"m4")
    settings = app_ctx.settings
    ok_job = Job(
        name="test.ok", queue="maintenance", schedule=None, run=lambda *_a, **_k: {}, description="ok"
    )
    failing_job = Job(name="test.fail", queue="maintenance", schedule=None, run=_fail, description="fails")
    run_job(ok_job, "unused://", settings, clock())
    run_job(ok_job, "unused://", settings, clock())
    with pytest.raises(RuntimeError):
        run_job(failing_job, "unused://", settings, clock())

    text, families = _scrape(client)

    aws_labels = {"source_kind": "aws", "source_id": str(aws.id)}
    prom_labels = {"source_kind": "prometheus", "source_id": str(prom.id)}
    lag = families["headroom_source_ingest_lag_seconds"]
    assert _value(lag, "headroom_source_ingest_lag_seconds", **aws_labels) == 90
    assert not [s for s in lag if s.labels["source_id"] == str(prom.id)]  # never succeeded: no lag, no zero
    failures = families["headroom_source_consecutive_failures"]
    assert _value(failures, "headroom_source_consecutive_failures", **prom_labels) == 4
    def sources(scrape: dict[str, list[Sample]], kind: str, status: str) -> float:
        return sum(x.value for x in scrape.get("headroom_sources", [])
                   if x.labels.get("source_kind") == kind and x.labels.get("status") == status)

    assert sources(families, "prometheus", "failing") == sources(before, "prometheus", "failing") + 1
    assert sources(families, "aws", "ok") == sources(before, "aws", "ok") + 1
    assert (
        _value(
            families["headroom_sweep_last_duration_seconds"],
            "headroom_sweep_last_duration_seconds",
            **aws_labels,
        )
        == 12
    )
    assert (
        _value(families["headroom_sweep_last_api_calls"], "headroom_sweep_last_api_calls", **aws_labels) == 7
    )
    assert (
        _value(
            families["headroom_sweep_last_points_written"], "headroom_sweep_last_points_written", **aws_labels
        )
        == 1234
    )
    assert _value(families["headroom_sweep_last_failed"], "headroom_sweep_last_failed", **aws_labels) == 0

    depth = families["headroom_queue_depth"]
    assert {s.labels["queue"]: s.value for s in depth} == {
        q: {"advice": 3, "ingest": 1}.get(q, 0) for q in QUEUES
    }
    assert "headroom_queue_unacked" in families

    runs = families["headroom_job_runs"]
    assert _value(runs, "headroom_job_runs_total", task="test.ok", outcome="succeeded") == 2
    assert _value(runs, "headroom_job_runs_total", task="test.fail", outcome="failed") == 1
    durations = families["headroom_job_duration_seconds"]
    assert _value(durations, "headroom_job_duration_seconds_count", task="test.ok") == 2
    assert _value(durations, "headroom_job_duration_seconds_bucket", task="test.fail", le="+Inf") == 1
    last = families["headroom_job_last_success_timestamp_seconds"]
    assert [s.labels["task"] for s in last] == ["test.ok"]

    http = families["headroom_http_request_duration_seconds"]
    routes = {s.labels["route"] for s in http}
    assert "/api/v1/clusters/{cluster_id}" in routes and "/api/v1/auth/signup" in routes
    assert (
        _value(
            http,
            "headroom_http_request_duration_seconds_count",
            route="/api/v1/clusters/{cluster_id}",
            method="GET",
            status_class="4xx",
        )
        >= 1
    )
    assert cluster_id not in text  # ids in paths never become label values
    assert all(s.value == 0 for s in families["headroom_scrape_error"])
    assert "process_resident_memory_bytes" in text
    for name in (
        "Zebra",
        "zebra-secret-cluster",
        "acme-prod-aws-account",
        "acme-prom-source",
        "prom.acme.internal",
        owner.session["user"]["email"],
    ):
        assert name not in text, name


def test_an_unreachable_broker_is_reported_not_fatal(metrics_app: Any, app_ctx: Any) -> None:
    app_ctx.settings = app_ctx.settings.model_copy(update={"redis_url": "redis://127.0.0.1:9/0"})
    client = TestClient(create_app(app_ctx))
    _, families = _scrape(client)
    errors = {s.labels["part"]: s.value for s in families["headroom_scrape_error"]}
    assert errors == {"database": 0, "queues": 1, "jobs": 1}
    assert "headroom_sources" in families and "headroom_queue_depth" not in families


def test_without_redis_the_process_counts_its_own_jobs(metrics_app: Any, app_ctx: Any, clock: Any) -> None:
    app_ctx.settings = app_ctx.settings.model_copy(update={"redis_url": None})
    client = TestClient(create_app(app_ctx))
    before = telemetry.job_stats(None).read().runs.get(("test.local", "succeeded"), 0)
    job = Job(name="test.local", queue="advice", schedule=None, run=lambda *_a, **_k: {}, description="local")
    run_job(job, "unused://", app_ctx.settings, clock())
    _, families = _scrape(client)
    assert (
        _value(
            families["headroom_job_runs"], "headroom_job_runs_total", task="test.local", outcome="succeeded"
        )
        == before + 1
    )
    assert {s.labels["queue"] for s in families["headroom_queue_depth"]} == set(QUEUES)
    assert "headroom_queue_unacked" not in families


# --- the operations dashboard (deploy/grafana/headroom-operations.json) against a real Prometheus ----------------

DASHBOARD = Path(__file__).resolve().parents[3] / "deploy" / "grafana" / "headroom-operations.json"
METRIC_NAME = re.compile(r"\b((?:headroom|process)_[a-z_]+)\b")


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v.get("definition")]
    return exprs


def _alert_exprs() -> list[str]:
    """The expressions of the alert rules docs/operations.md suggests (its one YAML block)."""
    import yaml

    text = (DASHBOARD.parents[2] / "docs" / "operations.md").read_text()
    block = text.split("```yaml\ngroups:", 1)[1].split("```", 1)[0]
    rules = yaml.safe_load("groups:" + block)["groups"][0]["rules"]
    return [str(rule["expr"]) for rule in rules]


def test_the_suggested_alert_rules_pass_promtool(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed")
    text = (DASHBOARD.parents[2] / "docs" / "operations.md").read_text()
    rules = tmp_path / "headroom-rules.yml"
    rules.write_text("groups:" + text.split("```yaml\ngroups:", 1)[1].split("```", 1)[0])
    checked = subprocess.run(
        [promtool, "check", "rules", str(rules)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 9 rules found" in checked.stdout, checked.stdout


def _as_promql(expr: str) -> str:
    """A dashboard expression with Grafana's variables filled in (all instances, a 1-minute rate window)."""
    return expr.replace("$__rate_interval", "1m").replace("$instance", ".*")


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)


@contextmanager
def _prometheus_scraping(target: str, tmp_path: Path) -> Iterator[str]:
    """A real Prometheus scraping `target`'s /metrics every second with the bearer token (as docs/operations.md
    tells operators to), under the scrape job name `headroom`."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (scripts/services.sh starts one when it is)")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
        f"  - job_name: headroom\n    authorization:\n      credentials: {TOKEN}\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(30)


def _query(prometheus: str, promql: str) -> dict[str, Any]:
    response = httpx.get(f"{prometheus}/api/v1/query", params={"query": promql}, timeout=10)
    body: dict[str, Any] = response.json()
    return body


def test_the_dashboard_queries_run_against_a_real_prometheus_scraping_headroom(
    metrics_app: Any, app_ctx: Any, sessions: Any, broker: Any, clock: Any, tmp_path: Path
) -> None:
    """Every expression of the dashboard (and its variable query) and of the alerts docs/operations.md suggests
    names only metrics the exposition has, and is
    evaluated without error by a real Prometheus that scrapes a running Headroom with the bearer token; the core
    panels return series (the scrape job's `job` label does not clash with the jobs' `task` label)."""
    client = TestClient(metrics_app)
    owner = sign_up(client)
    with sessions() as db:
        _seed_sources(db, uuid.UUID(owner.org_id), clock())
    broker.lpush("advice", b"m1")
    ok_job = Job(name="advice.run", queue="advice", schedule=None, run=lambda *_a, **_k: {}, description="ok")
    run_job(ok_job, "unused://", app_ctx.settings, clock())
    assert owner.get("/api/v1/clusters").status_code == 200
    text, _ = _scrape(client)
    exposed = {s.name for f in text_string_to_metric_families(text) for s in f.samples}

    panels = _dashboard_exprs()
    exprs = panels + _alert_exprs()
    assert len(panels) >= 20 and len(exprs) >= 30
    for expr in exprs:
        for name in METRIC_NAME.findall(expr):
            assert name in exposed, (name, expr)

    with _serving(metrics_app) as target, _prometheus_scraping(target, tmp_path) as prometheus:
        deadline = time.monotonic() + 60
        scrapes = 0.0
        while time.monotonic() < deadline and scrapes < 4:
            time.sleep(0.5)
            with contextlib.suppress(httpx.HTTPError):
                result = _query(prometheus, 'count_over_time(up{job="headroom"}[1m])')["data"]["result"]
                scrapes = float(result[0]["value"][1]) if result else 0.0
        up = _query(prometheus, 'up{job="headroom"}')["data"]["result"]
        assert up and up[0]["value"][1] == "1", up
        results = {}
        for expr in exprs:
            if expr.startswith("label_values("):
                continue  # Grafana's own function; the series it reads is checked below
            body = _query(prometheus, _as_promql(expr))
            assert body["status"] == "success", (expr, body)
            results[expr] = body["data"]["result"]
        assert _query(prometheus, "headroom_scrape_error")["data"]["result"]
        must_have_series = [
            "max by (queue) (headroom_queue_depth",
            "topk(10, max by (source_kind, source_id) (headroom_source_ingest_lag_seconds",
            "max by (source_kind, status) (headroom_sources",
            "max(headroom_sweep_last_duration_seconds",
            "sum by (status_class) (rate(headroom_http_request_duration_seconds_count",
            "time() - max by (task) (headroom_job_last_success_timestamp_seconds",
            "process_resident_memory_bytes",
            "sum by (target, reason) (rate(headroom_db_reads_total",
        ]
        for start in must_have_series:
            matching = [e for e in panels if e.startswith(start)]
            assert matching, start
            assert all(results[e] for e in matching), (start, {e: results[e] for e in matching})
        last_advice = _query(prometheus, 'headroom_job_last_success_timestamp_seconds{task="advice.run"}')
        assert last_advice["data"]["result"][0]["metric"]["job"] == "headroom"

"""POST /clusters/{id}/advise under load and with Redis down: one queued run per
cluster, a per-org limit on new runs, a bounded pool without Redis, and a clear 503 (within seconds, nothing
recorded) when the queue cannot be reached, whether Redis refuses connections or accepts and never answers."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from dead_redis import KINDS, dead_redis_url
from fastapi.testclient import TestClient
from headroom.accounts.models import AuditLog, User
from headroom.api.app import create_app
from headroom.api.deps import AppContext
from headroom.findings import advice_runs
from headroom.findings.models import AdviceRun
from headroom.jobs import job
from headroom.platform.db import session_factory, session_scope
from headroom.platform.jobs import dispatch
from headroom.platform.ratelimit import MemoryRateLimiter, RedisRateLimiter
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings
from helpers import Actor, sign_up
from sqlalchemy import func, select, text

ADVISE = "/api/v1/clusters/{}/advise"


def _cluster(actor: Actor, name: str = "prod") -> str:
    response = actor.post("/api/v1/clusters", json={"name": name, "tikv_version": "v8.5.1"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _messages(settings: Settings) -> list[dict[str, Any]]:
    """The messages waiting in the broker's advice queue (no worker reads the tests' broker db)."""
    assert settings.redis_url
    client = redis.Redis.from_url(settings.redis_url)
    return [json.loads(m) for key in client.scan_iter(match="advice*") if client.type(key) == b"list"
            for m in client.lrange(key, 0, -1)]


def _queued_task_ids(settings: Settings) -> list[str]:
    return [m["headers"]["id"] for m in _messages(settings)]


def _audited(db: Any, cluster_id: str) -> int:
    return int(db.scalar(select(func.count()).select_from(AuditLog).where(
        AuditLog.action == "cluster.advise_requested", AuditLog.target_id == cluster_id)))


def test_a_second_request_gets_the_queued_run_and_queues_nothing(client: Any, db: Any, settings: Settings,
                                                                  clock: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    first = owner.post(ADVISE.format(cid))
    assert first.status_code == 202, first.text
    task_id = first.json()["task_id"]
    assert first.json() == {"task_id": task_id, "job": "advice.run", "already_queued": False}
    for _ in range(20):
        again = owner.post(ADVISE.format(cid))
        assert again.status_code == 202
        assert again.json() == {"task_id": task_id, "job": "advice.run", "already_queued": True}
    assert _queued_task_ids(settings).count(task_id) == 1
    assert _audited(db, cid) == 1

    # A run not released after ADVICE_RUN_STALE lost its worker: the next request queues a new one.
    clock.advance(seconds=advice_runs.ADVICE_RUN_STALE.total_seconds() + 1)
    later = owner.post(ADVISE.format(cid)).json()
    assert later["already_queued"] is False and later["task_id"] != task_id
    assert later["task_id"] in _queued_task_ids(settings)


def test_new_runs_are_limited_per_org_and_other_orgs_are_not(client: Any, make_client: Any) -> None:
    busy = sign_up(client)
    clusters = [_cluster(busy, f"c{i}") for i in range(advice_runs.ADVISE_PER_ORG + 1)]
    for cid in clusters[:-1]:
        assert busy.post(ADVISE.format(cid)).status_code == 202
    limited = busy.post(ADVISE.format(clusters[-1]))
    assert limited.status_code == 429
    error = limited.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["message"].startswith(f"This organisation queued {advice_runs.ADVISE_PER_ORG} advice runs in the "
                                       f"last {advice_runs.ADVISE_WINDOW_SECONDS} seconds")
    assert 1 <= int(limited.headers["Retry-After"]) <= advice_runs.ADVISE_WINDOW_SECONDS
    # Asking again for a cluster already queued is not a new run: it is answered, not limited.
    assert busy.post(ADVISE.format(clusters[0])).json()["already_queued"] is True
    other = sign_up(make_client())
    assert other.post(ADVISE.format(_cluster(other))).status_code == 202


# --- the job releases its run ----------------------------------------------------------------------------------


@pytest.fixture()
def committed(database_url: str, settings: Settings, clock: Any, tmp_path: Any) -> Iterator[Any]:
    """An app whose requests really commit (the job connects on its own), and the org it created removed after."""
    from headroom.platform.mail import OutboxMailer

    ctx = AppContext(settings=settings, sessions=session_factory(database_url), rate_limiter=MemoryRateLimiter(),
                     secret_box=SecretBox(settings.secret_key), clock=clock, mailer=OutboxMailer(tmp_path / "outbox"))
    emails: list[str] = []
    with TestClient(create_app(ctx), raise_server_exceptions=False) as test_client:
        yield test_client, emails
    with session_scope(database_url) as db:
        for email in emails:
            user = db.scalar(select(User).where(User.email == email))
            if user is not None:
                db.execute(text("DELETE FROM organizations WHERE id IN "
                                "(SELECT org_id FROM memberships WHERE user_id = :u)"), {"u": user.id})
                db.delete(user)


def test_after_the_job_ends_a_new_request_queues_again(committed: Any, database_url: str,
                                                       settings: Settings, clock: Any) -> None:
    test_client, emails = committed
    email = f"advise-{uuid.uuid4().hex[:8]}@example.com"
    emails.append(email)
    owner = sign_up(test_client, email=email)
    cid = _cluster(owner)
    first = owner.post(ADVISE.format(cid)).json()
    assert owner.post(ADVISE.format(cid)).json()["already_queued"] is True

    # What the worker does with the queued message: the job, by its registered name, with the task's kwargs.
    message = [m for m in _messages(settings) if m["headers"]["id"] == first["task_id"]]
    assert len(message) == 1
    kwargs = json.loads(_body(message[0]))[1]
    assert kwargs == {"cluster_id": cid, "run_id": first["task_id"]}
    summary = job("advice.run").run(database_url, settings, clock.now, **kwargs)
    assert [c["cluster_id"] for c in summary["clusters"]] == [cid] and summary["failed"] == 0
    with session_scope(database_url) as db:
        assert db.scalar(select(AdviceRun).where(AdviceRun.cluster_id == uuid.UUID(cid))) is None

    second = owner.post(ADVISE.format(cid)).json()
    assert second["already_queued"] is False and second["task_id"] != first["task_id"]


def _body(message: dict[str, Any]) -> str:
    import base64

    return base64.b64decode(message["body"]).decode()


# --- without Redis: a bounded pool -----------------------------------------------------------------------------


def _threads() -> int:
    return sum(1 for t in threading.enumerate() if t.is_alive())


def _wait_idle(deadline_s: float = 120) -> None:
    end = time.monotonic() + deadline_s
    while dispatch.inprocess_pending() and time.monotonic() < end:
        time.sleep(0.1)
    assert dispatch.inprocess_pending() == 0


def test_without_redis_jobs_share_a_bounded_pool(engine: Any, database_url: str) -> None:
    """100 jobs queued while every one of them is blocked (the clusters table is locked): at most
    INPROCESS_WORKERS threads are started, not one per call."""
    settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32, REDIS_URL=None)
    _wait_idle()
    before = _threads()
    with engine.connect() as lock:
        lock.execute(text("LOCK TABLE clusters IN ACCESS EXCLUSIVE MODE"))
        for _ in range(100):
            dispatch.enqueue("advice.run", settings, database_url, cluster_id=str(uuid.uuid4()))
        time.sleep(1.0)  # let any thread started per call reach the lock
        started = _threads() - before
        pending = dispatch.inprocess_pending()
        lock.rollback()
    assert started <= dispatch.INPROCESS_WORKERS
    assert pending == 100
    _wait_idle()


def test_without_redis_a_hundred_requests_start_one_run(client: Any, app_ctx: Any) -> None:
    app_ctx.settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                                REDIS_URL=None)
    owner = sign_up(client)
    cid = _cluster(owner)
    _wait_idle()
    before = _threads()
    answers = [owner.post(ADVISE.format(cid)) for _ in range(100)]
    assert {r.status_code for r in answers} == {202}
    assert len({r.json()["task_id"] for r in answers}) == 1
    assert sum(r.json()["already_queued"] is False for r in answers) == 1
    assert _threads() - before <= dispatch.INPROCESS_WORKERS
    _wait_idle()


# --- Redis down ------------------------------------------------------------------------------------------------


@pytest.fixture(params=KINDS)
def dead_redis(request: Any) -> Iterator[str]:
    yield from dead_redis_url(request.param)


@pytest.mark.parametrize("limiter", ["redis", "memory"])
def test_redis_down_gives_a_clear_503_within_seconds_and_records_nothing(
    client: Any, sessions: Any, db: Any, clock: Any, dead_redis: str, limiter: str
) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32, REDIS_URL=dead_redis)
    # As production wires it (the limiter in the same Redis), and with a limiter that does not need Redis, so the
    # publish itself is what fails.
    ctx = AppContext(settings=settings, sessions=sessions, secret_box=SecretBox(settings.secret_key), clock=clock,
                     rate_limiter=RedisRateLimiter(dead_redis) if limiter == "redis" else MemoryRateLimiter())
    with TestClient(create_app(ctx), raise_server_exceptions=False) as down:
        down.cookies = client.cookies
        started = time.monotonic()
        response = Actor(down, owner.session).post(ADVISE.format(cid))
        took = time.monotonic() - started
    assert response.status_code == 503, response.text
    assert response.json() == {"error": {
        "code": "queue_unavailable",
        "message": "The job queue (Redis) is unreachable; advice was not queued. Try again shortly.",
        "details": None,
    }}
    assert int(response.headers["Retry-After"]) > 0
    assert took < 12, took  # publish timeout 2 s, one retry; was 19 s (refused) and unbounded (never answers)
    assert db.scalar(select(AdviceRun).where(AdviceRun.cluster_id == uuid.UUID(cid))) is None
    assert _audited(db, cid) == 0
    # Once the queue is back, the same request is queued.
    assert owner.post(ADVISE.format(cid)).json()["already_queued"] is False


def test_advise_is_declared_503_in_the_openapi(app: Any) -> None:
    responses = app.openapi()["paths"]["/api/v1/clusters/{cluster_id}/advise"]["post"]["responses"]
    assert set(responses) >= {"202", "429", "503"}


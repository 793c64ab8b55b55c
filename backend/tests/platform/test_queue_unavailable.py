"""The history-import (backfill) routes with Redis down: a 503 within seconds that says what
stays recorded, instead of a 202 whose job was never queued (after 19 s, or a request that never ends).
Connecting an AWS account still succeeds (the connection exists; the collection sweep queues its import)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import pytest
from dead_redis import KINDS, dead_redis_url
from fastapi.testclient import TestClient
from headroom.api.app import create_app
from headroom.api.deps import AppContext
from headroom.platform.jobs.dispatch import BACKFILL_NOT_QUEUED
from headroom.platform.ratelimit import RedisRateLimiter
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings
from helpers import Actor, sign_up

# dispatch.PUBLISH_TIMEOUT_SECONDS is 2 s with one retry; generous for a shared, busy machine.
BOUND_SECONDS = 12


@pytest.fixture(params=KINDS)
def down(request: Any, sessions: Any, clock: Any, aws_endpoint_url: str) -> Iterator[TestClient]:
    """A client of the same app and database whose Redis (queue and rate limiter) is down (AWS: the moto server)."""
    for url in dead_redis_url(request.param):
        settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32, REDIS_URL=url,
                            HEADROOM_AWS_ENDPOINT_URL=aws_endpoint_url)
        ctx = AppContext(settings=settings, sessions=sessions, rate_limiter=RedisRateLimiter(url),
                         secret_box=SecretBox(settings.secret_key), clock=clock)
        with TestClient(create_app(ctx), raise_server_exceptions=False) as client:
            yield client


def _as(owner: Actor, client: TestClient) -> Actor:
    client.cookies = owner.client.cookies
    return Actor(client, owner.session)


def _timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def _assert_not_queued(response: Any, took: float) -> None:
    assert response.status_code == 503, response.text
    assert response.json() == {"error": {
        "code": "queue_unavailable",
        "message": "The job queue (Redis) is unreachable; the history import was not queued. Try again shortly.",
        "details": {"recorded": BACKFILL_NOT_QUEUED},
    }}
    assert int(response.headers["Retry-After"]) > 0
    assert took < BOUND_SECONDS, took


AWS_BODY = {"name": "keys", "auth_kind": "static_keys", "regions": ["us-east-1"],
            "access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "never-shown"}


def test_aws_backfill_with_redis_down_is_a_503_and_stays_recorded(client: Any, down: TestClient) -> None:
    owner = sign_up(client)
    created = owner.post("/api/v1/sources/aws", json=AWS_BODY)
    assert created.status_code == 201, created.text
    cid = created.json()["id"]
    response, took = _timed(lambda: _as(owner, down).post(f"/api/v1/sources/aws/{cid}/backfill", json={"days": 2}))
    _assert_not_queued(response, took)
    progress = owner.get(f"/api/v1/sources/aws/{cid}/backfill").json()
    assert (progress["state"], progress["days"]) == ("queued", 2)


def test_connecting_aws_with_redis_down_still_creates_the_connection(client: Any, down: TestClient) -> None:
    owner = sign_up(client)
    # Connecting tests the account against AWS (the moto server) first, which takes as long as the machine's load
    # makes it: the same request with Redis up, just before, is the anchor, and Redis being down may add at most the
    # bound to it (a publish that never gave up took 19 s more, or never ended).
    anchor, with_redis = _timed(lambda: owner.post("/api/v1/sources/aws", json={**AWS_BODY, "name": "anchor"}))
    assert anchor.status_code == 201, anchor.text
    response, took = _timed(lambda: _as(owner, down).post("/api/v1/sources/aws", json=AWS_BODY))
    assert response.status_code == 201, response.text
    assert took - with_redis < BOUND_SECONDS, (took, with_redis)
    progress = owner.get(f"/api/v1/sources/aws/{response.json()['id']}/backfill").json()
    assert progress["state"] == "queued"


def test_prometheus_backfill_with_redis_down_is_a_503_and_stays_recorded(client: Any, down: TestClient) -> None:
    owner = sign_up(client)
    cluster = owner.post("/api/v1/clusters", json={"name": "prod", "tikv_version": "v8.5.1"}).json()
    source = owner.post("/api/v1/sources/prometheus", json={
        "name": "prom", "base_url": "http://127.0.0.1:9", "cluster_id": cluster["id"]})
    assert source.status_code == 201, source.text
    sid = source.json()["id"]
    response, took = _timed(lambda: _as(owner, down).post(f"/api/v1/sources/prometheus/{sid}/backfill",
                                                          json={"days": 1}))
    _assert_not_queued(response, took)
    progress = owner.get(f"/api/v1/sources/prometheus/{sid}/backfill").json()
    span = dt.datetime.fromisoformat(progress["range_end_at"]) - dt.datetime.fromisoformat(progress["range_start_at"])
    assert (progress["status"], span) == ("queued", dt.timedelta(days=1))

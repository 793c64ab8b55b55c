"""PostgreSQL stopped under a running API: every request answers 503 `database_unavailable` with Retry-After (as
/readyz answers 503), the log gets one line for the outage instead of a traceback per request, and the API serves
again as soon as PostgreSQL is back. Against a real PostgreSQL of its own (a copy of the test database made with
pg_basebackup), stopped with pg_ctl, and the app built as `headroom serve` builds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from fastapi.testclient import TestClient
from headroom.api.app import DATABASE_RETRY_AFTER_SECONDS, build_context, create_app
from headroom.platform.db import OutageLog
from headroom.platform.ratelimit import MemoryRateLimiter
from headroom.platform.settings import Settings
from helpers import sign_up
from pg_tools import PgCopy, standalone_copy
from xdist_workers import redis_db


@pytest.fixture()
def stoppable(database_url: str, redis_url: str, tmp_path: Path) -> Iterator[tuple[PgCopy, Any]]:
    with standalone_copy(database_url) as copy:
        settings = Settings(
            HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
            REDIS_URL=redis_db(redis_url, 5), HEADROOM_DATA_DIR=str(tmp_path),
        )
        ctx = build_context(settings, copy.url)
        ctx.rate_limiter = MemoryRateLimiter()
        yield copy, create_app(ctx)


def test_a_stopped_database_answers_503_with_retry_after_and_logs_once(stoppable: tuple[PgCopy, Any]) -> None:
    copy, app = stoppable
    client = TestClient(app, raise_server_exceptions=False)
    actor = sign_up(client)
    assert actor.get("/api/v1/clusters").status_code == 200

    copy.stop()
    with structlog.testing.capture_logs() as logs:
        answers = [actor.get("/api/v1/clusters") for _ in range(3)]
        answers.append(actor.post("/api/v1/clusters", json={"name": "while-down", "tikv_version": "v8.5.1"}))
        ready = client.get("/readyz")
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "database_unavailable"
        assert answer.headers["Retry-After"] == str(DATABASE_RETRY_AFTER_SECONDS)
    assert ready.status_code == 503
    events = [entry["event"] for entry in logs]
    assert events.count("api.database_unavailable") == 1, events
    assert "api.unhandled_error" not in events
    assert not any(entry.get("exc_info") for entry in logs), "no traceback for an outage"

    copy.start()
    back = actor.get("/api/v1/clusters")
    assert back.status_code == 200, back.text
    assert "while-down" not in {c["name"] for c in back.json()["items"]}


def test_an_outage_is_logged_once_and_the_next_one_again() -> None:
    now = [0.0]
    outages = OutageLog(quiet_seconds=30, clock=lambda: now[0])
    assert outages.record() == (True, 0)
    for step in (1.0, 5.0, 20.0):  # inside the outage: failures a few seconds apart
        now[0] += step
        assert outages.record() == (False, 0)
    now[0] += 31.0  # quiet for longer than 30 s: the next failure is a new outage, and says what the last one hid
    assert outages.record() == (True, 3)

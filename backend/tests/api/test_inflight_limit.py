"""At most as many API requests run at once as the database pool has connections, on as many threads; the others
wait without a thread, then get a 503 that says so (platform/inflight.py: the FastAPI + SQLAlchemy pool deadlock
the load test found at 100 users)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from headroom.platform.inflight import InFlightLimit


class _Counting:
    """An ASGI app that answers after `delay` s and records how many requests it ran at once."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.running = 0
        self.peak = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(self.delay)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
        finally:
            self.running -= 1


def _run(app: Any, paths: list[str]) -> list[httpx.Response]:
    async def go() -> list[httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return list(await asyncio.gather(*(client.get(p) for p in paths)))

    return asyncio.run(go())


def test_no_more_than_the_limit_run_at_once_and_the_rest_wait_their_turn() -> None:
    inner = _Counting(delay=0.05)
    responses = _run(InFlightLimit(inner, limit=3, wait_seconds=10), ["/api/v1/x"] * 20)
    assert [r.status_code for r in responses] == [200] * 20
    assert inner.peak == 3


def test_a_request_that_waits_too_long_gets_a_503_saying_when_to_retry() -> None:
    inner = _Counting(delay=0.5)
    responses = _run(InFlightLimit(inner, limit=1, wait_seconds=0.1), ["/api/v1/x"] * 3)
    codes = sorted(r.status_code for r in responses)
    assert codes == [200, 503, 503]
    busy = next(r for r in responses if r.status_code == 503)
    assert busy.headers["retry-after"] == "5"
    assert busy.json()["error"]["code"] == "server_busy"
    assert "Try again in 5 s" in busy.json()["error"]["message"]


def test_the_event_loops_worker_threads_are_as_many_as_the_requests_admitted() -> None:
    import anyio.to_thread

    seen: list[float] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(anyio.to_thread.current_default_thread_limiter().total_tokens)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    _run(InFlightLimit(app, limit=7), ["/api/v1/x"])
    assert seen == [7]


def test_paths_outside_the_api_are_not_queued() -> None:
    inner = _Counting(delay=0.05)
    responses = _run(InFlightLimit(inner, limit=1, wait_seconds=0.01), ["/healthz"] * 5)
    assert [r.status_code for r in responses] == [200] * 5 and inner.peak == 5


def test_the_app_limits_requests_to_its_database_pool(app: Any) -> None:
    from headroom.platform.db import POOL_CONNECTIONS, engine_for

    limits = [m for m in app.user_middleware if m.cls is InFlightLimit]
    assert len(limits) == 1 and limits[0].kwargs["limit"] == POOL_CONNECTIONS
    engine = engine_for("postgresql+psycopg://u@127.0.0.1:1/x")  # built lazily: no connection is made
    assert engine.pool.size() + engine.pool._max_overflow == POOL_CONNECTIONS  # type: ignore[attr-defined]

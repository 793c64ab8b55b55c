"""At most as many API requests in flight per process as its database pool has connections; the rest wait in
the event loop, then get a 503 (docs/operations.md, "Requests in flight").

Why: FastAPI runs sync routes and their `yield` dependencies (the request's database session) on a pool of 40
threads, while the SQLAlchemy pool has 15 connections (platform/db.py). With more than 15 requests at once,
threads block waiting for a connection while the threads that would close finished sessions are queued behind
them: no request progresses until the pool's 30-second timeout fails them (fastapi/fastapi#3205). The load test
(bench/load_test.py, 100 users on one API process) hit exactly that: p95 62 s and 500s with the process at a third
of a core. Queued here instead, a request holds no thread and no connection until it may run.
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Receive, Scope, Send

# Seconds a request may wait for its turn before a 503 (our choice, docs/operations.md): long enough to ride out a
# burst (a page's 8 requests from each of dozens of users), shorter than a load balancer's 60-s idle timeout.
WAIT_SECONDS = 15.0
RETRY_AFTER_SECONDS = 5


class InFlightLimit:
    """Run at most `limit` requests whose path starts with `prefix` at once; others wait up to `wait_seconds`."""

    def __init__(self, app: ASGIApp, limit: int, *, prefix: str = "/api/", wait_seconds: float = WAIT_SECONDS) -> None:
        self.app = app
        self.limit = limit
        self.prefix = prefix
        self.wait_seconds = wait_seconds
        # One semaphore per event loop (a server has one; tests' clients may start several).
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.limit))
        return self._slots[1]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        slots = self._semaphore()
        try:
            await asyncio.wait_for(slots.acquire(), self.wait_seconds)
        except TimeoutError:
            await _busy(send, self.wait_seconds)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            slots.release()


async def _busy(send: Send, waited: float) -> None:
    body = json.dumps({"error": {
        "code": "server_busy",
        "message": f"The server is answering as many requests as it can; this one waited {waited:.0f} s. "
                   f"Try again in {RETRY_AFTER_SECONDS} s.",
        "details": None,
    }}).encode()
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(RETRY_AFTER_SECONDS).encode())]})
    await send({"type": "http.response.body", "body": body})

"""At most as many API requests in flight per process as its database pool has connections, on as many worker
threads; the rest wait in the event loop, then get a 503 (docs/operations.md, "Requests in flight").

Why: FastAPI runs sync routes and their `yield` dependencies (the request's database session) on a pool of
worker threads. With more threads than pool connections, threads block waiting for a connection while the
threads that would close finished sessions are queued behind them: no request progresses until the pool's
30-second timeout fails them (fastapi/fastapi#3205). The load test (bench/load_test.py, 100 users on one API
process, 40 threads and 15 connections) hit exactly that: p95 62 s and 500s with the process at a third of a
core. Here the threads, the connections and the requests admitted are one number (platform/db.py
POOL_CONNECTIONS), and a request over it waits without holding a thread or a connection.
"""

from __future__ import annotations

import asyncio
import json

import anyio.to_thread

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
            # the loop's worker threads (sync routes and dependencies run there): as many as requests admitted
            anyio.to_thread.current_default_thread_limiter().total_tokens = self.limit
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

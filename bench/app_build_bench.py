"""The CPU of building the API app and answering its first request, with the /api/v1 router built once per process
(headroom.api.app.api_router, as create_app does now) against a router built for every app (as before), in the
same process: most API tests build an app of their own.

`uv run python bench/app_build_bench.py [rounds]` prints one JSON object (and writes bench/results/app_build.json):
CPU seconds per app, median over the rounds, for both ways and their ratio, and the load average around the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from headroom.api import app as app_module
from headroom.api.deps import AppContext
from headroom.platform.ratelimit import MemoryRateLimiter
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings
from sqlalchemy.orm import sessionmaker

# A path under /api/v1 that no route answers in full: the router looks at every route before it answers 405.
PATH = "/api/v1/sources/aws/unknown"


async def _first_request(app: Any) -> int:
    scope = {"type": "http", "http_version": "1.1", "method": "GET", "path": PATH, "raw_path": PATH.encode(),
             "root_path": "", "scheme": "http", "query_string": b"", "headers": [(b"host", b"bench")],
             "client": ("bench", 1), "server": ("bench", 80)}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return int(sent[0]["status"])


def _one(ctx: AppContext) -> float:
    started = time.process_time()
    app = app_module.create_app(ctx)
    status = asyncio.run(_first_request(app))
    assert status in (404, 405), status
    return time.process_time() - started


def main(rounds: int) -> dict[str, Any]:
    settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="bench-secret-key-" + "x" * 32)
    ctx = AppContext(settings=settings, sessions=sessionmaker(), rate_limiter=MemoryRateLimiter(),
                     secret_box=SecretBox(settings.secret_key))
    cached = app_module.api_router
    load_before = os.getloadavg()
    _one(ctx)  # the first app pays the imports and the first router either way
    per_app: dict[str, list[float]] = {"router_per_app": [], "router_once": []}
    for _ in range(rounds):
        app_module.api_router = cached.__wrapped__  # type: ignore[attr-defined]
        per_app["router_per_app"].append(_one(ctx))
        app_module.api_router = cached
        per_app["router_once"].append(_one(ctx))
    before, after = (statistics.median(per_app[k]) for k in ("router_per_app", "router_once"))
    return {
        "what": "CPU seconds to build the API app and answer its first request (median over rounds)",
        "rounds": rounds,
        "router_per_app_s": round(before, 4),
        "router_once_s": round(after, 4),
        "ratio_once_to_per_app": round(after / before, 3),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    out = Path(__file__).resolve().parent / "results" / "app_build.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))

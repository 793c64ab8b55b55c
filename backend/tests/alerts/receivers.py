"""Local HTTP servers that answer as Slack, PagerDuty and a webhook receiver document it, and record what they get.

Slack incoming webhooks answer 200 with the body "ok", and 429 with Retry-After when rate limited ("Rate limits",
https://api.slack.com/docs/rate-limits); PagerDuty's Events API v2 answers 202 with
{"status": "success", "message": "Event processed", "dedup_key": ...}, 400 for an invalid event, 429 when
throttled and 5xx on its own errors (https://developer.pagerduty.com/docs/events-api-v2/overview/). A script of
answers makes a receiver fail as the real service can before it succeeds.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str = ""
    kind: str = "slack"
    received: list[Received] = field(default_factory=list)
    # answers to give first, in order: (status, headers, body); then the service's success answer
    script: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def success(self, request: Received) -> tuple[int, dict[str, str], bytes]:
        if self.kind == "slack":
            return 200, {"Content-Type": "text/plain"}, b"ok"
        if self.kind == "pagerduty":
            body = {"status": "success", "message": "Event processed", "dedup_key": request.json.get("dedup_key")}
            return 202, {"Content-Type": "application/json"}, json.dumps(body).encode()
        return 200, {"Content-Type": "application/json"}, b"{}"


@contextmanager
def receiver(kind: str) -> Iterator[Receiver]:
    state = Receiver(kind=kind)

    class _Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            request = Received(self.path, {k: v for k, v in self.headers.items()}, self.rfile.read(length))
            with state.lock:
                state.received.append(request)
                status, headers, body = state.script.pop(0) if state.script else state.success(request)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()

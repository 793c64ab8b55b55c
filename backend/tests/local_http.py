"""Real HTTP servers on 127.0.0.1 for tests of outbound fetches: a fixed answer, a drip, a huge answer.

Each server runs in its own thread (ThreadingHTTPServer: one thread per connection) and is stopped by the
context manager, which also closes connections that are still being dripped to.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler for stand-in servers: answers with one call and keeps the test's output free of its
    per-request log lines."""

    def answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self, base_url: str, body: bytes) -> None:
        """Send this POST on to `base_url` (e.g. the moto server) unchanged and answer with its reply."""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(base_url + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - a local test server
                self.answer(reply.status, reply.read(), reply.headers.get("Content-Type", "text/xml"))
        except urllib.error.HTTPError as error:
            self.answer(error.code, error.read(), error.headers.get("Content-Type", "text/xml"))

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return


@dataclass
class LocalServer:
    url: str
    hits: list[str] = field(default_factory=list)  # request paths, in arrival order
    authorizations: list[str] = field(default_factory=list)  # the Authorization header of each request
    stopping: threading.Event = field(default_factory=threading.Event)


@contextmanager
def serve(answer: Callable[[http.server.BaseHTTPRequestHandler, LocalServer], None]) -> Iterator[LocalServer]:
    """Start a server calling `answer(handler, server)` for every request (GET or POST)."""
    state = LocalServer("")

    class _Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            state.hits.append(self.path)
            state.authorizations.append(self.headers.get("Authorization", ""))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (deadline, size cap)
                answer(self, state)

        do_GET = do_POST = _any

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.request_queue_size = 64
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def fixed(status: int, body: bytes, content_type: str = "text/html") -> Callable[..., None]:
    """An answer with a fixed status and body."""

    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def drip(every_seconds: float, *, in_headers: bool = False) -> Callable[..., None]:
    """An answer that sends one byte every `every_seconds` (in the status line when in_headers, else in a JSON
    body announced as 1 MB, under every cap), until the client hangs up or the server stops."""

    def answer(handler: http.server.BaseHTTPRequestHandler, state: LocalServer) -> None:
        out = handler.wfile
        if not in_headers:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(1_000_000))
            handler.end_headers()
            out.flush()
        payload = b"HTTP/1.1 200 OK" if in_headers else b'{"status":"success","data":' + b" " * (1_000_000 - 27)
        for byte in payload:
            if state.stopping.wait(every_seconds):
                break
            out.write(bytes([byte]))
            out.flush()
        handler.close_connection = True
        with suppress(OSError):
            handler.connection.shutdown(socket.SHUT_RDWR)

    return answer


def huge(total_bytes: int, chunk: int = 1 << 20) -> Callable[..., None]:
    """A 200 JSON answer of `total_bytes` sent as fast as the client reads (a JSON string of spaces)."""

    def answer(handler: http.server.BaseHTTPRequestHandler, state: LocalServer) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(total_bytes))
        handler.end_headers()
        block = b" " * chunk
        sent = 0
        while sent < total_bytes and not state.stopping.is_set():
            n = min(chunk, total_bytes - sent)
            handler.wfile.write(block[:n])
            sent += n

    return answer


def wait_for(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()

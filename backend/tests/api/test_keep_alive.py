"""`headroom serve`'s uvicorn keeps an idle keep-alive connection longer than a load balancer does (an AWS
Application Load Balancer reuses idle connections for up to 60 s by default), so a request sent on a connection
the client has left idle for a while is answered, not reset. Served by the real uvicorn on a real socket."""

from __future__ import annotations

import socket
import time
from typing import Any

from helpers import served_by_uvicorn


def _get(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
    reply = b""
    while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    return reply


def test_an_idle_keep_alive_connection_outlives_uvicorns_5_second_default(app: Any) -> None:
    from headroom.commands.server import KEEP_ALIVE_SECONDS

    assert KEEP_ALIVE_SECONDS > 60  # longer than an ALB's default idle timeout
    with served_by_uvicorn(app) as port, socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        assert _get(sock).startswith(b"HTTP/1.1 200")
        time.sleep(6)  # idle past uvicorn's default (5 s), as a client between two pages
        assert _get(sock).startswith(b"HTTP/1.1 200")

"""A Redis that is down, for tests of what the API does without its queue: a closed port (connections refused)
or a server that accepts connections and never answers (the case that used to hang requests)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

KINDS = ("refused", "never_answers")


def dead_redis_url(kind: str) -> Iterator[str]:
    """Yield a Redis URL that refuses connections (a closed port), or one whose server accepts and never replies.
    Use as `yield from dead_redis_url(kind)` in a fixture."""
    if kind == "refused":
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        yield f"redis://127.0.0.1:{port}/0"
        return
    with silent_server() as (port, _held):
        yield f"redis://127.0.0.1:{port}/0"


@contextmanager
def silent_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A TCP server on 127.0.0.1 that accepts connections and never says a word (a hung host): its port and the
    connections made to it, all closed at the end."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1]), held
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()

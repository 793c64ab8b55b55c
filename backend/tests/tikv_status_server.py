"""A TiKV status port stand-in for tests (no TiKV can run here): a real HTTP server on 127.0.0.1 that answers
`GET /config` and `POST /config` the way TiKV's status server does (docs/reference/tikv-metrics.md#status-port,
read in TiKV's `src/server/status_server/mod.rs` and `src/config/mod.rs`):

- `GET /config`: 200, `application/json`, the effective config as nested kebab-case JSON; sizes written with the
  largest binary unit that divides them ("4GiB"), as TiKV's ReadableSize prints them.
- `POST /config[?persist=true|false]`: a JSON object of dotted keys to string values. TiKV checks every key before
  changing any (to_config_change), so one bad key changes nothing. A key that cannot change online (the field is
  `#[online_config(skip)]`): 500, `failed to update, error: "config <field> can not be changed"` with the
  field's snake_case name; a key TiKV does not have: 500, `failed to update, error: "unexpect fields: <field>"`;
  a value that does not parse: 500, `failed to update, error: "failed to parse: <value>"`; a body that is not a
  JSON object of strings: 500, `failed to decode, error: ...`; a `persist` that is not true/false: 400. Success:
  200 with an empty body.
Which keys are online on the node's version is Headroom's own table (domain/tikvconf/online.py), so these tests
hold the client to that table.

Run as a program it serves stand-ins until killed, for the browser tests (scripts/test.sh starts it beside the e2e
server): `python backend/tests/tikv_status_server.py --nodes 3 --addresses-file PATH` writes the nodes' addresses
as a JSON list of "127.0.0.1:<port>" to PATH once every one answers, then serves them, each on its own thread.
"""

from __future__ import annotations

import argparse
import copy
import http.server
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from headroom.domain.tikvconf.keys import known_keys
from headroom.domain.tikvconf.online import online_status
from headroom.domain.units import format_size, parse_size

BASE_CONFIG: dict[str, Any] = {
    "log-level": "info",
    "server": {"addr": "0.0.0.0:20160", "advertise-addr": "10.0.1.1:20160", "status-addr": "0.0.0.0:20180"},
    "storage": {"block-cache": {"capacity": "8GiB"}, "scheduler-worker-pool-size": 4},
    "readpool": {"unified": {"max-thread-count": 8}},
    "raftstore": {"apply-pool-size": 2, "store-pool-size": 2, "raft-log-gc-threshold": 50},
    "rocksdb": {"max-background-jobs": 8, "defaultcf": {"block-size": "32KiB", "write-buffer-size": "128MiB"}},
    "raft-engine": {"enable": True},
    "gc": {"enable-compaction-filter": True},
}


@dataclass
class TikvStatus:
    """The stand-in's state: the config it runs with, its version and the POST bodies it was sent."""

    version: str
    config: dict[str, Any]
    url: str = ""
    posts: list[tuple[str, str]] = field(default_factory=list)  # (query, body) of each POST /config
    # While set, every POST /config is answered 500 with this text and changes nothing: a node refusing a change
    # it would otherwise take (TiKV answers a config change its components fail to take with a 500 and the reason).
    refuse: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def value(self, key: str) -> Any:
        node: Any = self.config
        for part in key.split("."):
            node = node[part]
        return node


def _field_name(part: str) -> str:
    return part.replace("-", "_")  # TiKV's serde_to_online_config: kebab-case to the Rust field name


def _typed(key: str, current: Any, text: str) -> Any:
    """Parse `text` as the key's type (TiKV's to_change_value), or raise ValueError."""
    text = text.strip('"')
    spec = known_keys().get(key)
    if (spec is not None and spec.kind == "size") or (isinstance(current, str) and current[-1:] == "B"):
        return format_size(parse_size(text))
    if isinstance(current, bool):
        if text not in ("true", "false"):
            raise ValueError(text)
        return text == "true"
    if isinstance(current, int):
        return int(text)
    if isinstance(current, float):
        return float(text)
    return text


def _update(status: TikvStatus, change: dict[str, str]) -> str | None:
    """Check every key, then apply them all; return TiKV's error text, or None when applied."""
    typed: list[tuple[list[str], Any]] = []
    for key, text in change.items():
        parts = key.split(".")
        node: Any = status.config
        for i, part in enumerate(parts):
            if not isinstance(node, dict) or part not in node:
                return f'failed to update, error: "unexpect fields: {_field_name(part)}"'
            if key.startswith("raft-engine.") and i == 0:
                return 'failed to update, error: "config raft_engine can not be changed"'
            node = node[part]
        if not online_status(key, status.version).online:
            return f'failed to update, error: "config {_field_name(parts[-1])} can not be changed"'
        try:
            typed.append((parts, _typed(key, node, text)))
        except ValueError:
            return f'failed to update, error: "failed to parse: {text}"'
    for parts, value in typed:
        target = status.config
        for part in parts[:-1]:
            target = target[part]
        target[parts[-1]] = value
    return None


@contextmanager
def tikv_status_server(version: str = "v8.5.1", config: dict[str, Any] | None = None) -> Iterator[TikvStatus]:
    """Serve a TiKV status port on 127.0.0.1 until the block ends."""
    status = TikvStatus(version=version, config=copy.deepcopy(config or BASE_CONFIG))

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, code: int, body: bytes, content_type: str | None = None) -> None:
            self.send_response(code)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if urlparse(self.path).path != "/config":
                self._answer(404, b"path not found", "text/plain")
                return
            with status.lock:
                body = json.dumps(status.config).encode()
            self._answer(200, body, "application/json")

        def do_POST(self) -> None:  # noqa: N802
            url = urlparse(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0)).decode("utf-8", "replace")
            if url.path != "/config":
                self._answer(404, b"path not found", "text/plain")
                return
            status.posts.append((url.query, body))
            persist = parse_qs(url.query).get("persist", ["true"])[0]
            if persist not in ("true", "false"):
                self._answer(400, b"provided string was not `true` or `false`")
                return
            try:
                change = json.loads(body)
                if not isinstance(change, dict) or not all(isinstance(v, str) for v in change.values()):
                    raise ValueError("invalid type: expected a map of strings")
            except ValueError as error:
                self._answer(500, f"failed to decode, error: Json({error})".encode())
                return
            with status.lock:
                error_text = status.refuse or _update(status, change)
            if error_text is None:
                self._answer(200, b"")
            else:
                self._answer(500, error_text.encode())

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    status.url = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield status
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    """Serve `--nodes` stand-ins on 127.0.0.1 until SIGTERM or SIGINT; write their addresses to the file given."""
    parser = argparse.ArgumentParser(description="TiKV status port stand-ins (GET/POST /config) for browser tests.")
    parser.add_argument("--nodes", type=int, default=3, help="how many stand-ins (one per TiKV node)")
    parser.add_argument("--addresses-file", type=Path, required=True,
                        help='where to write the JSON list of their addresses ("127.0.0.1:<port>")')
    parser.add_argument("--version", default="v8.5.1", help="the TiKV version whose online keys they accept")
    args = parser.parse_args(argv)
    if args.nodes < 1:
        parser.error("--nodes: at least 1")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with ExitStack() as stack:
        nodes = [stack.enter_context(tikv_status_server(args.version)) for _ in range(args.nodes)]
        # written whole under another name, then renamed: a reader never sees half a list
        partial = args.addresses_file.with_name(args.addresses_file.name + ".tmp")
        partial.write_text(json.dumps([n.url for n in nodes]))
        os.replace(partial, args.addresses_file)
        print(f"tikv status stand-ins: {' '.join(n.url for n in nodes)}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

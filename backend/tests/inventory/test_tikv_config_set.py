"""Setting one TiKV key on one node (inventory/tikv_config_set.py) against a TiKV status port stand-in that answers
as TiKV's status server does (backend/tests/tikv_status_server.py): POST /config, then GET /config to read the
value back, compared in TiKV's units. TiKV's refusals (500, `failed to update, error: ...`) are reported with
TiKV's own words, change nothing and are not retried; a 503 or a dropped connection is retried."""

from __future__ import annotations

import http.server
import json
import socket
import time
from typing import Any

import pytest
from headroom.inventory.tikv_config_set import ConfigRefused, set_config_key
from headroom.inventory.tikv_status import StatusPortError
from headroom.platform.retry import RetryPolicy
from local_http import LocalServer, serve
from tikv_status_server import BASE_CONFIG, tikv_status_server

NO_WAIT = RetryPolicy(attempts=3, base_seconds=0, cap_seconds=0)


def test_an_online_key_is_set_and_read_back_in_tikv_s_units() -> None:
    with tikv_status_server("v8.5.1") as node:
        result = set_config_key(node.url, "storage.block-cache.capacity", "4096MiB", retry=NO_WAIT)
        assert node.posts == [("", json.dumps({"storage.block-cache.capacity": "4096MiB"}))]
        assert node.value("storage.block-cache.capacity") == "4GiB"  # TiKV prints the largest exact unit
    assert (result.read_back, result.verified) == ("4GiB", True)


def test_persist_false_and_scalar_spellings() -> None:
    with tikv_status_server("v8.5.1") as node:
        assert set_config_key(node.url, "gc.enable-compaction-filter", False, persist=False, retry=NO_WAIT).verified
        assert set_config_key(node.url, "readpool.unified.max-thread-count", 12, retry=NO_WAIT).read_back == 12
        assert [q for q, _ in node.posts] == ["persist=false", ""]
        assert json.loads(node.posts[0][1]) == {"gc.enable-compaction-filter": "false"}  # strings on the wire
        assert node.value("gc.enable-compaction-filter") is False


@pytest.mark.parametrize(("version", "key", "value", "tikv_says"), [
    # #[online_config(skip)] (docs/reference/tikv-config.md#online-changes)
    ("v8.5.1", "rocksdb.defaultcf.block-size", "64KiB", 'failed to update, error: "config block_size can not be changed"'),
    # online only from v6.0.0 (domain/tikvconf/online.py ONLINE_SINCE)
    ("v5.4.0", "storage.scheduler-worker-pool-size", 8,
     'failed to update, error: "config scheduler_worker_pool_size can not be changed"'),
    ("v8.5.1", "raft-engine.enable", False, 'failed to update, error: "config raft_engine can not be changed"'),
    ("v8.5.1", "storage.no-such-key", 1, 'failed to update, error: "unexpect fields: no_such_key"'),
    ("v8.5.1", "storage.block-cache.capacity", "lots", 'failed to update, error: "failed to parse: lots"'),
])
def test_refusals_carry_tikv_s_words_change_nothing_and_are_not_retried(
        version: str, key: str, value: Any, tikv_says: str) -> None:
    with tikv_status_server(version) as node:
        before = json.dumps(node.config, sort_keys=True)
        with pytest.raises(ConfigRefused) as refused:
            set_config_key(node.url, key, value, retry=NO_WAIT, sleep=lambda _s: None)
        assert refused.value.tikv_message == tikv_says
        assert len(node.posts) == 1  # a refusal is final
        assert json.dumps(node.config, sort_keys=True) == before


def test_the_same_key_is_online_on_a_newer_release() -> None:
    with tikv_status_server("v6.1.0") as node:
        result = set_config_key(node.url, "storage.scheduler-worker-pool-size", 8, retry=NO_WAIT)
    assert (result.read_back, result.verified) == (8, True)


def test_a_503_is_retried_then_the_value_is_verified() -> None:
    config = json.loads(json.dumps(BASE_CONFIG))
    sleeps: list[float] = []
    posts: list[str] = []

    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        if handler.command == "POST":
            posts.append(handler.path)
        if handler.command == "POST" and len(posts) == 1:
            status, body = 503, b"busy"
        elif handler.command == "POST":
            config["storage"]["block-cache"]["capacity"] = "12GiB"
            status, body = 200, b""
        else:
            status, body = 200, json.dumps(config).encode()
        handler.send_response(status)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with serve(answer) as server:
        result = set_config_key(server.url, "storage.block-cache.capacity", "12GiB", retry=NO_WAIT,
                                sleep=sleeps.append)
    assert result.verified and len(sleeps) == 1 and len(posts) == 2


def test_a_slow_answer_is_retried_for_a_set_and_not_for_a_read() -> None:
    # One request path for both (tikv_status.exchange): a set is idempotent, so an overdue answer is worth one
    # more attempt; a read from the same slow server would be as slow again.
    config = json.loads(json.dumps(BASE_CONFIG))
    slow = {"POST": 1, "GET": 1}  # how many answers of each kind come too late

    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        if slow[handler.command] > 0:
            slow[handler.command] -= 1
            time.sleep(1.5)
        if handler.command == "POST":
            config["storage"]["block-cache"]["capacity"] = "12GiB"
        body = b"" if handler.command == "POST" else json.dumps(config).encode()
        try:
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:  # the client gave up on this answer
            pass

    sleeps: list[float] = []
    with serve(answer) as server, pytest.raises(StatusPortError, match="did not answer within 0.5 s") as late:
        set_config_key(server.url, "storage.block-cache.capacity", "12GiB", retry=NO_WAIT, deadline_seconds=0.5,
                       sleep=sleeps.append)
    assert not late.value.transient
    assert len(sleeps) == 1  # the slow set was tried again; the slow read was not
    assert server.hits == ["/config", "/config", "/config"]


def test_a_value_the_node_does_not_report_back_is_not_verified() -> None:
    # TiKV can adjust a value in its validate step; the read-back is what counts.
    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        body = b"" if handler.command == "POST" else json.dumps(BASE_CONFIG).encode()
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with serve(answer) as server:
        result = set_config_key(server.url, "storage.block-cache.capacity", "12GiB", retry=NO_WAIT)
    assert (result.read_back, result.verified) == ("8GiB", False)


def test_an_unreachable_node_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: nothing listens there
    sleeps: list[float] = []
    with pytest.raises(StatusPortError, match="cannot reach") as failed:
        set_config_key(f"127.0.0.1:{port}", "storage.block-cache.capacity", "4GiB", retry=NO_WAIT,
                       sleep=sleeps.append)
    assert failed.value.transient and len(sleeps) == 2  # three attempts


def test_arrays_are_refused_before_anything_is_sent() -> None:
    with tikv_status_server() as node, pytest.raises(ValueError, match="scalar"):
        set_config_key(node.url, "server.labels", ["a"], retry=NO_WAIT)
    assert node.posts == []

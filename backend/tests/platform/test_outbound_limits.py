"""A slow or huge "Prometheus" cannot take the API down for other tenants.

Real servers on 127.0.0.1 (tests/local_http.py): one dripping a byte a second, one answering hundreds of MB.
* the total deadline fires however the server drips (in the body or in the status line);
* a huge answer is cut at the cap, with bounded memory (tracemalloc peak), also gzip-compressed or in a
  redirect's body;
* under uvicorn with a real 5 + 10 connection pool, 16 concurrent source tests of org A against the drip server
  hold no database connection: org B's GET /api/v1/clusters answers at once;
* an organisation runs at most 4 outbound checks at once (429 outbound_busy beyond), another org is unaffected.
"""

from __future__ import annotations

import gzip
import http.server
import shutil
import socket
import tempfile
import threading
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from headroom.inventory.tikv_status import StatusPortError, fetch_config
from headroom.platform import outbound
from headroom.sources.prometheus.collector import PrometheusClient, PrometheusError, RetryPolicy
from helpers import Actor, sign_up
from local_http import LocalServer, drip, fixed, huge, serve, wait_for
from sqlalchemy import create_engine, delete
from sqlalchemy.orm import sessionmaker

MIB = 1024 * 1024
BUILDINFO = b'{"status":"success","data":{"version":"2.53.0"}}'


def _client(url: str, **kw: Any) -> PrometheusClient:
    return PrometheusClient(url, retry=RetryPolicy(attempts=2, base_seconds=0.01), **kw)


def _finishes(call: Callable[[], Any], within: float) -> Any:
    """Run call in a thread; fail (instead of hanging) when it has not finished within `within` seconds."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(call)
        done = wait_for(future.done, within)
        assert done, f"still running after {within} s"
        return future.result()


# --- (b) the total deadline ------------------------------------------------------------------------------


def test_a_dripping_body_ends_at_the_total_deadline_not_never() -> None:
    with serve(drip(1.0)) as server:
        client = _client(server.url, timeout_seconds=10.0, deadline_seconds=3.0)

        def build_info() -> tuple[float, str]:
            started = time.monotonic()
            with pytest.raises(PrometheusError) as caught:
                client.build_info()
            return time.monotonic() - started, caught.value.message

        elapsed, message = _finishes(build_info, 30)
    assert 2.5 <= elapsed < 10.0, elapsed  # each byte came within the 10 s read timeout: only the deadline ends it
    assert message == f"Prometheus at {server.url} did not answer /api/v1/status/buildinfo within 3 s"
    assert len(server.hits) == 1  # an overdue answer is not retried


def test_a_dripping_status_line_ends_at_the_deadline_for_a_status_port() -> None:
    with serve(drip(1.0, in_headers=True)) as server:
        address = server.url.removeprefix("http://")

        def fetch() -> tuple[float, str]:
            started = time.monotonic()
            with pytest.raises(StatusPortError) as caught:
                fetch_config(address, timeout_seconds=10.0, deadline_seconds=3.0, sleep=lambda _s: None)
            return time.monotonic() - started, str(caught.value)

        elapsed, message = _finishes(fetch, 30)
    assert 2.5 <= elapsed < 10.0, elapsed
    assert message == f"http://{address}/config did not answer within 3 s"


def test_nested_limits_keep_the_earlier_deadline() -> None:
    with serve(drip(1.0)) as server:
        client = _client(server.url, timeout_seconds=10.0, deadline_seconds=30.0)

        def run() -> str:
            with outbound.limits(seconds=2.0), pytest.raises(PrometheusError) as caught:
                client.build_info()
            return caught.value.message

        assert _finishes(run, 20).endswith("within 2 s")


# --- (c) the size cap -----------------------------------------------------------------------------------


def _chunked(total: int, chunk: int = MIB) -> Callable[..., None]:
    """A 200 JSON answer of `total` bytes with no Content-Length (chunked): only reading tells its size."""

    def answer(handler: http.server.BaseHTTPRequestHandler, state: LocalServer) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        block = b" " * chunk
        sent = 0
        while sent < total and not state.stopping.is_set():
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            sent += len(block)
        handler.wfile.write(b"0\r\n\r\n")

    return answer


def _peak_while(call: Callable[[], Any]) -> tuple[int, Any]:
    tracemalloc.start()
    try:
        result = call()
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def _refused_build_info(url: str) -> tuple[int, str]:
    """Ask a server for its build info through a client capped at 8 MiB: (peak traced bytes, the refusal's message)."""
    client = _client(url, max_response_bytes=8 * MIB)

    def call() -> str:
        with pytest.raises(PrometheusError) as caught:
            client.build_info()
        return caught.value.message

    return _peak_while(lambda: _finishes(call, 60))


@pytest.mark.parametrize("answer", ["content-length", "chunked"])
def test_a_300_mb_answer_is_cut_at_the_cap_with_bounded_memory(answer: str) -> None:
    total = 300 * MIB
    with serve(huge(total) if answer == "content-length" else _chunked(total)) as server:
        peak, message = _refused_build_info(server.url)
    assert message == "Prometheus answered more than 8 MiB to /api/v1/status/buildinfo; narrow the label selector"
    assert peak < 40 * MIB, f"peak {peak / MIB:.0f} MiB"  # the cap (8 MiB) and its copies, not 300 MB
    assert len(server.hits) == 1  # not retried


def test_a_gzip_bomb_is_cut_at_the_cap_once_inflated() -> None:
    bomb = gzip.compress(b" " * (200 * MIB), compresslevel=9)  # ~200 KB on the wire

    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(bomb)))
        handler.end_headers()
        handler.wfile.write(bomb)

    with serve(answer) as server:
        peak, message = _refused_build_info(server.url)
    assert "answered more than 8 MiB" in message
    assert peak < 40 * MIB, f"peak {peak / MIB:.0f} MiB"


def test_a_huge_redirect_body_counts_against_the_cap() -> None:
    total = 300 * MIB

    def answer(handler: http.server.BaseHTTPRequestHandler, state: LocalServer) -> None:
        handler.send_response(302)
        handler.send_header("Location", "/elsewhere")
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        block, sent = b" " * MIB, 0
        while sent < total and not state.stopping.is_set():
            handler.wfile.write(block)
            sent += MIB

    with serve(answer) as server:
        peak, message = _refused_build_info(server.url)
    assert "answered more than 8 MiB" in message
    assert peak < 40 * MIB, f"peak {peak / MIB:.0f} MiB"


def test_a_status_port_answering_too_much_is_refused() -> None:
    with serve(_chunked(50 * MIB)) as server:
        address = server.url.removeprefix("http://")
        with pytest.raises(StatusPortError) as caught:
            _finishes(lambda: fetch_config(address, sleep=lambda _s: None), 60)
    assert str(caught.value) == f"http://{address}/config answered more than 4 MiB"


def test_a_legitimate_answer_under_the_cap_is_read_gzip_or_not() -> None:
    body = b'{"status":"success","data":{"version":"2.53.0","pad":"' + b"x" * (3 * MIB) + b'"}}'
    packed = gzip.compress(body)

    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        gz = "gzip" in handler.headers.get("Accept-Encoding", "")
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if gz:
            handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(packed if gz else body)))
        handler.end_headers()
        handler.wfile.write(packed if gz else body)

    with serve(answer) as server:
        info = _client(server.url, max_response_bytes=4 * MIB).build_info()
    assert info["version"] == "2.53.0" and len(info["pad"]) == 3 * MIB


# --- (a) and (d): the real app under uvicorn with a real 5 + 10 pool ------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveApp:
    def __init__(self, url: str, engine: Any, outbox: Path) -> None:
        self.url = url
        self.engine = engine
        self.outbox = outbox
        self.emails: list[str] = []
        self.orgs: list[str] = []

    def actor(self) -> Actor:
        http = httpx.Client(base_url=self.url, timeout=120.0)
        email = f"outbound-{uuid.uuid4().hex[:12]}@example.com"
        actor = sign_up(http, email=email, outbox=self.outbox)
        self.emails.append(email)
        self.orgs.append(actor.org_id)
        return actor


@contextmanager
def live_app(database_url: str, settings: Any, slots: outbound.OrgSlots) -> Iterator[LiveApp]:
    """The real app under uvicorn in a thread, on its own engine sized like production (platform/db.py: 5 + 10),
    with a 5 s pool timeout so a starved pool shows up as a failed request quickly. Deletes what it created."""
    import uvicorn
    from headroom.accounts.models import Organization, User
    from headroom.api.app import create_app
    from headroom.api.deps import AppContext
    from headroom.platform.mail import OutboxMailer
    from headroom.platform.ratelimit import MemoryRateLimiter
    from headroom.platform.security import SecretBox

    outbox = Path(tempfile.mkdtemp(prefix="headroom-outbox-"))
    engine = create_engine(database_url, pool_size=5, max_overflow=10, pool_timeout=5, pool_pre_ping=True)
    ctx = AppContext(settings=settings, sessions=sessionmaker(bind=engine, expire_on_commit=False, autoflush=False),
                     rate_limiter=MemoryRateLimiter(), secret_box=SecretBox(settings.secret_key),
                     mailer=OutboxMailer(outbox))
    ctx.outbound_slots = slots
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(ctx), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert wait_for(lambda: server.started, 30), "uvicorn did not start"
    live = LiveApp(f"http://127.0.0.1:{port}", engine, outbox)
    try:
        yield live
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        with engine.begin() as conn:
            if live.orgs:
                conn.execute(delete(Organization).where(Organization.id.in_([uuid.UUID(o) for o in live.orgs])))
            if live.emails:
                conn.execute(delete(User).where(User.email.in_(live.emails)))
        engine.dispose()
        shutil.rmtree(outbox, ignore_errors=True)


def _prom_source(actor: Actor, url: str, name: str = "prom") -> str:
    created = actor.post("/api/v1/sources/prometheus", json={"name": name, "base_url": url,
                                                             "label_selector": 'job="tikv"'})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def test_16_slow_source_tests_of_one_org_do_not_starve_another_orgs_requests(
    database_url: str, settings: Any
) -> None:
    # Slots wide open: this proves the connection release on its own (the per-org limit is the next test).
    with (
        live_app(database_url, settings, outbound.OrgSlots(per_org=32, total=32)) as app,
        serve(drip(1.0)) as prom,
    ):
        org_a, org_b = app.actor(), app.actor()
        source = _prom_source(org_a, prom.url)
        with ThreadPoolExecutor(16) as pool:
            tests: list[Future[Any]] = [
                pool.submit(org_a.post, f"/api/v1/sources/prometheus/{source}/test") for _ in range(16)
            ]
            wait_for(lambda: len(prom.hits) >= 16, 30)
            reached, checked_out = len(prom.hits), app.engine.pool.checkedout()
            answers = []
            for _ in range(3):
                started = time.monotonic()
                response = org_b.get("/api/v1/clusters", timeout=20.0)
                answers.append((response.status_code, time.monotonic() - started))
            early = [t.result().text for t in tests if t.done()]
            assert not early, f"the slow tests should still be running: {early[:2]}"
            results = [t.result(timeout=90) for t in tests]
        health = org_a.get(f"/api/v1/sources/prometheus/{source}").json()["health"]
    assert all(status == 200 for status, _ in answers), answers
    assert reached == 16, f"only {reached} tests reached the server (the others waited for a pool connection)"
    assert checked_out <= 2, f"{checked_out} pool connections held while 16 tests waited on the server"
    assert max(seconds for _, seconds in answers) < 3.0, answers  # the slow tests take 15 s each
    for result in results:
        assert result.status_code == 200, result.text
        body = result.json()
        assert body["ok"] is False and body["reachable"] is False
        assert body["messages"] == [f"Prometheus at {prom.url} did not answer /api/v1/status/buildinfo within 15 s"]
    assert health["consecutive_failures"] == 16 and "did not answer" in health["last_error"]


def test_an_org_runs_at_most_4_outbound_checks_at_once(database_url: str, settings: Any) -> None:
    with (
        live_app(database_url, settings, outbound.OrgSlots()) as app,
        serve(drip(1.0)) as slow,
        serve(fixed(200, BUILDINFO, "application/json")) as fast,
    ):
        org_a, org_b = app.actor(), app.actor()
        slow_source = _prom_source(org_a, slow.url)
        fast_a = _prom_source(org_a, fast.url, "fast")
        fast_b = _prom_source(org_b, fast.url)
        with ThreadPoolExecutor(4) as pool:
            running = [pool.submit(org_a.post, f"/api/v1/sources/prometheus/{slow_source}/test") for _ in range(4)]
            assert wait_for(lambda: len(slow.hits) >= 4, 30)
            refused = org_a.post(f"/api/v1/sources/prometheus/{fast_a}/test")
            other_org = org_b.post(f"/api/v1/sources/prometheus/{fast_b}/test")
            slow.stopping.set()  # let the four end now rather than at their deadline
            finished = [r.result(timeout=60) for r in running]
        assert refused.status_code == 429, refused.text
        assert refused.headers["Retry-After"] == "5"
        error = refused.json()["error"]
        assert error["code"] == "outbound_busy"
        assert error["message"].startswith("4 connection tests or status-port reads are already running")
        assert other_org.status_code == 200 and other_org.json()["reachable"] is True, other_org.text
        assert [r.status_code for r in finished] == [200] * 4
        again = org_a.post(f"/api/v1/sources/prometheus/{fast_a}/test")  # the slots were given back
        assert again.status_code == 200 and again.json()["reachable"] is True, again.text


def test_four_orgs_with_slow_servers_leave_a_slot_for_a_fifth(database_url: str, settings: Any) -> None:
    # The probe's case: four free sign-ups each run 4 connection tests against a slow server; a fifth organisation's
    # test still runs (the last 4 of the 16 slots are kept for organisations running none), and the four get 429
    # for their share, never a 503 for the whole server.
    with (
        live_app(database_url, settings, outbound.OrgSlots()) as app,
        serve(drip(1.0)) as slow,
        serve(fixed(200, BUILDINFO, "application/json")) as fast,
    ):
        heavy = [app.actor() for _ in range(4)]
        sources = [_prom_source(actor, slow.url) for actor in heavy]
        fifth = app.actor()
        fifth_source = _prom_source(fifth, fast.url)
        with ThreadPoolExecutor(16) as pool:
            running = [pool.submit(actor.post, f"/api/v1/sources/prometheus/{source}/test")
                       for actor, source in zip(heavy, sources, strict=True) for _ in range(4)]
            # 12 shared slots, plus a first slot for each heavy org that found the shared ones taken
            assert wait_for(lambda: len(slow.hits) + sum(r.done() for r in running) >= 16, 30)
            in_flight = len(slow.hits)
            answer = fifth.post(f"/api/v1/sources/prometheus/{fifth_source}/test")
            slow.stopping.set()
            finished = [r.result(timeout=60) for r in running]
        assert 12 <= in_flight <= 13, in_flight
        assert answer.status_code == 200 and answer.json()["reachable"] is True, answer.text
        codes = sorted(r.status_code for r in finished)
        assert codes.count(429) == 16 - in_flight and codes.count(200) == in_flight, codes
        refusals = [r.json()["error"] for r in finished if r.status_code == 429]
        assert all(e["code"] == "outbound_busy" and "other organisations" in e["message"] for e in refusals)
        assert all(sum(r.status_code == 200 for r in running_of) >= 1
                   for running_of in ([f.result() for f in running[i * 4:(i + 1) * 4]] for i in range(4)))

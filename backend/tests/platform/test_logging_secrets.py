"""Logging: no secret reaches a log line (tracebacks included), tracebacks have no local variables and are bounded,
and a 500 never holds up the event loop.

The app is the real one (real authentication against PostgreSQL, the real 500 handler, the real log formatter);
the only addition is a route registered by the test that raises, with secrets in its locals and in its exception
message (the way a pydantic or database error echoes a request body). Output is read where the handler writes it
(stdout, captured by capsys), in console and JSON mode.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from fastapi import Body, Request
from headroom.api.deps import Caller
from headroom.platform.logging import configure_logging, reset_logging, scrub
from headroom.sources.schemas import AwsConnectionUpdate
from helpers import PASSWORD, sign_up

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # the AWS documentation's example secret access key
INVITEE_PASSWORD = "tulip staircase 42 lantern"
TEN_MB = 10 * 1024 * 1024


class BigRepr:
    """A local whose repr is 10 MB (a query result, a response body): a renderer showing locals prints it."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return "BigRepr(" + "z" * self.size + ")"


def add_failing_route(app: Any, entered: threading.Event | None = None) -> None:
    """PATCH /test-only/aws/{n}: authenticates the caller, then fails with secrets in its locals and message."""

    @app.patch("/test-only/aws/{n}", include_in_schema=False)
    def fail(n: int, request: Request, caller: Caller, body: dict[str, Any] = Body()) -> None:  # noqa: ARG001
        if entered is not None:
            entered.set()
        update = AwsConnectionUpdate(access_key_id="AKIAIOSFODNN7EXAMPLE", secret_access_key=body["secret_access_key"])
        invitation = {"email": "new@example.com", "password": body["password"]}
        secret_key = request.app.state.ctx.settings.secret_key
        headers = dict(request.headers)
        huge = BigRepr(TEN_MB)  # noqa: F841 - a local the traceback must not render
        raise RuntimeError(
            f"could not store {update!r} for invitation {invitation} (key {secret_key}); headers {headers}; "
            f"secret {body['secret_access_key']}; session {request.cookies.get('headroom_session')}; "
            f"token {request.headers['authorization'][7:]}; " + "m" * (n * TEN_MB)
        )


@pytest.fixture(params=["console", "json"])
def log_mode(request: Any) -> Iterator[str]:
    """The mode a test configures logging in (inside the test: the handler writes to the sys.stdout of that
    moment, which capsys replaces only for the test's body); logging is reset afterwards."""
    yield request.param
    reset_logging()


def _secrets_in_play(client: Any) -> dict[str, str]:
    owner = sign_up(client)
    created = owner.post("/api/v1/org/tokens", json={"name": "ci", "role": "viewer"})
    assert created.status_code == 201, created.text
    return {
        "api token": created.json()["token"],
        "session cookie": client.cookies["headroom_session"],
        "csrf cookie": client.cookies["headroom_csrf"],
        "aws secret": AWS_SECRET,
        "invitee password": INVITEE_PASSWORD,
        "owner password": PASSWORD,
    }


@pytest.mark.parametrize("huge_message", [0, 1])
def test_a_500_logs_a_bounded_traceback_without_any_secret(app: Any, client: Any, settings: Any, log_mode: str,
                                                           capsys: Any, huge_message: int) -> None:
    configure_logging("INFO", json=log_mode == "json")
    add_failing_route(app)
    secrets = _secrets_in_play(client) | {"HEADROOM_SECRET_KEY": settings.secret_key}
    capsys.readouterr()  # only the failing request's lines from here

    response = client.patch(
        f"/test-only/aws/{huge_message}",
        headers={"Authorization": f"Bearer {secrets['api token']}", "X-CSRF-Token": secrets["csrf cookie"]},
        json={"secret_access_key": AWS_SECRET, "password": INVITEE_PASSWORD},
    )
    out = capsys.readouterr().out

    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    leaked = [name for name, value in secrets.items() if value in out]
    assert leaked == [], f"{leaked} in the log:\n{out[:4000]}"
    assert len(out.encode()) < 64 * 1024, len(out)
    assert "z" * 100 not in out  # the 10 MB local is not rendered
    if log_mode == "json":
        records = [json.loads(line) for line in out.splitlines()]  # every line is still JSON
        (error,) = [r for r in records if r["event"] == "api.unhandled_error"]
        assert error["path"] == f"/test-only/aws/{huge_message}" and error["error_type"] == "RuntimeError"
        traceback_text = error["exception"]
        assert traceback_text.startswith("Traceback (most recent call last):\n")
    else:
        assert "api.unhandled_error" in out and "error_type=RuntimeError" in out
        traceback_text = out[out.index("\nTraceback (most recent call last):\n"):]
    assert 'in fail\n' in traceback_text and "RuntimeError: could not store AwsConnectionUpdate(" in traceback_text
    assert "[redacted]" in traceback_text
    if huge_message:
        assert "characters cut]" in traceback_text


def test_a_500_with_a_10_mb_local_does_not_hold_up_other_requests(app: Any, make_client: Any, capsys: Any) -> None:
    """The real app under uvicorn on 127.0.0.1: while a request fails with a 10 MB local and a 10 MB exception
    message, /healthz answers at once; the failure is logged once (uvicorn's own report of it is dropped)."""
    import uvicorn

    configure_logging("INFO", json=False)
    try:
        entered = threading.Event()
        add_failing_route(app, entered)
        secrets = _secrets_in_play(make_client())
        capsys.readouterr()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="info", lifespan="off"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started

        def failing() -> httpx.Response:
            return httpx.patch(f"{base}/test-only/aws/1", json={"secret_access_key": AWS_SECRET, "password": "p"},
                               headers={"Authorization": f"Bearer {secrets['api token']}"}, timeout=120)

        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(failing)
            assert entered.wait(30)
            started = time.monotonic()
            health = httpx.get(f"{base}/healthz", timeout=15)
            health_seconds = time.monotonic() - started
            failed = pending.result(timeout=120)
        server.should_exit = True
        thread.join(15)
        out = capsys.readouterr().out
    finally:
        reset_logging()

    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert health_seconds < 5, health_seconds  # was minutes: the traceback rendered locals on the event loop
    assert failed.status_code == 500 and failed.json()["error"]["code"] == "internal_error"
    assert out.count("Traceback (most recent call last):") == 1, out[:4000]
    assert '"PATCH /test-only/aws/1 HTTP/1.1" 500' in out  # uvicorn's access line goes through our handler
    assert len(out.encode()) < 64 * 1024, len(out)
    assert secrets["api token"] not in out and AWS_SECRET not in out


class _Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def local_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_httpx_request_line_has_no_url_credentials_or_query_secrets(local_server: str, log_mode: str,
                                                                    capsys: Any) -> None:
    configure_logging("INFO", json=log_mode == "json")
    response = httpx.get(f"http://scraper:pr0m-Passw0rd@{local_server}/api/v1/query?query=up&token=qs-secret-123",
                         timeout=5)
    out = capsys.readouterr().out

    assert response.status_code == 200
    assert "HTTP Request: GET http://[redacted]@127.0.0.1" in out, out
    assert "/api/v1/query?query=up&token=[redacted]" in out
    assert "pr0m-Passw0rd" not in out and "qs-secret-123" not in out and "scraper" not in out


# (text, what it becomes): the patterns, applied to the finished text of any line.
SCRUB_CASES = [
    ("Authorization: Bearer hr_Abc123def456ghi789", "Authorization: [redacted]"),
    ("sent Bearer abc.def-ghi to the API", "sent Bearer [redacted] to the API"),
    ("token hr_AbCdEfGh12345678_-x used", "token hr_[redacted] used"),
    ("{'password': 'tulip staircase', 'email': 'a@b.c'}", "{'password': '[redacted]', 'email': 'a@b.c'}"),
    ('{"secret_access_key": "abc", "region": "eu-west-1"}', '{"secret_access_key": "[redacted]", "region": "eu-west-1"}'),
    ('"{\\"password\\": \\"pw1234\\"}"', '"{\\"password\\": \\"[redacted]\\"}"'),
    ("AwsConnectionUpdate(secret_access_key='abc', regions=None)",
     "AwsConnectionUpdate(secret_access_key=[redacted], regions=None)"),
    ("Cookie: headroom_session=abc; other=1", "Cookie: [redacted]"),
    ("cookies headroom_session=abc123; headroom_csrf=def", "cookies headroom_session=[redacted]; headroom_csrf=[redacted]"),
    ("GET /x?api_key=abc&X-Amz-Signature=0f9e&region=us", "GET /x?api_key=[redacted]&X-Amz-Signature=[redacted]&region=us"),
    ("redis://:br0ker@127.0.0.1:6379/0 and postgresql://u:p@db/x", "redis://[redacted]@127.0.0.1:6379/0 and "
     "postgresql://[redacted]@db/x"),
    (f"bad key {AWS_SECRET}.", "bad key [redacted]."),
    ("session wq3Nf-8sKd_0aLmZpQ7xR2cV9bTyUe4hJiOg1FkDsAw ok", "session [redacted] ok"),
    # Left alone: hex digests (no upper case), identifiers, ordinary words, e-mail addresses.
    ("sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", None),
    ("api.unhandled_error path=/api/v1/clusters/7 error_type=RuntimeError", None),
    ("mail to owner@example.com failed: 550", None),
    ("A bearer token is required.", None),
    ("NoCredentialsError: Unable to locate credentials", None),
    ("key AKIAIOSFODNN7EXAMPLE refused", "key [redacted] refused"),
]


@pytest.mark.parametrize(("text", "expected"), SCRUB_CASES)
def test_scrub_patterns(text: str, expected: str | None) -> None:
    assert scrub(text) == (text if expected is None else expected)


def test_database_errors_carry_no_bound_parameters(database_url: str) -> None:
    """The app's engine hides bound parameters from SQLAlchemy's error text (it appended every parameter, a
    credential being stored or a request body's password, to the message that lands in a traceback)."""
    import sqlalchemy as sa
    import sqlalchemy.exc
    from headroom.platform.db import engine_for

    with engine_for(database_url).connect() as conn, pytest.raises(sqlalchemy.exc.DataError) as raised:
        conn.execute(sa.text("SELECT CAST(:value AS text), 1 / 0"), {"value": "hunter2-stored-secret"})
    assert "division by zero" in str(raised.value)
    assert "hunter2-stored-secret" not in str(raised.value)
    assert "SQL parameters hidden" in str(raised.value)

"""Every log line of a request carries its request id, every log line of a job its job id (docs/operations.md).

The app runs under a real uvicorn on 127.0.0.1, so uvicorn's own access line is among the lines checked; the
request reaches the real authentication against PostgreSQL, a route that logs through structlog and through a
library's standard logger, and the real 500 handler. Output is read where the handler writes it (stdout, JSON).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import structlog
from fastapi.testclient import TestClient
from headroom.platform.jobs.registry import Job
from headroom.platform.jobs.runner import run_job
from headroom.platform.logging import configure_logging, get_logger, reset_logging
from helpers import sign_up

HEX_ID = re.compile(r"[0-9a-f]{32}")


def add_logging_routes(app: Any) -> None:
    """GET /test-only/log writes lines through structlog and a standard library logger; GET /test-only/boom also
    fails (the 500 handler logs the traceback)."""

    @app.get("/test-only/log", include_in_schema=False)
    def log_some() -> dict[str, str]:
        get_logger("headroom.test").info("test.step", step=1)
        logging.getLogger("some.library").warning("a library line")
        get_logger("headroom.test").info("test.step", step=2)
        return {"ok": "yes"}

    @app.get("/test-only/boom", include_in_schema=False)
    def boom() -> None:
        get_logger("headroom.test").info("test.before_boom")
        raise RuntimeError("boom")


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app under uvicorn on a free port, JSON logs to stdout (call inside the test: capsys reads them)."""
    import uvicorn

    add_logging_routes(app)
    configure_logging("INFO", json=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="info", lifespan="off"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert uv.started
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uv.should_exit = True
        thread.join(15)
        reset_logging()


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _request_lines(out: str, request_id: str) -> list[dict[str, Any]]:
    lines = _lines(out)
    return [line for line in lines if line.get("request_id") == request_id]


def test_every_line_of_a_request_carries_its_id(app: Any, capsys: Any) -> None:
    with serving(app) as server:
        capsys.readouterr()
        response = httpx.get(f"{server}/test-only/log", timeout=30)
    out = capsys.readouterr().out
    request_id = response.headers["X-Request-ID"]
    assert HEX_ID.fullmatch(request_id), request_id
    lines = _lines(out)
    request_lines = [
        line for line in lines if line.get("logger") in ("headroom.test", "some.library", "uvicorn.access")
    ]
    assert [line["event"] for line in request_lines][:3] == ["test.step", "a library line", "test.step"]
    assert any(
        line["logger"] == "uvicorn.access" and "/test-only/log" in line["event"] for line in request_lines
    )
    assert len(request_lines) == 4, out
    assert all(line.get("request_id") == request_id for line in request_lines), out


def test_a_sane_incoming_id_is_kept_and_a_bad_one_replaced(app: Any, capsys: Any) -> None:
    with serving(app) as server:
        kept = httpx.get(f"{server}/test-only/log", headers={"X-Request-ID": "lb-7f3a.42:abc"}, timeout=30)
        replaced = {
            bad: httpx.get(f"{server}/test-only/log", headers={"X-Request-ID": bad}, timeout=30)
            for bad in ("has space", "x" * 65, 'evil"=1', "-starts-with-dash", "")
        }
    out = capsys.readouterr().out
    assert kept.headers["X-Request-ID"] == "lb-7f3a.42:abc"
    for bad, response in replaced.items():
        assert HEX_ID.fullmatch(response.headers["X-Request-ID"]), (bad, response.headers)
    assert len(_request_lines(out, "lb-7f3a.42:abc")) == 4, out


def test_a_500_logs_and_returns_the_request_id(app: Any, capsys: Any) -> None:
    with serving(app) as server:
        capsys.readouterr()
        response = httpx.get(f"{server}/test-only/boom", timeout=30)
    out = capsys.readouterr().out
    assert response.status_code == 500
    request_id = response.headers["X-Request-ID"]
    events = [line["event"] for line in _request_lines(out, request_id)]
    assert "test.before_boom" in events and "api.unhandled_error" in events, out
    assert any("/test-only/boom" in event and "500" in event for event in events), out  # the access line


def test_ids_differ_between_requests_and_errors_carry_one(client: TestClient) -> None:
    first = client.get("/healthz").headers["X-Request-ID"]
    second = client.get("/healthz").headers["X-Request-ID"]
    missing = client.get("/api/v1/clusters")  # 401: the error handlers answer inside the middleware
    assert missing.status_code == 401 and HEX_ID.fullmatch(missing.headers["X-Request-ID"])
    assert first != second


def _logs_and_fails(*_: Any, **params: Any) -> dict[str, Any]:
    get_logger("headroom.test").info("test.job_step", n=params["n"])
    logging.getLogger("botocore.test").warning("a library line in a job")
    if params["n"] == 2:
        raise RuntimeError("second run fails")
    return {"n": params["n"]}


def test_every_line_of_a_job_carries_its_id(settings: Any, clock: Any, capsys: Any) -> None:
    job = Job(
        name="test.logging", queue="maintenance", schedule=None, run=_logs_and_fails, description="logs"
    )
    configure_logging("DEBUG", json=True)
    try:
        structlog.contextvars.clear_contextvars()
        capsys.readouterr()
        run_job(job, "unused://", settings, clock(), job_id="celery-task-1", n=1)
        with pytest.raises(RuntimeError):
            run_job(job, "unused://", settings, clock(), n=2)
        get_logger("headroom.test").info("test.after_jobs")
        out = capsys.readouterr().out
    finally:
        reset_logging()
    # Every line between the runs' start and end belongs to one of them (the Redis client's own debug lines, counting
    # the run, included); the lines of the test's own loggers are checked in order.
    lines = _lines(out)
    ours = ("headroom.test", "botocore.test", "headroom.platform.jobs.runner")
    assert all(line.get("job_id") for line in lines if line["event"] != "test.after_jobs"), out
    first = [line for line in lines if line.get("job_id") == "celery-task-1" and line["logger"] in ours]
    assert [line["event"] for line in first] == [
        "job.started",
        "test.job_step",
        "a library line in a job",
        "job.ended",
    ], out
    assert all(line["job"] == "test.logging" for line in first)
    second_id = next(line["job_id"] for line in lines if line.get("n") == 2)
    assert HEX_ID.fullmatch(second_id) and second_id != "celery-task-1"
    second = [line for line in lines if line.get("job_id") == second_id and line["logger"] in ours]
    assert [line["event"] for line in second] == [
        "job.started",
        "test.job_step",
        "a library line in a job",
        "job.ended",
    ], out
    assert second[-1]["outcome"] == "failed" and second[-1]["error_type"] == "RuntimeError"
    after = next(line for line in lines if line["event"] == "test.after_jobs")
    assert "job_id" not in after  # unbound when the run ends


SERVER_TIMING = re.compile(r'app;dur=(?P<app>[0-9.]+), db;dur=(?P<db>[0-9.]+);desc="(?P<n>[0-9]+) statements"')


def test_every_answer_says_its_server_and_database_time(client: TestClient) -> None:
    """Server-Timing: the whole request and its database statements, so a slow page can be split between the
    server, the network and the browser (bench/page_times.py's waterfall reads it)."""
    healthz = SERVER_TIMING.fullmatch(client.get("/healthz").headers["Server-Timing"])
    assert healthz and float(healthz["app"]) > 0

    owner = sign_up(client)
    listed = owner.get("/api/v1/clusters")
    assert listed.status_code == 200
    timing = SERVER_TIMING.fullmatch(listed.headers["Server-Timing"])
    assert timing, listed.headers["Server-Timing"]
    # the session lookup and the list are statements of this request; each request counts its own only
    assert int(timing["n"]) >= 2 and 0 < float(timing["db"]) <= float(timing["app"])
    again = SERVER_TIMING.fullmatch(owner.get("/api/v1/clusters").headers["Server-Timing"])
    assert again and int(again["n"]) == int(timing["n"])
    refused = client.get("/api/v1/clusters", cookies={"headroom_session": "not-a-session"})
    assert refused.status_code == 401 and SERVER_TIMING.fullmatch(refused.headers["Server-Timing"])


def test_sign_in_answers_say_nothing_of_their_time(client: TestClient) -> None:
    """A log-in's statements could differ by whether the address has an account: its answer carries no timing."""
    owner = sign_up(client)
    known = client.post("/api/v1/auth/login", json={"email": owner.session["user"]["email"], "password": "wrong password 1"})
    unknown = client.post("/api/v1/auth/login", json={"email": "nobody@example.com", "password": "wrong password 1"})
    me = owner.get("/api/v1/auth/me")
    for answer in (known, unknown, me):
        assert "server-timing" not in answer.headers and answer.headers["X-Request-ID"]
    assert known.status_code == unknown.status_code

"""The connection test says nothing about credentials or metrics until the address answers as Prometheus's HTTP API.

Prometheus's API answers every request with a JSON object whose "status" is "success" (with "data") or "error"
(with "errorType" and "error") (https://prometheus.io/docs/prometheus/latest/querying/api/, "Format overview").
Local HTTP servers stand in for what a wrong URL reaches: a web page, some other JSON API, a server with no such
path; and for Prometheus itself answering buildinfo, or (a compatible server without buildinfo) only queries.
"""

from __future__ import annotations

import http.server
import json
from typing import Any

import pytest
from helpers import sign_up
from local_http import LocalServer, fixed, serve

HTML = b"<!DOCTYPE html><html><head><title>Grafana</title></head><body>Welcome</body></html>"
BUILDINFO = {"status": "success", "data": {"version": "2.53.0", "revision": "x", "branch": "HEAD"}}
EMPTY_VECTOR = {"status": "success", "data": {"resultType": "vector", "result": []}}


def _make(owner: Any, url: str) -> str:
    made = owner.post("/api/v1/sources/prometheus", json={"name": "prom", "base_url": url,
                                                          "label_selector": 'job="tikv"'})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _test(owner: Any, url: str) -> dict[str, Any]:
    source_id = _make(owner, url)
    response = owner.post(f"/api/v1/sources/prometheus/{source_id}/test")
    assert response.status_code == 200, response.text
    report: dict[str, Any] = response.json()
    report["_health"] = owner.get(f"/api/v1/sources/prometheus/{source_id}").json()["health"]
    return report


@pytest.mark.parametrize(("answer", "got"), [
    (fixed(200, HTML, "text/html; charset=utf-8"), "got an HTML page at /api/v1/status/buildinfo"),
    (fixed(200, b'{"hello": "world"}', "application/json"),
     'got JSON without Prometheus\'s "status" and "data" at /api/v1/status/buildinfo'),
    (fixed(200, b"OK\n", "text/plain"), "got text/plain at /api/v1/status/buildinfo"),
    (fixed(404, b"not found", "text/plain"), "HTTP 404 at /api/v1/query"),
    (fixed(400, b"<html>bad request</html>", "text/html"), "got an HTML page at /api/v1/status/buildinfo"),
])
def test_an_address_that_is_not_prometheus_says_so_and_nothing_else(client: Any, answer: Any, got: str) -> None:
    owner = sign_up(client)
    with serve(answer) as other:
        report = _test(owner, other.url)
    expected = (f"This address answers, but not as Prometheus's HTTP API ({got}); check the URL: it should be the "
                "Prometheus base URL, e.g. http://prometheus:9090")
    assert report["messages"] == [expected]
    assert (report["ok"], report["reachable"], report["prometheus_api"], report["authenticated"]) == (
        False, True, False, False)
    assert report["metrics"] == [] and report["missing_metrics"] == [] and report["tikv_instances"] == []
    assert report["_health"]["last_error"] == expected


def _prometheus(buildinfo: bool, query: dict[str, Any] | None = None, status: int = 200) -> Any:
    def answer(handler: http.server.BaseHTTPRequestHandler, _state: LocalServer) -> None:
        path = handler.path.split("?")[0]
        if path == "/api/v1/status/buildinfo" and buildinfo:
            code, body = 200, BUILDINFO
        elif path == "/api/v1/query":
            code, body = status, query or EMPTY_VECTOR
        else:
            code, body = 404, {"status": "error", "errorType": "not_found", "error": "not found"}
        raw = json.dumps(body).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)

    return answer


@pytest.mark.parametrize("buildinfo", [True, False])
def test_prometheus_without_tikv_series_is_named_as_prometheus(client: Any, buildinfo: bool) -> None:
    owner = sign_up(client)
    with serve(_prometheus(buildinfo)) as prom:
        report = _test(owner, prom.url)
    assert (report["reachable"], report["prometheus_api"], report["authenticated"], report["ok"]) == (
        True, True, True, False)
    assert report["prometheus_version"] == ("2.53.0" if buildinfo else None)
    assert len(report["messages"]) == 1 and report["messages"][0].startswith("No TiKV series")
    # buildinfo missing: the query endpoint is what proves it is Prometheus's API
    assert any(hit.startswith("/api/v1/query") for hit in prom.hits)


def test_a_refusal_without_a_reason_still_says_something(client: Any) -> None:
    owner = sign_up(client)
    with serve(_prometheus(False, {"status": "error"}, status=400)) as prom:
        report = _test(owner, prom.url)
    assert report["prometheus_api"] is True and report["ok"] is False
    assert report["messages"] == ["Prometheus refused the request (HTTP 400) without saying why"]
    assert all(m.strip() and not m.strip().endswith(":") for m in report["messages"])


def test_refused_credentials_say_nothing_about_what_answered(client: Any) -> None:
    owner = sign_up(client)
    with serve(fixed(401, b"", "text/plain")) as prom:
        report = _test(owner, prom.url)
    assert (report["reachable"], report["prometheus_api"], report["authenticated"]) == (True, None, False)
    assert report["messages"] == ["/api/v1/status/buildinfo answered HTTP 401: check the credentials"]

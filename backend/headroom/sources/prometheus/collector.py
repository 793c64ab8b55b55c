"""A small Prometheus HTTP API client (httpx): instant and range queries, targets, readiness, build info.

Transient failures (HTTP 429 and 5xx, connect/read errors and timeouts) are retried inside the call by the
one retry helper (headroom.platform.retry: full-jitter exponential backoff); anything else raises PrometheusError
at once. Credentials go into the
Authorization header only and never into an error message or a log line.

Every request has a total deadline and a cap on the answer's size (platform/outbound.py `limits`, docs/outbound.md):
a server that drips its answer or answers gigabytes fails the request with a plain message, and neither is
retried (the same server would do it again).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from headroom.platform import outbound
from headroom.platform.logging import get_logger
from headroom.platform.retry import RETRY_STATUSES, RetryPolicy, call_with_retries

log = get_logger("headroom.sources.prometheus.collector")

ErrorKind = Literal["unreachable", "auth", "http", "bad_response", "query", "not_prometheus"]
# What every answer of Prometheus's HTTP API is: a JSON object whose "status" is "success" (with "data") or
# "error" (with "errorType" and "error") (https://prometheus.io/docs/prometheus/latest/querying/api/, "Format
# overview").
API_STATUSES = ("success", "error")
BASE_URL_EXAMPLE = "http://prometheus:9090"
# docs/outbound.md: a range answer is ~40 bytes per point; Prometheus allows 11,000 points per series, so 64 MiB
# holds a full 11,000-point split of ~150 series, and the ingest's 1,440-point chunks of ~1,150 series.
MAX_RESPONSE_BYTES = 64 * outbound.MIB
DEADLINE_SECONDS = 120.0  # per request, connect to last byte


class PrometheusError(Exception):
    """A Prometheus request failed; `kind` says how (unreachable, auth, http, bad_response, query, not_prometheus:
    the address answers, but not as Prometheus's HTTP API)."""

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None, transient: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.message = message
        # a 429/5xx answer, a refused or dropped connection, a time-out: the retry helper tries again
        self.transient = transient


@dataclass(frozen=True)
class PrometheusAuth:
    """How to authenticate: none, a bearer token, or basic auth. The secret is kept out of repr()."""

    kind: Literal["none", "bearer", "basic"] = "none"
    username: str | None = None
    secret: str | None = field(default=None, repr=False)

    def headers(self) -> dict[str, str]:
        if self.kind == "bearer" and self.secret:
            return {"Authorization": f"Bearer {self.secret}"}
        return {}

    def httpx_auth(self) -> httpx.BasicAuth | None:
        if self.kind == "basic" and self.username is not None and self.secret is not None:
            return httpx.BasicAuth(self.username, self.secret)
        return None


@dataclass(frozen=True)
class _Answer:
    status_code: int
    content: bytes
    content_type: str = ""

    def json(self) -> Any:
        return json.loads(self.content)


@dataclass(frozen=True)
class Sample:
    """One instant-vector element."""

    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class RangeSeries:
    """One range-vector series: its labels and (timestamp, value) points; values may be NaN or ±Inf."""

    labels: dict[str, str]
    points: list[tuple[dt.datetime, float]]


@dataclass(frozen=True)
class Target:
    """An active scrape target: its labels after relabelling, scrape URL and health."""

    labels: dict[str, str]
    scrape_url: str
    health: str
    last_error: str


def _rfc3339(ts: dt.datetime) -> str:
    return f"{ts.timestamp():.3f}"


def parse_value(raw: str) -> float:
    """Parse a Prometheus sample value ("1.5", "NaN", "+Inf", "-Inf")."""
    return float(raw)


class PrometheusClient:
    """Talk to one Prometheus server's HTTP API (v1)."""

    def __init__(
        self,
        base_url: str,
        auth: PrometheusAuth | None = None,
        *,
        timeout_seconds: float = 30.0,
        deadline_seconds: float = DEADLINE_SECONDS,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # for messages: a URL may carry user:password@, which must never reach a log or the health record
        self._shown_url = str(httpx.URL(self.base_url).copy_with(username=None, password=None))
        self._auth = auth or PrometheusAuth()
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._deadline_seconds = deadline_seconds
        self._max_bytes = max_response_bytes
        # A tenant gives the URL: every request (and redirect hop) goes through the outbound guard.
        guard = outbound.guarded_client_kwargs() if transport is None else {"transport": transport}
        self._http = httpx.Client(
            base_url=self.base_url,
            # gzip or nothing: read_capped inflates gzip itself, within the cap
            headers={"User-Agent": "headroom", "Accept-Encoding": "gzip", **self._auth.headers()},
            auth=self._auth.httpx_auth(),
            timeout=timeout_seconds,
            follow_redirects=True,
            **guard,
        )
        self.requests = 0  # counted for tests and logs

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transport --------------------------------------------------------------------------------------

    def _fetch(self, method: str, path: str, data: Mapping[str, str] | None) -> _Answer:
        """One request within the deadline, its body read within the cap."""
        kwargs: dict[str, Any] = {"params": data} if method == "GET" else {"data": data}
        with (
            outbound.limits(seconds=self._deadline_seconds, max_bytes=self._max_bytes),
            self._http.stream(method, path, **kwargs) as response,
        ):
            kind = response.headers.get("Content-Type", "")
            if response.status_code >= 400 and response.status_code not in (400, 422):
                return _Answer(response.status_code, b"", kind)  # the status says it all: the body is not read
            return _Answer(response.status_code, outbound.read_capped(response, self._max_bytes), kind)

    def _request(self, method: str, path: str, data: Mapping[str, str] | None = None) -> _Answer:
        return call_with_retries(
            lambda: self._attempt(method, path, data),
            policy=self._retry,
            transient=lambda error: isinstance(error, PrometheusError) and error.transient,
            sleep=self._sleep,
        )

    def _attempt(self, method: str, path: str, data: Mapping[str, str] | None) -> _Answer:
        """One request; a failure worth retrying raises a PrometheusError marked transient."""
        self.requests += 1
        try:
            response = self._fetch(method, path, data)
        except outbound.OutboundBlocked as blocked:  # a policy answer: retrying cannot change it
            raise PrometheusError(
                "unreachable", f"refused to connect to {blocked.host}: {blocked.reason}"
            ) from None
        except outbound.DeadlineExceeded as late:  # not retried: the same server would be as slow again
            raise PrometheusError(
                "unreachable", f"Prometheus at {self._shown_url} did not answer {path} within {late.seconds:g} s"
            ) from None
        except outbound.ResponseTooLarge as big:
            raise PrometheusError(
                "bad_response",
                f"Prometheus answered more than {outbound.format_mib(big.max_bytes)} to {path}; "
                "narrow the label selector",
            ) from None
        except httpx.DecodingError as error:
            raise PrometheusError("bad_response", f"{path}: {error}") from None
        except httpx.TransportError as error:  # time-outs included: said in words, never as a class name
            raise PrometheusError(
                "unreachable", outbound.failure_in_words(error, self._shown_url), transient=True
            ) from None
        if response.status_code in RETRY_STATUSES:
            log.info("prometheus.retry", path=path, status=response.status_code, attempt=self.requests)
            raise PrometheusError(
                "http", f"{path} answered HTTP {response.status_code}", status=response.status_code, transient=True
            )
        if response.status_code in (401, 403):
            raise PrometheusError(
                "auth",
                f"{path} answered HTTP {response.status_code}: check the credentials",
                status=response.status_code,
            )
        if response.status_code == 400 or response.status_code == 422:
            _api_body(response, path)  # an HTML 400 is not Prometheus refusing a query
            raise PrometheusError("query", _api_error(response), status=response.status_code)
        if response.status_code >= 400:
            raise PrometheusError(
                "http", f"{path} answered HTTP {response.status_code}", status=response.status_code
            )
        return response

    def _api(self, method: str, path: str, data: Mapping[str, str] | None = None) -> Any:
        response = self._request(method, path, data)
        body = _api_body(response, path)
        if body.get("status") != "success":
            raise PrometheusError("query", _api_error(response))
        return body.get("data")

    # --- endpoints --------------------------------------------------------------------------------------

    def ready(self) -> bool:
        """Return whether `/-/ready` answers 200 (Prometheus has loaded its TSDB)."""
        self._request("GET", "/-/ready")
        return True

    def build_info(self) -> dict[str, str]:
        """Return `/api/v1/status/buildinfo` (version, revision, ...)."""
        data = self._api("GET", "/api/v1/status/buildinfo")
        return {str(k): str(v) for k, v in (data or {}).items()}

    def identify(self) -> dict[str, str]:
        """Check that the address answers as Prometheus's HTTP API; return its build info ({} without one).

        `/api/v1/status/buildinfo` first; a server without it (some Prometheus-compatible ones) must answer the
        instant query `time()` at `/api/v1/query`. Anything else raises PrometheusError("not_prometheus").
        """
        try:
            answer = self._request("GET", "/api/v1/status/buildinfo")
        except PrometheusError as error:
            if error.kind != "http" or error.status != 404:
                raise
        else:
            body = _api_body(answer, "/api/v1/status/buildinfo")
            if body.get("status") == "success" and isinstance(body.get("data"), dict):
                return {str(k): str(v) for k, v in body["data"].items()}
            # "error" from buildinfo (an agent-mode or compatible server): the query endpoint decides
        try:
            answer = self._request("GET", "/api/v1/query", {"query": "time()"})
        except PrometheusError as error:
            if error.kind == "http" and error.status == 404:
                raise _not_prometheus("HTTP 404 at /api/v1/query") from None
            raise
        body = _api_body(answer, "/api/v1/query")
        if body.get("status") != "success" or "data" not in body:
            raise PrometheusError("query", _api_error(answer))
        return {}

    def instant(self, query: str, at: dt.datetime | None = None) -> list[Sample]:
        """Evaluate an instant query."""
        params = {"query": query}
        if at is not None:
            params["time"] = _rfc3339(at)
        data = self._api("POST", "/api/v1/query", params)
        if data.get("resultType") == "scalar":
            return [Sample({}, parse_value(data["result"][1]))]
        return [
            Sample({str(k): str(v) for k, v in item["metric"].items()}, parse_value(item["value"][1]))
            for item in data.get("result", [])
        ]

    def query_range(
        self, query: str, start: dt.datetime, end: dt.datetime, step_seconds: int
    ) -> list[RangeSeries]:
        """Evaluate a range query over [start, end] at a step (sent as a POST form: queries can be long)."""
        data = self._api(
            "POST",
            "/api/v1/query_range",
            {"query": query, "start": _rfc3339(start), "end": _rfc3339(end), "step": str(step_seconds)},
        )
        out: list[RangeSeries] = []
        for item in data.get("result", []):
            points = [
                (dt.datetime.fromtimestamp(float(ts), dt.UTC), parse_value(value))
                for ts, value in item["values"]
            ]
            out.append(RangeSeries({str(k): str(v) for k, v in item["metric"].items()}, points))
        return out

    def targets(self) -> list[Target]:
        """Return the active scrape targets (`/api/v1/targets?state=active`)."""
        data = self._api("GET", "/api/v1/targets", {"state": "active"})
        return [
            Target(
                {str(k): str(v) for k, v in t.get("labels", {}).items()},
                str(t.get("scrapeUrl", "")),
                str(t.get("health", "unknown")),
                str(t.get("lastError", "")),
            )
            for t in data.get("activeTargets", [])
        ]


def _api_error(response: _Answer) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"Prometheus answered HTTP {response.status_code}"
    if not isinstance(body, dict) or body.get("status") not in API_STATUSES:
        return _not_prometheus(_described(response)).message
    reason = str(body.get("error") or "").strip()
    kind = str(body.get("errorType") or "").strip()
    if not reason:
        return f"Prometheus refused the request (HTTP {response.status_code}) without saying why"
    return f"Prometheus refused the query ({kind}): {reason}" if kind else f"Prometheus refused the query: {reason}"


def _described(answer: _Answer) -> str:
    """What an answer that is not Prometheus's JSON looks like, in words: "an HTML page", "plain text"."""
    kind = answer.content_type.split(";")[0].strip().lower()
    head = answer.content.lstrip()[:64].lower()
    if "html" in kind or head.startswith((b"<!doctype", b"<html", b"<")):
        return "got an HTML page"
    if not answer.content.strip():
        return f"got an empty answer (HTTP {answer.status_code})"
    if "json" in kind or head.startswith((b"{", b"[")):
        return 'got JSON without Prometheus\'s "status" and "data"'
    return f"got {kind or 'plain text'}"


def _not_prometheus(what: str) -> PrometheusError:
    return PrometheusError(
        "not_prometheus",
        f"This address answers, but not as Prometheus's HTTP API ({what}); check the URL: it should be the "
        f"Prometheus base URL, e.g. {BASE_URL_EXAMPLE}",
    )


def _api_body(answer: _Answer, path: str) -> dict[str, Any]:
    """The JSON object of an API answer; PrometheusError("not_prometheus") when it is not one."""
    try:
        body = answer.json()
    except ValueError:
        raise _not_prometheus(f"{_described(answer)} at {path}") from None
    if not isinstance(body, dict) or body.get("status") not in API_STATUSES:
        raise _not_prometheus(f"{_described(answer)} at {path}")
    return body

"""Read a TiKV node's effective config from its status port: `GET http://<status_address>/config`.

docs/reference/tikv-metrics.md#status-port: the status server (`server.status-addr`, default 20180) answers `GET /config` with the current
effective config as nested kebab-case JSON; `/config` is exempt from the client-cert check under TLS. Transient
failures (connect errors, timeouts, 429/5xx) are retried by the one retry helper (headroom.platform.retry).

Each attempt has a total deadline and the answer a size cap (docs/outbound.md): TiKV's /config is tens of KiB,
so 4 MiB leaves a wide margin; an address that drips or floods fails with a plain message, not retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from headroom.platform import outbound
from headroom.platform.retry import RETRY_STATUSES, RetryPolicy, call_with_retries

MAX_CONFIG_BYTES = 4 * outbound.MIB
DEADLINE_SECONDS = 15.0  # per attempt, connect to last byte


class StatusPortError(Exception):
    """The status port could not be read (unreachable, HTTP error, or not a JSON object)."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient  # a refused or dropped connection, a 429/5xx: worth another attempt


def config_url(status_address: str) -> str:
    """Return the `/config` URL of a status address ("10.0.1.5:20180" or a full http(s) URL)."""
    base = status_address if "://" in status_address else f"http://{status_address}"
    return base.rstrip("/") + "/config"


def exchange(
    http: httpx.Client,
    method: str,
    url: str,
    *,
    deadline_seconds: float,
    max_bytes: int,
    slow_is_transient: bool,
    content: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """Send one request to a status port within the outbound limits; return (HTTP status, body read within the cap).

    Every failure to get an answer is a StatusPortError: a blocked address or an oversized answer is final, a
    dropped connection is transient, and a slow answer is transient only when `slow_is_transient` (a request
    that is safe to repeat and worth one more attempt; a read from the same slow server would be as slow again).
    """
    try:
        with (
            outbound.limits(seconds=deadline_seconds, max_bytes=max_bytes),
            http.stream(method, url, content=content, headers=headers) as response,
        ):
            return response.status_code, outbound.read_capped(response, max_bytes)
    except outbound.OutboundBlocked as blocked:  # a policy answer: retrying cannot change it
        raise StatusPortError(f"refused to send to {url}: {blocked.reason}") from None
    except outbound.DeadlineExceeded as late:
        raise StatusPortError(f"{url} did not answer within {late.seconds:g} s", transient=slow_is_transient) from None
    except outbound.ResponseTooLarge as big:
        raise StatusPortError(f"{url} answered more than {outbound.format_mib(big.max_bytes)}") from None
    except httpx.DecodingError as error:
        raise StatusPortError(f"{url}: {error}") from None
    except httpx.TransportError as error:
        raise StatusPortError(f"cannot reach {url}: {type(error).__name__}: {error}", transient=True) from None


def fetch_config(
    status_address: str,
    *,
    timeout_seconds: float = 10.0,
    deadline_seconds: float = DEADLINE_SECONDS,
    max_bytes: int = MAX_CONFIG_BYTES,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    transport: httpx.BaseTransport | None = None,
) -> tuple[dict[str, Any], str]:
    """Return (decoded config, raw body) from a TiKV status port."""
    policy = retry or RetryPolicy(attempts=3)
    url = config_url(status_address)
    # A tenant (or its Prometheus) gives the address: requests go through the outbound guard.
    guard = outbound.guarded_client_kwargs() if transport is None else {"transport": transport}
    headers = {"Accept-Encoding": "gzip"}  # gzip or nothing: read_capped inflates it within the cap
    with httpx.Client(timeout=timeout_seconds, headers=headers, **guard) as http:

        def attempt() -> tuple[dict[str, Any], str]:
            status, body = exchange(http, "GET", url, deadline_seconds=deadline_seconds, max_bytes=max_bytes,
                                    slow_is_transient=False)
            if status in RETRY_STATUSES:
                raise StatusPortError(f"{url} answered HTTP {status}", transient=True)
            if status != 200:
                raise StatusPortError(f"{url} answered HTTP {status}")
            try:
                decoded = json.loads(body)
            except (ValueError, RecursionError):  # RecursionError: arrays or objects nested ~1,000 deep
                raise StatusPortError(f"{url} did not answer JSON") from None
            if not isinstance(decoded, dict):
                raise StatusPortError(f"{url} did not answer a JSON object")
            return decoded, body.decode("utf-8", "replace")

        return call_with_retries(
            attempt,
            policy=policy,
            transient=lambda error: isinstance(error, StatusPortError) and error.transient,
            sleep=sleep,
        )


def advertised_store_address(config: dict[str, Any]) -> str | None:
    """Return the store (gRPC) address a config advertises: server.advertise-addr, else a concrete server.addr."""
    server = config.get("server")
    if not isinstance(server, dict):
        return None
    for key in ("advertise-addr", "addr"):
        value = server.get(key)
        if isinstance(value, str) and value and not value.startswith(("0.0.0.0:", "[::]:")):
            return value
    return None

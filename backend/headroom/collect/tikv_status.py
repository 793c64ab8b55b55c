"""Read a TiKV node's effective config from its status port: `GET http://<status_address>/config`.

domain.md s4.2: the status server (`server.status-addr`, default 20180) answers `GET /config` with the current
effective config as nested kebab-case JSON; `/config` is exempt from the client-cert check under TLS. Transient
failures (connect errors, timeouts, 429/5xx) are retried with backoff and jitter.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import httpx

from headroom.collect.prometheus import RETRY_STATUSES, RetryPolicy
from headroom.core import outbound


class StatusPortError(Exception):
    """The status port could not be read (unreachable, HTTP error, or not a JSON object)."""


def config_url(status_address: str) -> str:
    """Return the `/config` URL of a status address ("10.0.1.5:20180" or a full http(s) URL)."""
    base = status_address if "://" in status_address else f"http://{status_address}"
    return base.rstrip("/") + "/config"


def fetch_config(
    status_address: str,
    *,
    timeout_seconds: float = 10.0,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    transport: httpx.BaseTransport | None = None,
    rng: random.Random | None = None,
) -> tuple[dict[str, Any], str]:
    """Return (decoded config, raw body) from a TiKV status port."""
    policy = retry or RetryPolicy(attempts=3)
    rng = rng or random.Random()
    url = config_url(status_address)
    last = "no attempt"
    # A tenant (or its Prometheus) gives the address: requests go through the outbound guard.
    guard = outbound.guarded_client_kwargs() if transport is None else {"transport": transport}
    with httpx.Client(timeout=timeout_seconds, **guard) as http:
        for attempt in range(policy.attempts):
            if attempt:
                sleep(policy.delay(attempt - 1, rng))
            try:
                response = http.get(url)
            except outbound.OutboundBlocked as blocked:  # a policy answer: retrying cannot change it
                raise StatusPortError(f"refused to fetch {url}: {blocked.reason}") from None
            except httpx.TransportError as error:
                last = f"cannot reach {url}: {type(error).__name__}: {error}"
                continue
            if response.status_code in RETRY_STATUSES:
                last = f"{url} answered HTTP {response.status_code}"
                continue
            if response.status_code != 200:
                raise StatusPortError(f"{url} answered HTTP {response.status_code}")
            try:
                decoded = response.json()
            except (ValueError, RecursionError):  # RecursionError: arrays or objects nested ~1,000 deep
                raise StatusPortError(f"{url} did not answer JSON") from None
            if not isinstance(decoded, dict):
                raise StatusPortError(f"{url} did not answer a JSON object")
            return decoded, response.text
    raise StatusPortError(last)


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

"""Set one TiKV key on one node through its status port and read it back (docs/apply.md, step "set, then verify").

`POST http://<status_address>/config` with `{"<dotted.key>": "<value>"}` (docs/reference/tikv-metrics.md#status-port):
TiKV answers 200 with an empty body when the key changed, and 500 with `failed to update, error: ...` when it
refuses (a key that cannot change online: `config <field> can not be changed`; a key it does not have; a value it
cannot parse). Then `GET /config` (tikv_status.fetch_config) reads the value back, and the two are compared in
TiKV's units (tikvconf.parse.same_value: "4GiB" is "4096MiB").

One request path with tikv_status (tikv_status.exchange): the outbound guard, a deadline per attempt and a size cap on the answer.
Retries: setting a key to a value is idempotent, so a connection error, a timeout or a 429/502/503/504 is retried;
a 500 is not, since TiKV answers a refusal with 500 and the same request would be refused again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from headroom.domain.tikvconf.parse import flatten, same_value
from headroom.inventory.tikv_status import DEADLINE_SECONDS, StatusPortError, config_url, exchange, fetch_config
from headroom.platform import outbound
from headroom.platform.retry import RetryPolicy, call_with_retries

MAX_ANSWER_BYTES = 64 * 1024  # an answer to POST /config is empty or one error line
RETRY_SET_STATUSES = frozenset({429, 502, 503, 504})  # not 500: TiKV's refusal (see the module docstring)


class ConfigRefused(StatusPortError):
    """TiKV refused the change (its own words in `tikv_message`): nothing was changed on the node."""

    def __init__(self, message: str, tikv_message: str) -> None:
        super().__init__(message)
        self.tikv_message = tikv_message


@dataclass(frozen=True)
class SetResult:
    """What was asked and what the node reports afterwards."""

    key: str
    requested: Any
    read_back: Any = None
    verified: bool = False  # the node reports the requested value (in TiKV's units)


def wire_value(value: Any) -> str:
    """Write a value as POST /config takes it: a string (booleans as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict) or value is None:
        raise ValueError("POST /config takes one scalar value per key")
    return str(value)


def set_config_key(
    status_address: str,
    key: str,
    value: Any,
    *,
    persist: bool = True,
    timeout_seconds: float = 10.0,
    deadline_seconds: float = DEADLINE_SECONDS,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    transport: httpx.BaseTransport | None = None,
) -> SetResult:
    """Set `key` to `value` on one TiKV node, then read the node's config back and compare in TiKV's units."""
    policy = retry or RetryPolicy(attempts=3)
    url = config_url(status_address) + ("" if persist else "?persist=false")
    body = json.dumps({key: wire_value(value)})
    guard = outbound.guarded_client_kwargs() if transport is None else {"transport": transport}
    with httpx.Client(timeout=timeout_seconds, **guard) as http:

        def attempt() -> None:
            # Idempotent: the same value again is harmless, so a slow answer is worth one more attempt.
            status, raw = exchange(http, "POST", url, content=body, headers={"Content-Type": "application/json"},
                                   deadline_seconds=deadline_seconds, max_bytes=MAX_ANSWER_BYTES,
                                   slow_is_transient=True)
            answer = raw.decode("utf-8", "replace").strip()
            if status == 200:
                return
            if status in RETRY_SET_STATUSES:
                raise StatusPortError(f"{url} answered HTTP {status}", transient=True)
            if status == 500 and answer.startswith(("failed to update", "failed to decode")):
                raise ConfigRefused(f"TiKV at {status_address} refused to set {key}: {answer}", answer)
            raise StatusPortError(f"{url} answered HTTP {status}: {answer[:200]}")

        call_with_retries(attempt, policy=policy,
                          transient=lambda error: isinstance(error, StatusPortError) and error.transient, sleep=sleep)
    config, _ = fetch_config(status_address, timeout_seconds=timeout_seconds, deadline_seconds=deadline_seconds,
                             retry=policy, sleep=sleep, transport=transport)
    read_back = flatten(config).get(key)
    return SetResult(key=key, requested=value, read_back=read_back,
                     verified=read_back is not None and same_value(key, value, read_back))

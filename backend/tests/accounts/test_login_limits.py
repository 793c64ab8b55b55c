"""The log-in back-off (docs/login-limits.md), client IPs behind trusted proxies, and log-in with Redis down."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from headroom.api.app import create_app
from helpers import PASSWORD, served_by_uvicorn, sign_up

ATTACKER = ("203.0.113.7", 40001)
OWNER_HOME = ("198.51.100.9", 40002)
PROXY = ("10.0.0.2", 40003)


@pytest.fixture()
def clients() -> Iterator[Any]:
    made: list[TestClient] = []

    def _client(app: Any, peer: tuple[str, int]) -> TestClient:
        c = TestClient(app, raise_server_exceptions=False, client=peer)
        made.append(c)
        return c

    yield _client
    for c in made:
        c.close()


def _login(client: Any, email: str, password: str, **headers: str) -> int:
    return int(client.post("/api/v1/auth/login", json={"email": email, "password": password},
                           headers=headers).status_code)


def test_wrong_passwords_from_one_ip_do_not_lock_the_owner_out(app: Any, client: Any, clients: Any,
                                                               settings: Any) -> None:
    sign_up(client, email="alice@example.com")
    attacker = clients(app, ATTACKER)
    limit = settings.login_rate_per_account_ip
    codes = [_login(attacker, "alice@example.com", f"guess-{i}") for i in range(limit + 2)]
    assert codes == [401] * limit + [429, 429]
    # Even the right password is refused from the attacker's address for now...
    blocked = attacker.post("/api/v1/auth/login", json={"email": "alice@example.com", "password": PASSWORD})
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 0
    assert "this account from your address" in blocked.json()["error"]["message"]
    # ...but Alice, from her own address, logs in.
    assert _login(clients(app, OWNER_HOME), "alice@example.com", PASSWORD) == 200


def test_a_distributed_guesser_slows_an_account_but_not_where_its_owner_logs_in(
    app: Any, client: Any, clients: Any, settings: Any
) -> None:
    settings.login_rate_per_account = 6
    sign_up(client, email="bob@example.com")
    home = clients(app, OWNER_HOME)
    assert _login(home, "bob@example.com", PASSWORD) == 200  # Bob's usual place is now known
    for n in range(3):  # three addresses, two guesses each: under every per-IP limit, at the account ceiling
        bot = clients(app, (f"192.0.2.{10 + n}", 40010))
        assert [_login(bot, "bob@example.com", f"g{n}{i}") for i in range(2)] == [401, 401]
    fresh = clients(app, ("192.0.2.99", 40099))
    refused = fresh.post("/api/v1/auth/login", json={"email": "bob@example.com", "password": PASSWORD})
    assert refused.status_code == 429  # from a new address the account waits out the ceiling
    assert _login(home, "bob@example.com", PASSWORD) == 200  # from home Bob is never locked out


def test_users_behind_a_trusted_proxy_each_have_their_own_address(app_ctx: Any, client: Any, clients: Any,
                                                                  settings: Any) -> None:
    settings.trusted_proxies = "10.0.0.0/8"
    app = create_app(app_ctx)
    sign_up(client, email="newcomer@example.com")
    proxy = clients(app, PROXY)
    # 21 people behind the proxy each mistype once (nginx appends the address it saw).
    codes = [_login(proxy, f"typo{i}@example.com", "wrong password", **{"X-Forwarded-For": f"198.51.100.{i + 1}"})
             for i in range(settings.login_rate_per_ip + 1)]
    assert codes == [401] * (settings.login_rate_per_ip + 1)
    assert _login(proxy, "newcomer@example.com", PASSWORD, **{"X-Forwarded-For": "198.51.100.200"}) == 200
    # The client's own X-Forwarded-For entries left of the proxy's are not believed: the rightmost untrusted
    # address is the client, so rotating the spoofed part changes nothing.
    spoofed = [_login(proxy, f"spray{i}@example.com", "wrong password",
                      **{"X-Forwarded-For": f"172.16.{i}.1, 203.0.113.50"})
               for i in range(settings.login_rate_per_ip + 1)]
    assert spoofed == [401] * settings.login_rate_per_ip + [429]


def test_x_forwarded_for_from_an_untrusted_peer_is_ignored(app_ctx: Any, clients: Any, settings: Any) -> None:
    settings.trusted_proxies = "10.0.0.0/8"
    settings.login_rate_per_ip = 3
    direct = clients(create_app(app_ctx), ATTACKER)
    codes = [_login(direct, f"spray{i}@example.com", "wrong password", **{"X-Forwarded-For": f"198.51.100.{i}"})
             for i in range(5)]
    assert codes == [401, 401, 401, 429, 429]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_served_by_uvicorn_a_loopback_peer_cannot_rotate_x_forwarded_for(app: Any, settings: Any) -> None:
    """`headroom serve` with no trusted proxies: the real server must not believe X-Forwarded-For from 127.0.0.1."""
    import httpx

    settings.login_rate_per_ip = 3
    with served_by_uvicorn(app) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as http:
        codes = [
            http.post("/api/v1/auth/login", json={"email": f"loop{i}@example.com", "password": "wrong password"},
                      headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
            for i in range(5)
        ]
    assert codes == [401, 401, 401, 429, 429]


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    from headroom.platform.settings import Settings
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        Settings(HEADROOM_TRUSTED_PROXIES="10.0.0.0/8, nginx")
    assert "HEADROOM_TRUSTED_PROXIES: 'nginx' is not an IP address or CIDR network" in str(info.value)
    assert Settings(HEADROOM_TRUSTED_PROXIES="10.0.0.0/8, ::1").trusted_proxy_list == ["10.0.0.0/8", "::1"]
    assert Settings(HEADROOM_TRUSTED_PROXIES="172.28.5.1/16").trusted_proxy_list == ["172.28.0.0/16"]


def test_log_in_works_while_redis_is_down(app_ctx: Any, client: Any, make_client: Any, settings: Any) -> None:
    from headroom.platform.ratelimit import RedisRateLimiter
    from structlog.testing import capture_logs

    sign_up(client, email="carol@example.com")
    # A real refused connection: nothing listens on this port.
    app_ctx.rate_limiter = RedisRateLimiter(f"redis://127.0.0.1:{_free_port()}/0")
    user = make_client()
    started = time.monotonic()
    with capture_logs() as logs:
        ok = user.post("/api/v1/auth/login", json={"email": "carol@example.com", "password": PASSWORD})
        wrong = [_login(user, "carol@example.com", "wrong password") for _ in range(settings.login_rate_per_account_ip)]
        limited = _login(user, "carol@example.com", "wrong password")
    elapsed = time.monotonic() - started
    assert ok.status_code == 200, ok.text
    assert wrong == [401] * settings.login_rate_per_account_ip
    assert limited == 429  # the in-process limiter still counts
    assert elapsed < 15, elapsed
    warnings = [e for e in logs if e["event"] == "ratelimit.redis_unavailable"]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"
    assert app_ctx.rate_limiter.degraded


def test_redis_limiter_counts_in_redis_and_falls_back_when_it_goes_away(redis_url: str) -> None:
    import uuid

    from headroom.platform.errors import RateLimited
    from headroom.platform.ratelimit import RedisRateLimiter

    prefix = f"headroom:test:{uuid.uuid4().hex}:"
    limiter = RedisRateLimiter(redis_url, prefix=prefix)
    assert [limiter.add("k", 60) for _ in range(3)] == [1, 2, 3]
    count, left = limiter.peek("k")
    assert count == 3 and 0 < left <= 60
    with pytest.raises(RateLimited):
        limiter.hit("k", 3, 60)
    limiter.reset("k")
    assert limiter.peek("k") == (0, 0)
    assert not limiter.degraded
    # Another limiter on the same store sees the same counts (shared across API processes).
    assert RedisRateLimiter(redis_url, prefix=prefix).add("k", 60) == 1
    assert limiter.peek("k")[0] == 1
    limiter.reset("k")

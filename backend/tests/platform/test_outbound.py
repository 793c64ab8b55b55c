"""The outbound request guard (SSRF): which addresses a tenant-given URL may reach, under both policies, at
create time (422 naming the field) and at fetch time (pinned address, redirects re-checked), against real local
HTTP servers on 127.0.0.1.

No test here ever sends a packet off this machine: refused destinations are refused before the connect, and the
redirect test redirects to 0.0.0.0 (which Linux connects to the local host), so a broken guard shows up as a hit
on a local recording server instead of traffic to a metadata address.
"""

from __future__ import annotations

import http.server
import ipaddress
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from headroom.inventory.tikv_status import StatusPortError, fetch_config
from headroom.platform.errors import InvalidInput
from headroom.platform.outbound import (
    GuardedTransport,
    OutboundBlocked,
    check_url,
    checked_addresses,
    refusal,
    require_allowed_url,
)
from headroom.platform.settings import Settings, get_settings
from headroom.sources.prometheus.collector import PrometheusClient, PrometheusError, RetryPolicy
from helpers import sign_up
from pydantic import ValidationError

# (address, refused under private-ok, refused under public-only). Categories: RFC 1918 private, RFC 6598 shared,
# RFC 3927 / RFC 4291 link-local, RFC 4193 unique-local, RFC 5737 / RFC 3849 documentation, AWS metadata
# addresses from the EC2 User Guide ("Access instance metadata": 169.254.169.254 and fd00:ec2::254).
ADDRESS_TABLE = [
    ("127.0.0.1", False, True),
    ("127.8.9.10", False, True),
    ("::1", False, True),
    ("10.0.1.5", False, True),
    ("172.16.0.1", False, True),
    ("192.168.1.1", False, True),
    ("100.64.0.1", False, True),
    ("fc00::1", False, True),
    ("fd12:3456::1", False, True),
    ("198.51.100.7", False, True),  # TEST-NET-2 (RFC 5737): not global
    ("2001:db8::1", False, True),
    ("169.254.169.254", True, True),
    ("169.254.170.2", True, True),  # ECS task metadata
    ("169.254.1.1", True, True),
    ("fd00:ec2::254", True, True),
    ("fe80::1", True, True),
    ("fe80::1%1", True, True),
    ("::ffff:169.254.169.254", True, True),  # IPv4-mapped
    ("::ffff:127.0.0.1", False, True),
    ("::ffff:10.0.0.1", False, True),
    ("::169.254.169.254", True, True),  # deprecated IPv4-compatible
    ("64:ff9b::a9fe:a9fe", True, True),  # NAT64 well-known prefix, RFC 6052
    ("2002:a9fe:a9fe::1", True, True),  # 6to4 of 169.254.169.254
    ("0.0.0.0", True, True),
    ("::", True, True),
    ("224.0.0.251", True, True),
    ("ff02::1", True, True),
    ("240.0.0.1", True, True),
    ("255.255.255.255", True, True),
    ("8.8.8.8", False, False),
    ("2606:4700:4700::1111", False, False),
    ("::ffff:8.8.8.8", False, False),
]
# The metadata and platform addresses of the major clouds (docs/outbound.md#cloud-metadata-addresses, with the
# clouds' own pages): refused under both policies, including the ones outside link-local that a private-ok install
# (fc00::/7, 100.64.0.0/10, 192.0.0.0/24) or even a public-only one (Azure's WireServer) would otherwise reach.
CLOUD_METADATA = [
    "169.254.169.254", "169.254.170.23", "fd00:ec2::254", "fd00:ec2::23", "fd20:ce::254", "168.63.129.16",
    "100.100.100.200", "fd00:c1::a9fe:a9fe", "192.0.0.192", "169.254.0.23", "fd00:42::42",
    "::ffff:100.100.100.200", "64:ff9b::a83f:8110",  # Alibaba's IPv4-mapped; Azure's WireServer through NAT64
]


@pytest.mark.parametrize("address", CLOUD_METADATA)
def test_every_major_clouds_metadata_address_is_refused_under_both_policies(address: str) -> None:
    ip = ipaddress.ip_address(address)
    for policy in ("private-ok", "public-only"):
        reason = refusal(ip, policy)
        assert reason is not None and "metadata" in reason, (address, policy, reason)


def test_the_neighbours_of_the_metadata_addresses_follow_the_policy() -> None:
    # exact addresses, not ranges: the public neighbour of Azure's WireServer stays fetchable, Alibaba's CGNAT
    # neighbour follows the private-ok policy
    assert refusal(ipaddress.ip_address("168.63.129.17"), "public-only") is None
    assert refusal(ipaddress.ip_address("100.100.100.201"), "private-ok") is None
    assert refusal(ipaddress.ip_address("fd20:ce::253"), "private-ok") is None


@pytest.mark.parametrize(("address", "private_ok_refuses", "public_only_refuses"), ADDRESS_TABLE)
def test_address_table(address: str, private_ok_refuses: bool, public_only_refuses: bool) -> None:
    ip = ipaddress.ip_address(address)
    assert (refusal(ip, "private-ok") is not None) is private_ok_refuses
    assert (refusal(ip, "public-only") is not None) is public_only_refuses


def test_metadata_reason_is_named() -> None:
    reason = refusal(ipaddress.ip_address("::ffff:169.254.169.254"), "private-ok")
    assert reason is not None and "metadata" in reason and "169.254.169.254" in reason


# The system resolver (glibc inet_aton) reads these as 127.0.0.1; the guard checks what the connect would use.
@pytest.mark.parametrize("host", ["localhost", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "[::ffff:127.0.0.1]"])
def test_loopback_spellings_follow_the_policy(host: str) -> None:
    assert checked_addresses(host, 80, "private-ok")
    with pytest.raises(OutboundBlocked, match="loopback"):
        checked_addresses(host, 80, "public-only")


def test_every_resolved_address_is_checked() -> None:
    # a name answering one fine and one metadata address is refused, whatever order the system would try
    def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1", "169.254.169.254"]

    with pytest.raises(OutboundBlocked, match="metadata"):
        checked_addresses("both.example", 80, "private-ok", resolve)


@pytest.mark.parametrize(
    ("url", "policy", "refused"),
    [
        ("http://169.254.169.254/latest/meta-data/", "private-ok", True),
        ("http://[fd00:ec2::254]/latest/meta-data/", "private-ok", True),
        ("http://[::ffff:a9fe:a9fe]/", "private-ok", True),
        ("ftp://prom.example.com/", "private-ok", True),
        ("http://127.0.0.1:9090", "private-ok", False),
        ("http://10.0.1.5:9090", "private-ok", False),
        ("http://127.0.0.1:9090", "public-only", True),
        ("http://localhost:9090", "public-only", True),
        ("http://10.0.1.5:9090", "public-only", True),
        ("http://8.8.8.8:9090", "public-only", False),
        ("http://name-that-does-not-resolve.invalid:9090", "public-only", False),  # the fetch checks again
    ],
)
def test_check_url(url: str, policy: Any, refused: bool) -> None:
    assert (check_url(url, policy) is not None) is refused


def test_require_allowed_url_is_a_422_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as caught:
        require_allowed_url("http://169.254.169.254/", field="base_url", policy="private-ok")
    assert caught.value.status_code == 422
    assert caught.value.details[0]["field"] == "base_url"
    assert "metadata" in caught.value.details[0]["message"]


def test_policy_setting_is_validated() -> None:
    assert Settings().outbound_policy == "private-ok"
    assert Settings(HEADROOM_OUTBOUND_POLICY="public-only").outbound_policy == "public-only"
    with pytest.raises(ValidationError, match="HEADROOM_OUTBOUND_POLICY"):
        Settings(HEADROOM_OUTBOUND_POLICY="anything-goes")


# --- real local servers ----------------------------------------------------------------------------------


class Recorder:
    """A local HTTP server: counts hits, records Host headers, answers JSON or a redirect."""

    def __init__(self, redirect_to: str | None = None) -> None:
        self.hits = 0
        self.hosts: list[str] = []
        self.redirect_to = redirect_to
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                recorder.hits += 1
                recorder.hosts.append(self.headers.get("Host", ""))
                if recorder.redirect_to is not None:
                    self.send_response(302)
                    self.send_header("Location", recorder.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b'{"status": "success", "data": {"version": "local"}, "server": {"addr": "x:1"}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def servers() -> Iterator[list[Recorder]]:
    made: list[Recorder] = []
    yield made
    for s in made:
        s.close()


@pytest.fixture()
def policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set the process-wide policy (what the API and the collectors read) for one test."""

    def _set(value: str) -> None:
        monkeypatch.setenv("HEADROOM_OUTBOUND_POLICY", value)
        get_settings.cache_clear()

    yield _set
    monkeypatch.delenv("HEADROOM_OUTBOUND_POLICY", raising=False)
    get_settings.cache_clear()


def no_retry_sleep(seconds: float) -> None:
    raise AssertionError("a refused destination must not be retried")


def test_prometheus_client_reaches_loopback_under_private_ok(servers: list[Recorder], policy: Any) -> None:
    policy("private-ok")
    target = Recorder()
    servers.append(target)
    with PrometheusClient(f"http://127.0.0.1:{target.port}") as client:
        assert client.build_info()["version"] == "local"
    assert target.hits == 1


def test_prometheus_client_refuses_loopback_under_public_only(servers: list[Recorder], policy: Any) -> None:
    policy("public-only")
    target = Recorder()
    servers.append(target)
    client = PrometheusClient(f"http://localhost:{target.port}", sleep=no_retry_sleep)
    with client, pytest.raises(PrometheusError, match="loopback") as caught:
        client.build_info()
    assert caught.value.kind == "unreachable"
    assert target.hits == 0 and client.requests == 1


def test_redirect_to_a_refused_address_is_checked_again(servers: list[Recorder], policy: Any) -> None:
    policy("private-ok")
    behind = Recorder()  # what a redirect to 0.0.0.0 reaches on Linux: the local host
    servers.append(behind)
    front = Recorder(redirect_to=f"http://0.0.0.0:{behind.port}/api/v1/status/buildinfo")
    servers.append(front)

    # control: without the guard the redirect does reach the server behind (so this test can fail)
    with PrometheusClient(f"http://127.0.0.1:{front.port}", transport=httpx.HTTPTransport()) as plain:
        assert plain.build_info()["version"] == "local"
    assert behind.hits == 1

    client = PrometheusClient(f"http://127.0.0.1:{front.port}", sleep=no_retry_sleep)
    with client, pytest.raises(PrometheusError, match="unspecified"):
        client.build_info()
    assert front.hits == 2 and behind.hits == 1  # the hop was refused before any connect


def test_redirect_to_a_name_resolving_to_metadata_is_refused(servers: list[Recorder]) -> None:
    front = Recorder(redirect_to="http://metadata.rebind.test/latest/meta-data/")
    servers.append(front)

    def dns(host: str, port: int) -> list[str]:
        return {"front.test": ["127.0.0.1"], "metadata.rebind.test": ["169.254.169.254"]}[host]

    guarded = GuardedTransport("private-ok", resolve=dns)
    client = PrometheusClient(f"http://front.test:{front.port}", transport=guarded, sleep=no_retry_sleep)
    with client, pytest.raises(PrometheusError, match="metadata"):
        client.build_info()
    assert front.hosts == [f"front.test:{front.port}"]


def test_status_port_client_does_not_follow_redirects(servers: list[Recorder], policy: Any) -> None:
    policy("private-ok")
    behind = Recorder()
    servers.append(behind)
    front = Recorder(redirect_to=f"http://[::ffff:127.0.0.1]:{behind.port}/config")
    servers.append(front)
    with pytest.raises(StatusPortError, match="HTTP 302"):
        fetch_config(f"127.0.0.1:{front.port}", sleep=no_retry_sleep)
    assert front.hits == 1 and behind.hits == 0


def test_connection_is_pinned_to_the_checked_address(servers: list[Recorder]) -> None:
    target = Recorder()
    servers.append(target)
    answers = iter([["127.0.0.1"], ["169.254.169.254"]])  # a rebinding DNS: fine when checked, metadata after

    def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    with httpx.Client(transport=GuardedTransport("private-ok", resolve=rebinding), trust_env=False) as http:
        response = http.get(f"http://prom.rebind.test:{target.port}/")
        assert response.status_code == 200
        # the request went to the address that was checked, with the tenant's host name kept in Host
        assert target.hosts == [f"prom.rebind.test:{target.port}"]
        # the next request resolves again and is checked again: refused, nothing sent
        with pytest.raises(OutboundBlocked, match="metadata"):
            http.get(f"http://prom.rebind.test:{target.port}/")
    assert target.hits == 1


def test_status_port_fetch_refused_without_retry(servers: list[Recorder], policy: Any) -> None:
    policy("public-only")
    target = Recorder()
    servers.append(target)
    with pytest.raises(StatusPortError, match="loopback"):
        fetch_config(f"127.0.0.1:{target.port}", sleep=no_retry_sleep, retry=RetryPolicy(attempts=3))
    assert target.hits == 0
    policy("private-ok")
    config, _raw = fetch_config(f"127.0.0.1:{target.port}", sleep=no_retry_sleep)
    assert config["server"] == {"addr": "x:1"} and target.hits == 1


# --- create and update through the API -------------------------------------------------------------------


def test_prometheus_source_base_url_is_checked_on_create_and_update(client: Any, policy: Any) -> None:
    policy("private-ok")
    owner = sign_up(client)
    body = {"name": "p", "base_url": "http://169.254.169.254/latest", "label_selector": 'job="tikv"'}
    refused = owner.post("/api/v1/sources/prometheus", json=body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"][0]["field"] == "base_url"
    assert "metadata" in refused.json()["error"]["message"]

    made = owner.post("/api/v1/sources/prometheus", json={**body, "base_url": "http://127.0.0.1:9090"})
    assert made.status_code == 201, made.text
    source_id = made.json()["id"]
    patched = owner.patch(f"/api/v1/sources/prometheus/{source_id}", json={"base_url": "http://[fd00:ec2::254]/"})
    assert patched.status_code == 422 and patched.json()["error"]["details"][0]["field"] == "base_url"

    policy("public-only")
    again = owner.post("/api/v1/sources/prometheus", json={**body, "name": "q", "base_url": "http://10.0.0.7:9090"})
    assert again.status_code == 422 and "private" in again.json()["error"]["details"][0]["message"]


def test_node_status_address_is_checked_on_create_and_update(client: Any, policy: Any) -> None:
    policy("private-ok")
    owner = sign_up(client)
    cluster = owner.post("/api/v1/clusters", json={"name": "prod", "tikv_version": "v8.5.1"}).json()
    base = f"/api/v1/clusters/{cluster['id']}/nodes"
    refused = owner.post(base, json={"store_address": "10.0.1.5:20160", "status_address": "169.254.169.254:80"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"][0]["field"] == "status_address"

    made = owner.post(base, json={"store_address": "10.0.1.5:20160", "status_address": "10.0.1.5:20180"})
    assert made.status_code == 201, made.text
    patched = owner.patch(f"{base}/{made.json()['id']}", json={"status_address": "[fd00:ec2::254]:20180"})
    assert patched.status_code == 422 and patched.json()["error"]["details"][0]["field"] == "status_address"

    policy("public-only")
    patched = owner.patch(f"{base}/{made.json()['id']}", json={"status_address": "10.0.1.5:20180"})
    assert patched.status_code == 422

"""Outbound request guard: which addresses Headroom may fetch a tenant-given URL from (SSRF defence).

Tenants hand Headroom URLs that the server then fetches (Prometheus base URLs, TiKV status addresses). The
guard resolves the host, checks every address it resolves to, and connects to a checked address only (the
resolved IP is pinned for the request, so a DNS answer that changes between the check and the connect, DNS
rebinding, cannot slip through). Every redirect hop goes through the same transport, so it is checked again.

Two policies (HEADROOM_OUTBOUND_POLICY):
* ``private-ok`` (default: self-hosted and embedded installs legitimately reach Prometheus on 10.x or 127.0.0.1);
* ``public-only`` (the SaaS): only globally routable addresses.
Under both, cloud metadata endpoints, link-local, unspecified, multicast and reserved addresses are refused.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Literal, get_args

import httpx

from headroom.core.errors import InvalidInput

OutboundPolicy = Literal["private-ok", "public-only"]
POLICIES: tuple[str, ...] = get_args(OutboundPolicy)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

# Instance metadata (IMDS), the Amazon DNS resolver and the Time Sync Service answer on these addresses from inside
# every EC2 instance. AWS EC2 User Guide, "Access instance metadata": IPv4 169.254.169.254, IPv6 fd00:ec2::254
# (Nitro only); "Amazon DNS server": 169.254.169.253 and fd00:ec2::253; "Set the time": 169.254.169.123 and
# fd00:ec2::123; ECS task metadata v2: 169.254.170.2. The IPv4 ones are link-local (refused anyway); the IPv6 ones
# are unique-local (fc00::/7, RFC 4193), which a private-ok install would otherwise allow, so they are named here.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.169.253",
        "169.254.169.123",
        "169.254.170.2",
        "fd00:ec2::254",
        "fd00:ec2::253",
        "fd00:ec2::123",
    )
)
# RFC 6052 s2.1: the well-known NAT64 prefix embeds an IPv4 address in its last 32 bits.
NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")
# RFC 6598: shared address space (carrier-grade NAT); not private in the RFC 1918 sense, not global either.
SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
PUBLIC_ONLY = " (this install only fetches public addresses)"


class OutboundBlocked(Exception):
    """A destination is refused by the outbound policy; `reason` says why (safe to show: no secrets)."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host}: {reason}")
        self.host = host
        self.reason = reason


def current_policy() -> OutboundPolicy:
    """Return the process-wide policy (HEADROOM_OUTBOUND_POLICY)."""
    from headroom.core.settings import get_settings

    return get_settings().outbound_policy


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4, Teredo), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    # Deprecated IPv4-compatible form ::a.b.c.d (RFC 4291 s2.5.5.1); :: and ::1 are handled as themselves.
    if int(ip) >> 32 == 0 and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip))
    return None


def refusal(ip: IPAddress, policy: OutboundPolicy) -> str | None:
    """Return why the policy refuses an address, or None when it may be fetched."""
    if isinstance(ip, ipaddress.IPv6Address):
        ip = ipaddress.IPv6Address(int(ip))  # drop a %scope: the address decides, not the interface
        inner = _embedded_ipv4(ip)
        if inner is not None:
            reason = refusal(inner, policy)
            return f"{reason} (embedded in {ip})" if reason else None
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata address"
    if ip.is_link_local:
        return f"{ip} is link-local"
    if ip.is_unspecified:
        return f"{ip} is the unspecified address"
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip == ipaddress.IPv4Address("255.255.255.255"):
        return f"{ip} is the broadcast address"
    if ip.is_loopback:  # before is_reserved: Python counts ::1 in the reserved ::/8
        return None if policy == "private-ok" else f"{ip} is a loopback address{PUBLIC_ONLY}"
    if ip.is_reserved:
        return f"{ip} is a reserved address"
    if policy == "private-ok":
        return None
    if ip.is_private or ip in SHARED_ADDRESS_SPACE or not ip.is_global:
        return f"{ip} is a private or non-public address{PUBLIC_ONLY}"
    return None


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve a host the way a connect would (getaddrinfo), in the order the system prefers."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


def checked_addresses(
    host: str, port: int, policy: OutboundPolicy, resolve: Resolver = system_resolver
) -> list[str]:
    """Resolve a host and return its addresses; raise OutboundBlocked if ANY of them is refused.

    Every address is checked (not just the first) so a name that answers both a public and a private address
    cannot be used to reach the private one on a retry or by the system's address ordering.
    """
    host = host.strip("[]")
    try:
        literal: IPAddress | None = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [host]
    else:
        try:
            addresses = resolve(host, port)
        except (socket.gaierror, UnicodeError) as error:
            raise httpx.ConnectError(f"cannot resolve {host}: {error}") from None
    if not addresses:
        raise httpx.ConnectError(f"cannot resolve {host}: no addresses")
    for address in addresses:
        reason = refusal(ipaddress.ip_address(address.split("%", 1)[0]), policy)
        if reason is not None:
            raise OutboundBlocked(host, reason)
    return addresses


def _port_of(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport that resolves, checks and pins the destination of every request it sends."""

    def __init__(
        self, policy: OutboundPolicy | None = None, *, resolve: Resolver = system_resolver, **kwargs: object
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.policy: OutboundPolicy = policy or current_policy()
        self._resolve = resolve

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme not in ("http", "https"):
            raise OutboundBlocked(request.url.host, f"scheme {request.url.scheme!r} is not http or https")
        host = request.url.host
        addresses = checked_addresses(host, _port_of(request.url), self.policy, self._resolve)
        last: httpx.ConnectError | None = None
        for address in addresses:
            # Connect to the checked IP; the Host header (set from the original URL) and TLS SNI/certificate
            # check keep the name, so virtual hosts and https behave as before.
            pinned = request.url.copy_with(host=address)
            extensions = dict(request.extensions)
            if request.url.scheme == "https":
                extensions["sni_hostname"] = host
            attempt = httpx.Request(
                request.method, pinned, headers=request.headers, stream=request.stream, extensions=extensions
            )
            try:
                return super().handle_request(attempt)
            except httpx.ConnectError as error:  # like socket.create_connection: try the next address
                last = error
        assert last is not None
        raise last


def guarded_client_kwargs(policy: OutboundPolicy | None = None) -> dict[str, object]:
    """Keyword arguments for an httpx.Client whose every request goes through the guard.

    trust_env=False: an HTTP(S)_PROXY from the environment would otherwise get its own transport and bypass the
    guard (httpx mounts proxies ahead of the given transport).
    """
    return {"transport": GuardedTransport(policy), "trust_env": False}


def check_url(url: str, policy: OutboundPolicy, resolve: Resolver = system_resolver) -> str | None:
    """Return why a URL would be refused at fetch time, or None. A name that doesn't resolve (yet) passes."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        return f"not a valid URL: {error}"
    if parsed.scheme not in ("http", "https"):
        return f"scheme {parsed.scheme!r} is not http or https"
    if not parsed.host:
        return "the URL has no host"
    try:
        checked_addresses(parsed.host, _port_of(parsed), policy, resolve)
    except OutboundBlocked as blocked:
        return blocked.reason
    except httpx.ConnectError:
        return None  # the fetch checks again; DNS may not answer for a host that is being set up
    return None


def require_allowed_url(
    url: str, *, field: str, policy: OutboundPolicy | None = None, resolve: Resolver = system_resolver
) -> None:
    """Raise a 422 naming the field when the outbound policy refuses a tenant-given URL."""
    reason = check_url(url, policy or current_policy(), resolve)
    if reason is not None:
        raise InvalidInput(
            f"{field}: Headroom will not fetch this address: {reason}.",
            code="outbound_address_refused",
            details=[{"field": field, "message": reason}],
        )

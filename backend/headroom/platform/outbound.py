"""Outbound request guard: which addresses Headroom may fetch a tenant-given URL from (SSRF defence).

Tenants hand Headroom URLs that the server then fetches (Prometheus base URLs, TiKV status addresses). The
guard resolves the host, checks every address it resolves to, and connects to a checked address only (the
resolved IP is pinned for the request, so a DNS answer that changes between the check and the connect, DNS
rebinding, cannot slip through). Every redirect hop goes through the same transport, so it is checked again.

Two policies (HEADROOM_OUTBOUND_POLICY):
* ``private-ok`` (default: self-hosted and embedded installs legitimately reach Prometheus on 10.x or 127.0.0.1);
* ``public-only`` (the SaaS): only globally routable addresses.
Under both, cloud metadata endpoints, link-local, unspecified, multicast and reserved addresses are refused.

Limits (docs/outbound.md): a fetch runs inside `limits(seconds=..., max_bytes=...)`. Every connect, read and
write of the guarded transport takes the time left as its timeout, so the whole fetch (connect, headers,
redirects, body) ends by the deadline even against a server dripping a byte every few seconds, which per-read
timeouts never catch; and the bytes received are counted, so no answer (nor a redirect's body, which httpx reads
whole) grows past the cap. `read_capped` reads a body within the cap, inflating gzip itself so a small
compressed answer cannot expand past it either. `OrgSlots` bounds how many outbound checks one organisation
(and the whole process) runs at once in the API.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import ssl
import threading
import time
import typing
import uuid
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, get_args

import httpcore
import httpx

from headroom.platform.errors import InvalidInput

OutboundPolicy = Literal["private-ok", "public-only"]
POLICIES: tuple[str, ...] = get_args(OutboundPolicy)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

# The metadata, credential and platform services the major clouds answer on from inside every VM: a fetch of any of
# them from a Headroom server running there could hand its credentials to a tenant. Under both policies they are
# refused by exact address (docs/outbound.md#cloud-metadata-addresses lists them with their public sources). Most
# IPv4 ones are link-local (refused anyway); the IPv6 ones are unique-local (fc00::/7, RFC 4193), and Alibaba's sits
# in RFC 6598 shared space, Oracle Classic's in 192.0.0.0/24 and Azure's WireServer in public space, which a
# private-ok install (or, for Azure's, even public-only) would otherwise allow, so every one is named here.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        # AWS: instance metadata, Amazon DNS, Time Sync (IPv4 and Nitro IPv6), ECS task metadata v2, EKS Pod Identity
        "169.254.169.254",
        "169.254.169.253",
        "169.254.169.123",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::254",
        "fd00:ec2::253",
        "fd00:ec2::123",
        "fd00:ec2::23",
        # Google Cloud: the metadata server's IPv6 address (IPv4 is 169.254.169.254)
        "fd20:ce::254",
        # Microsoft Azure: WireServer / host node virtual IP (IMDS itself is 169.254.169.254)
        "168.63.129.16",
        # Alibaba Cloud ECS metadata service
        "100.100.100.200",
        # Oracle Cloud: OCI's IPv6 instance metadata, and Oracle Cloud Classic's metadata address
        "fd00:c1::a9fe:a9fe",
        "192.0.0.192",
        # Tencent Cloud CVM metadata; Scaleway instance metadata (IPv4 and IPv6)
        "169.254.0.23",
        "169.254.42.42",
        "fd00:42::42",
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
    from headroom.platform.settings import get_settings

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


# --- limits: a total deadline and a byte cap per fetch ---------------------------------------------------

MIB = 1024 * 1024


class DeadlineExceeded(Exception):
    """The fetch did not finish within its total deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not answer within {seconds:g} s")
        self.seconds = seconds


class ResponseTooLarge(Exception):
    """The answer is larger than the fetch's cap (counted as received, and again as decoded)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"answered more than {format_mib(max_bytes)}")
        self.max_bytes = max_bytes


def format_mib(n: int) -> str:
    return f"{n / MIB:g} MiB"


@dataclass
class _Budget:
    deadline_at: float
    seconds: float  # as shown in the message: the deadline that binds
    max_bytes: int | None  # the body cap (shown in the message)
    received: int = 0

    def timeout(self, timeout: float | None) -> float:
        """The time left, as a socket timeout no longer than the one asked for; raise when none is left."""
        left = self.deadline_at - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(self.seconds)
        return left if timeout is None else min(timeout, left)

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline_at - 0.05  # a socket timeout may wake a hair early

    def count(self, n: int) -> None:
        self.received += n
        if self.max_bytes is not None and self.received > self.max_bytes + WIRE_SLACK_BYTES:
            raise ResponseTooLarge(self.max_bytes)


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("outbound_budget", default=None)
# Bytes allowed on the wire beyond the body cap: status line, headers, chunk framing, a short redirect page.
WIRE_SLACK_BYTES = MIB


@contextmanager
def limits(*, seconds: float, max_bytes: int | None = None) -> Iterator[None]:
    """Run a fetch (or several) with a total deadline and a cap on the bytes received through the guarded
    transport. Nested: the earlier deadline wins; the byte count is the innermost block's."""
    now = time.monotonic()
    outer = _budget.get()
    at, shown = now + seconds, seconds
    if outer is not None and outer.deadline_at < at:
        at, shown = outer.deadline_at, outer.seconds
    token = _budget.set(_Budget(at, shown, max_bytes))
    try:
        yield
    finally:
        _budget.reset(token)


def read_capped(response: httpx.Response, max_bytes: int) -> bytes:
    """Read a streamed response's body, at most max_bytes once decoded (gzip inflated here, bounded)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ResponseTooLarge(max_bytes)
    if response.is_stream_consumed:  # already in memory (an httpx.MockTransport answer in tests)
        if len(response.content) > max_bytes:
            raise ResponseTooLarge(max_bytes)
        return response.content
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        inflate: typing.Any = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    elif encoding in ("", "identity"):
        inflate = None
    else:
        raise httpx.DecodingError(f"unsupported Content-Encoding {encoding!r} (Headroom asks for gzip or none)")
    body = bytearray()
    for raw in response.iter_raw():
        if inflate is None:
            body += raw
        else:
            data = raw
            while data:
                try:
                    body += inflate.decompress(data, max_bytes + 1 - len(body))
                except zlib.error as error:
                    raise httpx.DecodingError(f"the gzip body is corrupt: {error}") from None
                if len(body) > max_bytes:
                    break
                data = inflate.unconsumed_tail
        if len(body) > max_bytes:
            raise ResponseTooLarge(max_bytes)
    return bytes(body)


class _LimitedStream(httpcore.NetworkStream):
    """A network stream whose reads, writes and TLS handshake respect the current fetch's budget."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        budget = _budget.get()
        if budget is None:
            return self._inner.read(max_bytes, timeout)
        try:
            data = self._inner.read(max_bytes, budget.timeout(timeout))
        except httpcore.ReadTimeout:
            if budget.expired():
                raise DeadlineExceeded(budget.seconds) from None
            raise
        budget.count(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        budget = _budget.get()
        if budget is None:
            return self._inner.write(buffer, timeout)
        try:
            return self._inner.write(buffer, budget.timeout(timeout))
        except httpcore.WriteTimeout:
            if budget.expired():
                raise DeadlineExceeded(budget.seconds) from None
            raise

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        budget = _budget.get()
        if budget is not None:
            timeout = budget.timeout(timeout)
        try:
            return _LimitedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))
        except httpcore.ConnectTimeout:
            if budget is not None and budget.expired():
                raise DeadlineExceeded(budget.seconds) from None
            raise

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _LimitedBackend(httpcore.NetworkBackend):
    """httpcore's network backend with every stream wrapped in _LimitedStream (connects respect the budget)."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        budget = _budget.get()
        if budget is not None:
            timeout = budget.timeout(timeout)
        try:
            stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        except httpcore.ConnectTimeout:
            if budget is not None and budget.expired():
                raise DeadlineExceeded(budget.seconds) from None
            raise
        return _LimitedStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: typing.Iterable[typing.Any] | None = None
    ) -> httpcore.NetworkStream:
        raise OutboundBlocked(path, "unix sockets are not fetched")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport that resolves, checks and pins the destination of every request it sends, and keeps
    each fetch within the current `limits` (deadline and bytes)."""

    def __init__(
        self, policy: OutboundPolicy | None = None, *, resolve: Resolver = system_resolver, **kwargs: object
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.policy: OutboundPolicy = policy or current_policy()
        self._resolve = resolve
        # httpx builds the httpcore pool without a network_backend argument; wrap the one it made. If a new
        # httpx changes this, fail here rather than fetch without a deadline (tests/platform cover it).
        pool = self._pool
        if not isinstance(pool, httpcore.ConnectionPool) or not hasattr(pool, "_network_backend"):
            raise TypeError("GuardedTransport needs httpx's httpcore.ConnectionPool (no proxy)")
        pool._network_backend = _LimitedBackend(pool._network_backend)

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


# --- per-organisation concurrency in the API process ------------------------------------------------------


class TooManyOutbound(Exception):
    """No slot free: `scope` is "organisation" (the org's own limit), "share" (the org already runs some and the last
    free slots are kept for organisations running none) or "server" (the process-wide one)."""

    def __init__(self, scope: Literal["organisation", "share", "server"], limit: int) -> None:
        super().__init__(f"{limit} outbound checks already running for this {scope}")
        self.scope = scope
        self.limit = limit


class OrgSlots:
    """Bound the outbound checks (source tests, status-port reads) an API process runs at once: `per_org` for
    one organisation and `total` for all of them, so one tenant's slow servers can hold neither the database
    pool (fetches never hold a connection) nor the request thread pool (40 threads by default in Starlette).
    A request that finds no free slot is refused at once (the caller answers 429 or 503); nothing queues.

    Fair shares: the last `reserve` free slots go only to organisations running no check yet. Organisations that
    already run one share the other `total - reserve` (12 of 16), so any number of tenants with slow servers can
    never take the whole process: a tenant with none running always finds a slot while fewer than `reserve` such
    tenants are mid-check (docs/outbound.md, rule 5).

    Per process: with N API processes an organisation may run up to N * per_org checks in all.
    """

    def __init__(self, per_org: int = 4, total: int = 16, reserve: int = 4) -> None:
        if not 0 <= reserve < total:
            raise ValueError("reserve must leave slots to share: 0 <= reserve < total")
        self.per_org = per_org
        self.total = total
        self.reserve = reserve
        self._lock = threading.Lock()
        self._running: dict[uuid.UUID, int] = {}
        self._all = 0

    def running(self, org_id: uuid.UUID) -> int:
        with self._lock:
            return self._running.get(org_id, 0)

    def acquire(self, org_id: uuid.UUID) -> None:
        """Take a slot for the organisation or raise TooManyOutbound (nothing waits)."""
        with self._lock:
            mine = self._running.get(org_id, 0)
            if mine >= self.per_org:
                raise TooManyOutbound("organisation", self.per_org)
            free = self.total - self._all
            if free <= 0:
                raise TooManyOutbound("server", self.total)
            if mine > 0 and free <= self.reserve:
                raise TooManyOutbound("share", mine)
            self._running[org_id] = mine + 1
            self._all += 1

    def release(self, org_id: uuid.UUID) -> None:
        with self._lock:
            self._all -= 1
            left = self._running[org_id] - 1
            if left:
                self._running[org_id] = left
            else:
                del self._running[org_id]

    @contextmanager
    def hold(self, org_id: uuid.UUID) -> Iterator[None]:
        self.acquire(org_id)
        try:
            yield
        finally:
            self.release(org_id)


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


# --- a failed request in words ---------------------------------------------------------------------------

# getaddrinfo's texts for "this name has no address" (glibc's gai_strerror: EAI_NONAME, EAI_AGAIN, EAI_NODATA;
# macOS words EAI_NONAME differently), and the guard's own.
_NO_SUCH_NAME = ("name or service not known", "nodename nor servname", "temporary failure in name resolution",
                 "no address associated", "cannot resolve", "name does not resolve", "getaddrinfo failed")


def _chain(error: BaseException) -> str:
    """The error's text with its causes', lower case (httpx keeps the OSError underneath as the cause)."""
    texts: list[str] = []
    seen: BaseException | None = error
    while seen is not None and len(texts) < 5:
        texts.append(str(seen))
        seen = seen.__cause__ or seen.__context__
    return " ".join(texts).lower()


def failure_in_words(error: BaseException, url: str) -> str:
    """Say why a request to `url` failed, with what to check: no exception class names, no errno."""
    parsed = httpx.URL(url)
    host = parsed.host or url
    where = f"{host}:{parsed.port}" if parsed.port else host
    text = _chain(error)
    if isinstance(error, OutboundBlocked):
        return f"Headroom's outbound policy refuses {error.host}: {error.reason}."
    if isinstance(error, DeadlineExceeded | httpx.TimeoutException):
        return f"{where} did not answer in time. Check that the service is running and reachable from Headroom."
    if any(words in text for words in _NO_SUCH_NAME):
        return f"Could not reach {host}: the host name does not resolve. Check the URL."
    if "connection refused" in text:
        return (f"Could not connect to {where}: the connection was refused. Check the URL and that the service "
                "is running.")
    if "network is unreachable" in text or "no route to host" in text:
        return f"Could not reach {where}: there is no network route to it. Check the URL and the network."
    if isinstance(error, ssl.SSLError) or "certificate" in text or "ssl" in text or "tls" in text:
        return (f"The secure (TLS) connection to {where} failed: its certificate could not be verified or the "
                "handshake was refused. Check the URL (https with a certificate for that name).")
    if isinstance(error, httpx.RemoteProtocolError | httpx.ReadError):
        return f"{where} closed the connection without a valid answer. Check the URL."
    if isinstance(error, httpx.ConnectError | OSError):
        return f"Could not connect to {where}. Check the URL and that the service is running."
    return f"The request to {where} failed. Check the URL."

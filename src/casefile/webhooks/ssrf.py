"""Keeping webhook deliveries away from internal addresses (SSRF).

Checked twice: when a URL is registered (its host must resolve only to global addresses), and on
every connection, where `GuardedBackend` resolves the host itself, refuses any non-global address
and connects to the address it checked. So a name that later resolves somewhere internal (DNS
rebinding) is refused at the connection, and redirects are never followed.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from typing import Any
from urllib.parse import SplitResult, urlsplit

import anyio
import httpcore
import httpx

from casefile.errors import ValidationFailed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class ForbiddenAddress(httpcore.ConnectError):
    """The target resolves to an address webhooks may not reach."""


def is_forbidden(address: IPAddress) -> bool:
    """Anything but a global unicast address: loopback, private, link-local, multicast, reserved,
    unspecified, shared (CGNAT), documentation, and IPv6 forms that embed such IPv4 addresses."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None and is_forbidden(embedded):
            return True
    return not address.is_global or address.is_multicast or address.is_reserved or address.is_unspecified


async def resolve(host: str, port: int) -> list[IPAddress]:
    """All addresses of `host`, as the system resolver gives them (numeric forms such as
    `2130706433` or `0x7f000001` included, which is why they cannot slip past)."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


# Said with both refusals: a receiver on the developer's own machine is the first thing people try.
DEVELOPMENT_SETTING = (
    " (a server started with CASEFILE_WEBHOOK_ALLOW_PRIVATE_URLS=true, for development only, also "
    "accepts http:// and private addresses)"
)


def parse_url(url: str) -> SplitResult:
    """The parts of a URL a request can be built for, or ValidationFailed on `url`. Spaces and
    control characters are refused outright (a CR/LF could otherwise split the request), and so is
    anything the standard parser or httpx cannot take (`http://[::1`, a bad port, a bad IDNA host),
    so no such URL is stored to fail every delivery later."""
    if any(character <= " " or character == "\x7f" for character in url):
        raise ValidationFailed.on("url", "The URL must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (parsing the port is the check)
        httpx.Request("POST", url)
    except (httpx.InvalidURL, ValueError) as exc:  # IDNA errors are UnicodeErrors, so ValueErrors
        raise ValidationFailed.on("url", f"The URL is not valid: {exc}") from exc
    return parts


async def check_url(url: str, *, allow_private: bool) -> None:
    """Refuse a webhook URL that deliveries could not or must not reach (ValidationFailed on `url`)."""
    parts = parse_url(url)
    if parts.scheme not in (("https", "http") if allow_private else ("https",)):
        raise ValidationFailed.on("url", f"The URL must use https{DEVELOPMENT_SETTING}")
    if not parts.hostname:
        raise ValidationFailed.on("url", "The URL has no host")
    if parts.username or parts.password:
        raise ValidationFailed.on("url", "Put credentials in the signing secret, not in the URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if allow_private:
        return
    try:
        addresses = await resolve(parts.hostname, port)
    except OSError as exc:
        raise ValidationFailed.on("url", "The URL's host does not resolve") from exc
    if not addresses or any(is_forbidden(a) for a in addresses):
        raise ValidationFailed.on(
            "url", f"The URL must not point to a loopback, private or internal address{DEVELOPMENT_SETTING}"
        )


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """A network backend that connects only to addresses it has checked itself."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await resolve(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        allowed = [a for a in addresses if self.allow_private or not is_forbidden(a)]
        if not allowed or (not self.allow_private and len(allowed) != len(addresses)):
            raise ForbiddenAddress(f"{host} resolves to an address webhooks may not reach")
        # Connect to the checked address; TLS still verifies the certificate against `host`.
        return await self._backend.connect_tcp(
            str(allowed[0]), port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every delivery client: loading the CA bundle costs tens of milliseconds
    of CPU, and the delivery worker makes several clients as the process starts (it was 16 loads,
    most of the time a start took before answering; docs/research/bench-notes-2026-11.md, "Start-up")."""
    return httpx.create_ssl_context()


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport on a connection pool that uses `GuardedBackend`. (httpx does not take a
    network backend as an argument, so the pool it made is replaced; httpx is pinned.)"""

    def __init__(self, *, allow_private: bool, max_connections: int) -> None:
        super().__init__(retries=0, verify=_tls_context())
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_tls_context(),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=30,
            http1=True,
            http2=False,
            retries=0,
            network_backend=GuardedBackend(allow_private=allow_private),
        )

"""SSRF guard: which URLs may be fetched and which addresses may be connected to.

URLs come from search results and feeds, so they are untrusted. `check_url` refuses anything that
is not an absolute http(s) URL; `AddressPolicy` decides on the IP address actually connected,
enforced in the socket factory of aiohttp's connector (`AddressPolicy.socket_factory`), so DNS
answers, IP literals and every redirect hop go through the same check before a packet is sent.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

from yarl import URL

from digest.errors import InvalidURLError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 4096
ALLOWED_SCHEMES = frozenset({"http", "https"})

_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: the v4 part may sit anywhere
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated ::a.b.c.d form
_TEREDO = ipaddress.IPv6Network("2001::/32")
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")


def check_url(url: str) -> str:
    """`url` stripped and in the encoded form aiohttp will request, or InvalidURLError."""
    if not isinstance(url, str):
        raise InvalidURLError(f"not a URL: {url!r}")
    text = url.strip()
    if not text:
        raise InvalidURLError("empty URL")
    encoded = _check(text, _shorten(text))
    if encoded != text:
        # What we return must pass the same checks unchanged (IDNA mapping can, for instance,
        # turn an ideographic space in a host name into a plain one).
        try:
            again = _check(encoded, _shorten(text))
        except InvalidURLError:
            raise InvalidURLError(f"not a valid URL: {_shorten(text)!r}") from None
        if again != encoded:
            raise InvalidURLError(f"not a valid URL: {_shorten(text)!r}")
    return encoded


def _check(text: str, shown: str) -> str:
    if len(text) > MAX_URL_LENGTH:
        raise InvalidURLError(f"URL too long ({len(text)} characters, at most {MAX_URL_LENGTH})")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        raise InvalidURLError(f"URL contains spaces or control characters: {shown!r}")
    try:
        parsed = URL(text)
        scheme = parsed.scheme.lower()
        host = parsed.raw_host
        port = parsed.port
        encoded = str(parsed)
    except (ValueError, TypeError, UnicodeError) as err:
        raise InvalidURLError(f"not a valid URL: {shown!r} ({_first_line(err)})") from None
    if scheme and scheme not in ALLOWED_SCHEMES:
        raise InvalidURLError(f"only http and https URLs can be fetched, not {scheme}: {shown!r}")
    if not scheme or (not parsed.is_absolute() and not text.lower().startswith(scheme + "://")):
        raise InvalidURLError(f"not an absolute URL: {shown!r}")
    if not host:
        raise InvalidURLError(f"URL has no host: {shown!r}")
    if port is not None and not 0 < port < 65536:
        raise InvalidURLError(f"URL has an invalid port: {shown!r}")
    return encoded


class AddressRefused(OSError):
    """Raised by the guard's socket factory, before any packet is sent; the HTTP client turns it
    into `BlockedAddressError` naming the URL."""

    def __init__(self, ip: IPAddress, reason: str) -> None:
        super().__init__(f"blocked address {ip} ({reason})")
        self.ip = ip
        self.reason = reason


class AddressPolicy:
    """Which IP addresses outgoing connections may reach.

    Only globally reachable unicast addresses, unless `allow_private` (everything is allowed) or the
    address lies in one of `allowed_networks`. IPv4 hidden inside IPv6 is judged as the IPv4
    address it reaches: mapped and NAT64 (64:ff9b::/96) addresses by it alone; 6to4, Teredo and
    IPv4-compatible ones by it as well as by themselves.
    """

    def __init__(self, allow_private: bool = False, allowed_networks: Iterable[str] = ()) -> None:
        self.allow_private = allow_private
        self.allowed_networks = tuple(
            ipaddress.ip_network(net, strict=False) for net in allowed_networks
        )

    @classmethod
    def from_config(cls, config: Any) -> AddressPolicy:
        """Build from a `FetchConfig` (or anything with the same two attributes)."""
        return cls(config.allow_private_networks, config.allowed_networks)

    def allows(self, ip: IPAddress | str) -> bool:
        return self.refusal(ip) is None

    def refusal(self, ip: IPAddress | str) -> str | None:
        """Why `ip` is refused ("loopback", "private network"...), or None when it is allowed."""
        addr = ipaddress.ip_address(ip) if isinstance(ip, str) else ip
        if self.allow_private:
            return None
        plain = _unmap(addr)
        if self._in_allowed(addr) or self._in_allowed(plain):
            return None
        reason = _non_public(plain)
        if reason is not None:
            return reason
        for kind, inner in _embedded_ipv4(plain):
            inner_reason = _non_public(inner)
            if inner_reason is not None:
                return f"{inner_reason} inside {kind} address"
        return None

    def socket_factory(self, addr_info: tuple[Any, ...]) -> socket.socket:
        """For `aiohttp.TCPConnector(socket_factory=...)`: check the address, then make a socket."""
        family, type_, proto, _canonname, sockaddr = addr_info
        host = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone id ("fe80::1%eth0")
        ip = ipaddress.ip_address(host)
        reason = self.refusal(ip)
        if reason is not None:
            raise AddressRefused(ip, reason)
        return socket.socket(family=family, type=type_, proto=proto)

    def _in_allowed(self, addr: IPAddress) -> bool:
        return any(addr.version == net.version and addr in net for net in self.allowed_networks)


def _unmap(addr: IPAddress) -> IPAddress:
    """The IPv4 address behind an IPv4-mapped or NAT64 (64:ff9b::/96) address; else `addr`."""
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return addr.ipv4_mapped
        if addr in _NAT64_WELL_KNOWN:
            return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return addr


def _embedded_ipv4(addr: IPAddress) -> list[tuple[str, ipaddress.IPv4Address]]:
    """IPv4 addresses an IPv6 address tunnels or translates to."""
    if not isinstance(addr, ipaddress.IPv6Address):
        return []
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if addr.sixtofour is not None:
        found.append(("6to4", addr.sixtofour))
    if addr in _TEREDO and addr.teredo is not None:
        server, client = addr.teredo
        found += [("Teredo", server), ("Teredo", client)]
    if addr in _IPV4_COMPATIBLE:
        found.append(("IPv4-compatible", ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)))
    return found


def _non_public(addr: IPAddress) -> str | None:
    """A short label when `addr` is not a globally reachable unicast address."""
    if addr.is_unspecified:
        return "unspecified address"
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local address"
    if addr.is_multicast:
        return "multicast address"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr in _TEREDO:
            return "Teredo tunnel"
        if addr in _NAT64_LOCAL_USE:
            return "local-use NAT64"
        if addr.is_site_local:
            return "site-local address"
    if isinstance(addr, ipaddress.IPv4Address) and addr in _SHARED:
        return "shared address space"
    if addr.is_private:
        return "private network"
    if addr.is_reserved:
        return "reserved address"
    if not addr.is_global:
        return "non-public address"
    return None


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(err: BaseException) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0]

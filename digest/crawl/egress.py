"""The browser's only way out: a forward proxy on 127.0.0.1 that applies the SSRF guard.

Chromium is started with `--proxy-server` pointing here (and `<-loopback>`, so even loopback goes
through it). Every connection the browser makes (the page, each redirect hop, JavaScript
navigations, subresources, fetch/XHR, WebSockets) arrives as a CONNECT or an absolute-form
HTTP request. The proxy resolves the host itself, refuses addresses the `AddressPolicy` refuses
and connects to the address it checked, so a DNS answer cannot change between check and use.

Refused requests get `403` (plain HTTP) or a failed tunnel (HTTPS: Chromium shows an error page);
both are recorded in `refusals`. Only `http:` targets and CONNECT are proxied.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections import deque
from dataclasses import dataclass
from html import escape

from yarl import URL

from digest.fetch.guard import AddressPolicy

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0
GUARD_HEADER = "X-Digest-Guard"
GUARD_MARKER = "digest: blocked address"  # in the body of a refusal, which the browser shows
_HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A connection the proxy refused: the host asked for and why."""

    host: str
    port: int
    reason: str


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EgressProxy:
    """Guarded forward proxy for the browser; `async with EgressProxy(policy) as proxy:`."""

    def __init__(self, policy: AddressPolicy, *, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.policy = policy
        self.connect_timeout = connect_timeout
        self.refusals: deque[Refusal] = deque(maxlen=200)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> EgressProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, "127.0.0.1", 0, limit=MAX_HEAD_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2)

    def refused(self, url: str) -> Refusal | None:
        """The latest refusal for the host of `url`, if the proxy refused one."""
        parsed = URL(url)
        for refusal in reversed(self.refusals):
            if refusal.host == parsed.host and refusal.port == parsed.port:
                return refusal
        return None

    # -- one client connection --------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                return
            request_line, _, rest = head.partition(b"\r\n")
            parts = request_line.decode("latin-1").split()
            if len(parts) != 3:
                await _answer(writer, 400, "bad request line")
                return
            method, target, _version = parts
            try:
                host, port, origin_form = _target(method, target)
            except ValueError as err:
                await _answer(writer, 400, str(err))
                return
            try:
                up_reader, upstream = await self._connect(host, port)
            except _Refused as err:
                self.refusals.append(Refusal(host, port, err.reason))
                log.info("browser egress refused: %s:%d (%s)", host, port, err.reason)
                await _answer(writer, 403, f"{host} ({err.reason})", guard=True)
                return
            except (OSError, TimeoutError) as err:
                await _answer(writer, 502, f"cannot connect to {host}:{port}: {err}")
                return
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
                await _tunnel(reader, writer, up_reader, upstream)
            else:
                upstream.write(_origin_request(method, origin_form, rest))
                await upstream.drain()
                await _relay_response(reader, writer, up_reader, upstream)
        except (ConnectionError, OSError):
            pass
        finally:
            if upstream is not None:
                upstream.close()
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _connect(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), self.connect_timeout
            )
        except socket.gaierror as err:
            raise OSError(f"cannot resolve host {host}") from err
        allowed: list[str] = []
        reasons: list[str] = []
        for *_, sockaddr in infos:
            ip = str(sockaddr[0]).split("%", 1)[0]
            reason = self.policy.refusal(ipaddress.ip_address(ip))
            if reason is None:
                if ip not in allowed:
                    allowed.append(ip)
            else:
                reasons.append(f"{ip}: {reason}")
        if not allowed:
            raise _Refused(", ".join(dict.fromkeys(reasons)) or "no address")
        last: BaseException | None = None
        for ip in allowed:  # connect to the very address that was checked
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(ip, port, limit=MAX_HEAD_BYTES), self.connect_timeout
                )
            except (OSError, TimeoutError) as err:
                last = err
        raise OSError(str(last) if last else "connection failed")


def _target(method: str, target: str) -> tuple[str, int, str]:
    """(host, port, origin-form path) of a proxy request; ValueError when it cannot be proxied."""
    if method == "CONNECT":
        host, sep, port_text = target.rpartition(":")
        if not sep or not port_text.isdigit():
            raise ValueError(f"bad CONNECT target {target!r}")
        port = int(port_text)
        host = host.strip("[]")
        if not host or not 0 < port < 65536:
            raise ValueError(f"bad CONNECT target {target!r}")
        return host, port, ""
    url = URL(target)
    if url.scheme != "http" or not url.raw_host:
        raise ValueError(f"only http:// URLs are proxied, not {target[:80]!r}")
    return url.raw_host, url.port or 80, url.raw_path_qs or "/"


def _origin_request(method: str, path: str, rest: bytes) -> bytes:
    """The request head re-addressed to the origin, one request per connection."""
    lines = [f"{method} {path} HTTP/1.1".encode("latin-1")]
    for line in rest.split(b"\r\n"):
        if not line:
            continue
        name = line.split(b":", 1)[0].strip().lower().decode("latin-1")
        if name not in _HOP_HEADERS:
            lines.append(line)
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _relay_response(
    client_r: asyncio.StreamReader,
    client_w: asyncio.StreamWriter,
    up_r: asyncio.StreamReader,
    up_w: asyncio.StreamWriter,
) -> None:
    """Send the request body up, the response down; the connection closes after one exchange."""
    upload = asyncio.ensure_future(_pump(client_r, up_w))
    try:
        head = await asyncio.wait_for(up_r.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT * 4)
        status_line, _, rest = head.partition(b"\r\n")
        lines = [status_line]
        for line in rest.split(b"\r\n"):
            if line and line.split(b":", 1)[0].strip().lower().decode("latin-1") not in (
                "connection",
                "keep-alive",
                "proxy-connection",
            ):
                lines.append(line)
        lines += [b"Connection: close", b"Proxy-Connection: close"]
        client_w.write(b"\r\n".join(lines) + b"\r\n\r\n")
        await _pump(up_r, client_w)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
        pass
    finally:
        upload.cancel()
        with contextlib.suppress(BaseException):
            await upload


async def _tunnel(
    client_r: asyncio.StreamReader,
    client_w: asyncio.StreamWriter,
    up_r: asyncio.StreamReader,
    up_w: asyncio.StreamWriter,
) -> None:
    down = asyncio.ensure_future(_pump(up_r, client_w))
    up = asyncio.ensure_future(_pump(client_r, up_w))
    try:
        await asyncio.wait({down, up}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (down, up):
            task.cancel()
        await asyncio.gather(down, up, return_exceptions=True)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(64 * 1024):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass


async def _answer(
    writer: asyncio.StreamWriter, status: int, message: str, *, guard: bool = False
) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    prefix = GUARD_MARKER if guard else "digest"
    body = f"<!DOCTYPE html><title>{status} {reason}</title><p>{prefix}: {escape(message)}</p>"
    body_bytes = body.encode()
    extra = f"{GUARD_HEADER}: blocked\r\n" if guard else ""
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body_bytes)}\r\n{extra}Connection: close\r\n\r\n".encode("latin-1")
        + body_bytes
    )
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()

"""The browser's only way out: a forward proxy on 127.0.0.1 that applies the SSRF guard.

Chromium is started with `--proxy-server` pointing here (and `<-loopback>`, so even loopback goes
through it). Every connection the browser makes (the page, each redirect hop, JavaScript
navigations, subresources, fetch/XHR, WebSockets) arrives as a CONNECT or an absolute-form
HTTP request. The proxy resolves the host itself, refuses addresses the `AddressPolicy` refuses
and connects to the address it checked, so a DNS answer cannot change between check and use.

Refused requests get `403` (plain HTTP) or a failed tunnel (HTTPS: Chromium shows an error page);
both are recorded in `refusals`. Only `http:` targets and CONNECT are proxied.

Bodies are capped as the HTTP client caps them, at `max_body_bytes`: without a cap an endless
body kept Chromium growing to 2.8 GB RSS until the page timed out. A plain-HTTP response is
decoded here (only gzip and deflate are offered to the server) and relayed to the browser
decoded, delimited by closing the connection, so a response cut at the cap ends cleanly and
the browser shows what came. Inside an HTTPS tunnel the proxy sees only encrypted bytes: it counts
those, per burst (the count starts again once the tunnel has been quiet for `tunnel_quiet` s,
because Chromium reuses a tunnel for later pages of the same site), and closes the tunnel at the
cap. Both are recorded in `cuts`, which `Browser.render` reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import zlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html import escape
from typing import Any

from yarl import URL

from digest.fetch.guard import AddressPolicy

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0
GUARD_HEADER = "X-Digest-Guard"
GUARD_MARKER = "digest: blocked address"  # in the body of a refusal, which the browser shows
DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024
TUNNEL_QUIET = 1.0
CHUNK = 64 * 1024
_HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}
)
# What the proxy re-frames or decodes itself, so the browser must not see the origin's value.
_RESPONSE_FRAMING = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length"}
)
_DECODABLE = frozenset({"gzip", "x-gzip", "deflate"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """A connection the proxy refused: the host asked for and why."""

    host: str
    port: int
    reason: str


@dataclass(frozen=True, slots=True)
class Cut:
    """A body the proxy cut at the cap: the URL (plain HTTP) or `https://host:port` (a tunnel),
    the bytes relayed, and when (loop time)."""

    url: str
    relayed: int
    at: float


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EgressProxy:
    """Guarded forward proxy for the browser; `async with EgressProxy(policy) as proxy:`."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        tunnel_quiet: float = TUNNEL_QUIET,
    ) -> None:
        self.policy = policy
        self.connect_timeout = connect_timeout
        self.max_body_bytes = max_body_bytes
        self.tunnel_quiet = tunnel_quiet
        self.refusals: deque[Refusal] = deque(maxlen=200)
        self.cuts: deque[Cut] = deque(maxlen=200)
        self._watchers: list[tuple[frozenset[str], asyncio.Future[Cut]]] = []
        self.relayed = 0  # body bytes sent to the browser, all connections together
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

    def cut_since(self, url: str, since: float) -> Cut | None:
        """The latest cut since loop time `since` of `url`'s body (plain HTTP) or of a tunnel to
        its host (HTTPS, where the proxy cannot tell one response from another)."""
        names = _cut_names(url)
        for cut in reversed(self.cuts):
            if cut.at < since:
                break
            if cut.url in names:
                return cut
        return None

    def watch(self, url: str) -> asyncio.Future[Cut]:
        """The next cut of `url`'s body or of a tunnel to its host, as a future: a render can stop
        at once instead of letting Chromium digest a page that will be thrown away. Cancel it
        when done."""
        future: asyncio.Future[Cut] = asyncio.get_running_loop().create_future()
        watcher = (_cut_names(url), future)
        self._watchers.append(watcher)
        future.add_done_callback(lambda _: self._watchers.remove(watcher))
        return future

    def _cut(self, url: str, relayed: int) -> None:
        cut = Cut(url, relayed, asyncio.get_running_loop().time())
        self.cuts.append(cut)
        log.info("browser egress cut: %s after %d bytes (the cap)", url, relayed)
        for names, future in list(self._watchers):
            if url in names and not future.done():
                future.set_result(cut)

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
                await self._tunnel(reader, writer, up_reader, upstream, f"https://{host}:{port}")
            else:
                upstream.write(_origin_request(method, origin_form, rest))
                await upstream.drain()
                url = str(URL(target).with_fragment(None))
                await self._relay_response(
                    reader, writer, up_reader, upstream, method=method, url=url
                )
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

    async def _relay_response(
        self,
        client_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        up_r: asyncio.StreamReader,
        up_w: asyncio.StreamWriter,
        *,
        method: str,
        url: str,
    ) -> None:
        """Send the request body up and one response down, its body decoded and cut at the cap;
        the connection closes after the exchange."""
        upload = asyncio.ensure_future(_pump(client_r, up_w))
        try:
            while True:
                head = await asyncio.wait_for(up_r.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT * 4)
                status_line, headers = _parse_head(head)
                status = _status(status_line)
                if not 100 <= status < 200 or status == 101:
                    break
                client_w.write(head)  # 100 Continue, 103 Early Hints: the real answer follows
            encodings = [
                e.strip().lower()
                for name, value in headers
                if name.lower() == b"content-encoding"
                for e in value.decode("latin-1").split(",")
                if e.strip() and e.strip().lower() != "identity"
            ]
            one = encodings[0] if len(encodings) == 1 else None
            decoder = _Decoder(one) if one in _DECODABLE else None
            lines = [status_line]
            for name, value in headers:
                lowered = name.strip().lower().decode("latin-1")
                if lowered in _RESPONSE_FRAMING:
                    continue
                if lowered == "content-encoding" and decoder is not None:
                    continue
                lines.append(name + b":" + value)
            lines += [b"Connection: close", b"Proxy-Connection: close"]
            client_w.write(b"\r\n".join(lines) + b"\r\n\r\n")
            if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
                await client_w.drain()
                return
            relayed = 0
            async for raw in _body(up_r, headers):
                room = self.max_body_bytes - relayed
                data = raw if decoder is None else decoder.decompress(raw, room + 1)
                if len(data) > room:
                    await self._send(client_w, data[:room])
                    self._cut(url, self.max_body_bytes)
                    return
                relayed += len(data)
                await self._send(client_w, data)
            if decoder is not None:
                await self._send(client_w, decoder.flush()[: self.max_body_bytes - relayed])
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            TimeoutError,
            ValueError,  # a chunk size that is not hex
            zlib.error,
        ):
            pass
        finally:
            upload.cancel()
            with contextlib.suppress(BaseException):
                await upload

    async def _tunnel(
        self,
        client_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        up_r: asyncio.StreamReader,
        up_w: asyncio.StreamWriter,
        name: str,
    ) -> None:
        down = asyncio.ensure_future(self._pump_down(up_r, client_w, name))
        up = asyncio.ensure_future(_pump(client_r, up_w))
        try:
            await asyncio.wait({down, up}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (down, up):
                task.cancel()
            await asyncio.gather(down, up, return_exceptions=True)

    async def _pump_down(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str
    ) -> None:
        """A tunnel's bytes to the browser, at most `max_body_bytes` in one burst."""
        loop = asyncio.get_running_loop()
        burst = 0
        last = loop.time()
        try:
            while data := await reader.read(CHUNK):
                now = loop.time()
                if now - last >= self.tunnel_quiet:
                    burst = 0
                last = now
                room = self.max_body_bytes - burst
                if len(data) > room:
                    await self._send(writer, data[:room])
                    self._cut(name, self.max_body_bytes)
                    return
                burst += len(data)
                await self._send(writer, data)
        except (ConnectionError, OSError):
            pass

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        self.relayed += len(data)
        writer.write(data)
        await writer.drain()


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
    """The request head re-addressed to the origin, one request per connection; where the
    browser accepts content codings, only those the proxy can undo to count the body."""
    lines = [f"{method} {path} HTTP/1.1".encode("latin-1")]
    for line in rest.split(b"\r\n"):
        if not line:
            continue
        name, _, value = line.partition(b":")
        name_text = name.strip().lower().decode("latin-1")
        if name_text == "accept-encoding" and value.strip().lower() != b"identity":
            lines.append(b"Accept-Encoding: gzip, deflate")
        elif name_text not in _HOP_HEADERS:
            lines.append(line)
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _cut_names(url: str) -> frozenset[str]:
    """How a cut of `url` is recorded: the URL itself (plain HTTP) or the tunnel to its host
    (HTTPS; the tunnel also carries the page's other requests to that host)."""
    parsed = URL(url).with_fragment(None)
    return frozenset({str(parsed), f"https://{parsed.host}:{parsed.port}"})


def _parse_head(head: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """(status line, [(name, value)]) of a response head; values keep their leading space."""
    status_line, _, rest = head.partition(b"\r\n")
    headers = []
    for line in rest.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip():
            headers.append((name, value))
    return status_line, headers


def _status(status_line: bytes) -> int:
    parts = status_line.split(None, 2)
    try:
        return int(parts[1])
    except (IndexError, ValueError):
        return 0


class _Decoder:
    """A body's content coding undone, at most `max_length` bytes of output per call (a 200 MB
    gzip bomb is 200 KB on the wire). Deflate comes zlib-wrapped, as the RFC says, or raw."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._d: Any = None

    def decompress(self, data: bytes, max_length: int) -> bytes:
        if self._d is None:
            if self._encoding == "deflate":
                wrapped = (
                    len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] * 256 + data[1]) % 31 == 0
                )
                self._d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            else:
                self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return self._d.decompress(data, max_length)

    def flush(self) -> bytes:
        return self._d.flush() if self._d is not None else b""


async def _body(
    reader: asyncio.StreamReader, headers: list[tuple[bytes, bytes]]
) -> AsyncIterator[bytes]:
    """The response body as it arrives, de-chunked: by Transfer-Encoding, Content-Length, or
    until the origin closes."""
    fields = {name.strip().lower(): value.strip() for name, value in headers}
    if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                return  # trailers, if any, are dropped: the browser gets a close-delimited body
            while size:
                data = await reader.readexactly(min(size, CHUNK))
                size -= len(data)
                yield data
            await reader.readexactly(2)
    length = fields.get(b"content-length")
    if length is not None and length.isdigit():
        left = int(length)
        while left:
            data = await reader.read(min(left, CHUNK))
            if not data:
                return
            left -= len(data)
            yield data
        return
    while data := await reader.read(CHUNK):
        yield data


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

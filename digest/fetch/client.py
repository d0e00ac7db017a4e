"""The one HTTP client of the process: guarded, capped, with redirects followed by hand.

`HttpClient` owns a single `aiohttp.ClientSession`. Every connection goes through the SSRF guard
(`AddressPolicy.socket_factory`), every redirect hop through `check_url` and the guard again, and
bodies are decompressed here, not by aiohttp, so the byte cap counts decompressed bytes and a gzip
bomb stops at the cap instead of being inflated first.

    async with HttpClient(config.fetch) as http:
        feed = await http.get(url, headers={"If-None-Match": etag}, raise_for_status=True)
        async with http.open(page_url) as stream:
            async for chunk in stream.iter_chunks():
                ...
"""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_codes
import os
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

import aiohttp
from yarl import URL

from digest.config import FetchConfig
from digest.errors import (
    BlockedAddressError,
    DigestError,
    FetchError,
    FetchTimeoutError,
    InvalidURLError,
    ResponseTooLargeError,
    UnexpectedContentTypeError,
)
from digest.fetch.decode import decode_html
from digest.fetch.guard import AddressPolicy, AddressRefused, check_url

HTML_TYPES = ("text/html", "application/xhtml+xml")
FEED_TYPES = (
    "application/rss+xml",
    "application/atom+xml",
    "application/rdf+xml",
    "application/xml",
    "text/xml",
    "application/feed+json",
    "application/json",
    "text/html",  # some servers label feeds as HTML; the parser decides
    "text/plain",
    "application/octet-stream",
)
# Generous default for `get`/`open` callers that bring no timeout of their own (feeds do).
DEFAULT_TIMEOUT = aiohttp.ClientTimeout(total=30, sock_connect=10, sock_read=20)
CHUNK_SIZE = 64 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response. `url` is what was asked for, `final_url` where redirects ended."""

    url: str
    final_url: str
    status: int
    headers: Mapping[str, str] = field(repr=False)
    body: bytes = field(repr=False)
    content_type: str  # lower-case media type without parameters; "" when the server sent none
    charset: str | None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def text(self) -> str:
        """The body as text, decoded like a browser would (see `decode_html`)."""
        return decode_html(self.body, self.charset)


class Stream:
    """An open response whose body is read on demand, decompressed, up to `max_bytes`."""

    def __init__(self, resp: aiohttp.ClientResponse, url: str, final_url: str, max_bytes: int):
        self.url = url
        self.final_url = final_url
        self.status = resp.status
        self.headers: Mapping[str, str] = resp.headers
        self.content_type, self.charset = parse_content_type(resp.headers.get("Content-Type"))
        self.content_encoding = resp.headers.get("Content-Encoding", "").strip().lower()
        self.content_length = resp.content_length
        self.max_bytes = max_bytes
        self.bytes_read = 0
        self.at_eof = False
        self.truncated = False  # stopped at max_bytes with more body left
        self._resp = resp
        self._decoder = _decoder_for(self.content_encoding, final_url)
        self._wire_eof = False

    async def read_more(self, n: int = CHUNK_SIZE) -> bytes:
        """Up to `n` more body bytes as soon as any arrive; b"" at the end or at the cap."""
        room = self.max_bytes - self.bytes_read
        if room <= 0:
            if self._decoder.pending or not (self._wire_eof or self._resp.content.at_eof()):
                self.truncated = True
            else:
                self.at_eof = True
            return b""
        want = max(1, min(n, room))
        with _translate_errors(self.final_url):
            while True:
                out = self._decoder.take(want)
                if out:
                    self.bytes_read += len(out)
                    return out
                if self._wire_eof:
                    self.at_eof = True
                    return b""
                raw = await self._resp.content.readany()
                if raw:
                    self._decoder.feed(raw)
                else:
                    self._wire_eof = True

    async def iter_chunks(self, size: int = CHUNK_SIZE) -> AsyncIterator[bytes]:
        """Yield the body in chunks of at most `size` bytes until the end or the cap."""
        while chunk := await self.read_more(size):
            yield chunk

    async def read(self) -> bytes:
        """The rest of the body, up to the cap."""
        parts = [chunk async for chunk in self.iter_chunks()]
        return b"".join(parts)


class HttpClient:
    """One guarded `aiohttp.ClientSession` per process; use as an async context manager."""

    def __init__(self, config: FetchConfig, *, policy: AddressPolicy | None = None) -> None:
        self.config = config
        self.policy = policy or AddressPolicy.from_config(config)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> HttpClient:
        return self.start()

    def start(self) -> HttpClient:
        """Open the session (what `async with` does; from a coroutine, inside the loop)."""
        connector = aiohttp.TCPConnector(
            limit=self.config.max_connections,
            limit_per_host=self.config.per_host_connections,
            socket_factory=self.policy.socket_factory,
            ttl_dns_cache=300,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            trust_env=False,  # no proxies from the environment: they would bypass the guard
            auto_decompress=False,  # we inflate ourselves, counting toward the cap
            cookie_jar=aiohttp.DummyCookieJar(),
            headers={
                "User-Agent": self.config.user_agent,
                "Accept-Encoding": "gzip, deflate",
                "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
                "Accept-Language": "en;q=0.9,*;q=0.5",
            },
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def get(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        timeout: aiohttp.ClientTimeout | None = None,  # noqa: ASYNC109 (handed to aiohttp)
        accept: tuple[str, ...] | None = None,
        raise_for_status: bool = False,
    ) -> Response:
        """Fetch a whole body (at most `max_bytes`, default `fetch.max_page_bytes`).

        Any status comes back as a `Response` (a 304 for a conditional GET is not an error) unless
        `raise_for_status`, which turns 4xx/5xx into FetchError. Raises ResponseTooLargeError over
        the cap, FetchError naming the media type when `accept` does not list it, FetchTimeoutError,
        BlockedAddressError, and InvalidURLError for a URL that is not http(s).
        """
        cap = max_bytes or self.config.max_page_bytes
        async with self.open(
            url, headers=headers, max_bytes=cap + 1, timeout=timeout, accept=accept
        ) as stream:
            if raise_for_status and stream.status >= 400:
                raise FetchError(f"HTTP {stream.status} from {stream.final_url}")
            length, encoding = stream.content_length, stream.content_encoding
            if length is not None and length > cap and encoding in ("", "identity"):
                raise ResponseTooLargeError(
                    f"{stream.final_url}: body is {length} bytes, over the {cap} byte limit"
                )
            body = await stream.read()
            if len(body) > cap:
                raise ResponseTooLargeError(
                    f"{stream.final_url}: body is over the {cap} byte limit (after decompression)"
                )
            return Response(
                url=stream.url,
                final_url=stream.final_url,
                status=stream.status,
                headers=stream.headers,
                body=body,
                content_type=stream.content_type,
                charset=stream.charset,
            )

    @contextlib.asynccontextmanager
    async def open(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        timeout: aiohttp.ClientTimeout | None = None,  # noqa: ASYNC109 (handed to aiohttp)
        accept: tuple[str, ...] | None = None,
    ) -> AsyncIterator[Stream]:
        """Open `url`, following redirects, and yield a `Stream` over its body.

        The body is read by the caller and capped at `max_bytes` (reading stops there, no error).
        The timeout's `total` covers all redirect hops and the body.
        """
        resp, final_url = await self._request(url, headers, timeout or DEFAULT_TIMEOUT)
        stream: Stream | None = None
        try:
            stream = Stream(resp, url, final_url, max_bytes or self.config.max_page_bytes)
            if (
                accept is not None
                and stream.content_type
                and not _accepted(stream.content_type, accept)
            ):
                raise UnexpectedContentTypeError(
                    f"{final_url}: unexpected content type {stream.content_type} "
                    f"(expected {', '.join(accept)})",
                    stream.content_type,
                )
            yield stream
        finally:
            if stream is not None and stream.at_eof:
                resp.release()  # fully read: the connection can serve the next request
            else:
                resp.close()  # an unread rest of the body must not be drained or kept

    async def _request(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        timeout: aiohttp.ClientTimeout,  # noqa: ASYNC109 (handed to aiohttp)
    ) -> tuple[aiohttp.ClientResponse, str]:
        if self._session is None:
            raise RuntimeError("HttpClient is not open; use `async with HttpClient(...)`")
        current = check_url(url)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout.total if timeout.total else None
        for hop in range(self.config.max_redirects + 1):
            hop_timeout = timeout
            if deadline is not None:
                hop_timeout = _with_total(timeout, max(deadline - loop.time(), 0.001))
            with _translate_errors(current, redirected_from=url if hop else None):
                resp = await self._session.get(
                    current, headers=headers, allow_redirects=False, timeout=hop_timeout
                )
            location = resp.headers.get("Location")
            if resp.status not in _REDIRECTS or not location:
                return resp, current
            resp.close()
            current = _redirect_target(current, location)
        raise FetchError(f"too many redirects (more than {self.config.max_redirects}) from {url}")


def parse_content_type(value: str | None) -> tuple[str, str | None]:
    """("text/html", "utf-8") from "text/html; charset=UTF-8"; ("", None) when absent."""
    if not value:
        return "", None
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset":
            charset = val.strip().strip("\"'") or None
    return media.strip().lower(), charset


def _accepted(content_type: str, accept: tuple[str, ...]) -> bool:
    for pattern in accept:
        p = pattern.lower()
        if p == content_type or (p.endswith("/*") and content_type.startswith(p[:-1])):
            return True
    return False


def _redirect_target(current: str, location: str) -> str:
    try:
        target = str(URL(current).join(URL(location.strip())))
        return check_url(target)
    except (ValueError, TypeError) as err:
        reason = str(err) if isinstance(err, InvalidURLError) else f"bad Location {location!r}"
        raise FetchError(f"{current} redirects to an invalid URL: {reason}") from None


def _with_total(timeout: aiohttp.ClientTimeout, total: float) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(
        total=total,
        connect=timeout.connect,
        sock_read=timeout.sock_read,
        sock_connect=timeout.sock_connect,
        ceil_threshold=timeout.ceil_threshold,
    )


@contextlib.contextmanager
def _translate_errors(url: str, *, redirected_from: str | None = None) -> Iterator[None]:
    """aiohttp and socket errors → one-line FetchError subclasses naming the URL."""
    via = f" (redirected from {redirected_from})" if redirected_from else ""
    try:
        yield
    except DigestError:
        raise
    except aiohttp.ClientConnectorDNSError:
        raise FetchError(f"cannot resolve host {URL(url).host}: {url}{via}") from None
    except aiohttp.ClientConnectorError as err:
        refused = _refusal(err.os_error)
        if refused is not None:
            raise BlockedAddressError(
                f"blocked address: {url}{via} resolves to {refused}; "
                "set fetch.allow_private_networks = true to allow"
            ) from None
        raise FetchError(f"cannot connect to {url}{via}: {_os_reason(err.os_error)}") from None
    except aiohttp.ConnectionTimeoutError:
        raise FetchTimeoutError(f"timed out connecting to {url}{via}") from None
    except (aiohttp.ServerTimeoutError, TimeoutError):
        raise FetchTimeoutError(f"timed out waiting for {url}{via}") from None
    except aiohttp.ServerDisconnectedError:
        raise FetchError(f"server closed the connection: {url}{via}") from None
    except aiohttp.ClientPayloadError:
        raise FetchError(f"broken response body from {url}{via}") from None
    except (aiohttp.InvalidURL, ValueError) as err:
        raise FetchError(f"cannot request {url}{via}: {_one_line(err)}") from None
    except aiohttp.ClientError as err:
        raise FetchError(f"{url}{via}: {_one_line(err)}") from None
    except OSError as err:
        raise FetchError(f"{url}{via}: {_os_reason(err)}") from None


def _refusal(err: OSError) -> str | None:
    if isinstance(err, AddressRefused):
        return f"{err.ip} ({err.reason})"
    # Several addresses refused at once: aiohappyeyeballs merges them into one plain OSError.
    text = str(err)
    if "blocked address" in text:
        parts = [p.strip() for p in text.removeprefix("Multiple exceptions:").split(",")]
        return ", ".join(p.removeprefix("blocked address ") for p in parts if p)
    return None


def _os_reason(err: OSError) -> str:
    code = err.errno
    if code == errno_codes.ECONNREFUSED:
        return "connection refused"
    if code is not None and code in errno_codes.errorcode:
        return os.strerror(code).lower()
    return _one_line(err)


def _one_line(err: BaseException) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0] or type(err).__name__


class _Decoder(Protocol):
    @property
    def pending(self) -> bool: ...

    def feed(self, data: bytes) -> None: ...
    def take(self, n: int) -> bytes: ...


class _Identity:
    def __init__(self) -> None:
        self._buf = b""

    @property
    def pending(self) -> bool:
        return bool(self._buf)

    def feed(self, data: bytes) -> None:
        self._buf = self._buf + data if self._buf else data

    def take(self, n: int) -> bytes:
        out, self._buf = self._buf[:n], self._buf[n:]
        return out


class _Inflate:
    """gzip/deflate, inflated at most `n` bytes at a time (`max_length`), never all at once."""

    def __init__(self, encoding: str, url: str) -> None:
        self._gzip = encoding in ("gzip", "x-gzip")
        self._url = url
        self._encoding = encoding
        self._d: zlib._Decompress | None = None
        self._input = b""
        self._members = 0  # finished gzip members; concatenated members are valid gzip
        self._done = False  # the compressed data ended; anything after it is ignored

    @property
    def pending(self) -> bool:
        return bool(self._input) and not self._done

    def feed(self, data: bytes) -> None:
        if not self._done:
            self._input = self._input + data if self._input else data

    def take(self, n: int) -> bytes:
        out = bytearray()
        try:
            while len(out) < n and self._input and not self._done:
                if self._d is None:
                    if self._members and not b"\x1f\x8b".startswith(self._input[:2]):
                        self._done, self._input = True, b""  # trailing junk after the data
                        break
                    if len(self._input) < 2:
                        break  # wait for the magic bytes / zlib header
                    self._d = zlib.decompressobj(self._wbits())
                out += self._d.decompress(self._input, n - len(out))
                if self._d.eof:
                    self._input, self._d = self._d.unused_data, None
                    self._members += 1
                    self._done = not self._gzip
                else:
                    self._input = self._d.unconsumed_tail
        except zlib.error:
            raise FetchError(f"cannot decode {self._encoding} body from {self._url}") from None
        return bytes(out)

    def _wbits(self) -> int:
        if self._gzip:
            return 16 + zlib.MAX_WBITS
        # "deflate" should be zlib-wrapped (RFC 1950) but is often raw deflate in practice.
        cmf, flg = self._input[0], self._input[1]
        zlib_header = cmf & 0x0F == 8 and (cmf << 8 | flg) % 31 == 0
        return zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS


def _decoder_for(encoding: str, url: str) -> _Decoder:
    if encoding in ("", "identity"):
        return _Identity()
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Inflate(encoding, url)
    raise FetchError(f"{url}: unsupported content encoding {encoding!r}")

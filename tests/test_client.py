"""The HTTP client against the local news web: redirects, limits, errors, conditional GET."""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from html import escape

import aiohttp
import pytest

from digest.config import FetchConfig
from digest.errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    InvalidURLError,
    ResponseTooLargeError,
)
from digest.fetch.client import HTML_TYPES, HttpClient
from tests.newsweb import ARTICLES, NewsWeb, Route, render_article

CHIP = ARTICLES[0]
MB = 1 << 20


async def test_redirect_chain_is_followed_to_the_article(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    resp = await http_client.get(news_web.url("/redirect/3"))
    assert resp.status == 200
    assert resp.url == news_web.url("/redirect/3")
    assert resp.final_url == news_web.url(CHIP.path)
    assert escape(CHIP.lede) in resp.text()
    assert [news_web.hits[p] for p in ("/redirect/3", "/redirect/2", "/redirect/1")] == [1, 1, 1]


async def test_redirect_loop_stops_at_max_redirects(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    with pytest.raises(FetchError, match=r"too many redirects \(more than 5\)"):
        await http_client.get(news_web.url("/redirect/loop"))
    assert news_web.hits["/redirect/loop"] == 6


@pytest.mark.parametrize(
    ("path", "address"),
    [
        ("/redirect/metadata", "169.254.169.254 (link-local address)"),
        ("/redirect/private", "10.0.0.1 (private network)"),
    ],
)
async def test_redirect_to_a_private_address_is_blocked(
    news_web: NewsWeb, http_client: HttpClient, path: str, address: str
) -> None:
    with pytest.raises(BlockedAddressError) as caught:
        await http_client.get(news_web.url(path))
    message = str(caught.value)
    assert f"resolves to {address}" in message
    assert "set fetch.allow_private_networks = true to allow" in message
    assert "\n" not in message


async def test_redirect_to_a_non_http_scheme_is_refused(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    with pytest.raises(FetchError, match="only http and https"):
        await http_client.get(news_web.url("/redirect/ftp"))


async def test_conditional_get_with_etag_returns_304(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    url = news_web.url("/feeds/technology.rss")
    first = await http_client.get(url)
    assert first.status == 200 and b"<rss" in first.body
    etag = first.headers["ETag"]
    again = await http_client.get(url, headers={"If-None-Match": etag}, raise_for_status=True)
    assert again.status == 304
    assert again.body == b""


async def test_conditional_get_with_last_modified_returns_304(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    url = news_web.url("/feeds/world.atom")
    first = await http_client.get(url)
    assert first.content_type == "application/atom+xml"
    since = first.headers["Last-Modified"]
    assert (await http_client.get(url, headers={"If-Modified-Since": since})).status == 304


async def test_error_status_is_a_response_unless_asked_to_raise(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    resp = await http_client.get(news_web.url("/missing.html"))
    assert resp.status == 404 and not resp.ok
    with pytest.raises(FetchError, match=r"HTTP 500 from http://127\.0\.0\.1"):
        await http_client.get(news_web.url("/broken.html"), raise_for_status=True)


async def test_gzip_bomb_stops_at_the_cap(news_web: NewsWeb, http_client: HttpClient) -> None:
    started = time.perf_counter()
    with pytest.raises(ResponseTooLargeError, match="after decompression"):
        await http_client.get(news_web.url("/bomb.html"), max_bytes=MB)
    async with http_client.open(news_web.url("/bomb.html"), max_bytes=MB) as stream:
        body = await stream.read()
        assert len(body) == MB
        assert stream.truncated
        assert body.startswith(b"<html>")
    # Inflating all 200 MB would take seconds; stopping at the cap takes milliseconds.
    assert time.perf_counter() - started < 5


async def test_content_length_over_the_cap_is_refused_before_reading(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    with pytest.raises(ResponseTooLargeError, match="body is 3145740 bytes"):
        await http_client.get(news_web.url("/huge.html"))


async def test_chunked_body_over_the_cap_is_refused(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    with pytest.raises(ResponseTooLargeError):
        await http_client.get(news_web.url("/huge-chunked.html"), max_bytes=MB)


async def test_body_exactly_at_the_cap_is_accepted(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    body = render_article(CHIP)
    resp = await http_client.get(news_web.url(CHIP.path), max_bytes=len(body))
    assert resp.body == body


async def test_stream_that_ends_exactly_at_the_cap_is_not_truncated(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    body = render_article(CHIP)
    async with http_client.open(news_web.url(CHIP.path), max_bytes=len(body)) as stream:
        assert await stream.read() == body
        assert await stream.read_more() == b""
        assert stream.at_eof and not stream.truncated


async def test_unexpected_content_type_is_refused(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    with pytest.raises(FetchError, match="unexpected content type application/pdf"):
        await http_client.get(news_web.url("/reports/annual.pdf"), accept=HTML_TYPES)
    resp = await http_client.get(news_web.url("/teaser.html"), accept=("text/*",))
    assert resp.content_type == "text/html"


async def test_hanging_server_times_out_with_a_clear_message(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    started = time.perf_counter()
    with pytest.raises(FetchTimeoutError, match="timed out") as caught:
        await http_client.get(news_web.url("/hang.html"), timeout=aiohttp.ClientTimeout(total=0.3))
    assert isinstance(caught.value, TimeoutError)
    assert time.perf_counter() - started < 2


async def test_total_timeout_covers_all_redirect_hops(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    for hop in ("/redirect/3", "/redirect/2", "/redirect/1"):
        news_web.set_latency(hop, 0.15)
    with pytest.raises(FetchTimeoutError):
        await http_client.get(
            news_web.url("/redirect/3"), timeout=aiohttp.ClientTimeout(total=0.35)
        )


async def test_refused_connection_is_reported(http_client: HttpClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError, match="connection refused"):
        await http_client.get(f"http://127.0.0.1:{port}/")


async def test_invalid_url_is_refused_without_a_request(http_client: HttpClient) -> None:
    with pytest.raises(InvalidURLError):
        await http_client.get("gopher://127.0.0.1/")


async def test_streaming_read_returns_the_whole_body_in_bounded_chunks(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    async with http_client.open(news_web.url(CHIP.path)) as stream:
        first = await stream.read_more(1000)
        assert 0 < len(first) <= 1000
        rest = [chunk async for chunk in stream.iter_chunks(4096)]
        assert all(len(c) <= 4096 for c in rest)
        assert stream.at_eof and not stream.truncated
    assert first + b"".join(rest) == render_article(CHIP)
    assert stream.bytes_read == len(render_article(CHIP))


async def test_shift_jis_response_text_is_decoded(
    news_web: NewsWeb, http_client: HttpClient
) -> None:
    tokyo = next(a for a in ARTICLES if a.encoding == "shift_jis")
    resp = await http_client.get(news_web.url(tokyo.path))
    assert resp.charset is None
    assert escape(tokyo.lede) in resp.text()


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send it
        ("gzip", lambda b: gzip.compress(b[:500]) + gzip.compress(b[500:])),  # two members
    ],
    ids=["gzip", "zlib-deflate", "raw-deflate", "gzip-members"],
)
async def test_compressed_bodies_are_inflated(
    news_web: NewsWeb, http_client: HttpClient, encoding: str, compress: object
) -> None:
    body = render_article(CHIP)
    news_web.add(
        Route("/compressed.html", compress(body), headers={"Content-Encoding": encoding})  # type: ignore[operator]
    )
    resp = await http_client.get(news_web.url("/compressed.html"))
    assert resp.body == body


async def test_corrupt_gzip_is_a_fetch_error(news_web: NewsWeb, http_client: HttpClient) -> None:
    news_web.add(Route("/corrupt.html", b"\x1f\x8b\x08\x00" + b"\xff" * 200, gzip=True))
    with pytest.raises(FetchError, match="cannot decode gzip"):
        await http_client.get(news_web.url("/corrupt.html"))


async def test_requests_carry_the_configured_user_agent(news_web: NewsWeb) -> None:
    news_web.add(Route("/ua", lambda request: request.headers["User-Agent"].encode()))
    config = FetchConfig(allowed_networks=["127.0.0.1/32"], user_agent="digest-test/1.0")
    async with HttpClient(config) as http:
        assert (await http.get(news_web.url("/ua"))).body == b"digest-test/1.0"


async def test_proxy_environment_is_ignored(
    news_web: NewsWeb, http_client: HttpClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy would make the guard check the proxy's address instead of the page's.
    monkeypatch.setenv("HTTP_PROXY", "http://10.255.255.1:3128")
    monkeypatch.setenv("http_proxy", "http://10.255.255.1:3128")
    assert (await http_client.get(news_web.url("/teaser.html"))).status == 200


async def test_using_a_closed_client_is_an_error() -> None:
    http = HttpClient(FetchConfig())
    with pytest.raises(RuntimeError, match="not open"):
        await http.get("http://127.0.0.1/")

"""RSS and Atom feeds fetched with a conditional GET, parsed off the event loop.

`fetch_feed` sends the validators the store kept from the last fetch (If-None-Match,
If-Modified-Since), so an unchanged feed costs a 304 and no parsing, and returns the state to keep.
The document is parsed by `digest.fetch.feed_parser.parse_feed`, in a parser process under a
deadline when the caller gives a pool (the service does), else in a thread.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict

import aiohttp

from digest.config import FeedConfig
from digest.errors import FeedError, FetchError, InvalidURLError, ParseError
from digest.fetch.client import FEED_TYPES, HttpClient, Response
from digest.fetch.feed_parser import ParsedFeed, parse_feed
from digest.models import FeedState, Headline
from digest.runtime.threads import off_loop

if TYPE_CHECKING:
    from digest.fetch.parsers import ParserPool

__all__ = ["FEED_ACCEPT", "FeedResult", "ParsedFeed", "fetch_feed", "parse_feed"]

FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, "
    "application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
)


class _How(TypedDict):
    """How to read one document: `parse_feed`'s keywords, the same in either place."""

    feed_url: str
    category: str
    name: str | None
    base_url: str | None
    charset: str | None


# A parser process gets this long for one feed document when the caller sets no timeout.
PARSE_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class FeedResult:
    """One fetch of one feed. On 304 `not_modified` is true and `headlines` is empty."""

    url: str  # the configured feed URL
    final_url: str  # after redirects
    status: int
    not_modified: bool
    title: str | None  # None when not modified: the document was not read
    headlines: tuple[Headline, ...]
    state: FeedState  # what to save: validators for next time, errors cleared, times set
    warning: str | None = None

    @property
    def etag(self) -> str | None:
        return self.state.etag

    @property
    def last_modified(self) -> str | None:
        return self.state.last_modified


async def fetch_feed(
    http: HttpClient,
    feed: FeedConfig,
    state: FeedState | None,
    *,
    timeout: float | None = None,  # noqa: ASYNC109  (enforced by the HTTP client)
    max_bytes: int | None = None,
    parsers: ParserPool | None = None,
    parse_timeout: float = PARSE_TIMEOUT,
) -> FeedResult:
    """Fetch `feed` with a conditional GET and parse it; any failure is a FeedError.

    `state` is what the store saved after the last fetch (its validators are sent);
    `timeout` (seconds, e.g. `sources.feed_timeout`) covers redirects and the whole body;
    `max_bytes` caps the body after decompression (e.g. `fetch.max_feed_bytes`);
    `parsers`: parse in that pool within `parse_timeout`, else in a thread.
    """
    category = feed.category.strip().lower()
    previous = state or FeedState(url=feed.url, category=category, title=feed.name)
    try:
        response = await http.get(
            feed.url,
            headers=_request_headers(previous),
            max_bytes=max_bytes,
            timeout=aiohttp.ClientTimeout(total=timeout) if timeout else None,
            accept=FEED_TYPES,
        )
    except (FetchError, InvalidURLError) as err:
        raise FeedError(f"cannot fetch feed: {err}") from err

    now = datetime.now(UTC)
    if response.status == 304:
        return _not_modified(feed, response, previous, category, now)
    if not 200 <= response.status < 300:
        raise FeedError(f"cannot fetch feed {feed.url}: HTTP {response.status}")

    parsed = await _parsed(response, feed, category, parsers, parse_timeout)
    etag = _header(response.headers, "ETag")
    last_modified = _header(response.headers, "Last-Modified")
    return FeedResult(
        url=feed.url,
        final_url=response.final_url,
        status=response.status,
        not_modified=False,
        title=parsed.title,
        headlines=parsed.headlines,
        state=_fetched(
            previous,
            category=category,
            title=feed.name or parsed.title or previous.title,  # the name shown as source
            etag=etag,
            last_modified=last_modified,
            now=now,
        ),
        warning=parsed.warning,
    )


def _not_modified(
    feed: FeedConfig, response: Response, previous: FeedState, category: str, now: datetime
) -> FeedResult:
    """A 304's result: nothing read, the feed's state kept, its validators refreshed if the
    response gives new ones."""
    return FeedResult(
        url=feed.url,
        final_url=response.final_url,
        status=304,
        not_modified=True,
        title=None,
        headlines=(),
        state=_fetched(
            previous,
            category=category,
            title=previous.title,
            etag=_header(response.headers, "ETag") or previous.etag,
            last_modified=_header(response.headers, "Last-Modified") or previous.last_modified,
            now=now,
        ),
    )


def _fetched(
    previous: FeedState,
    *,
    category: str,
    title: str | None,
    etag: str | None,
    last_modified: str | None,
    now: datetime,
) -> FeedState:
    """The feed's state to keep after a good fetch at `now`: these validators and names, the
    errors cleared."""
    return replace(
        previous,
        category=category,
        title=title,
        etag=etag,
        last_modified=last_modified,
        error_count=0,
        last_error=None,
        last_ok_at=now,
        last_checked_at=now,
    )


def _request_headers(previous: FeedState) -> dict[str, str]:
    """What to accept, and the validators of the last fetch: a conditional GET."""
    headers = {"Accept": FEED_ACCEPT}
    if previous.etag:
        headers["If-None-Match"] = previous.etag
    if previous.last_modified:
        headers["If-Modified-Since"] = previous.last_modified
    return headers


async def _parsed(
    response: Response,
    feed: FeedConfig,
    category: str,
    parsers: ParserPool | None,
    parse_timeout: float,
) -> ParsedFeed:
    """The fetched document parsed: in `parsers` within `parse_timeout` (a FeedError when late
    or when the parser process died on it), else in a thread."""
    how = _How(
        feed_url=feed.url,
        category=category,
        name=feed.name,
        base_url=response.final_url,
        charset=response.charset,
    )
    if parsers is None:
        return await off_loop(parse_feed, response.body, **how)
    try:
        return await parsers.feed(response.body, **how, timeout=parse_timeout)
    except ParseError as err:  # late, or the parser process died on this document
        raise FeedError(f"cannot parse feed {feed.url}: {err}") from err


def _header(headers: Any, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return str(value).strip() or None if value is not None else None

"""A site's feed from its page: what `digest feeds add URL` subscribes to.

The URL is fetched once through the guarded client (the SSRF guard, the feed byte cap). A feed is
taken as it is; an HTML page is searched for the feeds it advertises (`<link rel="alternate"
type="application/rss+xml" href>`, Atom and RSS 1.0 alike, relative hrefs resolved against the
page's `<base>` or its URL after redirects), and the first of them, in page order, that fetches
and parses as a feed is the one. Nothing is kept here: the caller decides.

`advertised_feeds` reads the `<link>` tags with a bounded pattern over the start of the page, not
with an HTML parser: it needs no tree, and a hostile page cannot make a linear scan slow (see
`digest.fetch.shape` for what tree builders pay).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import aiohttp

from digest.errors import (
    FeedError,
    FetchError,
    InvalidURLError,
    NoFeedFoundError,
    UnexpectedContentTypeError,
)
from digest.fetch.client import FEED_TYPES, HTML_TYPES, HttpClient, Response
from digest.fetch.feed_parser import LOOKS_LIKE_HTML, ParsedFeed, parse_feed
from digest.runtime.threads import off_loop
from digest.sources.feeds import FEED_ACCEPT

FEED_LINK_TYPES = frozenset(("application/rss+xml", "application/atom+xml", "application/rdf+xml"))
MAX_CANDIDATES = 5  # advertised feeds tried, in page order
SCAN_CHARS = 1 << 20  # the <link>s of a page's head are in its first megabyte
_ACCEPT = f"{FEED_ACCEPT.removesuffix(', */*;q=0.5')}, text/html;q=0.8, */*;q=0.5"
# A tag's attributes are bounded, so a page of unclosed "<link" costs a linear scan, no more.
_TAG = re.compile(r"<(link|base)\b([^<>]{0,4096})>", re.I)
_ATTR = re.compile(r"""([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")
_BODY = re.compile(r"<body[\s>]", re.I)


@dataclass(frozen=True, slots=True)
class FoundFeed:
    """The feed found for a URL: where it is, the page that advertised it, what it holds."""

    url: str  # the feed's own URL: the one given, or the advertised one
    page_url: str | None  # the page it was advertised on; None when the URL was the feed
    feed: ParsedFeed


def advertised_feeds(page: str, base_url: str) -> list[str]:
    """The absolute http(s) URLs of the RSS and Atom feeds a page advertises, in page order."""
    head = page[:SCAN_CHARS]
    if body := _BODY.search(head):
        head = head[: body.start()]
    base, base_seen = base_url, False
    found: list[str] = []
    for match in _TAG.finditer(head):
        attrs = _attributes(match.group(2))
        href = attrs.get("href", "").strip()
        if not href:
            continue
        if match.group(1).lower() == "base":
            if not base_seen:  # the first <base href> counts, as in a browser
                base, base_seen = _absolute(href, base_url) or base_url, True
            continue
        rels = attrs.get("rel", "").lower().split()
        kind = attrs.get("type", "").split(";")[0].strip().lower()
        if "alternate" in rels and kind in FEED_LINK_TYPES and (url := _absolute(href, base)):
            found.append(url)
    return list(dict.fromkeys(found))


async def find_feed(
    http: HttpClient,
    url: str,
    *,
    timeout: float | None = None,  # noqa: ASYNC109  (enforced by the HTTP client)
    max_bytes: int | None = None,
) -> FoundFeed:
    """The feed at `url`, or the first readable one the page at `url` advertises.

    NoFeedFoundError when the URL is not found, is neither feed nor page, or the page advertises
    no readable feed; FeedError when it cannot be fetched at all.
    """
    response = await _get(http, url, timeout=timeout, max_bytes=max_bytes)
    try:
        return FoundFeed(url, None, await _parse(response, url))
    except FeedError as err:
        if not _is_html(response):
            raise NoFeedFoundError(f"{url} is not a feed: {_reason(err, url)}") from None
    candidates = advertised_feeds(response.text(), response.final_url)
    if not candidates:
        raise NoFeedFoundError(
            f"no feed found at {url}: the page advertises none "
            '(no <link rel="alternate"> of type application/rss+xml or application/atom+xml)'
        )
    problems: list[str] = []
    for candidate in candidates[:MAX_CANDIDATES]:
        try:
            feed_response = await _get(http, candidate, timeout=timeout, max_bytes=max_bytes)
            return FoundFeed(candidate, url, await _parse(feed_response, candidate))
        except (FeedError, InvalidURLError) as err:
            problems.append(str(err))
    n = len(problems)
    raise NoFeedFoundError(
        f"no feed found at {url}: the {n} feed{'s' if n > 1 else ''} it advertises "
        f"cannot be read ({problems[0]})"
    )


async def _get(
    http: HttpClient,
    url: str,
    *,
    timeout: float | None,  # noqa: ASYNC109
    max_bytes: int | None,
) -> Response:
    try:
        response = await http.get(
            url,
            headers={"Accept": _ACCEPT},
            max_bytes=max_bytes,
            timeout=aiohttp.ClientTimeout(total=timeout) if timeout else None,
            accept=(*FEED_TYPES, "application/xhtml+xml"),
        )
    except InvalidURLError:
        raise
    except UnexpectedContentTypeError as err:
        raise NoFeedFoundError(
            f"{url} is not a feed or a web page: it is {err.content_type}"
        ) from None
    except FetchError as err:
        raise FeedError(f"cannot fetch {url}: {err}") from err
    if response.status in (404, 410):
        raise NoFeedFoundError(f"not found: {url} (HTTP {response.status})")
    if not response.ok:
        raise FeedError(f"cannot fetch {url}: HTTP {response.status}")
    return response


async def _parse(response: Response, url: str) -> ParsedFeed:
    """Off the event loop: a feed is untrusted input, and may be large."""
    return await off_loop(
        parse_feed,
        response.body,
        feed_url=url,
        category="",
        base_url=response.final_url,
        charset=response.charset,
    )


def _is_html(response: Response) -> bool:
    return response.content_type in HTML_TYPES or bool(
        LOOKS_LIKE_HTML.search(response.body[:4096].lstrip())
    )


def _reason(err: FeedError, url: str) -> str:
    """The parser's explanation without its "feed URL is ..." preamble (the URL is named)."""
    text = str(err)
    for prefix, instead in (
        (f"feed {url} is not an RSS or Atom feed: ", ""),
        (f"feed {url} is malformed: ", "it is malformed: "),
    ):
        if text.startswith(prefix):
            return instead + text.removeprefix(prefix)
    return text


def _attributes(text: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for m in _ATTR.finditer(text):
        value = next((v for v in m.group(2, 3, 4) if v is not None), "")
        attrs.setdefault(m.group(1).lower(), html.unescape(value))
    return attrs


def _absolute(href: str, base: str) -> str | None:
    try:
        url = urljoin(base, href)
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.hostname else None

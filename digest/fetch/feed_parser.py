"""RSS and Atom documents to `Headline`s: a pure parser, no I/O.

An aggregator's item (Google News, Bing News, a planet) is its publisher's, not the feed's:
`digest.fetch.aggregators` says who published it, cleans its headline and finds its link.

`parse_feed` hands feedparser a stream, never the raw bytes: given bytes or a str, feedparser
tries them as a file name (and a str as a URL to fetch), which untrusted input must never
trigger. It imports nothing of the service's network or configuration, so a parser process
(`digest.fetch.parsers`) starts fast: a feed is untrusted input, parsed off the event loop.
"""

from __future__ import annotations

import io
import re
import xml.sax
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import feedparser

from digest.errors import FeedError
from digest.fetch.aggregators import (
    Attribution,
    Entry,
    aggregates,
    attribute,
    echoes_headline,
    known_aggregator,
    split_site,
    through_aggregator,
)
from digest.models import Headline
from digest.stories.rank import outlet, relayed

SNIPPET_CHARS = 500
_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif")
_CHARSET_NAME = re.compile(r"[A-Za-z0-9._:-]{1,40}")
_MARKUP = re.compile(r"<[a-zA-Z/!]")  # for values feedparser gives without a type
LOOKS_LIKE_HTML = re.compile(rb"<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])", re.I)


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    """What one feed document holds. `warning` says why a flawed feed was read anyway;
    `categories` are the feed's own (channel-level `<category>`, Atom `<category term>`)."""

    title: str
    headlines: tuple[Headline, ...]
    warning: str | None = None
    categories: tuple[str, ...] = ()
    site_url: str | None = None  # the feed's own link to its site

    def to_json(self) -> dict[str, Any]:
        """As JSON: what a parser process answers (`digest.fetch.parsers`)."""
        return {
            "title": self.title,
            "headlines": [h.to_json() for h in self.headlines],
            "warning": self.warning,
            "categories": list(self.categories),
            "site_url": self.site_url,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParsedFeed:
        return cls(
            title=str(data["title"]),
            headlines=tuple(Headline.from_json(h) for h in data["headlines"]),
            warning=data["warning"],
            categories=tuple(str(c) for c in data["categories"]),
            site_url=data["site_url"],
        )


def parse_feed(
    body: bytes,
    *,
    feed_url: str,
    category: str,
    name: str | None = None,
    base_url: str | None = None,
    charset: str | None = None,
) -> ParsedFeed:
    """Parse an RSS 0.9x/1.0/2.0 or Atom document into headlines, or raise FeedError.

    `base_url` (default: `feed_url`) resolves relative links, e.g. the URL after redirects;
    `charset` is the HTTP header's, which outranks the XML declaration (RFC 7303).
    """
    base = base_url or feed_url
    content_type = "application/xml"
    if charset and _CHARSET_NAME.fullmatch(charset):
        content_type += f"; charset={charset}"
    try:
        doc = feedparser.parse(
            io.BytesIO(body),
            response_headers={"content-location": base, "content-type": content_type},
        )
    except Exception as err:  # feedparser on hostile input: any crash means "not readable"
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        raise FeedError(f"feed {feed_url} is malformed: {reason}") from err

    version = doc.get("version") or ""
    problem = _describe(doc.get("bozo_exception")) if doc.get("bozo") else None
    info = doc.get("feed") or {}
    title = _clean_text(info.get("title"), _detail_type(info, "title"))
    # The feed's own name never reads as a relayed one ("X (via Y)"): its items' outlet is it.
    source = " ".join((name or title or _host(feed_url)).replace(" (via ", " (").split())
    origin = f"feed:{feed_url}"
    items = [(e, item) for e in doc.get("entries") or () if (item := _entry(e, base))]
    entries = [item for _, item in items]
    feed = _Feed(
        url=feed_url,
        source=source,
        aggregated=aggregates(feed_url, entries),
        known=known_aggregator(feed_url, entries),
    )
    headlines = tuple(
        _unique(
            _headline(e, item, feed, base=base, category=category, origin=origin)
            for e, item in items
        )
    )

    if not headlines:
        if not version:
            raise FeedError(f"feed {feed_url} is not an RSS or Atom feed: {_what_it_is(body)}")
        if problem and _is_fatal(doc.get("bozo_exception")):
            raise FeedError(f"feed {feed_url} is malformed: {problem}")
    warning = None
    if problem:
        warning = f"feed is not well-formed ({problem}); {len(headlines)} entries read anyway"
    return ParsedFeed(
        title=title,
        headlines=headlines,
        warning=warning,
        categories=_categories(info),
        site_url=_absolute(info.get("link"), base),
    )


def _categories(info: Mapping[str, Any]) -> tuple[str, ...]:
    found: list[str] = []
    for tag in info.get("tags") or ():
        if isinstance(tag, Mapping):
            found += [t for key in ("term", "label") if (t := _clean_text(tag.get(key), None))]
    return tuple(dict.fromkeys(found))


# --- entries -----------------------------------------------------------------------------------


def _entry(entry: Mapping[str, Any], base: str) -> Entry | None:
    """The entry as `digest.fetch.aggregators` sees it; None without a title or a link."""
    title = _clean_text(entry.get("title"), _detail_type(entry, "title"))
    url = _absolute(entry.get("link"), base)
    if not title or not url:
        return None
    name, site = "", ""
    source = entry.get("source")
    if isinstance(source, Mapping):  # RSS <source url>, Atom <source><title><link>
        name = _clean_text(source.get("title"), _detail_type(source, "title"))
        site = _absolute(source.get("href") or source.get("link"), base) or ""
    # Bing News' <News:Source>, as feedparser names an element of an unknown namespace.
    name = name or _clean_text(entry.get("news_source"), None)
    # Only a link through an aggregator needs the description's links (the article's URL).
    links = _links(entry, base) if through_aggregator(url) else ()
    return Entry(title=title, url=url, source_name=name, source_url=site, links=links)


@dataclass(frozen=True, slots=True)
class _Feed:
    """What attributing one feed's items needs to know of the feed."""

    url: str
    source: str  # its name, shown for its own items
    aggregated: bool  # `aggregates`: its items are many publishers'
    known: bool  # `known_aggregator`: Google News' or Bing News'


def _headline(
    entry: Mapping[str, Any],
    item: Entry,
    feed: _Feed,
    *,
    base: str,
    category: str,
    origin: str,
) -> Headline:
    shown = attribute(item, aggregated=feed.aggregated, known=feed.known, feed_url=feed.url)
    snippet = _snippet(entry)
    if echoes_headline(snippet, (item.title, shown.title), (item.source_name, shown.outlet)):
        snippet = ""  # Google News' "<a>Headline</a> <font>Publisher</font>": no lede
    title = shown.title
    if not (feed.aggregated or shown.outlet):
        hosts = [h for u in (shown.url, feed.url) if (h := _host(u))]
        title = split_site(title, names=(feed.source,), hosts=hosts)
    return Headline(
        title=title,
        url=shown.url,
        source=_source(shown, feed.source),
        published=_published(entry),
        snippet=snippet,
        image=_image(entry, base),
        category=category,
        origin=origin,
        feed=feed.source,
    )


def _source(shown: Attribution, feed: str) -> str:
    """The outlet an item is shown as: its publisher when vouched for, else the feed, naming
    the publisher the feed gave as relayed ("Reuters (via Hostile Wire)"), so that it counts
    as the feed (`digest.stories.rank.outlet`)."""
    if shown.vouched:
        return shown.outlet
    if not shown.outlet or outlet(shown.outlet, "") == outlet(feed, ""):
        return feed
    return relayed(shown.outlet, feed)


def _links(entry: Mapping[str, Any], base: str) -> tuple[str, ...]:
    """The absolute http(s) links of the entry's description, in order."""
    parser = _Links()
    try:
        parser.feed(entry.get("summary") or "")
        parser.close()
    except Exception:  # html.parser is lenient; guard against the odd assertion on junk
        return ()
    return tuple(dict.fromkeys(u for href in parser.hrefs if (u := _absolute(href, base))))


def _unique(headlines: Iterable[Headline]) -> Iterable[Headline]:
    seen: set[str] = set()
    for h in headlines:
        if h.url not in seen:
            seen.add(h.url)
            yield h


def _published(entry: Mapping[str, Any]) -> datetime | None:
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        # dict.get: FeedParserDict.get maps a missing updated_parsed to published_parsed, warning.
        t = dict.get(entry, key) if isinstance(entry, dict) else entry.get(key)
        if t:
            try:
                year, month, day, hour, minute, second = t[:6]  # feedparser normalises to UTC
                return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
            except (TypeError, ValueError, OverflowError):
                continue
    return None


def _snippet(entry: Mapping[str, Any]) -> str:
    text = _clean_text(entry.get("summary"), _detail_type(entry, "summary"))
    if not text:
        for content in entry.get("content") or ():
            text = _clean_text(content.get("value"), content.get("type"))
            if text:
                break
    return _shorten(text, SNIPPET_CHARS)


def _image(entry: Mapping[str, Any], base: str) -> str | None:
    candidates: list[Any] = []
    for media in entry.get("media_content") or ():
        medium, kind, url = media.get("medium"), media.get("type") or "", media.get("url") or ""
        if (
            medium == "image"
            or kind.startswith("image/")
            or (not medium and not kind and url.lower().endswith(_IMAGE_EXTENSIONS))
        ):
            candidates.append(url)
    candidates.extend(t.get("url") for t in entry.get("media_thumbnail") or ())
    for link in [*(entry.get("enclosures") or ()), *(entry.get("links") or ())]:
        if link.get("rel", "enclosure") == "enclosure" and (link.get("type") or "").startswith(
            "image/"
        ):
            candidates.append(link.get("href"))
    for candidate in candidates:
        if url := _absolute(candidate, base):
            return url
    return None


# --- text and URLs -----------------------------------------------------------------------------


class _TextOnly(HTMLParser):
    """HTML to plain text: block elements become spaces, scripts and styles vanish."""

    # fmt: off
    _BLOCKS = frozenset({
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
        "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
        "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul",
    })
    # fmt: on
    _HIDDEN = frozenset({"script", "style", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self._hidden += 1
        elif tag in self._BLOCKS or tag == "img":
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self._BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


class _Links(HTMLParser):
    """The `href`s of an HTML fragment's `<a>` elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def html_to_text(html: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed to single spaces."""
    parser = _TextOnly()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; guard against the odd assertion on junk
        return " ".join(re.sub(r"<[^>]*>", " ", html).split())
    return " ".join("".join(parser.parts).split())


def _clean_text(value: Any, kind: str | None) -> str:
    if not isinstance(value, str):
        return ""
    if kind in ("text/html", "application/xhtml+xml") or (kind is None and _MARKUP.search(value)):
        return html_to_text(value)
    return " ".join(value.split())


def _detail_type(item: Mapping[str, Any], key: str) -> str | None:
    detail = item.get(f"{key}_detail")
    return detail.get("type") if isinstance(detail, Mapping) else None


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def _absolute(value: Any, base: str) -> str | None:
    """`value` resolved against `base`, if that gives an http(s) URL with a host."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        url = urljoin(base, value.strip())
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. a malformed IPv6 literal
        return None
    return url if ok else None


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or url).removeprefix("www.")
    except ValueError:
        return url


# --- errors ------------------------------------------------------------------------------------


def _is_fatal(exc: Any) -> bool:
    """Whether feedparser's complaint means the XML could not be read (vs a charset quibble)."""
    soft = (
        feedparser.CharacterEncodingOverride,
        feedparser.NonXMLContentType,
        feedparser.UndeclaredNamespace,
    )
    return not isinstance(exc, soft)


def _describe(exc: Any) -> str:
    if isinstance(exc, xml.sax.SAXParseException):
        return f"{exc.getMessage()} (line {exc.getLineNumber()}, column {exc.getColumnNumber()})"
    text = " ".join(str(exc).split()) if exc is not None else ""
    return text or type(exc).__name__


def _what_it_is(body: bytes) -> str:
    head = body[:4096].lstrip()
    if not head:
        return "the document is empty"
    if LOOKS_LIKE_HTML.search(head):
        return "it is an HTML page"
    return "no RSS or Atom elements found"

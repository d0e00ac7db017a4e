"""The things that flow through the pipeline, named for the domain.

`Headline` comes from a source (search result or feed entry); `Extract` is what the fast
extraction pass learned from the page behind it. Both are frozen: stages return new values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, Literal

ExtractStatus = Literal[
    "ok",  # a lede from the article's own paragraphs
    "meta",  # no article paragraphs found; the lede is the page's description meta tag
    "empty",  # page fetched, nothing usable in it
    "timeout",  # the page did not answer within its deadline
    "error",  # HTTP error status, refused connection, bad redirect...
    "blocked",  # the SSRF guard refused the address
    "not_html",  # PDF, image, ... (not decoded as text)
    "skipped",  # not attempted (no budget left, or a cached failure)
]


@dataclass(frozen=True, slots=True)
class Headline:
    """One item from a source: a news result, a web search result or a feed entry."""

    title: str
    url: str
    source: str = ""
    published: datetime | None = None
    snippet: str = ""
    image: str | None = None
    category: str | None = None
    origin: str = ""  # "ddg:news", "ddg:text" or "feed:<feed url>"

    def with_(self, **changes: Any) -> Headline:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Extract:
    """What the fast extraction pass found for one URL; `full_content` is "" when nothing was."""

    url: str
    full_content: str = ""
    status: ExtractStatus = "skipped"
    http_status: int | None = None
    final_url: str | None = None
    error: str | None = None
    bytes_read: int = 0
    elapsed: float = 0.0


@dataclass(frozen=True, slots=True)
class Item:
    """A headline enriched by fast extraction: what `news`, `query` and `collect` hand on."""

    headline: Headline
    extract: Extract

    def to_json(self) -> dict[str, Any]:
        h, e = self.headline, self.extract
        return {
            "title": h.title,
            "url": h.url,
            "source": h.source,
            "published": h.published.isoformat() if h.published else None,
            "category": h.category,
            "snippet": h.snippet,
            "image": h.image,
            "full_content": e.full_content,
            "extract_status": e.status,
        }


@dataclass(frozen=True, slots=True)
class Page:
    """A page read in depth by the crawler: its main text, however it had to be fetched."""

    url: str
    final_url: str
    title: str = ""
    text: str = ""  # main text (trafilatura on the rendered HTML, or markitdown for PDFs)
    kind: Literal["html", "pdf"] = "html"
    fetched_by: Literal["browser", "http"] = "http"
    http_status: int | None = None
    error: str | None = None  # set when nothing usable was read
    note: str | None = None  # why the text is partial or not the browser's (a cut, a fallback)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.text)


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary of one article. `summarizer` is "extractive" or "llm:<model>"."""

    title: str
    summary: str
    brief_summary: str
    keywords: tuple[str, ...] = ()
    summarizer: str = "extractive"
    prompt_tokens: int = 0
    completion_tokens: int = 0


# -- Editions: what readers see (the archive, the HTML digest, the emails) ----------------------


@dataclass(frozen=True, slots=True)
class Outlet:
    """One outlet's telling of a story: a link a reader can follow."""

    name: str
    url: str
    title: str


@dataclass(frozen=True, slots=True)
class EditionStory:
    """A story as it appears in an edition. Text fields are scraped: escape or sanitize them."""

    id: int
    category: str
    title: str
    brief_summary: str
    summary: str
    keywords: tuple[str, ...]
    summarizer: str  # "extractive" or "llm:<model>"
    outlets: tuple[Outlet, ...]
    first_seen: datetime
    updated: bool = False  # gained outlets after it was first seen
    image: str | None = None


@dataclass(frozen=True, slots=True)
class EditionHeadline:
    """One of the day's other headlines, with its lede."""

    title: str
    url: str
    source: str
    lede: str
    published: datetime | None = None


@dataclass(frozen=True, slots=True)
class EditionSection:
    category: str
    stories: tuple[EditionStory, ...]
    headlines: tuple[EditionHeadline, ...]


@dataclass(frozen=True, slots=True)
class Edition:
    """One day's digest in the configured time zone: per category, its top stories and ledes."""

    day: date
    timezone: str
    sections: tuple[EditionSection, ...]
    generated_at: datetime

    def only(self, categories: tuple[str, ...] | None) -> Edition:
        """The edition restricted to a subscriber's categories (None: all of them)."""
        if not categories:
            return self
        keep = tuple(s for s in self.sections if s.category in categories)
        return replace(self, sections=keep)

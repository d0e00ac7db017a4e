"""Where each page of the archive lives, and how one page links to another.

The archive is a tree of static files meant to work from `file://` and from any static host
under any sub-path, so pages link to each other only by relative paths:

    index.html                      editions, newest first
    latest.html                     the newest edition's digest
    search.html                     search every story, in the browser: no server needed
    search.js                       the search page's script
    search-index.js                 the stories it searches, as a script (works from file://)
    style.css
    feed.xml                        Atom feed of editions
    feeds/<category>.xml            Atom feed of one category's editions
    2026/11/29/index.html           an edition: the day's HTML digest
    2026/11/29/<category>.html      one category of that edition
    2026/11/29/stories/<id>.html    one story: full summary, keywords, every outlet

Paths are POSIX strings relative to the archive's root.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from digest.errors import ConfigError
from digest.render.sanitize import safe_url

__all__ = [
    "FEED",
    "INDEX",
    "LATEST",
    "SEARCH",
    "SEARCH_INDEX",
    "SEARCH_SCRIPT",
    "STYLESHEET",
    "Links",
    "absolute_url",
    "category_feed_path",
    "category_path",
    "category_slug",
    "edition_path",
    "normalize_base_url",
    "relative",
    "story_path",
]

INDEX = "index.html"
LATEST = "latest.html"
STYLESHEET = "style.css"
SEARCH = "search.html"
SEARCH_INDEX = "search-index.js"
SEARCH_SCRIPT = "search.js"
FEED = "feed.xml"

_PLAIN_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_RESERVED = frozenset({"index", "stories"})


@lru_cache(maxsize=1024)
def category_slug(category: str) -> str:
    """A file name for a category, stable across builds and unique per category name.

    Simple names ("technology") are used as they are; anything else ("us politics", "日本",
    "index") gets an ASCII slug plus a short hash of the name, so no two categories share a page.
    """
    if _PLAIN_SLUG.fullmatch(category) and category not in _RESERVED:
        return category
    ascii_part = re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")[:40] or "category"
    digest = hashlib.sha256(category.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{ascii_part}-{digest}"


def _day_dir(day: date) -> str:
    return f"{day.year:04d}/{day.month:02d}/{day.day:02d}"


def edition_path(day: date) -> str:
    return f"{_day_dir(day)}/{INDEX}"


def category_path(day: date, category: str) -> str:
    return f"{_day_dir(day)}/{category_slug(category)}.html"


def story_path(day: date, story_id: int) -> str:
    return f"{_day_dir(day)}/stories/{int(story_id)}.html"


def category_feed_path(category: str) -> str:
    return f"feeds/{category_slug(category)}.xml"


def relative(from_page: str, to_page: str) -> str:
    """The relative link from one archive page to another (both paths from the root)."""
    # posixpath.relpath would do, but it consults the working directory on every call.
    source = from_page.split("/")[:-1]
    target = to_page.split("/")
    common = 0
    while common < min(len(source), len(target) - 1) and source[common] == target[common]:
        common += 1
    return "/".join([".."] * (len(source) - common) + target[common:])


def normalize_base_url(base_url: str) -> str:
    """The configured base URL ending in "/", or "" when none is set."""
    base_url = base_url.strip()
    if not base_url:
        return ""
    if safe_url(base_url) is None:
        raise ConfigError(f"archive.base_url must be an absolute http(s) URL, not {base_url!r}")
    return base_url.rstrip("/") + "/"


def absolute_url(base_url: str, path: str) -> str | None:
    """The absolute URL of an archive page, or None when no base URL is configured."""
    base = normalize_base_url(base_url)
    return base + path if base else None


@dataclass(frozen=True, slots=True)
class Links:
    """Links from one rendered document to the archive's pages.

    `page` is where the document lives in the archive (links are relative to it), or None for a
    document read outside the archive. `absolute` asks for absolute links (feeds, when a base
    URL is configured). A target that cannot be reached from the document yields None, and
    templates then show plain text instead of a link.
    """

    page: str | None
    base_url: str = ""  # normalized: "" or ending in "/"
    absolute: bool = False

    def __call__(self, target: str) -> str | None:
        if self.absolute or self.page is None:
            return self.base_url + target if self.base_url else None
        return relative(self.page, target)

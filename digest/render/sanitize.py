"""Make scraped strings safe to put in pages, feeds and emails.

Text is never trusted as markup: templates escape it (Jinja2 autoescape). What escaping cannot
fix lives here: links whose scheme would run code or leave the web (`javascript:`, `data:`,
`file:`), and characters that are not allowed in XML or cannot be encoded at all.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["MAX_URL_LENGTH", "clean_text", "needs_cleaning", "safe_url"]

MAX_URL_LENGTH = 2048

# Browsers drop these anywhere in a URL ("java\tscript:" is javascript:), so we drop them first.
_URL_STRIPPED = re.compile(r"[\t\n\r]")
# ASCII controls (and DEL) left in a URL after that: refused rather than guessed at.
_URL_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Not allowed in XML 1.0 (feeds) and useless in HTML: C0 controls other than tab/newline/CR,
# lone surrogates (they cannot be encoded as UTF-8) and the two non-characters U+FFFE/U+FFFF.
_TEXT_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@lru_cache(maxsize=8192)  # an outlet's link appears on several pages and in the feeds
def safe_url(url: str) -> str | None:
    """The URL if it is a plain http(s) link a reader may follow, else None.

    None for other schemes (javascript:, data:, vbscript:, file:, mailto:, relative or
    scheme-relative URLs), for URLs with credentials (`https://bank.example@evil.example/`), a
    missing host, a bad port, control characters, or more than MAX_URL_LENGTH characters.
    The result still has to be escaped where it is used (templates do that).
    """
    if not isinstance(url, str):
        return None
    cleaned = _URL_STRIPPED.sub("", url.strip(" \t\n\r\f\v\x00"))
    if not cleaned or len(cleaned) > MAX_URL_LENGTH or _URL_CONTROL.search(cleaned):
        return None
    cleaned = cleaned.replace(" ", "%20")
    try:
        parts = urlsplit(cleaned)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https"):
        return None
    # "\" counts as "/" for browsers, so "https:\\evil.example" has a host for them but not here.
    if not parts.hostname or "@" in parts.netloc or "\\" in parts.netloc:
        return None
    return cleaned


def clean_text(text: str | None) -> str:
    """Text with the characters XML forbids and UTF-8 cannot encode removed."""
    if not text:
        return ""
    return _TEXT_ILLEGAL.sub("", text)


def needs_cleaning(text: str | None) -> bool:
    """True when `clean_text` would change the text."""
    return bool(text and _TEXT_ILLEGAL.search(text))

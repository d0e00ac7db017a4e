"""Make scraped strings safe to put in pages, feeds, emails and on a terminal.

Text is never trusted as markup: templates escape it (Jinja2 autoescape). What escaping cannot
fix lives here: links whose scheme would run code or leave the web (`javascript:`, `data:`,
`file:`), and characters that no reader should get from a page: `clean_text` is the one rule
for those, applied by every renderer (the archive's pages, feeds and search index through
`clean_edition`, the email, the terminal's console, log lines).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = [
    "BIDI_CONTROLS",
    "MAX_URL_LENGTH",
    "clean_text",
    "escape_json_for_terminal",
    "needs_cleaning",
    "safe_url",
]

MAX_URL_LENGTH = 2048

# Browsers drop these anywhere in a URL ("java\tscript:" is javascript:), so we drop them first.
_URL_STRIPPED = re.compile(r"[\t\n\r]")
# ASCII controls (and DEL) left in a URL after that: refused rather than guessed at.
_URL_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Unicode's Bidi_Control characters: the embeddings and overrides (U+202A-U+202E), the isolates
# (U+2066-U+2069) and the marks (U+200E, U+200F, U+061C). An override shown to a reader turns
# "txt.exe" into "exe.txt" (or a sender's name into someone else's); the marks reorder less but
# are as invisible. A headline's direction comes from its letters, which stay, so right-to-left
# titles still read right to left.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# What no reader gets from a page: C0 controls but tab and newline (ESC starts every terminal
# escape, and XML 1.0 forbids most of them), DEL, C1 controls (U+009B is a one-character CSI on
# some terminals), the bidi controls, lone surrogates (UTF-8 cannot encode them) and the two
# non-characters U+FFFE/U+FFFF. CR is the exception that is turned into a newline, not dropped.
_TEXT_ILLEGAL = re.compile(
    f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}\\ud800-\\udfff\\ufffe\\uffff]"
)
_CR = re.compile(r"\r\n?")
# The same characters where JSON text may still carry them (json.dumps escapes C0 itself).
_JSON_UNSAFE = re.compile(f"[\\x7f-\\x9f{BIDI_CONTROLS}\\u2028\\u2029\\ud800-\\udfff]")


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
    """Text as a reader may see it: control characters (terminal escapes among them), bidi
    controls and what XML or UTF-8 cannot hold removed; tab and newline kept, CR made newline.

    Only deletes (and turns CR into LF), so printable text is kept exactly.
    """
    if not text:
        return ""
    if "\r" in text:
        text = _CR.sub("\n", text)
    return _TEXT_ILLEGAL.sub("", text)


def needs_cleaning(text: str | None) -> bool:
    """True when `clean_text` would change the text."""
    return bool(text and (_TEXT_ILLEGAL.search(text) or "\r" in text))


def escape_json_for_terminal(data: str) -> str:
    """JSON text with the unsafe characters `json.dumps(ensure_ascii=False)` leaves raw (DEL,
    C1, bidi controls, U+2028/U+2029 for older parsers, lone surrogates that UTF-8 cannot
    encode) written as \\uXXXX escapes: the same data for a parser, nothing a terminal acts on.
    They occur only inside strings."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", data)

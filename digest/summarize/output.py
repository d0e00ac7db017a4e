"""Making model output safe to use: tolerant JSON parsing, link and markup stripping, citations.

Everything here is pure and total: arbitrary text in, never an exception out (the property tests
in tests/test_summarize.py hold it to that).

A "summary" that only restates the headline, perhaps with the site's name before or after it
(`restates_headline`), tells a reader nothing the headline does not: it is refused like any
unusable reply (`RESTATES_HEADLINE`), and the story falls back to its extractive summary.
"""

from __future__ import annotations

import functools
import html
import ipaddress
import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import tld

# -- tolerant JSON -------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
_MAX_CANDIDATES = 32


def _loads_object(candidate: str) -> dict[str, Any] | None:
    for text in (candidate, _drop_trailing_commas(candidate)):
        try:
            value = json.loads(text, strict=False)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _drop_trailing_commas(text: str) -> str:
    """Remove commas directly before a closing brace or bracket, outside strings."""
    out: list[str] = []
    in_string = escaped = False
    pending_comma: int | None = None
    for ch in text:
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
            pending_comma = None
        elif ch == ",":
            pending_comma = len(out)
        elif ch in "}]" and pending_comma is not None:
            out[pending_comma] = ""
            pending_comma = None
        elif not ch.isspace():
            pending_comma = None
        out.append(ch)
    return "".join(out)


def _balanced_object_at(text: str, start: int) -> str | None:
    """The `{...}` starting at `start`, braces matched outside strings; None if it never closes."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model's reply, or None.

    Tolerates what models write around JSON: fenced code blocks, leading and trailing prose,
    trailing commas, raw newlines inside strings, a byte-order mark.
    """
    text = text.lstrip("\ufeff").strip()
    found = _loads_object(text)
    if found is not None:
        return found
    regions = [m.group(2) for m in _FENCE.finditer(text)] + [text]
    tried = 0
    for region in regions:
        start = region.find("{")
        while start != -1 and tried < _MAX_CANDIDATES:
            tried += 1
            candidate = _balanced_object_at(region, start)
            if candidate is not None:
                found = _loads_object(candidate)
                if found is not None:
                    return found
            start = region.find("{", start + 1)
    return None


# -- links and markup ----------------------------------------------------------------------------

_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,500})\]\(([^)\n]{0,2000})\)")
_MD_LINK = re.compile(r"\[([^\]\n]{0,500})\]\(([^)\n]{0,2000})\)")
_MD_REF_DEF = re.compile(r"(?m)^[ \t]{0,3}\[[^\]\n]{1,200}\]:[ \t]*\S.*$")
_MD_REF_USE = re.compile(r"\[([^\]\n]{1,500})\]\[[^\]\n]{0,200}\]")
_HTML_BLOCK = re.compile(
    r"<(script|style|iframe|object|template)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE
)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>|<!--.*?-->", re.DOTALL)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*:[^<>\s]*)>")
_SCHEME = re.compile(r"(?i)(?:^|[^A-Za-z0-9+.-])(?:mailto|javascript|vbscript|data|file|tel|sms):")
_DOMAIN_PATH = re.compile(r"(?:[\w-]+\.)+[^\W\d_]{2,}(?::\d+)?/")
_LINK_HINT = re.compile(r"[:/@.。．｡]|(?i:www\.)")
# What a host name can be part of in a token: "evil.example:8080/x" is the host evil.example.
_NOT_HOST = re.compile(r"[^\w.\-。．｡]+")
# Full stops that IDNA (and so browsers) read as the dot between labels: "evil-example。com"
# (read so only in an ASCII name: in Chinese or Japanese text "。" ends a sentence).
_DOTS = str.maketrans("。．｡", "...")
_PORT_AFTER = re.compile(r":\d{1,5}(?!\d)")
_BRACKETED_IP = re.compile(r"\[([0-9A-Fa-f:.]{2,45})\]")
_BARE_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_WWW = re.compile(r"(?:^|[^\w.-])www\.")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}")
_LEADING = "([{<\"'“‘«*_`"
_TRAILING = ".,;:!?)]}>\"'”’»*_`"
_SPACES = re.compile(r"[ \t]+")
# Only before "." and ",": French puts a space before ";:!?" on purpose.
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([.,])(?=\s|$)")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")


def _core(token: str) -> str:
    return token.lstrip(_LEADING).rstrip(_TRAILING)


def _canonical(url: str) -> str:
    return _core(url).rstrip("/")


def is_link_like(token: str) -> bool:
    """Whether a whitespace-free token is (or contains) a link a renderer or mail client might
    turn into one: anything with "://", "www." hosts, mailto:/javascript:/data: and the like,
    e-mail addresses, host names followed by a path ("evil.example/offer"), and hosts on their
    own (`hosts_in`): "evil-example.com", "evil.example:8080", "203.0.113.5", "[::1]"."""
    if not _LINK_HINT.search(token):
        return False
    core = _core(token)
    if not core:
        return False
    lowered = core.lower()
    return (
        "://" in lowered
        or lowered.startswith("//")
        or bool(_WWW.search(lowered))
        or bool(_SCHEME.search(core))
        or bool(_EMAIL.search(core))
        or bool(_DOMAIN_PATH.match(core))
        or bool(hosts_in(core))
    )


@functools.lru_cache(maxsize=4096)
def _is_top_level_domain(label: str) -> bool:
    """Whether `label` is a top-level domain of the Public Suffix List (ICANN section) as the
    `tld` package bundles it: `com`, `io`, `рф` are; `js`, `m`, `g`, `example` are not."""
    if not (label.isalpha() or label.startswith("xn--")) or len(label) < 2:
        return False
    try:
        return tld.is_tld(label.lower(), search_private=False)
    except ValueError:
        return False


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def hosts_in(token: str) -> list[str]:
    """The host names and addresses in a whitespace-free token that a mail or chat client could
    make a link of: a name whose last label is a top-level domain ("evil-example.com",
    "Evil-Example.COM's"), any name or address with a port ("evil.example:8080",
    "localhost:631"), IPv4 addresses ("203.0.113.5/renew") and IPv6 ones ("[::1]",
    "2001:db8::1"). Ordinary text has none: "U.S.", "e.g.", "a.m.", "Node.js", "3.11"."""
    found: list[str] = []
    at = 0
    for piece in _NOT_HOST.split(token):
        at = token.find(piece, at) + len(piece)
        dotted = piece.translate(_DOTS)
        if not dotted.isascii():  # Chinese or Japanese text: "。" ends its sentences
            dotted = piece
        name = _POSSESSIVE.sub("", dotted).strip(".-")
        labels = name.split(".")
        if len(labels) >= 2 and labels[-2] and _is_top_level_domain(labels[-1]):
            found.append(name)
        elif len(labels) == 4 and all(x.isdigit() and len(x) <= 3 for x in labels):
            if _is_ip(name):
                found.append(name)
        elif name and _PORT_AFTER.match(token, at):
            named = (len(labels) >= 2 and all(labels)) or name.lower() == "localhost"
            if named and labels[-1][:1].isalpha():
                found.append(name)
    found += [m.group(1) for m in _BRACKETED_IP.finditer(token) if _is_ip(m.group(1))]
    if token.count(":") >= 2:
        ipv6 = (m.group(0) for m in _BARE_IPV6.finditer(token))
        found += [a for a in ipv6 if any(c.isdigit() for c in a) and _is_ip(a)]
    return found


def _host(url: str) -> str:
    """The host of an outlet's URL as a reader would write it: lower case, no `www.`."""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def _allowed(target: str, allowed: frozenset[str]) -> bool:
    return _canonical(target) in allowed and _core(target) == target.strip()


def _outlet_host(token: str, hosts: frozenset[str]) -> bool:
    """Whether a token is just the host of one of the story's outlets ("reuters.com")."""
    core = _POSSESSIVE.sub("", _core(token)).lower()
    return bool(hosts) and core.removeprefix("www.") in hosts


@functools.cache
def _control_chars() -> re.Pattern[str]:
    """Control, format and surrogate characters (Cc, Cf, Cs) other than tab and newline."""
    bmp = [
        chr(c)
        for c in range(0x10000)
        if unicodedata.category(chr(c)) in {"Cc", "Cf", "Cs"} and chr(c) not in "\n\t"
    ]
    klass = "".join(re.escape(c) for c in bmp if not 0xD800 <= ord(c) <= 0xDFFF)
    # Surrogates, and the format characters outside the BMP (tags, musical and shorthand ones).
    astral = "\ud800-\udfff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    astral += "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    return re.compile(f"[{klass}{astral}]")


def clean_control(text: str) -> str:
    """Drop control and format characters (zero-width spaces, bidi overrides), keep newlines."""
    if text.isascii() and text.isprintable():
        return text
    return _control_chars().sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def strip_links(text: str, allowed_urls: Iterable[str] = ()) -> str:
    """Remove every link except bare allowed URLs and their hosts: markdown links become their
    text, images their alt text, HTML tags and comments are dropped, and so are bare URLs,
    e-mail addresses, host/path tokens and hosts on their own (`hosts_in`: "evil-example.com",
    "evil.example:8080", IP addresses), unless the host is an allowed URL's ("reuters.com" in
    a summary of a Reuters story).

    Every step only deletes characters, so repeating until nothing changes reaches a fixed point
    that holds no link-like token (`find_links`) other than an allowed URL or its host.
    """
    urls = [u for u in allowed_urls if u]
    allowed = frozenset(_canonical(u) for u in urls)
    hosts = frozenset(h for h in map(_host, urls) if h)

    def autolink(m: re.Match[str]) -> str:
        return m.group(1) if _allowed(m.group(1), allowed) else ""

    text = clean_control(text)
    for _ in range(8):
        before = text
        text = _MD_IMAGE.sub(lambda m: m.group(1), text)
        text = _MD_LINK.sub(lambda m: m.group(1), text)
        text = _MD_REF_DEF.sub("", text)
        text = _MD_REF_USE.sub(lambda m: m.group(1), text)
        text = _AUTOLINK.sub(autolink, text)
        text = _HTML_BLOCK.sub("", text)
        text = _HTML_TAG.sub("", text)
        text = _tidy(_strip_link_tokens(text, allowed, hosts))
        if text == before:
            return text
    return _strip_link_tokens(text, allowed, hosts).strip()


def linkless_line(text: str, allowed_urls: Iterable[str] = ()) -> str:
    """Scraped text as one line a reader is shown (a timeline's sentence, a new fact), without
    links (`strip_links`). Entities are decoded first, until none is left, so that no renderer
    that decodes them again ("https&#58;//...") can make a link of what is left."""
    for _ in range(8):
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return strip_links(" ".join(text.split()), allowed_urls)


def _strip_link_tokens(text: str, allowed: frozenset[str], hosts: frozenset[str]) -> str:
    """Delete link-like tokens (whitespace-separated), keeping the whitespace around them."""

    def keep(token: str) -> bool:
        if not is_link_like(token):
            return True
        return _canonical(token) in allowed or _outlet_host(token, hosts)

    return re.sub(r"\S+", lambda m: m.group(0) if keep(m.group(0)) else "", text)


def _tidy(text: str) -> str:
    text = _EMPTY_BRACKETS.sub("", text)
    lines = [
        _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", line)).strip() for line in text.split("\n")
    ]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def find_links(text: str) -> list[str]:
    """Every link-like token in `text` (what `strip_links` removes unless allowed)."""
    return [_core(t) for t in text.split() if is_link_like(t)]


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace to single spaces and cut at a word boundary within `limit` chars."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


# -- citations -----------------------------------------------------------------------------------

_CITATION = re.compile(r"\[(\s*\d+(?:\s*[,;–-]\s*\d+)*\s*)\]")
_CANONICAL_CITATION = re.compile(r"\[(\d+)\]")


def clean_citations(text: str, count: int) -> tuple[str, tuple[int, ...]]:
    """Keep citations [n] with 1 <= n <= count (also written "[1, 3]" or "[1-2]"); drop the rest.

    Returns the text and the sources cited, in order of first use. Dropping one citation can
    join brackets into another ("[[9]1]"), so this repeats until nothing changes.
    """

    def numbers(group: str) -> list[int]:
        out: list[int] = []
        for part in re.split(r"\s*[,;]\s*", group.strip()):
            bounds = re.split(r"\s*[–-]\s*", part)
            if any(len(b) > 6 or not b.isdigit() for b in bounds):
                continue
            if len(bounds) == 2:
                lo, hi = int(bounds[0]), int(bounds[1])
                out.extend(range(lo, min(hi, lo + 50) + 1))
            elif len(bounds) == 1:
                out.append(int(bounds[0]))
        return out

    def rewrite(m: re.Match[str]) -> str:
        valid = [n for n in dict.fromkeys(numbers(m.group(1))) if 1 <= n <= count]
        return "".join(f"[{n}]" for n in valid)

    text = _tidy(text)
    for _ in range(5):
        before, text = text, _tidy(_CITATION.sub(rewrite, text))
        if text == before:
            break
    else:  # pathological nesting: delete every bracketed number that is not a valid citation
        while True:  # each pass only deletes, so this ends
            before = text
            text = _tidy(_CITATION.sub(lambda m: m.group(0) if _is_valid(m, count) else "", text))
            if text == before:
                break
    cited = dict.fromkeys(int(m.group(1)) for m in _CANONICAL_CITATION.finditer(text))
    return text, tuple(cited)


def _is_valid(m: re.Match[str], count: int) -> bool:
    group = m.group(1)
    return group.isdigit() and len(group) <= 6 and 1 <= int(group) <= count


RESTATES_HEADLINE = "the summary only restates the headline"
# A citation mark a summary carries ("[1]", "[1, 2]", "[1-3]"): no word of what it says.
_CITATION_MARK = re.compile(r"\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\]")
_SITE_SUFFIX = re.compile(r"(.*\S)\s+[-\u2013\u2014|:]\s+\S.*", re.S)
_FOLDED_WORD = re.compile(r"[^\W_]+")


def restates_headline(summary: str, headlines: Iterable[str], names: Iterable[str] = ()) -> bool:
    """Whether `summary` says only what one of `headlines` says: the same words in the same
    order (case, accents, punctuation, citation marks and spacing aside), a site's name after
    a headline (" - Reuters") aside, and the words of `names` (the outlets' names) anywhere."""
    skip = {w for name in names for w in _folded_words(name)}
    said = [w for w in _folded_words(_CITATION_MARK.sub(" ", summary)) if w not in skip]
    if not said:
        return False
    for headline in headlines:
        forms = [_CITATION_MARK.sub(" ", headline)]
        if split := _SITE_SUFFIX.fullmatch(forms[0]):
            forms.append(split.group(1))
        if any(said == [w for w in _folded_words(f) if w not in skip] for f in forms):
            return True
    return False


def _folded_words(text: str) -> list[str]:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _FOLDED_WORD.findall(plain)

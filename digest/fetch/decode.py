"""Turn HTML bytes into text: BOM, then the Content-Type charset, then `<meta>`, then a guess.

Web pages lie about their encoding less often than they omit it; the order below is the one
browsers use (minus their full prescan). Unknown or unsupported charset names are skipped, never
fatal, and the last resort is UTF-8 with replacement characters.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

META_SCAN_BYTES = 2048
DETECT_SAMPLE_BYTES = 64 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)
# Names the WHATWG Encoding Standard maps to a different codec than Python's.
_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "tis-620": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-sjis": "shift_jis",
    "shift-jis": "shift_jis",
    "sjis": "shift_jis",
    "windows-31j": "cp932",
    "x-user-defined": "cp1252",
}


def decode_html(body: bytes, header_charset: str | None = None) -> str:
    """Decode an HTML document (or a prefix of one) to text; never raises."""
    encoding, skip = _detect(body, header_charset)
    return body[skip:].decode(encoding, errors="replace")


def detect_encoding(body: bytes, header_charset: str | None = None) -> str:
    """The Python codec `decode_html` would use for `body`.

    A caller decoding successive prefixes of one page can detect once and reuse the answer.
    """
    return _detect(body, header_charset)[0]


def normalize_charset(name: str | None) -> str | None:
    """A usable Python codec name for a declared charset, or None when it is unknown."""
    if not name:
        return None
    cleaned = name.strip().strip("\"'").strip().lower()
    if not cleaned or len(cleaned) > 40:
        return None
    cleaned = _ALIASES.get(cleaned, cleaned)
    try:
        info = codecs.lookup(cleaned)
    except (LookupError, ValueError):
        return None
    if info.name in {"utf-16", "utf-32"} or not _is_text_codec(info):
        # A page declaring UTF-16 without a BOM is almost always ASCII-compatible in practice.
        return "utf-8" if info.name in {"utf-16", "utf-32"} else None
    return info.name


def _detect(body: bytes, header_charset: str | None) -> tuple[str, int]:
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return encoding, len(bom)
    declared = normalize_charset(header_charset) or _meta_charset(body[:META_SCAN_BYTES])
    if declared:
        return declared, 0
    return _guess(body[:DETECT_SAMPLE_BYTES]), 0


def _meta_charset(head: bytes) -> str | None:
    for match in _META_CHARSET.finditer(head):
        found = normalize_charset(match.group(1).decode("ascii", "ignore"))
        if found:
            return found
    return None


def _guess(sample: bytes) -> str:
    if not sample:
        return "utf-8"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as err:
        # A prefix may end inside a multi-byte character: that alone does not make it non-UTF-8.
        if err.start < len(sample) - 3:
            best = charset_normalizer.from_bytes(sample).best()
            found = normalize_charset(best.encoding) if best else None
            return found or "utf-8"
    return "utf-8"


def _is_text_codec(info: codecs.CodecInfo) -> bool:
    # Excludes bytes-to-bytes codecs such as "base64" or "zlib", which a page could name, and
    # codecs that refuse to decode anything at all (Python's "undefined").
    if not getattr(info, "_is_text_encoding", True):
        return False
    try:
        info.decode(b"a", "replace")
    except UnicodeError:
        return False
    return True

"""OPML subscription lists: the feeds in any reader's export, and an export of our own.

`parse_opml` does no I/O, and an OPML file is untrusted input: it is parsed by defusedxml, which
refuses every entity declaration (the "billion laughs" bomb, external entities that would read a
file or a URL) and never fetches an external DTD, and it is capped at `MAX_OPML_BYTES`. Anything
it cannot read is an `OpmlError`, never a partial list. It is read as a stream (no tree is
built): time grows with the file and memory with what it holds, and outlines nested more than
`MAX_OPML_NESTING` deep are refused (readers nest two or three; 300,000 levels once cost 135 s).

Readers nest feeds under folders in the same way (OPML 1.0 and 2.0 alike): a feed is an
`<outline>` with an `xmlUrl`; an outline without one is a folder, named by its `text` (or
`title`), and a folder may sit inside another (Miniflux reads RSSOwl's "My Feeds" > "Some
Category" so). OPML 2.0 also allows a `category` attribute of slash-separated paths
("/Technology,/World/Europe"), which FreshRSS reads as a folder; both are kept, and which of them
names a configured category is decided by the caller (`digest.commands.feeds_manage`). Attribute
names are compared without case (NetNewsWire's advice for what exporters write) and readers' own
namespaced attributes (`miniflux:`, `frss:`) are ignored.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime

import defusedxml
import defusedxml.ElementTree as SafeET

from digest.errors import OpmlError

MAX_OPML_BYTES = 10 * 1024 * 1024  # a 200-feed export is about 40 KB
MAX_OPML_NESTING = 100  # outlines in outlines; every feed keeps the names of its folders
_TEXT_CHARS = 500  # longer titles and folder names are cut
_TERMINAL_CONTROLS = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True, slots=True)
class OpmlFeed:
    """One feed outline: its feed URL as written, its name, and where the file filed it."""

    url: str  # xmlUrl, stripped (not yet checked: the caller decides what it accepts)
    title: str = ""  # text, else title; "" when it has neither
    site_url: str | None = None  # htmlUrl
    folders: tuple[str, ...] = ()  # the enclosing folders' names, outermost first
    categories: tuple[str, ...] = ()  # the OPML 2.0 category attribute's path segments
    kind: str = ""  # the type attribute as written: "rss" mostly; FreshRSS has "HTML+XPath"


@dataclass(frozen=True, slots=True)
class OpmlDocument:
    title: str
    feeds: tuple[OpmlFeed, ...]


def parse_opml(data: bytes, *, source: str = "the OPML file") -> OpmlDocument:
    """The feeds of an OPML 1.0/2.0 document, in document order, or OpmlError naming `source`
    and why it cannot be read (malformed XML, an entity declaration, not OPML, too big, too
    deeply nested)."""
    if len(data) > MAX_OPML_BYTES:
        raise OpmlError(
            f"{source} is {len(data)} bytes, over the {MAX_OPML_BYTES // (1024 * 1024)} MB limit"
        )
    reader = _parse_xml(data, source)
    if reader.root.lower() != "opml":
        raise OpmlError(
            f"{source} is not an OPML file: its root element is <{_shown(reader.root)}>"
        )
    if not reader.has_body:
        raise OpmlError(f"{source} is not an OPML file: it has no <body>")
    return OpmlDocument(title=_text("".join(reader.title)), feeds=tuple(reader.feeds))


def render_opml(
    sections: Sequence[tuple[str, Sequence[OpmlFeed]]], *, title: str, created: datetime
) -> bytes:
    """An OPML 2.0 document with one folder outline per section (a category and its feeds), as
    the readers above write theirs: `text` and `title` on every outline, `type="rss"`, `xmlUrl`
    and `htmlUrl` on feeds. Characters XML cannot hold are left out of names."""
    opml = ET.Element("opml", version="2.0")
    head = ET.SubElement(opml, "head")
    ET.SubElement(head, "title").text = _xml_chars(title)
    ET.SubElement(head, "dateCreated").text = format_datetime(created.astimezone(UTC), usegmt=True)
    body = ET.SubElement(opml, "body")
    for category, feeds in sections:
        name = _xml_chars(category)
        folder = ET.SubElement(body, "outline", text=name, title=name)
        for feed in feeds:
            label = _text(_xml_chars(feed.title)) or _xml_chars(feed.url)
            attrs = {"type": "rss", "text": label, "title": label, "xmlUrl": _xml_chars(feed.url)}
            if feed.site_url:
                attrs["htmlUrl"] = _xml_chars(feed.site_url)
            ET.SubElement(folder, "outline", attrs)
    ET.indent(opml, space="  ")
    text = ET.tostring(opml, encoding="unicode", xml_declaration=False)
    # Characters a terminal acts on (DEL, C1, bidi controls) are written as references: the
    # same document for a reader, nothing for a terminal when it is printed.
    text = _TERMINAL_CONTROLS.sub(lambda m: f"&#x{ord(m.group()):X};", text)
    return f'<?xml version="1.0" encoding="utf-8"?>\n{text}\n'.encode()


# --- reading -----------------------------------------------------------------------------------


def _parse_xml(data: bytes, source: str) -> _OutlineReader:
    reader = _OutlineReader()
    try:
        # The defaults, spelled out: a DOCTYPE alone is harmless (its DTD is never fetched),
        # any entity declaration or external reference is refused.
        parser = SafeET.DefusedXMLParser(
            target=reader, forbid_dtd=False, forbid_entities=True, forbid_external=True
        )
        parser.feed(data)
        parser.close()
    except _TooDeep:
        raise OpmlError(
            f"{source} is refused: its outlines nest more than {MAX_OPML_NESTING} deep "
            "(a reader's folders nest two or three)"
        ) from None
    except defusedxml.EntitiesForbidden as err:
        what = "an external entity" if err.sysid or err.pubid else "an entity"
        raise OpmlError(
            f"{source} is refused: it declares {what} ({_shown(err.name)!r}) in a DOCTYPE, "
            "which an OPML file has no use for (an entity bomb or a file-reading trick)"
        ) from None
    except defusedxml.DefusedXmlException as err:
        raise OpmlError(f"{source} is refused: {_shown(str(err)) or type(err).__name__}") from None
    except ET.ParseError as err:
        raise OpmlError(f"{source} is not well-formed XML: {_shown(str(err))}") from None
    except LookupError as err:  # an encoding Python does not know
        raise OpmlError(f"{source} cannot be decoded: {_shown(str(err))}") from None
    except Exception as err:  # expat on hostile input: anything else still means "unreadable"
        reason = _shown(f"{type(err).__name__}: {err}")
        raise OpmlError(f"{source} cannot be read: {reason}") from None
    return reader


class _TooDeep(Exception):
    pass


# What an open element's children are to the reader.
_SKIP, _ROOT, _HEAD, _TITLE, _FOLDER = range(5)


class _OutlineReader:
    """The parser's target: it keeps the feed outlines as they are read, in document order,
    and of the tree only the open elements (a state each) and the open folders' names. A feed's
    own children are not feeds; elements of another kind are skipped with their content."""

    def __init__(self) -> None:
        self.root = ""  # the root element's local name
        self.has_body = False
        self.title: list[str] = []  # the first <head>'s first <title>'s text
        self.feeds: list[OpmlFeed] = []
        self._open: list[int] = []  # the state of each open element
        self._named: list[bool] = []  # per open folder: whether it added a name
        self._names: list[str] = []
        self._folders: tuple[str, ...] | None = ()  # `_names` as a tuple, None when stale
        self._seen_head = self._seen_title = False

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        name = _local(tag).lower()
        parent = self._open[-1] if self._open else None
        state = _SKIP
        if parent is None:
            self.root = _local(tag)
            state = _ROOT if name == "opml" else _SKIP
        elif parent == _ROOT:
            if name == "body" and not self.has_body:
                self.has_body, state = True, _FOLDER
                self._named.append(False)
            elif name == "head" and not self._seen_head:
                self._seen_head, state = True, _HEAD
        elif parent == _HEAD:
            if name == "title" and not self._seen_title:
                self._seen_title, state = True, _TITLE
        elif parent == _FOLDER and name == "outline":
            state = self._outline(attrib)
        self._open.append(state)

    def end(self, tag: str) -> None:
        if self._open.pop() == _FOLDER and self._named.pop():
            self._names.pop()
            self._folders = None

    def data(self, text: str) -> None:
        # A title's text up to its first child element, as ElementTree's `.text`.
        if self._open and self._open[-1] == _TITLE:
            self.title.append(text)

    def close(self) -> None:
        return None

    def _outline(self, attrib: dict[str, str]) -> int:
        attrs = _attributes(attrib)
        label = _text(attrs.get("text")) or _text(attrs.get("title"))
        url = (attrs.get("xmlurl") or "").strip()
        if url:
            if self._folders is None:
                self._folders = tuple(self._names)  # shared by the feeds of one folder
            self.feeds.append(
                OpmlFeed(
                    url=url,
                    title=label,
                    site_url=(attrs.get("htmlurl") or "").strip() or None,
                    folders=self._folders,
                    categories=_category_paths(attrs.get("category") or ""),
                    kind=(attrs.get("type") or "").strip(),
                )
            )
            return _SKIP
        if len(self._named) > MAX_OPML_NESTING:  # the body and the folders around this one
            raise _TooDeep
        self._named.append(bool(label))
        if label:
            self._names.append(label)
            self._folders = None
        return _FOLDER


def _attributes(attrib: dict[str, str]) -> dict[str, str]:
    """Un-namespaced attributes by lower-cased name (the first spelling wins)."""
    found: dict[str, str] = {}
    for name, value in attrib.items():
        if not name.startswith("{"):
            found.setdefault(name.lower(), value)
    return found


def _category_paths(value: str) -> tuple[str, ...]:
    """ "/Tech/News,/World" -> ("Tech", "News", "World"): every named segment, in order."""
    segments = (s for path in value.split(",") for s in path.split("/"))
    return tuple(dict.fromkeys(t for s in segments if (t := _text(s))))


def _local(tag: str) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _text(value: str | None) -> str:
    if not value:
        return ""
    text = " ".join(value.split())
    return text if len(text) <= _TEXT_CHARS else text[: _TEXT_CHARS - 1] + "…"


def _shown(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- writing -----------------------------------------------------------------------------------


def _xml_chars(text: str | None) -> str:
    """`text` without the characters XML 1.0 cannot hold (C0 controls but tab/newline/CR,
    lone surrogates, U+FFFE/U+FFFF): ElementTree would write them and break the file."""
    if not text:
        return ""
    return "".join(c for c in text if _xml_char(ord(c)))


def _xml_char(code: int) -> bool:
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )

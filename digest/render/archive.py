"""The static archive: every edition as browsable pages, with Atom feeds, written incrementally.

`render_pages` decides what the archive holds (path -> bytes, no I/O); `write_archive` puts it on
disk. Output is deterministic (the same editions give the same bytes), which is what makes the
incremental rebuild work, in two steps:

- an edition's own pages (its digest, its categories, its stories) are rendered again only when
  the edition, its neighbour link or the renderer itself changed: the manifest keeps a
  fingerprint per edition, and the pages must still be on disk;
- every page that is rendered is compared with the file on disk and written only when its bytes
  differ, atomically (temporary file, fsync, rename): a crash leaves each page old or new.

The search page (search.html, its script and the index of every story, search-index.js) is
rendered on every build like the index; the writer leaves it alone unless its bytes changed.

Stale pages: a page written by an earlier build that the current editions no longer produce
(a story dropped when today's edition was rebuilt) is left in place by default, so a link
someone saved keeps working; it is no longer linked from the index or the editions. The
manifest remembers such pages, and `prune=True` deletes them.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache
from importlib import resources
from itertools import groupby
from pathlib import Path

from digest.config import ArchiveConfig
from digest.models import Edition
from digest.render.atom import render_category_feed, render_edition_feed
from digest.render.corrections import Corrected
from digest.render.digest_html import LEAD_STORIES, render_edition_page
from digest.render.files import (
    exclusive_lock,
    fsync_directories,
    remove_temp_files,
    same_content,
    write_atomic,
)
from digest.render.layout import (
    FEED,
    INDEX,
    LATEST,
    SEARCH,
    SEARCH_INDEX,
    SEARCH_SCRIPT,
    STYLESHEET,
    Links,
    category_feed_path,
    category_path,
    edition_path,
    normalize_base_url,
    story_path,
)
from digest.render.search_index import render_search_index
from digest.render.templating import (
    PAGE_CSP,
    SEARCH_CSP,
    category_name,
    clean_edition,
    render,
    search_script,
    short_date,
    stylesheet,
)

__all__ = ["MANIFEST", "ArchiveReport", "render_pages", "write_archive"]

MANIFEST = ".digest-archive.json"  # pages written and edition fingerprints
LOCK = ".digest-archive.lock"
WRITERS = 8
MAX_PENDING_WRITES = 256
_MANIFEST_VERSION = 2

_MONTHS = (
    "January February March April May June July August September October November December"
).split()


@dataclass(frozen=True, slots=True)
class ArchiveReport:
    """What a build did. Paths are relative to the archive directory, sorted."""

    out_dir: Path
    written: tuple[str, ...]  # new or changed pages, replaced atomically
    unchanged: tuple[str, ...]  # pages already up to date on disk: not touched
    stale: tuple[str, ...]  # pages of earlier builds these editions no longer produce, left alone
    removed: tuple[str, ...] = ()  # stale pages deleted (prune=True)
    rendered: int = 0  # pages rendered (the others belong to editions that did not change)
    elapsed: float = field(default=0.0, compare=False)

    @property
    def pages(self) -> int:
        return len(self.written) + len(self.unchanged)


def render_pages(
    editions: Sequence[Edition],
    config: ArchiveConfig,
    *,
    now: datetime | None = None,
    lead: int = LEAD_STORIES,
    corrected: Mapping[date, Sequence[Corrected]] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """Every file of the archive, as (path, bytes); pure, deterministic, no I/O.

    `editions` are all the editions the archive should hold, one per day, in any order. `now`
    only dates the feeds of an archive that has no editions yet. `lead` stories open each
    edition's page ([publish] lead_stories). `corrected` holds, by edition day, the corrections
    later editions made of what it said: its pages mark those sentences (the edition itself
    is never rewritten).
    """
    when = now or datetime.now(UTC)
    for part in _plan(editions, config, now=when, lead=lead, corrected=corrected or {}):
        yield from part.render()


def write_archive(
    editions: Sequence[Edition],
    config: ArchiveConfig,
    out_dir: Path,
    *,
    now: datetime | None = None,
    prune: bool = False,
    rerender: bool = False,
    lead: int = LEAD_STORIES,
    corrected: Mapping[date, Sequence[Corrected]] | None = None,
) -> ArchiveReport:
    """Bring the archive in `out_dir` up to date with `editions` (every edition it should hold).

    Only pages whose bytes changed are written, each atomically. One build at a time per
    directory (a lock file). `prune=True` also deletes stale pages (see the module docstring);
    `rerender=True` renders and compares every page, even of editions that did not change
    (after pages were edited or deleted by hand). `lead` stories open each edition's page.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    when = now or datetime.now(UTC)
    parts = _plan(editions, config, now=when, lead=lead, corrected=corrected or {})
    with exclusive_lock(out_dir / LOCK):
        remove_temp_files(out_dir)
        old = _Manifest.read(out_dir)
        reuse = {
            part.day
            for part in parts
            if not rerender
            and part.key is not None
            and part.day is not None
            and old.editions.get(part.day) == part.key
            and all((out_dir / p).is_file() for p in part.paths)
        }
        fingerprints: dict[date, str | None] = {
            p.day: p.key for p in parts if p.day is not None and p.day in reuse
        }
        # Pages of editions about to change lose their fingerprint before the first write: a
        # build that dies half-way must not leave a mix of old and new pages looking finished.
        pending = _Manifest(old.pages | {p for part in parts for p in part.paths}, fingerprints)
        if pending != old:
            pending.write(out_dir)

        writer = _Writer(out_dir)
        with writer:
            for part in parts:
                if part.day in reuse:
                    writer.unchanged.extend(part.paths)
                    continue
                for path, data in part.render():
                    writer.store(path, data)
        fingerprints.update((p.day, p.key) for p in parts if p.day is not None and p.key)
        written, unchanged, touched_dirs = writer.written, writer.unchanged, writer.directories
        rendered = writer.rendered

        produced = set(written) | set(unchanged)
        stale = sorted(old.pages - produced)
        removed = _prune(out_dir, stale, touched_dirs) if prune else []
        final = _Manifest(produced | (set(stale) - set(removed)), fingerprints)
        if final != old:
            final.write(out_dir)
            touched_dirs.add(out_dir)
        fsync_directories(sorted(touched_dirs))
    return ArchiveReport(
        out_dir=out_dir,
        written=tuple(sorted(written)),
        unchanged=tuple(sorted(unchanged)),
        stale=tuple(s for s in stale if s not in removed),
        removed=tuple(removed),
        rendered=rendered,
        elapsed=time.perf_counter() - started,
    )


class _Writer:
    """Compares and writes pages on a few threads: each write waits for its fsync, so writing
    several at once is what keeps a from-scratch build from being bound by disk latency.

    Leaving the `with` block waits for every write; the first failure stops the rest (pages
    already being written still finish, each atomically) and is raised.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.written: list[str] = []
        self.unchanged: list[str] = []
        self.directories: set[Path] = set()
        self.rendered = 0
        self._made: set[Path] = {out_dir}
        self._pool = ThreadPoolExecutor(WRITERS, thread_name_prefix="archive-writer")
        self._pending: deque[Future[None]] = deque()

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        try:
            if error is None:
                while self._pending:
                    self._pending.popleft().result()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def store(self, path: str, data: bytes) -> None:
        self.rendered += 1
        self._pending.append(self._pool.submit(self._store, path, data))
        while len(self._pending) > MAX_PENDING_WRITES:  # bounds the memory held by pages
            self._pending.popleft().result()

    def _store(self, path: str, data: bytes) -> None:
        target = self.out_dir / path
        if same_content(target, data):
            self.unchanged.append(path)
            return
        if target.parent not in self._made:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(target.parent)
        write_atomic(target, data)
        self.directories.add(target.parent)
        self.written.append(path)


# -- planning: which pages, and what each depends on ---------------------------------------------


@dataclass(frozen=True, slots=True)
class _Part:
    """Pages rendered together. `key` fingerprints all they depend on (None: always render)."""

    day: date | None
    key: str | None
    paths: tuple[str, ...]
    render: Callable[[], Iterator[tuple[str, bytes]]]


def _plan(
    editions: Sequence[Edition],
    config: ArchiveConfig,
    *,
    now: datetime,
    lead: int = LEAD_STORIES,
    corrected: Mapping[date, Sequence[Corrected]],
) -> list[_Part]:
    title = config.title
    base_url = normalize_base_url(config.base_url)
    newest_first = sorted((clean_edition(e) for e in editions), key=lambda e: e.day, reverse=True)
    days = [e.day for e in newest_first]
    if len(set(days)) != len(days):
        duplicated = sorted({d for d in days if days.count(d) > 1})
        raise ValueError(f"more than one edition for {', '.join(map(str, duplicated))}")
    categories = sorted({s.category for e in newest_first for s in e.sections})

    def front() -> Iterator[tuple[str, bytes]]:
        yield STYLESHEET, stylesheet().encode("utf-8")
        yield INDEX, _page("archive/index.html", INDEX, title, base_url,
                           title=title, editions=newest_first, months=_months(newest_first),
                           categories=categories, has_latest=bool(newest_first))  # fmt: skip
        if newest_first:
            previous = newest_first[1].day if len(newest_first) > 1 else None
            yield LATEST, _edition_page(newest_first[0], LATEST, previous, title, base_url, lead)

    def search() -> Iterator[tuple[str, bytes]]:
        yield SEARCH, _page("archive/search.html", SEARCH, title, base_url,
                            title="Search", csp=SEARCH_CSP,
                            has_latest=bool(newest_first))  # fmt: skip
        yield SEARCH_SCRIPT, search_script().encode("utf-8")
        yield SEARCH_INDEX, render_search_index(newest_first)

    def feeds() -> Iterator[tuple[str, bytes]]:
        feed = render_edition_feed(
            newest_first, title=title, base_url=base_url, now=now, corrected=corrected
        )
        yield FEED, feed.encode("utf-8")
        for category in categories:
            feed = render_category_feed(
                category, newest_first, title=title, base_url=base_url, now=now
            )
            yield category_feed_path(category), feed.encode("utf-8")

    parts = [_Part(None, None, (), front), _Part(None, None, (), search)]
    for i, edition in enumerate(newest_first):
        previous = newest_first[i + 1].day if i + 1 < len(newest_first) else None
        notes = tuple(corrected.get(edition.day, ()))
        key = _fingerprint(edition, previous, title, base_url, lead, notes)
        parts.append(
            _Part(
                edition.day,
                key,
                tuple(dict.fromkeys(_edition_paths(edition))),
                _edition_renderer(edition, previous, title, base_url, lead, notes),
            )
        )
    parts.append(_Part(None, None, (), feeds))
    return parts


def _edition_paths(edition: Edition) -> Iterator[str]:
    yield edition_path(edition.day)
    for section in edition.sections:
        yield category_path(edition.day, section.category)
        for story in section.stories:
            yield story_path(edition.day, story.id)


def _edition_renderer(
    edition: Edition,
    previous: date | None,
    title: str,
    base_url: str,
    lead: int,
    corrections: Sequence[Corrected] = (),
) -> Callable[[], Iterator[tuple[str, bytes]]]:
    notes: dict[int, tuple[Corrected, ...]] = {}
    for note in corrections:
        notes[note.story_id] = (*notes.get(note.story_id, ()), note)

    def pages() -> Iterator[tuple[str, bytes]]:
        day, tz = edition.day, edition.timezone
        page = edition_path(day)
        yield page, _edition_page(edition, page, previous, title, base_url, lead)
        seen = {page}  # a story listed twice (or a repeated category) gets one page, the first
        for section in edition.sections:
            page = category_path(day, section.category)
            if page not in seen:
                seen.add(page)
                yield page, _page("archive/category.html", page, title, base_url,
                                  title=f"{category_name(section.category)}, {short_date(day)}",
                                  edition=edition, section=section, tz=tz)  # fmt: skip
            for story in section.stories:
                page = story_path(day, story.id)
                if page not in seen:
                    seen.add(page)
                    yield page, _page("archive/story.html", page, title, base_url,
                                      title=story.title, story=story, day=day, tz=tz,
                                      corrected=notes.get(story.id, ()))  # fmt: skip

    return pages


def _edition_page(
    edition: Edition, page: str, previous: date | None, title: str, base_url: str, lead: int
) -> bytes:
    html = render_edition_page(
        edition,
        title=title,
        base_url=base_url,
        page=page,
        previous=previous,
        has_latest=True,
        lead=lead,
    )
    return html.encode("utf-8")


def _page(template: str, page: str, archive_title: str, base_url: str, **context: object) -> bytes:
    title = context.pop("title")
    html = render(
        template,
        title=title if title == archive_title else f"{title} · {archive_title}",
        archive_title=archive_title,
        csp=context.pop("csp", PAGE_CSP),  # only search.html has its own policy
        css=None,
        links=Links(page, base_url),
        has_latest=context.pop("has_latest", True),  # only an empty archive has no latest.html
        **context,
    )
    return html.encode("utf-8")


def _fingerprint(
    edition: Edition,
    previous: date | None,
    title: str,
    base_url: str,
    lead: int,
    corrected: Sequence[Corrected] = (),
) -> str:
    """Everything an edition's own pages depend on: change any of it (a correction made of
    it later included) and they are rendered."""
    data = repr((_renderer_fingerprint(), title, base_url, previous, lead, edition, corrected))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


@cache
def _renderer_fingerprint() -> str:
    """A hash of the templates and of this package's code: an upgrade re-renders every page."""
    h = hashlib.sha256()
    templates = resources.files("digest.templates") / "archive"
    sources: Iterable[tuple[str, bytes]] = [
        *((f"t/{t.name}", t.read_bytes()) for t in templates.iterdir() if t.is_file()),
        *((f"p/{p.name}", p.read_bytes()) for p in Path(__file__).parent.glob("*.py")),
    ]
    for name, data in sorted(sources):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class _Month:
    label: str
    editions: tuple[Edition, ...]


def _months(newest_first: Sequence[Edition]) -> list[_Month]:
    return [
        _Month(f"{_MONTHS[month - 1]} {year}", tuple(group))
        for (year, month), group in groupby(newest_first, key=lambda e: (e.day.year, e.day.month))
    ]


# -- bookkeeping ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Manifest:
    pages: set[str] = field(default_factory=set)
    editions: dict[date, str | None] = field(default_factory=dict)

    @classmethod
    def read(cls, out_dir: Path) -> _Manifest:
        try:
            data = json.loads((out_dir / MANIFEST).read_text("utf-8"))
            pages = {p for p in data["pages"] if isinstance(p, str)}
            if data.get("version") != _MANIFEST_VERSION:
                return cls(pages)
            editions: dict[date, str | None] = {
                date.fromisoformat(d): str(k) for d, k in data["editions"].items()
            }
            return cls(pages, editions)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return cls()  # no manifest (or a damaged one): every page is rendered and compared

    def write(self, out_dir: Path) -> None:
        data = {
            "version": _MANIFEST_VERSION,
            "editions": {d.isoformat(): k for d, k in sorted(self.editions.items())},
            "pages": sorted(self.pages),
        }
        write_atomic(out_dir / MANIFEST, (json.dumps(data, indent=0) + "\n").encode("utf-8"))


def _prune(out_dir: Path, stale: list[str], touched_dirs: set[Path]) -> list[str]:
    removed = []
    root = out_dir.resolve()
    for path in stale:
        target = out_dir / path
        # The manifest is ours, but it is a file on disk: never follow it outside the archive.
        if root not in target.resolve().parents:
            continue
        target.unlink(missing_ok=True)
        removed.append(path)
        touched_dirs.add(target.parent)
        parent = target.parent
        while parent != out_dir and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
            touched_dirs.add(parent)
    return removed

"""Feeds management (`digest feeds add|list|remove|import|export`), and the feeds `collect` reads.

A deployment's feeds are its config file's (`[[sources.feeds]]`) and those subscribed with these
commands, kept in the database (`digest.store.subscribed_feeds`). Both are collected alike, with
the same per-feed state and back-off (`digest.jobs.collect`, which also reads which feeds a
category has). One feed is one canonical URL: a feed in either place is not added again, and
when both have it the config file's entry is the one used.
The config file is the operator's: nothing here writes it, so its feeds are removed there.

Which category a feed goes in is decided by pure functions (`feed_category`, `plan_import`);
`add_feed` fetches (the page or feed it is given, through the guarded client), `import_opml`
never touches the network: a feed it imports is first fetched by the next collection.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from digest.app import App
from digest.config import Config
from digest.errors import (
    DigestError,
    DuplicateFeedError,
    InvalidURLError,
    NotSubscribedError,
    OpmlError,
    UnknownCategoryError,
)
from digest.fetch.guard import check_url
from digest.jobs.collect import feed_key as _key
from digest.models import FeedState, ListedFeed, SubscribedFeed
from digest.runtime.progress import NO_PROGRESS, Progress
from digest.runtime.threads import off_loop
from digest.sources.discover import find_feed
from digest.sources.opml import MAX_OPML_BYTES, OpmlDocument, OpmlFeed, parse_opml, render_opml
from digest.store.urls import canonical_url

EXPORT_TITLE = "digest feeds"
# Outline types that are feeds; no type at all counts too. Others (FreshRSS's "HTML+XPath",
# "JSON+DotNotation": pages it scrapes itself) are skipped, they are not feeds.
FEED_KINDS = frozenset(("rss", "atom", "rdf", "rss1", "rss2", "feed"))


@dataclass(frozen=True, slots=True)
class AddedFeed:
    """What `digest feeds add` subscribed to: the feed, its own title, the page it was on."""

    feed: SubscribedFeed
    title: str  # the feed's own title ("" when it has none)
    entries: int  # entries it holds now
    page_url: str | None  # the page that advertised it; None when the URL given was the feed


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What one OPML import did. Nothing is imported when the file cannot be read."""

    source: str
    imported: tuple[SubscribedFeed, ...] = ()
    duplicates: tuple[str, ...] = ()  # in the config, the database or earlier in the file
    skipped: tuple[tuple[str, str], ...] = ()  # (URL as written, why)
    # Folders that name no configured category, with how many feeds each held (all skipped).
    unplaced: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Exported:
    data: bytes  # the OPML document
    feeds: int
    categories: int
    path: Path | None  # where it was written; None: the caller prints it


# --- decisions ---------------------------------------------------------------------------------


def feed_category(categories: Sequence[str], names: Iterable[str]) -> str | None:
    """The first of `names` that is one of the configured `categories` (case and runs of
    spaces ignored), or None."""
    known = set(categories)
    for name in names:
        key = " ".join(name.split()).lower()
        if key in known:
            return key
    return None


def outline_category(categories: Sequence[str], feed: OpmlFeed) -> str | None:
    """Where an OPML feed goes: its nearest folder that names a configured category, else its
    OPML 2.0 `category` attribute's most specific such segment."""
    return feed_category(categories, reversed(feed.folders)) or feed_category(
        categories, reversed(feed.categories)
    )


def plan_import(
    doc: OpmlDocument,
    *,
    categories: Sequence[str],
    existing: set[str],
    fallback: str | None,
    now: datetime,
    source: str = "OPML",
) -> ImportReport:
    """What importing `doc` would do, given the canonical URLs `existing` already (config and
    database): every feed outline is imported, a duplicate, or skipped with the reason.

    A feed whose folders name no configured category goes in `fallback` (`--category`), or is
    skipped and its folder counted in `unplaced` when there is none.
    """
    seen = set(existing)
    feeds: list[SubscribedFeed] = []
    duplicates: list[str] = []
    skipped: list[tuple[str, str]] = []
    unplaced: Counter[str] = Counter()
    for outline in doc.feeds:
        try:
            url = check_url(outline.url)
            key = canonical_url(url)
        except InvalidURLError as err:
            skipped.append((outline.url, str(err)))
            continue
        if key in seen:
            duplicates.append(outline.url)
            continue
        if outline.kind and outline.kind.lower() not in FEED_KINDS:
            skipped.append((outline.url, f"type {outline.kind!r} is not an RSS or Atom feed"))
            continue
        category = outline_category(categories, outline) or fallback
        if category is None:
            folder = outline.folders[-1] if outline.folders else ""
            unplaced[folder] += 1
            why = f"folder {folder!r} is no configured category" if folder else "in no folder"
            skipped.append((outline.url, why))
            continue
        seen.add(key)
        feeds.append(
            SubscribedFeed(
                url=url,
                category=category,
                name=outline.title or None,
                origin="opml",
                added_at=now,
                site_url=_http_url(outline.site_url),
            )
        )
    return ImportReport(
        source=source,
        imported=tuple(feeds),
        duplicates=tuple(duplicates),
        skipped=tuple(skipped),
        unplaced=dict(unplaced),
    )


def listing(
    config: Config, subscribed: Iterable[SubscribedFeed], states: Iterable[FeedState]
) -> list[ListedFeed]:
    """Every feed, the config file's first, each with its saved state when it was fetched."""
    by_url = {s.url: s for s in states}
    found = [
        ListedFeed(
            url=f.url,
            category=f.category.strip().lower(),
            name=f.name,
            source="config",
            state=by_url.get(f.url),
        )
        for f in config.sources.feeds
    ]
    found += [
        ListedFeed(
            url=f.url,
            category=f.category,
            name=f.name,
            source=f.origin,
            added_at=f.added_at,
            site_url=f.site_url,
            state=by_url.get(f.url),
        )
        for f in subscribed
    ]
    return found


# --- commands ----------------------------------------------------------------------------------


async def add_feed(
    app: App, url: str, *, category: str | None = None, name: str | None = None
) -> AddedFeed:
    """Subscribe to the feed at `url`, or to the first readable feed the page at `url`
    advertises. Without `category`, the feed's own category when it names a configured one;
    otherwise UnknownCategoryError asks for one."""
    config = app.config
    chosen = config.check_category(category) if category else None
    url = check_url(url)
    store = await app.face()
    await _refuse_twins(app, url)
    found = await find_feed(
        app.http, url, timeout=config.sources.feed_timeout, max_bytes=config.fetch.max_feed_bytes
    )
    if found.url != url:
        await _refuse_twins(app, found.url)
    chosen = chosen or feed_category(config.sources.categories, found.feed.categories)
    if chosen is None:
        own = ", ".join(repr(c) for c in found.feed.categories[:5])
        raise UnknownCategoryError(
            f"which category is {found.url} in? "
            + (f"it names {own}, none of them configured" if own else "it names none")
            + f": give --category, one of {', '.join(config.sources.categories)}"
        )
    feed = SubscribedFeed(
        url=found.url,
        category=chosen,
        name=(name or "").strip() or None,
        origin="cli",
        added_at=datetime.now(UTC),
        site_url=found.page_url or found.feed.site_url,
    )
    if not await store.add_subscribed_feeds([feed]):
        raise DuplicateFeedError(f"{found.url} is subscribed already")
    return AddedFeed(feed, found.feed.title, len(found.feed.headlines), found.page_url)


async def list_feeds(app: App) -> list[ListedFeed]:
    """Every feed, from the config file and the database, with its health."""
    store = await app.face(create=False)
    subscribed = await store.subscribed_feeds()
    states = await store.feed_states()
    return listing(app.config, subscribed, states)


async def remove_feed(app: App, url: str) -> SubscribedFeed:
    """Unsubscribe from a database feed and forget its fetch state; a config file's feed is
    refused with where to remove it."""
    key = canonical_url(url)
    in_config = key in {_key(f.url) for f in app.config.sources.feeds}
    store = await app.face(create=False)
    removed = await store.remove_subscribed_feed(url, forget_state=not in_config)
    if removed is not None:
        return removed
    if in_config:
        where = app.config.path or "the config file"
        raise NotSubscribedError(
            f"{url.strip()} is a feed of the config file: remove it from [[sources.feeds]] "
            f"in {where}"
        )
    raise NotSubscribedError(f"no feed {url.strip()} in the database (see digest feeds list)")


async def import_opml(
    app: App, path: Path, *, category: str | None = None, progress: Progress = NO_PROGRESS
) -> ImportReport:
    """Subscribe to the feeds of an OPML file in one transaction; nothing is fetched. A feed goes
    in the configured category its folder names, else in `category`, else it is skipped."""
    fallback = app.config.check_category(category) if category else None
    progress.step(f"reading {path.name}")
    doc = await off_loop(_read_opml, path)
    if not doc.feeds:
        raise OpmlError(f"{path} holds no feeds (no <outline> with an xmlUrl)")
    progress.step("looking for the feeds already subscribed", len(doc.feeds))
    store = await app.face()
    existing = {_key(f.url) for f in app.config.sources.feeds}
    urls = [u for f in doc.feeds if (u := _valid(f.url))]
    existing |= await store.subscribed_canonicals(urls)
    plan = plan_import(
        doc,
        categories=app.config.sources.categories,
        existing=existing,
        fallback=fallback,
        now=datetime.now(UTC),
        source=str(path),
    )
    progress.advance(len(doc.feeds))
    progress.step("subscribing", len(plan.imported))
    added = await store.add_subscribed_feeds(plan.imported)
    progress.advance(len(plan.imported))
    if len(added) == len(plan.imported):
        return plan
    # Another process subscribed to some of them in between: those are duplicates now.
    kept = {id(f) for f in added}
    raced = tuple(f.url for f in plan.imported if id(f) not in kept)
    return ImportReport(
        source=plan.source,
        imported=tuple(added),
        duplicates=plan.duplicates + raced,
        skipped=plan.skipped,
        unplaced=plan.unplaced,
    )


async def export_opml(app: App, path: Path | None = None) -> Exported:
    """Every feed (config file and database) as OPML 2.0, one folder per category in the
    configured order; written to `path` in one step, or returned for printing."""
    from digest.render.files import write_atomic  # not at the top: it loads the renderer

    feeds = await list_feeds(app)
    seen: set[str] = set()
    sections: dict[str, list[OpmlFeed]] = {c: [] for c in app.config.sources.categories}
    for f in feeds:
        if (key := _key(f.url)) in seen:
            continue
        seen.add(key)
        entry = OpmlFeed(url=f.url, title=f.title or "", site_url=f.site_url)
        sections.setdefault(f.category, []).append(entry)
    non_empty = [(c, fs) for c, fs in sections.items() if fs]
    data = render_opml(non_empty, title=EXPORT_TITLE, created=datetime.now(UTC))
    if path is not None:
        try:
            await off_loop(write_atomic, path, data)
        except OSError as err:
            raise DigestError(f"cannot write {path}: {err.strerror or err}") from None
    return Exported(data, len(seen), len(non_empty), path)


# --- helpers -----------------------------------------------------------------------------------


def _read_opml(path: Path) -> OpmlDocument:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_OPML_BYTES + 1)
    except OSError as err:
        raise DigestError(f"cannot read {path}: {err.strerror or err}") from None
    return parse_opml(data, source=str(path))


async def _refuse_twins(app: App, url: str) -> None:
    key = canonical_url(url)
    if key in {_key(f.url) for f in app.config.sources.feeds}:
        raise DuplicateFeedError(f"{url.strip()} is a feed of the config file already")
    store = await app.face()
    if await store.subscribed_feed(url) is not None:
        raise DuplicateFeedError(f"{url.strip()} is subscribed already (see digest feeds list)")


def _valid(url: str) -> str | None:
    try:
        return check_url(url)
    except InvalidURLError:
        return None


def _http_url(url: str | None) -> str | None:
    return url if url and _valid(url) else None

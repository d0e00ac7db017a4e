"""Atom feeds of the archive: one of editions (feed.xml) and one per category (feeds/<c>.xml).

Entry ids are `urn:uuid:` names derived from the archive's title and the page's path, so they do
not change when a base URL is configured later. With a base URL every link is absolute; without
one, links are relative to the feed's own location (RFC 4287 allows it, and most readers resolve
them against the feed URL), and the feed says so in a comment.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from digest.models import Edition, EditionSection
from digest.render.corrections import Corrected
from digest.render.layout import (
    FEED,
    INDEX,
    Links,
    category_feed_path,
    category_path,
    edition_path,
)
from digest.render.templating import category_name, long_date, render, rfc3339

__all__ = ["FEED_ENTRIES", "render_category_feed", "render_edition_feed"]

FEED_ENTRIES = 20  # the newest editions a feed carries (a daily feed: about three weeks)


@dataclass(frozen=True, slots=True)
class _Entry:
    id: str
    title: str
    updated: str
    href: str
    summary: str
    html: str  # escaped once more by the template: <content type="html">


@dataclass(frozen=True, slots=True)
class _Feed:
    id: str
    title: str
    updated: str
    self_href: str
    home_href: str
    entries: tuple[_Entry, ...]


def render_edition_feed(
    editions: Sequence[Edition],
    *,
    title: str,
    base_url: str,
    now: datetime,
    corrected: Mapping[date, Sequence[Corrected]] | None = None,
) -> str:
    """The feed of editions; `editions` are clean (see `clean_edition`) and newest first. An
    edition a later one corrected has its entry updated (when the correction was made) and
    the correction added to its content; the edition itself is unchanged."""
    links = _links(FEED, base_url)
    entries = [
        _entry(
            title,
            edition_path(e.day),
            long_date(e.day),
            max([e.generated_at, *(n.at for n in (corrected or {}).get(e.day, ()))]),
            e.day,
            e.sections,
            links,
            tuple((corrected or {}).get(e.day, ())),
        )
        for e in editions[:FEED_ENTRIES]
    ]
    return _render(title, FEED, title, entries, links, base_url, now)


def render_category_feed(
    category: str, editions: Sequence[Edition], *, title: str, base_url: str, now: datetime
) -> str:
    """The feed of one category: an entry per edition that has the category."""
    path = category_feed_path(category)
    links = _links(path, base_url)
    entries = []
    for e in editions:
        section = next((s for s in e.sections if s.category == category), None)
        if section is None:
            continue
        entries.append(
            _entry(
                title,
                category_path(e.day, category),
                f"{category_name(category)}, {long_date(e.day)}",
                e.generated_at,
                e.day,
                (section,),
                links,
            )
        )
        if len(entries) == FEED_ENTRIES:
            break
    feed_title = f"{title}: {category_name(category)}"
    return _render(title, path, feed_title, entries, links, base_url, now)


def _links(path: str, base_url: str) -> Links:
    return Links(path, base_url, absolute=bool(base_url))


def _id(archive_title: str, path: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"digest-archive:{archive_title}/{path}").urn


def _entry(
    archive_title: str,
    path: str,
    entry_title: str,
    updated: datetime,
    day: date,
    sections: Sequence[EditionSection],
    links: Links,
    corrected: Sequence[Corrected] = (),
) -> _Entry:
    titles = [s.title for section in sections for s in section.stories]
    count = f"{len(titles)} {'story' if len(titles) == 1 else 'stories'}"
    html = render(
        "archive/_feed_entry.html",
        sections=sections,
        day=day,
        links=links,
        corrected=corrected,
    )
    return _Entry(
        id=_id(archive_title, path),
        title=entry_title,
        updated=rfc3339(updated),
        href=links(path) or path,
        summary=f"{count}: {' · '.join(titles)}" if titles else count,
        html=html.strip(),
    )


def _render(
    archive_title: str,
    path: str,
    feed_title: str,
    entries: list[_Entry],
    links: Links,
    base_url: str,
    now: datetime,
) -> str:
    updated = max((e.updated for e in entries), default=rfc3339(now))
    feed = _Feed(
        id=_id(archive_title, path),
        title=feed_title,
        updated=updated,
        self_href=links(path) or path,
        home_href=links(INDEX) or INDEX,
        entries=tuple(entries),
    )
    return render(
        "archive/feed.xml",
        feed=feed,
        archive_title=archive_title,
        absolute=bool(base_url),
    )

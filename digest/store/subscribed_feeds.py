"""Subscribed feeds: those `digest feeds add` and `import` keep in the database, beside the
config file's. Each is keyed by its canonical URL, so the same feed is never kept twice however
its URL was decorated; what to add, and in which category, is decided in
`digest.commands.feeds_manage`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, select

from digest.models import FeedOrigin, SubscribedFeed
from digest.store.base import StoreBase, chunks, insert, require_aware
from digest.store.schema import feeds, subscribed_feeds
from digest.store.urls import canonical_url

_t = subscribed_feeds


class SubscribedFeedsMixin(StoreBase):
    """The feeds subscribed from the command line or an OPML file."""

    def subscribed_feeds(self, category: str | None = None) -> list[SubscribedFeed]:
        """Every subscribed feed (of one category), by category and in the order added."""
        query = select(_t).order_by(_t.c.category, _t.c.id)
        if category is not None:
            query = query.where(_t.c.category == category)
        with self._read() as conn:
            return [_feed(row) for row in conn.execute(query).mappings()]

    def subscribed_feed(self, url: str) -> SubscribedFeed | None:
        """The subscribed feed at `url` (compared canonically), or None."""
        query = select(_t).where(_t.c.canonical == canonical_url(url))
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return _feed(row) if row is not None else None

    def subscribed_canonicals(self, urls: Iterable[str]) -> set[str]:
        """The canonical URLs among `urls` that are subscribed already."""
        keys = sorted({canonical_url(u) for u in urls})
        found: set[str] = set()
        with self._read() as conn:
            for part in chunks(keys):
                query = select(_t.c.canonical).where(_t.c.canonical.in_(part))
                found.update(conn.execute(query).scalars())
        return found

    def add_subscribed_feeds(self, new: Sequence[SubscribedFeed]) -> list[SubscribedFeed]:
        """Subscribe to every feed of `new` in one transaction (all or, on an error, none) and
        return those added: a feed whose canonical URL is subscribed already is left out."""
        for f in new:
            require_aware(f.added_at, "added_at")
        added: list[SubscribedFeed] = []
        with self._write() as conn:
            for f in new:
                values = {
                    "url": f.url,
                    "canonical": canonical_url(f.url),
                    "category": f.category,
                    "name": f.name,
                    "site_url": f.site_url,
                    "origin": f.origin,
                    "added_at": f.added_at,
                }
                stmt = insert(conn, _t).values(values).on_conflict_do_nothing()
                # RETURNING tells whether the row went in (psycopg's rowcount does not, here).
                if conn.execute(stmt.returning(_t.c.id)).first() is not None:
                    added.append(f)
        return added

    def remove_subscribed_feed(
        self, url: str, *, forget_state: bool = True
    ) -> SubscribedFeed | None:
        """Unsubscribe from the feed at `url` (compared canonically) and, with `forget_state`,
        drop what was saved about its fetches; the removed feed, or None if there was none."""
        key = canonical_url(url)
        with self._write() as conn:
            row = conn.execute(select(_t).where(_t.c.canonical == key)).mappings().first()
            if row is None:
                return None
            conn.execute(delete(_t).where(_t.c.id == row["id"]))
            if forget_state:
                conn.execute(delete(feeds).where(feeds.c.url == row["url"]))
        return _feed(row)


def _feed(row: Any) -> SubscribedFeed:
    origin: FeedOrigin = "opml" if row["origin"] == "opml" else "cli"
    return SubscribedFeed(
        url=row["url"],
        category=row["category"],
        name=row["name"],
        origin=origin,
        added_at=row["added_at"],
        site_url=row["site_url"],
    )

"""Feed state: the validators of the last fetch of each feed and its failures, for conditional
GETs and for backing off a failing feed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from sqlalchemy import select

from digest.models import FeedState
from digest.store.base import StoreBase, insert, require_aware
from digest.store.schema import feeds


class FeedsMixin(StoreBase):
    """What was saved about each feed."""

    def feed_state(self, url: str) -> FeedState | None:
        """What was saved about the feed at `url` (as configured), or None if never fetched."""
        return self.feed_states_of([url]).get(url)

    def feed_states_of(self, urls: Sequence[str]) -> dict[str, FeedState]:
        """What was saved about each of these feeds, by URL (one query: a source task reads
        its 20 feeds at once); a feed never fetched is missing."""
        if not urls:
            return {}
        with self._read() as conn:
            rows = conn.execute(select(feeds).where(feeds.c.url.in_(sorted(set(urls)))))
            return {row["url"]: FeedState(**row) for row in rows.mappings()}

    def save_feed_state(self, state: FeedState) -> None:
        """Insert or replace the saved state of one feed."""
        self.save_feed_states([state])

    def save_feed_states(self, states: Sequence[FeedState]) -> None:
        """Insert or replace the saved states of these feeds, in one transaction."""
        for state in states:
            for name in ("last_ok_at", "last_checked_at"):
                require_aware(getattr(state, name), name, optional=True)
        if not states:
            return
        # One row per feed (the last state given), in one order for every writer's locks.
        latest = {s.url: s for s in states}
        rows = [asdict(latest[url]) for url in sorted(latest)]
        with self._write() as conn:
            stmt = insert(conn, feeds)
            changes = {name: stmt.excluded[name] for name in rows[0] if name != "url"}
            conn.execute(stmt.on_conflict_do_update(index_elements=["url"], set_=changes), rows)

    def feed_states(self) -> list[FeedState]:
        """Every feed that was ever fetched, the failing ones first."""
        query = select(feeds).order_by(feeds.c.error_count.desc(), feeds.c.url)
        with self._read() as conn:
            rows = conn.execute(query).mappings()
            return [
                FeedState(**{k: row[k] for k in FeedState.__dataclass_fields__}) for row in rows
            ]

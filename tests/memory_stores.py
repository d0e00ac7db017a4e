"""Memory twins of the jobs' store ports (the Protocols declared beside each job), as the ledger
has `digest.deliver.sender.MemoryLedgerStore`: a job's decisions and its writes tested without a
database. Each keeps what it was given in plain fields and names every call it had in `calls`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from digest.models import FeedState, Item, SubscribedFeed
from digest.store.articles import UpsertResult
from digest.store.urls import canonical_url


@dataclass
class MemoryCollectStore:
    """A `digest.jobs.collect.CollectStore` in dicts."""

    feeds: list[SubscribedFeed] = field(default_factory=list)
    states: dict[str, FeedState] = field(default_factory=dict)  # by the feed's URL
    articles: dict[str, Item] = field(default_factory=dict)  # by canonical URL
    calls: list[str] = field(default_factory=list)

    async def subscribed_feeds(self, category: str | None = None) -> list[SubscribedFeed]:
        self.calls.append("subscribed_feeds")
        return [f for f in self.feeds if category is None or f.category == category]

    async def feed_states_of(self, urls: Sequence[str]) -> dict[str, FeedState]:
        self.calls.append("feed_states_of")
        return {u: self.states[u] for u in urls if u in self.states}

    async def save_feed_states(self, states: Sequence[FeedState]) -> None:
        self.calls.append("save_feed_states")
        self.states.update({s.url: s for s in states})

    async def upsert_items(self, items: Iterable[Item], *, seen_at: datetime) -> UpsertResult:
        self.calls.append("upsert_items")
        new = updated = 0
        for item in items:
            key = canonical_url(item.headline.url)
            if key in self.articles:
                updated += 1
            else:
                new += 1
            self.articles[key] = item
        return UpsertResult(new, updated)

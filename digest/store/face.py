"""The store's async face: what the service's coroutines await instead of calling the store.

`Store`'s methods are synchronous and short (`digest.store.base`); a coroutine must not block
the event loop on them, so it awaits them here: `await face.save_crawl(article_id, page)` runs
`Store.save_crawl` in a worker thread and gives back what it returns. The hop to the thread is
written here only (`StoreFace._hop`, and `StoreFace.open`, which opens the database); nothing
else in the service calls `asyncio.to_thread` for the store (`tests/test_structure.py`).

Every public method of `Store` has its twin here, with the same parameters, defaults and types,
so the type checker knows each awaited call; `tests/test_store_face.py` fails when the store
gains or changes a method the face does not (and prints the method to paste here). `call` runs
a function of the store in one hop, for work that reads and writes several times with
decisions between (`digest.jobs.story_memory.record_story`). `sync` is the store itself, for
code that runs in a thread already.

`App.face` opens it (`StoreFace.open`). Importing it imports the store's modules (SQLAlchemy),
so a module that only names the type imports it under TYPE_CHECKING.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from digest.store.memory import TIMELINE_LIMIT
from digest.store.memory_tables import STORY_EVENT_KINDS
from digest.store.translations import CHECKED_ARTICLES

if TYPE_CHECKING:
    from digest.memory.events import NewEvent
    from digest.models import (
        ArticleView,
        ClusterResult,
        Delivery,
        Edition,
        FeedState,
        Item,
        Page,
        Preferences,
        RunRecord,
        SearchHit,
        StoryEvent,
        StorySummary,
        StoryView,
        SubscribedFeed,
        Subscriber,
        Summary,
        Translation,
    )
    from digest.store.alert_admin import AlertRow
    from digest.store.articles import UpsertResult
    from digest.store.follow_alerts import Alert
    from digest.store.follows import Follow
    from digest.store.store import Store
    from digest.stories.plan import Candidate, StoryPlan

P = ParamSpec("P")
R = TypeVar("R")


class StoreFace:
    """`Store`'s methods, awaited: each runs the store's method of the same name in a thread."""

    def __init__(self, store: Store) -> None:
        self.sync = store

    @classmethod
    async def open(cls, url: str, *, create: bool = True) -> StoreFace:
        """The face of `open_store(url, create=create)`, opened (and upgraded) in a thread."""
        from digest.store.store import open_store

        return cls(await asyncio.to_thread(open_store, url, create=create))

    async def _hop(self, method: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """The one hop to a worker thread: a store call must not block the event loop."""
        return await asyncio.to_thread(method, *args, **kwargs)

    async def call(
        self, work: Callable[Concatenate[Store, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """`work(store, *args, **kwargs)` in one hop: several store calls and what is decided
        between them, where one hop each would cost more than it frees."""
        return await self._hop(work, self.sync, *args, **kwargs)

    # digest.store.articles.ArticlesMixin

    async def upsert_items(self, items: Iterable[Item], *, seen_at: datetime) -> UpsertResult:
        return await self._hop(self.sync.upsert_items, items, seen_at=seen_at)

    async def headlines(self, category: str, *, since: datetime, limit: int) -> list[Item]:
        return await self._hop(self.sync.headlines, category, since=since, limit=limit)

    async def has_collected(self, category: str, since: datetime) -> bool:
        return await self._hop(self.sync.has_collected, category, since)

    async def articles_seen(self, start: datetime, end: datetime) -> int:
        return await self._hop(self.sync.articles_seen, start, end)

    async def article_by_url(self, url: str) -> ArticleView | None:
        return await self._hop(self.sync.article_by_url, url)

    async def article_text(self, article_id: int) -> str | None:
        return await self._hop(self.sync.article_text, article_id)

    async def save_crawl(self, article_id: int, page: Page, *, at: datetime | None = None) -> bool:
        return await self._hop(self.sync.save_crawl, article_id, page, at=at)

    async def prune_texts(self, before: datetime) -> int:
        return await self._hop(self.sync.prune_texts, before)

    async def article_counts(self) -> dict[str, int]:
        return await self._hop(self.sync.article_counts)

    # digest.store.stories.StoriesMixin

    async def cluster_candidates(self, category: str, *, since: datetime) -> list[Candidate]:
        return await self._hop(self.sync.cluster_candidates, category, since=since)

    async def save_stories(
        self, category: str, plans: Sequence[StoryPlan], *, now: datetime, candidates: int
    ) -> ClusterResult:
        return await self._hop(
            self.sync.save_stories, category, plans, now=now, candidates=candidates
        )

    async def stories_since(
        self, category: str | None, *, since: datetime, until: datetime | None = None
    ) -> list[StoryView]:
        return await self._hop(self.sync.stories_since, category, since=since, until=until)

    async def stories_by_id(self, story_ids: Sequence[int]) -> list[StoryView]:
        return await self._hop(self.sync.stories_by_id, story_ids)

    # digest.store.summaries.SummariesMixin

    async def find_summary(self, content_hash: str, summarizer: str) -> Summary | None:
        return await self._hop(self.sync.find_summary, content_hash, summarizer)

    async def save_summary(
        self, article_id: int, content_hash: str, summary: Summary, *, at: datetime | None = None
    ) -> bool:
        return await self._hop(self.sync.save_summary, article_id, content_hash, summary, at=at)

    async def tokens_used(self, since: datetime) -> int:
        return await self._hop(self.sync.tokens_used, since)

    # digest.store.story_summaries.StorySummariesMixin

    async def find_story_summary(
        self, story_id: int, sources_hash: str, summarizer: str
    ) -> StorySummary | None:
        return await self._hop(self.sync.find_story_summary, story_id, sources_hash, summarizer)

    async def save_story_summary(
        self, story_id: int, sources_hash: str, summary: StorySummary, *, at: datetime | None = None
    ) -> bool:
        return await self._hop(self.sync.save_story_summary, story_id, sources_hash, summary, at=at)

    async def story_tokens_used(self, since: datetime) -> int:
        return await self._hop(self.sync.story_tokens_used, since)

    async def story_summary_checks(self, since: datetime) -> dict[str, int]:
        return await self._hop(self.sync.story_summary_checks, since)

    # digest.store.vectors.VectorsMixin

    async def article_vectors(
        self, article_ids: Iterable[int], *, model: str
    ) -> dict[int, tuple[float, ...]]:
        return await self._hop(self.sync.article_vectors, article_ids, model=model)

    async def save_article_vectors(
        self, model: str, vectors: Mapping[int, Sequence[float]], *, at: datetime | None = None
    ) -> int:
        return await self._hop(self.sync.save_article_vectors, model, vectors, at=at)

    async def vector_count(self, *, model: str | None = None) -> int:
        return await self._hop(self.sync.vector_count, model=model)

    # digest.store.runs.RunsMixin

    async def start_run(self, kind: str, key: str | None = None) -> int:
        return await self._hop(self.sync.start_run, kind, key)

    async def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        counts: Mapping[Any, Any],
        errors: Iterable[Mapping[Any, Any]],
    ) -> None:
        return await self._hop(
            self.sync.finish_run, run_id, status=status, counts=counts, errors=errors
        )

    async def recent_runs(self, limit: int, kind: str | None = None) -> list[RunRecord]:
        return await self._hop(self.sync.recent_runs, limit, kind)

    async def recover_interrupted(self, started_before: datetime) -> list[str]:
        return await self._hop(self.sync.recover_interrupted, started_before)

    # digest.store.feed_states.FeedsMixin

    async def feed_state(self, url: str) -> FeedState | None:
        return await self._hop(self.sync.feed_state, url)

    async def feed_states_of(self, urls: Sequence[str]) -> dict[str, FeedState]:
        return await self._hop(self.sync.feed_states_of, urls)

    async def save_feed_state(self, state: FeedState) -> None:
        return await self._hop(self.sync.save_feed_state, state)

    async def save_feed_states(self, states: Sequence[FeedState]) -> None:
        return await self._hop(self.sync.save_feed_states, states)

    async def feed_states(self) -> list[FeedState]:
        return await self._hop(self.sync.feed_states)

    # digest.store.subscribers.SubscribersMixin

    async def add_subscriber(
        self, email: str, *, categories: Sequence[str] | None, timezone: str
    ) -> Subscriber:
        return await self._hop(
            self.sync.add_subscriber, email, categories=categories, timezone=timezone
        )

    async def save_preferences(self, email: str, prefs: Preferences) -> Subscriber | None:
        return await self._hop(self.sync.save_preferences, email, prefs)

    async def remove_subscriber(self, email: str) -> bool:
        return await self._hop(self.sync.remove_subscriber, email)

    async def subscribers(self, emails: Collection[str] | None = None) -> list[Subscriber]:
        return await self._hop(self.sync.subscribers, emails)

    async def subscriber_emails(self) -> list[str]:
        return await self._hop(self.sync.subscriber_emails)

    async def subscriber(self, email: str) -> Subscriber | None:
        return await self._hop(self.sync.subscriber, email)

    async def subscriber_by_token(self, token: str) -> Subscriber | None:
        return await self._hop(self.sync.subscriber_by_token, token)

    # digest.store.editions.EditionsMixin

    async def save_edition(
        self, edition: Edition, *, at: datetime | None = None
    ) -> tuple[bool, bool]:
        return await self._hop(self.sync.save_edition, edition, at=at)

    async def edition(self, day: date) -> Edition | None:
        return await self._hop(self.sync.edition, day)

    async def editions(self, limit: int | None = None) -> list[Edition]:
        return await self._hop(self.sync.editions, limit)

    async def edition_days(self) -> list[date]:
        return await self._hop(self.sync.edition_days)

    async def remove_edition(
        self, day: date, *, run_key: str | None, reason: str, at: datetime | None = None
    ) -> int | None:
        return await self._hop(self.sync.remove_edition, day, run_key=run_key, reason=reason, at=at)

    # digest.store.deliveries.LedgerMixin

    async def add_deliveries(self, rows: Sequence[Delivery]) -> int:
        return await self._hop(self.sync.add_deliveries, rows)

    async def load_deliveries(
        self, edition_day: date, recipients: Collection[str] | None = None
    ) -> list[Delivery]:
        return await self._hop(self.sync.load_deliveries, edition_day, recipients)

    async def received(
        self, days: Collection[date], recipients: Collection[str] | None = None
    ) -> dict[str, frozenset[date]]:
        return await self._hop(self.sync.received, days, recipients)

    async def claim_delivery(
        self, expected: Delivery, new: Delivery, *, after: Delivery | None = None
    ) -> bool:
        return await self._hop(self.sync.claim_delivery, expected, new, after=after)

    async def save_delivery(self, delivery: Delivery) -> None:
        return await self._hop(self.sync.save_delivery, delivery)

    async def deliveries(
        self,
        limit: int | None = 200,
        *,
        edition_day: date | None = None,
        states: Iterable[str] | None = None,
    ) -> list[Delivery]:
        return await self._hop(self.sync.deliveries, limit, edition_day=edition_day, states=states)

    async def ledger_counts(self, edition_day: date | None = None) -> dict[str, int]:
        return await self._hop(self.sync.ledger_counts, edition_day)

    # digest.store.search.SearchMixin

    async def search(
        self,
        text: str,
        *,
        category: str | None = None,
        since: datetime | None = None,
        limit: int = 10,
        any_word: bool = False,
    ) -> list[SearchHit]:
        return await self._hop(
            self.sync.search, text, category=category, since=since, limit=limit, any_word=any_word
        )

    # digest.store.health.HealthMixin

    async def database_size(self) -> int | None:
        return await self._hop(self.sync.database_size)

    async def daemon_lock_held(self) -> bool:
        return await self._hop(self.sync.daemon_lock_held)

    # digest.store.subscribed_feeds.SubscribedFeedsMixin

    async def subscribed_feeds(self, category: str | None = None) -> list[SubscribedFeed]:
        return await self._hop(self.sync.subscribed_feeds, category)

    async def subscribed_feed(self, url: str) -> SubscribedFeed | None:
        return await self._hop(self.sync.subscribed_feed, url)

    async def subscribed_canonicals(self, urls: Iterable[str]) -> set[str]:
        return await self._hop(self.sync.subscribed_canonicals, urls)

    async def add_subscribed_feeds(self, new: Sequence[SubscribedFeed]) -> list[SubscribedFeed]:
        return await self._hop(self.sync.add_subscribed_feeds, new)

    async def remove_subscribed_feed(
        self, url: str, *, forget_state: bool = True
    ) -> SubscribedFeed | None:
        return await self._hop(self.sync.remove_subscribed_feed, url, forget_state=forget_state)

    # digest.store.secrets.SecretsMixin

    async def secret(self, name: str) -> str:
        return await self._hop(self.sync.secret, name)

    # digest.store.translations.TranslationsMixin

    async def translation(
        self, source_hash: str, language: str, translator: str
    ) -> Translation | None:
        return await self._hop(self.sync.translation, source_hash, language, translator)

    async def save_translation(
        self, translation: Translation, *, at: datetime | None = None
    ) -> bool:
        return await self._hop(self.sync.save_translation, translation, at=at)

    async def translation_counts(self) -> dict[str, int]:
        return await self._hop(self.sync.translation_counts)

    async def translation_tokens(self, since: datetime) -> int:
        return await self._hop(self.sync.translation_tokens, since)

    async def story_texts(self, story_id: int, *, limit: int = CHECKED_ARTICLES) -> list[str]:
        return await self._hop(self.sync.story_texts, story_id, limit=limit)

    # digest.store.memory.MemoryMixin

    async def record_events(
        self, story_id: int, events: Sequence[NewEvent], *, at: datetime | None = None
    ) -> list[StoryEvent]:
        return await self._hop(self.sync.record_events, story_id, events, at=at)

    async def story_timeline(
        self, story_id: int, *, limit: int = TIMELINE_LIMIT
    ) -> list[StoryEvent]:
        return await self._hop(self.sync.story_timeline, story_id, limit=limit)

    async def timelines(
        self, story_ids: Iterable[int], *, limit: int = TIMELINE_LIMIT
    ) -> dict[int, list[StoryEvent]]:
        return await self._hop(self.sync.timelines, story_ids, limit=limit)

    async def latest_figures(self, story_id: int) -> dict[tuple[str, str], tuple[StoryEvent, dict]]:
        return await self._hop(self.sync.latest_figures, story_id)

    async def recorded_outlets(self, story_id: int) -> list[str]:
        return await self._hop(self.sync.recorded_outlets, story_id)

    async def events_after(
        self, story_id: int, after_id: int, kinds: Sequence[str] = STORY_EVENT_KINDS
    ) -> list[StoryEvent]:
        return await self._hop(self.sync.events_after, story_id, after_id, kinds)

    async def story_corrections(self, story_id: int) -> list[tuple[StoryEvent, dict]]:
        return await self._hop(self.sync.story_corrections, story_id)

    async def corrections_of_day(self, edition_day: date) -> list[tuple[StoryEvent, dict]]:
        return await self._hop(self.sync.corrections_of_day, edition_day)

    async def all_corrections(self) -> list[tuple[StoryEvent, dict]]:
        return await self._hop(self.sync.all_corrections)

    async def corrections_where(self, condition: Any) -> list[tuple[StoryEvent, dict]]:
        return await self._hop(self.sync.corrections_where, condition)

    async def sent_edition_days(self, before: date) -> list[date]:
        return await self._hop(self.sync.sent_edition_days, before)

    async def texts_read_before(self, article_ids: Iterable[int], before: datetime) -> set[int]:
        return await self._hop(self.sync.texts_read_before, article_ids, before)

    async def story_event_counts(self) -> dict[str, int]:
        return await self._hop(self.sync.story_event_counts)

    # digest.store.alert_admin.AlertAdminMixin

    async def alert_rows(self) -> list[AlertRow]:
        return await self._hop(self.sync.alert_rows)

    async def resend_alerts(self, now: datetime) -> list[AlertRow]:
        return await self._hop(self.sync.resend_alerts, now)

    async def abandon_alerts(self, now: datetime) -> list[AlertRow]:
        return await self._hop(self.sync.abandon_alerts, now)

    # digest.store.follow_alerts.AlertsMixin

    async def open_alerts(
        self,
        channels_of: Mapping[str, Sequence[str]],
        now: datetime,
        every: timedelta = timedelta(0),
    ) -> list[Alert]:
        return await self._hop(self.sync.open_alerts, channels_of, now, every)

    async def close_alerts(self) -> int:
        return await self._hop(self.sync.close_alerts)

    async def alert_counts(self) -> dict[str, int]:
        return await self._hop(self.sync.alert_counts)

    async def load_alert_rows(self, keys: Collection[tuple[int, int]], day: date) -> list[Delivery]:
        return await self._hop(self.sync.load_alert_rows, keys, day)

    async def claim_alert_row(
        self, expected: Delivery, new: Delivery, *, after: Delivery | None = None
    ) -> bool:
        return await self._hop(self.sync.claim_alert_row, expected, new, after=after)

    async def save_alert_row(self, row: Delivery) -> None:
        return await self._hop(self.sync.save_alert_row, row)

    # digest.store.follows.FollowsMixin

    async def story_title(self, story_id: int) -> str | None:
        return await self._hop(self.sync.story_title, story_id)

    async def follow(self, email: str, story_id: int, now: datetime) -> bool:
        return await self._hop(self.sync.follow, email, story_id, now)

    async def unfollow(self, email: str, story_id: int, now: datetime) -> bool:
        return await self._hop(self.sync.unfollow, email, story_id, now)

    async def follows_of(self, email: str) -> list[Follow]:
        return await self._hop(self.sync.follows_of, email)

    async def follow_of(self, email: str, story_id: int) -> Follow | None:
        return await self._hop(self.sync.follow_of, email, story_id)

    async def followers(self, story_id: int) -> list[Follow]:
        return await self._hop(self.sync.followers, story_id)

    async def figure_events(
        self, story_id: int, through: int
    ) -> list[tuple[StoryEvent, dict[str, Any]]]:
        return await self._hop(self.sync.figure_events, story_id, through)

    async def end_quiet_follows(self, now: datetime, days: int) -> int:
        return await self._hop(self.sync.end_quiet_follows, now, days)

    # digest.store.base.StoreBase

    async def close(self) -> None:
        return await self._hop(self.sync.close)

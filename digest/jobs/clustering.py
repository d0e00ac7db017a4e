"""The clustering step: the store's candidates through the pure clustering and ranking.

`cluster_category` reads a category's recent articles (with the rest of their stories), lets
`digest.stories.plan_stories` decide the stories, and hands the plan to the store to write; when
another process clustered the same articles in between, it reads again. With embeddings on,
`cluster_with_embeddings` first gives every candidate its vector: stored ones are read back, the
endpoint is asked only for the others (in batches, outside any transaction) and what it answers
is stored at once, so no article is embedded twice even when a later batch fails. When the
endpoint fails, that clustering uses words alone and says why. `top_stories` and `stories` are
the stored stories in the one order `digest.stories.best_first` decides; `top_stories` leaves
out minor stories and repeats of one above (`digest.edition.front_page.top_of`). `across_categories`
adds which of them tell one event under several categories (`digest.stories.across`); where
each is shown is the front page's (`digest.edition.front_page.placed`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from digest.config import StoriesConfig
from digest.edition.front_page import DayStories, by_category, day_stories, shown, top_of
from digest.errors import ClusterConflictError, EmbeddingError, StoreError
from digest.models import ClusterResult, StoryView
from digest.store import Store
from digest.stories import Candidate, plan_stories
from digest.stories.across import Event, Filed, same_events
from digest.stories.cluster import reach

ATTEMPTS = 3
# Why stories were told apart by their words alone when no endpoint is configured (a deepen's
# `similarity_reason`; `digest status` reads it back).
if TYPE_CHECKING:  # the client is the app's to make: its package imports the summarizers
    from digest.store.face import StoreFace
    from digest.stories.embeddings import Embedder, Vector

NO_EMBEDDINGS = "no [stories.embeddings]"


def cluster_category(
    store: Store,
    category: str,
    *,
    now: datetime,
    config: StoriesConfig,
    vectors: Mapping[int, Vector] | None = None,
) -> ClusterResult:
    """Put the category's articles of the last `window_hours` into stories and refresh those
    stories' titles, counts and scores (a story that gains an outlet is marked updated).
    `vectors`: the candidates' embeddings by article id, all of one model (None: words alone)."""
    window = timedelta(hours=config.window_hours)
    for _ in range(ATTEMPTS):
        candidates = store.cluster_candidates(category, since=now - reach(window))
        plans = plan_stories(
            candidates, now=now, window=window, similarity=config.similarity, vectors=vectors
        )
        try:
            result = store.save_stories(category, plans, now=now, candidates=len(candidates))
        except ClusterConflictError:
            continue
        return replace(result, similarity="embeddings" if vectors else "lexical")
    raise StoreError(f"clustering {category!r} kept conflicting with another process")


async def cluster_with_embeddings(
    store: StoreFace,
    category: str,
    *,
    now: datetime,
    config: StoriesConfig,
    embedder: Embedder,
) -> ClusterResult:
    """`cluster_category` with every candidate's vector (see the module docstring); on an
    endpoint failure, with words alone and the reason in `embedding_error`."""
    window = timedelta(hours=config.window_hours)
    since = now - reach(window)
    candidates = await store.cluster_candidates(category, since=since)
    found = await candidate_vectors(store, embedder, candidates)
    vectors = found.vectors if found.error is None else None
    result = await store.call(cluster_category, category, now=now, config=config, vectors=vectors)
    return replace(result, embedded=found.embedded, embedding_error=found.error)


@dataclass(frozen=True, slots=True)
class CandidateVectors:
    vectors: dict[int, Vector]  # by article id: the stored ones and those just made
    embedded: int  # asked of the endpoint (and stored)
    error: str | None = None  # the endpoint failed: this clustering uses words alone


async def candidate_vectors(
    store: StoreFace, embedder: Embedder, candidates: Sequence[Candidate]
) -> CandidateVectors:
    """Every candidate's vector in the embedder's space: stored ones, then the endpoint's for
    the others, a batch at a time, each batch stored as it comes. Stops at the first failure,
    or at vectors of another length than the stored ones (a different model under one name)."""
    ids = [c.id for c in candidates]
    known = await store.article_vectors(ids, model=embedder.space)
    missing = sorted((c for c in candidates if c.id not in known), key=lambda c: c.id)
    embedded = 0
    for start in range(0, len(missing), embedder.batch_size):
        batch = missing[start : start + embedder.batch_size]
        try:
            got = await embedder.embed([embedder.text_of(c.title, c.text) for c in batch])
        except EmbeddingError as err:
            return CandidateVectors(known, embedded, str(err))
        stored = {len(v) for v in known.values()}
        if stored and len(got[0]) not in stored:
            return CandidateVectors(
                known,
                embedded,
                f"embeddings endpoint {embedder.config.base_url}: vectors of {len(got[0])} "
                f"numbers, where the stored ones of {embedder.space!r} have {min(stored)}",
            )
        new = {c.id: v for c, v in zip(batch, got, strict=True)}
        await store.save_article_vectors(embedder.space, new)
        known.update(new)
        embedded += len(new)
    return CandidateVectors(known, embedded)


def top_stories(
    store: Store, category: str, *, since: datetime, limit: int, until: datetime | None = None
) -> list[StoryView]:
    """The category's best `limit` stories seen since `since` (and, with `until`, first seen
    before it: an edition of a past day holds no story that began after it), leaving out minor
    stories and those that repeat one above (`digest.stories.top_picks`): fewer when so."""
    return top_of(store.stories_since(category, since=since, until=until), limit)


def stories(
    store: Store, category: str | None, *, since: datetime, order: Sequence[str] = ()
) -> list[StoryView]:
    """Stories seen since `since`, of one category or (None) of all: by category (in `order`,
    the configured one), best first."""
    return by_category(store.stories_since(category, since=since), order)


def across_categories(
    store: Store,
    config: StoriesConfig,
    categories: Sequence[str],
    *,
    since: datetime,
    until: datetime | None = None,
    found: Sequence[StoryView] | None = None,
) -> DayStories:
    """The stories of `categories` seen since `since` (first seen before `until`), by
    category in their order, best first, and the events they tell across categories.
    `found`: those stories already read from the store (read here when None)."""
    if found is None:
        found = store.stories_since(None, since=since, until=until)
    ordered = day_stories(found, categories)
    events = day_events(store, ordered, config, categories)
    return DayStories(ordered, events)


def shown_stories(
    store: Store,
    config: StoriesConfig,
    categories: Sequence[str],
    *,
    since: datetime,
    limit: int,
    only: Sequence[str] | None = None,
) -> list[StoryView]:
    """The top `limit` stories of each of `only` (default: every one of `categories`) seen
    since `since`, as an edition shows them: a story whose event another category shows is
    left out, and the category's next story takes its place. What `deepen` reads and
    summarizes."""
    day = across_categories(store, config, categories, since=since)
    return shown(day, categories, top=limit, only=only)


def day_events(
    store: Store, found: Sequence[StoryView], config: StoriesConfig, categories: Sequence[str]
) -> list[Event]:
    """The events `found` tells under more than one of `categories` (others are left out),
    with the articles' stored vectors when `[stories.embeddings]` is on."""
    mine = [s for s in found if s.category in categories]
    vectors = stored_vectors(store, config, [a.id for s in mine for a in s.articles])
    return same_events(
        [Filed.of(s, vectors) for s in mine],
        similarity=config.similarity,
        window=timedelta(hours=config.window_hours),
        categories=categories,
    )


def stored_vectors(
    store: Store, config: StoriesConfig, article_ids: Sequence[int]
) -> dict[int, Vector] | None:
    """The articles' stored vectors in the configured model's space; None without
    `[stories.embeddings]`, or when they are of more than one length (words alone then)."""
    if config.embeddings is None:
        return None
    from digest.stories.embeddings import Embedder

    found = store.article_vectors(article_ids, model=Embedder.space_of(config.embeddings))
    return found if len({len(v) for v in found.values()}) <= 1 else None

"""The clustering step: the store's candidates through the pure clustering and ranking.

`cluster_category` reads a category's recent articles (with the rest of their stories), lets
`digest.stories.plan_stories` decide the stories, and hands the plan to the store to write; when
another process clustered the same articles in between, it reads again. With embeddings on,
`cluster_with_embeddings` first gives every candidate its vector: stored ones are read back, the
endpoint is asked only for the others (in batches, outside any transaction) and what it answers
is stored at once, so no article is embedded twice even when a later batch fails. When the
endpoint fails, that clustering uses words alone and says why. `top_stories` and `stories` are
the stored stories in the one order `digest.stories.best_first` decides; `top_stories` leaves
out minor stories and repeats of one above (`digest.stories.top_picks`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from digest.config import StoriesConfig
from digest.errors import ClusterConflictError, EmbeddingError, StoreError
from digest.models import ClusterResult, StoryView
from digest.store import Store
from digest.stories import Candidate, best_first, plan_stories, top_picks

ATTEMPTS = 3
# Why stories were told apart by their words alone when no endpoint is configured (a deepen's
# `similarity_reason`; `digest status` reads it back).
if TYPE_CHECKING:  # the client is the app's to make: its package imports the summarizers
    from digest.summarize.embeddings import Embedder, Vector

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
        candidates = store.cluster_candidates(category, since=now - window)
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
    store: Store, category: str, *, now: datetime, config: StoriesConfig, embedder: Embedder
) -> ClusterResult:
    """`cluster_category` with every candidate's vector (see the module docstring); on an
    endpoint failure, with words alone and the reason in `embedding_error`."""
    window = timedelta(hours=config.window_hours)
    candidates = await asyncio.to_thread(store.cluster_candidates, category, since=now - window)
    found = await candidate_vectors(store, embedder, candidates)
    vectors = found.vectors if found.error is None else None
    result = await asyncio.to_thread(
        cluster_category, store, category, now=now, config=config, vectors=vectors
    )
    return replace(result, embedded=found.embedded, embedding_error=found.error)


@dataclass(frozen=True, slots=True)
class CandidateVectors:
    vectors: dict[int, Vector]  # by article id: the stored ones and those just made
    embedded: int  # asked of the endpoint (and stored)
    error: str | None = None  # the endpoint failed: this clustering uses words alone


async def candidate_vectors(
    store: Store, embedder: Embedder, candidates: Sequence[Candidate]
) -> CandidateVectors:
    """Every candidate's vector in the embedder's space: stored ones, then the endpoint's for
    the others, a batch at a time, each batch stored as it comes. Stops at the first failure,
    or at vectors of another length than the stored ones (a different model under one name)."""
    ids = [c.id for c in candidates]
    known = await asyncio.to_thread(store.article_vectors, ids, model=embedder.space)
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
        await asyncio.to_thread(store.save_article_vectors, embedder.space, new)
        known.update(new)
        embedded += len(new)
    return CandidateVectors(known, embedded)


def top_stories(
    store: Store, category: str, *, since: datetime, limit: int, until: datetime | None = None
) -> list[StoryView]:
    """The category's best `limit` stories seen since `since` (and, with `until`, first seen
    before it: an edition of a past day holds no story that began after it), leaving out minor
    stories and those that repeat one above (`digest.stories.top_picks`): fewer when so."""
    ranked = best_first(store.stories_since(category, since=since, until=until))
    picks = top_picks(
        [s.score for s in ranked], [[a.title for a in s.articles] for s in ranked], limit=limit
    )
    return [ranked[i] for i in picks]


def stories(store: Store, category: str | None, *, since: datetime) -> list[StoryView]:
    """Stories seen since `since`, of one category or (None) of all: by category, best first."""
    found = store.stories_since(category, since=since)
    categories = sorted({s.category for s in found})
    return [s for c in categories for s in best_first(v for v in found if v.category == c)]

"""The clustering step: the store's candidates through the pure clustering and ranking.

`cluster_category` reads a category's recent articles (with the rest of their stories), lets
`digest.stories.plan_stories` decide the stories, and hands the plan to the store to write; when
another process clustered the same articles in between, it reads again. `top_stories` and
`stories` are the stored stories in the one order `digest.stories.best_first` decides.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from digest.config import StoriesConfig
from digest.errors import ClusterConflictError, StoreError
from digest.models import ClusterResult, StoryView
from digest.store import Store
from digest.stories import best_first, plan_stories

ATTEMPTS = 3


def cluster_category(
    store: Store, category: str, *, now: datetime, config: StoriesConfig
) -> ClusterResult:
    """Put the category's articles of the last `window_hours` into stories and refresh those
    stories' titles, counts and scores (a story that gains an outlet is marked updated)."""
    window = timedelta(hours=config.window_hours)
    for _ in range(ATTEMPTS):
        candidates = store.cluster_candidates(category, since=now - window)
        plans = plan_stories(candidates, now=now, window=window, similarity=config.similarity)
        try:
            return store.save_stories(category, plans, now=now, candidates=len(candidates))
        except ClusterConflictError:
            continue
    raise StoreError(f"clustering {category!r} kept conflicting with another process")


def top_stories(store: Store, category: str, *, since: datetime, limit: int) -> list[StoryView]:
    """The category's best `limit` stories seen since `since`."""
    return best_first(store.stories_since(category, since=since))[:limit]


def stories(store: Store, category: str | None, *, since: datetime) -> list[StoryView]:
    """Stories seen since `since`, of one category or (None) of all: by category, best first."""
    found = store.stories_since(category, since=since)
    categories = sorted({s.category for s in found})
    return [s for c in categories for s in best_first(v for v in found if v.category == c)]

"""What one clustering of a category changes: pure, from the articles the store read.

The store hands over `Candidate`s (a category's recent articles and every other article of their
stories), with their stored vectors when embeddings are on; `plan_stories` clusters them
(`cluster_reports`), and for every story involved decides its title, counts, score and whether it
counts as updated; the store writes that `StoryPlan` as it is. A story counts as updated when it
gains an outlet it did not have; it is renamed after its representative only when it gained
articles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from digest.stories.cluster import TEXT_WORDS, Report, cluster_reports
from digest.stories.rank import Coverage, StoryStats, outlet, score
from digest.stories.tokens import language


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One stored article as clustering and ranking need it."""

    id: int
    title: str
    text: str  # the lede, else the snippet
    source: str
    url: str
    origin: str
    published: datetime | None
    first_seen: datetime
    last_seen: datetime
    story_id: int | None  # the story an earlier clustering put it in

    def report(self, embedding: tuple[float, ...] | None = None) -> Report:
        return Report(
            id=self.id,
            title=self.title,
            text=self.text,
            first_seen=self.first_seen,
            published=self.published,
            outlet=outlet(self.source, self.url),
            story_id=self.story_id,
            embedding=embedding,
        )

    def coverage(self) -> Coverage:
        return Coverage(
            source=self.source,
            url=self.url,
            origin=self.origin,
            when=self.published or self.first_seen,
            seen=self.first_seen,
            language=language(f"{self.title}\n{' '.join(self.text.split()[:TEXT_WORDS])}") or "",
        )


@dataclass(frozen=True, slots=True)
class StoryPlan:
    """One story after a clustering: what the store writes for it."""

    story_id: int | None  # None: a new story
    title: str | None  # None: keep the stored title
    new_article_ids: tuple[int, ...]  # members that had no story before
    member_count: int  # members the story had before (the store checks it still has them)
    first_seen: datetime
    last_seen: datetime
    article_count: int
    outlet_count: int
    score: float
    updated: bool  # gained an outlet it did not have: `updated_at` becomes now

    @property
    def grown(self) -> bool:
        return self.story_id is not None and bool(self.new_article_ids)


def plan_stories(
    candidates: Sequence[Candidate],
    *,
    now: datetime,
    window: timedelta,
    similarity: float,
    vectors: Mapping[int, tuple[float, ...]] | None = None,
) -> list[StoryPlan]:
    """The stories of `candidates` after clustering them, existing ones first (by id).
    `vectors`: the articles' embeddings by id, all of one model (None: words alone)."""
    by_id = {c.id: c for c in candidates}
    known = vectors or {}
    clustering = cluster_reports(
        (c.report(known.get(c.id)) for c in candidates), window=window, similarity=similarity
    )
    plans = []
    for group in clustering.groups:
        members = [by_id[i] for i in group.article_ids]
        old = [m for m in members if m.story_id is not None]
        stats = StoryStats.of(group.story_id or 0, (m.coverage() for m in members), now=now)
        old_outlets = len({outlet(m.source, m.url) for m in old})
        plans.append(
            StoryPlan(
                story_id=group.story_id,
                title=by_id[group.representative_id].title if group.new_article_ids else None,
                new_article_ids=group.new_article_ids,
                member_count=len(old),
                first_seen=min(m.first_seen for m in members),
                last_seen=max(m.last_seen for m in members),
                article_count=len(members),
                outlet_count=stats.outlets,
                score=score(stats, now=now),
                updated=group.story_id is not None and stats.outlets > old_outlets,
            )
        )
    return plans

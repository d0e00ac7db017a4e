"""Stories: which article tells which story, and each story's counts and score.

The store only reads candidates and writes plans: clustering and ranking are decided by the pure
code of `digest.stories`, and `digest.jobs.clustering` runs the step. A write assigns only
articles that are still unassigned and checks that the stories it refreshes have the members the
plan was made from; when another process got there first it raises `ClusterConflictError` and
the step starts over from a new read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, text, update

from digest.errors import ClusterConflictError
from digest.models import ClusterResult, StoryView
from digest.store.base import StoreBase, chunks, require_aware
from digest.store.schema import article_recent, articles, stories
from digest.store.views import story_views
from digest.stories.plan import Candidate, StoryPlan

# pg_advisory_xact_lock(key, hashtext(category)): one clustering of a category at a time.
_CLUSTER_LOCK_KEY = 0x73746F72
_CANDIDATE_COLUMNS = (
    articles.c.id,
    articles.c.title,
    articles.c.lede,
    articles.c.snippet,
    articles.c.source,
    articles.c.url,
    articles.c.origin,
    articles.c.published,
    articles.c.first_seen,
    articles.c.last_seen,
    articles.c.story_id,
)


class StoriesMixin(StoreBase):
    """Stories and their members."""

    def cluster_candidates(self, category: str, *, since: datetime) -> list[Candidate]:
        """The category's articles published (or, undated, first seen) since `since`, and every
        other article of their stories."""
        require_aware(since, "since")
        recent = article_recent()
        query = select(*_CANDIDATE_COLUMNS).where(articles.c.category == category, recent >= since)
        with self._read() as conn:
            rows = {row["id"]: row for row in conn.execute(query).mappings()}
            story_ids = sorted({r["story_id"] for r in rows.values() if r["story_id"] is not None})
            for chunk in chunks(story_ids):
                members = select(*_CANDIDATE_COLUMNS).where(articles.c.story_id.in_(chunk))
                rows.update((row["id"], row) for row in conn.execute(members).mappings())
        return [
            Candidate(
                id=row["id"],
                title=row["title"],
                text=row["lede"] or row["snippet"],
                source=row["source"],
                url=row["url"],
                origin=row["origin"],
                published=row["published"],
                first_seen=row["first_seen"],
                last_seen=row["last_seen"],
                story_id=row["story_id"],
            )
            for row in rows.values()
        ]

    def save_stories(
        self, category: str, plans: Sequence[StoryPlan], *, now: datetime, candidates: int
    ) -> ClusterResult:
        """Write what a clustering decided: new stories, the members they gained, and every
        involved story's title, counts and score. Raises ClusterConflictError when the stored
        stories no longer match what the plan was made from."""
        require_aware(now, "now")
        created: list[int] = []
        grown: list[int] = []
        updated: list[int] = []
        assigned = 0
        with self._write() as conn:
            if conn.dialect.name == "postgresql":
                lock = text("SELECT pg_advisory_xact_lock(:key, hashtext(:category))")
                conn.execute(lock, {"key": _CLUSTER_LOCK_KEY, "category": category})
            _check_members(conn, plans)
            batches: dict[tuple[str, ...], list[dict[str, Any]]] = {}
            for plan in plans:
                values: dict[str, Any] = {
                    "first_seen": plan.first_seen,
                    "last_seen": plan.last_seen,
                    "article_count": plan.article_count,
                    "outlet_count": plan.outlet_count,
                    "score": plan.score,
                }
                if plan.title is not None:
                    values["title"] = plan.title
                story_id = plan.story_id
                if plan.updated and story_id is not None:
                    values["updated_at"] = now
                    updated.append(story_id)
                if story_id is None:
                    row = {"category": category, "updated_at": None, **values}
                    inserted = conn.execute(stories.insert().values(row).returning(stories.c.id))
                    story_id = int(inserted.scalar_one())
                    created.append(story_id)
                else:
                    if plan.new_article_ids:
                        grown.append(story_id)
                    batches.setdefault(tuple(values), []).append({"story": story_id, **values})
                for chunk in chunks(plan.new_article_ids):
                    stmt = (
                        update(articles)
                        .where(articles.c.id.in_(chunk), articles.c.story_id.is_(None))
                        .values(story_id=story_id)
                    )
                    if conn.execute(stmt).rowcount != len(chunk):
                        raise ClusterConflictError(f"clustering {category!r}: articles taken")
                    assigned += len(chunk)
            # Grouped by the columns they change, so each group is one executemany.
            for names, batch in batches.items():
                stmt = (
                    update(stories)
                    .where(stories.c.id == bindparam("story"))
                    .values({name: bindparam(name) for name in names})
                )
                conn.execute(stmt, batch)
        return ClusterResult(
            category=category,
            articles=candidates,
            assigned=assigned,
            created=tuple(created),
            grown=tuple(grown),
            updated=tuple(updated),
            stories=len(plans),
        )

    def stories_since(
        self, category: str | None, *, since: datetime, until: datetime | None = None
    ) -> list[StoryView]:
        """Stories seen since `since` (and first seen before `until`, when given), of one
        category or (None) of all, in no particular order (`digest.stories.rank.best_first`
        decides which comes first)."""
        require_aware(since, "since")
        query = select(stories).where(stories.c.last_seen >= since)
        if until is not None:
            require_aware(until, "until")
            query = query.where(stories.c.first_seen < until)
        if category is not None:
            query = query.where(stories.c.category == category)
        with self._read() as conn:
            return story_views(conn, list(conn.execute(query.order_by(stories.c.id)).mappings()))

    def stories_by_id(self, story_ids: Sequence[int]) -> list[StoryView]:
        """The stories with these ids as they are now (crawls and summaries included)."""
        with self._read() as conn:
            rows = [
                row
                for chunk in chunks(list(story_ids))
                for row in conn.execute(select(stories).where(stories.c.id.in_(chunk))).mappings()
            ]
            return story_views(conn, rows)


def _check_members(conn: Any, plans: Sequence[StoryPlan]) -> None:
    """Every existing story of the plan still has exactly the members it was planned from."""
    expected = {p.story_id: p.member_count for p in plans if p.story_id is not None}
    found: dict[int, int] = {}
    for chunk in chunks(sorted(expected)):
        query = (
            select(articles.c.story_id, func.count())
            .where(articles.c.story_id.in_(chunk))
            .group_by(articles.c.story_id)
        )
        found.update((sid, int(n)) for sid, n in conn.execute(query))
    changed = [sid for sid, n in expected.items() if found.get(sid, 0) != n]
    if changed:
        raise ClusterConflictError(f"stories {changed[:5]} changed since they were read")

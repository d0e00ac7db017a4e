"""Story summaries: one per story, set of source texts and summarizer, with its claim check."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select, update

from digest.errors import StoreError
from digest.models import Outlet, StorySummary
from digest.store.base import StoreBase, chunks, insert, now, require_aware
from digest.store.schema import articles, stories, story_summaries


def story_summary_from_row(row: Mapping[Any, Any]) -> StorySummary:
    return StorySummary(
        title="",
        summary=row["summary"],
        brief_summary=row["brief_summary"],
        keywords=tuple(row["keywords"] or ()),
        summarizer=row["summarizer"],
        sources=tuple(
            Outlet(name=str(s.get("name", "")), url=str(s.get("url", "")), title=s.get("title", ""))
            for s in row["sources"] or ()
            if isinstance(s, dict)
        ),
        claims=row["claims"],
        claims_found=row["claims_found"],
        sentences_removed=row["sentences_removed"],
        note=row["note"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        created_at=row["created_at"],
    )


def latest_story_summaries(conn: Connection, story_ids: Iterable[int]) -> dict[int, StorySummary]:
    """Each story's newest summary (of any summarizer), by story id."""
    found: dict[int, StorySummary] = {}
    order = (story_summaries.c.created_at, story_summaries.c.id)
    for chunk in chunks(list(story_ids)):
        query = (
            select(story_summaries).where(story_summaries.c.story_id.in_(chunk)).order_by(*order)
        )
        for row in conn.execute(query).mappings():
            found[row["story_id"]] = story_summary_from_row(row)  # the newest comes last
    return found


class StorySummariesMixin(StoreBase):
    """Summaries of stories as a whole, and the LLM tokens they cost."""

    def find_story_summary(
        self, story_id: int, sources_hash: str, summarizer: str
    ) -> StorySummary | None:
        """The summary `summarizer` made of this story from these same texts, if any."""
        query = select(story_summaries).where(
            story_summaries.c.story_id == story_id,
            story_summaries.c.sources_hash == sources_hash,
            story_summaries.c.summarizer == summarizer,
        )
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return story_summary_from_row(row) if row is not None else None

    def save_story_summary(
        self, story_id: int, sources_hash: str, summary: StorySummary, *, at: datetime | None = None
    ) -> bool:
        """Store a story's summary; False (and nothing changes) when these texts already have
        one by the same summarizer."""
        at = at or summary.created_at or now()
        require_aware(at, "at")
        values = {
            "story_id": story_id,
            "sources_hash": sources_hash,
            "summarizer": summary.summarizer,
            "summary": summary.summary,
            "brief_summary": summary.brief_summary,
            "keywords": list(summary.keywords),
            "sources": [{"name": o.name, "url": o.url, "title": o.title} for o in summary.sources],
            "claims": summary.claims,
            "claims_found": summary.claims_found,
            "sentences_removed": summary.sentences_removed,
            "note": summary.note,
            "prompt_tokens": summary.prompt_tokens,
            "completion_tokens": summary.completion_tokens,
            "created_at": at,
        }
        with self._write() as conn:
            if conn.execute(select(stories.c.id).where(stories.c.id == story_id)).first() is None:
                raise StoreError(f"no story with id {story_id}")
            stmt = (
                insert(conn, story_summaries)
                .values(values)
                .on_conflict_do_nothing(index_elements=["story_id", "sources_hash", "summarizer"])
            )
            if conn.execute(stmt.returning(story_summaries.c.id)).first() is None:
                return False
            # The archive search finds the story by its summary through the articles it was
            # written from (their summary_text is what the search index reads).
            urls = [o.url for o in summary.sources]
            if urls:
                text = f"{summary.brief_summary} {summary.summary}"
                conn.execute(
                    update(articles)
                    .where(articles.c.story_id == story_id, articles.c.url.in_(urls))
                    .values(summary_text=text)
                )
            return True

    def story_tokens_used(self, since: datetime) -> int:
        """LLM tokens (prompt and completion) of the story summaries made since `since`."""
        require_aware(since, "since")
        total = func.coalesce(
            func.sum(story_summaries.c.prompt_tokens + story_summaries.c.completion_tokens), 0
        )
        with self._read() as conn:
            query = select(total).where(story_summaries.c.created_at >= since)
            return int(conn.execute(query).scalar_one())

    def story_summary_checks(self, since: datetime) -> dict[str, int]:
        """What the claim check did to the story summaries made since `since`: summaries,
        claims, found, sentences removed, and LLM summaries it sent back to extractive."""
        require_aware(since, "since")
        t = story_summaries.c
        query = select(
            func.count(),
            func.coalesce(func.sum(t.claims), 0),
            func.coalesce(func.sum(t.claims_found), 0),
            func.coalesce(func.sum(t.sentences_removed), 0),
        ).where(t.created_at >= since)
        rejected = select(func.count()).where(t.created_at >= since, t.note.like("claim check:%"))
        with self._read() as conn:
            n, claims, found, removed = conn.execute(query).one()
            refused = int(conn.execute(rejected).scalar_one())
        return {
            "summaries": int(n),
            "claims": int(claims),
            "found": int(found),
            "sentences_removed": int(removed),
            "rejected": refused,
        }

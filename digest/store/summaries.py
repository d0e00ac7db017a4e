"""Summaries: one per content and summarizer, so an unchanged text is never summarized twice."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, or_, select, update

from digest.errors import StoreError
from digest.models import Summary
from digest.store.base import StoreBase, insert, now, require_aware
from digest.store.schema import articles, summaries
from digest.store.views import summary_from_row


class SummariesMixin(StoreBase):
    """Summaries of articles' main texts, and the LLM tokens they cost."""

    def find_summary(self, content_hash: str, summarizer: str) -> Summary | None:
        """The summary `summarizer` made of this content before, if any."""
        query = select(summaries).where(
            summaries.c.content_hash == content_hash, summaries.c.summarizer == summarizer
        )
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return summary_from_row(row) if row is not None else None

    def save_summary(
        self,
        article_id: int,
        content_hash: str,
        summary: Summary,
        *,
        at: datetime | None = None,
    ) -> bool:
        """Store a summary; False (and nothing changes) when this content already has one by
        the same summarizer: an unchanged article is never summarized twice."""
        at = at or now()
        require_aware(at, "at")
        values = {
            "article_id": article_id,
            "content_hash": content_hash,
            "summarizer": summary.summarizer,
            "title": summary.title,
            "summary": summary.summary,
            "brief_summary": summary.brief_summary,
            "keywords": list(summary.keywords),
            "prompt_tokens": summary.prompt_tokens,
            "completion_tokens": summary.completion_tokens,
            "created_at": at,
        }
        with self._write() as conn:
            if (
                conn.execute(select(articles.c.id).where(articles.c.id == article_id)).first()
                is None
            ):
                raise StoreError(f"no article with id {article_id}")
            stmt = (
                insert(conn, summaries)
                .values(values)
                .on_conflict_do_nothing(index_elements=["content_hash", "summarizer"])
            )
            if conn.execute(stmt.returning(summaries.c.id)).first() is None:
                return False
            # The archive search indexes the latest summary with its article and its copies.
            text = f"{summary.brief_summary} {summary.summary}"
            same = or_(articles.c.id == article_id, articles.c.text_hash == content_hash)
            conn.execute(update(articles).where(same).values(summary_text=text))
            return True

    def tokens_used(self, since: datetime) -> int:
        """LLM tokens (prompt and completion) of the summaries made since `since`."""
        require_aware(since, "since")
        total = func.coalesce(
            func.sum(summaries.c.prompt_tokens + summaries.c.completion_tokens), 0
        )
        with self._read() as conn:
            query = select(total).where(summaries.c.created_at >= since)
            return int(conn.execute(query).scalar_one())

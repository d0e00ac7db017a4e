"""Translations of stories' text: one per original text, language and translator, kept.

Keyed by a hash of the original headline, brief and summary (`source_hash`), so every reader of
a language, in every run and every process, gets the one translation, whichever table the
summary came from. Two processes that translate the same text at once both succeed: the first
row written is kept. A refused translation is kept too (with why), so it is not asked for again.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from digest.models import Translation
from digest.store.base import StoreBase, insert, now, require_aware
from digest.store.schema import articles, translations

# Articles of a story whose texts a translation is checked against: more says little more.
CHECKED_ARTICLES = 5


class TranslationsMixin(StoreBase):
    """Translations of stories' headlines, briefs and summaries into readers' languages."""

    def translation(self, source_hash: str, language: str, translator: str) -> Translation | None:
        """The translation (or refusal) `translator` made of this text into `language`."""
        query = select(translations).where(
            translations.c.source_hash == source_hash,
            translations.c.language == language,
            translations.c.translator == translator,
        )
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return _translation(row) if row is not None else None

    def save_translation(self, translation: Translation, *, at: datetime | None = None) -> bool:
        """Keep a translation; False (and nothing changes) when one of the same text, language
        and translator is there already (another process was first)."""
        at = at or now()
        require_aware(at, "at")
        t = translation
        values = {
            "source_hash": t.source_hash,
            "language": t.language,
            "translator": t.translator,
            "source_language": t.source_language,
            "title": t.title,
            "brief_summary": t.brief_summary,
            "summary": t.summary,
            "error": t.error,
            "prompt_tokens": t.prompt_tokens,
            "completion_tokens": t.completion_tokens,
            "created_at": at,
        }
        with self._write() as conn:
            stmt = (
                insert(conn, translations)
                .values(values)
                .on_conflict_do_nothing(index_elements=["source_hash", "language", "translator"])
                .returning(translations.c.id)
            )
            return conn.execute(stmt).first() is not None

    def translation_counts(self) -> dict[str, int]:
        """Translations kept, refused ones apart, and the LLM tokens they cost."""
        query = select(
            func.count(),
            func.count(translations.c.error),
            func.coalesce(
                func.sum(translations.c.prompt_tokens + translations.c.completion_tokens), 0
            ),
        )
        with self._read() as conn:
            total, refused, tokens = conn.execute(query).one()
        return {
            "translations": int(total) - int(refused),
            "refused": int(refused),
            "tokens": int(tokens),
        }

    def translation_tokens(self, since: datetime) -> int:
        """LLM tokens (prompt and completion) of the translations made since `since`, refused
        ones too: they were paid for."""
        require_aware(since, "since")
        total = func.coalesce(
            func.sum(translations.c.prompt_tokens + translations.c.completion_tokens), 0
        )
        with self._read() as conn:
            query = select(total).where(translations.c.created_at >= since)
            return int(conn.execute(query).scalar_one())

    def story_texts(self, story_id: int, *, limit: int = CHECKED_ARTICLES) -> list[str]:
        """What the articles of a story say, as stored (the main text, else the lede), the
        newest first: what a translation of its summary is checked against besides the
        original. Empty for a story the database does not (or no longer) hold."""
        text = func.coalesce(articles.c.text, articles.c.lede, "")
        query = (
            select(articles.c.title, text.label("text"))
            .where(articles.c.story_id == story_id)
            .order_by(articles.c.last_seen.desc(), articles.c.id)
            .limit(limit)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [f"{title}\n\n{body}".strip() for title, body in rows]


def _translation(row: Mapping[Any, Any]) -> Translation:
    return Translation(
        source_hash=row["source_hash"],
        language=row["language"],
        translator=row["translator"],
        source_language=row["source_language"],
        title=row["title"],
        brief_summary=row["brief_summary"],
        summary=row["summary"],
        error=row["error"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
    )

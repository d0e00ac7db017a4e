"""Article vectors: each article's sentence embedding per embedding space, made once.

`digest.jobs.clustering` reads the vectors it has for a clustering's candidates, asks the endpoint
only for the others (outside any transaction) and writes them here. Two processes that embed
the same article at once both succeed: the first vector written is kept.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from sqlalchemy import func, select

from digest.store.base import StoreBase, chunks, insert, now, require_aware
from digest.store.schema import article_vectors, articles


class VectorsMixin(StoreBase):
    """Sentence vectors of articles, by embedding space
    (`digest.stories.embeddings.Embedder.space`)."""

    def article_vectors(
        self, article_ids: Iterable[int], *, model: str
    ) -> dict[int, tuple[float, ...]]:
        """The stored vectors of these articles in `model`'s space, by article id."""
        ids = sorted(set(article_ids))
        found: dict[int, tuple[float, ...]] = {}
        with self._read() as conn:
            for chunk in chunks(ids):
                query = select(
                    article_vectors.c.article_id,
                    article_vectors.c.dimensions,
                    article_vectors.c.vector,
                ).where(article_vectors.c.model == model, article_vectors.c.article_id.in_(chunk))
                for article_id, dimensions, blob in conn.execute(query):
                    found[article_id] = _unpack(blob, dimensions)
        return found

    def save_article_vectors(
        self,
        model: str,
        vectors: Mapping[int, Sequence[float]],
        *,
        at: datetime | None = None,
    ) -> int:
        """Keep these vectors of articles in `model`'s space; an article that has one already
        (another process was first) or no longer exists keeps what it has. Returns how many
        were written."""
        at = at or now()
        require_aware(at, "at")
        if not vectors:
            return 0
        written = 0
        with self._write() as conn:
            for chunk in chunks(sorted(vectors)):
                present = set(
                    conn.execute(select(articles.c.id).where(articles.c.id.in_(chunk))).scalars()
                )
                rows = [
                    {
                        "article_id": article_id,
                        "model": model,
                        "dimensions": len(vectors[article_id]),
                        "vector": _pack(vectors[article_id]),
                        "created_at": at,
                    }
                    for article_id in chunk
                    if article_id in present
                ]
                if not rows:
                    continue
                stmt = (
                    insert(conn, article_vectors)
                    .values(rows)
                    .on_conflict_do_nothing()
                    .returning(article_vectors.c.article_id)
                )
                written += len(conn.execute(stmt).all())
        return written

    def vector_count(self, *, model: str | None = None) -> int:
        """How many vectors are stored (in `model`'s space, or in all)."""
        query = select(func.count()).select_from(article_vectors)
        if model is not None:
            query = query.where(article_vectors.c.model == model)
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())


def _pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def _unpack(blob: bytes, dimensions: int) -> tuple[float, ...]:
    return struct.unpack(f"<{dimensions}f", blob)

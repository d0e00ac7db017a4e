"""Reading stories and articles as the rest of the service sees them: `StoryView`s with their
`ArticleView`s, each with its latest summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import ColumnElement, Connection, ScalarSelect, func, select

from digest.models import ArticleView, StorySummary, StoryView, Summary
from digest.store.base import chunks
from digest.store.schema import articles, summaries
from digest.store.story_summaries import latest_story_summaries
from digest.stories import outlet

VIEW_COLUMNS = (
    articles.c.id,
    articles.c.url,
    articles.c.title,
    articles.c.source,
    articles.c.published,
    articles.c.first_seen,
    articles.c.lede,
    articles.c.origin,
    articles.c.story_id,
    articles.c.text_hash,
    articles.c.crawl_status,
    (func.coalesce(func.length(articles.c.text), 0) > 0).label("has_text"),
)


def story_views(conn: Connection, rows: Sequence[Mapping[Any, Any]]) -> list[StoryView]:
    by_story: dict[int, list[Mapping[Any, Any]]] = {}
    for chunk in chunks([row["id"] for row in rows]):
        query = select(*VIEW_COLUMNS).where(articles.c.story_id.in_(chunk))
        for article in conn.execute(query).mappings():
            by_story.setdefault(article["story_id"], []).append(article)
    members = [a for row in rows for a in by_story.get(row["id"], [])]
    views = {a.id: a for a in article_views(conn, members)}
    summaries_of = latest_story_summaries(conn, [row["id"] for row in rows])
    return [
        StoryView(
            id=row["id"],
            category=row["category"],
            title=row["title"],
            first_seen=row["first_seen"],
            last_seen=row["last_seen"],
            updated=row["updated_at"] is not None,
            updated_at=row["updated_at"],
            article_count=row["article_count"],
            outlet_count=row["outlet_count"],
            score=row["score"],
            articles=_story_order(
                row["title"], [views[a["id"]] for a in by_story.get(row["id"], [])]
            ),
            summary=_titled(summaries_of.get(row["id"]), row["title"]),
        )
        for row in rows
    ]


def _titled(summary: StorySummary | None, title: str) -> StorySummary | None:
    return replace(summary, title=title) if summary is not None else None


def _story_order(title: str, items: Sequence[ArticleView]) -> tuple[ArticleView, ...]:
    """The representative (the article the story is named after) first, then one article per
    other outlet, newest first, then the rest, newest first."""

    def newest_first(a: ArticleView) -> tuple[float, int]:
        return (-(a.published or a.first_seen).timestamp(), a.id)

    ordered = sorted(items, key=lambda a: (a.title != title, *newest_first(a)))
    head = ordered[:1]
    seen = {a.outlet for a in head}
    firsts: list[ArticleView] = []
    rest: list[ArticleView] = []
    for a in ordered[1:]:
        (rest if a.outlet in seen else firsts).append(a)
        seen.add(a.outlet)
    return tuple(head + firsts + rest)


def article_views(conn: Connection, rows: Sequence[Mapping[Any, Any]]) -> list[ArticleView]:
    """Views of article rows (VIEW_COLUMNS), each with its latest summary: its own, else the
    latest of any article with the same text."""
    ids = [row["id"] for row in rows]
    hashes = sorted({row["text_hash"] for row in rows if row["text_hash"]})
    own: dict[int, Mapping[Any, Any]] = {}
    same_text: dict[str, Mapping[Any, Any]] = {}
    order = (summaries.c.created_at, summaries.c.id)
    for chunk in chunks(ids):
        query = select(summaries).where(summaries.c.article_id.in_(chunk)).order_by(*order)
        own.update((s["article_id"], s) for s in conn.execute(query).mappings())
    for chunk in chunks(hashes):
        query = select(summaries).where(summaries.c.content_hash.in_(chunk)).order_by(*order)
        same_text.update((s["content_hash"], s) for s in conn.execute(query).mappings())
    views = []
    for row in rows:
        found = own.get(row["id"]) or same_text.get(row["text_hash"] or "")
        views.append(
            ArticleView(
                id=row["id"],
                url=row["url"],
                title=row["title"],
                source=row["source"],
                outlet=outlet(row["source"], row["url"]),
                published=row["published"],
                first_seen=row["first_seen"],
                lede=row["lede"],
                origin=row["origin"],
                has_text=bool(row["has_text"]),
                text_hash=row["text_hash"],
                crawl_status=row["crawl_status"],
                summary=summary_from_row(found) if found is not None else None,
            )
        )
    return views


def summary_from_row(row: Mapping[Any, Any]) -> Summary:
    return Summary(
        title=row["title"],
        summary=row["summary"],
        brief_summary=row["brief_summary"],
        keywords=tuple(row["keywords"] or ()),
        summarizer=row["summarizer"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
    )


def latest_summary_text(where: ColumnElement[bool]) -> ScalarSelect[Any]:
    """The brief and text of the newest summary matching `where`, as articles.summary_text."""
    text = summaries.c.brief_summary + " " + summaries.c.summary
    newest = (summaries.c.created_at.desc(), summaries.c.id.desc())
    return select(text).where(where).order_by(*newest).limit(1).scalar_subquery()

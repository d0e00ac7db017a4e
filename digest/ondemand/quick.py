"""On-demand answers: `news`, `query` and `extract`, the product's quick path.

Each returns as soon as the fast extraction pass is done (about a second); nothing here waits on a
browser or an LLM.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from typing import Any

from digest.app import App
from digest.errors import InvalidQueryError, NoDatabaseError, NoSourceError, SourceError
from digest.models import Extract, Item, Page, SearchHit, StoryView
from digest.ondemand.results import DeepAnswer, DeepExtract, QueryResult


async def news(app: App, category: str, *, limit: int = 8, live: bool = False) -> list[Item]:
    """Today's headlines of a category: from the store, or collected live when there are none
    yet today (or when asked), from the category's configured sources only (its feeds, and
    DuckDuckGo when `sources.ddg` is on). NoSourceError when it has none."""
    cat = app.config.check_category(category)
    store = await app.face()
    since = app.config.today_start()
    if live or not await store.has_collected(cat, since):
        from digest.jobs.collect import (
            collect,  # only to collect live: a stored day starts faster
            feeds_for,
        )

        if not app.config.sources.has_source(cat) and not await feeds_for(app, cat):
            raise NoSourceError(
                f"no source for category {cat!r}: sources.ddg is false and no "
                f"[[sources.feeds]] has category {cat!r}, nor a feed added with digest feeds"
            )
        report = await collect(app, [cat])
        if report.headlines == 0 and report.failures:
            raise SourceError(report.failures[0].error)
    return await store.headlines(cat, since=since, limit=limit)


async def todays_stories(app: App, category: str | None = None) -> list[StoryView]:
    """Today's stories (of one category, or all), by category, best first."""
    from digest.jobs.clustering import stories  # the store's code: none for `extract`

    cat = app.config.check_category(category) if category else None
    store = await app.face(create=False)
    since, order = app.config.today_start(), app.config.sources.categories
    return await store.call(stories, cat, since=since, order=order)


async def todays_stories_json(app: App, category: str | None = None) -> list[dict[str, Any]]:
    """`todays_stories` as `digest stories --json` prints them: each marked with where its
    event is shown when more than one category collected it (`edition.front_page.marked_json`),
    and `top`: whether it is one of its category's top stories as the edition lays them out
    (`[stories] top` of them, minor stories and repeats left out, an event shown once)."""
    from digest.edition.front_page import by_category, marked_json, placed
    from digest.jobs.clustering import across_categories

    cat = app.config.check_category(category) if category else None
    store = await app.face(create=False)
    since = app.config.today_start()
    categories = app.config.sources.categories
    read = await store.stories_since(None, since=since)
    found = by_category(read, categories)
    day = await store.call(
        across_categories, app.config.stories, categories, since=since, found=read
    )
    layout = placed(day, categories, top=app.config.stories.top)
    top = {i for shown in layout.shown.values() for i in shown}
    marked = marked_json(found, day.events)
    return [{**s, "top": s["id"] in top} for s in marked if cat is None or s["category"] == cat]


async def story_json(app: App, story_id: int) -> dict[str, Any] | None:
    """One story as `digest stories --json` prints it, with its `timeline` (oldest first, the
    latest entries): the API's /stories/{id} and the MCP `story` tool. None when there is none."""
    store = await app.face(create=False)

    found = await store.stories_by_id([story_id])
    if not found:
        return None
    timeline = await store.story_timeline(story_id)
    return {**found[0].to_json(), "timeline": [e.to_json() for e in timeline]}


async def query(app: App, text: str, *, k: int = 6) -> list[Item]:
    """A live web search, each of the top `k` results enriched with a lede from its page."""
    if not text.strip():
        raise InvalidQueryError("the query is empty")
    await app.extractor.warm()  # the parsers start while the search runs
    headlines = await app.ddg.search(text, k=k)
    return await app.extractor.enrich(headlines[:k])


async def search_archive(
    app: App,
    text: str,
    *,
    category: str | None = None,
    since: datetime | None = None,
    limit: int = 10,
    any_word: bool = False,
) -> list[SearchHit]:
    """What the stored archive says about `text`: offline, best stories first. A category
    must be a configured one, as everywhere; a missing database is NoDatabaseError."""
    cat = app.config.check_category(category) if category is not None else None
    store = await app.face(create=False)
    return await store.search(text, category=cat, since=since, limit=limit, any_word=any_word)


async def query_both(
    app: App, text: str, *, k: int = 6, local: bool = True, live: bool = True
) -> QueryResult:
    """What the archive knows, and the live search, side by side (both run at once): a live
    failure is kept as a warning when the archive had something to say, and raised when there
    is nothing else to show."""
    result = QueryResult(text)
    failure: list[SourceError] = []

    async def archive() -> None:
        try:
            # A question, not a search: stories that share any of its words, best first.
            result.archive = await search_archive(app, text, limit=k, any_word=True)
        except (InvalidQueryError, NoDatabaseError):
            if not live:
                raise
            result.archive = []  # nothing the archive can search (or no archive): the web may

    async def web() -> None:
        try:
            result.live = await query(app, text, k=k)
        except SourceError as err:
            failure.append(err)
            result.live_error = str(err)

    await asyncio.gather(*([archive()] if local else []), *([web()] if live else []))
    if failure and not result.archive:
        raise failure[0]
    return result


def check_urls(urls: list[str]) -> list[str]:
    """Validate all URLs before fetching any, so a typo fails fast with a clear message."""
    from digest.fetch.guard import check_url  # yarl: not for what reads the archive only

    return [check_url(u) for u in urls]


async def extract(app: App, urls: list[str]) -> list[Extract]:
    """Fast extraction of the given URLs, one result per URL in the order given."""
    return await app.extractor.extract(check_urls(urls))


async def extract_deep(app: App, urls: list[str]) -> list[DeepExtract]:
    """Crawl, extract the main text of, and summarize each URL; one result per URL, in order."""
    from digest.jobs.deepen import summarize_text

    crawler = await app.crawler()
    pages = await crawler.crawl(check_urls(urls))

    async def one(page: Page) -> DeepExtract:
        result = DeepExtract(url=page.url, title=page.title, text=page.text, error=page.error)
        result = replace(result, note=page.note)
        if not page.ok:
            return result
        summary, _, _ = await summarize_text(
            app, url=page.final_url or page.url, title=page.title, text=page.text
        )
        return replace(result, title=page.title or summary.title, summary=summary)

    return list(await asyncio.gather(*(one(p) for p in pages)))


async def query_deep(app: App, text: str, *, k: int = 6) -> DeepAnswer:
    """Search, crawl and summarize the top `k` results, then answer the query from their texts
    only, citing them as [1], [2], …"""
    if not text.strip():
        raise InvalidQueryError("the query is empty")
    headlines = (await app.ddg.search(text, k=k))[:k]
    extracted = await extract_deep(app, [h.url for h in headlines])
    results = [
        replace(r, title=r.title or h.title, snippet=h.snippet)
        for h, r in zip(headlines, extracted, strict=True)
    ]
    summarizer = await app.summarizer()
    sources = [(r.url, r.title, r.text or r.snippet or "") for r in results]
    answer = await summarizer.answer(text, sources)
    return DeepAnswer(
        query=text,
        answer=answer.text,
        answerer=answer.answerer,
        cited=tuple(answer.cited),
        sources=tuple(results),
    )

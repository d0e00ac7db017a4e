"""On-demand answers: `news`, `query` and `extract`, the product's quick path.

Each returns as soon as the fast extraction pass is done (about a second); nothing here waits on a
browser or an LLM.
"""

from __future__ import annotations

import asyncio

from digest.app import App
from digest.collect import collect
from digest.errors import InvalidQueryError, SourceError
from digest.fetch.guard import check_url
from digest.models import Extract, Item


async def news(app: App, category: str, *, limit: int = 8, live: bool = False) -> list[Item]:
    """Today's headlines of a category: from the store, or collected live when there are none
    yet today (or when asked)."""
    cat = app.config.check_category(category)
    store = await app.store()
    since = app.config.today_start()
    if live or not await asyncio.to_thread(store.has_collected, cat, since):
        report = await collect(app, [cat])
        if report.headlines == 0 and report.failures:
            raise SourceError(report.failures[0].error)
    return await asyncio.to_thread(store.headlines, cat, since=since, limit=limit)


async def query(app: App, text: str, *, k: int = 6) -> list[Item]:
    """A live web search, each of the top `k` results enriched with a lede from its page."""
    if not text.strip():
        raise InvalidQueryError("the query is empty")
    headlines = await app.ddg.search(text, k=k)
    return await app.extractor.enrich(headlines[:k])


def check_urls(urls: list[str]) -> list[str]:
    """Validate all URLs before fetching any, so a typo fails fast with a clear message."""
    return [check_url(u) for u in urls]


async def extract(app: App, urls: list[str]) -> list[Extract]:
    """Fast extraction of the given URLs, one result per URL in the order given."""
    return await app.extractor.extract(check_urls(urls))

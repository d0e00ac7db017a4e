"""The steps a worker runs, run in this process (no queue): how tasks sharing a worker behave."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from digest.app import App
from digest.config import load_config
from digest.jobs.collect import ExtractUnit, extract_batch
from digest.models import Headline
from tests.configs import write_config
from tests.newsweb import ARTICLES, NewsWeb

LATENCY = 0.4  # each page's: three of one host in a row fit a pass's 2 s, six do not
PAGES = 3


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    fetch = {"per_host_connections": 1, "read_timeout": 1.0, "request_timeout": 1.0}
    write_config(tmp_path, fetch={**fetch, "pages_budget": 2.0, "call_budget": 2.3})
    async with App(load_config(tmp_path / "digest.toml")) as app:
        yield app


def batch(web: NewsWeb, tag: str) -> ExtractUnit:
    now = datetime.now(UTC)
    headlines = [
        Headline(a.title, web.url(f"{a.path}?{tag}"), published=now) for a in ARTICLES[:PAGES]
    ]
    return ExtractUnit("technology", tuple(headlines))


async def test_two_batches_of_one_host_on_one_worker_both_get_their_ledes(
    app: App, news_web: NewsWeb
) -> None:
    """A worker runs several tasks at once; two fast passes of the same site would share its
    connections and each lose pages to the other's turn. Taking turns, each pass has its
    budget, and every headline of both batches gets its lede."""
    for a in ARTICLES[:PAGES]:
        news_web.set_latency(a.path, LATENCY)
    done = [
        outcome.to_json()
        for outcome in await asyncio.gather(
            extract_batch(app, batch(news_web, "first")),
            extract_batch(app, batch(news_web, "second")),
        )
    ]
    assert [d["with_lede"] for d in done] == [PAGES, PAGES]
    assert sum(d["new"] for d in done) == 2 * PAGES

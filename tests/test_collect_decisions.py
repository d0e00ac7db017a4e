"""Collecting's decisions and writes with the store's memory twin (`CollectStore`, declared
beside the job): which feeds a category collects, which of them rest after failing, and what
is saved of their states, all without a database."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from digest.app import App
from digest.config import Config, FeedConfig
from digest.jobs.collect import feeds_for, feeds_headlines
from digest.models import Failure, FeedState, Headline, SubscribedFeed
from tests.embedserver import free_port
from tests.memory_stores import MemoryCollectStore
from tests.storefixtures import NOW


def subscribed(url: str, category: str) -> SubscribedFeed:
    return SubscribedFeed(url=url, category=category, name=None, origin="cli", added_at=NOW)


def config(*feeds: FeedConfig) -> Config:
    return Config.model_validate(
        {"sources": {"categories": ["world", "science"], "ddg": False, "feeds": list(feeds)}}
    )


def test_a_category_collects_the_config_files_feeds_then_the_subscribed_ones_it_lacks() -> None:
    in_file = FeedConfig(url="https://news.example/world.rss", category="world")
    other = FeedConfig(url="https://news.example/science.rss", category="science")
    store = MemoryCollectStore(
        feeds=[
            subscribed("https://NEWS.example/world.rss", "world"),  # the file's, canonically
            subscribed("https://wire.example/world.xml", "world"),
            subscribed("https://wire.example/science.xml", "science"),
        ]
    )

    async def world() -> list[FeedConfig]:
        async with App(config(in_file, other), environ={}) as app:
            return await feeds_for(app, "world", store=store)

    found = asyncio.run(world())
    assert [f.url for f in found] == [in_file.url, "https://wire.example/world.xml"]
    assert store.calls == ["subscribed_feeds"]


def test_a_feed_failing_again_and_again_rests_and_only_what_changed_is_saved() -> None:
    refused = FeedConfig(url=f"http://127.0.0.1:{free_port()}/feed.xml", category="world")
    resting = FeedConfig(url=f"http://127.0.0.1:{free_port()}/rests.xml", category="world")
    now = datetime.now(UTC)
    tired = FeedState(
        url=resting.url,
        category="world",
        error_count=5,
        last_error="HTTP 503",
        last_checked_at=now - timedelta(minutes=1),
    )
    store = MemoryCollectStore(states={resting.url: tired})
    failures: list[Failure] = []

    async def collect() -> list[list[Headline]]:
        async with App(config(refused, resting), environ={}) as app:
            return await feeds_headlines(app, [refused, resting], failures, store=store)

    assert asyncio.run(collect()) == [[], []]
    assert [f.source for f in failures] == [f"feed:{refused.url}", f"feed:{resting.url}"]
    assert "backed off after 5 failures in a row" in failures[1].error
    # The states were read in one call and written in one; the resting feed's stays as it was.
    assert store.calls == ["feed_states_of", "save_feed_states"]
    assert store.states[resting.url] == tired
    assert store.states[refused.url].error_count == 1
    assert store.states[refused.url].last_error == failures[0].error


def test_nothing_is_saved_when_every_feed_rests() -> None:
    resting = FeedConfig(url="https://news.example/world.rss", category="world")
    now = datetime.now(UTC)
    tired = FeedState(url=resting.url, category="world", error_count=9, last_checked_at=now)
    store = MemoryCollectStore(states={resting.url: tired})
    failures: list[Failure] = []

    async def collect() -> list[list[Headline]]:
        async with App(config(resting), environ={}) as app:
            return await feeds_headlines(app, [resting], failures, store=store)

    assert asyncio.run(collect()) == [[]]
    assert store.calls == ["feed_states_of"]
    assert len(failures) == 1

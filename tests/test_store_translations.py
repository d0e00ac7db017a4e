"""Translations in the store: one per text, language and translator, the first kept; refusals
kept with why; the texts of a story a translation is checked against. SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from digest.config import StoriesConfig
from digest.jobs.clustering import cluster_category
from digest.models import Page, Translation
from digest.store import Store
from tests import headlines as H
from tests import storefixtures
from tests.storefixtures import NOW, item

db_url, store = storefixtures.db_url, storefixtures.store

MADE = Translation(
    source_hash="a" * 64,
    language="de",
    translator="llm:fake-model",
    source_language="en",
    title="[de] Fed senkt Zinsen",
    brief_summary="[de] Die Fed senkt die Zinsen um 0,25 Punkte.",
    summary="[de] Die Federal Reserve senkte am Mittwoch die Zinsen.",
    prompt_tokens=120,
    completion_tokens=40,
)


def test_a_translation_is_kept_once_per_text_language_and_translator(store: Store) -> None:
    assert store.translation(MADE.source_hash, "de", "llm:fake-model") is None
    assert store.save_translation(MADE) is True
    assert store.translation(MADE.source_hash, "de", "llm:fake-model") == MADE
    # Another process was first: its translation stays.
    assert store.save_translation(replace(MADE, title="[de] Anders")) is False
    assert store.translation(MADE.source_hash, "de", "llm:fake-model") == MADE
    # Another language, another model: their own.
    assert store.translation(MADE.source_hash, "fr", "llm:fake-model") is None
    assert store.translation(MADE.source_hash, "de", "llm:other") is None
    assert store.save_translation(replace(MADE, language="fr", title="[fr] La Fed")) is True
    assert store.translation_counts() == {"translations": 2, "refused": 0, "tokens": 320}
    assert store.translation_tokens(NOW.replace(year=2000)) == 320
    assert store.translation_tokens(datetime.now(UTC) + timedelta(hours=1)) == 0


def test_a_refusal_is_kept_with_its_reason(store: Store) -> None:
    refused = replace(
        MADE,
        title="",
        brief_summary="",
        summary="",
        error="not in the original or its sources: number “7,319” (summary)",
    )
    store.save_translation(refused)
    assert store.translation(MADE.source_hash, "de", "llm:fake-model") == refused
    assert store.translation_counts()["refused"] == 1


def test_writers_at_once_keep_one_translation(store: Store) -> None:
    results: list[bool] = []

    def write(n: int) -> None:
        results.append(store.save_translation(replace(MADE, title=f"[de] {n}")))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]
    assert store.translation_counts()["translations"] == 1


def test_a_storys_texts_are_what_its_translations_are_checked_against(store: Store) -> None:
    urls = [f"https://www.{line.outlet.lower().replace(' ', '')}.example/fed" for line in H.FED]
    store.upsert_items(
        [
            item(url, title=line.title, lede=line.text, category="finance", source=line.outlet)
            for url, line in zip(urls, H.FED, strict=True)
        ],
        seen_at=NOW,
    )
    cluster_category(store, "finance", now=NOW, config=StoriesConfig())
    first = store.article_by_url(urls[0])
    assert first is not None and first.id is not None
    story_id = store.stories_since("finance", since=NOW.replace(hour=0))[0].id
    page = Page(url=urls[0], final_url=urls[0], title="t", text="The whole article, crawled.")
    store.save_crawl(first.id, page)

    texts = store.story_texts(story_id)
    assert any("The whole article, crawled." in t for t in texts)
    assert any(H.FED[1].text in t for t in texts)
    assert len(texts) <= 5
    assert store.story_texts(999_999) == []

"""Article vectors without the model: the client's checks, the store's table on SQLite and
PostgreSQL, and a clustering whose endpoint fails in every way a server can."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import delete

from digest.config import EmbeddingsConfig, StoriesConfig
from digest.errors import EmbeddingError
from digest.jobs.clustering import cluster_category, cluster_with_embeddings
from digest.store import Store
from digest.store.face import StoreFace
from digest.store.schema import articles
from digest.stories.embeddings import Embedder
from tests import headlines as H
from tests import storefixtures
from tests.embedserver import EmbeddingsProxy, free_port
from tests.storefixtures import NOW, item

db_url, store = storefixtures.db_url, storefixtures.store


def config(url: str, **overrides: object) -> EmbeddingsConfig:
    values: dict[str, object] = {"base_url": url, "model": "m", "max_retries": 0, "timeout": 2.0}
    return EmbeddingsConfig.model_validate(values | overrides)


def embed(cfg: EmbeddingsConfig, texts: list[str]) -> list[tuple[float, ...]]:
    async def run() -> list[tuple[float, ...]]:
        async with Embedder(cfg) as embedder:
            return await embedder.embed(texts)

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error500", "HTTP 500"),
        ("hang", "no answer within 0.5 s"),
        ("garbage", "an answer without a list of vectors"),
        ("short", "1 vectors for 2 texts"),
    ],
)
def test_a_broken_endpoint_is_one_error_line_naming_it(
    broken_embeddings: EmbeddingsProxy, mode: str, message: str
) -> None:
    broken_embeddings.mode = mode  # type: ignore[assignment]
    with pytest.raises(EmbeddingError, match=message) as caught:
        embed(config(broken_embeddings.url, timeout=0.5), ["one", "two"])
    assert broken_embeddings.url in str(caught.value) and "\n" not in str(caught.value)


def test_a_refused_connection_is_an_error_too() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EmbeddingError, match=url):
        embed(config(url), ["one"])


def test_what_is_embedded_is_the_title_then_the_lede_with_the_prefix_cut_to_length() -> None:
    cfg = config("http://127.0.0.1:9/v1", input_prefix="query: ", max_input_chars=40)
    embedder = Embedder(cfg)
    assert embedder.text_of("Fed  cuts rates", "") == "query: Fed cuts rates"
    lede = "The Fed\ncut  rates today, its third cut this year."
    assert embedder.text_of("Fed cuts", lede) == "query: Fed cuts\nThe Fed cut rates today,"
    assert embedder.space == "m|query: "
    assert Embedder(config("http://127.0.0.1:9/v1")).space == "m"


# The store's part


def article_ids(store: Store, count: int) -> list[int]:
    items = [
        item(f"https://news.example/{n}", title=f"Headline {n}", category="world", published=NOW)
        for n in range(count)
    ]
    store.upsert_items(items, seen_at=NOW)
    return sorted(c.id for c in store.cluster_candidates("world", since=NOW.replace(hour=0)))


def test_vectors_are_kept_once_per_article_and_space(store: Store) -> None:
    a, b, c = article_ids(store, 3)
    assert store.save_article_vectors("m", {a: [0.5, -0.25], b: [1.0, 2.0]}) == 2
    # Another process was first for `a`: its vector stays; a vanished article is skipped.
    assert store.save_article_vectors("m", {a: [9.0, 9.0], c: [0.0, 1.0], 999_999: [1.0]}) == 1
    assert store.article_vectors([a, b, c, 999_999], model="m") == {
        a: (0.5, -0.25),
        b: (1.0, 2.0),
        c: (0.0, 1.0),
    }
    assert store.article_vectors([a], model="other") == {}
    assert store.save_article_vectors("other", {a: [3.0]}) == 1
    assert (store.vector_count(model="m"), store.vector_count()) == (3, 4)
    with store.engine.begin() as conn:  # an article that goes takes its vectors along
        conn.execute(delete(articles).where(articles.c.id == a))
    assert store.vector_count() == 2


# The clustering step when the endpoint fails: words alone, and the reason


LINES = H.QUAKE + H.QUAKE_DE + H.SINGLES


def stored_news(store: Store) -> None:
    store.upsert_items(H.world_news(LINES, NOW), seen_at=NOW)


def partition(store: Store) -> set[frozenset[int]]:
    found: dict[int | None, set[int]] = {}
    for c in store.cluster_candidates("world", since=NOW.replace(hour=0)):
        found.setdefault(c.story_id, set()).add(c.id)
    return {frozenset(v) for v in found.values()}


@pytest.mark.parametrize("mode", ["error500", "hang", "garbage", "short", "refused"])
def test_a_failing_endpoint_means_the_stories_words_tell_them_apart(
    tmp_path: Path, broken_embeddings: EmbeddingsProxy, mode: str
) -> None:
    from digest.store import open_store

    url = broken_embeddings.url if mode != "refused" else f"http://127.0.0.1:{free_port()}/v1"
    if mode != "refused":
        broken_embeddings.mode = mode  # type: ignore[assignment]
    with open_store(f"sqlite:///{tmp_path / 'words.db'}") as lexical:
        stored_news(lexical)
        cluster_category(lexical, "world", now=NOW, config=StoriesConfig())
        expected = partition(lexical)
    with open_store(f"sqlite:///{tmp_path / 'digest.db'}") as store:
        stored_news(store)

        async def run():
            async with Embedder(config(url, timeout=0.5)) as embedder:
                return await cluster_with_embeddings(
                    StoreFace(store), "world", now=NOW, config=StoriesConfig(), embedder=embedder
                )

        result = asyncio.run(run())
        assert result.similarity == "lexical" and result.embedded == 0
        assert result.embedding_error and url in result.embedding_error
        assert partition(store) == expected
        assert store.vector_count() == 0

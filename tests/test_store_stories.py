"""The deep path's storage: stories, crawled texts, summaries; on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import warnings
from datetime import timedelta

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import select, text

import digest.stories.plan as plan_module
from digest.config import StoriesConfig
from digest.errors import StoreError
from digest.jobs import clustering
from digest.jobs.clustering import cluster_category, top_stories
from digest.models import ArticleView, Item, Page, Summary
from digest.store import Store, content_hash, make_engine, open_store, upgrade
from digest.store.engine import alembic_config, migrations_dir
from digest.store.schema import articles, stories
from tests import headlines as H
from tests import storefixtures
from tests.storefixtures import NOW, item
from tests.test_store import index_definitions

# Fixtures, found by pytest under these names.
db_url, store = storefixtures.db_url, storefixtures.store

CONFIG = StoriesConfig()
HOUR = timedelta(hours=1)
TODAY = NOW.replace(hour=0)


def news(line: H.Line, slug: str, *, at=NOW, category: str = "finance", origin="ddg:news") -> Item:
    host = line.outlet.lower().replace(" ", "")
    return item(
        f"https://www.{host}.example/{slug}",
        title=line.title,
        lede=line.text,
        category=category,
        published=at,
        source=line.outlet,
        origin=origin,
    )


def story_of(store: Store, url: str) -> int | None:
    with store.engine.connect() as conn:
        query = select(articles.c.story_id).where(articles.c.url == url)
        return conn.execute(query).scalar_one()


def summary(title: str = "Fed cuts rates", *, by: str = "extractive", tokens: int = 0) -> Summary:
    return Summary(
        title=title,
        summary="The Federal Reserve cut rates by a quarter point.",
        brief_summary="Rates cut.",
        keywords=("fed", "rates"),
        summarizer=by,
        prompt_tokens=tokens,
        completion_tokens=tokens // 2,
    )


def page(url: str, body: str = "", *, error: str | None = None, kind="html") -> Page:
    return Page(url=url, final_url=url, title="t", text=body, kind=kind, error=error)


def only_article(store: Store, url: str) -> ArticleView:
    found = store.article_by_url(url)
    assert found is not None
    return found


# Migration


def test_migrating_0001_to_0002_keeps_the_data_and_ends_at_the_models(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0001")
            conn.execute(
                text(
                    "INSERT INTO articles (url, original_url, title, source, category, snippet,"
                    " lede, extract_status, origin, first_seen, last_seen)"
                    " VALUES ('https://example.com/a', 'https://example.com/a?utm_source=x',"
                    " 'Kept title', 'Example', 'finance', 'snip', 'The lede.', 'ok', 'ddg:news',"
                    " :t, :t)"
                ),
                {"t": NOW if conn.dialect.name == "postgresql" else "2025-03-01 12:00:00"},
            )
            conn.execute(
                text(
                    "INSERT INTO runs (kind, started_at, status, counts, errors)"
                    " VALUES ('collect', :t, 'ok', '{}', '[]')"
                ),
                {"t": NOW if conn.dialect.name == "postgresql" else "2025-03-01 12:00:00"},
            )
        upgrade(engine)
        with engine.connect() as conn, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*expression.*|.*functional.*")
            assert storefixtures.schema_diff(conn) == []
            indexes = index_definitions(conn, "articles")
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()
    assert version == ScriptDirectory(str(migrations_dir())).get_current_head()  # 0002 and later
    assert "coalesce(published, first_seen)" in indexes["ix_articles_category_recent"].lower()
    assert "ix_articles_story_id" in indexes

    with open_store(db_url) as migrated:
        kept = only_article(migrated, "https://example.com/a")
        assert (kept.title, kept.lede, kept.source, kept.first_seen) == (
            "Kept title",
            "The lede.",
            "Example",
            NOW,
        )
        assert (kept.has_text, kept.crawl_status, kept.summary) == (False, None, None)
        assert [r.kind for r in migrated.recent_runs(5)] == ["collect"]
        # The new tables work on the migrated database.
        result = cluster_category(migrated, "finance", now=NOW, config=CONFIG)
        assert len(result.created) == 1


# Stories


def test_clustering_is_stored_and_stable_and_a_new_outlet_marks_a_story_updated(
    store: Store,
) -> None:
    fed = [news(line, f"fed{n}", at=NOW - HOUR) for n, line in enumerate(H.FED)]
    single = news(H.SINGLES[0], "rally", at=NOW - HOUR)
    store.upsert_items([fed[0], fed[1], single], seen_at=NOW)

    first = cluster_category(store, "finance", now=NOW, config=CONFIG)
    assert (first.articles, first.assigned, len(first.created)) == (3, 3, 2)
    assert (first.grown, first.updated) == ((), ())
    fed_story = story_of(store, fed[0].headline.url)
    assert fed_story is not None and story_of(store, fed[1].headline.url) == fed_story

    again = cluster_category(store, "finance", now=NOW + HOUR, config=CONFIG)
    assert (again.assigned, again.created, again.grown, again.updated) == (0, (), (), ())
    assert story_of(store, fed[0].headline.url) == fed_story

    # Next day: a third outlet on the rate decision, and a new event.
    later = NOW + timedelta(hours=20)
    quake = [news(line, f"quake{n}", at=later) for n, line in enumerate(H.QUAKE)]
    store.upsert_items([fed[2], *quake], seen_at=later)
    grown = cluster_category(store, "finance", now=later, config=CONFIG)
    assert grown.assigned == 3
    assert (grown.grown, grown.updated) == ((fed_story,), (fed_story,))
    assert len(grown.created) == 1
    assert story_of(store, fed[2].headline.url) == fed_story

    views = {v.id: v for v in clustering.stories(store, "finance", since=TODAY)}
    fed_view = views[fed_story]
    assert fed_view.updated and fed_view.updated_at == later
    assert (fed_view.article_count, fed_view.outlet_count) == (3, 3)
    assert sorted(fed_view.outlets) == ["ap news", "cnbc", "reuters"]
    assert fed_view.first_seen == NOW and fed_view.last_seen == later
    assert fed_view.title in {line.title for line in H.FED}
    assert fed_view.articles[0].title == fed_view.title
    (quake_view,) = [v for v in views.values() if v.id in grown.created]
    assert not quake_view.updated and quake_view.outlet_count == 2


def test_a_new_article_from_an_outlet_already_counted_grows_but_does_not_update(
    store: Store,
) -> None:
    line = H.TESLA[0]
    store.upsert_items([news(line, "tesla", category="technology")], seen_at=NOW)
    (created,) = cluster_category(store, "technology", now=NOW, config=CONFIG).created
    follow_up = H.Line("tesla", line.outlet, line.title + " - update", line.text)
    store.upsert_items([news(follow_up, "tesla-2", category="technology")], seen_at=NOW + HOUR)
    result = cluster_category(store, "technology", now=NOW + HOUR, config=CONFIG)
    assert (result.grown, result.updated) == ((created,), ())
    (view,) = clustering.stories(store, "technology", since=TODAY)
    assert (view.article_count, view.outlet_count, view.updated) == (2, 1, False)


def test_top_stories_rank_by_outlets_then_recency_within_one_category(store: Store) -> None:
    store.upsert_items(
        [news(line, f"fed{n}", at=NOW - 5 * HOUR) for n, line in enumerate(H.FED)]
        + [news(line, f"nv{n}", at=NOW - HOUR) for n, line in enumerate(H.NVIDIA)]
        + [news(H.SINGLES[0], "rally", at=NOW)]
        + [news(H.SINGLES[1], "housing", at=NOW - 30 * HOUR)]
        + [news(H.FINAL[0], "final", at=NOW, category="sports")],
        seen_at=NOW,
    )
    for category in ("finance", "sports"):
        cluster_category(store, category, now=NOW, config=CONFIG)

    top = top_stories(store, "finance", since=TODAY, limit=3)
    assert [v.outlet_count for v in top] == [3, 2, 1]
    assert top[0].title in {line.title for line in H.FED}
    assert top[2].title == H.SINGLES[0].title  # the newest single beats the older one
    assert {a.outlet for a in top[1].articles} == {"reuters", "cnbc"}
    assert top[0].score > top[1].score > top[2].score
    assert len(top_stories(store, "finance", since=TODAY, limit=10)) == 4
    assert [v.title for v in top_stories(store, "sports", since=TODAY, limit=10)] == [
        H.FINAL[0].title
    ]
    assert top_stories(store, "finance", since=NOW + HOUR, limit=10) == []
    everything = clustering.stories(store, None, since=TODAY)
    assert [v.category for v in everything] == ["finance"] * 4 + ["sports"]


def test_beside_a_story_told_by_thirteen_outlets_a_single_is_no_top_story(store: Store) -> None:
    fed = H.FED[0]
    wide = [news(H.Line("fed", f"Outlet {n}", fed.title, fed.text), f"fed{n}") for n in range(13)]
    store.upsert_items([*wide, news(H.SINGLES[0], "rally")], seen_at=NOW)
    cluster_category(store, "finance", now=NOW, config=CONFIG)

    (top,) = top_stories(store, "finance", since=TODAY, limit=5)
    assert (top.title, top.outlet_count) == (fed.title, 13)
    listed = clustering.stories(store, "finance", since=TODAY)  # the single is still a story
    assert [v.title for v in listed] == [fed.title, H.SINGLES[0].title]


def test_articles_outside_the_window_are_not_clustered(store: Store) -> None:
    old = news(H.FED[0], "old", at=NOW - timedelta(days=3))
    store.upsert_items([old], seen_at=NOW)
    result = cluster_category(store, "finance", now=NOW, config=CONFIG)
    assert (result.articles, result.created) == (0, ())
    assert story_of(store, old.headline.url) is None


def test_a_clustering_that_raced_another_process_is_redone(
    store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.upsert_items([news(line, f"fed{n}") for n, line in enumerate(H.FED)], seen_at=NOW)
    real_cluster = plan_module.cluster_reports
    calls = 0

    def cluster_while_another_process_writes(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        result = real_cluster(*args, **kwargs)
        if calls == 1:  # between our read and our write, another process clusters
            with open_store(db_url) as other:
                monkeypatch.setattr(plan_module, "cluster_reports", real_cluster)
                cluster_category(other, "finance", now=NOW, config=CONFIG)
                monkeypatch.setattr(
                    plan_module, "cluster_reports", cluster_while_another_process_writes
                )
        return result

    monkeypatch.setattr(plan_module, "cluster_reports", cluster_while_another_process_writes)
    result = cluster_category(store, "finance", now=NOW, config=CONFIG)

    assert calls == 2
    assert (result.assigned, result.created) == (0, ())
    with store.engine.connect() as conn:
        assert conn.execute(select(stories.c.id)).scalars().all() != []
        assert len(conn.execute(select(stories.c.id)).scalars().all()) == 1


def test_concurrent_clusterings_of_a_category_make_each_story_once(db_url: str) -> None:
    with open_store(db_url) as first:
        lines = H.FED + H.QUAKE + H.SINGLES
        first.upsert_items([news(line, f"a{n}") for n, line in enumerate(lines)], seen_at=NOW)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with open_store(db_url) as s:
                cluster_category(s, "finance", now=NOW, config=CONFIG)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with open_store(db_url) as s:
        views = clustering.stories(s, "finance", since=TODAY)
    assert len(views) == 2 + len(H.SINGLES)
    assert sum(v.article_count for v in views) == len(lines)
    assert all(v.article_count == len(v.articles) for v in views)


# Crawls


def test_a_failed_crawl_never_erases_a_good_text(store: Store) -> None:
    url = "https://example.com/story"
    store.upsert_items([item(url)], seen_at=NOW)
    article_id = only_article(store, url).id

    assert store.save_crawl(article_id, page(url, "The whole article."), at=NOW)
    assert not store.save_crawl(article_id, page(url, error="timeout after 20 s"), at=NOW + HOUR)
    assert not store.save_crawl(article_id, page(url, ""), at=NOW + HOUR)

    kept = only_article(store, url)
    assert (kept.has_text, kept.crawl_status) == (True, "ok")
    assert kept.text_hash == content_hash("The whole article.")
    assert store.article_text(article_id) == "The whole article."

    assert store.save_crawl(article_id, page(url, "A corrected article."), at=NOW + HOUR)
    assert store.article_text(article_id) == "A corrected article."


def test_without_a_text_the_latest_crawl_attempt_says_why(store: Store) -> None:
    url, pdf = "https://example.com/story", "https://example.com/report.pdf"
    store.upsert_items([item(url), item(pdf)], seen_at=NOW)
    article_id = only_article(store, url).id

    store.save_crawl(article_id, page(url, error="HTTP 503"), at=NOW)
    assert (only_article(store, url).crawl_status, store.article_text(article_id)) == (
        "error",
        None,
    )
    store.save_crawl(article_id, page(url, ""), at=NOW)
    assert only_article(store, url).crawl_status == "empty"

    store.save_crawl(only_article(store, pdf).id, page(pdf, "Annual report.", kind="pdf"), at=NOW)
    assert (only_article(store, pdf).crawl_status, only_article(store, pdf).has_text) == (
        "pdf",
        True,
    )
    with pytest.raises(StoreError, match="no article"):
        store.save_crawl(10_000, page(url, "text"))


# Summaries


def test_an_unchanged_article_is_never_summarized_twice(store: Store) -> None:
    url, copy = "https://example.com/story", "https://syndicated.example/copy"
    store.upsert_items([item(url, category="finance"), item(copy, category="finance")], seen_at=NOW)
    article, duplicate = only_article(store, url).id, only_article(store, copy).id
    body = "The Federal Reserve cut rates."
    store.save_crawl(article, page(url, body), at=NOW)
    store.save_crawl(duplicate, page(copy, body), at=NOW)
    key = content_hash(body)

    assert store.find_summary(key, "extractive") is None
    assert store.save_summary(article, key, summary("First"), at=NOW)
    assert not store.save_summary(duplicate, key, summary("Second"), at=NOW + HOUR)
    assert store.find_summary(key, "extractive") == summary("First")
    assert store.find_summary(key, "llm:gpt-4o-mini") is None

    llm = summary("By the model", by="llm:gpt-4o-mini", tokens=100)
    assert store.save_summary(article, key, llm, at=NOW + HOUR)
    assert store.find_summary(key, "llm:gpt-4o-mini") == llm
    # The latest summary shows, also on the other article with the same text.
    assert only_article(store, url).summary == llm
    assert only_article(store, copy).summary == llm

    cluster_category(store, "finance", now=NOW, config=CONFIG)
    (view,) = [
        v for v in clustering.stories(store, "finance", since=TODAY) if v.articles[0].url == url
    ]
    assert view.articles[0].summary == llm
    with pytest.raises(StoreError, match="no article"):
        store.save_summary(10_000, "x" * 64, summary())


def test_tokens_used_adds_up_the_summaries_since_a_time(store: Store) -> None:
    store.upsert_items([item("https://example.com/a")], seen_at=NOW)
    article = only_article(store, "https://example.com/a").id
    assert store.tokens_used(TODAY) == 0
    store.save_summary(article, "h1", summary(by="llm:m", tokens=100), at=NOW - 24 * HOUR)
    store.save_summary(article, "h2", summary(by="llm:m", tokens=40), at=NOW)
    store.save_summary(article, "h3", summary(by="extractive"), at=NOW)
    assert store.tokens_used(TODAY) == 40 + 20
    assert store.tokens_used(NOW - 48 * HOUR) == 100 + 50 + 40 + 20


def test_an_article_is_found_by_any_variant_of_its_url(store: Store) -> None:
    store.upsert_items([item("https://example.com/story?id=7")], seen_at=NOW)
    found = store.article_by_url("https://EXAMPLE.com/story?utm_source=x&id=7#top")
    assert found is not None and found.url == "https://example.com/story?id=7"
    assert found.outlet == "example news"
    assert store.article_by_url("https://example.com/other") is None
    assert store.article_by_url("not a url") is None

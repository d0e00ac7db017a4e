"""The `digest` command end to end: a real subprocess, the local news web, a SQLite file.

DuckDuckGo is scripted at the `ddgs.DDGS` class (tests/fake_ddgs.py); everything after it is real.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.configs import feed, write_config
from tests.conftest import run_cli
from tests.fake_ddgs import calls, write_script
from tests.newsweb import ARTICLES, NewsWeb, Route, render_rss

pytestmark = pytest.mark.slow

TECH = [a for a in ARTICLES if a.category == "technology"]
WORLD = [a for a in ARTICLES if a.category == "world"]


def news_row(web: NewsWeb, path: str, title: str, source: str = "Example News") -> dict:
    return {
        "date": datetime.now(UTC).isoformat(),
        "title": title,
        "body": f"Snippet of {title}",
        "url": web.url(path),
        "image": web.url("/image.png"),
        "source": source,
    }


@pytest.fixture
def workdir(tmp_path: Path, threaded_news_web: NewsWeb) -> Path:
    web = threaded_news_web
    feeds = [
        feed(web.url("/feeds/technology.rss")),
        feed(web.url("/feeds/world.atom"), "world"),
        feed(web.url("/feeds/broken.xml"), "world"),
    ]
    return write_config(
        tmp_path, database={"url": "sqlite:///data/digest.db"}, sources={"feeds": feeds}, crawl=None
    )


@pytest.fixture
def script(workdir: Path, threaded_news_web: NewsWeb) -> Path:
    web = threaded_news_web
    return write_script(
        workdir / "ddgs.json",
        news={
            "technology news": [news_row(web, a.path, a.title) for a in TECH[:2]]
            + [news_row(web, "/hang.html", "A page that never answers")],
            "world news": [news_row(web, a.path, a.title, "Wire") for a in WORLD[:2]],
        },
        text={
            "chip plant water": [
                {"title": a.title, "href": web.url(a.path), "body": a.description} for a in ARTICLES
            ]
            + [{"title": "Hanging", "href": web.url("/hang.html"), "body": "never answers"}]
        },
    )


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("digest: error:")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_extract_returns_one_lede_per_url_in_order_despite_a_hanging_host(
    workdir, threaded_news_web
):
    web = threaded_news_web
    urls = [web.url(a.path) for a in ARTICLES[:4]] + [
        web.url("/hang.html"),
        web.url("/missing.html"),
    ]
    result = run_cli("extract", *urls, "--json", cwd=workdir)
    assert result.code == 0, result.stderr
    out = json.loads(result.stdout)
    assert [o["url"] for o in out] == urls
    for article, obj in zip(ARTICLES[:4], out[:4], strict=True):
        assert obj["full_content"][:60] == article.lede[:60]
        assert len(obj["full_content"]) <= 300
    assert out[4]["full_content"] == "" and out[4]["status"] == "timeout"
    assert out[5]["full_content"] == "" and out[5]["http_status"] == 404


def test_query_honours_k_and_enriches_every_result(workdir, script, threaded_news_web):
    result = run_cli(
        "query", "chip plant water", "--k", "3", "--json", cwd=workdir, ddgs_script=script
    )
    assert result.code == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["archive"] == []  # nothing collected yet
    out = found["live"]
    assert [o["title"] for o in out] == [a.title for a in ARTICLES[:3]]
    for article, obj in zip(ARTICLES[:3], out, strict=True):
        assert obj["full_content"][:60] == article.lede[:60]
        assert obj["snippet"] == article.description
    assert {"title", "url", "snippet", "full_content", "source", "published"} <= set(out[0])


def test_query_table_is_readable(workdir, script):
    result = run_cli("query", "chip plant water", "--k", "2", cwd=workdir, ddgs_script=script)
    assert result.code == 0, result.stderr
    assert ARTICLES[0].title[:30] in result.stdout
    assert ARTICLES[0].lede[:20] in result.stdout


def test_collect_stores_headlines_once_and_reports_the_broken_feed(workdir, script):
    first = run_cli("collect", cwd=workdir, ddgs_script=script)
    assert first.code == 0, first.stderr
    assert "broken.xml" in first.stdout and "partial" in first.stdout
    db = workdir / "data" / "digest.db"
    urls = [u for (u,) in rows(db, "select url from articles")]
    # technology: 2 articles + 1 hanging page from DuckDuckGo, 4 from RSS (2 of them shared);
    # world: 2 from DuckDuckGo, 4 from Atom (2 shared).
    assert len(urls) == len(set(urls)) == 9
    with_lede = rows(db, "select count(*) from articles where lede != ''")[0][0]
    assert with_lede == 8  # every article page; the hanging one has none
    run = rows(db, "select status, counts, errors from runs")[0]
    assert run[0] == "partial"
    assert json.loads(run[1])["headlines"] == 9
    # The hanging page's host is counted, and `digest status` shows it.
    assert sum(json.loads(run[1])["failing_hosts"].values()) == 1
    status = json.loads(run_cli("status", "--json", cwd=workdir).stdout)
    assert list(status["failing_hosts"].values()) == [1]
    assert "broken.xml" in json.loads(run[2])[0]["source"]

    second = run_cli("collect", cwd=workdir, ddgs_script=script)
    assert second.code == 0, second.stderr
    assert rows(db, "select count(*) from articles")[0][0] == 9
    assert rows(db, "select count(*) from runs")[0][0] == 2
    assert rows(db, "select count(*) from feeds where etag is not null")[0][0] == 2


def test_news_reads_the_store_after_collect_and_goes_live_when_asked(workdir, script):
    assert run_cli("collect", cwd=workdir, ddgs_script=script).code == 0
    searched = len(calls(script))
    result = run_cli("news", "technology", "--json", cwd=workdir, ddgs_script=script)
    assert result.code == 0, result.stderr
    assert len(calls(script)) == searched  # answered from the store
    out = json.loads(result.stdout)
    titles = {o["title"] for o in out}
    assert {a.title for a in TECH[:2]} <= titles
    by_title = {o["title"]: o for o in out}
    assert by_title[TECH[0].title]["full_content"][:60] == TECH[0].lede[:60]
    assert all(o["category"] == "technology" for o in out)

    live = run_cli(
        "news", "world", "--live", "--limit", "1", "--json", cwd=workdir, ddgs_script=script
    )
    assert live.code == 0, live.stderr
    assert len(json.loads(live.stdout)) == 1
    assert len(calls(script)) == searched + 1


def test_news_collects_live_when_nothing_was_collected_today(workdir, script):
    result = run_cli("news", "world", "--json", cwd=workdir, ddgs_script=script)
    assert result.code == 0, result.stderr
    assert {a.title for a in WORLD[:2]} <= {o["title"] for o in json.loads(result.stdout)}


def test_init_writes_a_starter_config_and_refuses_to_overwrite(tmp_path):
    first = run_cli("init", cwd=tmp_path)
    assert first.code == 0 and (tmp_path / "digest.toml").exists()
    assert "[sources]" in (tmp_path / "digest.toml").read_text()
    assert_one_line_error(run_cli("init", cwd=tmp_path), "already exists")
    assert run_cli("db", "upgrade", cwd=tmp_path).code == 0
    assert (tmp_path / "digest.db").exists()


@pytest.mark.parametrize(
    ("args", "config", "fragments"),
    [
        (["news", "technology"], "missing.toml", ["cannot read config", "missing.toml"]),
        (["news", "technology"], "bad.toml", ["unknown key 'sources.colour'"]),
        (["news", "gardening"], None, ["unknown category 'gardening'"]),
        (["extract", "not a url"], None, ["not a url"]),
        (["extract", "ftp://example.org/x"], None, ["ftp"]),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, args, config, fragments):
    (tmp_path / "bad.toml").write_text("[sources]\ncolour = 'blue'\n")
    prefix = ["--config", config] if config else []
    assert_one_line_error(run_cli(*prefix, *args, cwd=tmp_path), *fragments)


def test_loopback_is_blocked_by_default(tmp_path, threaded_news_web):
    url = threaded_news_web.url("/only-fetched-by-the-blocked-test.html")
    result = run_cli("extract", url, cwd=tmp_path)
    assert_one_line_error(result, "blocked", "127.0.0.1")
    assert threaded_news_web.hits_for(url) == 0  # refused before connecting


def test_unreachable_search_is_one_clear_line(workdir, tmp_path):
    offline = write_script(tmp_path / "offline.json", fail="offline")
    result = run_cli("query", "anything", cwd=workdir, ddgs_script=offline)
    assert_one_line_error(result, "web search for 'anything' (ddgs: ", "DNS lookup failed")


def test_a_category_of_many_slow_pages_gets_every_lede_one_batch_at_a_time(tmp_path):
    # One fast pass has 1.5 s: 20 pages that take 0.2 s each, two at a time on their host, do
    # not fit in one (5,000 headlines of a category in one pass gave 300 a lede). In batches of
    # `headlines_per_task`, each with its own budget, every page gets its lede.
    from tests.conftest import serve_in_thread

    web_cm = contextlib.contextmanager(serve_in_thread)(NewsWeb())
    with web_cm as web:
        for article in ARTICLES:
            web.set_latency(article.path, 0.2)
        folder = write_config(
            tmp_path,
            database={"url": "sqlite:///digest.db"},
            queue={"headlines_per_task": 4},
            sources={
                "ddg": False,
                "feeds": [feed(web.url(f"/feeds/many/{n}.rss")) for n in range(20)],
            },
            crawl=None,
        )
        result = run_cli("collect", cwd=folder)
    assert result.code == 0, result.stderr
    db = folder / "digest.db"
    assert rows(db, "select count(*) from articles")[0][0] == 20
    assert rows(db, "select count(*) from articles where lede != ''")[0][0] == 20


def test_collect_with_every_source_down_fails_but_records_the_run(tmp_path):
    offline = write_script(tmp_path / "offline.json", fail="offline")
    result = run_cli("collect", cwd=tmp_path, ddgs_script=offline)
    assert result.code == 1
    # DuckDuckGo down for every category is one failure, naming the first category's cause.
    assert "news search failed for all 6 categories (technology: " in result.stdout
    assert result.stdout.count("failed ddg:") == 1
    assert "nothing collected" in result.stderr
    status = rows(tmp_path / "digest.db", "select status from runs")
    assert status == [("failed",)]


# The archive: `digest search`, and `digest query` answering from it first


@pytest.fixture
def collected(workdir: Path, script: Path) -> Path:
    assert run_cli("collect", cwd=workdir, ddgs_script=script).code == 0
    return workdir


def test_search_finds_collected_stories_by_words_of_their_lede(collected):
    result = run_cli("search", "semiconductor Halvard", "--json", cwd=collected)
    assert result.code == 0, result.stderr
    (hit,) = json.loads(result.stdout)
    assert hit["title"] == ARTICLES[0].title
    assert hit["url"].endswith(ARTICLES[0].path)
    assert hit["category"] == "technology"
    assert hit["published"][:4].isdigit()
    marked = [hit["snippet"][a:b] for a, b in hit["highlights"]]
    assert {"semiconductor", "Halvard"} <= set(marked)

    table = run_cli("search", "dock", "workers", cwd=collected)  # no quotes needed
    assert table.code == 0, table.stderr
    assert WORLD[0].title in table.stdout and WORLD[0].path in table.stdout


def test_search_filters_by_category_and_date_and_explains_bad_input(collected):
    both = "dock OR semiconductor"
    out = json.loads(run_cli("search", both, "--json", cwd=collected).stdout)
    assert {h["category"] for h in out} == {"technology", "world"}
    only = run_cli("search", both, "--category", "world", "--json", cwd=collected)
    assert {h["category"] for h in json.loads(only.stdout)} == {"world"}
    future = run_cli("search", both, "--since", "2999-01-01", cwd=collected)
    assert future.code == 0 and "nothing in the archive matches" in future.stdout
    recent = run_cli("search", both, "--since", "2d", "--json", cwd=collected)
    assert len(json.loads(recent.stdout)) == len(out)

    assert_one_line_error(run_cli("search", "--", '-" "', cwd=collected), "nothing to search for")
    bad_date = run_cli("search", "dock", "--since", "last week", cwd=collected)
    assert bad_date.code == 2 and "YYYY-MM-DD" in bad_date.stderr


def test_query_answers_from_the_archive_first_then_live(collected, script):
    found = run_cli("query", "chip plant water", "--json", cwd=collected, ddgs_script=script)
    assert found.code == 0, found.stderr
    out = json.loads(found.stdout)
    assert out["archive"][0]["title"] == ARTICLES[0].title
    assert len(out["live"]) == 6

    before = len(calls(script))
    local = run_cli("query", "chip plant water", "--local", cwd=collected, ddgs_script=script)
    assert local.code == 0, local.stderr
    assert ARTICLES[0].title in local.stdout
    assert len(calls(script)) == before  # --local never goes to the web

    live = run_cli(
        "query", "chip plant water", "--live", "--json", cwd=collected, ddgs_script=script
    )
    assert "archive" not in json.loads(live.stdout)


def test_query_keeps_the_archive_answer_when_the_live_search_fails(collected, tmp_path):
    offline = write_script(tmp_path / "offline.json", fail="offline")
    result = run_cli("query", "chip plant water", cwd=collected, ddgs_script=offline)
    assert result.code == 0, result.stderr
    assert ARTICLES[0].title in result.stdout
    assert "live search failed" in result.stdout and "DNS lookup failed" in result.stdout
    nothing = run_cli("query", "zebra crossing", cwd=collected, ddgs_script=offline)
    assert_one_line_error(nothing, "web search for 'zebra crossing' (ddgs: ", "DNS lookup failed")


def test_titles_that_look_like_terminal_markup_are_printed_as_they_are(workdir, tmp_path):
    hostile = "Breaking [/dim] news [bold red]now[/] and [link=http://x]"
    script = write_script(
        tmp_path / "hostile.json",
        text={"markup": [{"title": hostile, "href": "http://10.0.0.1/", "body": "[/]"}]},
    )
    result = run_cli("query", "markup", "--live", cwd=workdir, ddgs_script=script)
    assert result.code == 0, result.stderr
    # Before escaping, rich raised MarkupError on "[/dim]" and the command crashed.
    assert "[/dim]" in result.stdout and "[bold red]" in result.stdout


def test_status_prints_the_ledger_as_counts_per_state_and_json_as_before(workdir, script):
    assert run_cli("collect", cwd=workdir, ddgs_script=script).code == 0
    assert run_cli("subscribers", "add", "reader@example.org", cwd=workdir).code == 0
    assert run_cli("publish", cwd=workdir).code == 0
    result = run_cli("status", cwd=workdir)
    assert result.code == 0, result.stderr
    assert "{'" not in result.stdout and "'}" not in result.stdout  # no Python dict
    assert "deliveries: 0 pending, 0 sending, 1 sent, 0 failed, 0 skipped" in result.stdout
    ledger = json.loads(run_cli("status", "--json", cwd=workdir).stdout)["deliveries"]
    assert ledger == {"pending": 0, "sending": 0, "sent": 1, "failed": 0, "skipped": 0}


@pytest.fixture
def todays_feed(threaded_news_web: NewsWeb) -> str:
    """A feed of the technology articles published today (the default feeds are a year old)."""
    web = threaded_news_web
    now = datetime.now(UTC).replace(microsecond=0)
    articles = [replace(a, published=now) for a in TECH]
    path = "/feeds/technology-today.rss"
    web.add(Route(path, render_rss(web.url(""), "technology", articles), "application/rss+xml"))
    return web.url(path)


def test_news_with_duckduckgo_off_goes_live_through_the_feeds_only(tmp_path, todays_feed):
    write_config(
        tmp_path, sources={"ddg": False, "ddg_retries": None, "feeds": [feed(todays_feed)]}
    )
    offline = write_script(tmp_path / "offline.json", fail="offline")  # DDGS raises if called
    result = run_cli("news", "technology", "--json", cwd=tmp_path, ddgs_script=offline)
    assert result.code == 0, result.stderr
    assert {o["title"] for o in json.loads(result.stdout)} == {a.title for a in TECH}
    live = run_cli("news", "technology", "--live", cwd=tmp_path, ddgs_script=offline)
    assert live.code == 0 and TECH[0].title[:30] in live.stdout, live.stderr

    nothing = run_cli("news", "world", cwd=tmp_path, ddgs_script=offline)
    assert_one_line_error(nothing, "no source for category 'world'", "sources.ddg is false")
    assert calls(offline) == []  # DuckDuckGo was never asked

"""`digest feeds add|list|remove|import|export` end to end: the real command in a subprocess,
the local news web, a SQLite file; and `digest collect` reading the feeds they keep."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest

from tests.configs import feed, write_config
from tests.conftest import run_cli
from tests.newsweb import ARTICLES, NewsWeb, Route

pytestmark = pytest.mark.slow

OPML = Path(__file__).resolve().parent / "opml"


@pytest.fixture
def workdir(tmp_path: Path, threaded_news_web: NewsWeb) -> Path:
    """A deployment with DuckDuckGo off and one feed in its config file."""
    config_feed = feed(threaded_news_web.url("/feeds/technology.rss"))
    return write_config(
        tmp_path,
        database={"url": "sqlite:///digest.db"},
        sources={"ddg": False, "feeds": [config_feed]},
    )


def cli(workdir: Path, *args: str, ok: bool = True, timeout: float = 120):
    result = run_cli(*args, cwd=workdir, timeout=timeout)
    if ok:
        assert result.code == 0, result.stderr
        assert result.stderr == "", result.stderr
    return result


def one_line_error(result, *fragments: str) -> str:
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("digest: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def listed(workdir: Path) -> list[dict]:
    return json.loads(cli(workdir, "feeds", "list", "--json").stdout)


def rows(workdir: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(workdir / "digest.db") as conn:
        return conn.execute(sql).fetchall()


# --- add, list, remove -------------------------------------------------------------------------


def test_adding_a_site_subscribes_to_the_feed_its_page_advertises(workdir, threaded_news_web):
    web = threaded_news_web
    page = web.url("/site/broken-first.html")  # a broken RSS link first, then an Atom feed
    added = cli(workdir, "feeds", "add", page, "--category", "World", "--name", "The Ledger")
    atom = web.url("/feeds/world.atom")
    assert f"added {atom} to world: The Ledger" in " ".join(added.stdout.split())

    config_feed, db_feed = listed(workdir)
    assert config_feed["stored_in"] == "config" and config_feed["source"] == "config"
    assert {
        k: db_feed[k] for k in ("url", "category", "name", "stored_in", "source", "site_url")
    } == {
        "url": atom,
        "category": "world",
        "name": "The Ledger",
        "stored_in": "db",
        "source": "cli",
        "site_url": page,
    }
    assert db_feed["added_at"] and db_feed["last_checked_at"] is None  # not fetched by collect yet

    # The same feed by another spelling, or a feed of the config file, is not added twice.
    twin = atom + "?utm_source=newsletter#top"
    one_line_error(cli(workdir, "feeds", "add", twin, ok=False), "is subscribed already")
    one_line_error(
        cli(workdir, "feeds", "add", web.url("/site/"), ok=False),  # advertises the config's feed
        "/feeds/technology.rss is a feed of the config file already",
    )
    assert len(listed(workdir)) == 2


def test_without_a_category_the_feeds_own_is_used_or_one_is_asked_for(workdir, threaded_news_web):
    web = threaded_news_web
    own = web.add(
        Route(
            "/feeds/own-category.rss",
            b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Wire</title>
<category>Politics</category><category>World</category>
<item><title>One</title><link>http://127.0.0.1/one</link></item></channel></rss>""",
            content_type="application/rss+xml",
        )
    )
    cli(workdir, "feeds", "add", web.url(own.path))
    assert listed(workdir)[-1]["category"] == "world"

    asked = cli(workdir, "feeds", "add", web.url("/feeds/many/1.rss"), ok=False)
    one_line_error(asked, "it names none", "give --category, one of technology, world")
    unknown = cli(
        workdir, "feeds", "add", web.url("/feeds/many/1.rss"), "--category", "cooking", ok=False
    )
    one_line_error(unknown, "unknown category 'cooking' (configured: technology, world)")
    assert len(listed(workdir)) == 2


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/site/none.html", "the page advertises none"),
        ("/missing.html", "not found: "),
        ("/image.png", "is not a feed or a web page: it is image/png"),
    ],
)
def test_a_url_without_a_feed_is_one_clear_line(workdir, threaded_news_web, path, fragment):
    result = cli(
        workdir, "feeds", "add", threaded_news_web.url(path), "--category", "world", ok=False
    )
    one_line_error(result, fragment)


def test_loopback_is_refused_unless_the_config_allows_it(tmp_path, threaded_news_web):
    write_config(tmp_path, fetch=None)  # no allowed_networks: the guard's default
    result = run_cli("feeds", "add", threaded_news_web.url("/site/"), cwd=tmp_path)
    one_line_error(result, "blocked address", "fetch.allow_private_networks")


def test_removing_a_database_feed_and_refusing_the_config_files(workdir, threaded_news_web):
    web = threaded_news_web
    url = web.url("/feeds/world.atom")
    cli(workdir, "feeds", "add", url, "--category", "world")
    cli(workdir, "collect")
    assert rows(workdir, "select count(*) from feeds") == [(2,)]

    removed = cli(workdir, "feeds", "remove", url + "?utm_campaign=x")
    assert f"removed {url} (world)" in removed.stdout
    assert [f["url"] for f in listed(workdir)] == [web.url("/feeds/technology.rss")]
    assert rows(workdir, "select url from feeds") == [(web.url("/feeds/technology.rss"),)]

    config_feed = cli(workdir, "feeds", "remove", web.url("/feeds/technology.rss"), ok=False)
    one_line_error(config_feed, "is a feed of the config file: remove it from [[sources.feeds]] in")
    gone = cli(workdir, "feeds", "remove", url, ok=False)
    one_line_error(gone, f"no feed {url} in the database")
    one_line_error(cli(workdir, "feeds", "remove", "not a url", ok=False), "not an absolute")


def test_the_list_shows_each_feeds_health(workdir, threaded_news_web):
    broken = threaded_news_web.url("/feeds/broken.xml")
    cli(workdir, "feeds", "add", threaded_news_web.url("/feeds/world.atom"), "--category", "world")
    opml = workdir / "broken.opml"
    opml.write_text(
        '<opml version="2.0"><body><outline text="World">'
        f'<outline text="Broken" xmlUrl={quoteattr(broken)}/></outline></body></opml>'
    )
    cli(workdir, "feeds", "import", str(opml))
    assert run_cli("collect", cwd=workdir).code == 0  # partial: one feed failed

    by_url = {f["url"]: f for f in listed(workdir)}
    assert by_url[broken]["errors_in_a_row"] == 1
    assert "malformed" in by_url[broken]["last_error"]
    assert by_url[broken]["last_ok_at"] is None
    good = by_url[threaded_news_web.url("/feeds/world.atom")]
    assert good["errors_in_a_row"] == 0 and good["last_ok_at"] and good["title"]
    table = cli(workdir, "feeds", "list").stdout
    assert "1 failure(s) in a row" in table and "3 feed(s), 1 failing" in table
    status = json.loads(cli(workdir, "status", "--json").stdout)
    assert [f["url"] for f in status["failing_feeds"]] == [broken]


# --- import and export -------------------------------------------------------------------------


def test_importing_a_feedly_export_reports_what_it_did(workdir):
    first = cli(workdir, "feeds", "import", str(OPML / "feedly.opml"))
    out = " ".join(first.stdout.split())
    assert "imported 3, 0 duplicate(s), 2 skipped" in out
    assert "technology: 2" in out and "world: 1" in out
    assert "folders that name no configured category: World news (1), Cooking (1)" in out
    assert "give --category" in out
    imported = [f for f in listed(workdir) if f["stored_in"] == "db"]
    assert [(f["name"], f["category"], f["source"]) for f in imported] == [
        ("Ars Technica", "technology", "opml"),
        ("Python Insider", "technology", "opml"),
        ("Al Jazeera – Breaking News", "world", "opml"),
    ]

    again = cli(workdir, "feeds", "import", str(OPML / "feedly.opml"), "--category", "world")
    out = " ".join(again.stdout.split())
    assert "imported 2, 3 duplicate(s), 0 skipped" in out  # the skipped two go in --category now
    assert len(listed(workdir)) == 1 + 5


@pytest.mark.parametrize("name", ["miniflux.opml", "freshrss.opml"])
def test_other_readers_exports_import(workdir, name):
    result = cli(workdir, "feeds", "import", str(OPML / name), "--category", "world")
    assert "imported " in result.stdout
    assert all(f["source"] == "opml" for f in listed(workdir)[1:])


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b'<opml version="2.0"><body><outline text="World">', "is not well-formed XML"),
        (
            b'<!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
            b'<opml><body><outline text="&b;" xmlUrl="https://a.example/rss"/></body></opml>',
            "declares an entity ('a')",
        ),
        (
            b'<!DOCTYPE opml [<!ENTITY s SYSTEM "file:///etc/hostname">]>'
            b'<opml><body><outline text="&s;" xmlUrl="https://a.example/rss"/></body></opml>',
            "declares an external entity ('s')",
        ),
        (b"<opml><head/><body><outline text='empty folder'/></body></opml>", "holds no feeds"),
    ],
    ids=["broken", "entity-bomb", "external-entity", "no-feeds"],
)
def test_a_file_that_cannot_be_read_imports_nothing(workdir, content, fragment):
    cli(workdir, "db", "upgrade")  # `feeds list` reads: it makes no database
    bad = workdir / "bad.opml"
    bad.write_bytes(content)
    one_line_error(cli(workdir, "feeds", "import", str(bad), ok=False), str(bad), fragment)
    assert len(listed(workdir)) == 1
    one_line_error(
        cli(workdir, "feeds", "import", str(workdir / "nowhere.opml"), ok=False), "cannot read"
    )


def test_an_export_imports_into_another_deployment_as_the_same_feeds(workdir, tmp_path):
    cli(workdir, "feeds", "import", str(OPML / "miniflux.opml"), "--category", "world")
    target = workdir / "out" / "feeds.opml"
    target.parent.mkdir()
    wrote = cli(workdir, "feeds", "export", str(target))
    assert f"wrote 5 feed(s) in 2 categories to {target}" in wrote.stdout
    printed = cli(workdir, "feeds", "export").stdout
    assert printed.startswith('<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0">')

    def undated(text: str) -> list[str]:
        return [line for line in text.splitlines() if "<dateCreated>" not in line]

    assert undated(printed) == undated(target.read_text(encoding="utf-8"))

    other = write_config(tmp_path / "other", database={"url": "sqlite:///digest.db"})
    result = cli(other, "feeds", "import", str(target))
    assert "imported 5, 0 duplicate(s), 0 skipped" in " ".join(result.stdout.split())
    mine = {(f["url"], f["category"]) for f in listed(workdir)}
    theirs = {(f["url"], f["category"]) for f in listed(other)}
    assert theirs == mine


# --- collecting from the database's feeds -------------------------------------------------------


def many_feeds_opml(web: NewsWeb, count: int) -> str:
    """An export of `count` feeds of the news web, half in a Technology folder, half in World."""
    folders = {"Technology": [], "World": []}
    for n in range(count):
        url = quoteattr(web.url(f"/feeds/many/{n}.rss"))
        folder = "Technology" if n % 2 == 0 else "World"
        folders[folder].append(f'<outline type="rss" text="Local feed {n}" xmlUrl={url}/>')
    body = "".join(
        f'<outline text="{name}" title="{name}">{"".join(items)}</outline>'
        for name, items in folders.items()
    )
    head = '<?xml version="1.0"?><opml version="1.0"><head><title>many</title></head>'
    return f"{head}<body>{body}</body></opml>"


def test_200_imported_feeds_are_collected(tmp_path, threaded_news_web):
    web = threaded_news_web
    workdir = write_config(
        tmp_path, database={"url": "sqlite:///digest.db"}, sources={"ddg": False}
    )
    opml = workdir / "many.opml"
    opml.write_text(many_feeds_opml(web, 200), encoding="utf-8")
    hits = web.total_hits

    started = time.monotonic()
    imported = cli(workdir, "feeds", "import", str(opml))
    import_took = time.monotonic() - started
    assert "imported 200, 0 duplicate(s), 0 skipped" in " ".join(imported.stdout.split())
    assert web.total_hits == hits  # an import fetches nothing

    started = time.monotonic()
    collected = cli(workdir, "collect")
    collect_took = time.monotonic() - started
    assert "collect run 1: ok" in collected.stdout
    origins = rows(
        workdir,
        "select category, count(distinct origin) from articles"
        " where origin like 'feed:%/feeds/many/%' group by category order by category",
    )
    assert origins == [("technology", 100), ("world", 100)]
    assert all(f["last_ok_at"] and f["errors_in_a_row"] == 0 for f in listed(workdir))
    print(f"200 feeds: import {import_took:.2f} s, collect {collect_took:.2f} s")  # -s shows it


def test_news_goes_live_through_database_feeds_alone(tmp_path, threaded_news_web):
    workdir = write_config(
        tmp_path, database={"url": "sqlite:///digest.db"}, sources={"ddg": False}
    )
    nothing = run_cli("news", "world", cwd=workdir)
    one_line_error(nothing, "no source for category 'world'", "nor a feed added with digest feeds")
    todays = threaded_news_web.url("/feeds/many/7.rss")  # its entry is dated now
    cli(workdir, "feeds", "add", todays, "--category", "world")
    news = json.loads(cli(workdir, "news", "world", "--json").stdout)
    assert [(n["title"], n["category"]) for n in news] == [
        (f"{ARTICLES[7 % len(ARTICLES)].title} (feed 7)", "world")
    ]


def test_the_feeds_commands_and_collect_work_on_postgresql(tmp_path, threaded_news_web):
    from tests.storefixtures import PG_HOST, PG_PORT, postgres_reachable
    from tests.test_postgres_cli import postgres_schema, schema_url

    if not postgres_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}")
    web = threaded_news_web
    with postgres_schema() as schema:
        workdir = write_config(
            tmp_path, database={"url": schema_url(schema)}, sources={"ddg": False}
        )
        opml = workdir / "some.opml"
        opml.write_text(many_feeds_opml(web, 10), encoding="utf-8")
        assert "imported 10," in cli(workdir, "feeds", "import", str(opml)).stdout
        cli(workdir, "feeds", "add", web.url("/site/"), "--category", "technology")
        one_line_error(
            cli(workdir, "feeds", "add", web.url("/feeds/many/3.rss?utm_source=x"), ok=False),
            "is subscribed already",
        )
        assert "collect run 1: ok" in cli(workdir, "collect").stdout
        feeds = listed(workdir)
        assert len(feeds) == 11 and all(f["last_ok_at"] for f in feeds)
        cli(workdir, "feeds", "remove", web.url("/feeds/many/0.rss"))
        assert len(listed(workdir)) == 10


def test_a_cycle_whose_feeds_are_all_in_the_database_has_sources():
    from digest.config import parse_config
    from digest.daemon import judge_cycle
    from digest.jobs.collect import CollectReport

    config = parse_config({"sources": {"ddg": False}})
    nothing_new = CollectReport(run_id=1, status="ok")  # e.g. every feed answered 304
    (failure,), _ = judge_cycle(config, collect=nothing_new)
    assert failure.startswith("collect failed: no sources configured")
    assert judge_cycle(config, collect=replace(nothing_new, feeds=3)) == ([], [])

"""A newcomer's first run (issue 39), as the real `digest` process meets it on a machine with
no internet: DuckDuckGo unreachable (scripted at the DDGS class, as `ddgs_script` does for
every CLI test). The run still leaves an edition page that says why nothing came in, says the
search engine's failure once, and ends with the next step; with a feed and `sources.ddg =
false`, DuckDuckGo is not mentioned at all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.configs import feed, write_config
from tests.conftest import CliResult, run_cli
from tests.fake_ddgs import write_script

CATEGORIES = ["technology", "world", "finance"]


def offline(folder: Path) -> Path:
    """DuckDuckGo as a machine without a network meets it: every search fails at DNS."""
    return write_script(folder / "offline.json", fail="offline")


def search_lines(result: CliResult) -> list[str]:
    """The lines of a run's output that tell of DuckDuckGo (the terminal may wrap a long one:
    a line is counted where it starts)."""
    text = result.stdout + result.stderr
    return [line for line in text.splitlines() if "ddg:news" in line or "DuckDuckGo" in line]


@pytest.mark.slow
def test_an_offline_first_run_writes_an_edition_page_and_ends_with_the_next_step(tmp_path):
    write_config(tmp_path, sources={"categories": CATEGORIES})
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=offline(tmp_path))

    # Non-zero: a cron job or script must learn that nothing was collected and none was sent.
    assert result.code == 1, result.stdout + result.stderr
    # The search engine failing for all three categories is one line, with its reason.
    (told,) = search_lines(result)
    assert told.startswith("failed ddg:news: news search failed for all 3 categories")
    assert "DNS lookup failed" in result.stdout and "offline" in result.stdout
    # The archive has today's edition, saying why it is empty; no email of nothing went out.
    page = (tmp_path / "site" / "latest.html").read_text()
    assert "Nothing could be collected for this edition: every source failed." in page
    assert "is this machine offline?" in page
    assert not list(tmp_path.glob("outbox/*.eml"))
    # The last word is the next step, in one line, naming commands that exist.
    last = result.stderr.splitlines()[-1]
    assert last.startswith("digest: no source answered: add feeds with"), result.stderr
    assert "sources.ddg = false" in last
    named = re.findall(r'"digest ([a-z ]+)(?: URL)?"', last)
    assert named == ["feeds add", "init", "demo"]
    for command in named:
        assert run_cli(*command.split(), "--help", cwd=tmp_path).code == 0, command


@pytest.mark.slow
def test_init_writes_a_config_that_runs_offline_once_a_feed_is_added(tmp_path, threaded_news_web):
    """`digest init` asks nothing; its config, with DuckDuckGo off as it says to do offline and
    one feed added, gives a run with no DuckDuckGo failure at all."""
    init = run_cli("init", cwd=tmp_path)  # stdin is not a terminal: nothing can be asked
    assert init.code == 0, init.stderr
    config = tmp_path / "digest.toml"
    text = config.read_text()
    assert "ddg = true" in text and "false" in text.split("ddg = true", 1)[1].split("\n", 1)[0]
    # What a test must change besides: the local news web is on loopback, no browser here.
    text = text.replace("ddg = true", "ddg = false").replace('mode = "auto"', 'mode = "http"')
    text = text.replace("allow_private_networks = false", "allow_private_networks = true")
    config.write_text(text)
    url = threaded_news_web.url("/feeds/technology.rss")
    added = run_cli("feeds", "add", url, "--category", "technology", cwd=tmp_path)
    assert added.code == 0, added.stderr

    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=offline(tmp_path))
    assert result.code == 0, result.stdout + result.stderr
    assert search_lines(result) == []
    assert "DNS lookup failed" not in result.stdout + result.stderr
    assert "Nothing could be collected" not in (tmp_path / "site" / "latest.html").read_text()


@pytest.mark.slow
def test_with_a_feed_an_unreachable_duckduckgo_is_one_line(tmp_path, threaded_news_web):
    url = threaded_news_web.url("/feeds/technology.rss")
    write_config(tmp_path, sources={"categories": CATEGORIES, "feeds": [feed(url)]})
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=offline(tmp_path))
    assert result.code == 0, result.stdout + result.stderr
    (told,) = search_lines(result)
    assert "news search failed for all 3 categories" in told
    assert result.stderr.splitlines()[-1] == "digest: warning: collect partial: 1 source failed"


# -- the pieces, fast ----------------------------------------------------------------------------


def test_duckduckgo_failing_for_every_category_is_one_failure_with_the_first_reason():
    from digest.jobs.collect import one_search_failure
    from digest.models import Failure

    feed_down = Failure("feed:https://example.org/rss", "HTTP 503")
    failures = [
        Failure(f"ddg:news:{c}", f"news search for '{c}' (ddgs: bing) failed: DNS lookup failed")
        for c in CATEGORIES
    ]
    (told, down) = one_search_failure([*failures[:2], feed_down, failures[2]], CATEGORIES)
    assert told == Failure(
        "ddg:news", "news search failed for all 3 categories (technology: DNS lookup failed)"
    )
    assert down == feed_down
    # Some categories answered: each failure is its own line, as it was.
    assert one_search_failure(failures[:2], CATEGORIES) == failures[:2]
    # One category: its line names it already.
    assert one_search_failure(failures[:1], CATEGORIES[:1]) == failures[:1]


def test_the_browser_is_playwrights_download_else_the_systems_else_the_setting(
    tmp_path, monkeypatch
):
    from digest.crawl import browser

    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    monkeypatch.setattr(browser, "system_browser", lambda: "/usr/bin/chromium")
    system = ("/usr/bin/chromium", "the system's browser")
    playwright = (None, "Playwright's Chromium")
    # No download: the system's first (Playwright's last: its folder may be elsewhere).
    assert browser.browser_candidates(None) == [system, playwright]
    (tmp_path / "chromium-1200").mkdir()
    assert browser.playwright_download() == tmp_path / "chromium-1200"
    assert browser.browser_candidates(None) == [playwright, system]
    # A path set by hand is the one choice.
    assert browser.browser_candidates("/opt/chrome") == [("/opt/chrome", "crawl.executable_path")]


def test_init_names_the_browser_it_found_and_keeps_the_defaults(tmp_path, monkeypatch):
    import tomllib

    from digest.commands import manage
    from digest.config import STARTER, Config, parse_config
    from digest.crawl import browser

    assert manage.STARTER_BROWSER in STARTER  # the line `starter` fills in
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    monkeypatch.setattr(browser, "system_browser", lambda: "/usr/lib/chromium/chromium")
    text, said = manage.starter()
    assert said == "deep crawl browser: the system's /usr/lib/chromium/chromium"
    assert '# executable_path = "/usr/lib/chromium/chromium"   # unset: the system' in text
    assert parse_config(tomllib.loads(text)).model_dump() == Config().model_dump()
    monkeypatch.setattr(browser, "system_browser", lambda: None)
    text, said = manage.starter()
    assert said.startswith("no browser found") and "apt-get install chromium" in text


@pytest.mark.slow
def test_the_demo_publishes_an_edition_of_synthetic_stories_in_its_own_folder(tmp_path):
    """`digest demo`: an edition to look at without internet, clearly not real news, and the
    user's own folder left alone."""
    result = run_cli("demo", cwd=tmp_path)
    assert result.code == 0, result.stdout + result.stderr
    page = (tmp_path / "digest-demo" / "site" / "latest.html").read_text()
    assert "digest demo (synthetic news)" in page
    # six articles, two events told by both outlets: four stories
    assert "4 stories in 2 categories" in page and "2 outlets" in page
    assert "The Harbour Post (demo)" in page and "Valley Wire (demo)" in page
    assert not (tmp_path / "digest.db").exists() and not (tmp_path / "site").exists()
    last = result.stdout.splitlines()[-1]
    assert last.startswith("demo edition (synthetic news): digest-demo/site/latest.html")

"""The deep path end to end: `collect`, then `deepen`, `stories`, `extract --deep` and
`query --deep` as a user runs them, against the local news web, Debian's Chromium and a local
OpenAI-compatible server."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.configs import feed, write_config
from tests.conftest import chromium_path, run_cli
from tests.fake_ddgs import write_script
from tests.newsweb import ARTICLES, NewsWeb

pytestmark = pytest.mark.slow

TECH = [a for a in ARTICLES if a.category == "technology"]


def setup(tmp_path: Path, web: NewsWeb, *, crawl: dict, llm_url: str | None = None) -> None:
    llm = {
        "base_url": llm_url,
        "model": "fake-model",
        "api_key_env": "TEST_LLM_KEY",
        "timeout": 5.0,
        "max_retries": 0,
    }
    write_config(
        tmp_path,
        sources={"feeds": [feed(web.url("/feeds/technology.rss"))]},
        crawl={"page_timeout": 20.0, **crawl},
        llm=llm if llm_url else None,
    )


def ddgs_script(tmp_path: Path, web: NewsWeb) -> Path:
    """Today's technology news: every technology article, and the chip-plant story told a second
    time by another outlet in its own words."""
    now = datetime.now(UTC).isoformat()
    chip = TECH[0]

    def row(title: str, url: str, source: str) -> dict:
        return {
            "date": now,
            "title": title,
            "body": "",
            "url": url,
            "image": None,
            "source": source,
        }

    rows = [row(a.title, web.url(a.path), "Example News") for a in TECH]
    wire = "Halvard Microsystems breaks ground on river-water chip plant"
    rows.insert(1, row(wire, web.url(chip.path) + "?edition=wire", "Wire Service"))
    text = [{"title": a.title, "href": web.url(a.path), "body": a.description} for a in TECH]
    return write_script(
        tmp_path / "ddgs.json", news={"technology news": rows}, text={"chip plant": text}
    )


def runs(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select kind, status, counts, errors from runs order by id").fetchall()


def test_deepen_in_the_browser_leaves_top_stories_summarized_without_an_llm(
    tmp_path, threaded_news_web
):
    web = threaded_news_web
    chromium = chromium_path()
    setup(tmp_path, web, crawl={"mode": "browser", "executable_path": chromium})
    script = ddgs_script(tmp_path, web)
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    deepened = run_cli("deepen", "--top", "3", cwd=tmp_path, ddgs_script=script)
    assert deepened.code == 0, deepened.stderr + deepened.stdout
    assert "crawl mode: browser" in deepened.stdout

    out = run_cli("stories", "--category", "technology", "--json", cwd=tmp_path)
    assert out.code == 0, out.stderr
    stories = json.loads(out.stdout)
    chip = next(s for s in stories if s["outlet_count"] == 2)
    assert chip["coverage"] == "Covered by 2 outlets"
    assert {o["outlet"] for o in chip["outlets"]} == {"Example News", "Wire Service"}
    top3 = sorted(stories, key=lambda s: -s["outlet_count"])[:3]
    for story in top3:
        assert story["summarizer"] == "extractive"
        assert len(story["summary"]) > 100 and story["brief_summary"]
    # The story's text is the article's own, not the page's boilerplate.
    assert TECH[0].lede[:40] in chip["summary"] or TECH[0].paragraphs[0][:40] in chip["summary"]
    kind, status, counts, _ = runs(tmp_path / "digest.db")[-1]
    assert (kind, status) == ("deepen", "ok")
    # Three stories: the chip plant (two outlets with the same text: summarized once, unless a
    # loaded machine made one render fall back to HTTP, giving a different text) and two more.
    assert json.loads(counts)["extractive"] >= 3

    again = run_cli("deepen", "--top", "3", cwd=tmp_path)
    assert again.code == 0
    counts = json.loads(runs(tmp_path / "digest.db")[-1][2])
    assert counts["summarized"] == 0 and counts["crawled"] == 0  # nothing read twice


def test_deepen_with_an_llm_records_tokens_and_falls_back_when_it_is_down(
    tmp_path, threaded_news_web, threaded_llm_server
):
    web, llm = threaded_news_web, threaded_llm_server
    setup(tmp_path, web, crawl={"mode": "http"}, llm_url=llm.url)
    script = ddgs_script(tmp_path, web)
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    result = run_cli("deepen", "--top", "2", cwd=tmp_path, env={"TEST_LLM_KEY": "k"})
    assert result.code == 0, result.stderr + result.stdout
    counts = json.loads(runs(tmp_path / "digest.db")[-1][2])
    assert counts["llm"] >= 2 and counts["tokens"] > 0 and counts["extractive"] == 0
    stories = json.loads(run_cli("stories", "--json", cwd=tmp_path).stdout)
    summarized = [s for s in stories if s["summarizer"]]
    assert summarized and all(s["summarizer"] == "llm:fake-model" for s in summarized)

    llm.always("error500")
    down = run_cli("deepen", "--top", "4", cwd=tmp_path, env={"TEST_LLM_KEY": "k"})
    assert down.code == 0, down.stderr
    _, status, counts, errors = runs(tmp_path / "digest.db")[-1]
    assert json.loads(counts)["extractive"] >= 1
    assert status == "partial"
    assert any(e["source"] == "llm" for e in json.loads(errors))
    assert "fell back to extractive" in down.stdout


def test_extract_deep_gives_text_summary_and_keywords(tmp_path, threaded_news_web):
    web = threaded_news_web
    setup(tmp_path, web, crawl={"mode": "http"})
    urls = [web.url(TECH[1].path), web.url("/missing.html")]
    result = run_cli("extract", *urls, "--deep", "--json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    first, missing = json.loads(result.stdout)
    assert first["url"] == urls[0] and first["summarizer"] == "extractive"
    assert TECH[1].paragraphs[0][:40] in first["text"]
    assert "cookie" not in first["text"].lower()
    assert first["summary"] and first["brief_summary"] and first["keywords"]
    assert missing["error"] and missing["text"] == ""


def test_extract_deep_of_endless_and_huge_pages_keeps_what_was_read_and_says_so(
    tmp_path, threaded_news_web
):
    web = threaded_news_web
    setup(tmp_path, web, crawl={"mode": "http", "max_page_bytes": 262144})
    urls = [web.url("/endless.html"), web.url("/one-line.html")]
    result = run_cli("extract", *urls, "--deep", "--json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    for page in json.loads(result.stdout):
        assert page["error"] is None and TECH[0].lede[:40] in page["text"]
        assert "262144 bytes" in page["note"] and "crawl.max_page_bytes" in page["note"]
    text = run_cli("extract", urls[0], "--deep", cwd=tmp_path)
    assert "note: read the first 262144 bytes" in text.stdout


def test_query_deep_answers_from_the_sources_with_citations(
    tmp_path, threaded_news_web, threaded_llm_server
):
    web, llm = threaded_news_web, threaded_llm_server
    setup(tmp_path, web, crawl={"mode": "http"}, llm_url=llm.url)
    script = ddgs_script(tmp_path, web)
    result = run_cli(
        "query",
        "chip plant",
        "--deep",
        "--k",
        "2",
        "--json",
        cwd=tmp_path,
        ddgs_script=script,
        env={"TEST_LLM_KEY": "k"},
    )
    assert result.code == 0, result.stderr
    out = json.loads(result.stdout)
    assert len(out["sources"]) == 2
    assert out["answerer"] == "llm:fake-model"
    assert "[1]" in out["answer"] or "[2]" in out["answer"]
    assert set(out["cited"]) <= {1, 2}
    assert all(s["summary"] for s in out["sources"])


def test_deepen_goes_on_past_replies_it_cannot_read_each_story_extractive_with_one_line(
    tmp_path, threaded_news_web, threaded_llm_server
):
    """A truncated reply, a stream line that is not JSON and a 50 MB reply made `deepen` exit 1
    with "internal error: JSONDecodeError" and no story summarized: each is now that story's
    extractive summary and one line, and the other stories are the model's."""
    web, llm = threaded_news_web, threaded_llm_server
    setup(tmp_path, web, crawl={"mode": "http"}, llm_url=llm.url)
    script = ddgs_script(tmp_path, web)
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    llm.script("truncated_json", "bad_stream_line", "huge")
    result = run_cli("deepen", "--top", "4", cwd=tmp_path, env={"TEST_LLM_KEY": "k"})
    assert result.code == 0, result.stderr + result.stdout
    assert "internal error" not in result.stderr

    _, status, counts, errors = runs(tmp_path / "digest.db")[-1]
    counts = json.loads(counts)
    assert status == "partial"
    assert counts["extractive"] == 3 and counts["llm"] >= 1
    (fallback,) = [e["error"] for e in json.loads(errors) if e["source"] == "llm"]
    # Each cause once, counted (the first reason was named for all three).
    assert fallback == "3 summaries fell back to extractive: 2 unreadable replies, 1 reply too long"
    # One line each in the log, saying what was wrong with the reply.
    told = [line for line in result.stderr.splitlines() if "is extractive: LLM at" in line]
    assert len(told) == 3
    assert sum("not JSON or cut short" in line for line in told) == 2
    assert sum("stopped reading it" in line for line in told) == 1
    assert llm.huge_sent < llm.huge_bytes / 2

    shown = run_cli("status", cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    assert shown.stdout.count(fallback) == 1


def test_run_once_deep_crawls_in_the_systems_chromium_with_no_setting(tmp_path, threaded_news_web):
    """Debian's Chromium, no Playwright download, nothing in the config about a browser: the
    deep crawl finds Chromium where the system put it (issue 39)."""
    web = threaded_news_web
    chromium = Path(chromium_path())
    setup(tmp_path, web, crawl={"mode": None})  # the default: "auto"
    assert "executable_path" not in (tmp_path / "digest.toml").read_text()
    nothing = tmp_path / "no-playwright-download"
    nothing.mkdir()
    env = {
        "PLAYWRIGHT_BROWSERS_PATH": str(nothing),
        "PATH": f"{chromium.parent}:/usr/bin:/bin",  # where the system has it (CI may differ)
    }
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=ddgs_script(tmp_path, web), env=env)
    assert result.code == 0, result.stdout + result.stderr
    assert "crawl mode: browser (Chromium via crawl4ai (" in result.stdout, result.stdout
    assert "HTTP mode" not in result.stderr
    counts = json.loads(runs(tmp_path / "digest.db")[-2][2])  # the deepen run, before publish
    assert counts["crawl_mode"] == "browser" and counts["crawled"] >= 3


def test_a_browser_that_cannot_start_is_one_warning_per_run_with_the_fix(
    tmp_path, threaded_news_web
):
    """Every story of a deepen asks for the crawler at once: one crawler, one attempt at the
    browser, one warning (not one per page)."""
    web = threaded_news_web
    broken = tmp_path / "not-a-browser"  # starts, as a program, and exits at once
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    setup(tmp_path, web, crawl={"mode": "auto", "executable_path": str(broken)})
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=ddgs_script(tmp_path, web))
    assert result.code == 0, result.stdout + result.stderr
    (warning,) = [line for line in result.stderr.splitlines() if "HTTP mode" in line]
    assert "browser did not start" in warning and "check crawl.executable_path" in warning
    assert result.stdout.count("crawl mode: http (no browser") == 1

"""Issue 31, end to end through the commands a user runs: two outlets disagree on day 1 (one
reports 12 dead, the other 15). `collect`, `deepen` (with the fake model, which states an
outlet's figure as fact and may invent one, or with none: extractive) and `publish` give an
email and an archive story page that attribute each value (or give the range), and no sentence
a reader sees states 12 or 15 alone."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from tests import realllm
from tests.configs import write_config
from tests.conftest import earlier_today, run_cli
from tests.llmserver import LLMServer, sentences
from tests.newsweb import Article, NewsWeb, Route, render_article
from tests.realllm import RealLLM
from tests.test_whats_new import plain

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

real_llm = realllm.real_llm

KEY = {"TEST_LLM_KEY": "k"}
RSS = "application/rss+xml"
MORE = (
    "Rescue teams worked through the night in the mountain villages near the epicentre.",
    "The regional government opened shelters in schools and sports halls for those displaced.",
)
# Two outlets, one event, two tolls.
REPORTS = {
    "a": (
        "Earthquake in northern Valdoria kills 12 people",
        "An earthquake killed 12 people in northern Valdoria on Monday.",
    ),
    "b": (
        "Earthquake in northern Valdoria kills 15 people",
        "An earthquake in northern Valdoria on Monday killed 15 people in three villages.",
    ),
}


def outlet_feed(url: str, title: str, when: datetime) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Outlet</title>'
        "<link>http://127.0.0.1/</link><description>News</description>"
        f"<item><title>{title}</title><link>{url}</link><guid>{url}</guid>"
        f"<pubDate>{format_datetime(when)}</pubDate></item></channel></rss>"
    ).encode()


def day1_news(tmp_path: Path, web: NewsWeb, llm: dict[str, Any] | None) -> None:
    """A and B's pages and feeds on the local news web (paths of this test's own), the config."""
    when = earlier_today(2)
    tag = tmp_path.name
    feeds = []
    for key, (title, lede) in REPORTS.items():
        page = f"/world/{tag}-quake-{key}.html"
        article = Article(f"{tag}-{key}", "world", title, lede, MORE, "A quake in Valdoria.")
        web.add(Route(page, render_article(article, script_bytes=2_000)))
        web.add(Route(f"/feeds/{tag}-{key}.rss", outlet_feed(web.url(page), title, when), RSS))
        feeds.append(
            {"url": web.url(f"/feeds/{tag}-{key}.rss"), "category": "world", "name": key.upper()}
        )
    write_config(
        tmp_path,
        sources={"categories": ["world"], "ddg": False, "feeds": feeds},
        crawl={"mode": "http", "page_timeout": 20.0},
        schedule={"timezone": "UTC"},
        archive={"dir": str(tmp_path / "site"), "title": "Morning digest"},
        email={"outbox_dir": str(tmp_path / "outbox")},
        llm=llm,
    )


def collect_deepen_publish(tmp_path: Path, timeout: float = 120) -> tuple[str, str, str]:
    """The commands as a user runs them; (email text, email HTML's text, story page's text)."""
    for args in (("collect",), ("deepen",)):
        result = run_cli(*args, cwd=tmp_path, env=KEY, timeout=timeout)
        assert result.code == 0, result.stderr + result.stdout
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    result = run_cli("publish", cwd=tmp_path, env=KEY)
    assert result.code == 0, result.stderr + result.stdout
    [eml] = (tmp_path / "outbox").glob("*.eml")
    message = message_from_bytes(eml.read_bytes(), policy=default_policy)
    assert isinstance(message, EmailMessage)
    text, html = message.get_body(("plain",)), message.get_body(("html",))
    assert text is not None and html is not None
    [page] = (tmp_path / "site").rglob("stories/*.html")
    return text.get_content(), plain(html.get_content()), plain(page.read_text())


# A toll, not a clock ("compiled at 15:06 UTC").
TOLL = re.compile(r"(?<![:\d])\b(12|15)\b(?!:\d)")
# Said with its outlet: "12, according to A", or a timeline's "New fact from B: ...".
ATTRIBUTED = re.compile(r"according to|\b(?:from|by) [AB]\b")


def one_sided(text: str) -> list[str]:
    """The sentences of `text` that give one of the tolls without the other and unattributed:
    what a reader would take as the fact. An outlet's headline is its own words, shown as
    they are (issue 38: never rewritten), with the disagreement on its own line."""
    for title, _ in REPORTS.values():
        text = text.replace(title, " ")
    found = []
    for line in text.splitlines():
        for sentence in sentences(line):
            values = set(TOLL.findall(sentence))
            if len(values) == 1 and not ATTRIBUTED.search(sentence):
                found.append(sentence)
    return found


def assert_attributed(*seen: str) -> None:
    for text in seen:
        flat = " ".join(text.split())
        assert "12, according to A" in flat or "12 dead, according to A" in flat, text
        assert "15, according to B" in flat, text
        assert one_sided(text) == [], one_sided(text)


@pytest.mark.parametrize("fault", [None, "invent_number"])
def test_two_outlets_that_disagree_give_a_summary_that_attributes_each_toll(
    tmp_path, threaded_news_web, threaded_llm_server: LLMServer, fault
):
    llm = threaded_llm_server
    llm.always(fault)
    day1_news(
        tmp_path,
        threaded_news_web,
        {
            "base_url": llm.url,
            "model": "fake-model",
            "api_key_env": "TEST_LLM_KEY",
            "timeout": 10.0,
            "max_retries": 0,
        },
    )
    email_text, email_html, page = collect_deepen_publish(tmp_path)
    # The model was asked, and it stated each outlet's toll as fact: what it said is not shown.
    assert llm.completions
    assert_attributed(email_text, email_html, page)
    assert "more households" not in email_text + page  # and what it invented neither
    # The headline is outlet A's words ("kills 12 people"), never "12 or 15": the disagreement
    # has its own line under the story.
    assert " or 15" not in email_text + page
    assert "Earthquake in northern Valdoria kills 12 people" in email_text
    assert "Earthquake in northern Valdoria kills 12 people" in page


@pytest.mark.parametrize(("reply", "failed"), [("No.", False), ("Maybe, it depends.", True)])
def test_tolls_the_model_does_not_confirm_are_neither_attributed_nor_stated_alone(
    tmp_path, threaded_news_web, threaded_llm_server: LLMServer, reply: str, failed: bool
):
    """Issue 38: asked whether "12 dead" (A) and "15 dead" (B) count the same dead, the model
    does not say yes: no line says the outlets disagree, and neither toll is stated alone; the
    deepen and publish runs count what was kept out, and an unclear reply is their error."""
    llm = threaded_llm_server
    llm.same_quantity = reply
    day1_news(
        tmp_path,
        threaded_news_web,
        {
            "base_url": llm.url,
            "model": "fake-model",
            "api_key_env": "TEST_LLM_KEY",
            "timeout": 10.0,
            "max_retries": 0,
        },
    )
    seen = collect_deepen_publish(tmp_path)
    assert llm.same_quantity_asked  # the model was asked
    for text in seen:
        assert "according to" not in text and "disagree" not in text.lower(), text
        assert one_sided(text) == [], one_sided(text)
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        runs = conn.execute("select kind, counts, errors from runs").fetchall()
    for kind in ("deepen", "publish"):
        [(counts, errors)] = [(json.loads(c), json.loads(e)) for k, c, e in runs if k == kind]
        assert counts["figure_checks"] >= 1 and counts["figure_lines_kept_out"] >= 1, kind
        said = [e["error"] for e in errors if e["source"] == "figure check"]
        assert bool(said) == failed, (kind, errors)
        assert all("unclear reply" in line for line in said)


def test_with_no_model_the_extractive_summary_attributes_each_toll(tmp_path, threaded_news_web):
    day1_news(tmp_path, threaded_news_web, None)
    email_text, email_html, page = collect_deepen_publish(tmp_path)
    assert_attributed(email_text, email_html, page)


@pytest.mark.timeout(1800)
def test_with_the_real_model_and_the_default_llm_config_no_toll_is_stated_alone(
    tmp_path, threaded_news_web, real_llm: RealLLM
):
    """SmolLM2-135M writes what it likes: whatever it said (or the extractive summary it fell
    back to), what a reader sees never gives one toll alone; both tolls with their outlets
    where the model confirmed they count the same dead (issue 38's check, on by default),
    else no line saying the outlets disagree."""
    llm = real_llm.defaults().model_dump()
    day1_news(tmp_path, threaded_news_web, {k: v for k, v in llm.items() if v is not None})
    email_text, email_html, page = collect_deepen_publish(tmp_path, timeout=1200)
    stories = json.loads(run_cli("stories", "--json", cwd=tmp_path).stdout)
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        (counts,) = conn.execute("select counts from runs where kind = 'deepen'").fetchone()
    counts = json.loads(counts)
    # Measured: the model's summary took one side, the check left too little of it, and the
    # story is extractive with its one-sided sentence removed too (about 10 s in all).
    print(f"\ndeepen: {counts}\nsummarizer: {[s['summarizer'] for s in stories]}\n{email_text}")
    assert counts["llm_calls"] >= 1  # the model was asked
    assert counts["figure_checks"] >= 1  # and asked whether the two tolls are one quantity
    seen = (email_text, email_html, page)
    if counts["figure_lines_kept_out"] == 0:
        assert_attributed(*seen)
    for text in seen:
        assert one_sided(text) == [], one_sided(text)

"""One summary per story, checked against its sources, end to end: `collect`, `deepen` and
`publish` as a user runs them against the local news web and the fake OpenAI-compatible
server, whose faults invent a number, a name or a quote. Nothing invented may reach the
archive or an email; what the sources say stays."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.configs import write_config
from tests.conftest import run_cli, serve_in_thread
from tests.fake_ddgs import story_rows, write_script
from tests.llmserver import INVENTED_NAMES, INVENTED_QUOTES, LLMServer, sentences
from tests.newsweb import ARTICLES, RETELLINGS, NewsWeb, Route, render_article

# Each test runs the CLI five to eight times: slow on a busy machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

CHIP = ARTICLES[0]
KEY = {"TEST_LLM_KEY": "k"}


def setup(tmp_path: Path, web: NewsWeb, llm: LLMServer, **llm_config: object) -> Path:
    configure(tmp_path, llm, **llm_config)
    script = write_script(tmp_path / "ddgs.json", news={"technology news": story_rows(web)})
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    return script


def configure(tmp_path: Path, llm: LLMServer, **llm_config: object) -> None:
    write_config(
        tmp_path,
        sources={"categories": ["technology"]},
        crawl={"mode": "http", "page_timeout": 20.0},
        llm={
            "base_url": llm.url,
            "model": "fake-model",
            "api_key_env": "TEST_LLM_KEY",
            "timeout": 10.0,
            "max_retries": 0,
            **llm_config,
        },
    )


def deepen(tmp_path: Path, *args: str, log_level: str = "warning") -> dict:
    result = run_cli("--log-level", log_level, "deepen", "--top", "3", *args, cwd=tmp_path, env=KEY)
    assert result.code == 0, result.stderr + result.stdout
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        counts, errors = conn.execute(
            "select counts, errors from runs where kind = 'deepen' order by id desc limit 1"
        ).fetchone()
    return {
        "counts": json.loads(counts),
        "errors": json.loads(errors),
        "out": result.stdout,
        "log": result.stderr,
    }


def stories(tmp_path: Path) -> list[dict]:
    out = run_cli("stories", "--json", cwd=tmp_path)
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)


def publish(tmp_path: Path) -> str:
    """Publish to one subscriber; everything a reader can see: archive files and emails."""
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    result = run_cli("publish", cwd=tmp_path, env=KEY)
    assert result.code == 0, result.stderr + result.stdout
    seen = [p.read_text(errors="replace") for p in (tmp_path / "site").rglob("*") if p.is_file()]
    seen += [p.read_bytes().decode(errors="replace") for p in (tmp_path / "outbox").glob("*.eml")]
    assert any(p.suffix == ".eml" for p in (tmp_path / "outbox").iterdir())
    return "\n".join(seen)


INVENTED_BITS = {
    "invent_number": ["more households"],
    "invent_name": [w for pair in INVENTED_NAMES for w in pair],
    "invent_quote": list(INVENTED_QUOTES),
}


def test_a_host_a_page_plants_reaches_neither_the_archive_nor_a_feed_nor_an_email(
    tmp_path, threaded_llm_server
):
    """A page tells its readers to go to a host of its own; the model repeats it, and the check
    finds it in the page. Mail and chat clients make links of bare hosts: none is published."""
    planted = replace(
        CHIP,
        lede=CHIP.lede + " Renew your subscription at evil-example.com before Friday, or at "
        "203.0.113.5/renew or renew.example:8443.",
    )
    for web in serve_in_thread(NewsWeb()):
        web.add(Route(CHIP.path, render_article(planted)))
        setup(tmp_path, web, threaded_llm_server)
        deepen(tmp_path)
        chip = next(s for s in stories(tmp_path) if s["outlet_count"] == 3)
        assert "Renew your subscription at" in chip["summary"]  # the model repeated it

        published = publish(tmp_path)
        assert sentences(CHIP.lede)[0][:60] in published
        assert "Renew your subscription at" in published
        for host in ("evil-example.com", "203.0.113.5", "renew.example:8443"):
            assert host not in published, f"{host!r} was published"


@pytest.mark.parametrize("fault", list(INVENTED_BITS))
def test_invented_facts_reach_neither_the_archive_nor_an_email(
    tmp_path, threaded_news_web, threaded_llm_server, fault
):
    llm = threaded_llm_server
    llm.always(fault)
    setup(tmp_path, threaded_news_web, llm)
    run = deepen(tmp_path)
    assert run["counts"]["llm"] >= 2 and run["counts"]["sentences_removed"] >= 2

    chip = next(s for s in stories(tmp_path) if s["outlet_count"] == 3)
    assert chip["summary_of"] == "story" and chip["summarizer"] == "llm:fake-model"
    assert chip["claims"]["found"] < chip["claims"]["total"]
    # The invented sentence goes from the summary and from the brief; the rest stays.
    assert chip["claims"]["sentences_removed"] == 2
    assert sentences(CHIP.lede)[0] in chip["summary"]
    for bit in INVENTED_BITS[fault]:
        assert bit not in chip["summary"] and bit not in chip["brief_summary"]

    published = publish(tmp_path)
    assert sentences(CHIP.lede)[0][:60] in published
    for bit in INVENTED_BITS[fault]:
        assert bit not in published, f"{bit!r} was published"

    status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
    checked = status["summaries"]["last_deepen"]["claims"]
    assert checked["sentences_removed"] >= 2 and checked["found"] < checked["total"]
    assert "sentences removed" in run_cli("status", cwd=tmp_path).stdout


def test_each_story_is_one_call_reading_its_outlets_and_grounded_summaries_are_kept_whole(
    tmp_path, threaded_news_web, threaded_llm_server
):
    llm = threaded_llm_server
    setup(tmp_path, threaded_news_web, llm)
    run = deepen(tmp_path)
    counts = run["counts"]
    # json_schema is accepted at once, so there is no negotiation: one call per story.
    assert counts["llm"] == counts["summarized"] == counts["llm_calls"] == len(llm.completions)
    assert counts["sentences_removed"] == 0 and counts["claims"] == counts["claims_found"] > 0
    assert counts["sources_read"] > counts["llm"]

    prompts = [r.body["messages"] for r in llm.completions]
    chip_prompt = next(m for m in prompts if CHIP.title in m[1]["content"])
    user = chip_prompt[1]["content"]
    assert user.count("<<<SOURCE ") == 3  # the three outlets, in one call
    for outlet, retelling in RETELLINGS[:2]:
        assert f"Outlet: {outlet}" in user and retelling.lede[:50] in " ".join(user.split())
    today = datetime.now(UTC).date().isoformat()
    assert f"Today is {today}" in chip_prompt[0]["content"]
    assert f"Published: {today}" in user

    chip = next(s for s in stories(tmp_path) if s["outlet_count"] == 3)
    assert chip["claims"] == {
        "total": chip["claims"]["total"],
        "found": chip["claims"]["total"],
        "sentences_removed": 0,
    }
    cited = [c["outlet"] for c in chip["cited"]]
    assert sorted(cited) == ["Daily Ledger", "Example News", "Wire Service"]
    assert cited[0] == chip["outlets"][0]["outlet"]  # the representative first
    assert "[1]" in chip["summary"] and "[3]" in chip["summary"]
    assert RETELLINGS[1][1].lede[:50] in chip["summary"]

    published = publish(tmp_path)
    assert "Claims checked against the sources" in published
    assert RETELLINGS[1][1].lede[:50] in published

    again = deepen(tmp_path)  # nothing changed: nothing is summarized again
    assert again["counts"]["summarized"] == 0 and again["counts"]["reused"] == counts["llm"]
    assert len(llm.completions) == counts["llm_calls"]


def test_a_summary_left_too_short_by_the_check_is_extractive_and_says_why(
    tmp_path, threaded_news_web, threaded_llm_server
):
    llm = threaded_llm_server
    llm.always("prose")  # chatter that names nothing in the sources
    llm.plain = "prose"
    llm.json_schema = "http500"
    llm.json_object = False
    setup(tmp_path, threaded_news_web, llm)
    run = deepen(tmp_path)
    assert run["counts"]["extractive"] >= 2
    chip = next(s for s in stories(tmp_path) if s["outlet_count"] == 3)
    assert chip["summarizer"] == "extractive" and chip["summary_note"]
    assert "fell back to extractive" in run["out"]


def test_the_budget_leaves_the_last_stories_extractive_and_the_run_says_so(
    tmp_path, threaded_news_web, threaded_llm_server
):
    llm = threaded_llm_server
    llm.delay, llm.serial = 1.0, True  # a local server: one request at a time, a second each
    setup(tmp_path, threaded_news_web, llm, budget=1.5)
    run = deepen(tmp_path, log_level="info")
    counts = run["counts"]
    assert counts["llm"] >= 1 and counts["over_budget"] >= 1
    assert counts["llm"] + counts["over_budget"] == counts["summarized"]
    assert llm.max_in_flight == 1
    budget = [e["error"] for e in run["errors"] if e["source"] == "llm budget"]
    assert budget == [
        f"{counts['over_budget']} stor{'y' if counts['over_budget'] == 1 else 'ies'} summarized "
        "extractively: the [llm] budget of 1.5 s for this deepen was spent"
    ]
    status = run_cli("status", cwd=tmp_path).stdout
    assert "[llm] budget spent" in status and "budget of 1.5 s" in status
    # A line per story, with the budget left; and, once the first reply measured the server,
    # one line saying the budget will not hold them all.
    told = [line for line in run["log"].splitlines() if " summarized (" in line]
    assert len(told) == counts["summarized"] and "story 1 of " in told[0]
    assert all("[llm] budget" in line and " s left" in line for line in told)
    assert run["log"].count("will likely hold") == 1


def test_a_fresh_deepen_foresees_the_budget_from_the_speeds_an_earlier_one_measured(
    tmp_path, threaded_news_web, threaded_llm_server
):
    """`digest deepen` in a new process knows nothing of the server before its first reply:
    the speeds the last deepen measured of the same server and model, kept in its run record,
    tell how many stories the budget will hold before the first story is summarized."""
    llm = threaded_llm_server
    llm.delay, llm.serial = 1.0, True  # a local server: one request at a time, a second each
    setup(tmp_path, threaded_news_web, llm)
    first = deepen(tmp_path, "--top", "1")  # no budget yet: the top story by the model
    assert first["counts"]["llm"] == 1
    measured = first["counts"]["llm_measured"]
    assert (measured["base_url"], measured["model"]) == (llm.url, "fake-model")

    configure(tmp_path, llm, budget=2.0)
    again = deepen(tmp_path, log_level="info")  # the top 3: the first kept, 2 to summarize
    assert again["counts"]["reused"] == 1 and again["counts"]["summarized"] == 2
    lines = again["log"].splitlines()
    first_story = next(i for i, line in enumerate(lines) if " summarized (" in line)
    forecast = [i for i, line in enumerate(lines) if "will likely hold" in line]
    assert len(forecast) == 1 and forecast[0] < first_story, again["log"]
    said = lines[forecast[0]]
    assert "(2 s left) will likely hold " in said
    assert " of the 2 stories still to summarize, at about " in said
    assert "each as measured in an earlier run; the rest will be extractive" in said
    assert "story 1 of 2 summarized" in lines[first_story]

    # Another model on the same server: what was measured of the first says nothing of it;
    # the forecast waits for this model's own first reply.
    configure(tmp_path, llm, budget=2.0, model="other-model")
    other = deepen(tmp_path, log_level="info")
    lines = other["log"].splitlines()
    first_story = next(i for i, line in enumerate(lines) if " summarized (" in line)
    assert not any("will likely hold" in line for line in lines[:first_story]), other["log"]
    assert "earlier run" not in other["log"]


def test_an_updated_story_is_told_what_its_earlier_summary_said_and_which_outlets_are_new(
    tmp_path, threaded_news_web, threaded_llm_server
):
    llm, web = threaded_llm_server, threaded_news_web
    setup(tmp_path, web, llm)
    first = story_rows(web)
    ledger = next(r for r in first if r["source"] == "Daily Ledger")
    script = write_script(
        tmp_path / "ddgs.json", news={"technology news": [r for r in first if r is not ledger]}
    )
    # Start over with the Daily Ledger's telling missing, as if it came out later.
    (tmp_path / "digest.db").unlink()
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    deepen(tmp_path)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    with sqlite3.connect(tmp_path / "digest.db") as conn:  # as if that deepen was yesterday's
        conn.execute("update story_summaries set created_at = ?", (yesterday,))
    script = write_script(tmp_path / "ddgs.json", news={"technology news": first})
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    before = len(llm.completions)
    run = deepen(tmp_path)
    assert run["counts"]["summarized"] == 1 and run["counts"]["reused"] >= 1
    system, user = (m["content"] for m in llm.completions[before].body["messages"])
    since = yesterday[:10]
    assert f"Begin the summary with what is new since {since}" in system
    assert "<<<EARLIER " in user and user.count("New: yes") == 1
    ledger_block = user[user.index("Outlet: Daily Ledger") :]
    assert ledger_block.index("New: yes") < ledger_block.index("<<<END SOURCE")

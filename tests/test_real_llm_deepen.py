"""`digest deepen` against a real OpenAI-compatible server (llama-cpp-python with SmolLM2-135M,
see tests/realllm.py): the top stories of the local news web are summarized through the model,
one streamed call per story, within the budget, and the run and `digest status` say so.

The model is tiny and invents facts: the claim check removes what its sources do not hold, and
this test prints what it removed; it asserts the protocol, never the content."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests import realllm
from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import story_rows, write_script
from tests.realllm import RealLLM

real_llm = realllm.real_llm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

# `[llm] budget`'s default: the two stories' summaries are bounded by it.
BUDGET = 900.0


def test_deepen_summarizes_the_top_stories_through_the_real_model_within_the_budget(
    tmp_path, threaded_news_web, real_llm: RealLLM
):
    # The `[llm]` section a user writes: where the server is and the model, nothing tuned.
    llm = real_llm.defaults().model_dump()
    write_config(
        tmp_path,
        sources={"categories": ["technology"]},
        crawl={"mode": "http", "page_timeout": 20.0},
        llm={k: v for k, v in llm.items() if v is not None},
    )
    script = write_script(
        tmp_path / "ddgs.json", news={"technology news": story_rows(threaded_news_web)}
    )
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    result = run_cli("deepen", "--top", "2", cwd=tmp_path, timeout=BUDGET + 300)
    assert result.code == 0, result.stderr + result.stdout + real_llm.log_tail()
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        (counts,) = conn.execute("select counts from runs where kind = 'deepen'").fetchone()
        rows = conn.execute(
            "select summarizer, claims, claims_found, sentences_removed, note from story_summaries"
        ).fetchall()
    counts = json.loads(counts)
    print(f"\ndeepen: {counts}\nstory summaries: {rows}")
    assert counts["summarized"] == 2 and counts["over_budget"] == 0
    # Every story went to the model: one call each, after one refused json_schema probe.
    assert counts["llm_calls"] >= 3 and counts["tokens"] > 0
    # ... and its summaries, checked, are what is kept (a summary the check rejected would be
    # extractive with a note saying so; the model must have written at least one that passed).
    assert counts["llm"] >= 1, rows
    stories = json.loads(run_cli("stories", "--json", cwd=tmp_path).stdout)
    by_model = [s for s in stories if s["summarizer"] == "llm:smollm2"]
    assert by_model and all(s["summary_of"] == "story" and s["claims"] for s in by_model)
    status = run_cli("status", cwd=tmp_path).stdout
    assert f"summaries in the last deepen: {counts['llm']} by the LLM" in status

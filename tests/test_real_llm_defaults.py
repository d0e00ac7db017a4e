"""A new user's first run against their own local model: `[llm]` holds only where the server is
and which model (docs/configuration.md's example), and the server is llama-cpp-python's with
SmolLM2 at its default context of 2,048 tokens, or at 4,096, on a CPU (see tests/realllm.py).

With those defaults a 4k-context server once gave 0 of 3 summaries: two requests overflowed its
window (the reply came back empty) and one was declared dead while the server was still reading
a long prompt. Now every story of three outlets gets a model reply, kept or refused by the claim
check with its reason, and no request is larger than the window."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from tests import realllm
from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import long_story_rows, write_script
from tests.realllm import RealLLM

real_llm = realllm.real_llm
real_llm_2048 = realllm.real_llm_2048

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

# llama-cpp-python's log: "prompt eval time = 812.34 ms / 1234 tokens (...)"
PROMPT_EVAL = re.compile(r"prompt eval time\s*=\s*[\d.]+ ms /\s*(\d+) tokens")


@pytest.mark.parametrize("n_ctx", [2048, 4096])
def test_default_settings_give_every_story_a_model_reply_within_the_window(
    tmp_path, threaded_news_web, request, n_ctx: int
):
    server: RealLLM = request.getfixturevalue("real_llm_2048" if n_ctx == 2048 else "real_llm")
    llm = server.defaults().model_dump(exclude_defaults=True)
    assert set(llm) == {"base_url", "model", "api_key_env"}
    write_config(
        tmp_path,
        sources={"categories": ["technology"]},
        crawl={"mode": "http", "page_timeout": 20.0},
        llm=llm,
    )
    rows = long_story_rows(threaded_news_web)
    script = write_script(tmp_path / "ddgs.json", news={"technology news": rows})
    logged = len(server.log.read_text(errors="replace")) if server.log.exists() else 0
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    result = run_cli("deepen", "--top", "3", cwd=tmp_path, timeout=3000)
    assert result.code == 0, result.stderr + result.stdout + server.log_tail()
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        (counts,) = conn.execute("select counts from runs where kind = 'deepen'").fetchone()
        rows_ = conn.execute(
            "select summarizer, claims, claims_found, sentences_removed, note, sources "
            "from story_summaries"
        ).fetchall()
    counts = json.loads(counts)
    log = server.log.read_text(errors="replace")[logged:]
    prompts = [int(n) for n in PROMPT_EVAL.findall(log)]
    print(f"\nn_ctx {n_ctx}: deepen {counts}\nprompt tokens read: {prompts}")
    for row in rows_:
        print(row[:5])
    assert counts["summarized"] == 3 and counts["over_budget"] == 0
    assert len(rows_) == 3
    for summarizer, _, _, _, note, sources in rows_:
        # The model's reply was kept, or the claim check refused it and says why; nothing
        # else (a refused request, an empty reply, a server declared dead) is acceptable.
        assert summarizer == "llm:smollm2" or note.startswith("claim check"), note
        # ... written from all the story's outlets, each read in part (a copy of a page
        # another outlet already gave is one source).
        assert summarizer != "llm:smollm2" or len(json.loads(sources)) >= 2
    assert "exceed context window" not in log
    assert prompts and max(prompts) < n_ctx
    status = run_cli("status", cwd=tmp_path).stdout
    assert "sent no token" not in status and "context" not in status.lower()


@pytest.mark.parametrize("n_ctx", [2048, 4096])
def test_llm_check_reports_the_real_server(tmp_path, request, n_ctx: int):
    """llama-cpp-python's server says its window only in refusing a longer prompt: the check
    names the window it was started with (it was always "2048 assumed", even at 4,096), that
    tokens are counted by the server's own tokenizer, and the speeds it measured."""
    server: RealLLM = request.getfixturevalue("real_llm_2048" if n_ctx == 2048 else "real_llm")
    write_config(tmp_path, llm=server.defaults().model_dump(exclude_defaults=True))
    result = run_cli("llm", "check", "--json", cwd=tmp_path, timeout=600)
    assert result.code == 0, result.stderr + server.log_tail()
    found = json.loads(result.stdout)
    assert found["server"] == "llama-cpp-python" and found["model"] == "smollm2"
    assert found["context_window"] == n_ctx
    assert found["context_window_source"] == "named by its refusal of a longer prompt"
    assert found["tokenizer"] == "llama-cpp-python"
    # llama-cpp-python refuses json_schema and constrains json_object with the schema beside.
    assert found["output_mode"] == "json_object_schema" and found["json_constrained"]
    assert found["prompt_tokens_per_second"] and found["story_summary_seconds"] > 0
    assert found["reply_error"] is None

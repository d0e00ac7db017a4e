"""What the commands report to an operator: what happened, each thing once, in plain words."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from ddgs.engines import ENGINES

from digest.config import Config
from digest.daemon import judge_cycle
from digest.jobs.deepen import BUDGET, EMBEDDINGS, DeepenReport
from digest.models import Failure
from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, NewsWeb

TECH = [a for a in ARTICLES if a.category == "technology"]
PAGE = "http://127.0.0.1:1/story.html"
NEWS_ENGINES = ", ".join(sorted(ENGINES["news"]))  # ddgs 9.16: bing, duckduckgo, yahoo


def setup(tmp_path: Path, web: NewsWeb) -> Path:
    write_config(tmp_path, sources={"categories": ["technology"]})
    return write_script(tmp_path / "ddgs.json", news={"technology news": news_rows(web, TECH)})


@pytest.mark.slow
def test_status_says_which_section_turns_embeddings_on(tmp_path: Path) -> None:
    write_config(tmp_path)
    assert run_cli("db", "upgrade", cwd=tmp_path).code == 0

    result = run_cli("status", cwd=tmp_path)

    assert result.code == 0, result.stderr
    assert "embeddings: off (no [stories.embeddings]): stories by their words alone" in (
        result.stdout
    )


@pytest.mark.slow
def test_a_new_edition_is_reported_new_and_a_rebuild_unchanged(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    script = setup(tmp_path, threaded_news_web)
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0

    first = run_cli("publish", "--no-send", cwd=tmp_path)
    again = run_cli("publish", "--no-send", cwd=tmp_path)

    assert first.code == again.code == 0, first.stderr + again.stderr
    assert " (new; " in first.stdout and "updated" not in first.stdout
    assert " (unchanged; " in again.stdout


def deepen_report(*errors: Failure, status: str = "partial") -> DeepenReport:
    counts = {"stories": 2, "crawled": 2, "summarized": 2}
    return DeepenReport(run_id=1, status=status, counts=counts, errors=list(errors))


def test_a_deepen_whose_pages_were_all_read_does_not_say_a_page_failed() -> None:
    lexical = Failure(EMBEDDINGS, "lexical similarity only: connection refused")
    fallback = Failure("llm", "1 summary fell back to extractive: timed out")
    budget = Failure(BUDGET, "1 story summarized extractively: the [llm] budget was spent")

    _, (warning,) = judge_cycle(Config(), deepen=deepen_report(lexical, fallback, budget))

    assert "page" not in warning
    assert warning == (
        "deepen partial: embeddings: lexical similarity only; llm: 1 summary fell back to "
        "extractive; llm budget: 1 story summarized extractively"
    )


def test_a_deepen_counts_the_pages_that_failed_and_only_those() -> None:
    pages = [Failure(f"{PAGE}?{i}", "HTTP 404") for i in range(2)]
    lexical = Failure(EMBEDDINGS, "lexical similarity only: connection refused")

    _, (warning,) = judge_cycle(Config(), deepen=deepen_report(*pages, lexical))

    assert warning == "deepen partial: 2 pages failed; embeddings: lexical similarity only"


@pytest.mark.slow
def test_serve_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    write_config(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        result = run_cli("serve", "--port", str(port), cwd=tmp_path, timeout=60)

    assert result.code == 1
    assert result.stderr.strip() == (
        f"digest: error: cannot listen on 127.0.0.1:{port}: the address is in use (another "
        "digest serve or daemon?): choose another with --port or serve.port"
    )


@pytest.mark.slow
def test_offline_each_source_failure_is_reported_once_and_names_ddgs(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    write_config(tmp_path)  # two categories
    offline = write_script(tmp_path / "offline.json", fail="offline")

    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=offline)

    assert result.code == 1
    everything = result.stdout + result.stderr
    # DuckDuckGo down for every category: one failure, with the first category's cause.
    failure = (
        "failed ddg:news: news search failed for all 2 categories (technology: DNS lookup "
        "failed for duckduckgo.com (is this machine offline?))"
    )
    assert everything.count(failure) == 1, everything
    assert everything.count("failed ddg") == 1, everything
    assert "DuckDuckGo" not in everything
    *_, error, next_step = result.stderr.strip().splitlines()
    assert error == "digest: error: collect failed: every source failed (1 source)"
    assert next_step.startswith("digest: no source answered: add feeds with")

"""`digest collect && digest deepen && digest publish` with the fake LLM and a German reader:
the stored stories' LLM summaries translated (checked against the stored articles), the run
record counting them, `digest status` their tokens, and an invented figure refused with the
reason on the run."""

from __future__ import annotations

import json
import sqlite3
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path

import pytest

from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import news_rows, write_script
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES, NewsWeb

pytestmark = pytest.mark.slow

WORLD = [a for a in ARTICLES if a.category == "world"]
# The mark a German reader reads on a story the model translated for them (issue 38).
MARK = "(vom Modell übersetzt, Original auf Englisch)"


def setup(tmp_path: Path, web: NewsWeb, llm: LLMServer) -> None:
    # The server says its window, as llama.cpp's does (4,096 tokens): a Japanese story and
    # its translation take more than the 2,048 assumed of a server that says nothing.
    llm.advertise = "llama.cpp"
    write_config(
        tmp_path,
        sources={"categories": ["world"]},
        llm={"base_url": llm.url, "model": llm.model, "timeout": 10.0, "max_retries": 0},
    )
    script = write_script(tmp_path / "ddgs.json", news={"world news": news_rows(web, WORLD)})
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    deepened = run_cli("deepen", "--top", "2", cwd=tmp_path)
    assert deepened.code == 0, deepened.stderr
    for args in (["leser@example.org", "--language", "de"], ["reader@example.org"]):
        assert run_cli("subscribers", "add", *args, cwd=tmp_path).code == 0


def mails(tmp_path: Path) -> dict[str, str]:
    found = {}
    for path in sorted((tmp_path / "outbox").glob("*.eml")):
        msg = message_from_bytes(path.read_bytes(), policy=default_policy)
        found[str(msg["To"])] = msg.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    return found


def publish_run(tmp_path: Path) -> tuple[str, dict, list]:
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        status, counts, errors = conn.execute(
            "select status, counts, errors from runs where kind = 'publish' order by id desc"
        ).fetchone()
    return status, json.loads(counts), json.loads(errors)


def test_a_readers_digest_is_translated_and_the_run_says_so(
    tmp_path: Path, threaded_news_web: NewsWeb, threaded_llm_server: LLMServer
) -> None:
    setup(tmp_path, threaded_news_web, threaded_llm_server)
    before = len(threaded_llm_server.translations())
    tokens = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)["llm_tokens_today"]

    published = run_cli("publish", cwd=tmp_path)

    assert published.code == 0, published.stderr + published.stdout
    asked = threaded_llm_server.translations()[before:]
    assert asked and {language for language, _ in asked} == {"de"}
    german, english = mails(tmp_path)["leser@example.org"], mails(tmp_path)["reader@example.org"]
    for _, headline in asked:
        assert f"[de] {headline}" in german and headline in english
    # The news web's world pages are in English, French and Japanese: each summary is
    # translated from its own language.
    assert german.count("(vom Modell übersetzt, Original auf ") == len(asked) and MARK in german
    assert "(vom Modell übersetzt, Original auf Französisch)" in german
    assert "translated" not in english
    status, counts, errors = publish_run(tmp_path)
    assert status == "ok" and errors == []
    assert counts["translated"] == len(asked)
    status_after = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
    assert status_after["llm_tokens_today"] > tokens  # the translations' tokens count too


def test_an_invented_figure_is_refused_and_the_run_records_why(
    tmp_path: Path, threaded_news_web: NewsWeb, threaded_llm_server: LLMServer
) -> None:
    setup(tmp_path, threaded_news_web, threaded_llm_server)
    threaded_llm_server.always("invent_number")
    try:
        published = run_cli("publish", cwd=tmp_path)
    finally:
        threaded_llm_server.always(None)

    assert published.code == 0, published.stderr + published.stdout
    german = mails(tmp_path)["leser@example.org"]
    assert "[de]" not in german and "übersetzt" not in german and "(Englisch)" in german
    status, counts, errors = publish_run(tmp_path)
    assert status == "partial" and counts["translations_refused"] >= 1
    assert [e["source"] for e in errors] == ["translate"]
    assert "not in the original or its sources: number" in errors[0]["error"]

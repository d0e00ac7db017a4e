"""The terminal's console: page text printed by any of the CLI's outputs keeps its words and
loses its controls, and rich's own colours still work (tests/test_hostile_text.py runs the real
commands; these reach the outputs whose text a collection cannot plant, such as a mail server's
reply)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.commands import printing as cli_output
from digest.deliver.ledger import Delivery
from digest.jobs.deepen import DeepenReport
from digest.jobs.publish import PublishReport
from digest.models import Failure, Outlet, SearchHit, Summary
from digest.ondemand.results import DeepAnswer, DeepExtract

EVIL = "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;https://evil.example/\x1b\\\x9b31m\u202e"
SGR = re.compile(r"\x1b\[[0-9;]*m")
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich writes as it does for a terminal (colour codes included), 120 columns wide."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("NO_COLOR", raising=False)


def shown(out: str) -> str:
    """What the reader sees once rich's colours are taken out: no other control may remain."""
    assert "\x1b[" in out  # the console did write for a terminal
    plain = SGR.sub("", out)
    assert not UNSAFE.search(plain), repr(plain)
    return plain


OUTPUTS: dict[str, Callable[[], Any]] = {
    "deliveries": lambda: cli_output.print_deliveries(
        [
            Delivery(
                date(2026, 3, 1),
                "reader@example.org",
                state="failed",
                attempts=3,
                last_reply=f"550 mailbox {EVIL}unavailable",
            )
        ]
    ),
    "deepen report": lambda: cli_output.print_deepen_report(
        DeepenReport(
            7,
            "partial",
            dict.fromkeys(
                ("stories", "crawled", "crawl_failed", "summarized", "reused", "llm", "extractive"),
                1,
            )
            | {"tokens": 0},
            "http",
            "configured",
            [Failure(f"https://example.org/{EVIL}page", f"HTTP 500 {EVIL}unavailable")],
        )
    ),
    "publish report": lambda: cli_output.print_publish_report(
        PublishReport(
            8,
            date(2026, 3, 1),
            "partial",
            True,
            3,
            0,
            {"sent": 0, "failed": 1},
            [Failure("email:reader@example.org", f"550 mailbox {EVIL}unavailable")],
        )
    ),
    "answer": lambda: cli_output.print_answer(
        DeepAnswer(
            query="strike",
            answer=f"The strike {EVIL}unavailable ended [1].",
            answerer="extractive",
            cited=(1,),
            sources=(DeepExtract(url="https://a.example/", title=f"Docks {EVIL}unavailable"),),
        )
    ),
    "deep extract": lambda: cli_output.print_deep_extracts(
        [
            DeepExtract(
                url="https://a.example/",
                title=f"Docks {EVIL}unavailable",
                summary=Summary(
                    title="",
                    summary=f"Summary {EVIL}unavailable",
                    brief_summary="",
                    keywords=(f"port {EVIL}unavailable",),
                ),
            )
        ]
    ),
}


@pytest.mark.parametrize("output", OUTPUTS)
def test_outputs_print_the_text_without_its_controls(
    output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    OUTPUTS[output]()
    plain = shown(capsys.readouterr().out)
    assert "[2J]52;c;cm0gLXJmIH4=]8;;https://evil.example/\\31munavailable" in plain


def hit(title: str, snippet: str) -> SearchHit:
    return SearchHit(
        title=title,
        url="https://a.example/story",
        published=datetime(2026, 3, 1, tzinfo=UTC),
        category="world",
        source="Wire",
        snippet=snippet,
        highlights=((0, min(4, len(snippet))),),
        matched="lede",
        score=1.0,
        story_id=1,
        outlets=(Outlet(name=title, url="https://a.example/story"),),
    )


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(title=st.text(min_size=1, max_size=60), snippet=st.text(max_size=60))
def test_any_search_result_prints_as_text_and_colours_only(
    title: str, snippet: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_output.print_search([hit(title, snippet)], "q")
    shown(capsys.readouterr().out)


def test_status_shows_the_ledger_one_count_per_state() -> None:
    line = cli_output.ledger_line({"pending": 1, "sending": 0, "sent": 4, "failed": 2})
    assert line == "1 pending, 0 sending, 4 sent, [red]2 failed[/red]"
    assert cli_output.ledger_line(dict.fromkeys(("pending", "sending", "sent", "failed"), 0)) == (
        "none yet"
    )

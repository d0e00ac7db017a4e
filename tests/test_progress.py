"""Long commands tell what step they are in and how far they got (`digest.runtime.progress`): each
job announces its steps with their sizes and counts its units, whoever listens; a piped command
prints none of it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from digest.app import App
from digest.commands.feeds_manage import import_opml
from digest.config import Config, parse_config
from digest.daemon import run_daemon
from digest.jobs.collect import collect
from digest.jobs.deepen import deepen
from digest.jobs.publish import publish
from digest.runtime.progress import Within
from tests.configs import feed, write_config
from tests.conftest import run_cli
from tests.newsweb import NewsWeb
from tests.storefixtures import item

OPML = Path(__file__).resolve().parent / "opml"
READER = "reader@example.org"


class Recording:
    """A `Progress` that keeps what it was told, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int | None]] = []

    def step(self, name: str, total: int | None = None) -> None:
        self.events.append(("step", name, total))

    def advance(self, n: int = 1, detail: str = "") -> None:
        self.events.append(("advance", detail, n))

    def steps(self) -> list[tuple[str, int | None]]:
        return [(name, total) for kind, name, total in self.events if kind == "step"]

    def done(self, step: str) -> int:
        """How many units were counted while `step` was the current step."""
        current, count = None, 0
        for kind, name, n in self.events:
            if kind == "step":
                current = name
            elif current == step:
                count += n or 0
        return count


def config_for(tmp_path: Path, **extra: dict) -> Config:
    return parse_config(
        {
            "database": {"url": f"sqlite:///{tmp_path / 'digest.db'}"},
            "sources": {"categories": ["technology", "world"], "ddg": False, **extra},
            "schedule": {"timezone": "UTC"},
            "fetch": {"allowed_networks": ["127.0.0.1/32"]},
            "crawl": {"mode": "http", "respect_robots": False},
            "archive": {"dir": str(tmp_path / "site")},
            "email": {"outbox_dir": str(tmp_path / "outbox")},
        }
    )


async def test_feeds_import_tells_reading_checking_and_subscribing(tmp_path: Path) -> None:
    heard = Recording()
    async with App(config_for(tmp_path)) as app:
        report = await import_opml(app, OPML / "miniflux.opml", category="world", progress=heard)
    outlines = heard.steps()[1][1]
    assert heard.steps() == [
        ("reading miniflux.opml", None),
        ("looking for the feeds already subscribed", outlines),
        ("subscribing", len(report.imported)),
    ]
    assert outlines and outlines >= len(report.imported) > 0
    assert heard.done("looking for the feeds already subscribed") == outlines
    assert heard.done("subscribing") == len(report.imported)


async def test_publish_tells_its_steps_and_each_message_sent(tmp_path: Path) -> None:
    heard = Recording()
    async with App(config_for(tmp_path)) as app:
        store = await app.store()
        store.add_subscriber(READER, categories=None, timezone="UTC")
        now = datetime.now(UTC)
        store.upsert_items([item("https://a.example/1", published=now)], seen_at=now)
        report = await publish(app, progress=heard)
    assert report.counts["sent"] == 1
    assert heard.steps() == [
        ("building the edition", None),
        ("writing the archive", None),
        ("sending messages", 1),
    ]
    assert ("advance", READER, 1) in heard.events
    assert heard.done("sending messages") == 1


async def test_deepen_tells_each_category_clustered_and_each_story_summarized(
    tmp_path: Path,
) -> None:
    heard = Recording()
    async with App(config_for(tmp_path)) as app:
        report = await deepen(app, progress=heard)
    assert heard.steps() == [("clustering categories", 2), ("summarizing stories", 0)]
    assert [e for e in heard.events if e[0] == "advance"] == [
        ("advance", "technology", 1),
        ("advance", "world", 1),
    ]
    assert report.counts["stories"] == 0


def test_a_step_of_a_run_names_the_run_step_and_passes_the_counts_on() -> None:
    heard = Recording()
    within = Within(heard, "2/3 deepen")
    within.step("summarizing stories", 4)
    within.advance(1, "https://a.example/1")
    assert heard.events == [
        ("step", "2/3 deepen · summarizing stories", 4),
        ("advance", "https://a.example/1", 1),
    ]


@pytest.mark.slow  # collect starts the page parsers' processes
async def test_collect_tells_each_category_gathered(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    heard = Recording()
    feeds = [feed(threaded_news_web.url("/feeds/technology.rss"))]
    async with App(config_for(tmp_path, feeds=feeds)) as app:
        report = await collect(app, progress=heard)
    assert report.headlines > 0
    assert heard.events == [
        ("step", "gathering categories", 2),
        ("advance", "technology", 1),
        ("advance", "world", 1),
    ]


@pytest.mark.slow  # collect starts the page parsers' processes
async def test_run_once_tells_each_step_of_the_cycle_in_turn(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    heard = Recording()
    feeds = [feed(threaded_news_web.url("/feeds/technology.rss"))]
    config = config_for(tmp_path, feeds=feeds)
    cycle = await run_daemon(config, once=True, progress=heard)
    assert cycle is not None and cycle.publish is not None
    runs = [name.split(" · ")[0] for name, _ in heard.steps()]
    assert runs[0] == "1/3 collect" and runs[-1] == "3/3 publish"
    assert sorted(set(runs), key=runs.index) == ["1/3 collect", "2/3 deepen", "3/3 publish"]
    assert heard.steps()[0] == ("1/3 collect · gathering categories", 2)
    assert heard.done("1/3 collect · gathering categories") == 2


@pytest.mark.slow  # runs the real CLI
def test_piped_collect_prints_its_report_and_no_progress(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    workdir = write_config(
        tmp_path,
        database={"url": "sqlite:///digest.db"},
        sources={"ddg": False, "feeds": [feed(threaded_news_web.url("/feeds/technology.rss"))]},
    )
    result = run_cli("collect", cwd=workdir)
    assert result.code == 0, result.stderr
    assert "collect run 1: ok" in result.stdout
    for shown in (result.stdout, result.stderr):
        assert "\x1b" not in shown and "\r" not in shown
        assert "gathering categories" not in shown


async def test_a_story_done_names_the_llm_budget_left_once_it_has_started() -> None:
    """On a terminal, each story summarized says how much of `[llm] budget` is left (the bar
    shows the time spent); before the first LLM summary, and with no budget, just the story."""
    from digest.jobs.llm_budget import LLMBudget as _Budget

    assert _Budget(None, stories=3).progress_detail("https://a.example/1") == "https://a.example/1"
    budget = _Budget(900.0, stories=3)
    assert budget.progress_detail("https://a.example/1") == "https://a.example/1"  # not begun
    budget.begin()
    detail = budget.progress_detail("https://a.example/2")
    assert detail.startswith("https://a.example/2 · [llm] budget ")
    assert detail.endswith(" s left") and 898 <= int(detail.split()[-3]) <= 900

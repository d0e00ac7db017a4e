"""Jobs as plans (`digest.jobs`): the planners decide without I/O, the in-process runner keeps
the units' order and lets every unit end before an error goes up, units and outcomes cross the
queue as JSON and come back equal, and the run record is kept the same way by every job."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.app import App
from digest.config import FeedConfig, parse_config
from digest.jobs.collect import (
    CategoryReport,
    ExtractOutcome,
    ExtractUnit,
    SourcesOutcome,
    SourcesUnit,
    plan_extraction,
    plan_sources,
)
from digest.jobs.deepen import (
    COUNTS,
    CrawlTarget,
    DeepenTally,
    StoryOutcome,
    StoryUnit,
    plan_stories,
)
from digest.jobs.run import recorded_run
from digest.jobs.sending import DeliveryUnit, plan_deliveries
from digest.jobs.story_summary import SOURCES_PER_STORY
from digest.jobs.units import STEPS, InProcess, Lost, Outcome, Unit, step
from digest.models import ArticleView, Failure, Headline, StoryView
from digest.worker import load_steps

NOW = datetime(2026, 12, 4, 18, 0, tzinfo=UTC)
text = st.text(max_size=30)
times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
days = st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1))
headlines = st.builds(
    Headline,
    title=text,
    url=text,
    source=text,
    published=st.none() | times,
    snippet=text,
    image=st.none() | text,
    category=st.none() | text,
    origin=text,
)
failures = st.builds(Failure, source=text, error=text)
feeds = st.builds(FeedConfig, url=text, category=text, name=st.none() | text)
counts = st.integers(0, 10_000)


def through_json(thing: Any) -> Any:
    """What the other side of the queue reads: the JSON text, decoded by the thing's type."""
    return type(thing).from_json(json.loads(json.dumps(thing.to_json())))


def headline(n: int) -> Headline:
    return Headline(f"Headline {n}", f"https://news.example/{n}", published=NOW)


def feed(n: int) -> FeedConfig:
    return FeedConfig(url=f"https://feeds.example/{n}.rss", category="world")


# The planners: what each job splits its work into, without I/O.


def test_a_category_is_its_search_then_its_feeds_by_sources_per_task() -> None:
    units = plan_sources("world", [feed(n) for n in range(5)], ddg=True, per_unit=2)
    assert [(u.ddg, [f.url for f in u.feeds]) for u in units] == [
        (True, []),
        (False, ["https://feeds.example/0.rss", "https://feeds.example/1.rss"]),
        (False, ["https://feeds.example/2.rss", "https://feeds.example/3.rss"]),
        (False, ["https://feeds.example/4.rss"]),
    ]
    assert {u.category for u in units} == {"world"}
    assert [u.what for u in units[:2]] == ["world:ddg", "world:2 feed(s)"]


def test_a_category_without_search_or_feeds_has_no_source_unit() -> None:
    assert plan_sources("world", [], ddg=False, per_unit=100) == []
    assert len(plan_sources("world", [feed(1)], ddg=False, per_unit=100)) == 1


def test_headlines_are_extracted_in_batches_of_headlines_per_task_in_order() -> None:
    units = plan_extraction("science", [headline(n) for n in range(7)], per_unit=3)
    assert [[h.url.rsplit("/", 1)[1] for h in u.headlines] for u in units] == [
        ["0", "1", "2"],
        ["3", "4", "5"],
        ["6"],
    ]
    assert plan_extraction("science", [], per_unit=3) == []


def article(id_: int, outlet: str, *, has_text: bool = False) -> ArticleView:
    return ArticleView(
        id=id_,
        url=f"https://{outlet}/{id_}",
        title=f"Article {id_}",
        source=outlet,
        outlet=outlet,
        published=NOW,
        first_seen=NOW,
        lede="A lede.",
        origin="feed",
        has_text=has_text,
        text_hash=None,
        crawl_status=None,
        summary=None,
    )


def story(id_: int, *articles: ArticleView) -> StoryView:
    outlets = len({a.outlet for a in articles})
    return StoryView(id_, "world", f"Story {id_}", NOW, NOW, False, None, 0, outlets, 1.0, articles)


def test_a_story_reads_the_first_page_of_each_outlet_still_without_text() -> None:
    told = story(
        1,
        article(10, "a.example"),
        article(11, "a.example"),  # a second article of an outlet already read: not read
        article(12, "b.example", has_text=True),  # its text is in already
        article(13, "c.example"),
    )
    assert plan_stories([told]) == [
        StoryUnit(
            1, (CrawlTarget(10, "https://a.example/10"), CrawlTarget(13, "https://c.example/13"))
        )
    ]


def test_a_story_reads_at_most_its_summary_s_sources_and_a_shared_page_once() -> None:
    many = story(1, *(article(n, f"o{n}.example") for n in range(SOURCES_PER_STORY + 2)))
    sharing = story(2, article(0, "o0.example"), article(99, "z.example"))
    first, second = plan_stories([many, sharing])
    assert [p.article for p in first.pages] == list(range(SOURCES_PER_STORY))
    assert [p.article for p in second.pages] == [99]  # page 0 is the first story's to read


def test_every_story_has_its_unit_even_with_nothing_to_read() -> None:
    read = story(3, article(30, "a.example", has_text=True))
    assert plan_stories([read]) == [StoryUnit(3, ())]


def test_subscribers_are_sent_in_batches_each_with_its_lock() -> None:
    emails = [f"r{n}@example.org" for n in range(5)]
    units, locks = plan_deliveries(
        date(2026, 12, 4), emails, now=NOW, due_only=True, newer=[date(2026, 12, 5)], per_unit=2
    )
    assert [u.recipients for u in units] == [
        ("r0@example.org", "r1@example.org"),
        ("r2@example.org", "r3@example.org"),
        ("r4@example.org",),
    ]
    assert locks == [
        "deliver:2026-12-04:r0@example.org",
        "deliver:2026-12-04:r2@example.org",
        "deliver:2026-12-04:r4@example.org",
    ]
    assert all(u.due_only and u.newer == (date(2026, 12, 5),) and u.now == NOW for u in units)
    assert plan_deliveries(
        date(2026, 12, 4), [], now=NOW, due_only=False, newer=(), per_unit=2
    ) == (
        [],
        [],
    )


# The deepen's tally.


def test_the_tally_adds_up_and_keeps_the_run_record_s_count_names() -> None:
    a = DeepenTally(crawled=2, llm=1, summary_ms=300)
    b = DeepenTally(crawled=1, crawl_failed=1, summary_ms=500)
    both = a + b
    assert (both.crawled, both.crawl_failed, both.llm) == (3, 1, 1)
    assert both.summary_ms == 500  # the longest story's: stories are summarized at once
    assert tuple(both.to_json()) == COUNTS
    assert set(COUNTS) == {
        *("stories", "crawled", "crawl_failed", "summarized", "reused", "llm", "extractive"),
        *("tokens", "embedded", "llm_calls", "sources_read", "claims", "claims_found"),
        *("sentences_removed", "claims_rejected", "over_budget", "summary_ms"),
        *("figure_checks", "figure_lines_kept_out"),
    }


# Units and outcomes cross the queue as JSON and come back as they went.


@given(st.builds(SourcesUnit, category=text, ddg=st.booleans(), feeds=st.tuples(feeds, feeds)))
def test_a_sources_unit_survives_the_queue(unit: SourcesUnit) -> None:
    assert through_json(unit) == unit


@given(st.builds(SourcesOutcome, headlines=st.tuples(headlines), failures=st.tuples(failures)))
def test_a_sources_outcome_survives_the_queue(outcome: SourcesOutcome) -> None:
    assert through_json(outcome) == outcome


@given(st.builds(ExtractUnit, category=text, headlines=st.tuples(headlines, headlines)))
def test_an_extraction_unit_survives_the_queue(unit: ExtractUnit) -> None:
    assert through_json(unit) == unit


reports = st.builds(
    CategoryReport, category=text, headlines=counts, with_lede=counts, new=counts, updated=counts
)


@given(st.builds(ExtractOutcome, report=reports, failing_hosts=st.dictionaries(text, counts)))
def test_an_extraction_outcome_survives_the_queue(outcome: ExtractOutcome) -> None:
    assert through_json(outcome) == outcome


pages = st.builds(CrawlTarget, article=st.integers(1, 10**9), url=text)
tallies = st.builds(DeepenTally, **{f.name: counts for f in fields(DeepenTally)})


@given(st.builds(StoryUnit, story=st.integers(0, 10**9), pages=st.tuples(pages, pages)))
def test_a_story_unit_survives_the_queue(unit: StoryUnit) -> None:
    assert through_json(unit) == unit


@given(
    st.builds(
        StoryOutcome,
        tally=tallies,
        summarized=st.booleans(),
        failed_pages=st.tuples(failures),
        fallback=st.none() | text,
        crawl_mode=text,
        crawl_mode_reason=text,
    )
)
def test_a_story_outcome_survives_the_queue(outcome: StoryOutcome) -> None:
    assert through_json(outcome) == outcome


@given(
    st.builds(
        DeliveryUnit,
        day=days,
        recipients=st.tuples(text, text),
        now=times,
        due_only=st.booleans(),
        newer=st.tuples(days),
    )
)
def test_a_delivery_unit_survives_the_queue(unit: DeliveryUnit) -> None:
    assert through_json(unit) == unit


def test_each_unit_kind_has_one_step_under_its_task_name() -> None:
    load_steps()
    assert {"digest.sources", "digest.extract", "digest.story", "digest.deliver"} <= set(STEPS)
    assert all(s.unit.kind == kind for kind, s in STEPS.items())


# The in-process runner.


@dataclass(frozen=True, slots=True)
class Slept(Outcome):
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Slept:
        return cls(data["name"])


@dataclass(frozen=True, slots=True)
class Nap(Unit[Slept]):
    kind: ClassVar[str] = "test.nap"
    name: str
    seconds: float
    fails: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds, "fails": self.fails}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Nap:
        return cls(data["name"], data["seconds"], data["fails"])


ENDED: list[str] = []


@step(Nap, Slept)
async def nap(app: Any, unit: Nap) -> Slept:
    await asyncio.sleep(unit.seconds)
    if unit.fails:
        raise ValueError(f"{unit.name} failed")
    ENDED.append(unit.name)
    return Slept(unit.name)


async def test_outcomes_come_in_the_units_order_whichever_ends_first() -> None:
    heard: list[str] = []
    units = [Nap("slow", 0.2), Nap("fast", 0.0), Nap("middle", 0.1)]
    outcomes = await InProcess(app=None).run(units, ended=lambda u: heard.append(u.name))  # type: ignore[arg-type]
    assert outcomes == [Slept("slow"), Slept("fast"), Slept("middle")]
    assert heard == ["fast", "middle", "slow"]


async def test_every_unit_ends_before_the_first_error_goes_up() -> None:
    ENDED.clear()
    units = [Nap("fails", 0.0, fails=True), Nap("later", 0.2), Nap("sooner", 0.05)]
    with pytest.raises(ValueError, match="fails failed"):
        await InProcess(app=None).run(units)  # type: ignore[arg-type]
    assert sorted(ENDED) == ["later", "sooner"]


def test_a_lost_unit_is_an_error_of_the_run_naming_its_task() -> None:
    lost = Lost(StoryUnit(42), "worker died")
    assert lost.failure("42") == Failure("task:digest.story:42", "worker died")


def test_a_second_step_for_one_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="two steps"):

        @step(Nap, Slept)
        async def another(app: Any, unit: Nap) -> Slept:
            return Slept(unit.name)


# The run record.


@pytest.fixture
async def app(tmp_path: Path) -> Any:
    config = parse_config({"database": {"url": f"sqlite:///{tmp_path / 'digest.db'}"}})
    async with App(config) as app:
        yield app


async def test_a_run_is_recorded_with_what_the_job_set(app: App) -> None:
    async with recorded_run(app, "collect", "collect:2026-12-04T18") as run:
        run.counts["headlines"] = 3
        run.errors.append(Failure("feed:https://x.example/rss", "HTTP 500"))
        run.status = "partial"
    [record] = (await app.store()).recent_runs(1)
    assert (record.id, record.kind, record.key, record.status) == (
        run.id,
        "collect",
        "collect:2026-12-04T18",
        "partial",
    )
    assert record.counts == {"headlines": 3}
    assert record.errors == [{"source": "feed:https://x.example/rss", "error": "HTTP 500"}]


async def test_a_run_that_raised_is_failed_and_one_cancelled_is_interrupted(app: App) -> None:
    with pytest.raises(RuntimeError):
        async with recorded_run(app, "deepen"):
            raise RuntimeError("boom")

    async def cancelled() -> None:
        async with recorded_run(app, "publish") as run:
            run.status = "ok"  # set, then Ctrl+C: interrupted all the same
            await asyncio.sleep(10)

    task = asyncio.create_task(cancelled())
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    runs = (await app.store()).recent_runs(2)
    assert [(r.kind, r.status) for r in runs] == [("publish", "interrupted"), ("deepen", "failed")]


class FakeQueue:
    """The queue's `run` as the runner sees it: each task's saved outcome, or why it failed."""

    def __init__(self) -> None:
        self.enqueued: list[tuple[str, list[dict[str, Any]], list[str]]] = []

    async def run(
        self, kind: str, arguments: list[dict[str, Any]], *, locks: Any = ()
    ) -> list[Any]:
        from digest.queue.queue import TaskFailedError

        self.enqueued.append((kind, arguments, list(locks)))
        return [
            TaskFailedError(f"{a['name']}: worker lost") if a["fails"] else {"name": a["name"]}
            for a in arguments
        ]


async def test_the_queue_runner_sends_units_as_json_and_gives_outcomes_or_lost_units() -> None:
    from digest.queue import QueueRunner

    queue = FakeQueue()
    units = [Nap("a", 0), Nap("b", 0, fails=True), Nap("c", 0)]
    heard: list[str] = []
    outcomes = await QueueRunner(queue).run(  # type: ignore[arg-type]
        units, locks=["x", "y", "z"], ended=lambda u: heard.append(u.name)
    )
    assert outcomes == [Slept("a"), Lost(units[1], "b: worker lost"), Slept("c")]
    assert queue.enqueued == [("test.nap", [u.to_json() for u in units], ["x", "y", "z"])]
    assert sorted(heard) == ["a", "b", "c"]

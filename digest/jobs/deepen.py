"""The deep path: cluster the day's articles into stories, crawl the top ones, summarize them.

Each top story gets one summary, written in one LLM call from the main texts of its first
outlets and checked claim by claim against them; a story whose texts have not changed keeps its
summary (`digest.jobs.story_summary`). The LLM summaries of one deepen share `[llm] budget`
seconds: the stories still waiting when it is spent are summarized extractively, and the run
record says how many and why (`digest.jobs.llm_budget`).

Each top story is one unit (`plan_stories`, `read_story`): its pages still to read, then its
summary, run by the app's runner in this process or on the workers alike (a story on a worker
has the whole `[llm] budget` for itself, from its first LLM call).

One failed page never sinks the batch: its error is recorded on the run and the story keeps
whatever else was read. With no LLM configured, or the LLM failing, summaries are extractive
(and marked so).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from digest.jobs.alerts import alert_followers
from digest.jobs.clustering import (
    NO_EMBEDDINGS,
    cluster_category,
    cluster_with_embeddings,
    shown_stories,
)
from digest.jobs.figure_check import ANSWERED_NO, FIGURE_CHECK, for_app, kept_out_line
from digest.jobs.llm_budget import (
    EARLIER,
    MEASURED,
    LLMBudget,
    earlier_story_seconds,
    measured_speeds,
    shared_budget,
    story_budget,
)
from digest.jobs.run import OpenRun, recorded_run
from digest.jobs.story_memory import record_stories
from digest.jobs.story_summary import (
    Written,
    has_summary,
    story_input,
    story_sources,
    write_summary,
)
from digest.jobs.units import Lost, Outcome, Unit, step
from digest.models import (
    Failure,
    Page,
    StorySummary,
    StoryView,
    Summary,
)
from digest.runtime import metrics
from digest.runtime.progress import NO_PROGRESS, Progress
from digest.store import content_hash
from digest.summarize.fallbacks import tally as fallback_causes
from digest.summarize.timing import counted_calls

if TYPE_CHECKING:
    from digest.config import Config
    from digest.jobs.units import Parts
    from digest.store.face import StoreFace
    from digest.stories.embeddings import Embedder
    from digest.summarize.llm import LLMClient

log = logging.getLogger(__name__)

# The source of a run's error when the embeddings endpoint failed and stories were told by
# their words alone: a fallback, not a failure of the run's own work.
EMBEDDINGS = "embeddings"
BUDGET = "llm budget"


@dataclass(frozen=True, slots=True)
class DeepenTally:
    """What a deepen counts (the run record's `counts`); each story's unit counts its own
    and the job adds them up."""

    stories: int = 0
    crawled: int = 0
    crawl_failed: int = 0
    summarized: int = 0
    reused: int = 0
    llm: int = 0
    extractive: int = 0
    tokens: int = 0
    embedded: int = 0
    llm_calls: int = 0
    sources_read: int = 0
    claims: int = 0
    claims_found: int = 0
    sentences_removed: int = 0
    claims_rejected: int = 0
    over_budget: int = 0
    # The model's questions of the summaries' disagreements, and those it did not confirm
    # (`digest.jobs.figure_check`: the summary then attributes no values for them).
    figure_checks: int = 0
    figure_lines_kept_out: int = 0
    # The longest story's summary: stories are summarized at once (the LLM client lets
    # `[llm] concurrency` through), so the longest is about how long summarizing took.
    summary_ms: int = 0

    def __add__(self, other: DeepenTally) -> DeepenTally:
        both = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        both["summary_ms"] = max(self.summary_ms, other.summary_ms)
        return DeepenTally(**both)

    def to_json(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeepenTally:
        return cls(**{f.name: int(data.get(f.name, 0)) for f in fields(cls)})


# What a deepen counts, by name (the run record's `counts`).
COUNTS = tuple(f.name for f in fields(DeepenTally))


@dataclass(frozen=True, slots=True)
class DeepenReport:
    run_id: int
    status: str  # "ok", "partial" (some pages failed) or "failed" (nothing could be read)
    counts: dict[str, int] = field(default_factory=dict)
    crawl_mode: str = ""
    crawl_mode_reason: str = ""
    errors: list[Failure] = field(default_factory=list)
    elapsed: float = 0.0
    similarity: str = "lexical"  # how stories were told apart: "embeddings" or "lexical"
    similarity_reason: str = ""  # why lexical: no [stories.embeddings], or the endpoint's error

    @property
    def failed_pages(self) -> list[Failure]:
        """The pages that could not be read. The other errors are the run's own (the
        embeddings endpoint, the LLM, its budget, a lost task): no page failed in them."""
        return [e for e in self.errors if is_page(e)]


def is_page(failure: Failure) -> bool:
    """A failure of one page (named by its URL), not of the run."""
    return failure.source.startswith(("http://", "https://"))


async def summarize_text(
    app: Parts, *, url: str, title: str, text: str, source: str = "", article_id: int | None = None
) -> tuple[Summary, bool, str | None]:
    """Summarize one text, reusing a stored summary of the same text by the same summarizer.

    Returns (summary, reused, why the LLM was not used if it was configured but failed).
    """
    from digest.summarize import ArticleInput

    summarizer = await app.summarizer()
    key = content_hash(text)
    store = await app.face() if article_id is not None else None
    if store is not None:
        known = await store.find_summary(key, summarizer.preferred)
        if known is not None:
            return known, True, None
    outcome = await summarizer.summarize_with_outcome(
        ArticleInput(url=url, title=title, text=text, source=source)
    )
    if store is not None and article_id is not None:
        await store.save_summary(article_id, key, outcome.summary)
    return outcome.summary, False, outcome.fallback_reason


@dataclass(frozen=True, slots=True)
class CrawlTarget:
    """An article of a story whose page is still to be read."""

    article: int
    url: str


@dataclass(frozen=True, slots=True)
class StoryOutcome(Outcome):
    """What reading and summarizing one story did: its counts, the pages that failed, why its
    summary fell back to extractive (if it did), and the crawl mode used."""

    tally: DeepenTally = DeepenTally()
    summarized: bool = False
    failed_pages: tuple[Failure, ...] = ()
    fallback: str | None = None
    crawl_mode: str = ""
    crawl_mode_reason: str = ""
    kept_out: tuple[str, ...] = ()  # why each disagreement the model did not confirm

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": self.tally.to_json(),
            "summarized": self.summarized,
            "failed_pages": [f.to_json() for f in self.failed_pages],
            "fallback": self.fallback,
            "crawl_mode": self.crawl_mode,
            "crawl_mode_reason": self.crawl_mode_reason,
            "kept_out": list(self.kept_out),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoryOutcome:
        return cls(
            DeepenTally.from_json(data["counts"]),
            bool(data["summarized"]),
            tuple(Failure.from_json(f) for f in data["failed_pages"]),
            data["fallback"],
            str(data["crawl_mode"]),
            str(data["crawl_mode_reason"]),
            tuple(str(c) for c in data.get("kept_out", ())),
        )


@dataclass(frozen=True, slots=True)
class StoryUnit(Unit[StoryOutcome]):
    """One top story: the pages of its sources still to read, then its one summary (a story
    in one unit, so a worker reads a story as a deepen does)."""

    kind: ClassVar[str] = "digest.story"
    story: int
    pages: tuple[CrawlTarget, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"story": self.story, "pages": [[p.article, p.url] for p in self.pages]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoryUnit:
        pages = tuple(CrawlTarget(int(a), str(u)) for a, u in data["pages"])
        return cls(int(data["story"]), pages)


def plan_stories(
    stories: Sequence[StoryView], stale: Collection[int] = frozenset()
) -> list[StoryUnit]:
    """A unit per story, with the pages to read: its sources (`story_sources`) that have no
    main text yet, or whose text is `stale` (read on an earlier day, of a story that is still
    developing: its outlets update their articles), each page once even when two stories
    share it."""
    planned: set[int] = set()
    units = []
    for story in stories:
        pages = []
        for a in story_sources(story):
            if (not a.has_text or a.id in stale) and a.id not in planned:
                planned.add(a.id)
                pages.append(CrawlTarget(a.id, a.url))
        units.append(StoryUnit(story.id, tuple(pages)))
    return units


async def deepen(
    app: Parts,
    categories: list[str] | None = None,
    *,
    top: int | None = None,
    progress: Progress = NO_PROGRESS,
) -> DeepenReport:
    """Cluster, crawl and summarize the top stories of each category (default: all);
    `progress` hears of each step: clustering, then each story read and summarized."""
    started = time.monotonic()
    config = app.config
    cats = [config.check_category(c) for c in categories] if categories else None
    cats = cats or list(config.sources.categories)
    store = await app.face()
    embedder = await app.embedder()
    now = datetime.now(UTC)
    found = _Found.told_by(embedder)
    with counted_calls() as own_calls:  # this run's, whatever else shares the client
        async with recorded_run(app, "deepen", started=started) as run:
            try:
                await _cluster(store, config, cats, now, embedder, found, run, progress)
                stories = await _top_stories(store, config, cats, now, top or config.stories.top)
                found.tally += DeepenTally(stories=len(stories))
                metrics.stories_deepened.inc(len(stories))
                read = await _read_stories(app, stories, progress)
                found.took(read)
                run.errors += read.errors
                run.status = _status(run.errors, read.summarized)
            finally:
                # The calls made here, outside the stories' units (each unit counts its own).
                found.tally += DeepenTally(llm_calls=own_calls[0])
                run.counts = found.counts()
    await alert_followers(app, "deepen")  # the stories' new facts, to their followers
    return DeepenReport(
        run.id,
        run.status,
        found.tally.to_json(),
        found.crawl_mode,
        found.crawl_mode_reason,
        run.errors,
        time.monotonic() - started,
        found.similarity,
        found.similarity_reason,
    )


@dataclass(slots=True)
class _Found:
    """What a deepen has counted and learned so far: the run record's `counts`, written
    whatever stage it stopped at."""

    tally: DeepenTally = DeepenTally()
    crawl_mode: str = ""
    crawl_mode_reason: str = ""
    similarity: str = "lexical"  # how stories were told apart (`DeepenReport.similarity`)
    similarity_reason: str = ""
    measured: dict[str, Any] = field(default_factory=dict)  # {MEASURED: the server's speeds}

    @classmethod
    def told_by(cls, embedder: Embedder | None) -> _Found:
        """A deepen's start: stories told apart by their vectors when there is an embedder."""
        if embedder is not None:
            return cls(similarity="embeddings")
        return cls(similarity="lexical", similarity_reason=NO_EMBEDDINGS)

    def took(self, read: _Read) -> None:
        """The stories' outcomes, folded into what the run found."""
        self.tally += read.tally
        self.crawl_mode, self.crawl_mode_reason = read.crawl_mode, read.crawl_mode_reason
        if read.measured is not None:
            self.measured = {MEASURED: read.measured}

    def counts(self) -> dict[str, Any]:
        return {
            **self.tally.to_json(),
            "crawl_mode": self.crawl_mode,
            "crawl_mode_reason": self.crawl_mode_reason,
            "similarity": self.similarity,
            "similarity_reason": self.similarity_reason,
            **self.measured,
        }


async def _cluster(
    store: StoreFace,
    config: Config,
    cats: list[str],
    now: datetime,
    embedder: Embedder | None,
    found: _Found,
    run: OpenRun,
    progress: Progress,
) -> None:
    """Cluster each category's articles into stories, by their vectors while the embeddings
    endpoint answers, by their words alone once it failed (the failure on the run's errors)."""
    progress.step("clustering categories", len(cats))
    for category in cats:
        # Once the endpoint failed, the rest of the run goes without it: a dead
        # server costs one timeout per run, not one per category.
        if embedder is not None and found.similarity == "embeddings":
            result = await cluster_with_embeddings(
                store, category, now=now, config=config.stories, embedder=embedder
            )
            found.tally += DeepenTally(embedded=result.embedded)
            if result.embedding_error:
                found.similarity = "lexical"
                found.similarity_reason = reason = result.embedding_error
                log.warning("stories told by their words alone: %s", reason)
                run.errors.append(Failure(EMBEDDINGS, f"lexical similarity only: {reason}"))
        else:
            await store.call(cluster_category, category, now=now, config=config.stories)
        progress.advance(1, category)


async def _top_stories(
    store: StoreFace, config: Config, cats: list[str], now: datetime, limit: int
) -> list[StoryView]:
    """Each category's top as the edition shows it: an event collected under two
    categories is read once, and the other category's next story is read too."""
    return await store.call(
        shown_stories,
        config.stories,
        list(dict.fromkeys([*config.sources.categories, *cats])),
        since=now - timedelta(hours=24),
        limit=limit,
        only=cats,
    )


def _status(errors: Sequence[Failure], summarized: int) -> str:
    """The run's status: "ok" without errors; "failed" when its own work (pages and summaries,
    not the embeddings' fallback) failed and no story was summarized; else "partial"."""
    own = [e for e in errors if e.source != EMBEDDINGS]  # pages and summaries
    return "ok" if not errors else ("partial" if summarized or not own else "failed")


@dataclass(frozen=True, slots=True)
class _Read:
    """The stories' outcomes, folded."""

    tally: DeepenTally
    summarized: int
    errors: list[Failure]
    crawl_mode: str
    crawl_mode_reason: str
    measured: dict[str, Any] | None = None  # the server's speeds (`llm_budget.measured_speeds`)


async def _read_stories(app: Parts, stories: list[StoryView], progress: Progress) -> _Read:
    """Every story's unit through the runner, their LLM summaries sharing this deepen's
    `[llm] budget` when they run in this process; the outcomes folded into one tally, the
    failed pages, and one error each for the summaries that fell back or ran out of budget."""
    units = plan_stories(stories, await _stale_pages(app, stories))
    # A story as progress names it: its representative's URL.
    shown = {s.id: s.articles[0].url if s.articles else s.title for s in stories}
    progress.step("summarizing stories", len(units))
    runner = await app.runner()
    llm = None if runner.remote else (await app.summarizer()).llm  # a worker's is its own
    shared = await _deepen_budget(app, stories, units, llm)
    with shared_budget(shared):
        outcomes = await runner.run(
            units, ended=lambda u: progress.advance(1, shared.progress_detail(shown[u.story]))
        )
    return _folded(units, outcomes, shared.seconds, llm)


async def _deepen_budget(
    app: Parts, stories: list[StoryView], units: list[StoryUnit], llm: LLMClient | None
) -> LLMBudget:
    """The `[llm] budget` the stories summarized in this process share, counting the stories
    whose summary will likely be written, and its forecast said as soon as it can be."""
    budget = app.config.llm.budget if app.config.llm else None
    shared = LLMBudget(budget, stories=len(units))
    if budget is not None and llm is not None and units:
        shared.counted = await _to_write(app, stories, units)
        shared.stories = len(shared.counted)
        if measured_speeds(llm) is not None:
            shared.foresee(llm)
        elif (earlier := await earlier_story_seconds(await app.face(), llm)) is not None:
            shared.foresee(llm, earlier, EARLIER)  # a fresh process: nothing measured yet
    return shared


def _folded(
    units: Sequence[StoryUnit],
    outcomes: Sequence[StoryOutcome | Lost],
    budget: float | None,
    llm: LLMClient | None,
) -> _Read:
    """The stories' outcomes as one: their tallies added up, their failed pages, and one
    error each for the summaries that fell back, the disagreements the model could not
    check, and the stories left extractive by the budget (`budget` seconds)."""
    tally, summarized, mode, reason = DeepenTally(), 0, "", ""
    errors: list[Failure] = []
    fallbacks: list[str] = []
    kept_out: list[str] = []
    for unit, outcome in zip(units, outcomes, strict=True):
        if isinstance(outcome, Lost):
            errors.append(outcome.failure(str(unit.story)))
            continue
        tally += outcome.tally
        summarized += outcome.summarized
        errors += outcome.failed_pages
        if outcome.fallback:
            fallbacks.append(outcome.fallback)
        kept_out += outcome.kept_out
        mode = outcome.crawl_mode or mode
        reason = outcome.crawl_mode_reason or reason
    log.info(
        "story summaries: %d made (%d by the LLM, %d extractive, %d left to extractive by the "
        "budget), %d unchanged; claims %d of %d found, %d sentences removed",
        tally.summarized,
        tally.llm,
        tally.extractive,
        tally.over_budget,
        tally.reused,
        tally.claims_found,
        tally.claims,
        tally.sentences_removed,
    )
    if fallbacks:
        # Every cause once, counted: the first one named for all hid the others.
        n, causes = len(fallbacks), fallback_causes(fallbacks)
        summaries = f"{n} summar{'y' if n == 1 else 'ies'}"
        errors.append(Failure("llm", f"{summaries} fell back to extractive: {causes}"))
    if kept_out:
        said = kept_out_line(kept_out, "disagreements in summaries")
        log.info("%s", said)
        if any(c != ANSWERED_NO for c in kept_out):  # the model failed, not said no
            errors.append(Failure(FIGURE_CHECK, said))
    if tally.over_budget:
        n = tally.over_budget
        errors.append(
            Failure(
                BUDGET,
                f"{n} stor{'y' if n == 1 else 'ies'} summarized extractively: the [llm] budget "
                f"of {budget or 0:g} s for this deepen was spent",
            )
        )
    return _Read(tally, summarized, errors, mode, reason, measured_speeds(llm))


async def _to_write(
    app: Parts, stories: Sequence[StoryView], units: Sequence[StoryUnit]
) -> set[int]:
    """The stories whose summary will likely be written: those with pages to read (their texts
    may change), and those whose texts have no summary yet (the others keep theirs)."""
    preferred = (await app.summarizer()).preferred
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    by_id = {s.id: s for s in stories}
    out = set()
    for unit in units:
        if not unit.pages:
            item = await story_input(app, by_id[unit.story], today)
            if not item.sources or await has_summary(app, unit.story, item.content_hash, preferred):
                continue
        out.add(unit.story)
    return out


async def _stale_pages(app: Parts, stories: Sequence[StoryView]) -> set[int]:
    """The sources of developing stories (one with an article first seen today and one seen
    before) whose main text was read before today: read again, so that an outlet's updated
    article (a revised toll) reaches the summary and the story's timeline."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    developing = [
        a.id
        for s in stories
        if any(a.first_seen >= today for a in s.articles)
        and any(a.first_seen < today for a in s.articles)
        for a in story_sources(s)
        if a.has_text
    ]
    store = await app.face()
    return await store.texts_read_before(developing, today)


@step(StoryUnit, StoryOutcome)
async def read_story(app: Parts, unit: StoryUnit) -> StoryOutcome:
    """Read the story's pages still to read, then write its one summary (the claim check and
    `[llm]` limits as ever; the LLM calls counted are this unit's own)."""
    store = await app.face()
    tally = DeepenTally()
    failed: list[Failure] = []
    crawler = await app.crawler() if unit.pages else None
    if crawler is not None:
        for page_tally, failure in await asyncio.gather(
            *(_crawl(app, crawler, page) for page in unit.pages)
        ):
            tally += page_tally
            if failure is not None:
                failed.append(failure)
    views = await store.stories_by_id([unit.story])
    budget = story_budget(app.config.llm.budget if app.config.llm else None)
    summarized, fallback = False, None
    check = await for_app(app)
    with counted_calls() as calls:  # this unit's own, whatever else runs beside it
        if views:
            began = time.monotonic()
            written = await write_summary(app, views[0], budget, check)
            summarized, fallback = written.has_summary, written.fallback
            took = DeepenTally(summary_ms=round((time.monotonic() - began) * 1000))
            tally += _counted(written) + took
    tally += DeepenTally(
        llm_calls=calls[0], figure_checks=check.asked, figure_lines_kept_out=len(check.kept_out)
    )
    # What the story's outlets as read now add to its timeline (recorded once each).
    await record_stories(store, views, datetime.now(UTC))
    return StoryOutcome(
        tally,
        summarized,
        tuple(failed),
        fallback,
        crawler.mode if crawler else "",
        crawler.mode_reason if crawler else "",
        tuple(check.kept_out),
    )


async def _crawl(app: Parts, crawler: Any, page: CrawlTarget) -> tuple[DeepenTally, Failure | None]:
    store = await app.face()
    read: Page = await crawler.crawl_one(page.url)
    await store.save_crawl(page.article, read)
    if not read.ok:
        return DeepenTally(crawl_failed=1), Failure(page.url, read.error or "no main text found")
    return DeepenTally(crawled=1), None


def _counted(written: Written) -> DeepenTally:
    """What writing a story's summary counts: a summary kept, or one written."""
    if written.summary is None:
        return DeepenTally(reused=int(written.kept))
    over = DeepenTally(over_budget=int(written.over_budget))
    return over + _count(written.summary, written.sources)


def _count(summary: StorySummary, sources: int) -> DeepenTally:
    method = "extractive" if summary.summarizer == "extractive" else "llm"
    metrics.summaries.labels(method).inc()
    return DeepenTally(
        summarized=1,
        llm=int(method == "llm"),
        extractive=int(method == "extractive"),
        tokens=summary.prompt_tokens + summary.completion_tokens,
        sources_read=sources,
        claims=summary.claims,
        claims_found=summary.claims_found,
        sentences_removed=summary.sentences_removed,
        claims_rejected=int(summary.note.startswith("claim check")),
    )

"""The collection pass: headlines from every source, fast extraction, store, run record.

Planned as units (`digest.jobs`): each category's sources (`plan_sources`), then its headlines
in batches (`plan_extraction`), run by the app's runner, in this process or on the workers alike.
One source failing never stops the others: its error is recorded on the run and shown by the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from digest.config import Config, FeedConfig
from digest.errors import DigestError, InvalidURLError
from digest.fetch.cache import host_of
from digest.jobs.run import recorded_run
from digest.jobs.units import Lost, Outcome, Runner, Unit, step
from digest.models import Failure, FeedState, Headline, Item, SubscribedFeed
from digest.runtime import metrics
from digest.runtime.progress import NO_PROGRESS, Progress
from digest.sources.feeds import fetch_feed
from digest.store.urls import canonical_url

if TYPE_CHECKING:
    from digest.jobs.units import Parts
    from digest.store.articles import UpsertResult

log = logging.getLogger(__name__)


class CollectStore(Protocol):
    """What collecting reads and writes of the store: the subscribed feeds, the feeds' states
    (validators and back-off) and the articles. The store's face (`App.face`) is one; so is the
    tests' memory twin (`tests/memory_stores.MemoryCollectStore`), handed as `store=`."""

    async def subscribed_feeds(self, category: str | None = None) -> list[SubscribedFeed]: ...

    async def feed_states_of(self, urls: Sequence[str]) -> dict[str, FeedState]: ...

    async def save_feed_states(self, states: Sequence[FeedState]) -> None: ...

    async def upsert_items(self, items: Iterable[Item], *, seen_at: datetime) -> UpsertResult: ...


@dataclass(frozen=True, slots=True)
class CategoryReport:
    category: str
    headlines: int = 0
    with_lede: int = 0
    new: int = 0
    updated: int = 0

    def plus(self, other: CategoryReport) -> CategoryReport:
        """Both batches' counts, as one category's."""
        return CategoryReport(
            self.category,
            self.headlines + other.headlines,
            self.with_lede + other.with_lede,
            self.new + other.new,
            self.updated + other.updated,
        )


@dataclass(frozen=True, slots=True)
class CollectReport:
    run_id: int
    status: str  # "ok", "partial" (some sources failed) or "failed" (nothing collected)
    categories: list[CategoryReport] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    elapsed: float = 0.0
    feeds: int = 0  # feeds looked at (config file and database), backed-off ones included

    @property
    def headlines(self) -> int:
        return sum(c.headlines for c in self.categories)


async def feeds_for(
    app: Parts, category: str, *, store: CollectStore | None = None
) -> list[FeedConfig]:
    """The feeds collected for a category: the config file's, then the database's. `store`:
    the app's store face when None (as for the others here)."""
    if store is None:
        store = await app.face()
    subscribed = await store.subscribed_feeds(category)
    return [f for f in merge_feeds(app.config, subscribed) if _feed_category(f) == category]


def merge_feeds(config: Config, subscribed: Iterable[SubscribedFeed]) -> list[FeedConfig]:
    """The config file's feeds, then the subscribed ones the config does not have."""
    seen = {feed_key(f.url) for f in config.sources.feeds}
    merged = list(config.sources.feeds)
    for f in subscribed:
        if (key := feed_key(f.url)) not in seen:
            seen.add(key)
            merged.append(FeedConfig(url=f.url, category=f.category, name=f.name))
    return merged


def feed_key(url: str) -> str:
    """A feed's canonical URL; a config file's URL that is not one stays itself."""
    try:
        return canonical_url(url)
    except InvalidURLError:
        return url.strip()


def _feed_category(feed: FeedConfig) -> str:
    return feed.category.strip().lower()


def merge_headlines(batches: Iterable[list[Headline]]) -> list[Headline]:
    """Dedupe by canonical URL, first seen wins; later copies only fill fields it lacks."""
    merged: dict[str, Headline] = {}
    for batch in batches:
        for h in batch:
            key = canonical_url(h.url)
            first = merged.get(key)
            if first is None:
                merged[key] = h
                continue
            merged[key] = first.with_(
                source=first.source or h.source,
                published=first.published or h.published,
                snippet=first.snippet or h.snippet,
                image=first.image or h.image,
            )
    return list(merged.values())


def failed_hosts(items: Iterable[Item]) -> Counter[str]:
    """How many pages of each host failed the fast extraction (late, refused, error)."""
    return Counter(
        host_of(i.extract.url) for i in items if i.extract.status in ("timeout", "error", "blocked")
    )


def run_status(headlines: int, failures: int) -> str:
    if failures == 0:
        return "ok"
    return "partial" if headlines else "failed"


async def feeds_headlines(
    app: Parts,
    feeds: Sequence[Any],
    failures: list[Failure],
    *,
    store: CollectStore | None = None,
) -> list[list[Headline]]:
    """Each feed's headlines (conditional GETs, all at once), their saved states read in one
    query and saved in one transaction; a failure is added to `failures`, and a feed failing
    again and again rests (`backoff`)."""
    if store is None:
        store = await app.face()
    states = await store.feed_states_of([f.url for f in feeds])
    now = datetime.now(UTC)
    done = await asyncio.gather(
        *(_feed_headlines_one(app, f, states.get(f.url), failures, now) for f in feeds)
    )
    saved = [state for _, state in done if state is not None]
    if saved:
        await store.save_feed_states(saved)
    return [headlines for headlines, _ in done]


async def _feed_headlines_one(
    app: Parts, feed: Any, state: FeedState | None, failures: list[Failure], now: datetime
) -> tuple[list[Headline], FeedState | None]:
    """One feed's headlines and the state to save (None: resting, nothing changes)."""
    if state is not None and (wait := backoff(state, now)):
        failures.append(
            Failure(
                f"feed:{feed.url}",
                f"backed off after {state.error_count} failures in a row "
                f"(next try in {wait}); last error: {state.last_error}",
            )
        )
        return [], None
    try:
        result = await fetch_feed(
            app.http,
            feed,
            state,
            timeout=app.config.sources.feed_timeout,
            max_bytes=app.config.fetch.max_feed_bytes,
            parsers=app.feed_parsers,
        )
    except DigestError as err:
        failures.append(Failure(f"feed:{feed.url}", str(err)))
        metrics.source_failures.labels("feed").inc()
        return [], _failed(state, feed, str(err), now)
    return list(result.headlines), result.state


def backoff(state: FeedState, now: datetime) -> timedelta | None:
    """How long a failing feed still rests: after 3 failures in a row, 2^n minutes (≤ 1 day)."""
    if state.error_count < 3 or state.last_checked_at is None:
        return None
    rest = timedelta(minutes=min(2**state.error_count, 24 * 60))
    left = state.last_checked_at + rest - now
    return left if left > timedelta(0) else None


def _failed(state: FeedState | None, feed, error: str, now: datetime) -> FeedState:
    if state is None:
        state = FeedState(url=feed.url, category=feed.category, title=feed.name)
    return replace(state, error_count=state.error_count + 1, last_error=error, last_checked_at=now)


SEARCH = "ddg:news"


def one_search_failure(failures: list[Failure], categories: Sequence[str]) -> list[Failure]:
    """DuckDuckGo failing for every category of a pass (offline, blocked) is one cause, told
    once, as the source "ddg:news" with the first category's reason; when only some
    categories failed, each is its own line."""
    searched = [f for f in failures if f.source.startswith(f"{SEARCH}:")]
    if len(categories) < 2 or {f.source for f in searched} != {f"{SEARCH}:{c}" for c in categories}:
        return failures
    first = searched[0]
    reason = first.error.split(") failed: ", 1)[-1]  # "news search for 'x' (ddgs: ...) failed: "
    told = Failure(
        SEARCH,
        f"news search failed for all {len(categories)} categories "
        f"({first.source.removeprefix(f'{SEARCH}:')}: {reason})",
    )
    at = failures.index(first)
    return [*failures[:at], told, *(f for f in failures[at:] if f not in searched)]


async def search_headlines(app: Parts, category: str, failures: list[Failure]) -> list[Headline]:
    """The category's DuckDuckGo news; a failure is added to `failures`."""
    try:
        return await app.ddg.news(category, max_results=app.config.sources.results_per_category)
    except DigestError as err:
        failures.append(Failure(f"{SEARCH}:{category}", str(err)))
        metrics.source_failures.labels("ddg").inc()
        return []


async def extract_and_store(
    app: Parts,
    category: str,
    headlines: list[Headline],
    *,
    in_turn: bool = False,
    store: CollectStore | None = None,
) -> tuple[CategoryReport, Counter[str]]:
    """Fast extraction of the headlines' pages, then the upsert: what one category (or one
    batch of it, on a worker) adds, and the hosts whose pages failed. `in_turn`: the pages
    are read holding the extractor's `turn`, so that passes sharing a process take turns."""
    if store is None:
        store = await app.face()
    async with app.extractor.turn if in_turn else contextlib.nullcontext():
        items = await app.extractor.enrich(headlines)
    result = await store.upsert_items(items, seen_at=datetime.now(UTC))
    metrics.articles_collected.labels(category).inc(len(items))
    metrics.articles_new.labels(category).inc(result.new)
    report = CategoryReport(
        category=category,
        headlines=len(items),
        with_lede=sum(1 for i in items if i.extract.full_content),
        new=result.new,
        updated=result.updated,
    )
    return report, failed_hosts(items)


# The units of a collection: a category's sources (its DuckDuckGo query, or some of its
# feeds), then its headlines in batches for the fast extraction.


@dataclass(frozen=True, slots=True)
class SourcesOutcome(Outcome):
    headlines: tuple[Headline, ...] = ()
    failures: tuple[Failure, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "headlines": [h.to_json() for h in self.headlines],
            "failures": [f.to_json() for f in self.failures],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourcesOutcome:
        return cls(
            tuple(Headline.from_json(h) for h in data["headlines"]),
            tuple(Failure.from_json(f) for f in data["failures"]),
        )


@dataclass(frozen=True, slots=True)
class SourcesUnit(Unit[SourcesOutcome]):
    """A category's DuckDuckGo news (`ddg`) or some of its feeds."""

    kind: ClassVar[str] = "digest.sources"
    category: str
    ddg: bool = False
    feeds: tuple[FeedConfig, ...] = ()

    @property
    def what(self) -> str:
        return f"{self.category}:" + ("ddg" if self.ddg else f"{len(self.feeds)} feed(s)")

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "ddg": self.ddg,
            "feeds": [f.model_dump() for f in self.feeds],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourcesUnit:
        feeds = tuple(FeedConfig(**f) for f in data["feeds"])
        return cls(str(data["category"]), bool(data["ddg"]), feeds)


@dataclass(frozen=True, slots=True)
class ExtractOutcome(Outcome):
    report: CategoryReport
    failing_hosts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.report.category,
            "headlines": self.report.headlines,
            "with_lede": self.report.with_lede,
            "new": self.report.new,
            "updated": self.report.updated,
            "failing_hosts": dict(self.failing_hosts),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtractOutcome:
        report = CategoryReport(
            str(data["category"]),
            int(data["headlines"]),
            int(data["with_lede"]),
            int(data["new"]),
            int(data["updated"]),
        )
        return cls(report, {str(k): int(v) for k, v in data["failing_hosts"].items()})


@dataclass(frozen=True, slots=True)
class ExtractUnit(Unit[ExtractOutcome]):
    """One batch of a category's headlines, for the fast extraction and the upsert."""

    kind: ClassVar[str] = "digest.extract"
    category: str
    headlines: tuple[Headline, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "headlines": [h.to_json() for h in self.headlines]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtractUnit:
        headlines = tuple(Headline.from_json(h) for h in data["headlines"])
        return cls(str(data["category"]), headlines)


def plan_sources(
    category: str, feeds: Sequence[FeedConfig], *, ddg: bool, per_unit: int
) -> list[SourcesUnit]:
    """A category's sources as units: its DuckDuckGo query alone (when `ddg`), then its feeds
    by `per_unit` (`[queue] sources_per_task`)."""
    units = [SourcesUnit(category, ddg=True)] if ddg else []
    for i in range(0, len(feeds), per_unit):
        units.append(SourcesUnit(category, feeds=tuple(feeds[i : i + per_unit])))
    return units


def plan_extraction(
    category: str, headlines: Sequence[Headline], *, per_unit: int
) -> list[ExtractUnit]:
    """A category's headlines by `per_unit` (`[queue] headlines_per_task`), in or off the
    process: one pass has 1.5 s, which reads a few hundred pages (5,000 headlines in one
    pass gave 300 of them a lede). The passes take turns, and a batch's upsert runs while
    the next batch's pages are read."""
    return [
        ExtractUnit(category, tuple(headlines[i : i + per_unit]))
        for i in range(0, len(headlines), per_unit)
    ]


@step(SourcesUnit, SourcesOutcome)
async def read_sources(app: Parts, unit: SourcesUnit) -> SourcesOutcome:
    """The unit's headlines, merged. The fast extraction's parsers start meanwhile: the
    extraction units come next."""
    await app.extractor.warm()
    failures: list[Failure] = []
    fed = feeds_headlines(app, unit.feeds, failures)
    if unit.ddg:
        searched, fed_batches = await asyncio.gather(
            search_headlines(app, unit.category, failures), fed
        )
        batches = [searched, *fed_batches]
    else:
        batches = await fed
    return SourcesOutcome(tuple(merge_headlines(batches)), tuple(failures))


@step(ExtractUnit, ExtractOutcome)
async def extract_batch(app: Parts, unit: ExtractUnit) -> ExtractOutcome:
    """Fast extraction and the upsert of one batch. Fast passes take turns, one per process
    and one per core on the machine (`digest.fetch.turns`): each has its whole budget from
    its turn."""
    report, hosts = await extract_and_store(app, unit.category, list(unit.headlines), in_turn=True)
    return ExtractOutcome(report, dict(hosts))


async def collect(
    app: Parts,
    categories: list[str] | None = None,
    *,
    run_key: str | None = None,
    progress: Progress = NO_PROGRESS,
) -> CollectReport:
    """One pass over the configured sources of the given categories (default: all).

    `run_key` names the scheduled period this pass covers; RunExistsError if it ran already.
    `progress` hears of each category gathered.
    """
    started = time.monotonic()
    cats = [app.config.check_category(c) for c in categories] if categories else None
    cats = cats or list(app.config.sources.categories)
    reports: list[CategoryReport] = []
    failing_hosts: Counter[str] = Counter()
    feeds: list[str] = []
    async with recorded_run(app, "collect", run_key, started=started) as run:
        try:
            progress.step("gathering categories", len(cats))
            runner = await app.runner()
            plans: dict[str, list[SourcesUnit]] = {}
            for category in cats:
                found = await feeds_for(app, category)
                feeds.extend(f.url for f in found)
                plans[category] = plan_sources(
                    category,
                    found,
                    ddg=app.config.sources.ddg,
                    per_unit=app.config.queue.sources_per_task,
                )
            reports += await _categories(app, runner, plans, run.errors, failing_hosts, progress)
            run.errors[:] = one_search_failure(run.errors, cats)
            run.status = run_status(sum(r.headlines for r in reports), len(run.errors))
        finally:
            run.counts = {
                "headlines": sum(r.headlines for r in reports),
                "with_lede": sum(r.with_lede for r in reports),
                "new": sum(r.new for r in reports),
                "updated": sum(r.updated for r in reports),
                "categories": {r.category: r.headlines for r in reports},
                # Hosts whose pages failed (timeout, error, blocked) in this pass: `digest status`.
                "failing_hosts": dict(failing_hosts.most_common(20)),
            }
    for f in run.errors:  # the run record and the CLI report show these; the daemon logs louder
        log.info("source failed: %s: %s", f.source, f.error)
    elapsed = time.monotonic() - started
    return CollectReport(run.id, run.status, reports, run.errors, elapsed, feeds=len(feeds))


async def _categories(
    app: Parts,
    runner: Runner,
    plans: dict[str, list[SourcesUnit]],
    failures: list[Failure],
    failing_hosts: Counter[str],
    progress: Progress,
) -> list[CategoryReport]:
    """Each category's pass; failures are added in the categories' order.

    In this process the categories take turns, one after the other: a category's pass has
    the machine to itself, and a pass stopped half-way has stored nothing of the categories
    after it. On the workers (`runner.remote`) every category's sources are read at once, and
    a category's extraction batches start as soon as its own sources are in, while the other
    categories' are still read (workers left without a source unit extract instead of idling;
    headlines merge within a category, so nothing changes)."""
    categories = list(plans)
    lost: dict[str, list[Failure]] = {c: [] for c in categories}
    reports: list[CategoryReport] = []

    def fold(category: str, report: CategoryReport, hosts: Counter[str]) -> None:
        failures.extend(lost[category])
        reports.append(report)
        failing_hosts.update(hosts)
        log.info("collected %s: %d headlines, %d new", category, report.headlines, report.new)

    if not runner.remote:
        for category in categories:
            report, hosts = await _category(app, runner, category, plans[category], lost[category])
            progress.advance(1, category)
            fold(category, report, hosts)
        return reports

    async def gathered(category: str) -> tuple[CategoryReport, Counter[str]]:
        done = await _category(app, runner, category, plans[category], lost[category])
        progress.advance(1, category)
        return done

    done = await asyncio.gather(
        *(gathered(c) for c in categories),
        return_exceptions=True,  # every category's units end before an error goes up
    )
    for category, total in zip(categories, done, strict=True):
        if isinstance(total, BaseException):
            raise total
        fold(category, *total)
    return reports


async def _category(
    app: Parts, runner: Runner, category: str, sources: list[SourcesUnit], failures: list[Failure]
) -> tuple[CategoryReport, Counter[str]]:
    """One category: its source units, their headlines merged, then its extraction batches."""
    found: list[list[Headline]] = []
    for unit, outcome in zip(sources, await runner.run(sources), strict=True):
        if isinstance(outcome, Lost):
            failures.append(outcome.failure(unit.what))
            continue
        failures.extend(outcome.failures)
        found.append(list(outcome.headlines))
    batches = plan_extraction(
        category, merge_headlines(found), per_unit=app.config.queue.headlines_per_task
    )
    total, hosts = CategoryReport(category), Counter[str]()
    for batch in await runner.run(batches):
        if isinstance(batch, Lost):
            failures.append(batch.failure(category))
            continue
        total = total.plus(batch.report)
        hosts.update(batch.failing_hosts)
    return total, hosts


async def collect_claiming(
    app: Parts, categories: list[str] | None = None, *, progress: Progress = NO_PROGRESS
) -> CollectReport:
    """A collection by hand: a full pass claims the current scheduled period when it is still
    free, so the daemon does not collect the same period again."""
    from digest.errors import RunExistsError
    from digest.schedule import collect_key, collect_period, parse_interval

    if categories:
        return await collect(app, categories, progress=progress)
    every = parse_interval(app.config.schedule.collect_every)
    key = collect_key(collect_period(datetime.now(UTC), every))
    try:
        return await collect(app, run_key=key, progress=progress)
    except RunExistsError:
        return await collect(app, progress=progress)

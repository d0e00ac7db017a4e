"""The collection pass: headlines from every source, fast extraction, store, run record.

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
from typing import Any

from digest import metrics
from digest.app import App
from digest.errors import DigestError
from digest.feeds_manage import feeds_for
from digest.fetch.cache import host_of
from digest.models import Failure, FeedState, Headline, Item
from digest.progress import NO_PROGRESS, Progress
from digest.sources.feeds import fetch_feed
from digest.store.urls import canonical_url

log = logging.getLogger(__name__)


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


async def _feed_headlines(
    app: App, category: str, failures: list[Failure], tried: list[str] | None = None
) -> list[Headline]:
    """Headlines of the category's feeds, the config file's and the database's alike
    (`digest.feeds_manage.feeds_for`); `tried` gets the URL of every feed looked at."""
    feeds = await feeds_for(app, category)
    if tried is not None:
        tried.extend(f.url for f in feeds)

    return [h for batch in await feeds_headlines(app, feeds, failures) for h in batch]


async def feeds_headlines(
    app: App, feeds: Sequence[Any], failures: list[Failure]
) -> list[list[Headline]]:
    """Each feed's headlines (conditional GETs, all at once), their saved states read in one
    query and saved in one transaction; a failure is added to `failures`, and a feed failing
    again and again rests (`backoff`)."""
    store = await app.store()
    states = await asyncio.to_thread(store.feed_states_of, [f.url for f in feeds])
    now = datetime.now(UTC)
    done = await asyncio.gather(
        *(_feed_headlines_one(app, f, states.get(f.url), failures, now) for f in feeds)
    )
    saved = [state for _, state in done if state is not None]
    if saved:
        await asyncio.to_thread(store.save_feed_states, saved)
    return [headlines for headlines, _ in done]


async def _feed_headlines_one(
    app: App, feed: Any, state: FeedState | None, failures: list[Failure], now: datetime
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


async def gather_category(
    app: App, category: str, failures: list[Failure], feeds: list[str] | None = None
) -> list[Headline]:
    """Headlines of one category from DuckDuckGo news and the category's feeds, deduplicated;
    `feeds` gets the URL of every feed looked at."""
    sources = app.config.sources

    ddg_items, feed_items = await asyncio.gather(
        search_headlines(app, category, failures) if sources.ddg else _nothing(),
        _feed_headlines(app, category, failures, feeds),
    )
    return merge_headlines([ddg_items, feed_items])


async def _nothing() -> list[Headline]:
    return []


async def search_headlines(app: App, category: str, failures: list[Failure]) -> list[Headline]:
    """The category's DuckDuckGo news; a failure is added to `failures`."""
    try:
        return await app.ddg.news(category, max_results=app.config.sources.results_per_category)
    except DigestError as err:
        failures.append(Failure(f"ddg:news:{category}", str(err)))
        metrics.source_failures.labels("ddg").inc()
        return []


async def extract_and_store(
    app: App,
    category: str,
    headlines: list[Headline],
    *,
    in_turn: bool = False,
) -> tuple[CategoryReport, Counter[str]]:
    """Fast extraction of the headlines' pages, then the upsert: what one category (or one
    batch of it, on a worker) adds, and the hosts whose pages failed. `in_turn`: the pages
    are read holding the extractor's `turn`, so that passes sharing a process take turns."""
    store = await app.store()
    async with app.extractor.turn if in_turn else contextlib.nullcontext():
        items = await app.extractor.enrich(headlines)
    result = await asyncio.to_thread(store.upsert_items, items, seen_at=datetime.now(UTC))
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


async def extract_in_batches(
    app: App, category: str, headlines: list[Headline]
) -> tuple[CategoryReport, Counter[str]]:
    """`extract_and_store` in-process, by batches of `[queue] headlines_per_task`, as workers
    do: one pass has 1.5 s, which reads a few hundred pages (5,000 headlines in one pass gave
    300 of them a lede). The passes take turns, and a batch's upsert runs while the next
    batch's pages are read."""
    size = app.config.queue.headlines_per_task
    parts = [headlines[i : i + size] for i in range(0, len(headlines), size)] or [[]]
    done = await asyncio.gather(
        *(extract_and_store(app, category, part, in_turn=True) for part in parts),
        return_exceptions=True,  # every batch ends (stored or not) before an error goes up
    )
    total, hosts = CategoryReport(category), Counter[str]()
    for outcome in done:
        if isinstance(outcome, BaseException):
            raise outcome
        report, failed = outcome
        total = total.plus(report)
        hosts.update(failed)
    return total, hosts


async def collect(
    app: App,
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
    store = await app.store()
    run_id = await asyncio.to_thread(store.start_run, "collect", run_key)
    failures: list[Failure] = []
    reports: list[CategoryReport] = []
    failing_hosts: Counter[str] = Counter()
    feeds: list[str] = []
    status = "failed"
    queue = await app.queue()
    try:
        progress.step("gathering categories", len(cats))
        if queue is None:
            await app.extractor.warm()  # the parsers start while the feeds are read
        else:  # sources, then each category's extraction batches, as tasks on the workers
            await _collect_queued(
                app, queue, cats, failures, feeds, reports, failing_hosts, progress
            )
        for category in cats if queue is None else ():
            headlines = await gather_category(app, category, failures, feeds)
            report, hosts = await extract_in_batches(app, category, headlines)
            failing_hosts.update(hosts)
            reports.append(report)
            progress.advance(1, category)
            log.info("collected %s: %d headlines, %d new", category, report.headlines, report.new)
        status = run_status(sum(r.headlines for r in reports), len(failures))
    except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl+C, SIGTERM: not a failure
        status = "interrupted"
        raise
    finally:
        counts = {
            "headlines": sum(r.headlines for r in reports),
            "with_lede": sum(r.with_lede for r in reports),
            "new": sum(r.new for r in reports),
            "updated": sum(r.updated for r in reports),
            "categories": {r.category: r.headlines for r in reports},
            # Hosts whose pages failed (timeout, error, blocked) in this pass: `digest status`.
            "failing_hosts": dict(failing_hosts.most_common(20)),
        }
        errors = [f.to_json() for f in failures]
        await asyncio.to_thread(
            store.finish_run, run_id, status=status, counts=counts, errors=errors
        )
        metrics.run_finished("collect", status, time.monotonic() - started)
    for f in failures:  # the run record and the CLI report show these; the daemon logs louder
        log.info("source failed: %s: %s", f.source, f.error)
    elapsed = time.monotonic() - started
    return CollectReport(run_id, status, reports, failures, elapsed, feeds=len(feeds))


async def _collect_queued(
    app: App,
    queue: Any,
    categories: list[str],
    failures: list[Failure],
    tried: list[str],
    reports: list[CategoryReport],
    failing_hosts: Counter[str],
    progress: Progress = NO_PROGRESS,
) -> None:
    """`collect`'s loop over categories on the workers (`digest.queue.work`): every
    category's sources at once, and a category's extraction batches as soon as its own
    sources are in, while the other categories' are still read (workers left without a source
    task extract instead of idling; headlines merge within a category, so nothing changes)."""
    from digest.queue.work import chunks

    plans: dict[str, list[dict[str, Any]]] = {}
    for category in categories:
        plan = plans[category] = []
        if app.config.sources.ddg:
            plan.append({"category": category, "ddg": True, "feeds": []})
        feeds = await feeds_for(app, category)
        tried.extend(f.url for f in feeds)
        for part in chunks([f.model_dump() for f in feeds], app.config.queue.sources_per_task):
            plan.append({"category": category, "ddg": False, "feeds": list(part)})
    lost: dict[str, list[Failure]] = {c: [] for c in categories}

    async def gathered(category: str) -> CategoryReport:
        report = await _category_queued(
            app, queue, category, plans[category], lost[category], failing_hosts
        )
        progress.advance(1, category)
        return report

    done = await asyncio.gather(
        *(gathered(c) for c in categories),
        return_exceptions=True,  # every category's tasks are waited for before an error goes up
    )
    for category, total in zip(categories, done, strict=True):
        if isinstance(total, BaseException):
            raise total
        failures.extend(lost[category])  # in the categories' order, whichever ended first
        reports.append(total)
        log.info("collected %s: %d headlines, %d new", category, total.headlines, total.new)


async def _category_queued(
    app: App,
    queue: Any,
    category: str,
    sources: list[dict[str, Any]],
    failures: list[Failure],
    failing_hosts: Counter[str],
) -> CategoryReport:
    """One category on the workers: its source tasks, their headlines merged, then its
    extraction batches."""
    from digest.queue import codec
    from digest.queue.queue import EXTRACT, SOURCES
    from digest.queue.work import chunks, task_failure

    found: list[list[Headline]] = []
    for args, result in zip(sources, await queue.run(SOURCES, sources), strict=True):
        what = "ddg" if args["ddg"] else f"{len(args['feeds'])} feed(s)"
        if (lost := task_failure(SOURCES, f"{category}:{what}", result)) is not None:
            failures.append(lost)
            continue
        failures.extend(codec.failure(f) for f in result["failures"])
        found.append([Headline.from_json(h) for h in result["headlines"]])
    merged = [h.to_json() for h in merge_headlines(found)]
    batches = [
        {"category": category, "headlines": list(part)}
        for part in chunks(merged, app.config.queue.headlines_per_task)
    ]
    total = CategoryReport(category)
    for result in await queue.run(EXTRACT, batches):
        if (lost := task_failure(EXTRACT, category, result)) is not None:
            failures.append(lost)
            continue
        total = total.plus(
            CategoryReport(
                category, result["headlines"], result["with_lede"], result["new"], result["updated"]
            )
        )
        failing_hosts.update(result["failing_hosts"])
    return total


async def collect_claiming(
    app: App, categories: list[str] | None = None, *, progress: Progress = NO_PROGRESS
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

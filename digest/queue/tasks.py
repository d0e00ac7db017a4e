"""What a worker runs: one function per task kind, each a thin layer over the job modules'
own functions, so a task does exactly what the in-process loop does for its part.

Every task writes what it did (or why it failed) to the queue's results table before it ends;
the waiter reads it (`Queue.run`). A task run twice (its first worker died) does its part
again: feed states, articles and summaries are upserted, deliveries claimed row by row.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Any

from digest.app import App
from digest.collect import extract_and_store, feeds_headlines, merge_headlines, search_headlines
from digest.config import FeedConfig
from digest.models import Failure, Headline
from digest.queue import codec
from digest.queue.queue import DELIVER, EXTRACT, SOURCES, STORY, Queue
from digest.summarize.llm import counted_calls

log = logging.getLogger("digest.worker")

Body = Callable[..., Awaitable[Any]]


async def sources(app: App, *, category: str, ddg: bool, feeds: list[dict[str, Any]]) -> Any:
    """DuckDuckGo's news of a category, or some of its feeds: their headlines, merged. The
    fast extraction's parsers start meanwhile, as in-process: the extraction tasks come next."""
    await app.extractor.warm()
    failures: list[Failure] = []
    fed = feeds_headlines(app, [FeedConfig(**f) for f in feeds], failures)
    if ddg:
        searched, fed_batches = await asyncio.gather(search_headlines(app, category, failures), fed)
        batches = [searched, *fed_batches]
    else:
        batches = await fed
    return {
        "headlines": [h.to_json() for h in merge_headlines(batches)],
        "failures": [f.to_json() for f in failures],
    }


async def extract(app: App, *, category: str, headlines: list[dict[str, Any]]) -> Any:
    """Fast extraction and the upsert of one batch of a category's headlines. Fast passes take
    turns, one per worker and one per core on the machine (`digest.fetch.turns`), as the
    in-process loop's categories do: each has its whole budget from its turn; the upsert of
    one batch runs while the next batch's pages are read."""
    report, hosts = await extract_and_store(
        app, category, [Headline.from_json(h) for h in headlines], in_turn=True
    )
    return {
        "headlines": report.headlines,
        "with_lede": report.with_lede,
        "new": report.new,
        "updated": report.updated,
        "failing_hosts": dict(hosts),
    }


async def story(app: App, *, story: int, articles: list[dict[str, Any]]) -> Any:
    """Crawl the sources of one story that `deepen` picked, then write its one summary (the
    claim check and `[llm]` limits as in-process; the budget counts from this task's call)."""
    from digest.deepen import COUNTS, _crawl, _summarize_stories

    store = await app.store()
    errors: list[Failure] = []
    now = datetime.now(UTC)
    tally = dict.fromkeys(COUNTS, 0)
    crawler = await app.crawler() if articles else None
    if crawler is not None:
        await asyncio.gather(
            *(_crawl(app, crawler, codec.article(a, now), tally, errors) for a in articles)
        )
    views = await asyncio.to_thread(store.stories_by_id, [story])
    with counted_calls() as calls:  # this task's own, whatever else the worker runs
        summarized = await _summarize_stories(app, views, tally, errors, None) if views else 0
    tally["llm_calls"] = calls[0]
    return {
        "counts": tally,
        "summarized_stories": summarized,
        "errors": [e.to_json() for e in errors],
        "crawl_mode": crawler.mode if crawler else "",
        "crawl_mode_reason": crawler.mode_reason if crawler else "",
    }


async def deliver(
    app: App,
    *,
    day: str,
    recipients: list[str],
    now: str,
    due_only: bool,
    newer: list[str],
) -> Any:
    """Send one edition to one batch of subscribers, through the ledger."""
    from digest.errors import DigestError
    from digest.publish import send_edition

    store = await app.store()
    edition = await asyncio.to_thread(store.edition, date.fromisoformat(day))
    if edition is None:
        raise DigestError(f"no edition of {day} in the store")
    report = await send_edition(
        app,
        edition,
        now=datetime.fromisoformat(now),
        due_only=due_only,
        newer=[date.fromisoformat(d) for d in newer],
        recipients=recipients,
    )
    groups = ("sent", "retrying", "failed", "stuck", "waiting", "deferred", "missing", "raced")
    result: dict[str, Any] = {
        k: [codec.delivery_json(d) for d in getattr(report, k)] for k in (*groups, "skipped")
    }
    result.update(already_sent=report.already_sent, already_failed=report.already_failed)
    return result


BODIES: dict[str, Body] = {SOURCES: sources, EXTRACT: extract, STORY: story, DELIVER: deliver}


def register(queue: Queue, app: App) -> None:
    """Make the queue's procrastinate app run every task kind with this process's `app`."""
    for kind, body in BODIES.items():
        queue.procrastinate.task(name=kind, pass_context=True)(_task(queue, app, kind, body))


def _task(queue: Queue, app: App, kind: str, body: Body) -> Callable[..., Awaitable[None]]:
    async def run(context: Any, **arguments: Any) -> None:
        job_id = context.job.id
        log.info("task %s started: %s", job_id, kind)
        try:
            result = await body(app, **arguments)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.error("task %s (%s) failed: %s", job_id, kind, err, exc_info=True)
            await queue.save_result(job_id, kind, f"{type(err).__name__}: {err}", ok=False)
            raise
        await queue.save_result(job_id, kind, result)
        log.info("task %s done: %s", job_id, kind)

    run.__name__ = kind.replace(".", "_")
    return run

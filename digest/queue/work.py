"""The jobs' parts that parallelize, handed to the workers as tasks and put back together.

Each function here stands in for a loop of a job module when `[queue]` is on, and leaves the
same report behind: `collect` gets its category reports and failures, `deepen` its counts and
errors, `publish` (and the daemon's deliveries) a `DeliveryReport`. How the work is split:
sources (DuckDuckGo's query of a category, or `sources_per_task` feeds) per task, then
`headlines_per_task` headlines per fast-extraction task, crawl and summary per story (the
story's articles in one task, so a worker reads a story as `deepen` does), and
`subscribers_per_task` subscribers per delivery task.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from digest.app import App
from digest.models import ArticleView, Edition, Failure, StoryView
from digest.queue import codec
from digest.queue.queue import DELIVER, STORY, Queue, TaskFailedError

log = logging.getLogger("digest.queue")


def chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def task_failure(kind: str, what: str, result: Any) -> Failure | None:
    if isinstance(result, TaskFailedError):
        return Failure(f"task:{kind}:{what}", str(result))
    return None


async def deepen_stories(
    app: App,
    queue: Queue,
    stories: list[StoryView],
    targets: list[ArticleView],
    counts: dict[str, int],
    errors: list[Failure],
) -> tuple[str, str, int]:
    """`deepen`'s crawl and summaries on the workers, one task per story (its sources still to
    crawl, then its one summary); adds to `counts` and `errors` as the in-process path does.
    Returns the crawl mode the workers used and how many stories have a summary."""
    wanted = {a.id for a in targets}
    tasks = []
    for story in stories:
        mine = [codec.article_json(a) for a in story.articles if a.id in wanted]
        wanted -= {a["id"] for a in mine}
        tasks.append({"story": story.id, "articles": mine})
    mode, reason, summarized = "", "", 0
    for args, result in zip(tasks, await queue.run(STORY, tasks), strict=True):
        if (lost := task_failure(STORY, str(args["story"]), result)) is not None:
            errors.append(lost)
            continue
        for key, value in result["counts"].items():
            counts[key] = counts.get(key, 0) + value
        summarized += result["summarized_stories"]
        for e in map(codec.failure, result["errors"]):
            if e.source != "llm" or not any(x.source == "llm" for x in errors):
                errors.append(e)
        mode, reason = result["crawl_mode"] or mode, result["crawl_mode_reason"] or reason
    return mode, reason, summarized


async def deliver_in_batches(
    app: App,
    queue: Queue,
    edition: Edition,
    *,
    now: datetime,
    due_only: bool,
    newer: Sequence[date],
) -> Any:
    """`send_edition` on the workers: the subscribers in batches, one delivery task each (two
    tasks of the same batch never run at once: a lock per batch; the ledger's compare-and-set
    keeps any two sends of one message apart whatever the batches). One `DeliveryReport`."""
    import asyncio

    from digest.deliver.sender import DeliveryReport

    store = await app.store()
    emails = await asyncio.to_thread(store.subscriber_emails)
    size = app.config.queue.subscribers_per_task
    batches: list[dict[str, Any]] = [
        {
            "day": edition.day.isoformat(),
            "recipients": list(part),
            "now": now.isoformat(),
            "due_only": due_only,
            "newer": [d.isoformat() for d in newer],
        }
        for part in chunks(emails, size)
    ]
    locks = [f"deliver:{edition.day}:{part['recipients'][0]}" for part in batches]
    groups: dict[str, list[Any]] = {
        k: []
        for k in (
            "sent",
            "retrying",
            "failed",
            "stuck",
            "waiting",
            "deferred",
            "missing",
            "raced",
            "skipped",
        )
    }
    already_sent = already_failed = 0
    for args, result in zip(batches, await queue.run(DELIVER, batches, locks=locks), strict=True):
        if isinstance(result, TaskFailedError):
            # Nothing was recorded for these rows by this run: they stay as they were (pending
            # rows are sent by the next run, `sending` ones are reported as stuck).
            log.error("delivery of %s to %d subscribers: %s", edition.day, len(args), result)
            continue
        for k in groups:
            groups[k] += [codec.delivery(d) for d in result[k]]
        already_sent += result["already_sent"]
        already_failed += result["already_failed"]
    return DeliveryReport(
        edition_day=edition.day,
        **{k: tuple(v) for k, v in groups.items()},
        already_sent=already_sent,
        already_failed=already_failed,
    )

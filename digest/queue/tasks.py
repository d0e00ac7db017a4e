"""Units as tasks: one procrastinate task per registered unit kind, named by the kind.

A worker decodes the unit from the task's arguments, runs the registered step with its own
`App`, and writes the outcome's JSON (or why it failed) to the queue's results table before
the task ends; the runner that enqueued it reads that back as the unit's outcome. A task run
twice (its first worker died) does its unit again: feed states, articles and summaries are
upserted, deliveries claimed row by row.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from digest.jobs.units import STEPS, Ended, Lost, OutcomeT, Step, Unit, step_for
from digest.queue.queue import Queue, TaskFailedError

if TYPE_CHECKING:
    from digest.jobs.units import Parts

log = logging.getLogger("digest.worker")


class QueueRunner:
    """Units as tasks on the workers: each kind's units enqueued at once, waited for, and
    their outcomes decoded, in the units' order; a task that failed is a `Lost` unit."""

    remote = True

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    async def run(
        self,
        units: Sequence[Unit[OutcomeT]],
        *,
        locks: Sequence[str] | None = None,
        ended: Ended | None = None,
    ) -> list[OutcomeT | Lost]:
        by_kind: dict[str, list[int]] = {}
        for i, unit in enumerate(units):
            by_kind.setdefault(unit.kind, []).append(i)
        out: list[OutcomeT | Lost | None] = [None] * len(units)

        async def run_kind(kind: str, at: list[int]) -> None:
            results = await self.queue.run(
                kind,
                [units[i].to_json() for i in at],
                locks=[locks[i] for i in at] if locks else (),
            )
            outcome = step_for(kind).outcome
            for i, result in zip(at, results, strict=True):
                if isinstance(result, TaskFailedError):
                    out[i] = Lost(units[i], str(result))
                else:
                    out[i] = outcome.from_json(result)
                if ended is not None:
                    ended(units[i])

        waited = await asyncio.gather(
            *(run_kind(kind, at) for kind, at in by_kind.items()),
            return_exceptions=True,  # every kind's tasks are waited for before an error goes up
        )
        for error in waited:
            if isinstance(error, BaseException):
                raise error
        return [o for o in out if o is not None]


def register(queue: Queue, app: Parts) -> None:
    """Make the queue's procrastinate app run every registered unit kind with this process's
    `app` (the job modules are imported first: importing one registers its steps)."""
    for kind, step in STEPS.items():
        queue.procrastinate.task(name=kind, pass_context=True)(_task(queue, app, kind, step))


def _task(
    queue: Queue, app: Parts, kind: str, step: Step[Any, Any]
) -> Callable[..., Awaitable[None]]:
    async def run(context: Any, **arguments: Any) -> None:
        job_id = context.job.id
        log.info("task %s started: %s", job_id, kind)
        try:
            outcome = await step.run(app, step.unit.from_json(arguments))
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.error("task %s (%s) failed: %s", job_id, kind, err, exc_info=True)
            await queue.save_result(job_id, kind, f"{type(err).__name__}: {err}", ok=False)
            raise
        await queue.save_result(job_id, kind, outcome.to_json())
        log.info("task %s done: %s", job_id, kind)

    run.__name__ = kind.replace(".", "_")
    return run

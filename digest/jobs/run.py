"""The record of one run of a job, kept the same way by every job.

`start_run` claims the run (RunExistsError when `run_key`'s period ran already); on the way
out, whatever happened, the run is finished with what the job set on it, "interrupted" when
Ctrl+C or SIGTERM stopped it (not a failure), and its duration goes to the metrics.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from digest.models import Failure
from digest.runtime import metrics

if TYPE_CHECKING:
    from digest.jobs.units import Parts


@dataclass(slots=True)
class OpenRun:
    """What the run record will say: the job sets `status` when it knows it ("failed" until
    then), and `counts` and `errors` as it goes."""

    id: int
    kind: str
    started: float
    status: str = "failed"
    counts: dict[str, Any] = field(default_factory=dict)
    errors: list[Failure] = field(default_factory=list)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


@asynccontextmanager
async def recorded_run(
    app: Parts, kind: str, run_key: str | None = None, *, started: float | None = None
) -> AsyncIterator[OpenRun]:
    """A run of `kind` in the store, finished on exit; `started`: when the job began (its
    monotonic clock), if before the record."""
    began = time.monotonic() if started is None else started
    store = await app.face()
    run_id = await store.start_run(kind, run_key)
    run = OpenRun(run_id, kind, began)
    try:
        yield run
    except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl+C, SIGTERM: not a failure
        run.status = "interrupted"
        raise
    finally:
        await store.finish_run(
            run_id,
            status=run.status,
            counts=run.counts,
            errors=[e.to_json() for e in run.errors],
        )
        metrics.run_finished(kind, run.status, run.elapsed)

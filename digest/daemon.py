"""`digest run`: the daemon that keeps the digest going with nobody watching.

APScheduler 3 with an in-memory job store rebuilt from config at every start (its FAQ: a job
store cannot be shared between processes). What protects against running a period twice or
missing one is not the scheduler but the runs table: every scheduled run claims a key naming
its job and period, so a restart catches up what it missed and never repeats a period, also
when a CLI command did the same work by hand meanwhile. One daemon per database: a lock file
beside SQLite, an advisory lock on PostgreSQL (watched: a daemon that loses it stops).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from zoneinfo import ZoneInfo

from digest.app import App
from digest.config import Config
from digest.errors import (
    DaemonLockLostError,
    DigestError,
    RunExistsError,
    RunInterrupted,
)
from digest.models import Failure, RunRecord
from digest.runtime.progress import NO_PROGRESS, Progress, Within
from digest.runtime.threads import off_loop
from digest.schedule import (
    collect_key,
    collect_period,
    latest_due_edition,
    next_publish_due,
    parse_clock,
    parse_interval,
    publish_key,
)

if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from digest.jobs.collect import CollectReport
    from digest.jobs.deepen import DeepenReport
    from digest.jobs.publish import PublishReport

log = logging.getLogger("digest.daemon")


class _StopIsNoFailure(logging.Filter):
    """APScheduler logs a job cancelled by the daemon's stop as "raised an exception" with a
    traceback; the stop is reported once, as "stopped during STEP", and the run as interrupted."""

    def filter(self, record: logging.LogRecord) -> bool:
        raised = record.exc_info[1] if record.exc_info else None
        return not isinstance(raised, asyncio.CancelledError)


logging.getLogger("apscheduler.executors.default").addFilter(_StopIsNoFailure())

# How often the daemon checks that it still holds its lock (watch_lock).
LOCK_CHECK_SECONDS = 10.0

# What the daemon serves with `serve.daemon` on: a server over the app, listening while its
# block runs (`digest.web.server.running` at the configured address); it yields what it serves.
ServerFactory = Callable[[App], AbstractAsyncContextManager[Path]]


class Daemon:
    """The scheduled jobs of one process, each a thin wrapper over a service function."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.config = app.config
        self._busy = asyncio.Lock()  # one job at a time: collect, deepen, publish share a browser
        self.steps = Steps()

    async def collect_job(self, *, force: bool = False) -> None:
        """Collect this period (once), then deepen. `force`: also when the period was done.
        A period collected already is deepened again when its deepen pass never ended well (a
        process killed during it): deepen runs have no period key of their own."""
        async with self._busy:
            report = await self.collect(force=force)
            for f in report.failures if report else ():
                log.warning("collect: source failed: %s: %s", f.source, f.error)
            if not self.config.schedule.deepen_after_collect:
                return
            if report is None:
                if not await self._deepen_owed():
                    return
                log.info("collect: the period's deepen never ended: deepening")
            deep = await self.deepen()
            for e in deep.errors:
                log.warning("deepen: %s: %s", e.source, e.error)

    async def collect(
        self, *, force: bool = False, progress: Progress = NO_PROGRESS
    ) -> CollectReport | None:
        """Collect this period; None when it was collected already (unless `force`)."""
        from digest.jobs.collect import collect

        every = parse_interval(self.config.schedule.collect_every)
        key = collect_key(collect_period(datetime.now(UTC), every))
        log.info("collect: starting period %s", key)
        with self.steps.doing("collect"):
            try:
                report = await collect(self.app, run_key=key, progress=progress)
            except RunExistsError:
                if not force:
                    log.info("collect: period %s already done", key)
                    return None
                report = await collect(self.app, progress=progress)
        log.info("collect: %s, %d headlines", report.status, report.headlines)
        return report

    async def deepen(self, progress: Progress = NO_PROGRESS) -> DeepenReport:
        from digest.jobs.deepen import deepen

        log.info("deepen: starting")
        with self.steps.doing("deepen"):
            deep = await deepen(self.app, progress=progress)
        log.info("deepen: %s, %s", deep.status, deep.counts)
        return deep

    async def _deepen_owed(self) -> bool:
        store = await self.app.face()
        return deepen_owed(await store.recent_runs(50))

    def due_edition(self, now: datetime) -> date:
        """The edition a publish or deliver run at `now` is about: the newest one that is due."""
        sched = self.config.schedule
        return latest_due_edition(now, parse_clock(sched.publish_at), sched.timezone)

    async def publish_job(self) -> None:
        """Publish the newest edition whose time has come, once (catches up after a restart)."""
        from digest.jobs.publish import publish

        day = self.due_edition(datetime.now(UTC))
        async with self._busy:
            log.info("publish %s: starting", day)
            try:
                with self.steps.doing("publish"):
                    report = await publish(self.app, day, due_only=True, run_key=publish_key(day))
            except RunExistsError:
                log.info("publish: edition %s already published", day)
                return
            log.info("publish %s: %s, %s", day, report.status, report.counts)
            for e in report.errors:
                log.warning("publish: %s: %s", e.source, e.error)

    async def deliver_job(self) -> None:
        """Send the latest edition to subscribers whose time has come (each at their own time
        in their own zone), and retry failures. The edition before it too: a subscriber far
        west of the schedule's zone may be due for it after the next one is published. Then
        the alerts owed to followers of stories (those of a run killed before it sent them,
        and retries)."""
        from digest.jobs.alerts import alert_followers
        from digest.jobs.sending import send_edition

        now = datetime.now(UTC)
        day = self.due_edition(now)
        store = await self.app.face()
        editions = []
        for candidate in (day - timedelta(days=1), day):
            edition = await store.edition(candidate)
            if edition is not None:
                editions.append(edition)
        for i, edition in enumerate(editions):
            newer = [e.day for e in editions[i + 1 :]]
            async with self._busy:
                with self.steps.doing("deliver"):
                    report = await send_edition(
                        self.app, edition, now=now, due_only=True, newer=newer
                    )
            if report.sent or report.failed or report.retrying or report.skipped:
                log.info(
                    "deliver %s: %d sent, %d to retry, %d failed, %d skipped",
                    edition.day,
                    len(report.sent),
                    len(report.retrying),
                    len(report.failed),
                    len(report.skipped),
                )

        async with self._busy:
            with self.steps.doing("deliver"):
                await alert_followers(self.app, "deliver")

    async def recover(self) -> None:
        """Runs left 'running' by a process that died (kill -9, power loss) are marked
        interrupted and their periods freed: this daemon holds the lock, so no other daemon is
        running them."""
        store = await self.app.face()
        freed = await store.recover_interrupted(datetime.now(UTC))
        for key in freed:
            log.warning("interrupted run found: %s (will run again)", key)

    async def prune_job(self) -> None:
        """Drop page texts older than `retention_days`; stories and summaries are kept."""
        store = await self.app.face()
        before = datetime.now(UTC) - timedelta(days=self.config.schedule.retention_days)
        pruned = await store.prune_texts(before)
        if pruned:
            log.info("prune: dropped %d page texts last seen before %s", pruned, before.date())

    def build_scheduler(self, now: datetime) -> AsyncIOScheduler:
        """The daemon's scheduler with its jobs, not started yet; `now` (aware) is the start,
        when the catch-up runs of collect and publish are due. Built from config at every start:
        the in-memory job store is never shared or persisted."""
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MISSED
        from apscheduler.schedulers.asyncio import AsyncIOScheduler
        from apscheduler.triggers.cron import CronTrigger
        from apscheduler.triggers.interval import IntervalTrigger

        sched = self.config.schedule
        tz = ZoneInfo(sched.timezone)
        publish_at = parse_clock(sched.publish_at)
        # In UTC: local arithmetic loses the fold (02:30 + 1 s in the repeated hour of a fall-back
        # night is an hour early) and would run the catch-up publish before the catch-up collect.
        now = now.astimezone(UTC)
        scheduler = AsyncIOScheduler(
            timezone=tz,
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": 6 * 3600,  # the default (1 s) silently skips a daily run
            },
        )

        def listener(event) -> None:
            if event.code == EVENT_JOB_MISSED:
                log.warning("job %s missed its run at %s", event.job_id, event.scheduled_run_time)
            elif event.exception is not None and not isinstance(
                event.exception,
                asyncio.CancelledError,  # a stop, said once by "stopped during"
            ):
                log.error("job %s failed: %s", event.job_id, event.exception)

        scheduler.add_listener(listener, EVENT_JOB_ERROR | EVENT_JOB_MISSED)
        scheduler.add_job(
            self.collect_job,
            IntervalTrigger(
                seconds=parse_interval(sched.collect_every).total_seconds(), timezone=tz
            ),
            id="collect",
            replace_existing=True,
            next_run_time=now.astimezone(tz),  # catch up at start: the period key prevents a repeat
        )
        scheduler.add_job(
            self.publish_job,
            edition_trigger(publish_at, sched.timezone),
            id="publish",
            replace_existing=True,
            next_run_time=(now + timedelta(seconds=1)).astimezone(tz),  # catch up an edition
        )
        scheduler.add_job(
            self.deliver_job,
            IntervalTrigger(
                seconds=parse_interval(sched.deliver_every).total_seconds(), timezone=tz
            ),
            id="deliver",
            replace_existing=True,
        )
        scheduler.add_job(
            self.prune_job,
            CronTrigger(hour=3, minute=30, timezone=tz),
            id="prune",
            replace_existing=True,
        )
        return scheduler

    async def run(self, stop: asyncio.Event) -> str | None:
        """Run the jobs on schedule until `stop`; return the step a stop interrupted (its run
        is recorded as interrupted), or None when the daemon was idle."""
        scheduler = self.build_scheduler(datetime.now(UTC))
        scheduler.start()
        log.info("daemon started: %s", ", ".join(j.id for j in scheduler.get_jobs()))
        try:
            await stop.wait()
        finally:
            log.info("stopping")
            interrupted = self.steps.current
            current = self.steps.tasks()
            scheduler.shutdown(wait=False)
            for task in current:
                task.cancel()
            # Each job records its run on the way out, before the store closes.
            await asyncio.gather(*current, return_exceptions=True)
        return interrupted  # the CLI says the stop once (`Stopped`)


class Steps:
    """Which step the daemon is at and the tasks doing steps: a stop cancels those tasks and
    tells the operator which step it interrupted."""

    def __init__(self) -> None:
        self.current: str | None = None
        self._tasks: dict[asyncio.Task[Any], int] = {}

    @contextlib.contextmanager
    def doing(self, step: str):
        task = asyncio.current_task()
        assert task is not None
        previous, self.current = self.current, step
        self._tasks[task] = self._tasks.get(task, 0) + 1
        try:
            yield
        finally:
            self.current = previous
            self._tasks[task] -= 1
            if not self._tasks[task]:
                del self._tasks[task]

    def tasks(self) -> list[asyncio.Task[Any]]:
        return [t for t in self._tasks if not t.done()]


def edition_trigger(publish_at: time, tz: str):
    """An APScheduler trigger that fires when each edition is due (`next_publish_due`): once a
    local day, at the instant `latest_due_edition` takes as the edition's time. A CronTrigger
    does not: started just after a spring-forward gap that holds `publish_at`, it skips that
    day's edition, and it fires twice on a fall-back night."""
    from apscheduler.triggers.base import BaseTrigger

    zone = ZoneInfo(tz)

    class EditionTrigger(BaseTrigger):
        def get_next_fire_time(self, previous_fire_time, now):
            after = previous_fire_time or now - timedelta(microseconds=1)
            return next_publish_due(after, publish_at, tz).astimezone(zone)

        def __str__(self) -> str:
            return f"edition[{publish_at:%H:%M} {tz}]"

    return EditionTrigger()


def deepen_owed(recent: Iterable[RunRecord]) -> bool:
    """Does the newest collection still lack its deepen pass? `recent`: runs, newest first.
    Yes when no deepen run started after it, or the one that did failed or was interrupted
    (by a signal, or by its process dying: `recover`)."""
    for run in recent:
        if run.kind == "deepen":
            return run.status in ("failed", "interrupted")
        if run.kind == "collect":
            return run.status != "running"
    return False


@dataclass(frozen=True, slots=True)
class Stopped:
    """The daemon stopped as asked (SIGTERM, Ctrl+C): the signal, and the step it cut short
    (its run recorded as interrupted), if any."""

    signum: int
    step: str | None = None

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        if self.step is None:
            return f"stopped ({name})"
        return f"stopped during {self.step} ({name}): its run is recorded as interrupted"


async def run_daemon(
    config: Config,
    *,
    once: bool = False,
    progress: Progress = NO_PROGRESS,
    server: ServerFactory | None = None,
) -> CycleReport | Stopped | None:
    """The daemon in the foreground until SIGTERM/SIGINT; `once`: one full cycle and exit, with
    what it did (each step told to `progress` as it goes). `server`: what it runs beside its
    jobs with `serve.daemon` on (`digest run` hands it `digest serve`'s server).

    A signal is a requested stop: the daemon cancels the step it is at, whose run is recorded
    as interrupted, and returns `Stopped` (exit status 0: a supervisor asked for it). A signal
    that stops the cycle of `once` raises RunInterrupted naming the step (a script must know
    the cycle did not finish). A second signal while stopping ends the process at once
    (`stop_at_once`)."""
    stop = asyncio.Event()
    received: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if received:
            stop_at_once(signum)
        received.append(signum)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    from digest.store.daemon_lock import single_daemon  # the store's package: SQLAlchemy

    with single_daemon(config) as still_held:
        lost = asyncio.Event()
        watchdog = asyncio.ensure_future(watch_lock(still_held, stop, lost))
        try:
            cycle, interrupted = await _run_locked(
                config, stop, once=once, progress=progress, server=server
            )
        finally:
            watchdog.cancel()
        if lost.is_set():
            raise DaemonLockLostError(
                "lost the daemon lock (the database connection holding it dropped): stopped; "
                "start the daemon again"
            )
        if once and interrupted is not None and received:
            raise RunInterrupted(interrupted, received[0])
        if not once and received:
            return Stopped(received[0], interrupted)
        return cycle


def stop_at_once(signum: int) -> NoReturn:
    """A second SIGINT/SIGTERM while the daemon stops: whoever sent it will not wait for the
    step's cleanup (a hung page, a slow SMTP answer). Exit now with 128 + the signal, as a
    shell reports a killed process; the run it cut short stays `running` until a daemon starts
    again and marks it interrupted (`Daemon.recover`), as after kill -9."""
    log.error(
        "second %s while stopping: stopped at once; a run it cut short is marked "
        "interrupted when a daemon starts again",
        signal.Signals(signum).name,
    )
    logging.shutdown()  # flush the log handlers: os._exit skips them
    os._exit(128 + signum)


async def watch_lock(
    still_held: Callable[[], bool], stop: asyncio.Event, lost: asyncio.Event
) -> None:
    """Stop the daemon when its lock is gone: on PostgreSQL, a server restart or a network
    break ends the lock's session, and another daemon could then start. Stopping (exit status
    1) lets a supervisor restart this one, which takes the lock again or finds it taken."""
    while not stop.is_set():
        await asyncio.sleep(LOCK_CHECK_SECONDS)
        # No deadline on the check (`off_loop`, not `bounded`): a slow answer is no lost lock.
        # While the check waits, the session still holds the lock; a dropped connection makes
        # the check answer False (its error is caught), and a timeout here would stop a daemon
        # whose lock is merely slow to confirm (a busy server) instead.
        if not await off_loop(still_held):
            log.error("lost the daemon lock: stopping")
            lost.set()
            stop.set()


async def _run_locked(
    config: Config,
    stop: asyncio.Event,
    *,
    once: bool,
    progress: Progress = NO_PROGRESS,
    server: ServerFactory | None = None,
) -> tuple[CycleReport | None, str | None]:
    """(what `once` did, the step a stop interrupted); (None, None): the daemon stopped idle."""
    async with App(config) as app:
        daemon = Daemon(app)
        await daemon.recover()
        if not once:
            from digest.runtime import metrics

            async with _serving(app, server), metrics.serving(config.metrics):
                return None, await daemon.run(stop)
        cycle = asyncio.ensure_future(_cycle(daemon, progress))
        stopper = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait({cycle, stopper}, return_when="FIRST_COMPLETED")
        if cycle not in done:
            interrupted = daemon.steps.current or "the cycle"
            cycle.cancel()
            await asyncio.gather(cycle, return_exceptions=True)
            return None, interrupted
        stopper.cancel()
        return cycle.result(), None


@contextlib.asynccontextmanager
async def _serving(app: App, server: ServerFactory | None) -> AsyncIterator[None]:
    """With `serve.daemon` on, the daemon also answers what `digest serve` answers (the archive
    and the unsubscribe links of its emails), in the same event loop; otherwise nothing."""
    serve = app.config.serve
    if not serve.daemon or server is None:
        yield
        return
    async with contextlib.AsyncExitStack() as stack:
        try:
            archive_dir = await stack.enter_async_context(server(app))
        except OSError as err:  # the port is taken (ListenError says so), or the archive folder
            raise DigestError(f"serve.daemon: {err}") from None
        log.info("serving %s on http://%s:%d/", archive_dir, serve.host, serve.port)
        yield


@dataclass(frozen=True, slots=True)
class CycleReport:
    """What `run --once` did: each step's report (None: the step did not run or raised), the
    steps that failed and the ones that only partly worked (see `judge_cycle`)."""

    collect: CollectReport | None = None
    deepen: DeepenReport | None = None
    publish: PublishReport | None = None
    failures: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    next_step: str = ""  # what to do about a collection that got nothing (`next_step`)


async def _cycle(daemon: Daemon, progress: Progress = NO_PROGRESS) -> CycleReport:
    """collect → deepen → publish today's edition now (the README's "run the main job").

    A failed collection skips deepen and the emails (nothing new to send), but still writes
    the archive: an edition page that says why nothing came in (a first run offline gets a
    `site/` to look at, not nothing). A failed deepen does not stop the cycle: the edition
    falls back to the articles' ledes.
    """
    from digest.jobs.publish import publish

    reports: dict[str, Any] = {}
    raised: list[str] = []

    async def step(name: str, job: Callable[[], Awaitable[Any]]) -> bool:
        """Run one step; False (and why, in `raised`) when it raised."""
        try:
            reports[name] = await job()
            return True
        except DigestError as err:
            raised.append(f"{name} failed: {err}")
        except Exception as err:
            log.error("%s failed", name, exc_info=True)
            raised.append(f"{name} failed: internal error: {type(err).__name__}: {err}")
        return False

    async def publish_now(*, send: bool = True, note: str = "") -> PublishReport:
        with daemon.steps.doing("publish"):
            report = await publish(
                daemon.app, send=send, note=note, progress=Within(progress, "3/3 publish")
            )
        log.info("publish: %s, %s", report.status, report.counts)
        return report  # its errors are in the printed report and the verdict, not logged again

    config = daemon.config
    async with daemon._busy:
        gathering = Within(progress, "1/3 collect")
        collected = await step("collect", lambda: daemon.collect(force=True, progress=gathering))
        got_nothing = collected and bool(judge_cycle(config, collect=reports["collect"])[0])
        if collected and not got_nothing:
            if config.schedule.deepen_after_collect:
                await step("deepen", lambda: daemon.deepen(Within(progress, "2/3 deepen")))
            await step("publish", publish_now)
        elif got_nothing:
            why = nothing_collected(config, reports["collect"])
            await step("publish", lambda: publish_now(send=False, note=why))
    failures, warnings = judge_cycle(
        config,
        collect=reports.get("collect"),
        deepen=reports.get("deepen"),
        publish=reports.get("publish"),
    )
    steps = ("collect", "deepen", "publish")
    return CycleReport(
        reports.get("collect"),
        reports.get("deepen"),
        reports.get("publish"),
        tuple(sorted((*failures, *raised), key=lambda line: steps.index(line.split()[0]))),
        tuple(warnings),
        next_step(config, reports["collect"]) if got_nothing else "",
    )


def nothing_collected(config: Config, collect: CollectReport) -> str:
    """Why a collection got nothing, for the edition page of a cycle without news: the
    failures (at most three, then how many more), or that no source is configured."""
    if not collect.failures:
        return "no source is configured (sources.ddg is false and there are no feeds)."
    told = [f"{f.source}: {f.error}" for f in collect.failures[:3]]
    more = len(collect.failures) - len(told)
    return f"every source failed. {'; '.join(told)}{f'; and {more} more' if more else ''}."


def next_step(config: Config, collect: CollectReport) -> str:
    """The one thing to do next after a collection that got nothing, in one line naming the
    commands and settings that do it (a first run offline ends with this, not a dead end)."""
    offline = " and set sources.ddg = false when offline" if config.sources.ddg else ""
    if not collect.failures:
        return (
            'no source configured: add feeds with "digest feeds add URL" (or [[sources.feeds]] '
            "in digest.toml), or set sources.ddg = true"
        )
    if collect.feeds:
        return f'no source answered: "digest feeds list" shows each feed\'s last error{offline}'
    return (
        'no source answered: add feeds with "digest feeds add URL" (or "digest init", then '
        f'[[sources.feeds]] in digest.toml){offline}; "digest demo" shows a sample edition'
    )


def judge_cycle(
    config: Config,
    *,
    collect: CollectReport | None = None,
    deepen: DeepenReport | None = None,
    publish: PublishReport | None = None,
) -> tuple[list[str], list[str]]:
    """What counts as a failed `run --once` (exit status 1), and what only as a partial one
    (reported, exit status 0): (failures, warnings), one line each naming the step and why.

    Failed: collect got no headline because every source failed, or there is no source at
    all; deepen could read none of the pages it tried; publish had emails to send and sent
    none, or wrote no archive and sent no email. Partial: some sources, pages or emails failed
    (or the archive could not be written) while the step still did its job.

    Each step's report, printed before, names every failure; these lines count them, so that
    none is printed twice.
    """
    failures: list[str] = []
    warnings: list[str] = []
    if collect is not None:
        errors = [f"{f.source}: {f.error}" for f in collect.failures]
        if collect.status == "failed":
            failures.append(f"collect failed: every source failed ({_count(errors, 'source')})")
        elif not collect.headlines and not (
            config.sources.ddg or config.sources.feeds or collect.feeds
        ):
            failures.append(
                "collect failed: no sources configured (sources.ddg is false and there are "
                "no [[sources.feeds]], nor feeds added with digest feeds)"
            )
        elif errors:
            warnings.append(f"collect partial: {_count(errors, 'source')} failed")
    if deepen is not None:
        pages = deepen.failed_pages
        shortfalls = [f"{_count(pages, 'page')} failed"] if pages else []
        shortfalls += [_gist(e) for e in deepen.errors if e not in pages]
        if deepen.status == "failed":
            failures.append(f"deepen failed: no page could be read ({'; '.join(shortfalls)})")
        elif shortfalls:
            warnings.append(f"deepen partial: {'; '.join(shortfalls)}")
    if publish is not None:
        c = publish.counts
        # This run's failures: messages still waiting from an earlier run are only partial.
        unsent = c.get("failed", 0) + c.get("retrying_now", c.get("retrying", 0))
        sent = c.get("sent", 0)
        no_archive = any(e.source == "archive" for e in publish.errors)
        messages = [e for e in publish.errors if e.source not in ("archive", "translate")]
        shortfalls = [f"{_count(messages, 'message')} not sent"] if messages else []
        shortfalls += [_gist(e) for e in publish.errors if e.source in ("archive", "translate")]
        if unsent and not sent:
            failures.append(f"publish failed: no email could be sent ({'; '.join(shortfalls)})")
        elif no_archive and not sent:
            failures.append("publish failed: no archive written, no email sent")
        elif shortfalls:
            warnings.append(f"publish partial: {'; '.join(shortfalls)}")
    return failures, warnings


def _count(things: list[Any], what: str) -> str:
    return f"{len(things)} {what}{'' if len(things) == 1 else 's'}"


def _gist(failure: Failure) -> str:
    """A run-level failure in short: its source and the first clause of its error."""
    return f"{failure.source}: {failure.error.split(': ', 1)[0]}"

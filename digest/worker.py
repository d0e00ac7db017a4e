"""`digest worker`: runs the tasks the daemon and the CLI jobs enqueue (`[queue]` on).

Any number of workers, on any number of machines, share the PostgreSQL database. Each runs up
to `concurrency` tasks at once with one `App` (one HTTP client, one browser, one summarizer,
started before the first task),
sends procrastinate's heartbeat every `stalled_after / 5` seconds, and puts back in the queue
the tasks of workers whose heartbeat stopped (a worker killed with SIGKILL, a lost host).
SIGTERM or SIGINT: no new task is taken, the running ones finish, then it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket

from digest.app import App
from digest.config import Config
from digest.errors import ConfigError

log = logging.getLogger("digest.worker")


async def run_worker(
    config: Config, *, concurrency: int = 4, metrics_port: int | None = None
) -> None:
    """Run tasks until SIGTERM/SIGINT."""
    if not config.queue.enabled:
        raise ConfigError(
            "digest worker needs the task queue: set [queue] enabled = true (PostgreSQL only)"
        )
    from digest.queue import Queue, register

    load_steps()

    stalled = config.queue.stalled_after
    async with App(config) as app, Queue(config, pool_size=concurrency + 2) as queue:
        app.is_worker = True
        register(queue, app)
        # Started before the first task, not by it: on a busy machine the crawler's imports,
        # the summarizer and the parser processes take seconds, which the first tasks would
        # otherwise pay.
        await app.crawler()
        await app.summarizer()
        await app.extractor.warm(wait=True)
        await app.feed_parsers.start(wait=True)
        name = f"{socket.gethostname()}:{os.getpid()}"
        async with _metrics(config, queue, metrics_port), _rescuing(queue, stalled):
            log.info("worker %s started: %d task(s) at once", name, concurrency)
            await queue.procrastinate.run_worker_async(
                name=name,
                concurrency=concurrency,
                wait=True,
                install_signal_handlers=True,
                update_heartbeat_interval=stalled / 5,
                stalled_worker_timeout=stalled,
                fetch_job_polling_interval=1.0,
                delete_jobs="successful",
            )
        log.info("worker %s stopped", name)


# The modules whose units a worker runs: importing one registers its steps.
JOB_MODULES = ("digest.jobs.collect", "digest.jobs.deepen", "digest.jobs.publish")


def load_steps() -> None:
    for name in JOB_MODULES:
        importlib.import_module(name)


@contextlib.asynccontextmanager
async def _rescuing(queue, stalled_after: float):
    """Every `stalled_after / 2` seconds, retry the tasks of workers that stopped sending
    heartbeats: also when no daemon waits for them (a CLI job that was killed)."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(stalled_after / 2)
            try:
                await queue.retry_stalled()
            except Exception as err:  # the database went away for a moment: try again later
                log.warning("could not look for stalled tasks: %s", err)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def _metrics(config: Config, queue, port: int | None):
    """The Prometheus endpoint (`[metrics]`, or `--metrics-port` on this worker), with the
    queue's gauges refreshed every few seconds while it is served."""
    from digest.runtime import metrics

    async with metrics.serving(config.metrics, port=port) as server:
        if server is None:
            yield
            return

        async def refresh() -> None:
            while True:
                try:
                    counts = await queue.counts()
                except Exception as err:  # the database went away for a moment
                    log.warning("could not count the queue for metrics: %s", err)
                else:
                    metrics.queue_jobs.clear()  # a kind whose tasks are gone reads 0, not stale
                    for kind, states in counts.tasks.items():
                        for state, n in states.items():
                            metrics.queue_jobs.labels(kind, state).set(n)
                    metrics.workers_live.set(len(counts.workers))
                await asyncio.sleep(5)

        task = asyncio.create_task(refresh())
        log.info("metrics at %s", server.url)
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

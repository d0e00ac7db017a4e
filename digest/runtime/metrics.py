"""Prometheus metrics of one process (the daemon, a worker) and the endpoint that serves them.

The metrics live in a registry of their own, not prometheus_client's global one: whatever else
in the process registers there (a library, a test) never shows up at /metrics nor collides
with a name of ours. Counters count what this process did since it started, as Prometheus
expects (`rate()` and `increase()` ride over restarts); the series of every known job, outcome
and channel are there from the start at 0, so a query never finds a series missing.

The endpoint is an aiohttp server in the process's own event loop (aiohttp serves the archive
already), not prometheus_client's `start_http_server`, a WSGI server on threads of its own (one
more per request) beside the loop: this one opens and closes with the daemon or worker like
its other parts, on the loop they already run, and says which port it got when asked for 0
(tests, several workers on one host). Rendering the exposition reads /proc (the process
metrics) and took about 10 ms (median) on a 2-core machine at load 12 (`bench/metrics.py`),
so each scrape renders it in a thread: the loop never waits on it (prometheus_client's
metrics are thread-safe). One labelled increment took 1.3 µs there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Self

from aiohttp import web
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.exposition import choose_encoder

from digest.errors import DigestError

if TYPE_CHECKING:
    from digest.config import MetricsConfig

log = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)  # process_cpu_seconds_total, process_resident_memory_bytes...
PlatformCollector(registry=REGISTRY)  # python_info

JOBS = ("collect", "deepen", "publish")
OUTCOMES = ("ok", "partial", "failed")  # a run's status (`digest status`)

runs = Counter(
    "digest_runs_total",
    "Job runs that ended, by job and outcome: ok, partial (some sources, pages or messages "
    "failed), failed.",
    ["job", "outcome"],
    registry=REGISTRY,
)
run_duration = Histogram(
    "digest_run_duration_seconds",
    "How long each job run took, from its start to its record.",
    ["job"],
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200),
    registry=REGISTRY,
)
run_last_success = Gauge(
    "digest_run_last_success_timestamp_seconds",
    "When a run of the job last ended ok or partial (Unix time): alert when it grows old.",
    ["job"],
    registry=REGISTRY,
)
source_failures = Counter(
    "digest_source_failures_total",
    "Sources that failed in a collection, by kind: feed (one RSS/Atom feed), ddg (one "
    "DuckDuckGo search). A feed resting after repeated failures is not tried, nor counted.",
    ["kind"],
    registry=REGISTRY,
)
articles_collected = Counter(
    "digest_articles_collected_total",
    "Headlines collected and stored, by category (a headline seen again counts again).",
    ["category"],
    registry=REGISTRY,
)
articles_new = Counter(
    "digest_articles_new_total",
    "Articles stored for the first time, by category.",
    ["category"],
    registry=REGISTRY,
)
stories_deepened = Counter(
    "digest_stories_deepened_total",
    "Top stories that deepen read and summarized (or found done already).",
    registry=REGISTRY,
)
pages_crawled = Counter(
    "digest_pages_crawled_total",
    "Pages the deep crawl read, by outcome: ok (main text found) or failed.",
    ["outcome"],
    registry=REGISTRY,
)
summaries = Counter(
    "digest_summaries_total",
    "Summaries made, by method: llm, or extractive (no [llm], or the LLM failed).",
    ["method"],
    registry=REGISTRY,
)
llm_calls = Counter(
    "digest_llm_calls_total",
    "Chat completion requests to the LLM, by outcome: ok, error (failed after the client's "
    "own retries), unsupported (a structured-output mode the server refused).",
    ["outcome"],
    registry=REGISTRY,
)
llm_tokens = Counter(
    "digest_llm_tokens_total",
    "Tokens the LLM server reported using, by kind: prompt or completion.",
    ["kind"],
    registry=REGISTRY,
)
llm_duration = Histogram(
    "digest_llm_call_duration_seconds",
    "How long one chat completion request took, retries included.",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120),
    registry=REGISTRY,
)
messages_sent = Counter(
    "digest_messages_sent_total",
    "Messages the server or service accepted, by channel: email, or the Apprise scheme "
    "(json, ntfy, tgram...).",
    ["channel"],
    registry=REGISTRY,
)
messages_failed = Counter(
    "digest_messages_failed_total",
    "Messages that failed, by channel and outcome: retrying (temporary: tried again later) "
    "or failed (for good).",
    ["channel", "outcome"],
    registry=REGISTRY,
)
queue_jobs = Gauge(
    "digest_queue_jobs",
    "Tasks in the job queue ([queue] on), by task kind and state (waiting, running, failed).",
    ["kind", "state"],
    registry=REGISTRY,
)
workers_live = Gauge(
    "digest_workers_live",
    "Workers alive on the job queue, as the queue last saw them.",
    registry=REGISTRY,
)

for _job in JOBS:
    run_duration.labels(_job)
    for _outcome in OUTCOMES:
        runs.labels(_job, _outcome)
for _kind in ("feed", "ddg"):
    source_failures.labels(_kind)
for _outcome in ("ok", "failed"):
    pages_crawled.labels(_outcome)
for _method in ("llm", "extractive"):
    summaries.labels(_method)
for _outcome in ("ok", "error", "unsupported"):
    llm_calls.labels(_outcome)
for _kind in ("prompt", "completion"):
    llm_tokens.labels(_kind)
messages_sent.labels("email")
for _outcome in ("retrying", "failed"):
    messages_failed.labels("email", _outcome)


def run_finished(job: str, outcome: str, seconds: float) -> None:
    """A job's run ended with `outcome` (its recorded status) after `seconds`."""
    runs.labels(job, outcome).inc()
    run_duration.labels(job).observe(seconds)
    if outcome in ("ok", "partial"):
        run_last_success.labels(job).set_to_current_time()


def llm_called(outcome: str, seconds: float, prompt: int = 0, completion: int = 0) -> None:
    """One chat completion request ended (`prompt`, `completion`: the tokens it reported)."""
    llm_calls.labels(outcome).inc()
    llm_duration.observe(seconds)
    llm_tokens.labels("prompt").inc(prompt)
    llm_tokens.labels("completion").inc(completion)


def channel_kind(channel: str) -> str:
    """A ledger row's channel as a label: "email", or the Apprise scheme of "json:5d41402abc4b"
    (the hash names one subscriber's channel: too many series to keep)."""
    return channel.partition(":")[0] or "unknown"


class MetricsServer:
    """The endpoint while it listens; `port` is where (the system's choice when asked for 0).
    Close it with `close()`, or use it as `async with`."""

    def __init__(self, runner: web.AppRunner, host: str, port: int) -> None:
        self._runner = runner
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        return f"http://{host}:{self.port}/metrics"

    async def close(self) -> None:
        await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _metrics(request: web.Request) -> web.Response:
    # OpenMetrics when the scraper asks for it (Prometheus does), the classic text format else.
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    body = await asyncio.to_thread(encode, REGISTRY)
    return web.Response(body=body, headers={"Content-Type": content_type})


async def serve_metrics(host: str, port: int) -> MetricsServer:
    """Serve GET /metrics on `host`:`port` in this event loop until the server is closed.
    Raises DigestError naming the address when it cannot listen there (taken, not this
    machine's)."""
    app = web.Application()
    app.router.add_get("/metrics", _metrics)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    try:
        await site.start()
    except OSError as err:
        await runner.cleanup()
        raise DigestError(f"cannot serve metrics on {host}:{port}: {err.strerror or err}") from None
    bound = runner.addresses[0][1] if runner.addresses else port
    return MetricsServer(runner, host, bound)


@contextlib.asynccontextmanager
async def serving(
    config: MetricsConfig, *, port: int | None = None
) -> AsyncIterator[MetricsServer | None]:
    """The endpoint while the block runs, as `[metrics]` says (yields it); None when it is off.

    `port` (a worker's --metrics-port, so that several run on one host) overrides the
    configured port and turns the endpoint on whatever `enabled` says.
    """
    if not config.enabled and port is None:
        yield None
        return
    where = config.port if port is None else port
    async with await serve_metrics(config.host, where) as server:
        log.info("serving metrics on %s", server.url)
        yield server

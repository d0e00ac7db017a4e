"""What the metrics cost: one increment, rendering the exposition, one scrape over HTTP.

    .venv/bin/python -m bench.metrics [--rounds 2000]

The registry is filled as a busy deployment's would be (six categories, four channel kinds,
every job and outcome, a queue with five task kinds), then: the median time of one labelled
counter increment as the instrumented code does it (`labels(...).inc()`) beside a plain dict
increment; of rendering the exposition (`choose_encoder` + encode, what the endpoint does on
the event loop); and of a whole scrape from a client over loopback HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter

from aiohttp import ClientSession
from prometheus_client.exposition import choose_encoder

from digest.runtime import metrics

CATEGORIES = ("technology", "finance", "entertainment", "sports", "world", "health")
CHANNELS = ("email", "json", "ntfy", "tgram")
TASKS = ("feed", "search", "extract", "deepen", "deliver")


def fill() -> None:
    for category in CATEGORIES:
        metrics.articles_collected.labels(category).inc(40)
        metrics.articles_new.labels(category).inc(12)
    for channel in CHANNELS:
        metrics.messages_sent.labels(channel).inc(1000)
        metrics.messages_failed.labels(channel, "retrying").inc(3)
    for job in metrics.JOBS:
        metrics.run_finished(job, "ok", 42.0)
    for task in TASKS:
        for state in ("waiting", "running", "failed"):
            metrics.queue_jobs.labels(task, state).set(7)
    metrics.llm_called("ok", 1.2, 900, 120)


def median_ns(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - started)
    return statistics.median(times)


async def scrapes(rounds: int) -> tuple[float, int]:
    async with await metrics.serve_metrics("127.0.0.1", 0) as server, ClientSession() as http:
        times = []
        size = 0
        for _ in range(rounds):
            started = time.perf_counter()
            async with http.get(server.url) as response:
                size = len(await response.read())
            times.append(time.perf_counter() - started)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    fill()
    plain: Counter[str] = Counter()

    def dict_inc() -> None:
        plain["email"] += 1

    def counter_inc() -> None:
        metrics.messages_sent.labels("email").inc()

    encode, _ = choose_encoder("")
    inc_ns = median_ns(counter_inc, rounds * 10)
    dict_ns = median_ns(dict_inc, rounds * 10)
    render_ns = median_ns(lambda: encode(metrics.REGISTRY), rounds)
    scrape_s, size = asyncio.run(scrapes(max(rounds // 10, 20)))
    print(f"counter increment (labels().inc()): {inc_ns / 1000:.2f} µs median")
    print(f"  a dict increment, same run:       {dict_ns / 1000:.2f} µs ({inc_ns / dict_ns:.0f}×)")
    print(f"render the exposition ({size} bytes): {render_ns / 1e6:.3f} ms median")
    print(f"scrape over loopback HTTP:          {scrape_s * 1000:.3f} ms median")


if __name__ == "__main__":
    main()

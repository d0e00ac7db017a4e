"""Summaries per minute: the extractive summarizer, and the LLM path against a server.

    .venv/bin/python -m bench.summaries                      # fake local server (tests/llmserver)
    .venv/bin/python -m bench.summaries --base-url http://127.0.0.1:8911/v1 --model smollm2

With `--base-url`, any OpenAI-compatible server (e.g. llama-cpp-python's, see DESIGN.md) is used
as it is: the report shows which structured-output mode was negotiated, how many summaries came
from the LLM and how many fell back to extractive (and why). Its facts are not checked: this
measures the protocol and the throughput, never the content.

Measured here against llama-cpp-python 0.3.36 with SmolLM2-135M (Q4_1), on a busy 2-core machine:
json_schema refused with HTTP 500, json_object accepted and remembered; the model's JSON had the
wrong shape (`summary` an object) twice, so the summary fell back to extractive after ~110 s,
1,331 prompt and 241 completion tokens counted.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

from digest.config import LLMConfig
from digest.summarize import ArticleInput, Summarizer, extractive
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES


def articles() -> list[ArticleInput]:
    return [
        ArticleInput(
            url=f"https://news.example/{a.category}/{a.slug}.html",
            title=a.title,
            text="\n\n".join([a.lede, *a.paragraphs]),
        )
        for a in ARTICLES
    ]


def bench_extractive(rounds: int = 50) -> None:
    items = articles()
    started = time.perf_counter()
    for _ in range(rounds):
        for item in items:
            extractive.summarize(item)
    elapsed = time.perf_counter() - started
    n = rounds * len(items)
    print(f"extractive: {n} summaries in {elapsed:.2f} s, {n / elapsed * 60:,.0f}/min")


async def bench_llm(config: LLMConfig, count: int, concurrency: int) -> None:
    items = (articles() * (count // len(ARTICLES) + 1))[:count]
    reasons: Counter[str] = Counter()
    gate = asyncio.Semaphore(concurrency)
    async with Summarizer(config, api_key="unused") as summarizer:

        async def one(item: ArticleInput) -> None:
            async with gate:
                outcome = await summarizer.summarize_with_outcome(item)
            if outcome.fallback_reason:
                reasons[outcome.fallback_reason] += 1

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in items))
        elapsed = time.perf_counter() - started
        stats = summarizer.stats
        mode = summarizer.llm.mode if summarizer.llm else None
    print(
        f"llm {config.model} at {config.base_url}: mode {mode}; {count} summaries in "
        f"{elapsed:.1f} s ({count / elapsed * 60:.1f}/min, concurrency {concurrency}); "
        f"{stats.llm} from the LLM, {stats.fallbacks} extractive fallbacks; "
        f"tokens {stats.prompt_tokens} in, {stats.completion_tokens} out"
    )
    for reason, n in reasons.most_common():
        print(f"  fallback x{n}: {reason}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server; default: the fake one")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    bench_extractive()
    if args.base_url:
        config = LLMConfig(base_url=args.base_url, model=args.model, timeout=args.timeout)
        await bench_llm(config, args.count, args.concurrency)
        return
    async with LLMServer(model=args.model) as srv:
        srv.json_schema = "http500"  # behave like llama.cpp's server
        await bench_llm(srv.config(timeout=args.timeout), args.count, args.concurrency)


if __name__ == "__main__":
    asyncio.run(main())

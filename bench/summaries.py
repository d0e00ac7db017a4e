"""Summaries per edition of the local news web: one per story against one per article, and what
the claim check catches.

    .venv/bin/python -m bench.summaries              # the fake local server (tests/llmserver)
    .venv/bin/python -m bench.summaries --base-url http://127.0.0.1:8911/v1 --model smollm2 \\
        --top 2 --timeout 600 --first-token-timeout 300 --max-input-chars 2400

One edition: `collect` then `deepen` of the local news web's technology and world news (the
chip-plant and battery stories told by two and three outlets in their own words,
`tests.newsweb.RETELLINGS`), in-process, on a fresh SQLite database, with DuckDuckGo replaced at
its boundary. Printed, for the same stories in the same run:

- **per story** (what `deepen` does): LLM calls, prompt and completion tokens, wall time of the
  summaries, outlets read per call; claims per summary, share found, sentences removed, and
  summaries the check sent back to extractive (with what it did not find, from the log);
- **per article** (the baseline, `--baseline`; what `deepen` did before): each story's first two
  articles summarized one call each, with a fresh client (so it negotiates too); the claim check
  run over those summaries as well, for comparison (they were published unchecked);
- with the fake server only: for each fact-inventing fault (a number, a name, a quote) one more
  edition, and the share of invented sentences that reached no stored summary (goal: all).

The real server's facts are whatever the model writes: the figures count what the check
removed, never whether what stayed is true.

Measured here (2 shared cores, 2026-12-01), top 3 per category, fake server refusing
json_schema: per story 6 summaries in 7 calls (one probe), 2,446 prompt + 1,006 completion
tokens, 1.5 outlets a call; per article 8 summaries in 9 calls, 2,204 + 1,431 tokens: calls
0.78, tokens 0.95. Every invented number, name and quote caught (6 of 6 each, 12 sentences
removed: summary and brief), grounded summaries kept whole (100% of claims found).
llama-cpp-python 0.3.36 + SmolLM2-135M, top 1 per category (the chip plant from 2 outlets, one
world story), three runs after a warm-up request, on a machine whose load changed between and
within runs (so wall times are rough): per story 2 summaries in 3 calls (one refused json_schema
probe) every time, 1,356-1,452 prompt + 406-432 completion tokens, 22-217 s; per article 3
summaries in 4-5 calls, 1,246-2,719 + 594-1,793 tokens, 30-63 s. Calls 0.60-0.75, tokens
0.39-1.02. Claims 4.0-7.0 a summary, 86-100% found, 0-2 sentences removed (the per-article
summaries, published unchecked before: 5.7-6.7 a summary, 55-94% found, 1-3 sentences that
would have been removed). The check rejected the chip-plant summary in 2 of 4 runs (what was
left was too short): names the model made up ("Chipping Halvard Microsystems", "Elbere's") and
one it only spelled otherwise ("Elbe River" for "the Elbe"): the check errs towards removing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from digest.app import App
from digest.collect import collect
from digest.config import Config, LLMConfig, parse_config
from digest.deepen import deepen, story_sources
from digest.sources.ddg import DuckDuckGo
from digest.summarize import ArticleInput, Summarizer
from digest.summarize.claims import check_summary
from tests.fake_ddgs import news_rows, story_rows
from tests.llmserver import INVENTIONS, LLMServer, invented_sentence
from tests.newsweb import ARTICLES, NewsWeb


class Rows:
    """DuckDuckGo at its boundary: the edition's rows for each category's query."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        self._rows = rows

    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._rows.get(query, [])

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return []


class Removed(logging.Handler):
    """What the claim check said when it removed something (digest.summarize.story's log)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "claim check" in message:
            self.lines.append(message)


@dataclass
class Edition:
    label: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    summaries: int = 0
    by_llm: int = 0
    sources_read: int = 0
    claims: list[int] = field(default_factory=list)
    found: list[int] = field(default_factory=list)
    removed: int = 0
    rejected: int = 0
    texts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        n = max(1, self.summaries)
        total, found = sum(self.claims), sum(self.found)
        share = f"{found / total:.0%}" if total else "-"
        return (
            f"{self.label:<22} {self.summaries:>3} summaries ({self.by_llm} LLM) · "
            f"{self.calls:>3} calls · tokens {self.prompt_tokens:>6} in "
            f"{self.completion_tokens:>5} out · {self.seconds:7.1f} s · "
            f"{self.sources_read / n:.1f} outlets/summary · claims "
            f"{statistics.mean(self.claims) if self.claims else 0:.1f}/summary, {share} found, "
            f"{self.removed} sentences removed, {self.rejected} rejected"
        )


def config_for(folder: Path, llm: LLMConfig) -> Config:
    return parse_config(
        {
            "database": {"url": f"sqlite:///{folder / 'digest.db'}"},
            "sources": {"categories": ["technology", "world"], "ddg_retries": 0},
            "fetch": {"allowed_networks": ["127.0.0.1/32"]},
            "crawl": {"mode": "http", "respect_robots": False},
            "llm": llm.model_dump(),
        }
    )


async def per_story(web: NewsWeb, llm: LLMConfig, top: int, label: str) -> tuple[Edition, Any]:
    """One edition through `deepen`: its figures, and its stories (for the baseline)."""
    rows = {
        "technology news": story_rows(web, "technology"),
        "world news": news_rows(web, [a for a in ARTICLES if a.category == "world"]),
    }
    edition = Edition(label)
    with tempfile.TemporaryDirectory() as tmp:
        config = config_for(Path(tmp), llm)
        async with App(config, environ={}) as app:
            app.ddg = DuckDuckGo(config.sources, ddgs_factory=lambda: Rows(rows))
            await collect(app)
            report = await deepen(app, top=top)
            edition.seconds = report.counts["summary_ms"] / 1000  # the summaries, not the crawl
            store = await app.store()
            stories = [
                s for c in config.sources.categories for s in store.stories_since(c, since=_epoch())
            ]
            stories = [s for s in stories if s.summary is not None]
            texts = {a.id: store.article_text(a.id) or a.lede for s in stories for a in s.articles}
        c = report.counts
        edition.calls = c["llm_calls"]
        edition.summaries = c["summarized"]
        edition.by_llm = c["llm"]
        edition.sources_read = c["sources_read"]
        edition.removed = c["sentences_removed"]
        edition.rejected = c["claims_rejected"]
        for s in stories:
            assert s.summary is not None
            edition.claims.append(s.summary.claims)
            edition.found.append(s.summary.claims_found)
            edition.texts.append(f"{s.summary.summary}\n{s.summary.brief_summary}")
            edition.prompt_tokens += s.summary.prompt_tokens
            edition.completion_tokens += s.summary.completion_tokens
        edition.notes = [e.error for e in report.errors]
    return edition, (stories, texts)


def _epoch() -> Any:
    from datetime import UTC, datetime

    return datetime(2000, 1, 1, tzinfo=UTC)


async def per_article(llm: LLMConfig, stories: Any, label: str) -> Edition:
    """The old way: each story's first two articles (one per outlet), one call each."""
    found_stories, texts = stories
    edition = Edition(label)
    async with Summarizer(llm, api_key="unused") as summarizer:
        started = time.perf_counter()
        for story in found_stories:
            for a in story_sources(story)[:2]:
                text = texts.get(a.id) or ""
                if not text.strip():
                    continue
                item = ArticleInput(url=a.url, title=a.title, text=text, source=a.source)
                outcome = await summarizer.summarize_with_outcome(item)
                s = outcome.summary
                edition.summaries += 1
                edition.sources_read += 1
                edition.by_llm += s.summarizer != "extractive"
                checked = check_summary(f"{s.summary}\n\n{s.brief_summary}", [text, a.title])
                edition.claims.append(checked.claims)
                edition.found.append(checked.found)
                edition.removed += checked.removed
        edition.seconds = time.perf_counter() - started
        stats = summarizer.stats
        edition.prompt_tokens, edition.completion_tokens = (
            stats.prompt_tokens,
            stats.completion_tokens,
        )
        edition.calls = summarizer.llm.calls if summarizer.llm else 0
    return edition


async def fake_faults(web: NewsWeb, top: int) -> None:
    print("\ninvented facts (fake server), per fault: summaries carrying one, caught")
    for fault in INVENTIONS:
        async with LLMServer() as srv:
            srv.always(fault)
            edition, (stories, texts) = await per_story(web, srv.config(timeout=30.0), top, fault)
        invented = 0
        published = 0
        for story in stories:
            sources = "\n".join(texts.get(a.id) or "" for a in story_sources(story))
            claim = _claim(invented_sentence(fault, sources))
            invented += story.summary.summarizer != "extractive" or story.summary.note != ""
            published += any(claim in t for t in edition.texts)
        print(
            f"  {fault:<14} {invented} LLM summaries with an invented sentence, "
            f"{published} reached a stored summary → caught {1 - published / max(1, invented):.0%}"
            f" · {edition.removed} sentences removed"
        )


def _claim(sentence: str) -> str:
    """The invented part of a fault's sentence."""
    for marker in ("covers ", "proposed by ", "called the outcome "):
        if marker in sentence:
            return sentence.split(marker, 1)[1].rstrip(".").split(" more")[0]
    return sentence


async def warm_up(llm: LLMConfig) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=llm.base_url, api_key="unused", timeout=llm.timeout)
    try:
        await client.chat.completions.create(
            model=llm.model, messages=[{"role": "user", "content": "Hi"}], max_tokens=4
        )
    finally:
        await client.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server; default: the fake one")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--top", type=int, default=3, help="stories per category")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--first-token-timeout", type=float, default=60.0)
    parser.add_argument("--max-input-chars", type=int, default=12_000)
    parser.add_argument("--budget", type=float, default=3600.0)
    parser.add_argument("--no-baseline", action="store_true", help="per story only")
    args = parser.parse_args()
    removed = Removed()
    logging.getLogger("digest.summarize.story").addHandler(removed)
    logging.getLogger("digest.summarize.story").setLevel(logging.INFO)
    settings = {
        "timeout": args.timeout,
        "first_token_timeout": args.first_token_timeout,
        "max_input_chars": args.max_input_chars,
        "budget": args.budget,
        "max_retries": 0,
    }
    async with NewsWeb() as web:
        if args.base_url:
            llm = LLMConfig(base_url=args.base_url, model=args.model, **settings)
            where = f"{args.model} at {args.base_url}"
            await warm_up(llm)  # a fresh server loads its model on the first request
            story, stories = await per_story(web, llm, args.top, "per story")
            baseline = None if args.no_baseline else await per_article(llm, stories, "per article")
        else:
            async with LLMServer(model=args.model) as srv:
                srv.json_schema = "http500"  # negotiate as with llama.cpp's server
                llm = srv.config(**settings)
                where = "the fake server (json_schema refused, as llama.cpp does)"
                story, stories = await per_story(web, llm, args.top, "per story")
                baseline = (
                    None if args.no_baseline else await per_article(llm, stories, "per article")
                )
        print(f"one edition of the local news web, top {args.top} per category, {where}:")
        print("  " + story.line())
        if baseline is not None:
            print("  " + baseline.line())
            if baseline.calls:
                tokens = story.prompt_tokens + story.completion_tokens
                before = max(1, baseline.prompt_tokens + baseline.completion_tokens)
                print(
                    f"  per story / per article: calls {story.calls / baseline.calls:.2f}, "
                    f"tokens {tokens / before:.2f}, "
                    f"wall time {story.seconds / max(1e-9, baseline.seconds):.2f}"
                )
        for note in story.notes:
            print(f"  run: {note}")
        for line in removed.lines:
            print(f"  check: {line}")
        if not args.base_url:
            await fake_faults(web, args.top)


if __name__ == "__main__":
    asyncio.run(main())

"""Summaries per edition of the local news web: one per story against one per article, and what
the claim check catches.

    .venv/bin/python -m bench.summaries              # the fake local server (tests/llmserver)
    .venv/bin/python -m bench.summaries --base-url http://127.0.0.1:8911/v1 --model smollm2 \\
        --top 2 --timeout 600 --first-token-timeout 300 --max-input-chars 2400
    eval "$(bash .ci/llm-peer.sh)" && .venv/bin/python -m bench.summaries --windows

`--windows`: llama-cpp-python's server with SmolLM2 (`.ci/llm-peer.sh`) started afresh at a
context of 2,048 and of 4,096 tokens, and `collect` + `deepen --top 3` with only `base_url`,
`model` and `api_key_env` in `[llm]`, of three stories each told by three outlets at length
(`tests.fake_ddgs.long_story_rows`): per story kept or extractive and why, per request its prompt
and reply tokens, time to the first token and in all (from the server's log), and the requests
it refused; this code beside the code at `--baseline-ref` (a1a71df, before the window was
learned), in one run.

Measured with `--windows` (2 cores busy with a CI run, 2026-12-04), three stories of 2-3
outlets, SmolLM2-135M:

| n_ctx | code | by the model | prompt tokens per request | first token | refused |
|---|---|---|---|---|---|
| 2048 | now | 3 of 3 | 772, 985, 1021 | 3-16 s | none |
| 2048 | a1a71df | 2 of 3 (one "the reply was empty") | 772, 985 | 5-14 s | 2 (3348, 3406 > 2048) |
| 4096 | now | 3 of 3 | 1022, 735, 1020 | 10-20 s | none |
| 4096 | a1a71df | 3 of 3 | 772, 985, 3311 | 8-22 s | none |

llama-cpp-python does not say its window, so it is assumed to read 2,048 tokens: at 4096 this
code reads less of each outlet than the window would hold (`[llm] context_tokens = 4096` lets
it read more), where the old code sent 3,311 tokens and got by because it had room.

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
import json
import logging
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from digest.app import App
from digest.config import Config, LLMConfig, parse_config
from digest.facts.claims import check_summary
from digest.jobs.collect import collect
from digest.jobs.deepen import deepen
from digest.jobs.story_summary import story_sources
from digest.sources.ddg import DuckDuckGo
from digest.summarize import ArticleInput, Summarizer
from tests.conftest import free_port
from tests.fake_ddgs import ENV as FAKE_DDGS_ENV
from tests.fake_ddgs import long_story_rows, news_rows, story_rows, write_script
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


# -- context windows: the real server with the default [llm] section, now and before -----------

# llama-cpp-python's log for each request: the prompt's tokens and the time to read them (the
# time to the first token, near enough), then the tokens written and the whole request's time.
_PROMPT_EVAL = re.compile(r"prompt eval time\s*=\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL = re.compile(r"^\S*\s*eval time\s*=\s*([\d.]+) ms /\s*(\d+) runs", re.MULTILINE)
_TOTAL = re.compile(r"total time\s*=\s*([\d.]+) ms")
_OVERFLOW = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


@dataclass
class Request:
    prompt_tokens: int
    first_token_s: float
    reply_tokens: int
    total_s: float


def served_requests(log: str) -> tuple[list[Request], list[str]]:
    """The requests llama-cpp-python's server read whole, and the ones it refused."""
    lines = log.splitlines()
    out: list[Request] = []
    prompt: tuple[float, int] | None = None
    written: tuple[float, int] | None = None
    for line in lines:
        if m := _PROMPT_EVAL.search(line):
            prompt, written = (float(m.group(1)), int(m.group(2))), None
        elif (m := _EVAL.search(line)) and prompt is not None:
            written = (float(m.group(1)), int(m.group(2)))
        elif (m := _TOTAL.search(line)) and prompt is not None:
            out.append(
                Request(
                    prompt[1],
                    prompt[0] / 1000,
                    written[1] if written else 0,
                    float(m.group(1)) / 1000,
                )
            )
            prompt = None
    # Each refusal is logged twice (the error, then its traceback's last line).
    said = [f"{m.group(1)} tokens > {m.group(2)}" for m in _OVERFLOW.finditer(log)]
    refused = [why for i, why in enumerate(said) if i % 2 == 0]
    return out, refused


def start_peer(n_ctx: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    python = os.environ.get("DIGEST_TEST_LLAMA_PYTHON", "")
    model = os.environ.get("DIGEST_TEST_LLAMA_MODEL", "")
    if not (python and model):
        raise SystemExit(
            'the real server is not set up: eval "$(bash .ci/llm-peer.sh)" first, which sets '
            "DIGEST_TEST_LLAMA_PYTHON and DIGEST_TEST_LLAMA_MODEL"
        )
    port = free_port()
    cmd = [python, "-m", "llama_cpp.server", "--model", model, "--model_alias", "smollm2"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_threads", "2", "--n_ctx", str(n_ctx)]
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return process, url
        except OSError:
            time.sleep(0.25)
    process.kill()
    raise SystemExit(f"the real server did not start: {log.read_text(errors='replace')[-2000:]}")


def checkout(ref: str) -> Path:
    """A worktree of `ref` (kept between runs, under the system's temporary folder)."""
    folder = Path(tempfile.gettempdir()) / f"digest-bench-{ref}"
    if not (folder / "digest").is_dir():
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--force", str(folder), ref],
            check=True,
            capture_output=True,
        )
    return folder


def one_run(code: Path, url: str, rows: list[dict[str, Any]], log: Path) -> list[str]:
    """`collect` and `deepen --top 3` of the code at `code` with only base_url, model and
    api_key_env in [llm]; a line per story and per request."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "digest.toml").write_text(
            '[database]\nurl = "sqlite:///digest.db"\n'
            '[sources]\ncategories = ["technology"]\nddg_retries = 0\n'
            '[fetch]\nallowed_networks = ["127.0.0.1/32"]\n'
            '[crawl]\nmode = "http"\nrespect_robots = false\n'
            f'[llm]\nbase_url = "{url}"\nmodel = "smollm2"\napi_key_env = "BENCH_NO_KEY"\n'
        )
        script = write_script(folder / "ddgs.json", news={"technology news": rows})
        env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
        env |= {"PYTHONPATH": str(code), FAKE_DDGS_ENV: str(script)}
        run = [sys.executable, "-m", "tests.fake_ddgs"]
        subprocess.run([*run, "collect"], cwd=folder, env=env, check=True, capture_output=True)
        started = len(log.read_bytes())
        wall = time.monotonic()
        subprocess.run([*run, "deepen", "--top", "3"], cwd=folder, env=env, capture_output=True)
        wall = time.monotonic() - wall
        with sqlite3.connect(folder / "digest.db") as conn:
            stories = conn.execute(
                "select summarizer, note, sources from story_summaries order by id"
            ).fetchall()
    served, refused = served_requests(log.read_bytes()[started:].decode(errors="replace"))
    by_model = sum(1 for who, _, _ in stories if who.startswith("llm:"))
    lines = [f"{by_model} of {len(stories)} stories by the model; deepen {wall:.0f} s in all"]
    for who, note, sources in stories:
        outlets = len(json.loads(sources))
        why = "kept" if who.startswith("llm:") else f"extractive: {note[:110]}"
        lines.append(f"  story ({outlets} outlet{'s' * (outlets != 1)}): {why}")
    for r in served:
        lines.append(
            f"  request: {r.prompt_tokens:>5} prompt tokens, first token {r.first_token_s:5.1f} s,"
            f" {r.reply_tokens:>4} reply tokens, {r.total_s:5.1f} s"
        )
    lines += [f"  request refused by the server: {why}" for why in refused]
    return lines


def windows(ref: str) -> None:
    """The real server at 2048 and 4096 tokens, the default [llm] section, this code beside
    the code at `ref` (before the context window was learned), one after the other on a
    freshly started server each (so no run reuses another's prompt cache)."""
    from tests.conftest import serve_in_thread

    here = Path(__file__).resolve().parent.parent
    before = checkout(ref)
    for web in serve_in_thread(NewsWeb()):
        rows = long_story_rows(web)
        for n_ctx in (2048, 4096):
            for label, code in (("now", here), (f"before ({ref})", before)):
                with tempfile.TemporaryDirectory() as tmp:
                    log = Path(tmp) / "server.log"
                    process, url = start_peer(n_ctx, log)
                    try:
                        lines = one_run(code, url, rows, log)
                    finally:
                        process.terminate()
                        process.wait(10)
                print(f"n_ctx {n_ctx}, {label}: {lines[0]}")
                for line in lines[1:]:
                    print(line)


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
    parser.add_argument(
        "--windows",
        action="store_true",
        help="the real server at 2048 and 4096 tokens with the default [llm] section, "
        "beside the code at --baseline-ref",
    )
    parser.add_argument("--baseline-ref", default="a1a71df", help="git ref for --windows")
    args = parser.parse_args()
    if args.windows:
        windows(args.baseline_ref)
        return
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

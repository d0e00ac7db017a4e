"""Scale benchmark: the work of a newsroom-sized deployment, by 1, 2 and 4 `digest worker`
processes on PostgreSQL, with the in-process SQLite path beside them for reference.

Run from the repository root (PostgreSQL at 127.0.0.1:5432, user postgres, database test):

    .venv/bin/python bench/scale.py [--scale 1.0] [--workers 1,2,4] [--concurrency 4]
                                    [--no-sqlite] [--stages collect,crawl,deliver] [--repeats 1]

At --scale 1 (the issue's figures): collect from 5,000 feeds of the local news web
(tests/newsweb.py; then a second pass, where every feed answers 304 to the conditional GET),
crawl and summarize (extractive) 500 stories, and send one edition to 100,000 subscribers at a
local SMTP sink (bench/smtpsink.py in a child process, which only counts). `--scale 0.1` runs
a tenth of each. Every stage runs as the daemon runs it: `collect`, the story tasks `deepen`
enqueues, and `send_edition`, from this process, which waits for the workers. For each worker
count, a fresh PostgreSQL schema and fresh workers; the speedup is over 1 worker, in the same
run.

What is and is not measured: the story stage enqueues one `digest.story` task per stored
article (`deepen`'s clustering and ranking, which run in the daemon, are left out: the local
news web's feeds tell ten stories, not 500); the news web serves a dozen article texts under
distinct URLs, so most summaries are found by their text's hash and reused (the crawl and the
main-text extraction are not). The edition is bench/email_bench.py's (6 categories, 5 stories
each); subscribers get every category.

Measured here, 2026-12-03, `--workers 1,2,4 --no-sqlite` in one run, on a machine about twice
as fast per core as the runs below (the 1-worker collect took 16.4 s, there 26.7-32.7 s), after
the SMTP data was written in its wire form (CRLF, dots doubled) instead of through aiosmtplib's
two regular expressions:

| run | collect | collect (304s) | crawl + summary | deliver |
|---|---|---|---|---|
| 1 worker | 16.4 s, 305/s (5,000 ledes) | 2.2 s | 10.4 s, 48/s | 501 s, 200 emails/s |
| 2 workers | 14.6 s (x1.12, 5,000 ledes) | 1.5 s (x1.45) | 8.1 s (x1.28) | 304 s (x1.65) |
| 4 workers | 16.0 s (x1.02, 5,000 ledes) | 1.8 s (x1.24) | 8.3 s (x1.25) | 302 s (x1.66) |

Delivery with 4 workers keeps both cores busy (587 s of CPU in 302 s; 4.9 ms a worker's CPU per
email, 5.9 ms in all); 1 worker uses 1.14 cores. Collect with 1 worker already uses 1.54 cores
(25.2 s of CPU in 16.4 s), and 4 workers spend 18% more per feed (5.9 against 5.0 ms). The same
4-worker delivery at `--scale 0.1`, the code before and after that change run alternately,
twice each: 37.6 / 34.6 s before, 31.2 / 28.0 s after (x1.20), a worker's CPU per email 5.6
against 4.5-5.0 ms.

Measured here, 2026-12-02 (fourth session), `--stages collect,crawl --repeats 3`: medians of
three runs each, interleaved, on a machine whose speed drifted by a third during the run (the
1-worker collect took 30.7 / 34.4 / 41.9 s), workers at --concurrency 4:

| run | collect | collect (304s) | crawl + summary |
|---|---|---|---|
| 1 worker | 34.4 s, 146/s (5,000 ledes) | 4.4 s, 1,143/s | 18.9 s, 26/s |
| 2 workers | 30.9 s (x1.11, 5,000 ledes) | 4.1 s (x1.06) | 16.3 s (x1.16) |
| 4 workers | 36.3 s (x0.95, 4,992-4,996 ledes) | 4.3 s (x1.03) | 15.3 s (x1.24) |
| SQLite in-process | 34.1 s, 147/s (5,000 ledes; one run, after the batching below) | 5.9 s | |

Collect alone, `--stages collect --workers 1,4 --no-sqlite --repeats 3`, 4 workers over 1:
x1.05 (the 304 pass x1.03) with source tasks of 20 feeds; x1.11 (x1.30) with 100, but 4,607-
4,858 ledes; x1.10 (x1.23) with 100 and the passes' turns per machine, 4,923-4,991 ledes.

Three changes of that session: a late parse is given a second to end instead of killing its
parser (with 4 workers, ~470 parsers were killed and restarted in one collect, and as few as
553 of 5,000 headlines got a lede), fast passes take turns across a machine's workers, one per
core, and the in-process path reads a category in batches like workers (before, its one pass of
5,000 pages gave 135-300 of them a lede in 15-20 s, which made it look twice as fast).

What limits collect on 2 cores, read from /proc/stat per round: 1 worker already keeps 1.55-1.70
cores busy (its passes run back to back, each 50 pages in about 0.19 s), 4 workers 1.92-1.95;
and 4 workers spend 10-25% more CPU per feed (13.6 against 11.1 ms): 24 parser processes where
one worker has 6, four connection pools, four sets of polls. Per page, the extraction round
costs about 6 ms of CPU (the lede's two parses 2.8, the worker's event loop 2.5, PostgreSQL 0.9);
per feed, feedparser alone takes 1.1-1.8 ms.

Earlier the same day, `--scale 1 --no-sqlite` in one run, after a worker's fast passes took turns
and a pass of late pages stopped blaming their sites (news web on 25 hosts):

| run | collect | collect (304s) | crawl + summary | deliver |
|---|---|---|---|---|
| 1 worker | 26.7 s, 187/s (5,000 ledes) | 5.3 s, 940/s | 15.3 s, 33/s | 1,132 s, 88 emails/s |
| 2 workers | 24.1 s (x1.11, 5,000 ledes) | 4.3 s (x1.24) | 13.7 s (x1.12) | 637 s (x1.78) |
| 4 workers | 26.0 s (x1.03, 4,722 ledes) | 3.6 s (x1.47) | 14.1 s (x1.09) | 593 s (x1.91) |

Per lede, 4 workers' collect is not faster than 1 worker's (182 against 187 a second). A run of
the short stages alone the same day: collect 32.0 / 22.9 / 24.8 s (4,853 ledes with 4), the 304
pass 6.1 / 4.2 / 2.9 s, crawl 17.8 / 9.8 / 9.6 s with 1 / 2 / 4 workers.

Before those two changes, 4 workers' collect looked faster only because it did less: its
passes, run at once, shared the CPU past what could parse within the budget, most pages were
late, three late pages had their site skipped, and 400-1,500 of 5,000 headlines got a lede
(against all of them with 1 worker); each run now prints what it got. The 2026-12-01 run,
`--scale 1` with deliver (one host, feed states batched; its SQLite collect read one pass of
5,000 pages, see above):

| run | collect | collect (304s) | crawl + summary | deliver |
|---|---|---|---|---|
| SQLite in-process | 14.6 s, 343/s | 3.8 s, 1,332/s | 9.7 s, 52/s | 826 s, 121 emails/s |
| 1 worker | 24.0 s, 208/s | 4.7 s, 1,071/s | 13.0 s, 38/s | 860 s, 116 emails/s |
| 2 workers | 25.8 s (x0.93) | 4.2 s (x1.11) | 11.1 s (x1.17) | 545 s, 183 emails/s (x1.58) |
| 4 workers | 22.7 s (x1.06) | 4.5 s (x1.04) | 13.4 s (x0.97) | 592 s, 169 emails/s (x1.45) |

The run before that change (same day): collect 46.1 / 33.6 / 31.2 s, the 304 pass 16.0 / 11.4 /
15.4 s, crawl 14.8 / 9.6 / 10.3 s, deliver 976 / 519 / 508 s with 1 / 2 / 4 workers. The short
stages now end in 5-25 s, where the fixed parts (the daemon's two rounds, the news web in this
process, PostgreSQL, the workers' polls) weigh as much as the work, and they vary by 30-50% from
run to run on this machine (a stage-only run: collect 36.8 s with 1 worker, 23.5 s with 4).

CPU per email, all processes: 7.5 ms in-process, 9.6-11.0 ms with workers (the workers 8.3-9.5,
PostgreSQL 0.9, the sink 0.3-0.4). Before the MIME and ledger work of this round (the email
package's quoted-printable encoder, two commits a message), 41-47 emails/s at any worker count.

What limits the scaling: the two cores. One worker is one process on one core; two use both, and
four add only processes (deliver x1.88 with two, x1.92 with four). A message costs 8-9 ms of a
worker's CPU: building it (about 2.8 ms), aiosmtplib's line-ending and dot-stuffing passes over
90 KB and the socket copy (about 3 ms), one ledger commit, the Python around them. The hand-offs
cost too: each task is a few database round trips (defer, fetch, finish, its result), a worker's
poll after PostgreSQL's NOTIFY and the waiter's 0.25 s poll; collect is two rounds (sources, then
extraction). The pass of 304s is the shortest stage and the one the queue helps least: a feed
that did not change costs 3-4 ms of CPU (the conditional GET, reading and saving its state) and
its task's hand-offs as much again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import tomli_w  # noqa: E402

from bench.smtpsink import smtp_sink  # noqa: E402
from tests.conftest import serve_in_thread  # noqa: E402
from tests.newsweb import NewsWeb  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
CATEGORY = "technology"


def cpu_by_process() -> dict[int, tuple[int, str, float]]:
    """Every process's (parent, name, CPU seconds so far), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        out[int(entry)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def cpu_spent(
    before: dict[int, tuple[int, str, float]], roots: dict[str, set[int]]
) -> dict[str, float]:
    """CPU seconds since `before` by group: the processes descended from each group's roots,
    and "postgres" for the database's processes (those that ended meanwhile are not counted).
    The workers' children are counted apart: "parsers" (the lede and feed parser processes)
    and "browser" (Chromium's)."""
    after = cpu_by_process()
    spent = dict.fromkeys([*roots, "parsers", "browser", "postgres"], 0.0)

    def group(pid: int) -> str | None:
        seen = 0
        while pid > 1 and seen < 64:
            for name, pids in roots.items():
                if pid in pids:
                    return name
            pid, seen = after[pid][0] if pid in after else 0, seen + 1
        return None

    for pid, (_, name, cpu) in after.items():
        used = cpu - (before[pid][2] if pid in before else 0.0)
        where = "postgres" if name == "postgres" else group(pid)
        if where == "workers" and pid not in roots["workers"]:
            where = "browser" if "chrom" in name.lower() else "parsers"
        if where is not None:
            spent[where] += used
    return spent


@contextlib.contextmanager
def pg_schema() -> Iterator[str]:
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield f"{PG}?options=-csearch_path%3D{name}"
    finally:
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", autocommit=True) as c:
            c.execute(f'DROP SCHEMA "{name}" CASCADE')


def write_config(folder: Path, url: str, smtp_port: int, *, queue: bool) -> Path:
    from bench.email_bench import CATEGORIES

    config = {
        "database": {"url": url},
        "queue": {"enabled": queue, "stalled_after": 60.0},
        "sources": {"categories": CATEGORIES, "ddg": False, "feed_timeout": 30.0},
        "fetch": {"allowed_networks": ["127.0.0.1/32"], "max_connections": 64},
        "crawl": {"mode": "http", "respect_robots": False, "concurrency": 8},
        "email": {"transport": "smtp", "host": "127.0.0.1", "port": smtp_port, "security": "none"},
    }
    path = folder / "digest.toml"
    path.write_text(tomli_w.dumps(config))
    return path


def populate(url: str, web: NewsWeb, feeds: int, subscribers: int) -> None:
    """The feeds (in the database, as `digest feeds import` leaves them), the subscribers
    (bulk: one `add_subscriber` each would take longer than the benchmark) and the edition."""
    import secrets

    from sqlalchemy import insert

    from bench.email_bench import bench_edition
    from digest.models import SubscribedFeed
    from digest.store import open_store
    from digest.store.schema import subscribers as table

    now = datetime.now(UTC)
    with open_store(url) as store:
        store.add_subscribed_feeds(
            [
                SubscribedFeed(
                    web.url(f"/feeds/many/{n}.rss", site=n % SITES), CATEGORY, None, "opml", now
                )
                for n in range(feeds)
            ]
        )
        rows = [
            {
                "email": f"reader{i:06d}@example.org",
                "categories": None,
                "timezone": "UTC",
                "token": secrets.token_urlsafe(16),
                "created_at": now,
                "include_terms": [],
                "exclude_terms": [],
                "send_email": True,
            }
            for i in range(subscribers)
        ]
        with store.engine.begin() as conn:
            for i in range(0, len(rows), 5000):
                conn.execute(insert(table), rows[i : i + 5000])
        edition = bench_edition()
        store.save_edition(edition)


@contextlib.contextmanager
def workers(folder: Path, count: int, concurrency: int) -> Iterator[set[int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env["PYTHONPATH"] = str(ROOT)
    procs = []
    for i in range(count):
        with (folder / f"worker{i}.log").open("w") as log:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "digest", "worker", "--concurrency", str(concurrency)],
                    cwd=folder,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                )
            )
    try:
        yield {p.pid for p in procs}
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()


async def warm_up(queue: Any, workers: int) -> None:
    """Until every worker is live and has run a few tasks: a worker's first task pays for its
    imports (seconds on a busy machine), a one-off cost that is not the throughput measured."""
    from digest.jobs.deepen import StoryUnit
    from digest.queue import QueueRunner

    for _ in range(600):  # polling the workers table: no event tells when one registers
        if len(await queue.live_workers()) >= workers:
            break
        await asyncio.sleep(0.5)
    await QueueRunner(queue).run([StoryUnit(0) for _ in range(workers * 8)])


Stage = tuple[float, int, dict[str, float]]  # wall seconds, things done, CPU seconds by group


async def stages(
    config_path: Path, count_sent: Any, workers: int, roots: dict[str, set[int]], only: set[str]
) -> dict[str, Stage]:
    """Each stage's wall time, how many things it did and the CPU it took, by process group."""
    from digest.app import App
    from digest.config import load_config
    from digest.jobs.collect import collect
    from digest.jobs.deepen import StoryUnit
    from digest.jobs.sending import send_edition

    config = load_config(config_path)
    out: dict[str, Stage] = {}

    @contextlib.asynccontextmanager
    async def stage(name: str, done: Any) -> Any:
        started, cpu = time.perf_counter(), cpu_by_process()
        yield
        out[name] = (time.perf_counter() - started, done(), cpu_spent(cpu, roots))
        print(f"  {name}: {out[name][0]:.1f} s, {out[name][1]} done", flush=True)

    async with App(config) as app:
        store = await app.store()
        queue = await app.queue()
        if queue is not None:
            await warm_up(queue, workers)
        if "collect" in only:
            for name in ("collect", "collect (304s)"):
                reports: list[Any] = []
                async with stage(name, lambda r=reports: r[0].feeds):
                    reports.append(await collect(app))
                done = reports[0]
                ledes = sum(c.with_lede for c in done.categories)
                print(f"    {done.headlines} headlines, {ledes} with a lede", flush=True)
        if "crawl" in only:
            # Every worker's crawler and parsers started on stories of their own, out of the
            # time: the first crawl of a process pays for them (a second or more each).
            warm = await asyncio.to_thread(
                _one_story_per_article, store, 8 * max(workers, 1), STORIES
            )
            ids = await asyncio.to_thread(_one_story_per_article, store, STORIES)

            async def crawl_and_summarize(stories: list[tuple[int, Any]]) -> None:
                units = [StoryUnit(s, (page,)) for s, page in stories]
                # On the workers, or (no queue) every story's step in this process at once.
                await (await app.runner()).run(units)

            await crawl_and_summarize(warm)
            async with stage("crawl + summary", lambda: len(ids)):
                await crawl_and_summarize(ids)
            crawled, summarized = await asyncio.to_thread(_crawled_and_summarized, store, ids)
            print(f"    {crawled} crawled, {summarized} with a summary", flush=True)
        if "deliver" in only:
            day = (await asyncio.to_thread(store.edition_days))[0]
            edition = await asyncio.to_thread(store.edition, day)
            before = count_sent()
            async with stage("deliver", lambda: count_sent() - before):
                await send_edition(app, edition, now=datetime.now(UTC))
    return out


STORIES = 500
# The news web's hosts (one port each): real feeds link to many sites, and the fast pass and the
# crawler limit their connections per host, so that one host would measure those limits only.
SITES = 25


def _one_story_per_article(store: Any, limit: int, skip: int = 0) -> list[tuple[int, Any]]:
    """`limit` stored articles after the first `skip`, each made a story of its own (the news
    web's feeds tell ten stories, not 500): (story id, the page its unit reads)."""
    from sqlalchemy import select

    from digest.jobs.deepen import CrawlTarget
    from digest.store.schema import articles
    from digest.stories.plan import StoryPlan

    query = select(articles.c.id, articles.c.url, articles.c.title).order_by(articles.c.id)
    with store.engine.connect() as conn:
        rows = list(conn.execute(query.offset(skip).limit(limit)))
    now = datetime.now(UTC)
    plans = [
        StoryPlan(None, title, (id_,), 0, now, now, 1, 1, 1.0, False) for id_, _, title in rows
    ]
    created = store.save_stories(CATEGORY, plans, now=now, candidates=len(plans)).created
    return [(story, CrawlTarget(i, u)) for story, (i, u, _) in zip(created, rows, strict=True)]


def _crawled_and_summarized(store: Any, stories: list[tuple[int, Any]]) -> tuple[int, int]:
    """How many of the stories' articles were crawled, and how many stories have a summary:
    a run that did less than another is not faster."""
    from sqlalchemy import func, select

    from digest.store.schema import articles, story_summaries

    ids = [s for s, _ in stories]
    articles_ = [page.article for _, page in stories]
    with store.engine.connect() as conn:
        crawled = conn.scalar(
            select(func.count())
            .select_from(articles)
            .where(articles.c.id.in_(articles_), articles.c.crawl_status == "ok")
        )
        summarized = conn.scalar(
            select(func.count(func.distinct(story_summaries.c.story_id))).where(
                story_summaries.c.story_id.in_(ids)
            )
        )
    return crawled or 0, summarized or 0


def measure(
    n: int,
    web: NewsWeb,
    sink: tuple[int, Any, int],
    feeds: int,
    subscribers: int,
    args: Any,
    only: set[str],
) -> dict[str, Stage]:
    """One run of the stages: on a fresh database (a PostgreSQL schema, or SQLite when `n` is
    0, in-process) with `n` fresh workers."""
    port, count_sent, sink_pid = sink
    folder = Path(tempfile.mkdtemp(prefix="digest-scale-"))
    try:
        with contextlib.ExitStack() as stack:
            url = stack.enter_context(pg_schema()) if n else f"sqlite:///{folder / 'digest.db'}"
            path = write_config(folder, url, port, queue=bool(n))
            populate(url, web, feeds, subscribers)
            pids = stack.enter_context(workers(folder, n, args.concurrency)) if n else set()
            roots = {"this": {os.getpid()}, "workers": pids, "sink": {sink_pid}}
            return asyncio.run(stages(path, count_sent, n, roots, only))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def median_run(label: str, runs: list[dict[str, Stage]]) -> dict[str, Stage]:
    """Each stage's median run by wall time (what it did and its CPU with it), the others'
    times printed beside it: the machine is shared and noisy."""
    out = {}
    for name in runs[0]:
        ordered = sorted((run[name] for run in runs), key=lambda stage: stage[0])
        out[name] = ordered[(len(ordered) - 1) // 2]
        if len(runs) > 1:
            print(f"{label}, {name}: " + " / ".join(f"{s[0]:.1f} s" for s in ordered), flush=True)
    return out


NAMES = ["collect", "collect (304s)", "crawl + summary", "deliver"]
UNITS = {
    "collect": "feeds/s",
    "collect (304s)": "feeds/s",
    "crawl + summary": "stories/s",
    "deliver": "emails/s",
}


def main() -> None:
    global STORIES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--repeats", type=int, default=1, help="runs of each; the tables give each stage's median"
    )
    parser.add_argument(
        "--stages", default="collect,crawl,deliver", help="which of collect, crawl, deliver"
    )
    args = parser.parse_args()
    only = set(args.stages.split(","))
    feeds = max(1, round(5000 * args.scale)) if "collect" in only or "crawl" in only else 1
    STORIES = max(1, round(500 * args.scale))
    subscribers = max(1, round(100_000 * args.scale)) if "deliver" in only else 1
    counts = [int(n) for n in args.workers.split(",") if n]
    print(f"{feeds} feeds, {STORIES} stories, {subscribers} subscribers; workers {counts}")
    web_cm = contextlib.contextmanager(serve_in_thread)(NewsWeb(sites=SITES))
    with web_cm as web, smtp_sink() as (port, count_sent, sink_pid):
        runs = [(f"{n} worker(s)", n) for n in counts]
        if not args.no_sqlite:
            runs.insert(0, ("SQLite in-process", 0))
        repeats: dict[str, list[dict[str, Stage]]] = {}
        for attempt in range(args.repeats):  # interleaved, so that a noisy minute hits all runs
            for label, n in runs:
                print(f"{label} (run {attempt + 1} of {args.repeats})", flush=True)
                run = measure(n, web, (port, count_sent, sink_pid), feeds, subscribers, args, only)
                repeats.setdefault(label, []).append(run)
        results = {label: median_run(label, done) for label, done in repeats.items()}
    print()
    names = [n for n in NAMES if n in next(iter(results.values()), {})]
    base = results.get(f"{counts[0]} worker(s)") if counts else None
    print(f"| run | {' | '.join(names)} |")
    print("|---|" + "---|" * len(names))
    for label, stages_ in results.items():
        cells = []
        for name in names:
            took, done, _ = stages_[name]
            cell = f"{took:.1f} s, {done / took:.0f} {UNITS[name]}"
            if base is not None and label.endswith("worker(s)"):
                cell += f", ×{base[name][0] / took:.2f}"
            cells.append(cell)
        print(f"| {label} | {' | '.join(cells)} |")
    print()
    print("CPU seconds by process (this = the daemon's part; per thing done in ms)")
    columns = ("this", "workers", "parsers", "browser", "postgres", "sink")
    print(f"| run | stage | {' | '.join(columns)} | ms each |")
    print("|---|---|" + "---|" * (len(columns) + 1))
    for label, stages_ in results.items():
        for name in names:
            took, done, cpu = stages_[name]
            groups = [cpu.get(g, 0.0) for g in columns]
            each = sum(groups) / max(done, 1) * 1000
            cells = " | ".join(f"{c:.1f}" for c in groups)
            print(f"| {label} | {name} | {cells} | {each:.1f} |")


if __name__ == "__main__":
    main()

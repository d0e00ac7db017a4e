"""The front page benchmark through the real commands: `bench.front_page --via cli`.

    .venv/bin/python -m bench.front_page --dataset PATH.csv --via cli [--top 5] [--crawl http]

Per category and its busiest 24 h (as `bench.front_page` picks them), the rows are served as an
aggregator's search feed by a local aiohttp server, in two shapes: Google News' ("TITLE -
PUBLISHER", an opaque news.google.com link, the article's URL in the description's link,
`<source url>`) and Bing News' ("TITLE | PUBLISHER", bing.com's click counter with the article's
URL in its `url=`, `<News:Source>`). For each shape a fresh config (SQLite in a temporary folder,
the category with that one feed, `ddg = false`: no DuckDuckGo search) and the commands a user
runs, each a subprocess: `python -m digest --config digest.toml collect`, `deepen`, and
`stories --category C --json`, whose order is scored as `bench.front_page` scores the service's
top k (`Labels`, `judge`). Beside it, in the same run, the in-process path (`parse_feed`,
`cluster_category`, `top_stories` on a store) on the same feed bytes.

No packet leaves the machine. The collect's lede reader fetches every item's article URL (the
real publishers' URLs of the CSV) and deepen crawls the top stories' pages, so the commands and
the feed server run inside a fresh network namespace that holds only a loopback interface: the
bench re-executes its CLI part under `unshare --net` (`--map-root-user` when not root), which
checks that `lo` is its only interface before it brings `lo` up, starts the feed server on
127.0.0.1 and runs the commands. Every outside name then fails DNS at once (the resolver is
unreachable) and every outside address is "network unreachable". Without `unshare`, or where it
is refused, the bench stops and says so; it never runs the commands on the host's network.

The clock. The service has no setting for "now": collect stamps items with the wall clock,
deepen clusters the window up to the wall clock (`[stories] window_hours`, 48 by default) and
`stories` lists the stories seen since today's midnight. Rows of 2014 would all fall outside the
window. So each run shifts the day's rows in time, all by the same whole number of seconds, so
that its busiest 24 h end when the feed is first served: the same offsets to "now" as the
in-process path's `now = start + 24 h`, give or take the seconds collect takes before deepen
(a story's recency halves in 24 h: the scores move by a few thousandths of a percent, the order
by nothing). The feed's pubDates are the shifted ones; the config's time zone is UTC.

`--crawl http` (the default here) has deepen read pages with plain HTTP: with Chromium
(`--crawl browser`, the system's /usr/bin/chromium) deepen took 16-28 s a run instead of 1-1.5 s,
the browser's start and its 20 s page timeout on a failed navigation, for the same result (no
page read, the same stories); `--crawl auto` tries Playwright's own browser first.

What the commands print, on clustering-dev: collect "ok", every headline stored and none with
a lede (the store says why: "cannot resolve host" for each page tried, "recent failure" for
the rest of a host's pages once it failed thrice); deepen "failed · 5 stories · 0 pages read,
N failed", every page "cannot resolve host" (exit status 1, "nothing could be read"), its
clustering done before the crawl; stories --json the day's stories, each with `top` (one of the
category's top stories as the edition shows them): the scores are of those. A category's three
commands take 5-9 s (business, 1,117 headlines) and 3-4 s (health, 84); the whole run about
20 s on the 2-core machine, loaded.

Figures on clustering-dev, k = 5 (duplicates: of the 5 top slots):

    category   feed          in-process        CLI
                             nDCG@5  dup   nDCG@5  dup
    business   google-news   0.997    0    0.997    0
    business   bing-news     0.997    0    0.997    0
    health     google-news   1.000    0    1.000    0
    health     bing-news     1.000    0    1.000    0

The commands give the in-process order in every cell: the same 150 business and 23 health
stories from either shape, every article's source its row's publisher (1,116 of 1,117 in
business, 84 of 84 in health), no title keeping the publisher's suffix. Health has two
labelled stories; its top is those two (`top_stories` leaves out the fragments of 3-5
headlines that repeated them, three of five slots before).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from aiohttp import web  # noqa: E402

from bench.front_page import (  # noqa: E402
    DAY,
    Labels,
    Row,
    Score,
    busiest_day,
    describe_top,
    google_news_feed,
    google_news_link,
    judge,
    read_rows,
)
from digest.config import StoriesConfig  # noqa: E402
from digest.fetch.feed_parser import parse_feed  # noqa: E402
from digest.jobs.clustering import cluster_category, top_stories  # noqa: E402
from digest.models import ArticleView, Extract, Item, StoryView  # noqa: E402
from digest.store import open_store  # noqa: E402

SHAPES = ("google-news", "bing-news")
# How long one command may take before the bench gives up on it.
COMMAND_TIMEOUT = 1800.0


class NotIsolated(SystemExit):
    """The CLI part cannot run in a namespace with only loopback: the bench stops."""


# Feeds


def bing_news_link(row: Row) -> str:
    """bing.com's click counter, the article's URL in its `url=`, as Bing News links."""
    target = quote(row.url, safe="")
    return f"http://www.bing.com/news/apiclick.aspx?ref=FexRss&aid=&tid=T{row.id}&url={target}&c=1"


def bing_news_feed(category: str, rows: Sequence[Row]) -> bytes:
    """The rows as a Bing News search feed shows them: "TITLE | PUBLISHER", bing.com's click
    counter, the publisher in `<News:Source>` (the rows have no snippet: none is given)."""
    search = "https://www.bing.com:443/news/search?q=bench&amp;format=rss"
    entries = "".join(
        f"<item><title>{escape(f'{r.title} | {r.publisher}')}</title>"
        f"<link>{escape(bing_news_link(r))}</link>"
        f"<pubDate>{format_datetime(r.seen, usegmt=True)}</pubDate>"
        f"<News:Source>{escape(r.publisher)}</News:Source></item>"
        for r in rows
    )
    return (
        f'<?xml version="1.0" encoding="utf-8" ?><rss xmlns:News="{search}" version="2.0">'
        f"<channel><title>{escape(category)} - BingNews</title><link>{search}</link>"
        f"<description>Search results</description>{entries}</channel></rss>"
    ).encode()


FEEDS: dict[str, tuple[Callable[[str, Sequence[Row]], bytes], Callable[[Row], str]]] = {
    "google-news": (google_news_feed, google_news_link),
    "bing-news": (bing_news_feed, bing_news_link),
}


def shifted(rows: Sequence[Row], start: datetime, end: datetime) -> list[Row]:
    """The rows moved by whole seconds so that the 24 h from `start` end at `end`."""
    delta = timedelta(seconds=int((end - (start + DAY)).total_seconds()) + 1)
    return [replace(r, seen=r.seen + delta) for r in rows]


# The commands, inside the namespace


def config_text(folder: Path, category: str, feed_url: str, crawl: str) -> str:
    q = json.dumps  # a TOML basic string is a JSON string
    chromium = shutil.which("chromium") if crawl == "browser" else None
    browser = f"executable_path = {q(chromium)}\n" if chromium else ""
    return f"""\
[database]
url = {q(f"sqlite:///{folder / 'digest.db'}")}

[sources]
categories = [{q(category)}]
ddg = false
feeds = [{{ url = {q(feed_url)}, category = {q(category)} }}]

[fetch]
allowed_networks = ["127.0.0.1/32"]

[schedule]
timezone = "UTC"

[crawl]
mode = {q(crawl)}
{browser}
[archive]
dir = {q(str(folder / "site"))}

[email]
outbox_dir = {q(str(folder / "outbox"))}
"""


@dataclass(frozen=True, slots=True)
class Command:
    argv: list[str]
    status: int
    seconds: float
    stdout: str
    stderr: str

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": self.argv,
            "status": self.status,
            "seconds": self.seconds,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }


async def digest(config: Path, *args: str) -> Command:
    """`python -m digest --config CONFIG ARGS`, as a user runs it, with this worktree's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["COLUMNS"] = "1000"  # one line per failure, as the report reads them
    argv = [sys.executable, "-m", "digest", "--config", str(config), *args]
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=config.parent,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), COMMAND_TIMEOUT)
    return Command(
        ["digest", *args],
        process.returncode or 0,
        time.monotonic() - started,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
    )


async def run_commands(dataset: Path, crawl: str, only: Sequence[str]) -> dict[str, Any]:
    """Every category's day through collect, deepen and stories, once per feed shape, against
    a feed served on 127.0.0.1; what each command printed and how long it took."""
    served: dict[str, bytes] = {}

    async def feed(request: web.Request) -> web.Response:
        body = served.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(body=body, content_type="application/rss+xml", charset="utf-8")

    app = web.Application()
    app.router.add_get("/{tail:.*}", feed)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    results: dict[str, Any] = {}
    try:
        categories: dict[str, list[Row]] = {}
        for row in read_rows(dataset):
            categories.setdefault(row.category, []).append(row)
        for category in sorted(categories):
            if only and category not in only:
                continue
            start, day = busiest_day(categories[category])
            for shape in SHAPES:
                render, _ = FEEDS[shape]
                path = f"/{shape}/{category}.rss"
                served[path] = render(category, shifted(day, start, datetime.now(UTC)))
                with tempfile.TemporaryDirectory(prefix="front-page-cli-") as name:
                    folder = Path(name)
                    config = folder / "digest.toml"
                    config.write_text(
                        config_text(folder, category, f"http://127.0.0.1:{port}{path}", crawl),
                        encoding="utf-8",
                    )
                    commands = [
                        await digest(config, "collect"),
                        await digest(config, "deepen"),
                        await digest(config, "stories", "--category", category, "--json"),
                    ]
                    ledes = lede_reads(folder / "digest.db")
                results[f"{category}/{shape}"] = [c.to_json() for c in commands]
                results[f"{category}/{shape}/ledes"] = ledes
                print(
                    f"  {category}/{shape}: "
                    + ", ".join(
                        f"{c.argv[1]} {c.seconds:.1f} s (exit {c.status})" for c in commands
                    ),
                    file=sys.stderr,
                )
    finally:
        await runner.cleanup()
    return results


def lede_reads(database: Path) -> dict[str, int]:
    """How collect's lede reader fared, by status and error (hosts left out): collect prints
    only the ledes it found, so the bench reads the rest from the store."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        found = db.execute(
            "SELECT extract_status, coalesce(extract_error, ''), count(*) FROM articles"
            " GROUP BY 1, 2"
        ).fetchall()
    tally: Counter[str] = Counter()
    for status, error, n in found:
        reason = _HOST.sub(r"\1 HOST", error.partition(": ")[0])
        tally[" ".join(filter(None, (status, reason)))] += n
    return dict(tally.most_common())


def only_loopback() -> list[str]:
    """The network interfaces this process sees other than `lo` (none: it is isolated)."""
    return [name for _, name in socket.if_nameindex() if name != "lo"]


def inside(argv: Sequence[str]) -> int:
    """The CLI part, in the namespace: refuse anything but loopback, bring `lo` up, run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--crawl", default="http")
    parser.add_argument("--category", action="append", default=[])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(list(argv))
    others = only_loopback()
    if others:
        raise NotIsolated(
            "front_page --via cli: refusing to run the commands: this process sees network"
            f" interfaces besides loopback ({', '.join(others)}); it runs only inside"
            " `unshare --net`"
        )
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    results = asyncio.run(run_commands(args.dataset, args.crawl, args.category))
    args.out.write_text(json.dumps(results), encoding="utf-8")
    return 0


def namespace_command(argv: Sequence[str]) -> list[str]:
    """The command that runs `inside(argv)` in a fresh network namespace, or NotIsolated."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise NotIsolated(
            "front_page --via cli needs `unshare` (util-linux) to run the commands in a network"
            " namespace with only loopback: without it they would fetch the CSV's publisher URLs"
            " from the internet; not run"
        )
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return [unshare, "--net", *user, "--", sys.executable, "-m", "bench.front_page_cli", *argv]


def in_namespace(dataset: Path, crawl: str, only: Sequence[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        argv = ["--dataset", str(dataset.resolve()), "--crawl", crawl, "--out", str(out)]
        argv += [a for c in only for a in ("--category", c)]
        done = subprocess.run(namespace_command(argv), cwd=ROOT, check=False)
        if done.returncode != 0:
            raise NotIsolated(
                f"front_page --via cli: the commands' namespace ended with status"
                f" {done.returncode} (is `unshare --net` allowed here?); not run"
            )
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return result


# Scores, outside


def listed(story: dict[str, Any]) -> StoryView:
    """A story of `stories --json` as far as the scores look at it: its articles' URLs."""
    first = datetime.fromisoformat(story["first_seen"])
    articles = tuple(
        ArticleView(
            id=0,
            url=a["url"],
            title=a["title"],
            source=a["source"],
            outlet=a["outlet"],
            published=None,
            first_seen=first,
            lede="",
            origin="",
            has_text=False,
            text_hash=None,
            crawl_status=None,
            summary=None,
        )
        for a in story["articles"]
    )
    return StoryView(
        id=story["id"],
        category=story["category"],
        title=story["title"],
        first_seen=first,
        last_seen=datetime.fromisoformat(story["last_seen"]),
        updated=story["updated"],
        updated_at=None,
        article_count=len(articles),
        outlet_count=story["outlet_count"],
        score=0.0,
        articles=articles,
    )


def in_process(category: str, day: Sequence[Row], start: datetime, shape: str, k: int) -> Score:
    """The same feed through the in-process path: parse, store, cluster, rank at the day's end."""
    render, link = FEEDS[shape]
    parsed = parse_feed(
        render(category, day), feed_url=f"http://127.0.0.1/{shape}", category=category
    )
    end = start + DAY
    with (
        tempfile.TemporaryDirectory() as folder,
        open_store(f"sqlite:///{Path(folder) / 'digest.db'}") as store,
    ):
        store.upsert_items(
            [Item(headline=h, extract=Extract(url=h.url)) for h in parsed.headlines], seen_at=end
        )
        cluster_category(store, category, now=end, config=StoriesConfig())
        top = top_stories(store, category, since=end - DAY, limit=k)
    return judge(top, Labels(day, link), k)


def said(command: dict[str, Any]) -> list[str]:
    """What a command printed about its run: its report's first line, its failures counted by
    reason (hosts and URLs left out), its error line."""
    lines = [line.strip() for line in command["stdout"].splitlines() if line.strip()]
    reasons: Counter[str] = Counter()
    for line in lines:
        if line.startswith("failed "):
            reason = line.partition(": ")[2].partition(": http")[0]
            reasons[_HOST.sub(r"\1 HOST", reason)] += 1
    shown = [lines[0]] if lines else []
    shown += [f"{n} failed: {reason}" for reason, n in reasons.most_common()]
    shown += [line.strip() for line in command["stderr"].splitlines() if line.strip()][:2]
    return shown


_HOST = re.compile(r"(host)\s+\S+")


def attribution(order: Sequence[StoryView], labels: Labels) -> str:
    """Whether the stories show the publishers: each article's source against its row's
    publisher, and the titles that kept a " - Publisher" (or " | Publisher") suffix."""
    articles = [(a, rows) for s in order for a in s.articles if (rows := labels.rows_of_url[a.url])]
    right = sum(1 for a, rows in articles if a.source in {r.publisher for r in rows})
    suffixed = sum(
        1
        for a, rows in articles
        if any(a.title.endswith((f" - {r.publisher}", f" | {r.publisher}")) for r in rows)
    )
    return (
        f"sources that are the row's publisher: {right} of {len(articles)} articles;"
        f" titles with the publisher's suffix: {suffixed}"
    )


def main_cli(dataset: Path, k: int, crawl: str = "http", only: Sequence[str] = ()) -> int:
    """`bench.front_page --via cli`: the table of both paths and both shapes."""
    rows = read_rows(dataset)
    categories: dict[str, list[Row]] = {}
    for row in rows:
        categories.setdefault(row.category, []).append(row)
    names = [c for c in sorted(categories) if not only or c in only]
    print(f"{dataset}: {len(rows)} headlines; top {k}; crawl mode {crawl!r}")
    print("running collect, deepen, stories --json in a network namespace with only loopback:")
    sys.stdout.flush()
    started = time.monotonic()
    results = in_namespace(dataset, crawl, names)
    print(f"  ({time.monotonic() - started:.0f} s in all)")

    table: list[tuple[str, str, Score, Score]] = []
    for category in names:
        start, day = busiest_day(categories[category])
        for shape in SHAPES:
            collect, deepen, stories = results[f"{category}/{shape}"]
            ledes = results[f"{category}/{shape}/ledes"]
            labels = Labels(day, FEEDS[shape][1])
            print()
            print(f"{category}, {shape}: {len(day)} headlines, {len(labels.gain)} labelled stories")
            for c in (collect, deepen, stories):
                print(f"  {' '.join(c['argv'])}: {c['seconds']:.1f} s, exit {c['status']}")
                if c is not stories:
                    print("\n".join(f"      {line[:160]}" for line in said(c)))
                if c is collect:
                    print("\n".join(f"      ledes: {n} {what[:140]}" for what, n in ledes.items()))
            if stories["status"] != 0:
                print(f"  stories failed: {stories['stderr'].strip()[:300]}")
                continue
            # The category's top as the edition shows it (`top`), in the command's order.
            order = [listed(s) for s in json.loads(stories["stdout"]) if s.get("top")]
            cli = judge(order, labels, k)
            print(f"  {attribution(order, labels)}")
            table.append((category, shape, in_process(category, day, start, shape, k), cli))
            print(f"  {len(order)} stories; the CLI's top {k}:")
            describe_top(order[:k], labels)

    print()
    print(f"  {'category':<14} {'feed':<12} {'in-process':>16} {'CLI':>16}")
    print(f"  {'':<14} {'':<12} {f'nDCG@{k}':>8} {'dup':>7} {f'nDCG@{k}':>8} {'dup':>7}")
    for category, shape, mine, theirs in table:
        print(
            f"  {category:<14} {shape:<12} {mine.ndcg:>8.3f} {mine.duplicates:>7}"
            f" {theirs.ndcg:>8.3f} {theirs.duplicates:>7}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(inside(sys.argv[1:]))

"""Fast-path benchmark: our `FastExtractor` against the seed's method, on the local news web.

Run from the repository root:

    .venv/bin/python bench/fast_path.py [--repeat N] [--dataset PATH]

(a) a query-sized call: 6 URLs on 6 sites (4 answer in 20-80 ms, 1 in 250 ms, 1 hangs);
(b) a collect-sized pass: 48 URLs (6 categories x 8) on 8 sites, latencies 20-300 ms, 3 slow
    (450 ms), 3 hanging;
(c) with --dataset, `bench/lede_quality.py`'s `run(dataset_dir)` (lede quality on saved pages);
(d) with --busy, `digest collect` of one feed of 91 local article pages, quiet and then beside
    two busy CPU loops (processes that spin; `--loops N` for another number), in one run: ledes
    kept, wall and CPU of the command. With --baseline-code DIR (a checkout, e.g. main's), the
    same runs of that code's `digest` come first, for a before/after in one run.

Pages in (a) and (b) have their first article paragraph at realistic depths: drawn from the
distribution measured on 181 real news pages (12% within 20 KB, median 53 KB, p90 181 KB).

The news web runs in a child process so CPU time counts only the client: this process and the
parser processes it hands pages to.
Each pass uses a fresh extractor (no cache hits). Figures are medians over the repeats; "right
lede" means the text starts with the article's real opening. The baseline is the seed's method:
read the first 20 KB of each page, join its first 15 <p>, and a 1.5 s ceiling on the whole call
that drops every result when it is overrun. "seed*" is the same read and lede without the drop
(each page keeps its own result, 1.5 s each), to separate the two defects.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import importlib.util
import json
import multiprocessing as mp
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from html import unescape
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from digest.config import FetchConfig  # noqa: E402
from digest.fetch.client import HttpClient  # noqa: E402
from digest.fetch.fast import FastExtractor  # noqa: E402
from digest.fetch.parsers import ParserPool  # noqa: E402
from digest.runtime.subprocesses import process_cpu  # noqa: E402
from tests.newsweb import ARTICLES, NewsWeb, Route, render_article  # noqa: E402

SEED_READ_BYTES = 20 * 1024
SEED_PARAGRAPHS = 15
SEED_CEILING = 1.5
# Where the first article paragraph starts in real pages (KB) at these quantiles.
LEDE_DEPTH_QUANTILES = [
    (0.0, 6),
    (0.12, 20),
    (0.5, 53),
    (0.6, 64),
    (0.9, 181),
    (0.94, 256),
    (1.0, 400),
]


@dataclass(frozen=True)
class PageSpec:
    site: int
    path: str
    latency: float = 0.0
    hang: bool = False
    article: int | None = None  # index into ARTICLES when the page is an article
    script_bytes: int = 0


@dataclass
class Outcome:
    wall: float
    cpu: float
    ledes: int
    right: int
    pages: int


# -- the server, in a child process ----------------------------------------------------------------


def _serve(specs: list[PageSpec], sites: int, conn: Connection) -> None:
    async def main() -> None:
        routes = []
        for spec in specs:
            if spec.hang:
                routes.append(Route(spec.path, hang=True))
            elif spec.article is not None:
                html = render_article(ARTICLES[spec.article], script_bytes=spec.script_bytes)
                routes.append(Route(spec.path, html))
        async with NewsWeb(sites=sites, routes=routes) as web:
            for spec in specs:
                if spec.latency:
                    web.set_latency(spec.path, spec.latency, site=spec.site)
            conn.send([web.url("", site=i) for i in range(sites)])
            await asyncio.get_running_loop().run_in_executor(None, conn.recv)

    asyncio.run(main())


# -- the two methods -------------------------------------------------------------------------------


async def seed_method(
    session: aiohttp.ClientSession, urls: list[str], *, drop_all: bool = True
) -> list[str]:
    """The seed's fast path. With `drop_all=False`, each page keeps its own result (a kinder
    variant that isolates the effect of its 20 KB read and first-15-<p> lede)."""

    async def one(url: str) -> str:
        async with session.get(url) as resp:
            raw = await resp.content.read(SEED_READ_BYTES)
        tree = LexborHTMLParser(raw.decode("utf-8", "replace"))
        return " ".join(p.text(strip=True) for p in tree.css("p")[:SEED_PARAGRAPHS]).strip()

    async def kept(url: str) -> str:
        try:
            return await asyncio.wait_for(one(url), SEED_CEILING)
        except Exception:
            return ""

    if not drop_all:
        return list(await asyncio.gather(*(kept(u) for u in urls)))
    try:
        return await asyncio.wait_for(asyncio.gather(*(one(u) for u in urls)), SEED_CEILING)
    except Exception:
        return ["" for _ in urls]  # the seed returned nothing at all on overrun or error


def cpu_seconds(parsers: ParserPool | None) -> float:
    """CPU of this process, of the parser processes alive now (/proc) and of those that ended."""
    total = time.process_time()
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    total += ended.ru_utime + ended.ru_stime
    for worker in parsers._live if parsers is not None else ():
        total += process_cpu(worker.proc.pid) or 0.0
    return total


async def measure(
    run: Callable[[list[str]], Awaitable[list[str]]],
    urls: list[str],
    openings: list[str | None],
    parsers: ParserPool | None = None,
) -> Outcome:
    cpu0, wall0 = cpu_seconds(parsers), time.perf_counter()
    texts = await run(urls)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds(parsers) - cpu0
    ledes = sum(1 for t in texts if t)
    right = sum(1 for t, o in zip(texts, openings, strict=True) if o and t.startswith(o))
    return Outcome(wall, cpu, ledes, right, len(urls))


# -- the scenarios ---------------------------------------------------------------------------------


def _lede_depth(rng: random.Random) -> int:
    q = rng.random()
    xs = [p for p, _ in LEDE_DEPTH_QUANTILES]
    i = max(1, bisect.bisect_left(xs, q))
    (p0, k0), (p1, k1) = LEDE_DEPTH_QUANTILES[i - 1], LEDE_DEPTH_QUANTILES[i]
    kb = k0 + (k1 - k0) * (q - p0) / (p1 - p0)
    return int(kb * 1024)


def _article_spec(rng: random.Random, site: int, n: int, latency: float) -> PageSpec:
    index = rng.randrange(len(ARTICLES))
    # The lede sits ~3.3 KB after the scripts in our template (head, nav, cookie, newsletter).
    script = max(0, _lede_depth(rng) - 3300)
    return PageSpec(site, f"/p/{n}.html", latency, article=index, script_bytes=script)


def query_specs(rng: random.Random) -> list[PageSpec]:
    specs = [_article_spec(rng, i, i, rng.uniform(0.02, 0.08)) for i in range(4)]
    specs.append(_article_spec(rng, 4, 4, 0.25))
    specs.append(PageSpec(5, "/p/5.html", hang=True))
    return specs


def collect_specs(rng: random.Random) -> list[PageSpec]:
    specs = []
    hanging = set(rng.sample(range(48), 3))
    slow = set(rng.sample(sorted(set(range(48)) - hanging), 3))
    for n in range(48):
        site = n % 8
        if n in hanging:
            specs.append(PageSpec(site, f"/c/{n}.html", hang=True))
        else:
            latency = 0.45 if n in slow else rng.uniform(0.02, 0.3)
            specs.append(_article_spec(rng, site, n, latency))
            specs[-1] = PageSpec(**{**specs[-1].__dict__, "path": f"/c/{n}.html"})
    return specs


async def run_scenario(
    name: str, specs: list[PageSpec], bases: list[str], repeat: int, config: FetchConfig
) -> None:
    urls = [bases[s.site] + s.path for s in specs]
    openings = [
        unescape(ARTICLES[s.article].lede)[:60] if s.article is not None else None for s in specs
    ]
    ours: list[Outcome] = []
    seed: list[Outcome] = []
    kind: list[Outcome] = []
    async with (
        HttpClient(config) as http,
        ParserPool() as parsers,
        aiohttp.ClientSession() as session,
    ):
        for i in range(repeat):
            # Query strings keep runs apart (no connection or cache reuse between repeats).
            tagged = [f"{u}?r={i}" for u in urls]

            async def our_run(batch: list[str]) -> list[str]:
                results = await FastExtractor(http, config, parsers).extract(batch)
                return [r.full_content for r in results]

            async def seed_run(batch: list[str]) -> list[str]:
                return await seed_method(session, batch)

            async def kind_run(batch: list[str]) -> list[str]:
                return await seed_method(session, batch, drop_all=False)

            ours.append(await measure(our_run, tagged, openings, parsers))
            seed.append(await measure(seed_run, tagged, openings))
            kind.append(await measure(kind_run, [f"{u}&k" for u in tagged], openings))
    _report(name, len(urls), sum(o is not None for o in openings), ours, seed, kind)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _report(
    name: str,
    n: int,
    articles: int,
    ours: list[Outcome],
    seed: list[Outcome],
    kind: list[Outcome],
) -> None:
    def row(label: str, runs: list[Outcome]) -> tuple[float, float, float, float]:
        wall = _median([r.wall for r in runs])
        ledes = _median([r.ledes for r in runs])
        right = _median([r.right for r in runs])
        cpu_ms = _median([r.cpu / r.pages * 1000 for r in runs])
        worst = max(r.wall for r in runs)
        print(
            f"  {label:<9} wall {wall:6.3f} s (worst {worst:5.3f})  pages with a lede "
            f"{ledes:4.1f}/{n}  right lede {right:4.1f}/{articles}  CPU/page {cpu_ms:6.2f} ms"
        )
        return wall, ledes, right, cpu_ms

    print(f"\n{name}: {n} URLs, {articles} of them articles, {len(ours)} runs (medians)")
    o = row("ours", ours)
    s = row("seed", seed)
    k = row("seed*", kind)

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if b else ("n/a" if not a else "inf (seed 0)")

    for label, base in (("seed", s), ("seed*", k)):
        print(
            f"  ours/{label}: wall {ratio(o[0], base[0])}, pages with a lede "
            f"{ratio(o[1], base[1])}, right lede {ratio(o[2], base[2])}, "
            f"CPU/page {ratio(o[3], base[3])}"
        )


async def bench(
    bases_a: list[str],
    bases_b: list[str],
    specs_a: list[PageSpec],
    specs_b: list[PageSpec],
    repeat: int,
) -> None:
    config = FetchConfig(allowed_networks=["127.0.0.1/32"])
    await run_scenario("(a) query-sized call", specs_a, bases_a, repeat, config)
    await run_scenario("(b) collect-sized pass", specs_b, bases_b, repeat, config)


def _start_server(
    specs: list[PageSpec], sites: int
) -> tuple[mp.process.BaseProcess, Connection, list[str]]:
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(specs, sites, child), daemon=True)
    proc.start()
    bases = parent.recv()
    return proc, parent, bases


def run_lede_quality(dataset: str) -> None:
    path = Path(__file__).with_name("lede_quality.py")
    if not path.exists():
        print(f"\n(c) skipped: {path} does not exist")
        return
    spec = importlib.util.spec_from_file_location("bench_lede_quality", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it is executing
    spec.loader.exec_module(module)
    print(f"\n(c) lede quality on {dataset}")
    module.run(dataset)


BUSY_PAGES = 91


def collect_ledes(code: Path, work: Path) -> tuple[int, float, float]:
    """Article ledes kept (hostile pages left out), wall and CPU seconds (the command and its
    parsers) of `digest collect` run from the checkout `code`; `digest news` counts them."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "digest", "collect"], cwd=work, env=env, capture_output=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    news = subprocess.run(
        [sys.executable, "-m", "digest", "news", "technology", "--json", "--limit", "500"],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    items = json.loads(news.stdout or "[]")
    kept = sum(1 for n in items if "/hostile/" not in n["url"] and n.get("full_content"))
    return kept, wall, cpu


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def busy_section(repeat: int, baseline_code: str | None, busy: int = 2) -> None:
    from tests.conftest import serve_in_thread

    codes = [("baseline", Path(baseline_code))] if baseline_code else []
    codes.append(("ours", ROOT))
    for web in serve_in_thread(NewsWeb()):
        articles = [f"{ARTICLES[i % len(ARTICLES)].path}?copy={i}" for i in range(BUSY_PAGES)]
        hostile = [f"/hostile/{s}.html" for s in ("nested-div", "nested-list", "attributes")]
        feeds = {
            f"{BUSY_PAGES} articles": (articles, BUSY_PAGES),
            "3 hostile + 1": ([*hostile, ARTICLES[0].path], 1),
        }
        for paths, _expected in feeds.values():
            items = "".join(
                f"<item><title>Story {i}</title><link>{web.url(path)}</link></item>"
                for i, path in enumerate(paths)
            )
            feed = f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{items}'
            web.add(Route(f"/bench/{len(paths)}.rss", (feed + "</channel></rss>").encode()))
        feed_routes = {name: f"/bench/{len(paths)}.rss" for name, (paths, _) in feeds.items()}
        print(
            f"\n(d) digest collect of local pages, quiet and beside {busy} busy CPU loops (median)"
        )
        print(
            f"  {'feed':15} {'code':9} {'load':13} {'article ledes kept':>18} {'runs':>12} "
            f"{'wall':>6} {'CPU':>6}"
        )
        for name, (_paths, expected) in feeds.items():
            for label, code in codes:
                for load in (0, busy):
                    runs = []
                    for _ in range(repeat):
                        with tempfile.TemporaryDirectory() as tmp:
                            work = Path(tmp)
                            (work / "digest.toml").write_text(
                                '[sources]\ncategories = ["technology"]\nddg = false\n'
                                f'[[sources.feeds]]\nurl = "{web.url(feed_routes[name])}"\n'
                                'category = "technology"\n'
                                '[fetch]\nallowed_networks = ["127.0.0.1/32"]\n'
                            )
                            loops = busy_loops(load)
                            try:
                                runs.append(collect_ledes(code, work))
                            finally:
                                for loop in loops:
                                    loop.kill()
                                    loop.wait()
                    kept = statistics.median(r[0] for r in runs)
                    each = "/".join(str(r[0]) for r in runs)
                    print(
                        f"  {name:15} {label:9} {'quiet' if not load else f'{load} busy loops':13} "
                        f"{kept:>13.0f}/{expected:<4} {each:>12} "
                        f"{statistics.median(r[1] for r in runs):5.1f}s "
                        f"{statistics.median(r[2] for r in runs):5.1f}s"
                    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per scenario (default 5)")
    parser.add_argument("--dataset", help="saved pages for part (c), see bench/lede_quality.py")
    parser.add_argument("--seed", type=int, default=7, help="random seed for the page mix")
    parser.add_argument("--busy", action="store_true", help="only part (d): collect under load")
    parser.add_argument("--loops", type=int, default=2, help="for (d): busy CPU loops (default 2)")
    parser.add_argument("--baseline-code", help="for (d): a checkout whose digest runs first")
    args = parser.parse_args(argv)
    if args.busy:
        busy_section(args.repeat, args.baseline_code, args.loops)
        return

    rng = random.Random(args.seed)
    specs_a, specs_b = query_specs(rng), collect_specs(rng)
    servers = [_start_server(specs_a, 6), _start_server(specs_b, 8)]
    try:
        asyncio.run(bench(servers[0][2], servers[1][2], specs_a, specs_b, args.repeat))
    finally:
        for proc, conn, _ in servers:
            conn.send("stop")
            proc.join(timeout=5)
    if args.dataset:
        run_lede_quality(args.dataset)


if __name__ == "__main__":
    main()

"""Hostile pages: the quick path, `digest extract` and `digest collect` against pages built to
make parsers slow (the shapes of `tests.newsweb.HOSTILE_SHAPES`, about 1 MB each).

Run from the repository root:

    .venv/bin/python -m bench.hostile [--repeat 3] [--skip-baseline]

(a) per shape, `FastExtractor.extract([hostile page, normal article])` with the default budgets:
    wall time, the hostile page's status, whether the normal article kept its lede; beside it the
    baseline, the old quick path's cost: the lede finder parsing the raw page in the calling
    process (no bound, no child), timed in a child killed after 60 s;
(b) `digest extract` of 200,000 nested `<div>` and a normal article (the CLI, wall time);
(c) `digest collect` of one feed with three hostile links and one normal item: wall time, CPU of
    the command and its parser processes, and whether the normal item kept its lede.
Figures are medians over the repeats. The news web runs in a thread of this process; the CLI
commands run as subprocesses, so their CPU is measured apart from it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import FetchConfig  # noqa: E402
from digest.fetch.client import HttpClient  # noqa: E402
from digest.fetch.fast import FastExtractor  # noqa: E402
from digest.fetch.parsers import ParserPool  # noqa: E402
from tests.conftest import serve_in_thread  # noqa: E402
from tests.newsweb import ARTICLES, HOSTILE_SHAPES, NewsWeb, Route, hostile_page  # noqa: E402

NORMAL = ARTICLES[0]
BASELINE_LIMIT = 60.0


def _old_parse(shape: str, out: mp.connection.Connection) -> None:
    from selectolax.lexbor import LexborHTMLParser

    html = hostile_page(shape).decode()
    started = time.perf_counter()
    LexborHTMLParser(html)  # what find_lede did first, on the event loop, before this change
    out.send(time.perf_counter() - started)


def baseline(shape: str) -> float | None:
    """Seconds the old quick path spent parsing the page on its event loop (None: over 60 s)."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_old_parse, args=(shape, child), daemon=True)
    proc.start()
    try:
        return parent.recv() if parent.poll(BASELINE_LIMIT) else None
    finally:
        proc.kill()
        proc.join()


async def quick_path(web: NewsWeb, shape: str) -> tuple[float, str, bool]:
    config = FetchConfig(allowed_networks=["127.0.0.1/32"])
    async with HttpClient(config) as http, ParserPool() as parsers:
        extractor = FastExtractor(http, config, parsers)
        urls = [web.url(f"/hostile/{shape}.html"), web.url(NORMAL.path)]
        started = time.perf_counter()
        hostile, normal = await extractor.extract(urls)
        wall = time.perf_counter() - started
    return wall, hostile.status, normal.full_content.startswith(NORMAL.lede[:40])


def cli(args: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds (the command and every process it waited for) of `digest ARGS`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "digest", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()

    for web in serve_in_thread(NewsWeb()):
        print(f"(a) quick path, hostile page + normal article, median of {args.repeat}")
        print(
            f"  {'shape':18} {'ours wall':>9} {'hostile':>8} {'normal lede':>11} {'old parse':>10}"
        )
        for shape in HOSTILE_SHAPES:
            runs = [asyncio.run(quick_path(web, shape)) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            statuses = "/".join(sorted({r[1] for r in runs}))
            kept = sum(r[2] for r in runs)
            old = "skipped" if args.skip_baseline else baseline(shape)
            old_text = old if isinstance(old, str) else (f"{old:.2f} s" if old else "> 60 s")
            print(f"  {shape:18} {wall:8.2f}s {statuses:>8} {kept}/{len(runs):<9} {old_text:>10}")

        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "digest.toml").write_text('[fetch]\nallowed_networks = ["127.0.0.1/32"]\n')
            urls = [web.url("/hostile/nested-div.html"), web.url(NORMAL.path)]
            runs = [cli(["extract", *urls, "--json"], work) for _ in range(args.repeat)]
            out = json.loads(runs[-1][2].stdout)
            print("\n(b) digest extract of 200,000 nested <div> + a normal article")
            print(
                f"  wall {statistics.median(r[0] for r in runs):.2f} s (Python start included), "
                f"CPU {statistics.median(r[1] for r in runs):.2f} s; nested page "
                f"{out[0]['status']}, normal lede kept: "
                f"{out[1]['full_content'].startswith(NORMAL.lede[:40])}"
            )

        links = [f"/hostile/{s}.html" for s in ("nested-div", "nested-list", "attributes")]
        items = "".join(
            f"<item><title>Item {i}</title><link>{web.url(p)}</link></item>"
            for i, p in enumerate([*links, NORMAL.path])
        )
        feed = f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{items}'
        web.add(Route("/bench/hostile.rss", (feed + "</channel></rss>").encode()))
        walls, cpus, kept = [], [], 0
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                (work / "digest.toml").write_text(
                    f'[sources]\ncategories = ["technology"]\nddg = false\n'
                    f'[[sources.feeds]]\nurl = "{web.url("/bench/hostile.rss")}"\n'
                    f'category = "technology"\n[fetch]\nallowed_networks = ["127.0.0.1/32"]\n'
                )
                wall, cpu, _proc = cli(["collect"], work)
                walls.append(wall)
                cpus.append(cpu)
                news = json.loads(cli(["news", "technology", "--json"], work)[2].stdout)
                kept += any(
                    n["url"] == web.url(NORMAL.path)
                    and n["full_content"].startswith(NORMAL.lede[:40])
                    for n in news
                )
        print("\n(c) digest collect of a feed with three hostile links and one normal item")
        print(
            f"  wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s "
            f"(the command and its parsers), normal lede kept {kept}/{args.repeat}"
        )


if __name__ == "__main__":
    main()

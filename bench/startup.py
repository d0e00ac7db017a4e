"""Start-up benchmark: how long everyday commands take, most of it spent importing.

Run from the repository root:

    .venv/bin/python bench/startup.py [--repeat N] [--baseline-code DIR]

Each command runs as `python -m digest ...` in a temporary folder whose digest.toml has one
category, fed by a local RSS feed of articles published today (the local news web of
tests/newsweb.py, served from a thread of this process), and whose SQLite store the real
commands made: `subscribers add`, `collect` and `deepen` (extractive summaries, HTTP crawl).
`extract` reads one article page of that web. Beside them, in the same rounds: `python -c pass`
(the interpreter alone) and `digest --help` (the command line without any command's imports);
the ratio is a command's CPU time over that of `digest --help` of the same code. Figures are
medians of N rounds, after one round not counted (it writes the bytecode); CPU time is the
command's and its children's (the parser processes), from getrusage(RUSAGE_CHILDREN), so a
busy machine changes it less than wall time. With --baseline-code DIR (a checkout, e.g.
main's: `git archive HEAD | tar -x -C DIR`), that code's commands run too, in the same rounds
and the same kind of folder, for a before/after in one run.

Measured on the 2-core development machine, quiet (load average 0.8-1.0), --repeat 5, the code
of the end of issue 29 ("after") beside that of its start ("before", 42234a7:
`--baseline-code`), median wall and CPU seconds, ratio of CPU to `digest --help`'s:

    command            |  before wall    CPU ratio |   after wall    CPU ratio
    python -c pass     |        0.03s  0.03s   0.1 |        0.02s  0.02s   0.1
    digest --help      |        0.22s  0.22s   1.0 |        0.21s  0.21s   1.0
    subscribers list   |        0.73s  0.73s   3.4 |        0.33s  0.33s   1.6
    status             |        0.72s  0.72s   3.3 |        0.39s  0.39s   1.9
    search             |        0.76s  0.76s   3.5 |        0.36s  0.36s   1.7
    news               |        0.73s  0.72s   3.4 |        0.44s  0.43s   2.1
    stories            |        0.64s  0.64s   3.0 |        0.49s  0.49s   2.3
    extract URL        |        0.54s  0.60s   2.8 |        0.38s  0.43s   2.0
    query --local      |        0.58s  0.58s   2.7 |        0.39s  0.39s   1.9

An earlier run of the store's Core schema alone (7b82605), at load 5-6, gave:

    command            |  before wall    CPU ratio |   after wall    CPU ratio
    subscribers list   |        1.22s  0.69s   3.1 |        0.60s  0.44s   2.3
    status             |        0.87s  0.74s   3.3 |        0.56s  0.41s   2.2
    search             |        1.27s  0.73s   3.3 |        0.72s  0.41s   2.2

(A run a few minutes earlier, load 6-7, gave 0.33-0.47 s of CPU for the store commands, ratio
1.5-2.1, against 0.68-0.91 s before.) The first round of this work (40db945, against 5484629)
took `subscribers list` from 2.58 to 0.75 s of CPU by importing openai, numpy, scipy, aiohttp
and Alembic only where they are used. This one: the schema is SQLAlchemy Core tables, so no
command imports the ORM (0.08 s); the collector is off while a command starts and skips at
exit the objects start-up made (0.05-0.1 s); yarl only when URLs are checked (0.01 s).

What is left of a store command, measured in one process (CPU seconds, a busy machine):
pydantic 0.065 (of which 0.015 its plugin look-up, through importlib.metadata) and the
configuration's models 0.015, click 0.02, asyncio 0.03 (all four in `digest --help` too),
SQLAlchemy 0.12, the store's modules with the domain types and SQLAlchemy's SQLite dialect
0.055, rich 0.02, the interpreter 0.02; the command's own work 0.01-0.03 s. `extract` has
aiohttp and the parser processes instead of SQLAlchemy. Building the configuration's models
lazily (pydantic's defer_build) moves their 0.015-0.03 s from `--help`'s import to the loading
of the file, which every store command does: no gain there.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.conftest import serve_in_thread  # noqa: E402
from tests.newsweb import ARTICLES, NewsWeb, Route, render_rss  # noqa: E402

READER = "reader@example.org"
CATEGORY = "technology"
WORD = "river"  # in a technology headline of the local news web (the chip plant's)


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def config_text(feed: str) -> str:
    return (
        f'[sources]\ncategories = ["{CATEGORY}"]\nddg = false\n'
        f'[[sources.feeds]]\nurl = "{feed}"\ncategory = "{CATEGORY}"\n'
        '[fetch]\nallowed_networks = ["127.0.0.1/32"]\n'
        '[crawl]\nmode = "http"\nrespect_robots = false\n'
    )


def run(args: list[str], *, code: Path, work: Path, check: bool = True) -> Timing:
    """One command of the checkout `code`, in `work`: its wall and CPU seconds."""
    # As installed: the bytecode is written once and read after (PYTHONDONTWRITEBYTECODE would
    # compile every module of digest on every run).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DIGEST_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPATH"] = str(code)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def digest(*args: str) -> list[str]:
    return [sys.executable, "-m", "digest", *args]


def prepare(code: Path, work: Path, feed: str) -> None:
    """The small store every command reads: a subscriber, a day's headlines, its stories."""
    (work / "digest.toml").write_text(config_text(feed), encoding="utf-8")
    for args in (["subscribers", "add", READER], ["collect"], ["deepen"]):
        run(digest(*args), code=code, work=work)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (default 5)")
    parser.add_argument("--baseline-code", help="a checkout whose commands run too, first")
    args = parser.parse_args(argv)

    codes = [("before", Path(args.baseline_code).resolve())] if args.baseline_code else []
    codes.append(("after" if codes else "this code", ROOT))
    for web in serve_in_thread(NewsWeb()):
        page = web.url(next(a for a in ARTICLES if a.category == CATEGORY).path)
        now = datetime.now(UTC)
        today = [replace(a, published=now - timedelta(hours=i)) for i, a in enumerate(ARTICLES)]
        feed = web.add(Route("/bench/today.rss", render_rss(web.url(""), CATEGORY, today)))
        commands: dict[str, list[str]] = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "digest --help": digest("--help"),
            "subscribers list": digest("subscribers", "list"),
            "status": digest("status"),
            "search": digest("search", WORD),
            "news": digest("news", CATEGORY),
            "stories": digest("stories"),
            "extract URL": digest("extract", page),
            "query --local": digest("query", "--local", WORD),
        }
        with tempfile.TemporaryDirectory() as tmp:
            works = {}
            for label, code in codes:
                works[label] = Path(tmp) / label.replace(" ", "-")
                works[label].mkdir()
                prepare(code, works[label], web.url(feed.path))
            for command in commands.values():  # a round not counted: the bytecode is written
                for label, code in codes:
                    run(command, code=code, work=works[label])
            timings: dict[tuple[str, str], list[Timing]] = {}
            for _ in range(args.repeat):  # rounds, so that a busy spell touches every figure
                for name, command in commands.items():
                    for label, code in codes:
                        timing = run(command, code=code, work=works[label])
                        timings.setdefault((name, label), []).append(timing)
        print(f"median of {args.repeat} runs; ratio: CPU over digest --help's of the same code")
        header = f"{'command':18}"
        for label, _ in codes:
            header += f" | {label + ' wall':>12} {'CPU':>6} {'ratio':>5}"
        print(header)
        for name in commands:
            line = f"{name:18}"
            for label, _ in codes:
                runs = timings[(name, label)]
                wall = statistics.median(t.wall for t in runs)
                cpu = statistics.median(t.cpu for t in runs)
                helps = statistics.median(t.cpu for t in timings[("digest --help", label)])
                line += f" | {wall:11.2f}s {cpu:5.2f}s {cpu / helps:5.1f}"
            print(line)


if __name__ == "__main__":
    main()

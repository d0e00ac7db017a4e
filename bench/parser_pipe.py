"""Parser pipes: the lede parsers' stdin widened to 256 KB (`digest.fetch.parsers._widen_pipe`)
against the kernel's default 64 KB, on real pages over 64 KB, measured in the same run.

Run from the repository root (DATASET_DIR defaults to ../shared/data/extraction-dev):

    .venv/bin/python bench/parser_pipe.py [--repeats 9] [--pages 300] [DATASET_DIR]

Each run starts a pool of 2 lede parsers, hands it the pages 8 at a time (as a fast pass
does), and closes it; the runs of both kinds alternate. Printed: medians of the wall time, of
this process's CPU (the event loop writing the pages) and of the parsers' CPU, and the ratios.

Measured here, 2026-12-03 (9 repeats, 300 pages of 64 KB-1 MB, 58 MB in all), two runs: wall
1.369 / 1.370 s at 64 KB against 1.294 / 1.342 s widened (x1.06 / x1.02); CPU x1.03 in both
(this process 0.200-0.205 s against 0.166-0.171 s, the parsers 2.58-2.61 against 2.51-2.57 s).
A page larger than the pipe was written in several rounds, each waiting for the parser to read
the one before, with the event loop's callbacks between them.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import resource
import statistics
import time
from pathlib import Path

from digest.fetch import parsers

DEFAULT_DATASET = Path(__file__).resolve().parents[2] / "shared" / "data" / "extraction-dev"


def cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


async def one_run(pages: list[bytes], *, widen: bool) -> tuple[float, float, float]:
    """Wall time, this process's CPU and the parsers' CPU for one pool reading every page."""
    real = parsers._widen_pipe
    if not widen:
        parsers._widen_pipe = lambda stream: None  # type: ignore[assignment]
    try:
        pool = parsers.ParserPool(size=2, preload=("lede",))
        await pool.start(wait=True)
        before, started = cpu(), time.monotonic()
        at_once = asyncio.Semaphore(8)

        async def read(page: bytes) -> None:
            async with at_once:
                await pool.lede(page, None, 300, timeout=30.0)

        await asyncio.gather(*(read(p) for p in pages))
        wall = time.monotonic() - started
        await pool.close()  # the parsers' CPU counts once they are reaped
        after = cpu()
    finally:
        parsers._widen_pipe = real
    return wall, after[0] - before[0], after[1] - before[1]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--pages", type=int, default=300)
    args = ap.parse_args()
    files = sorted((args.dataset / "pages").iterdir())
    pages = [b for b in (gzip.decompress(f.read_bytes()) for f in files) if len(b) > 64 << 10]
    pages = pages[: args.pages]
    print(f"{len(pages)} pages over 64 KB, {sum(map(len, pages)) / 1e6:.1f} MB")
    runs: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
    for _ in range(args.repeats):
        for widen in (False, True):
            runs[widen].append(await one_run(pages, widen=widen))
    medians = {w: [statistics.median(r[i] for r in runs[w]) for i in range(3)] for w in runs}
    for widen, name in ((False, "pipe 64 KB"), (True, "pipe 256 KB")):
        wall, mine, theirs = medians[widen]
        print(f"{name}: wall {wall:.3f} s, this process {mine:.3f} s, parsers {theirs:.3f} s")
    (w0, m0, p0), (w1, m1, p1) = medians[False], medians[True]
    print(f"widened over default: wall x{w0 / w1:.2f}, CPU x{(m0 + p0) / (m1 + p1):.2f}")


if __name__ == "__main__":
    asyncio.run(main())

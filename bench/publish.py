"""Publish benchmark: the static archive from scratch and after one new edition; then emails.

Run from the repository root:

    .venv/bin/python bench/publish.py [--editions 200] [--stories 50] [--categories 5]
                                      [--out DIR] [--emails 1000] [--only archive|email]

(a) archive: `--editions` daily editions of `--stories` stories each (spread over `--categories`
    categories, 5 other headlines per category; text from tests/editions.py), written to an
    empty directory (from scratch); then the same editions again (nothing to do); then with
    one new edition (incremental: the index, the feeds and the new edition's pages); then
    `rerender=True` (every page rendered and compared, as a build without the per-edition
    fingerprints would do). Each line: wall time, pages written and rendered, pages/s.
    Rendering alone (no disk) is timed too, to split the from-scratch time into CPU and I/O.
(b) email: delegated to bench/email_bench.py when it exists. Hook: its module-level
    `run(count: int) -> None`, which builds and sends `--emails` messages to a local SMTP
    server and prints its own figures.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import ArchiveConfig  # noqa: E402
from digest.models import Edition  # noqa: E402
from digest.render import render_pages, write_archive  # noqa: E402
from digest.render.archive import ArchiveReport  # noqa: E402
from tests.editions import CATEGORIES, make_edition  # noqa: E402

EXTRA_CATEGORIES = ("health", "sports", "science", "culture")
FIRST_DAY = date(2026, 1, 1)


def build_editions(count: int, stories: int, categories: int) -> list[Edition]:
    names = (*CATEGORIES, *EXTRA_CATEGORIES)[:categories]
    per_category = max(1, stories // len(names))
    return [
        make_edition(
            FIRST_DAY + timedelta(days=i),
            categories=names,
            stories=per_category,
            headlines=5,
            first_id=1_000_000 + i * 1000,
        )
        for i in range(count)
    ]


def line(label: str, report: ArchiveReport, seconds: float) -> None:
    rate = report.rendered / seconds if seconds else 0.0
    print(
        f"  {label:<22} {seconds:8.2f} s  written {len(report.written):6d}  "
        f"rendered {report.rendered:6d}  unchanged {len(report.unchanged):6d}  "
        f"{rate:8.0f} pages/s"
    )


def archive_section(args: argparse.Namespace, editions: list[Edition], out: Path) -> None:
    config = ArchiveConfig(title="Benchmark digest")
    stories = sum(len(s.stories) for e in editions for s in e.sections)
    print(f"archive: {len(editions)} editions, {stories} stories -> {out}")

    started = time.perf_counter()
    rendered = sum(1 for _ in render_pages(editions, config))
    render_only = time.perf_counter() - started
    print(f"  {'render only (no disk)':<22} {render_only:8.2f} s  {rendered} pages  "
          f"{rendered / render_only:8.0f} pages/s")  # fmt: skip

    started = time.perf_counter()
    scratch = write_archive(editions, config, out)
    from_scratch = time.perf_counter() - started
    line("from scratch", scratch, from_scratch)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"  {'':<22} {len(scratch.written)} files, {size / 1e6:.1f} MB on disk")

    started = time.perf_counter()
    same = write_archive(editions, config, out)
    line("same editions again", same, time.perf_counter() - started)

    new = build_editions(len(editions) + 1, args.stories, args.categories)[-1]
    started = time.perf_counter()
    incremental = write_archive([*editions, new], config, out)
    incremental_time = time.perf_counter() - started
    line("one new edition", incremental, incremental_time)

    started = time.perf_counter()
    full = write_archive([*editions, new], config, out, rerender=True)
    line("rerender=True", full, time.perf_counter() - started)

    print(f"  incremental / from scratch: {incremental_time / from_scratch:.4f} "
          f"({from_scratch / incremental_time:.0f}x faster)")  # fmt: skip


def email_section(args: argparse.Namespace) -> None:
    bench_dir = Path(__file__).resolve().parent
    if not (bench_dir / "email_bench.py").is_file():
        print("email: skipped (bench/email_bench.py does not exist yet)")
        return
    # A plain import (not loaded from a path): its server runs in a spawned child process,
    # which must be able to import the module again by name.
    if str(bench_dir) not in sys.path:
        sys.path.insert(0, str(bench_dir))
    email_bench = importlib.import_module("email_bench")
    if not hasattr(email_bench, "run"):
        print("email: skipped (bench/email_bench.py has no run())")
        return
    email_bench.run(count=args.emails)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--editions", type=int, default=200)
    parser.add_argument("--stories", type=int, default=50, help="stories per edition")
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--out", type=Path, help="archive directory (default: a temporary one)")
    parser.add_argument("--emails", type=int, default=1000)
    parser.add_argument("--only", choices=("archive", "email"))
    args = parser.parse_args(list(argv) if argv is not None else None)

    editions = build_editions(args.editions, args.stories, args.categories)
    workdir = Path(tempfile.mkdtemp(prefix="digest-bench-"))
    try:
        if args.only in (None, "archive"):
            out = args.out or workdir / "site"
            if out.exists() and any(out.iterdir()):
                parser.error(f"{out} is not empty: the first build must start from scratch")
            archive_section(args, editions, out)
        if args.only in (None, "email"):
            email_section(args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

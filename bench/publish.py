"""Publish benchmark: the static archive from scratch and after one new edition; then emails.

Run from the repository root:

    .venv/bin/python bench/publish.py [--editions 200] [--stories 50] [--categories 5]
                                      [--out DIR] [--emails 1000] [--subscribers 1000]
                                      [--only archive|email|channels]

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
(c) channels: one edition (email_bench's: 6 categories, 5 stories and 12 headlines each) sent
    by `digest.jobs.sending.send_edition` itself to `--subscribers` subscribers with mixed channels
    and preferences: the email (to the outbox) for most, json:// webhooks for a third, ntfy://
    for some, a few with the email off; a fifth with keyword rules, some with a few stories a
    category or a language of their own. Webhooks go to local receivers (tests/receivers.py)
    in a child process, through Apprise, one request each. The ledger is the SQLite store's.
    Printed: wall time and messages per second of the whole send (building every reader's copy
    included), the peak memory it took (the process's resident set, Linux's VmHWM, reset just
    before), and a second send that finds nothing left to do.

    Measured here (2 cores shared with other work, so the spread is wide), 1,000 subscribers:
    1,440 rows (943 emails, 402 json://, 95 ntfy://), 1,159 sent and 281 skipped by rules, in
    9.9-17.2 s (67-118 messages/s, four runs), the send's peak 57 MB above the process's
    174 MB (215 MB before messages were built one at a time), the second send 0.03-0.06 s.
    For scale, bench/email_bench.py's 1,000 emails over SMTP with the in-memory ledger took
    13.5 s in the same minutes: the emails' building and the two ledger writes a message
    (SQLite, fsynced outbox files) are most of the time; Apprise's calls, 403 of them, about
    1.1 s of it (cProfile).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

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


def _receive(conn: Connection) -> None:
    """The webhook and ntfy receivers, in a child process (its CPU is not the sender's)."""
    from tests.conftest import serve_in_thread
    from tests.receivers import Receivers

    servers = serve_in_thread(Receivers())
    receivers = next(servers)
    conn.send(receivers.port)
    conn.recv()  # until the parent is done
    conn.send(len(receivers.received))
    with contextlib.suppress(StopIteration):
        next(servers)


def _peak_rss_reset() -> bool:
    """Reset the process's peak resident set (Linux: clear_refs); False where it cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def channels_section(args: argparse.Namespace) -> None:
    import asyncio
    import multiprocessing as mp

    from digest.app import App
    from digest.config import parse_config
    from digest.jobs.sending import send_edition
    from digest.store import open_store
    from digest.subscribers.preferences import Preferences

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from email_bench import CATEGORIES as BENCH_CATEGORIES
    from email_bench import bench_edition

    count = args.subscribers
    edition = bench_edition()
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_receive, args=(child,), daemon=True)
    proc.start()
    workdir = Path(tempfile.mkdtemp(prefix="digest-bench-channels-"))
    try:
        port = parent.recv()
        db = f"sqlite:///{workdir / 'digest.db'}"
        rng = random.Random(14)
        kinds: Counter[str] = Counter()
        with open_store(db) as store:
            store.save_edition(edition)
            for i in range(count):
                email = f"reader{i:05d}@example.com"
                store.add_subscriber(email, categories=None, timezone="Europe/Berlin")
                roll = rng.random()
                urls: list[str] = []
                send_email = True
                if roll < 0.33:
                    urls.append(f"json://127.0.0.1:{port}/hooks/r{i}")
                elif roll < 0.43:
                    urls.append(f"ntfy://127.0.0.1:{port}/r{i}")
                elif roll < 0.48:
                    urls.append(f"json://127.0.0.1:{port}/hooks/r{i}")
                    send_email = False
                prefs = Preferences(
                    categories=(
                        tuple(sorted(rng.sample(BENCH_CATEGORIES, rng.randint(2, 4))))
                        if rng.random() < 0.6
                        else None
                    ),
                    timezone="Europe/Berlin",
                    include=("market", "election", "storm") if rng.random() < 0.2 else (),
                    exclude=("football",) if rng.random() < 0.1 else (),
                    max_stories=rng.choice((None, None, 2, 3)),
                    language=rng.choice((None,) * 8 + ("fr", "de")),
                    send_email=send_email,
                    channels=tuple(urls),
                )
                store.save_preferences(email, prefs)
                kinds.update(["email"] if send_email else [])
                kinds.update(u.partition(":")[0] for u in urls)
        config = parse_config(
            {
                "database": {"url": db},
                "sources": {"categories": BENCH_CATEGORIES},
                "archive": {"base_url": "https://news.example.org/"},
                "email": {"outbox_dir": str(workdir / "outbox"), "from": "digest@example.org"},
            }
        )

        async def send() -> tuple[Any, float, Any, float, int]:
            async with App(config) as app:
                await app.store()
                reset = _peak_rss_reset()
                before = _rss_kb("VmRSS")
                t0 = time.perf_counter()
                report = await send_edition(app, edition, now=edition.generated_at)
                t1 = time.perf_counter()
                peak = _rss_kb("VmHWM") - before if reset else -1
                again = await send_edition(app, edition, now=edition.generated_at)
                t2 = time.perf_counter()
            return report, t1 - t0, again, t2 - t1, peak

        report, seconds, again, rerun, peak = asyncio.run(send())
        parent.send("done")
        received = parent.recv()
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)

    sent = len(report.sent)
    mix = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    print(f"channels: {count} subscribers, {sent + len(report.skipped)} messages ({mix})")
    print(
        f"  {'send_edition':<22} {seconds:8.2f} s  {sent:6d} sent  {len(report.skipped):4d} "
        f"skipped  {sent / seconds:8.0f} messages/s"
    )
    if peak >= 0:
        rss = _rss_kb("VmRSS") / 1024
        print(f"  {'peak memory':<22} {peak / 1024:8.1f} MB above the process's {rss:.0f} MB")
    else:
        print("  peak memory: not measurable here (no /proc/self/clear_refs)")
    print(f"  {'again (nothing to do)':<22} {rerun:8.2f} s  {len(again.sent):6d} sent")
    webhooks = sum(1 for d in report.sent if d.channel != "email")
    print(f"  receivers got {received} of the {webhooks} webhook and ntfy messages sent; failed "
          f"{len(report.failed)}, retrying {len(report.retrying)}")  # fmt: skip
    assert received == webhooks and not report.failed and not again.sent


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--editions", type=int, default=200)
    parser.add_argument("--stories", type=int, default=50, help="stories per edition")
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--out", type=Path, help="archive directory (default: a temporary one)")
    parser.add_argument("--emails", type=int, default=1000)
    parser.add_argument("--subscribers", type=int, default=1000, help="for the channels part")
    parser.add_argument("--only", choices=("archive", "email", "channels"))
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
        if args.only in (None, "channels"):
            channels_section(args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

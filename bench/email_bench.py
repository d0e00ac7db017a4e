"""Email benchmark: build and send 1,000 digests to a local SMTP server through the ledger.

Run from the repository root:

    .venv/bin/python bench/email_bench.py [--count N]

`run()` is the entry point `bench/publish.py` calls. The edition is full-size: 6 categories,
5 stories each (3-8 outlets) and 12 other headlines with ledes; subscribers pick all categories
or two to four of them. The SMTP server (aiosmtpd, tests/smtpserver.py) runs in a child process
so that its CPU time does not count against the sender. Sending goes through `deliver` with the
in-memory ledger and one reused SMTP connection, as `digest publish` does. A second `deliver`
over the same ledger shows the cost of finding nothing left to send.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import random
import statistics
import sys
import time
from datetime import timedelta
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import EmailConfig  # noqa: E402
from digest.deliver import (  # noqa: E402
    MemoryLedgerStore,
    Recipient,
    RetryPolicy,
    SmtpTransport,
    build_message,
    deliver,
)
from digest.models import Edition, EditionSection  # noqa: E402
from tests.mailfixtures import (  # noqa: E402
    ARCHIVE_URL,
    DAY,
    GENERATED,
    STORIES,
    _headline,
    _story,
)

CATEGORIES = ["technology", "finance", "entertainment", "sports", "world", "health"]
STORIES_PER_CATEGORY = 5
HEADLINES_PER_CATEGORY = 12


def bench_edition() -> Edition:
    pool = [item for items in STORIES.values() for item in items]
    sections = []
    story_id = 1
    for c, category in enumerate(CATEGORIES):
        stories = []
        for s in range(STORIES_PER_CATEGORY):
            title, brief = pool[(c + s) % len(pool)]
            stories.append(
                _story(story_id, category, f"{title} ({category} {s + 1})", brief, 3 + s)
            )
            story_id += 1
        headlines = tuple(_headline(n, category) for n in range(HEADLINES_PER_CATEGORY))
        sections.append(EditionSection(category, tuple(stories), headlines))
    return Edition(
        day=DAY, timezone="Europe/Berlin", sections=tuple(sections), generated_at=GENERATED
    )


def subscribers(count: int) -> list[Recipient]:
    rng = random.Random(4)
    people = []
    for i in range(count):
        if rng.random() < 0.4:
            categories = None
        else:
            categories = tuple(sorted(rng.sample(CATEGORIES, rng.randint(2, 4))))
        people.append(Recipient(f"reader{i:05d}@example.com", categories, "Europe/Berlin"))
    return people


def _serve(conn: Connection) -> None:
    from tests.smtpserver import SmtpServer

    with SmtpServer() as server:
        conn.send(server.port)
        conn.recv()  # until the parent is done
        conn.send(len(server.received))


def run(count: int = 1000) -> None:
    edition = bench_edition()
    people = subscribers(count)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    try:
        port = parent.recv()
        config = EmailConfig.model_validate(
            {
                "transport": "smtp",
                "from": "Digest <digest@news.example.org>",
                "host": "127.0.0.1",
                "port": port,
                "security": "none",
            }
        )

        started, cpu_started = time.perf_counter(), time.process_time()
        messages = {
            p.email: build_message(
                edition,
                p,
                config,
                archive_url=ARCHIVE_URL,
                unsubscribe_url=f"https://news.example.org/digest/unsubscribe?token={i:08x}",
            )
            for i, p in enumerate(people)
        }
        built, cpu_built = time.perf_counter(), time.process_time()
        sizes = [len(m.as_bytes()) for m in messages.values()]
        html_sizes = [
            len(m.get_body(("html",)).get_content().encode())  # type: ignore[union-attr]
            for m in messages.values()
        ]

        store = MemoryLedgerStore()
        policy = RetryPolicy.from_config(config)
        now = GENERATED + timedelta(minutes=1)

        async def send_all() -> tuple[float, float, float, int, int]:
            async with SmtpTransport(config) as transport:
                t0, c0 = time.perf_counter(), time.process_time()
                report = await deliver(store, DAY, messages, transport, now, policy=policy)
                t1, c1 = time.perf_counter(), time.process_time()
                again = await deliver(store, DAY, messages, transport, now, policy=policy)
                t2 = time.perf_counter()
            return t1 - t0, c1 - c0, t2 - t1, len(report.sent), len(again.sent)

        send_time, send_cpu, rerun_time, sent, resent = asyncio.run(send_all())
        parent.send("done")
        received = parent.recv()
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()

    build_time = built - started
    build_cpu = cpu_built - cpu_started
    total = build_time + send_time
    print(f"email: {count} digests, edition of {len(CATEGORIES)} categories")
    print(f"  {'':12} {'wall':>8} {'msg/s':>8} {'CPU':>8}")
    print(f"  {'build':12} {build_time:7.2f}s {count / build_time:8.0f} {build_cpu:7.2f}s")
    print(
        f"  {'send (SMTP)':12} {send_time:7.2f}s {count / send_time:8.0f} {send_cpu:7.2f}s"
        "  (ledger, one connection; server in a child process)"
    )
    print(f"  {'total':12} {total:7.2f}s {count / total:8.0f}")
    print(f"  {'re-run':12} {rerun_time * 1000:6.1f}ms  sent {resent}: nothing twice")
    print(
        f"  size: median {statistics.median(sizes) / 1024:.1f} KB per message; HTML part "
        f"median {statistics.median(html_sizes) / 1024:.1f} KB, max {max(html_sizes) / 1024:.1f} KB"
    )
    print(f"  server received {received}, ledger recorded {sent} sent")
    assert sent == received == count and resent == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    run(args.count)


if __name__ == "__main__":
    main()

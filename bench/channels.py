"""Channels benchmark: one slow subscriber's webhooks beside everyone else's.

Run from the repository root:

    .venv/bin/python bench/channels.py [--slow 10] [--normal 40] [--delay 9.5] [--baseline REF]

`--slow` subscribers added a json:// webhook on the preferences page that points at a server
answering after `--delay` seconds (under the 10 s channel timeout); `--normal` others point at
a server that answers at once (another port: another host to `deliver`). One `deliver` over the
in-memory ledger sends them all through Apprise, as `digest publish` does, and the wall time is
printed with what was sent and deferred; then the same on the code of `--baseline` (default
407e74a, the last commit before channels were sent in lanes: `git archive` into a temporary
folder, run in a child process). The review measured 3.5 s → 98 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = Path(os.environ.get("BENCH_CODE", ROOT))
for path in (ROOT, CODE):  # the code under test first, the tests' helpers from this checkout
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from aiohttp import web  # noqa: E402

from digest.deliver.channels import AppriseTransport  # noqa: E402
from digest.deliver.ledger import RetryPolicy  # noqa: E402
from digest.deliver.notification import build_notification  # noqa: E402
from digest.deliver.push_types import Channels  # noqa: E402
from digest.deliver.sender import MemoryLedgerStore, deliver  # noqa: E402
from digest.deliver.transport import OutboxTransport  # noqa: E402
from digest.models import Channel, channel_key  # noqa: E402
from tests.editions import make_edition  # noqa: E402

DAY = date(2026, 11, 29)


def serve(delay: float) -> int:
    """A webhook server in a thread that answers every POST after `delay` seconds; its port."""

    async def hook(request: web.Request) -> web.Response:
        await request.read()
        await asyncio.sleep(delay)
        return web.json_response({"ok": True})

    started = threading.Event()
    port: list[int] = []

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/hooks/{name}", hook)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        started.set()
        await asyncio.Event().wait()

    threading.Thread(target=asyncio.run, args=(main(),), daemon=True).start()
    started.wait(10)
    return port[0]


async def measure(slow: int, normal: int, delay: float) -> dict[str, float]:
    slow_port, fast_port = serve(delay), serve(0.0)
    edition = make_edition(DAY)
    urls = [(f"s{i}@x.org", f"json://127.0.0.1:{slow_port}/hooks/s{i}") for i in range(slow)]
    urls += [(f"n{i}@x.org", f"json://127.0.0.1:{fast_port}/hooks/n{i}") for i in range(normal)]
    messages = {}
    for recipient, url in urls:
        msg = build_notification(
            edition,
            recipient,
            Channel(url, channel_key(url)),
            archive_url="https://news.example.org/",
            preferences_url="https://news.example.org/preferences?token=t",
            title="digest",
            sender="digest@news.example.org",
        )
        messages[(recipient, msg.channel)] = msg
    with tempfile.TemporaryDirectory() as outbox:
        transport = Channels(OutboxTransport(outbox), AppriseTransport({}, timeout=10.0))
        started = time.perf_counter()
        report = await deliver(
            MemoryLedgerStore(),
            DAY,
            messages,
            transport,
            datetime(2026, 11, 29, 7, tzinfo=UTC),
            policy=RetryPolicy(max_attempts=6, backoff=60.0),
        )
        wall = time.perf_counter() - started
        await transport.aclose()
    normal_sent = sum(1 for d in report.sent if d.recipient.startswith("n"))
    return {
        "wall_s": round(wall, 2),
        "sent": len(report.sent),
        "normal_sent": normal_sent,
        "deferred": len(report.deferred),
        "failed": len(report.failed) + len(report.retrying),
    }


# The last commit before this checkout's lanes and slow-server deferral (issue 27).
BASELINE = "407e74a"


def baseline(args: argparse.Namespace) -> dict[str, float] | None:
    """The same measurement on the baseline's code, in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        # The baseline's own tests' helpers and templates too: this checkout's import names
        # the baseline's models never had, and the editable install's templates are this one's.
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline, "digest", "tests", "templates"],
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            return None
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        (Path(tmp) / "digest" / "templates").symlink_to("../templates")
        child = subprocess.run(
            [sys.executable, __file__, "--json", *_flags(args)],
            env={**os.environ, "BENCH_CODE": tmp},
            capture_output=True,
            text=True,
            check=False,
        )
        lines = child.stdout.strip().splitlines()
        if child.returncode != 0 or not lines:
            print(child.stderr.strip()[-2000:], file=sys.stderr)
            return None
        return json.loads(lines[-1])


def _flags(args: argparse.Namespace) -> list[str]:
    return ["--slow", str(args.slow), "--normal", str(args.normal), "--delay", str(args.delay)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=10)
    parser.add_argument("--normal", type=int, default=40)
    parser.add_argument("--delay", type=float, default=9.5)
    parser.add_argument("--json", action="store_true", help="one JSON line (the baseline run)")
    parser.add_argument("--baseline", default=BASELINE, help="git ref measured as the baseline")
    args = parser.parse_args()
    found = asyncio.run(measure(args.slow, args.normal, args.delay))
    if args.json:
        print(json.dumps(found))
        return
    print(f"{args.slow} webhooks answering after {args.delay:g} s, {args.normal} answering at once")
    print(f"  this checkout: {found}")
    before = baseline(args)
    print(f"  {args.baseline}: {before}" if before else "  baseline: could not be measured")
    if before:
        print(f"  wall time: {before['wall_s']} s -> {found['wall_s']} s")


if __name__ == "__main__":
    main()

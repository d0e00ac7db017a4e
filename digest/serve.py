"""`digest serve`: the archive on localhost for a preview, and the one-click unsubscribe endpoint.

The archive itself is static and needs no server; this exists so that a reader's unsubscribe
link (RFC 8058: GET shows a page, POST unsubscribes) has somewhere to go.

It may face the internet, so connections are bounded (`[serve]` in the config). aiohttp's only
limit is its keep-alive timeout, an hour by default, and not every aiohttp release in the range
digest allows applies it to a connection that never completes its first request: 50 clients
sending their headers a byte at a time held 50 connections for as long as they liked. Here
`keepalive_timeout` is `idle_timeout`, `_ConnectionGuard` gives each connection `header_timeout`
to get its first request in, and answers 503 beyond `max_connections`.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from digest.app import App
from digest.config import ServeConfig

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 5\r\n"
    b"Connection: close\r\n\r\n"
)


def make_app(app: App, archive_dir: Path, *, middlewares: tuple[Any, ...] = ()) -> web.Application:
    async def unsubscribe(request: web.Request) -> web.Response:
        token = request.query.get("token", "")
        store = await app.store()
        sub = await asyncio.to_thread(store.subscriber_by_token, token) if token else None
        if sub is None:
            return _page(404, "This unsubscribe link is not valid (or was already used).")
        if request.method == "POST":
            await asyncio.to_thread(store.remove_subscriber, sub.email)
            return _page(200, f"{sub.email} is unsubscribed. No more digests will be sent.")
        form = (
            f'<form method="post" action="?token={html.escape(token)}">'
            f"<p>Stop sending the digest to {html.escape(sub.email)}?</p>"
            '<button type="submit">Unsubscribe</button></form>'
        )
        return _page(200, form, raw=True)

    async def index(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("index.html")

    server = web.Application(middlewares=middlewares)
    server.router.add_route("GET", "/unsubscribe", unsubscribe)
    server.router.add_route("POST", "/unsubscribe", unsubscribe)
    server.router.add_get("/", index)
    server.router.add_static("/", archive_dir, show_index=False, follow_symlinks=False)
    return server


def _page(status: int, body: str, *, raw: bool = False) -> web.Response:
    content = body if raw else f"<p>{html.escape(body)}</p>"
    return web.Response(
        status=status,
        text=f"<!doctype html><meta charset=utf-8><title>digest</title>{content}",
        content_type="text/html",
    )


class _ConnectionGuard:
    """In front of aiohttp's protocol factory: each connection must get a whole request head in
    within `header_timeout` (after that, aiohttp's keep-alive timeout applies), and connections
    beyond `max_connections` (counted as each is accepted) get 503 and are closed."""

    def __init__(self, limits: ServeConfig) -> None:
        self._limits = limits
        self._waiting: set[web.RequestHandler] = set()  # connected, no request head yet

    def connection(self, server: web.Server) -> asyncio.BaseProtocol:
        if len(server.connections) >= self._limits.max_connections:
            return _Busy()
        handler = server()
        self._waiting.add(handler)
        asyncio.get_running_loop().call_later(self._limits.header_timeout, self._expire, handler)
        return handler

    def _expire(self, handler: web.RequestHandler) -> None:
        if handler in self._waiting:
            self._waiting.discard(handler)
            handler.force_close()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Runs once a request head is in: its connection is no longer on the clock."""
        self._waiting.discard(request.protocol)
        return await handler(request)


class _Busy(asyncio.Protocol):
    """What a connection over the limit gets: 503, then the connection closes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(BUSY)
        transport.close()


@contextlib.asynccontextmanager
async def running(app: App, *, host: str, port: int) -> AsyncIterator[Path]:
    """The server listening while the block runs (for `digest serve` and the daemon); yields the
    archive folder it serves."""
    archive_dir = app.config.resolve(app.config.archive.dir)
    archive_dir.mkdir(parents=True, exist_ok=True)
    limits = app.config.serve
    guard = _ConnectionGuard(limits)
    runner = web.AppRunner(
        make_app(app, archive_dir, middlewares=(guard.middleware,)),
        access_log=None,
        keepalive_timeout=limits.idle_timeout,
    )
    await runner.setup()
    assert runner.server is not None  # set up above
    listener: asyncio.Server | None = None
    try:
        loop = asyncio.get_running_loop()
        listener = await loop.create_server(
            partial(guard.connection, runner.server), host, port, reuse_address=True
        )
        yield archive_dir
    finally:
        if listener is not None:
            listener.close()
        await runner.cleanup()


async def serve(app: App, *, host: str, port: int, ready: asyncio.Event | None = None) -> None:
    async with running(app, host=host, port=port) as archive_dir:
        print(f"serving {archive_dir} on http://{host}:{port}/ (Ctrl+C stops)", flush=True)
        if ready:
            ready.set()
        await asyncio.Event().wait()

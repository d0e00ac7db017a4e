"""`digest serve`: the archive on localhost for a preview, and the one-click unsubscribe endpoint.

The archive itself is static and needs no server; this exists so that a reader's unsubscribe
link (RFC 8058: GET shows a page, POST unsubscribes) has somewhere to go.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from digest.app import App


def make_app(app: App, archive_dir: Path) -> web.Application:
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

    server = web.Application()
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


@contextlib.asynccontextmanager
async def running(app: App, *, host: str, port: int) -> AsyncIterator[Path]:
    """The server listening while the block runs (for `digest serve` and the daemon); yields the
    archive folder it serves."""
    archive_dir = app.config.resolve(app.config.archive.dir)
    archive_dir.mkdir(parents=True, exist_ok=True)
    runner = web.AppRunner(make_app(app, archive_dir), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        yield archive_dir
    finally:
        await runner.cleanup()


async def serve(app: App, *, host: str, port: int, ready: asyncio.Event | None = None) -> None:
    async with running(app, host=host, port=port) as archive_dir:
        print(f"serving {archive_dir} on http://{host}:{port}/ (Ctrl+C stops)", flush=True)
        if ready:
            ready.set()
        await asyncio.Event().wait()

"""`digest serve`: the archive on localhost for a preview, the one-click unsubscribe endpoint,
each subscriber's preferences page, following a story (/follow, /unfollow), /api/v1 and /mcp.

The archive itself is static and needs no server; this exists so that a reader's unsubscribe
link (RFC 8058: GET shows a page, POST unsubscribes) and preferences link have somewhere to go.
It may face the internet, so connections are bounded (`[serve]` in the config,
`connection_limits.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from digest.app import App
from digest.errors import ListenError
from digest.web import api, following, subscription
from digest.web.api import PREFIX
from digest.web.connection_limits import ConnectionGuard
from digest.web.forms import CsrfKey
from digest.web.keys import APP, CSRF


def make_app(
    app: App,
    archive_dir: Path,
    *,
    middlewares: tuple[Any, ...] = (),
    host: str | None = None,
) -> web.Application:
    """The server over `app`; `host`: the address it listens on (default `[serve] host`), which
    decides whether the API and /mcp want a token (an unusable one raises TokenError here)."""
    listening = app.config.serve.host if host is None else host
    server = web.Application(middlewares=(*middlewares, api.read_only))
    server[APP] = app
    server[CSRF] = CsrfKey()
    server[api.GATE] = api.gate(app, host=listening)
    mcp = app.config.serve.mcp
    if mcp:
        from digest.web.mcp_endpoint import mount_mcp  # the MCP SDK is a second's import

        mount_mcp(server, app, host=listening)
    server.add_routes(route_table(archive_dir, mcp=mcp))
    return server


def route_table(archive_dir: Path, *, mcp: bool) -> list[web.AbstractRouteDef]:
    """Every route of the server, in the order a request is matched: the reader's pages,
    /api/v1 (a path under it that is no endpoint last: a JSON 404), /mcp when on, then the
    archive's files."""
    table: list[web.AbstractRouteDef] = [
        web.get("/unsubscribe", subscription.unsubscribe, allow_head=False),
        web.post("/unsubscribe", subscription.unsubscribe),
        web.get("/preferences", subscription.preferences, allow_head=False),
        web.post("/preferences", subscription.preferences),
        web.get("/preferences.css", subscription.preferences_css, allow_head=False),
        web.get("/follow", following.follow, allow_head=False),
        web.post("/follow", following.follow),
        web.get("/unfollow", following.unfollow, allow_head=False),
        web.post("/unfollow", following.unfollow),
        web.get(f"{PREFIX}/openapi.json", api.openapi),
        web.get(f"{PREFIX}/editions", api.editions_list),
        web.get(PREFIX + "/editions/{day:[^/]*}", api.edition_one),  # empty too: 400
        web.get(f"{PREFIX}/stories", api.stories_list),
        web.get(PREFIX + "/stories/{story_id:[^/]*}", api.story_one),
        web.get(f"{PREFIX}/search", api.search),
        web.get(PREFIX + "/{tail:(?s:.*)}", api.no_endpoint),
    ]
    if mcp:
        from digest.web.mcp_endpoint import PATH, front

        table.append(web.route("*", PATH, front))
    table += [
        web.get("/", archive_index),
        web.static("/", archive_dir, show_index=False, follow_symlinks=False),
    ]
    return table


async def archive_index(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound("index.html")


@contextlib.asynccontextmanager
async def running(app: App, *, host: str, port: int) -> AsyncIterator[Path]:
    """The server listening while the block runs (for `digest serve` and the daemon); yields the
    archive folder it serves."""
    archive_dir = app.config.resolve(app.config.archive.dir)
    archive_dir.mkdir(parents=True, exist_ok=True)
    limits = app.config.serve
    guard = ConnectionGuard(limits)
    runner = web.AppRunner(
        make_app(app, archive_dir, middlewares=(guard.middleware,), host=host),
        access_log=None,
        keepalive_timeout=limits.idle_timeout,
    )
    await runner.setup()
    assert runner.server is not None  # set up above
    listener: asyncio.Server | None = None
    try:
        loop = asyncio.get_running_loop()
        try:
            listener = await loop.create_server(
                partial(guard.connection, runner.server), host, port, reuse_address=True
            )
        except OSError as err:
            raise ListenError(f"cannot listen on {host}:{port}: {why_not_listening(err)}") from err
        yield archive_dir
    finally:
        if listener is not None:
            listener.close()
        await runner.cleanup()


def why_not_listening(err: OSError) -> str:
    """Why a server cannot listen, in words; a port in use is by far the usual reason."""
    if err.errno == errno.EADDRINUSE:
        return (
            "the address is in use (another digest serve or daemon?): choose another with "
            "--port or serve.port"
        )
    if err.errno == errno.EADDRNOTAVAIL:
        return "that address is not one of this machine's"
    if err.errno == errno.EACCES:
        return "permission denied (ports below 1024 need privileges)"
    return err.strerror or str(err)


async def serve(app: App, *, host: str, port: int, ready: asyncio.Event | None = None) -> None:
    async with running(app, host=host, port=port) as archive_dir:
        print(f"serving {archive_dir} on http://{host}:{port}/ (Ctrl+C stops)", flush=True)
        if ready:
            ready.set()
        await asyncio.Event().wait()

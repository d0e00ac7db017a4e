"""An ASGI app inside digest's aiohttp server: aiohttp-asgi's bridge, with its receive made right.

aiohttp-asgi (0.7) answers `receive()` after the end of a body with another empty `http.request`,
at once and forever, and never with `http.disconnect`. An app that waits for its client to leave
(sse-starlette does, behind the MCP SDK's GET stream) then calls `receive` in a loop that never
yields to the event loop: one `GET /mcp` held and closed froze `digest serve` and the daemon for
good (no request answered, no step run, SIGTERM ignored). Here the body comes out in order, and
then the next `receive` waits until the client has gone or the answer is complete, and says
`http.disconnect` (ASGI's rule); it never says `http.request` again.

aiohttp tells a handler that its client left only by cancelling it (`handler_cancellation`, off
in digest: a write to the store should not stop halfway), so the wait looks at the connection
every half second: a check per open request, nothing while none waits.

A body that cannot be read (it did not arrive within `[serve] body_timeout`, say) is the
server's to answer, not the app's: the error goes on to aiohttp (the server's 408) and whatever
the app answers to it is dropped, as a client gone would never read it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import StreamReader, web
from aiohttp_asgi.resource import ASGIContext

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

# How often a receive waiting for the client to leave looks at its connection (seconds).
GONE_CHECK = 0.5


class BodyReceive:
    """The ASGI `receive` of one HTTP request: `http.request` messages with the body's chunks in
    order (`more_body` true until the last), then `http.disconnect` once `over()` returns (the
    client has gone, or the answer is complete). A call in between waits for that."""

    def __init__(self, body: StreamReader, over: Callable[[], Awaitable[None]]) -> None:
        self._body = body
        self._over = over
        self._body_done = False
        self._gone = False
        self.failure: BaseException | None = None  # why the body could not be read

    async def __call__(self) -> Message:
        if not self._body_done:
            return await self._next_chunk()
        if not self._gone:
            await self._over()
            self._gone = True
        return {"type": "http.disconnect"}

    async def _next_chunk(self) -> Message:
        try:
            chunk, _ = await self._body.readchunk()
        except Exception as err:
            self.failure = err
            raise
        self._body_done = self._body.at_eof()
        return {"type": "http.request", "body": chunk, "more_body": not self._body_done}


class _Exchange(ASGIContext):
    """aiohttp-asgi's bridge for one HTTP request, with `BodyReceive` as its receive and a send
    that knows when the answer is complete."""

    def __init__(self, app: ASGIApp, request: web.Request, root_path: str) -> None:
        super().__init__(app, request, root_path)
        self._answered = asyncio.Event()
        self.receive = BodyReceive(request.content, self._over)

    async def _over(self) -> None:
        """Until the answer is complete or the client has gone."""
        while not self._answered.is_set() and not _gone(self.request):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), GONE_CHECK)

    def is_websocket(self) -> bool:
        return False  # HTTP only: a POST that asks to upgrade is a POST (its scope "http")

    async def on_receive(self) -> dict[str, Any]:
        return dict(await self.receive())

    async def on_send(self, payload: dict[str, Any]) -> None:
        if self.receive.failure is not None:
            return  # the server answers a body it could not read (see the module's docstring)
        await super().on_send(payload)
        if payload["type"] == "http.response.body" and not payload.get("more_body", False):
            self._answered.set()


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def answer(app: ASGIApp, request: web.Request, *, root_path: str) -> web.StreamResponse:
    """`app`'s answer to an HTTP `request` (not a WebSocket), whose Host header parses
    (aiohttp-asgi builds the scope's `server` from it). A body that could not be read raises
    its error here."""
    exchange = _Exchange(app, request, root_path)
    try:
        response = await exchange.get_response()
    except Exception:
        if exchange.receive.failure is not None:
            raise exchange.receive.failure from None
        raise
    if exchange.receive.failure is not None:
        raise exchange.receive.failure
    return response

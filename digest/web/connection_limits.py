"""The connection limits of the server, which may face the internet (`[serve]` in the config).

aiohttp's only limit is its keep-alive timeout, an hour by default, and not every aiohttp release
in the range digest allows applies it to a connection that never completes its first request: 50
clients sending their headers a byte at a time held 50 connections for as long as they liked.
Here `keepalive_timeout` is `idle_timeout`, `ConnectionGuard` gives each connection
`header_timeout` to get its first request in, and answers 503 beyond `max_connections`.

A body has no limit of its own in aiohttp either: 100 connections trickling a form a byte every
5 s held every slot, and new readers (the archive, unsubscribe links) got 503. So a body still on
its way when its head is in gets `body_timeout` to arrive in full, whoever reads it (the form, or
nobody: the rest of a body a handler leaves is read and dropped within the same time), else 408
and the connection closes; and at most half of `max_connections` may be receiving one at once
(more get 503 at once), so slow senders never take the slots of readers. A body that comes
when those are taken is waited for a moment (a whole form sent in a second write), a tenth of
`max_connections` at a time and not counted against it: senders reconnecting every second once
held every slot for that moment, turning away 6 to 8 of 40 new readers. The size cap is aiohttp's
`client_max_size` (1 MiB), as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import StreamReader, web

from digest.config import ServeConfig
from digest.web.forms import page

# How long a body may take to follow its head when every slot for bodies is taken.
_BODY_GRACE = 0.25

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 5\r\n"
    b"Connection: close\r\n\r\n"
)


class _BodyLate(Exception):
    """A request's body did not arrive in full within `body_timeout` (set on its stream, so
    whoever waits for the body gets it)."""


class ConnectionGuard:
    """In front of aiohttp's protocol factory: each connection must get a whole request head in
    within `header_timeout` (after that, aiohttp's keep-alive timeout applies), and connections
    beyond `max_connections` (counted as each is accepted) get 503 and are closed. Behind it
    (`middleware`), a body has `body_timeout` to arrive in full, half the connections at most
    receiving one at a time."""

    def __init__(self, limits: ServeConfig) -> None:
        self._limits = limits
        self._waiting: set[web.RequestHandler] = set()  # connected, no request head yet
        self._receiving = 0  # requests whose body is still on its way
        self._body_slots = max(1, limits.max_connections // 2)
        self._in_grace = 0  # requests waited for a moment though every slot for bodies is taken
        self._grace_slots = max(1, limits.max_connections // 10)

    def connection(self, server: web.Server) -> asyncio.BaseProtocol:
        if len(server.connections) - self._in_grace >= self._limits.max_connections:
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
        """Runs once a request head is in: its connection is no longer on the clock for the
        head, and a body still on its way is (see the module's docstring)."""
        self._waiting.discard(request.protocol)
        body = request.content
        if body.is_eof():  # no body, or all of it came with the head
            return await handler(request)
        if self._receiving >= self._body_slots and not await self._arrives_soon(body):
            return await _answer_and_close(request, _busy_page())
        self._receiving += 1
        late = asyncio.get_running_loop().call_later(
            self._limits.body_timeout, body.set_exception, _BodyLate()
        )
        counted = True

        def arrived() -> None:  # the whole body is in, or the request is over
            nonlocal counted
            late.cancel()
            if counted:
                counted = False
                self._receiving -= 1

        body.on_eof(arrived)
        try:
            try:
                response: web.StreamResponse = await handler(request)
            except web.HTTPException:  # a raised answer (a redirect, 405) is an answer too
                await _drained(body)
                raise
            await _drained(body)
            return response
        except _BodyLate:
            return await _answer_and_close(request, _late_page())
        finally:
            arrived()

    async def _arrives_soon(self, body: StreamReader) -> bool:
        """`_arrives_soon(body)`, waited for by a tenth of `max_connections` at a time (the
        others are told no at once); those waiting are not counted against `max_connections`."""
        if body.is_eof():
            return True
        if self._in_grace >= self._grace_slots:
            return False
        self._in_grace += 1
        try:
            return await _arrives_soon(body)
        finally:
            self._in_grace -= 1


async def _arrives_soon(body: StreamReader) -> bool:
    """Whether a body arrives in full within a moment: many clients (Python's own among them)
    send a small form in a write of its own just after the head, and such a form needs no
    slot for bodies on their way."""
    if body.is_eof():
        return True
    arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done() -> None:
        if not arrived.done():
            arrived.set_result(None)

    body.on_eof(done)
    try:
        await asyncio.wait_for(arrived, _BODY_GRACE)
    except TimeoutError:
        return body.is_eof()
    return True


async def _drained(body: StreamReader) -> None:
    """Read and drop what a handler left of a body: within the body's deadline, where aiohttp
    would linger over it for up to 10 s after answering."""
    while not body.is_eof():
        await body.readany()


def _busy_page() -> web.Response:
    response = page(503, "The server is busy. Try again in a few seconds.")
    response.headers["Retry-After"] = "5"
    return response


def _late_page() -> web.Response:
    return page(408, "The request did not arrive in time. Try again.")


async def _answer_and_close(request: web.Request, response: web.Response) -> web.Response:
    """Send `response`, then close the connection at once: aiohttp would otherwise go on reading
    (and dropping) the rest of the body for its lingering time, holding the slot."""
    response.force_close()
    await response.prepare(request)
    await response.write_eof()
    request.protocol.force_close()
    return response


class _Busy(asyncio.Protocol):
    """What a connection over the limit gets: 503, then the connection closes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(BUSY)
        transport.close()

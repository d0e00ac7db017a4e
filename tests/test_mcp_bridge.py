"""The ASGI bridge inside the aiohttp server (`digest.mcp.bridge`): a body comes out in order,
then one `http.disconnect` once the client has left, never a stream of empty requests; an app
that waits for its client to leave (sse-starlette's event stream) cannot freeze the server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import StreamReader, web
from aiohttp.base_protocol import BaseProtocol
from aiohttp.test_utils import TestServer
from hypothesis import given, settings
from hypothesis import strategies as st
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request

from digest.mcp.bridge import BodyReceive, answer
from tests.conftest import serve_in_thread

# Let the event loop run this many times round: a receive that answered at once is done by then.
TURNS = 20


@settings(max_examples=200, deadline=None)
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=64), max_size=8),
    eof_apart=st.booleans(),
    calls_after=st.integers(min_value=1, max_value=4),
)
def test_the_body_comes_out_in_order_then_one_disconnect_once_the_client_left(
    chunks: list[bytes], eof_apart: bool, calls_after: int
) -> None:
    """Whatever the chunking of the body (and whether its end comes with the last chunk or after
    it), the app reads it in order with `more_body` true until the last message, and a receive
    after the body waits until the client leaves, then says `http.disconnect`."""

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        connection = BaseProtocol(loop)
        connection.transport = asyncio.Transport()  # open (its flow control a no-op)
        body = StreamReader(connection, 2**16, loop=loop)
        left = asyncio.Event()
        receive = BodyReceive(body, left.wait)

        async def arrive() -> None:  # the body as a client sends it, a chunk per turn
            for chunk in chunks:
                body.feed_data(chunk)
                await asyncio.sleep(0)
            if eof_apart:
                await asyncio.sleep(0)
            body.feed_eof()

        sending = asyncio.create_task(arrive())
        messages = []
        while not messages or messages[-1]["more_body"]:
            messages.append(await receive())
        await sending
        assert {m["type"] for m in messages} == {"http.request"}
        assert b"".join(m["body"] for m in messages) == b"".join(chunks)
        assert [m["more_body"] for m in messages] == [True] * (len(messages) - 1) + [False]

        after = [asyncio.create_task(receive()) for _ in range(calls_after)]
        for _ in range(TURNS):
            await asyncio.sleep(0)
        assert not any(call.done() for call in after)  # the client is still there: they wait
        left.set()
        assert await asyncio.gather(*after) == [{"type": "http.disconnect"}] * calls_after
        assert await receive() == {"type": "http.disconnect"}

    asyncio.run(scenario())


class _EventStreamServer:
    """An aiohttp server with an sse-starlette event stream mounted through the bridge at
    /events (the app notes when it saw its client leave), and a plain page at /page."""

    def __init__(self) -> None:
        self.left = asyncio.Event()  # on the server's loop

    async def events(self, scope: Any, receive: Any, send: Any) -> None:
        async def ticks() -> AsyncIterator[dict[str, str]]:
            try:
                while True:
                    yield {"data": "tick"}
                    await asyncio.sleep(0.2)
            finally:
                self.left.set()

        await EventSourceResponse(ticks())(scope, receive, send)

    async def __aenter__(self) -> _EventStreamServer:
        async def mounted(request: web.Request) -> web.StreamResponse:
            return await answer(self.events, request, root_path="")

        async def page(request: web.Request) -> web.Response:
            return web.Response(text="the archive")

        server = web.Application()
        server.router.add_get("/events", mounted)
        server.router.add_get("/page", page)
        self.server = TestServer(server, host="127.0.0.1")
        await self.server.start_server()
        self.url = f"http://127.0.0.1:{self.server.port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.close()


@pytest.fixture
def event_stream_server() -> Iterator[_EventStreamServer]:
    """On its own loop in a thread: a server the stream froze cannot freeze the test too."""
    yield from serve_in_thread(_EventStreamServer())


async def test_an_event_stream_whose_client_left_ends_and_the_server_answers_on(
    event_stream_server: _EventStreamServer,
) -> None:
    served = event_stream_server
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        async with http.get(served.url + "/events") as stream:
            assert stream.status == 200
            assert b"tick" in await stream.content.readline()
            await asyncio.sleep(1)  # held a moment, then closed by the client
        answered = []
        for _ in range(5):
            async with http.get(served.url + "/page") as page:
                answered.append((page.status, await page.text()))
    assert answered == [(200, "the archive")] * 5
    assert served.left.is_set()  # the stream saw its client leave and ended


def test_the_app_sees_its_request_as_starlette_reads_it() -> None:
    """A POST's body through the bridge, as an ASGI framework reads it."""

    async def echo(scope: Any, receive: Any, send: Any) -> None:
        body = await Request(scope, receive).body()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body[::-1]})

    async def scenario() -> None:
        async def mounted(request: web.Request) -> web.StreamResponse:
            return await answer(echo, request, root_path="")

        server = web.Application()
        server.router.add_post("/echo", mounted)
        async with TestServer(server, host="127.0.0.1") as test_server:
            url = f"http://127.0.0.1:{test_server.port}/echo"

            async def chunks() -> AsyncIterator[bytes]:
                for part in (b"one ", b"two ", b"three"):
                    yield part
                    await asyncio.sleep(0.05)

            async with aiohttp.ClientSession() as http, http.post(url, data=chunks()) as r:
                assert (r.status, await r.read()) == (200, b"eerht owt eno")

    asyncio.run(scenario())

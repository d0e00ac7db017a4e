"""Local receivers for Apprise: one aiohttp server that answers as the services digest's tests
point Apprise at, on 127.0.0.1 only.

- json:// and form:// webhooks: POST /hooks/<name> (a JSON body, or a form), as Apprise's
  custom_json and custom_form plugins send them;
- ntfy:// with a custom host: POST / with a JSON body naming the topic (and `X-Markdown`);
- gotify:// with a custom host: POST /message with the app token in `X-Gotify-Key`.

Each message is keyed by what it is for (the hook's name, the ntfy topic, the Gotify token).
`fail(key, *faults)` scripts the next answers for a key: "500", "503", "429", "400", "404", or
"drop" (the connection is closed before the request is read: nothing was taken), or a
redirect ("301", "302", "307", "308") to the hook `<key>-redirected` on the same server, or
"slow" (the message is taken after `slow_seconds`). A
faulted request is not received; `received` holds every accepted message, in order.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Received:
    service: str  # "json", "form", "ntfy", "gotify"
    key: str  # the hook's name, the topic, the token
    title: str
    message: str
    message_id: str | None  # the X-Digest-Message-Id header, when the plugin sends headers
    markdown: bool  # the service was told the message is Markdown


class Receivers:
    def __init__(self, slow_seconds: float = 2.5, received: list[Received] | None = None) -> None:
        self.slow_seconds = slow_seconds
        # Another server's list may be shared: one order of arrival across both.
        self.received: list[Received] = [] if received is None else received
        self.requests: defaultdict[str, int] = defaultdict(int)
        self._faults: defaultdict[str, deque[str]] = defaultdict(deque)
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- scripting --

    def fail(self, key: str, *faults: str) -> None:
        self._faults[key].extend(faults)

    def of(self, key: str) -> list[Received]:
        return [r for r in self.received if r.key == key]

    # -- URLs Apprise is given --

    def json_url(self, name: str) -> str:
        return f"json://127.0.0.1:{self.port}/hooks/{name}"

    def form_url(self, name: str) -> str:
        return f"form://127.0.0.1:{self.port}/hooks/{name}"

    def ntfy_url(self, topic: str) -> str:
        return f"ntfy://127.0.0.1:{self.port}/{topic}"

    def gotify_url(self, token: str) -> str:
        return f"gotify://127.0.0.1:{self.port}/{token}"

    # -- the server --

    async def __aenter__(self) -> Receivers:
        app = web.Application()
        app.router.add_post("/hooks/{name}", self._hook)
        app.router.add_post("/message", self._gotify)
        app.router.add_post("/", self._ntfy)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _fault(self, key: str, request: web.Request) -> web.StreamResponse | None:
        self.requests[key] += 1
        faults = self._faults.get(key)
        if not faults:
            return None
        fault = faults.popleft()
        if fault == "slow":
            await asyncio.sleep(self.slow_seconds)
            return None
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            await asyncio.sleep(0.05)
            return web.Response(status=500)  # never reaches the client
        body = {"error": f"scripted {fault}", "code": int(fault)}
        headers = {"Retry-After": "1"} if fault == "429" else {}
        if fault.startswith("3"):
            headers = {"Location": f"http://127.0.0.1:{self.port}/hooks/{key}-redirected"}
        return web.json_response(body, status=int(fault), headers=headers)

    def _accept(
        self, service: str, key: str, data: dict[str, Any], request: web.Request, *, markdown: bool
    ) -> None:
        self.received.append(
            Received(
                service=service,
                key=key,
                title=str(data.get("title", "")),
                message=str(data.get("message", "")),
                message_id=request.headers.get("X-Digest-Message-Id"),
                markdown=markdown,
            )
        )

    async def _hook(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if (answer := await self._fault(name, request)) is not None:
            return answer
        if request.content_type == "application/json":
            data = await request.json()
            service = "json"
        else:
            data = dict(await request.post())
            service = "form"
        self._accept(service, name, data, request, markdown=False)
        return web.json_response({"ok": True, "id": len(self.received)})

    async def _ntfy(self, request: web.Request) -> web.StreamResponse:
        data = json.loads(await request.read())
        topic = str(data.get("topic", ""))
        if (answer := await self._fault(topic, request)) is not None:
            return answer
        markdown = request.headers.get("X-Markdown", "").lower() in ("yes", "1", "true")
        self._accept("ntfy", topic, data, request, markdown=markdown)
        return web.json_response({"id": f"n{len(self.received)}", "topic": topic})

    async def _gotify(self, request: web.Request) -> web.StreamResponse:
        token = request.headers.get("X-Gotify-Key") or request.query.get("token", "")
        if (answer := await self._fault(token, request)) is not None:
            return answer
        data = await request.json()
        display = data.get("extras", {}).get("client::display", {})
        self._accept(
            "gotify", token, data, request, markdown=display.get("contentType") == "text/markdown"
        )
        return web.json_response({"id": len(self.received), "appid": 1})

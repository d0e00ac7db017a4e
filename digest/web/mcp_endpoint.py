"""/mcp: the MCP server over streamable HTTP inside `digest serve` and the daemon.

The SDK serves ASGI; digest's server is aiohttp, and aiohttp-asgi runs the one inside the other
(with its lifespan, which starts the SDK's session manager). Sessions are stateless and answers
plain JSON: every tool is a read, so no request needs to remember another, and a restart loses
nothing. The token rule and the rate limit are the API's (`web.limits.Gate`: a quick answer
searches the web), checked before the SDK sees the request (`GatedMcp`); on localhost the SDK
also refuses a Host or Origin that is not this machine's (DNS rebinding from a web page). The
SDK runs behind `digest.mcp.bridge` (aiohttp-asgi with a receive that waits for the client to
leave).

In front of all that, aiohttp answers what the SDK is not to see: another method than POST (405:
stateless JSON has no event stream to GET and no session to DELETE; such a stream, once its client
left, is what froze the server through aiohttp-asgi), and a Host header that names no host (400:
aiohttp-asgi cannot build the request's ASGI scope from `x:y`; each one logged a 2.6 KB traceback).
"""

from __future__ import annotations

import json
import time
from collections.abc import MutableMapping
from typing import Any

from aiohttp import web

from digest.app import App
from digest.web.api import error
from digest.web.limits import Gate, RateLimit, Refusal, is_loopback

PATH = "/mcp"

Scope = MutableMapping[str, Any]


class GatedMcp:
    """The SDK's ASGI app behind the token rule and the rate limit, checked before the SDK sees
    a request."""

    def __init__(self, asgi: Any, gate: Gate) -> None:
        self._asgi = asgi
        self._gate = gate

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            client = scope.get("client") or ("", 0)
            given = dict(scope["headers"]).get(b"authorization")
            authorization = given.decode("latin-1") if given else None
            refused = self._gate.refusal(str(client[0]), authorization, time.monotonic())
            if refused is not None:
                await _refuse(send, refused)
                return
            # aiohttp-asgi names the mount as root_path; the SDK routes the whole path (/mcp).
            scope = {**scope, "root_path": ""}
        await self._asgi(scope, receive, send)


MCP = web.AppKey("mcp", GatedMcp)


def mount_mcp(server: web.Application, app: App, *, host: str) -> None:
    """Make the MCP server that `front` answers with on `server`, which listens on `host`, and
    start its session manager with `server` (its route is in the server's table)."""
    from aiohttp_asgi import ASGIResource

    from digest.mcp.tools import build_server

    local = is_loopback(host)
    asgi = build_server(app).streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        host="127.0.0.1" if local else host,
    )
    limits = app.config.serve
    gate = Gate(
        name="MCP",
        setting="mcp_token_env",
        token=app.bearer_token(limits.mcp_token_env, setting="mcp_token_env"),
        local=local,
        bucket=RateLimit(rate=limits.api_rate, burst=limits.api_burst),
    )
    server[MCP] = GatedMcp(asgi, gate)
    ASGIResource(server[MCP], root_path=PATH).lifespan_mount(server)  # the session manager


async def front(request: web.Request) -> web.StreamResponse:
    """/mcp: what the SDK is not to see answered here, the rest by the SDK."""
    from digest.mcp.bridge import answer  # aiohttp-asgi: imported once MCP is asked

    refused = not_for_the_sdk(request)  # a response is a mapping, falsy when empty: no `or`
    if refused is not None:
        return refused
    return await answer(request.app[MCP], request, root_path=PATH)


def not_for_the_sdk(request: web.Request) -> web.Response | None:
    """aiohttp's answer to a request the SDK is not to see (see the module's docstring), or None
    for one to pass on."""
    if request.method == "OPTIONS":
        return web.Response(status=204, headers={"Allow": "POST"})
    if request.method != "POST":
        why = (
            f"{request.method} is not answered at {PATH}: send each JSON-RPC message in a POST "
            "(stateless streamable HTTP, answers in JSON, no event stream)"
        )
        return error(405, why, {"Allow": "POST"})
    if not host_parses(request):
        return error(400, "the Host header is not a host name or address with an optional port")
    return None


def host_parses(request: web.Request) -> bool:
    """Whether aiohttp can make the request's URL of its Host header (yarl refuses `x:y`)."""
    try:
        request.url.port  # noqa: B018  # the URL is built on first use
    except ValueError:
        return False
    return True


async def _refuse(send: Any, refused: Refusal) -> None:
    """The gate's refusal as JSON, as the API answers it."""
    body = json.dumps({"error": refused.why}).encode()
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    headers += [(k.lower().encode(), v.encode()) for k, v in refused.headers.items()]
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

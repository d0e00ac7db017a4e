"""/mcp: the MCP server over streamable HTTP inside `digest serve` and the daemon.

The SDK serves ASGI; digest's server is aiohttp, and aiohttp-asgi runs the one inside the other
(with its lifespan, which starts the SDK's session manager). Sessions are stateless and answers
plain JSON: every tool is a read, so no request needs to remember another, and a restart loses
nothing. The token rule is the API's (`api.limits.token_problem`), checked before the SDK sees
the request; on localhost the SDK also refuses a Host or Origin that is not this machine's (DNS
rebinding from a web page).
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

from aiohttp import web

from digest.api.limits import is_loopback, token_problem
from digest.app import App

PATH = "/mcp"

Scope = MutableMapping[str, Any]


def mount_mcp(server: web.Application, app: App, *, host: str) -> None:
    """Answer MCP at /mcp on `server`, which listens on `host`."""
    from aiohttp_asgi import ASGIResource

    from digest.mcp.tools import build_server

    local = is_loopback(host)
    mcp = build_server(app)
    asgi = mcp.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        host="127.0.0.1" if local else host,
    )
    env_name = app.config.serve.mcp_token_env

    async def guarded(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            given = headers.get(b"authorization")
            problem = token_problem(
                given.decode("latin-1") if given else None, env_name, local=local
            )
            if problem is not None:
                status, why = problem
                if status == 403:
                    why = f"MCP is {why} ([serve] mcp_token_env)"
                await _refuse(send, status, why)
                return
            # aiohttp-asgi names the mount as root_path; the SDK routes the whole path (/mcp).
            scope = {**scope, "root_path": ""}
        await asgi(scope, receive, send)

    resource = ASGIResource(guarded, root_path=PATH)
    server.router.register_resource(resource)
    resource.lifespan_mount(server)


async def _refuse(send: Any, status: int, why: str) -> None:
    body = json.dumps({"error": why}).encode()
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="digest"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

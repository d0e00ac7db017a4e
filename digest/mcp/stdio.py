"""`digest mcp`: the MCP server on stdin and stdout, for an assistant that starts it as a
subprocess. Nothing else may write to stdout: logs go to stderr."""

from __future__ import annotations

from digest.app import App


async def serve_stdio(app: App) -> None:
    """Answer MCP requests on stdin/stdout until the client closes stdin."""
    from digest.mcp.tools import build_server

    await build_server(app).run_stdio_async()

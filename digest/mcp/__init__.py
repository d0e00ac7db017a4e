"""The Model Context Protocol server: the archive and today's stories as read-only tools for
assistants, over stdio (`digest mcp`) or streamable HTTP at /mcp (`digest serve`, the daemon).
Built on the official `mcp` SDK, which only this package imports."""

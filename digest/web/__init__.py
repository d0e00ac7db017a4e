"""The web server of `digest serve` and the daemon: the static archive, each subscriber's
preferences page and one-click unsubscribe, following a story, the read-only /api/v1 and /mcp.

Every handler is a function of its request at module level, reading what it needs from the
application (`keys.APP`, ...); `server.make_app` holds the one route table, `server.running`
listens behind `connection_limits.py`. Nothing here is imported at start-up by a
command that serves nothing: the daemon is handed a server factory by `digest run`.
"""

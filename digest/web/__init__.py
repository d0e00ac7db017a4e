"""The web server of `digest serve` and the daemon: the static archive, each subscriber's
preferences page and one-click unsubscribe, following a story, the read-only /api/v1 and /mcp.

Every handler is a function of its request at module level, reading what it needs from the
application (`keys.APP`, ...); `server.route_table` is the one route table (the archive's files
last), `server.make_app` the application, `server.running` listens behind
`connection_limits.py`. No command that serves nothing imports this package, nor does the
daemon: `digest run` hands it a server factory.
"""

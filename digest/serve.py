"""`digest serve`: the archive on localhost for a preview, the one-click unsubscribe endpoint,
each subscriber's preferences page, and following a story (/follow, /unfollow).

The archive itself is static and needs no server; this exists so that a reader's unsubscribe
link (RFC 8058: GET shows a page, POST unsubscribes) and preferences link have somewhere to go.

The preferences page (/preferences?token=...) is authenticated by the subscriber's token alone
(no accounts, no passwords): an unknown or missing token gets 404. Its form carries a CSRF
token, an HMAC of the subscriber's token and the time it was issued under a key the service
keeps in its database (`Store.secret`), valid for a day; a post without a valid one, or from
another site (the browser's Sec-Fetch-Site, else Origin or Referer naming another origin than
this server's or `email.preferences_url`'s), gets 403. The page carries a restrictive
Content-Security-Policy (its own stylesheet, nothing else; no frames) and is never cached.
/follow and /unfollow (?token=...&story=ID, the links of emails and alerts) work the same way:
GET asks, POST with the CSRF token does; an unknown story gets a page that says so (404).

It may face the internet, so connections are bounded (`[serve]` in the config). aiohttp's only
limit is its keep-alive timeout, an hour by default, and not every aiohttp release in the range
digest allows applies it to a connection that never completes its first request: 50 clients
sending their headers a byte at a time held 50 connections for as long as they liked. Here
`keepalive_timeout` is `idle_timeout`, `_ConnectionGuard` gives each connection `header_timeout`
to get its first request in, and answers 503 beyond `max_connections`.

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
import contextlib
import errno
import hashlib
import hmac
import html
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from aiohttp import StreamReader, web
from multidict import MultiDictProxy

from digest.app import App
from digest.config import ServeConfig
from digest.errors import DigestError, ListenError
from digest.models import Subscriber
from digest.render.preferences_page import PREFERENCES_CSP

# How long a body may take to follow its head when every slot for bodies is taken.
_BODY_GRACE = 0.25

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 5\r\n"
    b"Connection: close\r\n\r\n"
)


def make_app(
    app: App,
    archive_dir: Path,
    *,
    middlewares: tuple[Any, ...] = (),
    host: str | None = None,
) -> web.Application:
    """The server's routes; `host`: the address it listens on (default `[serve] host`), which
    decides whether the API wants a token."""
    from digest.api import add_api_routes

    async def unsubscribe(request: web.Request) -> web.Response:
        token = request.query.get("token", "")
        store = await app.store()
        sub = await asyncio.to_thread(store.subscriber_by_token, token) if token else None
        if sub is None:
            return _page(404, "This unsubscribe link is not valid (or was already used).")
        if request.method == "POST":
            await asyncio.to_thread(store.remove_subscriber, sub.email)
            return _page(200, f"{sub.email} is unsubscribed. No more digests will be sent.")
        form = (
            f'<form method="post" action="?token={html.escape(token)}">'
            f"<p>Stop sending the digest to {html.escape(sub.email)}?</p>"
            '<button type="submit">Unsubscribe</button></form>'
        )
        return _page(200, form, raw=True)

    secret: list[str] = []  # the CSRF key, read from the store once

    async def csrf_key() -> str:
        if not secret:
            store = await app.store()
            secret.append(await asyncio.to_thread(store.secret, CSRF_SECRET))
        return secret[0]

    async def preferences(request: web.Request) -> web.Response:
        from digest.errors import InvalidPreferenceError
        from digest.subscribers.preferences import apply_changes, read_form

        token = request.query.get("token", "")
        store = await app.store()
        sub = await asyncio.to_thread(store.subscriber_by_token, token) if token else None
        if sub is None:
            return _page(404, "This preferences link is not valid (or the subscription ended).")
        key = await csrf_key()
        if request.method != "POST":
            saved = "Saved. Your next edition follows these preferences."
            notice = saved if request.query.get("saved") else ""
            return await preferences_page(sub, key, notice=notice)
        if cross_site(request, app.config.email.preferences_url):
            return _page(
                403,
                "This form was sent from another site. Open your preferences from the link "
                "in your digest.",
            )
        form = await posted_form(request)
        if form is None:
            return _page(400, "This form could not be read. Reload the page and try again.")
        if not csrf_valid(key, token, str(form.get("csrf", "")), time.time()):
            return _page(403, "This form has expired. Reload the page and try again.")
        try:
            changes = read_form(form, sub.preferences)
            prefs = await asyncio.to_thread(
                apply_changes, sub.preferences, changes, app.config, from_page=True
            )
        except (InvalidPreferenceError, DigestError) as err:
            return await preferences_page(sub, key, error=str(err), status=400)
        await asyncio.to_thread(store.save_preferences, sub.email, prefs)
        raise web.HTTPSeeOther(f"preferences?token={quote(token)}&saved=1", headers=_PAGE_HEADERS)

    async def preferences_page(
        sub: Subscriber, key: str, *, notice: str = "", error: str = "", status: int = 200
    ) -> web.Response:
        from digest.render.preferences_page import Followed, render_preferences
        from digest.subscribers.channel_urls import shown_url
        from digest.subscribers.preferences import MAX_STORIES

        config = app.config
        shown = await asyncio.to_thread(lambda: {c.key: shown_url(c.url) for c in sub.channels})
        store = await app.store()
        followed = await asyncio.to_thread(store.follows_of, sub.email)
        token = quote(sub.token)
        follows = tuple(
            Followed(f.title, f"unfollow?token={token}&story={f.story_id}") for f in followed
        )
        page = render_preferences(
            sub,
            title=config.archive.title,
            categories=config.sources.categories,
            default_time=config.schedule.publish_at,
            action=f"preferences?token={quote(sub.token)}",
            unsubscribe_action=f"unsubscribe?token={quote(sub.token)}",
            csrf=csrf_token(key, sub.token, time.time()),
            channels_shown=shown,
            max_stories=MAX_STORIES,
            notice=notice,
            error=error,
            follows=follows,
        )
        return web.Response(
            status=status, text=page, content_type="text/html", headers=_PAGE_HEADERS
        )

    async def preferences_css(request: web.Request) -> web.Response:
        from digest.render.preferences_page import preferences_css as css

        return web.Response(text=css(), content_type="text/css", headers=_PAGE_HEADERS)

    async def follow(request: web.Request) -> web.Response:
        return await following(request, undo=False)

    async def unfollow(request: web.Request) -> web.Response:
        return await following(request, undo=True)

    async def following(request: web.Request, *, undo: bool) -> web.Response:
        """/follow and /unfollow (?token=...&story=ID): GET asks, POST does (a mail scanner
        that opens every link of a message changes nothing), with the preferences page's
        token, CSRF token and same-site check."""
        from datetime import UTC, datetime

        token = request.query.get("token", "")
        store = await app.store()
        sub = await asyncio.to_thread(store.subscriber_by_token, token) if token else None
        if sub is None:
            return _page(404, "This link is not valid (or the subscription ended).")
        story = request.query.get("story", "")
        story_id = int(story) if _ascii_number(story) else None
        title = await asyncio.to_thread(store.story_title, story_id) if story_id else None
        if story_id is None or title is None:
            return _page(
                404,
                "There is no such story here: the link may be cut short, or the story was "
                "removed. Follow stories from the links in your digest.",
            )
        key = await csrf_key()
        target = f"{'unfollow' if undo else 'follow'}?token={quote(token)}&story={story_id}"
        back = f"preferences?token={quote(token)}"
        if request.method != "POST":
            current = await asyncio.to_thread(store.follow_of, sub.email, story_id)
            active = current is not None and current.ended_at is None
            return _follow_page(
                title,
                action=target,
                csrf=csrf_token(key, sub.token, time.time()),
                undo=undo,
                already=active != undo,
                back=back,
            )
        if cross_site(request, app.config.email.preferences_url):
            return _page(403, "This form was sent from another site. Use the link in your digest.")
        form = await posted_form(request)
        if form is None:
            return _page(400, "This form could not be read. Reload the page and try again.")
        if not csrf_valid(key, token, str(form.get("csrf", "")), time.time()):
            return _page(403, "This form has expired. Reload the page and try again.")
        now = datetime.now(UTC)
        if undo:
            await asyncio.to_thread(store.unfollow, sub.email, story_id, now)
        else:
            await asyncio.to_thread(store.follow, sub.email, story_id, now)
        if form.get("back") == "preferences":
            raise web.HTTPSeeOther(f"{back}&saved=1", headers=_PAGE_HEADERS)
        return _follow_done(title, undo=undo, back=back)

    async def index(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("index.html")

    server = web.Application(middlewares=middlewares)
    server.router.add_route("GET", "/unsubscribe", unsubscribe)
    server.router.add_route("POST", "/unsubscribe", unsubscribe)
    server.router.add_route("GET", "/preferences", preferences)
    server.router.add_route("POST", "/preferences", preferences)
    server.router.add_route("GET", "/preferences.css", preferences_css)
    for path, handler in (("/follow", follow), ("/unfollow", unfollow)):
        server.router.add_route("GET", path, handler)
        server.router.add_route("POST", path, handler)
    listening = app.config.serve.host if host is None else host
    add_api_routes(server, app, host=listening)
    if app.config.serve.mcp:
        from digest.mcp.http import mount_mcp  # the MCP SDK is a second's import: only when on

        mount_mcp(server, app, host=listening)
    server.router.add_get("/", index)
    server.router.add_static("/", archive_dir, show_index=False, follow_symlinks=False)
    return server


# The preferences page's CSRF tokens: under this key of the store's secrets, a day long.
CSRF_SECRET = "preferences-csrf"
CSRF_TTL = 24 * 3600
_PAGE_HEADERS = {
    "Content-Security-Policy": PREFERENCES_CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Same-origin: the form's post carries its Origin (with no-referrer it would be "null"),
    # and no other site ever sees the page's address, which holds the token.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def csrf_token(key: str, token: str, now: float) -> str:
    """The form's CSRF token for the subscriber `token`, issued at `now` (Unix time)."""
    issued = str(int(now))
    return f"{issued}.{_mac(key, token, issued)}"


def csrf_valid(key: str, token: str, csrf: str, now: float, *, ttl: float = CSRF_TTL) -> bool:
    """Whether `csrf` was issued for `token` under `key` within `ttl` seconds before `now`."""
    issued, _, mac = csrf.partition(".")
    # str.isdigit() passes "²" (int() raises) and "٣" (int() reads 3), int() raises past 4,300
    # digits, and compare_digest on text that is not ASCII: a token is ASCII, of its own length.
    if not (_ascii_number(issued) and mac.isascii() and len(mac) == _MAC_LENGTH):
        return False
    age = now - int(issued)
    if age > ttl or age < -300:  # a little clock skew between processes
        return False
    return hmac.compare_digest(mac, _mac(key, token, issued))


_MAC_LENGTH = hashlib.sha256().digest_size * 2  # hex


def _ascii_number(text: str, *, digits: int = 12) -> bool:
    """Whether `text` is a whole number of at most `digits` ASCII digits."""
    return 0 < len(text) <= digits and text.isascii() and text.isdigit()


def _mac(key: str, token: str, issued: str) -> str:
    message = f"preferences\n{token}\n{issued}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def cross_site(request: web.Request, public_url: str) -> bool:
    """Whether a post comes from a page of another site: the browser says so
    (Sec-Fetch-Site), or its Origin (else Referer) is neither this server's nor the public
    URL's. A post without any of them (not a browser's) is judged by its CSRF token alone."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site != "same-origin":
        return True
    origin = request.headers.get("Origin")
    if origin is None:
        referer = request.headers.get("Referer")
        if referer is None:
            return False
        origin = _origin(referer)
    allowed = {f"{request.scheme}://{request.host}".lower(), _origin(public_url)}
    return origin.lower() not in allowed


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return "invalid"
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}".lower()


async def posted_form(request: web.Request) -> MultiDictProxy[Any] | None:
    """The posted form, or None when it cannot be read as one: bytes that are not text in its
    charset, a charset nobody knows, a multipart body of the wrong shape."""
    try:
        return await request.post()
    except (ValueError, LookupError):
        return None


def _page(
    status: int, body: str, *, raw: bool = False, headers: dict[str, str] | None = None
) -> web.Response:
    content = body if raw else f"<p>{html.escape(body)}</p>"
    return web.Response(
        status=status,
        text=(
            '<!doctype html><html lang="en"><meta charset="utf-8"><title>digest</title>'
            f"{content}</html>"
        ),
        content_type="text/html",
        headers=headers or {"Cache-Control": "no-store", "X-Frame-Options": "DENY"},
    )


def _follow_page(
    title: str, *, action: str, csrf: str, undo: bool, already: bool, back: str
) -> web.Response:
    """The question before following (or unfollowing) a story: one button, posted here."""
    name = _title(title)
    if undo:
        ask = f"Stop following “{name}”?" + (" (You do not follow it now.)" * already)
        button = "Unfollow"
    else:
        ask = (
            f"Follow “{name}”? You get a message on your channels (or by email) when "
            "it gains a new checked fact or a correction; following ends once the story has "
            "been quiet for a while."
        )
        ask += " (You follow it already.)" * already
        button = "Follow this story"
    body = (
        f"<h1>{'Unfollow' if undo else 'Follow'} a story</h1>"
        f'<form method="post" action="{html.escape(action)}">'
        f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">'
        f'<p>{ask}</p><p><button type="submit">{button}</button></p></form>'
        f'<p><a href="{html.escape(back)}">Your preferences</a></p>'
    )
    return _page(200, body, raw=True, headers=_PAGE_HEADERS)


def _follow_done(title: str, *, undo: bool, back: str) -> web.Response:
    name = _title(title)
    said = (
        f"You no longer follow “{name}”."
        if undo
        else f"You follow “{name}”. Its new facts and corrections will be sent to you."
    )
    body = f'<p role="status">{said}</p><p><a href="{html.escape(back)}">Your preferences</a></p>'
    return _page(200, body, raw=True, headers=_PAGE_HEADERS)


def _title(title: str) -> str:
    """A story's (scraped) title for a page: one clean line, escaped."""
    from digest.render.email import text_line

    return html.escape(text_line(title, 200) or "this story")


class _BodyLate(Exception):
    """A request's body did not arrive in full within `body_timeout` (set on its stream, so
    whoever waits for the body gets it)."""


class _ConnectionGuard:
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
    response = _page(503, "The server is busy. Try again in a few seconds.")
    response.headers["Retry-After"] = "5"
    return response


def _late_page() -> web.Response:
    return _page(408, "The request did not arrive in time. Try again.")


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


@contextlib.asynccontextmanager
async def running(app: App, *, host: str, port: int) -> AsyncIterator[Path]:
    """The server listening while the block runs (for `digest serve` and the daemon); yields the
    archive folder it serves."""
    archive_dir = app.config.resolve(app.config.archive.dir)
    archive_dir.mkdir(parents=True, exist_ok=True)
    limits = app.config.serve
    guard = _ConnectionGuard(limits)
    runner = web.AppRunner(
        make_app(app, archive_dir, middlewares=(guard.middleware,), host=host),
        access_log=None,
        keepalive_timeout=limits.idle_timeout,
    )
    await runner.setup()
    assert runner.server is not None  # set up above
    listener: asyncio.Server | None = None
    try:
        loop = asyncio.get_running_loop()
        try:
            listener = await loop.create_server(
                partial(guard.connection, runner.server), host, port, reuse_address=True
            )
        except OSError as err:
            raise ListenError(f"cannot listen on {host}:{port}: {why_not_listening(err)}") from err
        yield archive_dir
    finally:
        if listener is not None:
            listener.close()
        await runner.cleanup()


def why_not_listening(err: OSError) -> str:
    """Why a server cannot listen, in words; a port in use is by far the usual reason."""
    if err.errno == errno.EADDRINUSE:
        return (
            "the address is in use (another digest serve or daemon?): choose another with "
            "--port or serve.port"
        )
    if err.errno == errno.EADDRNOTAVAIL:
        return "that address is not one of this machine's"
    if err.errno == errno.EACCES:
        return "permission denied (ports below 1024 need privileges)"
    return err.strerror or str(err)


async def serve(app: App, *, host: str, port: int, ready: asyncio.Event | None = None) -> None:
    async with running(app, host=host, port=port) as archive_dir:
        print(f"serving {archive_dir} on http://{host}:{port}/ (Ctrl+C stops)", flush=True)
        if ready:
            ready.set()
        await asyncio.Event().wait()

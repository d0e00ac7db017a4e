"""What the reader's pages share (preferences, unsubscribe, follow): the CSRF token of their
forms, the same-site check of a post, reading a posted form, and a small page.

The pages are authenticated by the subscriber's token alone (no accounts, no passwords): an
unknown or missing token gets 404. A form carries a CSRF token, an HMAC of the subscriber's
token and the time it was issued under a key the service keeps in its database
(`Store.secret`), valid for a day; a post without a valid one, or from another site (the
browser's Sec-Fetch-Site, else Origin or Referer naming another origin than this server's or
`email.preferences_url`'s), gets 403. The pages carry a restrictive Content-Security-Policy
(their own stylesheet, nothing else; no frames) and are never cached.
"""

from __future__ import annotations

import hashlib
import hmac
import html
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from multidict import MultiDictProxy

from digest.app import App
from digest.render.preferences_page import PREFERENCES_CSP

# The preferences page's CSRF tokens: under this key of the store's secrets, a day long.
CSRF_SECRET = "preferences-csrf"
CSRF_TTL = 24 * 3600
PAGE_HEADERS = {
    "Content-Security-Policy": PREFERENCES_CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Same-origin: the form's post carries its Origin (with no-referrer it would be "null"),
    # and no other site ever sees the page's address, which holds the token.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class CsrfKey:
    """The CSRF key of one server, read from the store when a form first needs it."""

    def __init__(self) -> None:
        self._key: str | None = None

    async def get(self, app: App) -> str:
        if self._key is None:
            store = await app.face()
            self._key = await store.secret(CSRF_SECRET)
        return self._key


def csrf_token(key: str, token: str, now: float) -> str:
    """The form's CSRF token for the subscriber `token`, issued at `now` (Unix time)."""
    issued = str(int(now))
    return f"{issued}.{_mac(key, token, issued)}"


def csrf_valid(key: str, token: str, csrf: str, now: float, *, ttl: float = CSRF_TTL) -> bool:
    """Whether `csrf` was issued for `token` under `key` within `ttl` seconds before `now`."""
    issued, _, mac = csrf.partition(".")
    # str.isdigit() passes "²" (int() raises) and "٣" (int() reads 3), int() raises past 4,300
    # digits, and compare_digest on text that is not ASCII: a token is ASCII, of its own length.
    if not (ascii_number(issued) and mac.isascii() and len(mac) == _MAC_LENGTH):
        return False
    age = now - int(issued)
    if age > ttl or age < -300:  # a little clock skew between processes
        return False
    return hmac.compare_digest(mac, _mac(key, token, issued))


_MAC_LENGTH = hashlib.sha256().digest_size * 2  # hex


def ascii_number(text: str, *, digits: int = 12) -> bool:
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


def page(
    status: int, body: str, *, raw: bool = False, headers: dict[str, str] | None = None
) -> web.Response:
    """A small HTML page: `body` as a paragraph of text, or as HTML when `raw`."""
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

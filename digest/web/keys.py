"""What every handler reads from the application (`request.app[KEY]`), set by `make_app`:
typed keys, so a handler is a plain function of its request, not a closure."""

from __future__ import annotations

from aiohttp import web

from digest.app import App
from digest.web.forms import CsrfKey

APP = web.AppKey("app", App)  # the deployment's parts: its configuration and store
CSRF = web.AppKey("csrf", CsrfKey)  # the forms' CSRF key, read from the store on first use

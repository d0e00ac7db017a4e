"""A subscriber's own pages, reached by the links of their digest: one-click unsubscribe
(RFC 8058: GET shows a page, POST unsubscribes) and the preferences page
(/preferences?token=...), with the forms' rules of `digest.web.forms`."""

from __future__ import annotations

import html
import time
from urllib.parse import quote

from aiohttp import web

from digest.app import App
from digest.errors import DigestError
from digest.models import Subscriber
from digest.runtime.threads import bounded, off_loop
from digest.web.forms import PAGE_HEADERS, cross_site, csrf_token, csrf_valid, page, posted_form
from digest.web.keys import APP, CSRF

# How long the preferences page waits for a new channel's host to be looked up.
HOST_CHECK_SECONDS = 10.0
HOST_CHECK_LATE = "The new channel's host could not be looked up in time. Try again later."


async def unsubscribe(request: web.Request) -> web.Response:
    app = request.app[APP]
    token = request.query.get("token", "")
    store = await app.face()
    sub = await store.subscriber_by_token(token) if token else None
    if sub is None:
        return page(404, "This unsubscribe link is not valid (or was already used).")
    if request.method == "POST":
        await store.remove_subscriber(sub.email)
        return page(200, f"{sub.email} is unsubscribed. No more digests will be sent.")
    form = (
        f'<form method="post" action="?token={html.escape(token)}">'
        f"<p>Stop sending the digest to {html.escape(sub.email)}?</p>"
        '<button type="submit">Unsubscribe</button></form>'
    )
    return page(200, form, raw=True)


async def preferences(request: web.Request) -> web.Response:
    """GET shows the page; POST saves the form and goes back to the page (303), or shows it
    again with what could not be saved (400)."""
    from digest.deliver.push_types import check_url
    from digest.errors import InvalidPreferenceError
    from digest.subscribers.preferences import apply_changes, read_form

    app = request.app[APP]
    token = request.query.get("token", "")
    store = await app.face()
    sub = await store.subscriber_by_token(token) if token else None
    if sub is None:
        return page(404, "This preferences link is not valid (or the subscription ended).")
    key = await request.app[CSRF].get(app)
    if request.method != "POST":
        saved = "Saved. Your next edition follows these preferences."
        notice = saved if request.query.get("saved") else ""
        return await preferences_page(app, sub, key, notice=notice)
    if cross_site(request, app.config.email.preferences_url):
        return page(
            403,
            "This form was sent from another site. Open your preferences from the link "
            "in your digest.",
        )
    form = await posted_form(request)
    if form is None:
        return page(400, "This form could not be read. Reload the page and try again.")
    if not csrf_valid(key, token, str(form.get("csrf", "")), time.time()):
        return page(403, "This form has expired. Reload the page and try again.")
    try:
        changes = read_form(form, sub.preferences)
        # A channel added here has its host looked up (`check_channel`): bounded.
        prefs = await bounded(
            HOST_CHECK_SECONDS,
            apply_changes,
            sub.preferences,
            changes,
            app.config,
            from_page=True,
            check_channel=check_url,
        )
    except (InvalidPreferenceError, DigestError) as err:
        return await preferences_page(app, sub, key, error=str(err), status=400)
    except TimeoutError:
        return await preferences_page(app, sub, key, error=HOST_CHECK_LATE, status=400)
    await store.save_preferences(sub.email, prefs)
    raise web.HTTPSeeOther(f"preferences?token={quote(token)}&saved=1", headers=PAGE_HEADERS)


async def preferences_page(
    app: App, sub: Subscriber, key: str, *, notice: str = "", error: str = "", status: int = 200
) -> web.Response:
    from digest.deliver.push_types import shown_url
    from digest.render.preferences_page import Followed, render_preferences

    config = app.config
    shown = await off_loop(lambda: {c.key: shown_url(c.url) for c in sub.channels})
    store = await app.face()
    followed = await store.follows_of(sub.email)
    token = quote(sub.token)
    follows = tuple(
        Followed(f.title, f"unfollow?token={token}&story={f.story_id}") for f in followed
    )
    text = render_preferences(
        sub,
        title=config.archive.title,
        categories=config.sources.categories,
        default_time=config.schedule.publish_at,
        action=f"preferences?token={quote(sub.token)}",
        unsubscribe_action=f"unsubscribe?token={quote(sub.token)}",
        csrf=csrf_token(key, sub.token, time.time()),
        channels_shown=shown,
        notice=notice,
        error=error,
        follows=follows,
    )
    return web.Response(status=status, text=text, content_type="text/html", headers=PAGE_HEADERS)


async def preferences_css(request: web.Request) -> web.Response:
    from digest.render.preferences_page import preferences_css as css

    return web.Response(text=css(), content_type="text/css", headers=PAGE_HEADERS)

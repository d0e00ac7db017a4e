"""Following a story from the links of emails and alerts: /follow and /unfollow
(?token=...&story=ID). GET asks, POST with the CSRF token does (a mail scanner that opens every
link of a message changes nothing), with the preferences page's token, CSRF token and
same-site check (`digest.web.forms`); an unknown story gets a page that says so (404)."""

from __future__ import annotations

import html
import time
from datetime import UTC, datetime
from urllib.parse import quote

from aiohttp import web

from digest.web.forms import (
    PAGE_HEADERS,
    ascii_number,
    cross_site,
    csrf_token,
    csrf_valid,
    page,
    posted_form,
)
from digest.web.keys import APP, CSRF


async def follow(request: web.Request) -> web.Response:
    return await following(request, undo=False)


async def unfollow(request: web.Request) -> web.Response:
    return await following(request, undo=True)


async def following(request: web.Request, *, undo: bool) -> web.Response:
    app = request.app[APP]
    token = request.query.get("token", "")
    store = await app.face()
    sub = await store.subscriber_by_token(token) if token else None
    if sub is None:
        return page(404, "This link is not valid (or the subscription ended).")
    story = request.query.get("story", "")
    story_id = int(story) if ascii_number(story) else None
    title = await store.story_title(story_id) if story_id else None
    if story_id is None or title is None:
        return page(
            404,
            "There is no such story here: the link may be cut short, or the story was "
            "removed. Follow stories from the links in your digest.",
        )
    key = await request.app[CSRF].get(app)
    target = f"{'unfollow' if undo else 'follow'}?token={quote(token)}&story={story_id}"
    back = f"preferences?token={quote(token)}"
    if request.method != "POST":
        current = await store.follow_of(sub.email, story_id)
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
        return page(403, "This form was sent from another site. Use the link in your digest.")
    form = await posted_form(request)
    if form is None:
        return page(400, "This form could not be read. Reload the page and try again.")
    if not csrf_valid(key, token, str(form.get("csrf", "")), time.time()):
        return page(403, "This form has expired. Reload the page and try again.")
    now = datetime.now(UTC)
    if undo:
        await store.unfollow(sub.email, story_id, now)
    else:
        await store.follow(sub.email, story_id, now)
    if form.get("back") == "preferences":
        raise web.HTTPSeeOther(f"{back}&saved=1", headers=PAGE_HEADERS)
    return _follow_done(title, undo=undo, back=back)


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
    return page(200, body, raw=True, headers=PAGE_HEADERS)


def _follow_done(title: str, *, undo: bool, back: str) -> web.Response:
    name = _title(title)
    said = (
        f"You no longer follow “{name}”."
        if undo
        else f"You follow “{name}”. Its new facts and corrections will be sent to you."
    )
    body = f'<p role="status">{said}</p><p><a href="{html.escape(back)}">Your preferences</a></p>'
    return page(200, body, raw=True, headers=PAGE_HEADERS)


def _title(title: str) -> str:
    """A story's (scraped) title for a page: one clean line, escaped."""
    from digest.render.email import text_line

    return html.escape(text_line(title, 200) or "this story")

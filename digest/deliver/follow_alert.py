"""The alert a follower of a story gets: the story's new checked facts (each with the outlet
that brought it) and its corrections since the last alert, with a link to stop following.

One message per follow per run, whatever the number of new events, each line once; as an
email (plain text) or as a channel's `Notification`. Its id is the same every time it is built
(a retry or a re-send carries the same Message-ID), derived from the follow, the last event
and the channel. A line carries no link but its outlet's own article URL (`linkless_line`, as
summaries): the timeline records sentences without them, and a line that an older version
recorded with one loses it here.

Everything the alert says around those lines is in the follower's language (`digest.messages`,
English when the catalogue does not have theirs), and says what the lines are: "An update" when
the only news is a toll that grew, "A correction" only for a correction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from digest import messages
from digest.deliver import mime
from digest.deliver.message import _address, sender_domain
from digest.deliver.push import Notification
from digest.errors import InvalidRecipientError, PermanentDeliveryError
from digest.facts.figures import agree
from digest.memory.timeline import figure_of
from digest.models import EMAIL_CHANNEL, Channel, Correction, StoryEvent, Subscriber
from digest.render.chat import quiet_mentions
from digest.render.corrections import correction_line, is_update
from digest.render.email import text_line
from digest.render.sanitize import safe_url
from digest.render.templating import clip, md, md_url
from digest.summarize.output import linkless_line

__all__ = [
    "AlertText",
    "alert_email",
    "alert_id",
    "alert_message",
    "alert_notification",
    "alert_text",
    "worth_telling",
]

SUBJECT_CHARS = 150
LINE_CHARS = 300
MAX_LINES = 20  # events listed; the rest are counted


@dataclass(frozen=True, slots=True)
class AlertText:
    subject: str
    text: str
    markdown: str


def worth_telling(
    new: Sequence[StoryEvent], figures: Sequence[tuple[StoryEvent, Mapping[str, Any]]]
) -> list[StoryEvent]:
    """Of a follow's `new` events, those worth an alert: corrections, facts without a figure,
    and figures no earlier figure of the story agrees with (`figures`: the story's figure
    events with their detail, oldest first). A new outlet repeating a known toll is no news;
    two outlets bringing the same new one in a run make one line. An event with nothing to
    say once its links are gone is none either."""
    known = [(e.id, figure_of(e, d)) for e, d in figures if e.subject]
    own = dict(known)
    kept = []
    for event in new:
        mine = own.get(event.id) if event.kind == "fact" else None
        if mine is not None and any(i < event.id and agree(f, mine) for i, f in known):
            continue
        if event_line(event):
            kept.append(event)
    return kept


def alert_id(follow_id: int, through: int, channel: str, sender: str) -> str:
    """The Message-ID of the alert of a follow up to event `through` on `channel`."""
    key = f"{follow_id}\n{through}\n{channel}".encode()
    token = hashlib.sha256(key).hexdigest()[:16]
    return f"<follow-{follow_id}-{through}-{token}@{sender_domain(sender)}>"


def _correction(event: StoryEvent) -> Correction | None:
    """A correction event as the edition said it, when it was recorded with its figures."""
    if event.previous and event.value and event.subject and event.edition_day:
        return Correction(event.subject, event.previous, event.value, event.edition_day, event.text)
    return None


def event_line(event: StoryEvent, language: str | None = "en") -> str:
    """One event as the alert says it in `language` (scraped text: plain, without links, cut,
    to be escaped by its reader); "" when nothing is left to say."""
    text = _linkless(event.text, event.url)
    if event.kind == "correction":
        # As the edition says it (`digest.render.corrections`); nothing for a subject the
        # catalogue cannot name.
        said = _correction(event)
        if said is not None:
            line = correction_line(said, language)
        elif text:
            line = messages.catalogue(language).gettext("Correction: %(text)s") % {"text": text}
        else:
            line = ""
    else:
        what = messages.counted(event.subject, language) if event.subject else ""
        figure = f"{event.value} {what}" if event.value and what else ""
        fact = text or _linkless(figure, event.url)
        line = f"{fact} ({event.outlet})" if fact and event.outlet else fact
    return text_line(line, LINE_CHARS)


def _what(facts: bool, corrections: bool, updates: bool) -> str:
    """What an alert brings, as its subject and first line say it (in English: the msgid)."""
    if not facts:
        if corrections and updates:
            return messages.N_("A correction and an update")
        return messages.N_("An update") if updates else messages.N_("A correction")
    if corrections and updates:
        return messages.N_("New facts, a correction and an update")
    if corrections:
        return messages.N_("New facts and a correction")
    if updates:
        return messages.N_("New facts and an update")
    return messages.N_("New facts")


def _linkless(text: str, url: str) -> str:
    """`text` without links, as summaries are: its outlet's own article `url` may stay."""
    return linkless_line(text, [url] if url else [])


def alert_text(
    title: str,
    events: Sequence[StoryEvent],
    *,
    unfollow_url: str,
    story_url: str | None = None,
    service: str = "digest",
    language: str | None = None,
) -> AlertText:
    """The alert's subject and bodies (plain text and Markdown), in the follower's `language`
    (`messages.edition_language`: English when the catalogue does not have it)."""
    say = messages.catalogue(language).gettext
    name = text_line(title, 120) or say("a story you follow")
    facts = [e for e in events if e.kind != "correction"]
    # What is said of each correction: its line, and whether it is an update (a rising toll).
    told = [(e, event_line(e, language)) for e in events if e.kind == "correction"]
    told = [(e, line) for e, line in told if line]
    updates = [line for e, line in told if (c := _correction(e)) is not None and is_update(c)]
    corrections = [line for _, line in told if line not in updates]
    what = say(_what(bool(facts), bool(corrections), bool(updates)))
    service_name = text_line(service, 40) or "digest"
    subject = clip(
        say("%(service)s: %(what)s in %(name)s")
        % {"service": service_name, "what": what, "name": name},
        SUBJECT_CHARS,
    )
    fact_lines = (line for e in facts if (line := event_line(e, language)))
    lines = list(dict.fromkeys([*corrections, *updates, *fact_lines]))
    shown, more = lines[:MAX_LINES], len(lines) - MAX_LINES
    text = [say("%(what)s in the story you follow: %(name)s") % {"what": what, "name": name}, ""]
    text += [f"- {line}" for line in shown]
    markdown = [f"**{md(quiet_mentions(name))}**", ""]
    markdown += [f"- {md(quiet_mentions(line))}" for line in shown]
    if more > 0:
        rest = say("and %(n)s more") % {"n": more}
        text.append(f"- {rest}")
        markdown.append(f"- {rest}")
    if story_url:
        story = md(say("The story"))
        text += ["", say("The story: %(url)s") % {"url": story_url}]
        markdown += ["", f"[{story}]({md_url(story_url)})"]
    stop = md(say("Stop following this story"))
    text += ["", say("Stop following this story: %(url)s") % {"url": unfollow_url}]
    markdown += ["", f"[{stop}]({md_url(unfollow_url)})"]
    return AlertText(subject, "\n".join(text) + "\n", "\n".join(markdown) + "\n")


def alert_email(
    alert: AlertText,
    to: str,
    *,
    sender: str,
    message_id: str,
    unfollow_url: str,
    dated: datetime,
) -> EmailMessage:
    """The alert as a plain-text email. Raises InvalidRecipientError for a refused address."""
    link = safe_url(unfollow_url)
    if link is None:
        raise ValueError(f"the unfollow URL is not an absolute http(s) URL: {unfollow_url!r}")
    msg = EmailMessage(policy=mime.POLICY)
    msg["From"] = sender
    msg["To"] = _address(to)
    msg["Subject"] = alert.subject
    msg["Date"] = format_datetime(dated)
    msg["Message-ID"] = message_id
    msg["Auto-Submitted"] = "auto-generated"
    msg["List-Unsubscribe"] = f"<{link}>"
    msg.set_content(alert.text, cte="quoted-printable")
    return msg


def alert_notification(
    alert: AlertText, to: str, channel: Channel, *, message_id: str
) -> Notification:
    """The alert for one of the follower's channels."""
    return Notification(
        recipient=to,
        channel=channel.key,
        url=channel.url,
        title=alert.subject,
        markdown=alert.markdown,
        text=quiet_mentions(alert.text),
        message_id=message_id,
    )


def alert_message(
    alert: AlertText,
    sub: Subscriber,
    channel: str,
    *,
    sender: str,
    message_id: str,
    unfollow_url: str,
    dated: datetime,
) -> EmailMessage | Notification | PermanentDeliveryError:
    """The alert for one channel of its follower (its ledger key: "email", or a push
    channel's of any type), or the error that keeps it from being built: that row fails, the
    others go."""
    if channel == EMAIL_CHANNEL:
        try:
            return alert_email(
                alert,
                sub.email,
                sender=sender,
                message_id=message_id,
                unfollow_url=unfollow_url,
                dated=dated,
            )
        except InvalidRecipientError as err:
            return err
    by_key = {c.key: c for c in sub.channels}
    if channel not in by_key:  # the channel was removed since: nowhere to send it
        return PermanentDeliveryError(
            f"{channel} is no longer a channel of {sub.email}",
            reply="not sent: the channel was removed",
        )
    return alert_notification(alert, sub.email, by_key[channel], message_id=message_id)

"""The compact digest for one channel of one subscriber: rendered by
`digest.render.chat` within the service's length limit, with the subscriber's own
preferences link, and an id that is the same every time it is built (like an email's
Message-ID: a re-send carries the same one)."""

from __future__ import annotations

import hashlib
from datetime import date

from digest.deliver.message import sender_domain
from digest.deliver.push import Notification
from digest.deliver.push_types import push_type
from digest.models import Channel, Edition
from digest.render.chat import COMPACT_CHARS, render_notification

__all__ = ["build_notification", "notification_id"]


def notification_id(day: date, email: str, channel: str, sender: str) -> str:
    """The id of the edition of `day` sent to `email` on `channel`."""
    key = f"{day.isoformat()}\n{email.strip().lower()}\n{channel}".encode()
    token = hashlib.sha256(key).hexdigest()[:16]
    return f"<digest-{day.isoformat()}-{token}@{sender_domain(sender)}>"


def build_notification(
    edition: Edition,
    email: str,
    channel: Channel,
    *,
    archive_url: str | None,
    preferences_url: str,
    title: str,
    sender: str,
    follow_url: str | None = None,
    language: str | None = None,
) -> Notification:
    """The message of `edition` (the subscriber's own copy) for one of their channels;
    `follow_url` the subscriber's link to follow a story, "{story}" standing for its id;
    `language` theirs (the service's own lines are in it, `digest.messages`)."""
    budget = min(push_type(channel.url).body_limit(channel.url) or COMPACT_CHARS, COMPACT_CHARS)
    head, markdown, text = render_notification(
        edition,
        title=title,
        archive=archive_url,
        preferences=preferences_url,
        budget=budget,
        follow=follow_url,
        language=language,
    )
    return Notification(
        recipient=email,
        channel=channel.key,
        url=channel.url,
        title=head,
        markdown=markdown,
        text=text,
        message_id=notification_id(edition.day, email, channel.key, sender),
    )

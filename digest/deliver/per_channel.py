"""What one channel of a reader gets of their copy of an edition: on email, the email
(`digest.deliver.message`); on a push channel of any type, its `Notification`
(`digest.deliver.notification`). The jobs hand over what they decided (the copy, the
reader, the channel, their links) and never branch on a channel's kind; an alert's message is
chosen the same way (`digest.deliver.follow_alert.alert_message`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from email.message import EmailMessage
from functools import partial
from typing import TYPE_CHECKING

from digest.deliver.message import Recipient, build_message, message_id
from digest.deliver.notification import build_notification, notification_id
from digest.deliver.push import Notification
from digest.errors import InvalidRecipientError
from digest.models import Channel, Edition, Subscriber

if TYPE_CHECKING:
    from digest.config import Config

__all__ = ["ReaderLinks", "edition_message"]

log = logging.getLogger(__name__)

Built = EmailMessage | Notification | InvalidRecipientError


@dataclass(frozen=True, slots=True)
class ReaderLinks:
    """A reader's own links in their messages (their token in each): the edition in the
    archive, their preferences, unsubscribing, following a story ("{story}" stands for its
    id)."""

    archive: str | None
    preferences: str
    unsubscribe: str
    follow: str


def edition_message(
    day: date,
    copy: Edition,
    sub: Subscriber,
    channel: Channel | None,
    config: Config,
    links: ReaderLinks,
) -> tuple[Callable[[], Built], str]:
    """How to build the message of `copy` (the edition of `day` as `sub` gets it) for one of
    their channels (None: email) when its turn to be sent comes, and its id."""
    sender = config.email.from_
    if channel is None:
        return partial(_email, copy, sub, config, links), message_id(day, sub.email, sender)
    build = partial(
        build_notification,
        copy,
        sub.email,
        channel,
        archive_url=links.archive,
        preferences_url=links.preferences,
        title=config.archive.title,
        sender=sender,
        follow_url=links.follow,
        language=sub.preferences.language,
    )
    return build, notification_id(day, sub.email, channel.key, sender)


def _email(
    copy: Edition, sub: Subscriber, config: Config, links: ReaderLinks
) -> EmailMessage | InvalidRecipientError:
    """A subscriber's email of their copy, or the error that keeps it from being built (an
    address the rule refuses, stored by an older version): that row fails, the others go."""
    try:
        return build_message(
            copy,
            Recipient(
                sub.email,
                sub.preferences.categories,
                sub.preferences.timezone,
                sub.preferences.language,
            ),
            config.email,
            archive_url=links.archive,
            unsubscribe_url=links.unsubscribe,
            title=config.archive.title,
            preferences_url=links.preferences,
            lead=config.publish.lead_stories,
            headlines=config.publish.headlines_per_category,
            follow_url=links.follow,
        )
    except InvalidRecipientError as err:
        log.warning("%s; the other subscribers still get the edition", err)
        return err

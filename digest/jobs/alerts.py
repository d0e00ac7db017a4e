"""Alerts to the followers of stories, after each run that can add to a story's timeline
(deepen, publish) and at each delivery round of the daemon (retries).

Follows of stories quiet for `[memory] follow_days` end first. Then each follow with new facts
or corrections gets one alert (`digest.store.follows`: one a follow at a time, kept open until
every channel is done; none within `[memory] alert_every` of the last one sent, so a feed that
adds an item an hour cannot send a follower a message an hour: the news waits for the next),
sent on the follower's channels and email as an edition is: through the delivery sender
(`digest.deliver.sender.deliver`) over the alert ledger, so a kill -9 or a restart neither
loses nor doubles one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING

from digest.deliver.ledger import EMAIL

if TYPE_CHECKING:
    from email.message import EmailMessage

    from digest.deliver.push import Notification
    from digest.deliver.sender import DeliveryReport
    from digest.errors import PermanentDeliveryError
    from digest.jobs.units import Parts
    from digest.models import StoryEvent, Subscriber
    from digest.store import Store
    from digest.store.follow_alerts import Alert

__all__ = ["alert_followers", "follow_link", "send_alerts"]

log = logging.getLogger(__name__)

# What an alert's rows say when its new facts only repeated known ones (they are skipped).
NOTHING_NEW = "not sent: its new facts repeat what the story had already reported"


def follow_link(template: str, token: str, story_id: int) -> str:
    """`[memory] follow_url` or `unfollow_url` for one subscriber and story."""
    return template.replace("{token}", token).replace("{story}", str(story_id))


def channels_of(sub: Subscriber) -> list[str]:
    """Where `sub` is sent things: email (unless they turned it off), and each channel."""
    return ([EMAIL] if sub.preferences.send_email else []) + [c.key for c in sub.channels]


async def send_alerts(app: Parts, now: datetime | None = None) -> DeliveryReport | None:
    """End quiet follows, then send every alert owed; None when there was none to send."""
    from digest.deliver.ledger import RetryPolicy
    from digest.deliver.sender import LazyMessages, Skip, deliver
    from digest.store.follow_alerts import alert_key
    from digest.store.ledgers import SqlAlertLedger

    now = now or datetime.now(UTC)
    store = await app.face()
    ended = await store.end_quiet_follows(now, app.config.memory.follow_days)
    if ended:
        log.info(
            "follows: %d ended, their stories quiet for %d days",
            ended,
            app.config.memory.follow_days,
        )
    subscribers = {s.email: s for s in await store.subscribers()}
    wanted = {email: channels_of(sub) for email, sub in subscribers.items()}
    every = app.config.memory.alert_period()
    alerts = await store.open_alerts(wanted, now, every)
    if not alerts:
        return None
    events = await store.call(_events, alerts)
    pages = await store.call(
        story_pages, [a.follow.story_id for a in alerts], app.config.archive.base_url
    )
    messages = LazyMessages()
    for alert in alerts:
        sub = subscribers.get(alert.follow.email)
        if sub is None:
            continue
        key = alert_key(alert.follow.id, alert.through)
        for channel in alert.channels:
            if not events[alert.follow.id]:  # only known figures again: nothing to tell
                messages.add((key, channel), partial(Skip, NOTHING_NEW), None)
                continue
            page = pages.get(alert.follow.story_id)
            build = partial(_message, app, alert, events[alert.follow.id], sub, channel, now, page)
            messages.add((key, channel), build, _id(app, alert, channel))
    transport = app.channels()
    try:
        report = await deliver(
            SqlAlertLedger(store, alerts),
            now.date(),
            messages,
            transport,
            now,
            policy=RetryPolicy.from_config(app.config.email),
        )
    finally:
        await transport.aclose()
    await store.close_alerts()
    if report.sent or report.failed or report.retrying:
        log.info(
            "alerts: %d sent, %d to retry, %d failed",
            len(report.sent),
            len(report.retrying),
            len(report.failed),
        )
    return report


def _events(store: Store, alerts: Sequence[Alert]) -> dict[int, list[StoryEvent]]:
    """Each alert's events, by follow: its story's facts and corrections after the follow's
    `alerted_through`, up to the alert's last event, those that repeat a known figure left
    out (`worth_telling`)."""
    from digest.deliver.follow_alert import worth_telling
    from digest.store.follows import ALERT_KINDS

    found = {}
    for a in alerts:
        after = store.events_after(a.follow.story_id, a.follow.alerted_through, ALERT_KINDS)
        new = [e for e in after if e.id <= a.through]
        found[a.follow.id] = worth_telling(new, store.figure_events(a.follow.story_id, a.through))
    return found


async def alert_followers(app: Parts, after: str) -> None:
    """`send_alerts` at the end of a run of `after` (deepen, publish, a delivery round): a
    failure is logged and left for the next run (the ledger keeps what was done), never the
    run's own failure."""
    from digest.errors import DigestError

    try:
        await send_alerts(app)
    except DigestError as err:
        log.warning("alerts after %s: not sent this time: %s", after, err)


# Editions looked through, newest first, for the page of an alert's story (as publish's look
# back for a story's earlier appearance).
PAGE_LOOKBACK = 14


def story_pages(store: Store, story_ids: Sequence[int], base_url: str) -> dict[int, str]:
    """The absolute URL of each story's page in the archive, on the newest edition that has
    it (the page with its timeline); none without `[archive] base_url`."""
    from digest.errors import StoreError
    from digest.render.layout import absolute_url, story_path

    wanted, found = set(story_ids), {}
    if not wanted or absolute_url(base_url, "") is None:
        return {}
    for day in store.edition_days()[:PAGE_LOOKBACK]:
        try:
            edition = store.edition(day)
        except StoreError as err:
            log.warning("%s; alerts link the stories' older pages", err)
            continue
        for section in edition.sections if edition else ():
            for story in section.stories:
                if story.id in wanted and story.id not in found:
                    found[story.id] = absolute_url(base_url, story_path(day, story.id))
        if len(found) == len(wanted):
            break
    return {k: v for k, v in found.items() if v}


def _id(app: Parts, alert: Alert, channel: str) -> str:
    from digest.deliver.follow_alert import alert_id

    return alert_id(alert.follow.id, alert.through, channel, app.config.email.from_)


def _message(
    app: Parts,
    alert: Alert,
    events: Sequence[StoryEvent],
    sub: Subscriber,
    channel: str,
    now: datetime,
    page: str | None = None,
) -> EmailMessage | Notification | PermanentDeliveryError:
    """The alert for one channel of its follower (or the error that keeps it from being
    built: that row fails, the others go)."""
    from digest.deliver.follow_alert import alert_message, alert_text

    follow = alert.follow
    unfollow = follow_link(app.config.memory.unfollow_url, sub.token, follow.story_id)
    text = alert_text(
        follow.title,
        events,
        unfollow_url=unfollow,
        story_url=page,
        service=app.config.archive.title,
        language=sub.preferences.language,
    )
    return alert_message(
        text,
        sub,
        channel,
        sender=app.config.email.from_,
        message_id=_id(app, alert, channel),
        unfollow_url=unfollow,
        dated=now,
    )

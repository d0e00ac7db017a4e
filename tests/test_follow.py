"""Following a story (issue 31): follow and unfollow, the quiet end of a follow, and the alerts
a follower gets of new facts and corrections, exactly once, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import html
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import select

from digest.app import App
from digest.config import ArchiveConfig, MemoryConfig, load_config, parse_config
from digest.deliver.message import Recipient, build_message
from digest.jobs.alerts import send_alerts
from digest.models import Item
from digest.render import write_archive
from digest.render.chat import COMPACT_CHARS, render_notification
from digest.render.layout import story_path
from digest.store import Store, open_store
from digest.store.memory_tables import follow_alerts, follows, story_events
from digest.store.schema import stories
from tests import linkforms, mailfixtures, storefixtures
from tests.configs import write_config
from tests.conftest import cli_env, free_port, run_cli, start_cli
from tests.editions import make_edition
from tests.newsweb import Route
from tests.receivers import Receivers
from tests.storefixtures import NOW
from tests.test_whats_new import email_parts

# Fixtures, found by pytest under these names.
db_url, store = storefixtures.db_url, storefixtures.store

DAY = timedelta(days=1)


def add_story(store: Store, title: str = "Quake kills 12 in the north") -> int:
    with store.engine.begin() as conn:
        row = {"category": "world", "title": title, "first_seen": NOW, "last_seen": NOW}
        return int(conn.execute(stories.insert().values(row).returning(stories.c.id)).scalar_one())


def add_event(
    store: Store,
    story_id: int,
    kind: str,
    key: str,
    *,
    outlet: str = "Daily Planet",
    text: str = "",
    at: Any = NOW,
    detail: dict[str, Any] | None = None,
) -> int:
    """An event as the timeline records it (plain insert into `story_events`)."""
    row = {
        "story_id": story_id,
        "kind": kind,
        "key": key,
        "at": at,
        "recorded_at": at,
        "outlet": outlet,
        "url": f"https://{outlet.lower().replace(' ', '')}.example/{key}",
        "text": text,
        "detail": detail or {},
    }
    with store.engine.begin() as conn:
        inserted = conn.execute(story_events.insert().values(row).returning(story_events.c.id))
        return int(inserted.scalar_one())


HOUR = timedelta(hours=1)


def subscribe(store: Store, email: str = "reader@example.org") -> str:
    return store.add_subscriber(email, categories=None, timezone="UTC").email


# -- the store -------------------------------------------------------------------------------


def test_following_is_idempotent_and_ends_on_unfollow(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    assert store.follow(reader, story, NOW)
    assert store.follow(reader, story, NOW + DAY)  # again: the same follow
    assert [(f.story_id, f.title) for f in store.follows_of(reader)] == [
        (story, "Quake kills 12 in the north")
    ]
    assert [f.email for f in store.followers(story)] == [reader]
    assert store.follows_of(reader)[0].created_at == NOW
    assert store.unfollow(reader, story, NOW + DAY)
    assert not store.unfollow(reader, story, NOW + DAY)  # twice: nothing more
    assert store.follows_of(reader) == []
    assert store.followers(story) == []
    ended = store.follow_of(reader, story)
    assert ended is not None and ended.end_reason == "unfollowed"


def test_an_unknown_story_or_reader_cannot_be_followed(store: Store) -> None:
    reader = subscribe(store)
    assert not store.follow(reader, 999, NOW)
    assert not store.follow("nobody@example.org", add_story(store), NOW)
    assert store.story_title(999) is None


def test_a_follow_starts_after_what_happened_before(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    known = add_event(store, story, "fact", "fact:a:dead:12", text="12 dead")
    store.follow(reader, story, NOW)
    assert store.follows_of(reader)[0].alerted_through == known
    assert store.open_alerts({reader: ["email"]}, NOW) == []


def test_one_alert_per_follow_whatever_the_new_facts(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    store.follow(reader, story, NOW)
    add_event(store, story, "outlet", "outlet:b", outlet="B")
    assert store.open_alerts({reader: ["email"]}, NOW) == []  # an outlet alone is no news
    first = add_event(store, story, "fact", "fact:b:dead:30", outlet="B", text="30 dead")
    last = add_event(store, story, "correction", "correction:dead:12:30", text="30, not 12")
    (alert,) = store.open_alerts({reader: ["email", "ntfy:1"]}, NOW)
    assert alert.through == last and alert.channels == ("email", "ntfy:1")
    events = store.events_after(story, alert.follow.alerted_through, ("fact", "correction"))
    assert [e.id for e in events] == [first, last]
    # Asked again before it is sent (a run killed after making it): the same alert, no other,
    # even with a newer fact.
    add_event(store, story, "fact", "fact:c:injured:40", outlet="C", text="40 injured")
    (again,) = store.open_alerts({reader: ["email"]}, NOW)
    assert (again.through, again.channels) == (last, ("email", "ntfy:1"))
    with store.engine.connect() as conn:
        assert len(conn.execute(select(follow_alerts)).all()) == 2


def test_an_alert_closes_when_every_channel_is_done(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    store.follow(reader, story, NOW)
    fact = add_event(store, story, "fact", "fact:b:dead:30", outlet="B", text="30 dead")
    assert len(store.open_alerts({reader: ["email", "ntfy:1"]}, NOW)) == 1
    with store.engine.begin() as conn:
        conn.execute(
            follow_alerts.update()
            .where(follow_alerts.c.channel == "email")
            .values(state="sent", attempts=1)
        )
    assert store.close_alerts() == 0  # the channel's row is still pending
    with store.engine.begin() as conn:
        conn.execute(
            follow_alerts.update()
            .where(follow_alerts.c.channel == "ntfy:1")
            .values(state="failed", attempts=1)
        )
    assert store.close_alerts() == 1
    assert store.follows_of(reader)[0].alerted_through == fact
    assert store.open_alerts({reader: ["email"]}, NOW) == []
    assert store.alert_counts()["failed"] == 1


def test_an_operator_re_sends_a_failed_alert_or_gives_it_up(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    before = add_event(store, story, "fact", "fact:a:dead:12", outlet="A", text="12 dead")
    store.follow(reader, story, NOW + HOUR)
    fact = add_event(store, story, "fact", "fact:b:dead:30", outlet="B", at=NOW + 2 * HOUR)
    store.open_alerts({reader: ["email", "ntfy:1"]}, NOW)
    with store.engine.begin() as conn:
        conn.execute(follow_alerts.update().values(state="sent", attempts=1))
        conn.execute(
            follow_alerts.update()
            .where(follow_alerts.c.channel == "ntfy:1")
            .values(state="failed", attempts=3, last_reply="400 Bad Request")
        )
    store.close_alerts()
    assert [(r.channel, r.state) for r in store.alert_rows()] == [
        ("email", "sent"),
        ("ntfy:1", "failed"),
    ]
    # Re-sent: the failed row only, and the alert is open again from where it began.
    [again] = store.resend_alerts(NOW + 3 * HOUR)
    assert (again.channel, again.state, again.attempts) == ("ntfy:1", "pending", 0)
    assert store.follows_of(reader)[0].alerted_through == before
    [alert] = store.open_alerts({reader: ["email", "ntfy:1"]}, NOW + 3 * HOUR)
    assert alert.through == fact
    assert store.resend_alerts(NOW + 3 * HOUR) == []  # nothing stuck or failed now
    # Given up instead: the row ends failed, saying so, and the alert closes.
    [dropped] = store.abandon_alerts(NOW + 4 * HOUR)
    assert dropped.state == "failed" and "abandoned by the operator" in (dropped.last_reply or "")
    assert "400 Bad Request" in (dropped.last_reply or "")
    assert store.follows_of(reader)[0].alerted_through == fact
    assert store.open_alerts({reader: ["email", "ntfy:1"]}, NOW + 4 * HOUR) == []


def test_no_alert_within_the_period_of_the_last_one_sent_and_the_next_has_all(
    store: Store,
) -> None:
    reader = subscribe(store)
    story = add_story(store)
    store.follow(reader, story, NOW)
    every = 6 * HOUR
    first = add_event(store, story, "fact", "fact:b:dead:30", outlet="B", text="30 dead")
    (alert,) = store.open_alerts({reader: ["email"]}, NOW, every)
    assert alert.through == first
    with store.engine.begin() as conn:  # sent at NOW
        conn.execute(follow_alerts.update().values(state="sent", attempts=1, updated_at=NOW))
    # Hourly news for 5 hours: held.
    later = [
        add_event(store, story, "fact", f"fact:c:tents:{h}", outlet="C", text=f"{h}00 tents")
        for h in range(1, 6)
    ]
    for h in range(1, 6):
        assert store.open_alerts({reader: ["email"]}, NOW + h * HOUR, every) == []
    assert store.follows_of(reader)[0].alerted_through == first
    # Six hours after the one sent: one alert, with all five.
    (merged,) = store.open_alerts({reader: ["email"]}, NOW + every, every)
    assert merged.through == later[-1]
    told = store.events_after(story, merged.follow.alerted_through, ("fact", "correction"))
    assert [e.id for e in told if e.id <= merged.through] == later


def test_an_alert_that_reached_no_channel_does_not_hold_the_next(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    store.follow(reader, story, NOW)
    add_event(store, story, "fact", "fact:b:dead:30", outlet="B", text="30 dead")
    store.open_alerts({reader: ["email"]}, NOW, 6 * HOUR)
    with store.engine.begin() as conn:  # skipped: it only repeated known figures
        conn.execute(follow_alerts.update().values(state="skipped", updated_at=NOW))
    news = add_event(store, story, "fact", "fact:c:dead:45", outlet="C", text="45 dead")
    (alert,) = store.open_alerts({reader: ["email"]}, NOW + HOUR, 6 * HOUR)
    assert alert.through == news


def test_quiet_follows_end(store: Store) -> None:
    reader = subscribe(store)
    quiet, busy, new = add_story(store, "Quiet"), add_story(store, "Busy"), add_story(store, "New")
    for story in (quiet, busy):
        store.follow(reader, story, NOW - 20 * DAY)
    store.follow(reader, new, NOW - DAY)  # followed lately: its days have not run out
    add_event(store, quiet, "fact", "fact:a:x:1", at=NOW - 15 * DAY)
    add_event(store, busy, "outlet", "outlet:b", at=NOW - 2 * DAY)
    assert store.end_quiet_follows(NOW, 14) == 1
    assert sorted(f.title for f in store.follows_of(reader)) == ["Busy", "New"]
    ended = store.follow_of(reader, quiet)
    assert ended is not None and ended.end_reason == "quiet"
    # Following it again starts a new follow, after what happened before.
    assert store.follow(reader, quiet, NOW)
    assert store.end_quiet_follows(NOW, 14) == 0
    with store.engine.connect() as conn:
        assert len(conn.execute(select(follows)).all()) == 3


# -- alerts, sent as the service sends them --------------------------------------------------

HOOK = "follower"


@dataclass
class Service:
    """A deployment in `folder` (outbox email, a webhook channel on `receivers`) whose
    subscriber follows a story."""

    folder: Path
    config: Any
    receivers: Receivers
    reader: str
    token: str
    story: int

    def store(self) -> Store:
        return open_store(f"sqlite:///{self.folder / 'digest.db'}")

    def event(self, kind: str, key: str, **kw: Any) -> int:
        with self.store() as store:
            return add_event(store, self.story, kind, key, at=datetime.now(UTC), **kw)

    async def alerts(self, now: datetime | None = None) -> Any:
        async with App(self.config) as app:
            return await send_alerts(app, now)

    def emails(self) -> list[Any]:
        found = []
        for path in sorted((self.folder / "outbox").glob("*.eml")):
            found.append(message_from_bytes(path.read_bytes(), policy=default_policy))
        return found

    def messages(self) -> list[Any]:
        return self.receivers.of(HOOK)


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Service]:
    async with Receivers() as receivers:
        write_config(
            tmp_path,
            email={"from": "digest@news.example.org"},
            channels={"allow_private_networks": True, "timeout": 3.0},
            memory={"follow_days": 14},
        )
        config = load_config(tmp_path / "digest.toml")
        with open_store(f"sqlite:///{tmp_path / 'digest.db'}") as store:
            sub = store.add_subscriber("reader@example.org", categories=None, timezone="UTC")
            prefs = replace(sub.preferences, channels=(receivers.json_url(HOOK),))
            store.save_preferences(sub.email, prefs)
            story = add_story(store)
            add_event(store, story, "fact", "fact:a:dead:12", outlet="A", text="12 dead")
            assert store.follow(sub.email, story, datetime.now(UTC))
        yield Service(tmp_path, config, receivers, sub.email, sub.token, story)


def body(msg: Any) -> str:
    return msg.get_body(("plain",)).get_content()


async def test_a_follower_gets_one_alert_a_run_of_new_facts_and_corrections(service):
    service.event("outlet", "outlet:b", outlet="Outlet B")
    assert await service.alerts() is None  # a new outlet alone: no alert
    assert service.emails() == [] and service.messages() == []

    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="At least 30 people died.")
    service.event("fact", "fact:c:injured:45", outlet="Outlet C", text="45 were injured.")
    report = await service.alerts()
    assert len(report.sent) == 2  # one email, one webhook: one alert for both facts
    (mail,) = service.emails()
    assert mail["To"] == service.reader
    assert "Quake kills 12 in the north" in str(mail["Subject"])
    text = body(mail)
    assert "At least 30 people died. (Outlet B)" in text
    assert "45 were injured. (Outlet C)" in text
    assert "12 dead" not in text  # known before the follow began
    unfollow = f"/unfollow?token={service.token}&story={service.story}"
    assert unfollow in text and unfollow in str(mail["List-Unsubscribe"])
    (hook,) = service.messages()
    assert "At least 30 people died" in hook.message and unfollow in hook.message
    assert hook.message_id  # the same at every re-send

    assert await service.alerts() is None  # nothing new: nothing sent again
    service.event(
        "correction",
        "correction:dead:30:12",
        text="The toll was 12, not 30.",
        detail={
            "subject": "dead",
            "value": "12",
            "previous": "30",
            "edition_day": "2026-12-03",
        },
    )
    # Within `[memory] alert_every` (6 hours) of the first alert, the correction waits.
    assert await service.alerts(datetime.now(UTC) + 5 * HOUR) is None
    await service.alerts(datetime.now(UTC) + 6 * HOUR)
    assert len(service.emails()) == 2 and len(service.messages()) == 2
    (latest,) = [body(m) for m in service.emails() if "Correction" in body(m)]
    assert "Correction: the death toll was 12, not 30, as reported on 3 December." in latest
    assert "At least 30 people died" not in latest  # sent already


async def test_an_alert_links_the_story_page_of_the_newest_edition_that_has_it(service):
    """With `[archive] base_url`, the alert links the story's page (its timeline) in the
    archive: of the newest edition that showed it, not of a later one without it."""
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="At least 30 people died.")
    day = datetime.now(UTC).date()
    with service.store() as store:
        shown = make_edition(day - timedelta(days=2), stories=1, headlines=0)
        first = shown.sections[0]
        story = replace(first.stories[0], id=service.story)
        store.save_edition(replace(shown, sections=(replace(first, stories=(story,)),)))
        store.save_edition(make_edition(day - timedelta(days=1), stories=1, headlines=0))
    base = "https://news.example.org/digest/"
    service.config = service.config.model_copy(
        update={"archive": service.config.archive.model_copy(update={"base_url": base})}
    )
    await service.alerts()
    (mail,) = service.emails()
    page = base + story_path(day - timedelta(days=2), service.story)
    assert f"The story: {page}" in body(mail)
    (hook,) = service.messages()
    assert page in hook.message


async def test_without_an_archive_url_an_alert_has_no_story_link(service):
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="At least 30 people died.")
    await service.alerts()
    (mail,) = service.emails()
    assert "The story:" not in body(mail) and "Stop following this story" in body(mail)


def toll(number: str, qualifier: str = "") -> dict[str, str]:
    """A death toll's detail, as the timeline records a figure."""
    written = f"{qualifier} {number}".strip()
    return {"subject": "dead", "value": written, "number": number, "qualifier": qualifier}


async def test_a_new_outlet_repeating_a_known_figure_is_no_news(service):
    service.event("outlet", "outlet:b", outlet="Outlet B")
    said = "At least 30 people died."
    service.event(
        "fact", "fact:b:dead:30", outlet="Outlet B", text=said, detail=toll("30", "at least")
    )
    await service.alerts()
    assert len(service.emails()) == 1 and len(service.messages()) == 1
    # Outlet D joins and reports the same toll: a fact of D's in the timeline, no news to tell.
    service.event("outlet", "outlet:d", outlet="Outlet D")
    again = "The toll stood at at least 30."
    service.event(
        "fact", "fact:d:dead:30", outlet="Outlet D", text=again, detail=toll("30", "at least")
    )
    later = datetime.now(UTC) + 6 * HOUR  # the next alert may go
    report = await service.alerts(later)
    assert len(report.skipped) == 2 and not report.sent
    assert len(service.emails()) == 1 and len(service.messages()) == 1
    # A figure no one gave before is news again, once: a skipped alert sent nothing, so the
    # next one does not wait for it.
    service.event("fact", "fact:e:dead:45", outlet="Outlet E", text="45 died.", detail=toll("45"))
    await service.alerts(later)
    assert len(service.emails()) == 2 and len(service.messages()) == 2
    assert await service.alerts(later + 6 * HOUR) is None


# And an entity-written scheme, which a renderer would decode back into a link.
HOSTILE_LINKS = (*linkforms.HOSTILE_LINKS, "https&#58;//evil.example/pay")
LEFT_OVER = (*linkforms.LEFT_OVER, "://evil")


async def test_an_alert_carries_no_link_of_the_feed_and_each_line_once(service):
    """Sentences recorded with links (by a version before issue 37): the alert's email and
    channel message tell them without, and two that differ only by their link once."""
    for n, link in enumerate(HOSTILE_LINKS):
        service.event(
            "fact",
            f"fact:relief:{n}",
            outlet="Relief Desk",
            text=f"Relief teams reached {n + 10} villages, donate at {link} today.",
        )
    for n, link in enumerate(HOSTILE_LINKS[:2]):  # the same sentence, another link
        service.event("fact", f"fact:tents:{n}", outlet="Relief Desk", text=f"Send tents: {link}")
    await service.alerts()
    (mail,) = service.emails()
    (hook,) = service.messages()
    for told in (body(mail), hook.message, str(mail["Subject"])):
        assert not [bad for bad in LEFT_OVER if bad in told], told
    text = body(mail)
    assert "Relief teams reached 10 villages, donate at today. (Relief Desk)" in text
    assert text.count("Send tents: (Relief Desk)") == 1
    assert len(re.findall(r"^- Relief teams reached", text, re.M)) == len(HOSTILE_LINKS)


async def test_no_alert_after_unfollowing_or_the_quiet_end(service):
    with service.store() as store:
        assert store.unfollow(service.reader, service.story, datetime.now(UTC))
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="30 dead")
    assert await service.alerts() is None
    assert service.emails() == [] and service.messages() == []

    with service.store() as store:  # follows again, then the story goes quiet for 15 days
        assert store.follow(service.reader, service.story, datetime.now(UTC))
    later = datetime.now(UTC) + timedelta(days=15)
    assert await service.alerts(later) is None
    with service.store() as store:
        ended = store.follow_of(service.reader, service.story)
        assert ended is not None and ended.end_reason == "quiet"
    service.event("fact", "fact:c:dead:31", outlet="Outlet C", text="31 dead")
    assert await service.alerts(later + timedelta(minutes=1)) is None
    assert service.emails() == [] and service.messages() == []


@pytest.mark.slow
async def test_a_failed_alert_is_counted_once_in_status(service):
    service.receivers.fail(HOOK, "400")  # the webhook refuses it for good
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="30 dead")
    report = await service.alerts()
    assert len(report.sent) == 1 and len(report.failed) == 1
    assert await service.alerts() is None  # the failed channel is not retried: the alert is done
    result = await asyncio.to_thread(run_cli, "status", cwd=service.folder)
    assert result.code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("alerts:")]
    assert lines == ["alerts: 0 pending, 0 sending, 1 sent, 1 failed, 0 skipped"]


def alerts_cli(folder: Path, *args: str) -> Any:
    result = run_cli("alerts", *args, cwd=folder)
    assert result.code == 0, result.stderr
    return result


@pytest.mark.slow
async def test_an_operator_re_sends_a_failed_alert_with_the_same_facts(service):
    service.receivers.fail(HOOK, "400")  # refused for good; the email goes
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="At least 30 people died.")
    await service.alerts()
    listed = json.loads((await asyncio.to_thread(alerts_cli, service.folder, "--json")).stdout)
    assert sorted((r["channel"] == "email", r["state"]) for r in listed) == [
        (False, "failed"),
        (True, "sent"),
    ]
    [failed] = [r for r in listed if r["state"] == "failed"]
    assert failed["follower"] == service.reader and failed["title"] == "Quake kills 12 in the north"
    table = (await asyncio.to_thread(alerts_cli, service.folder)).stdout
    assert "failed" in table and "Quake kills 12" in table

    # The operator fixed the webhook: `--resend`, and the next run sends the same alert there.
    result = await asyncio.to_thread(alerts_cli, service.folder, "--resend")
    assert "1 alert message(s) will be sent again by the next run" in result.stdout
    assert service.messages() == []  # refused, so never received
    await service.alerts()
    (again,) = service.messages()
    assert "At least 30 people died" in again.message and "12 dead" not in again.message
    assert len(service.emails()) == 1  # the email went already: not sent twice
    states = {r["state"] for r in json.loads(alerts_cli(service.folder, "--json").stdout)}
    assert states == {"sent"}
    assert await service.alerts() is None  # and it is done


@pytest.mark.slow
async def test_an_operator_abandons_a_stuck_alert(service):
    with service.store() as store:  # email only (the hanging sender takes emails)
        reader = store.subscriber(service.reader)
        store.save_preferences(service.reader, replace(reader.preferences, channels=()))
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="30 dead")
    await asyncio.to_thread(kill_while_sending, service.folder)
    listed = json.loads((await asyncio.to_thread(alerts_cli, service.folder, "--json")).stdout)
    assert "sending" in {r["state"] for r in listed}
    result = await asyncio.to_thread(alerts_cli, service.folder, "--abandon")
    assert "alert message(s) abandoned" in result.stdout
    listed = json.loads(alerts_cli(service.folder, "--json").stdout)
    assert "sending" not in {r["state"] for r in listed}
    assert any("abandoned by the operator" in (r["last_reply"] or "") for r in listed)
    # The alert is closed: the next fact is a new alert, on every channel.
    service.event("fact", "fact:c:dead:31", outlet="Outlet C", text="31 dead")
    report = await service.alerts()
    assert report is not None and len(report.sent) == 1 and not report.stuck
    (mail,) = service.emails()
    assert "31 dead" in body(mail) and "30 dead" not in body(mail)


# -- follow and unfollow on `digest serve` ---------------------------------------------------


@dataclass
class Served:
    """`digest serve` on `port` over `folder`'s store: a subscriber (`token`) and a story."""

    folder: Path
    port: int
    token: str
    story: int

    def url(self, path: str, token: str | None = None, story: Any = None) -> str:
        chosen = self.token if token is None else token
        query = urllib.parse.urlencode(
            {"token": chosen, "story": self.story if story is None else story}
        )
        return f"http://127.0.0.1:{self.port}/{path}?{query}"

    def follows(self) -> list[str]:
        with open_store(f"sqlite:///{self.folder / 'digest.db'}") as store:
            return [f.title for f in store.follows_of("reader@example.org")]


def http(url: str, form: dict[str, str] | None = None, **headers: str) -> tuple[int, str]:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return html.unescape(found.group(1))


TITLE = "Quake kills 12 <script>alert(1)</script> & more"
SHOWN = "Quake kills 12 alert(1) &amp; more"  # one clean line, escaped


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("follow-serve")
    (folder / "site").mkdir()
    (folder / "site" / "index.html").write_text("<!doctype html><title>digest</title><p>archive")
    port = free_port()
    write_config(
        folder,
        email={"preferences_url": f"http://127.0.0.1:{port}/preferences?token={{token}}"},
        serve={"port": port},
    )
    with open_store(f"sqlite:///{folder / 'digest.db'}") as store:
        token = store.add_subscriber("reader@example.org", categories=None, timezone="UTC").token
        story = add_story(store, TITLE)
    server = start_cli("serve", cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                http(f"http://127.0.0.1:{port}/index.html")
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        yield Served(folder, port, token, story)
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.slow
def test_following_asks_on_get_and_follows_on_post(served: Served) -> None:
    status, page = http(served.url("follow"))
    assert status == 200 and "Follow this story" in page
    assert SHOWN in page and "<script>" not in page
    assert served.follows() == []  # a mail scanner opening the link follows nothing
    assert http(served.url("follow"), {"csrf": "1.nope"})[0] == 403
    status, page = http(served.url("follow"), {"csrf": csrf_of(page)})
    assert status == 200 and "You follow" in page
    assert served.follows() == [TITLE]
    # Twice: still one follow.
    status, page = http(served.url("follow"))
    assert "You follow it already" in page
    http(served.url("follow"), {"csrf": csrf_of(page)})
    assert served.follows() == [TITLE]

    # The preferences page lists it, with an unfollow button posting back to it.
    status, page = http(f"http://127.0.0.1:{served.port}/preferences?token={served.token}")
    assert status == 200 and "Stories you follow" in page
    assert SHOWN in page and "<script>" not in page
    action = re.search(r'<form method="post" action="(unfollow\?[^"]+)"', page)
    assert action is not None
    target = f"http://127.0.0.1:{served.port}/{html.unescape(action.group(1))}"
    status, page = http(target, {"csrf": csrf_of(page), "back": "preferences"})
    assert status == 200 and "Stories you follow" in page and "None." in page  # redirected
    assert served.follows() == []


@pytest.mark.slow
def test_unfollowing_from_an_alert_asks_first(served: Served) -> None:
    with open_store(f"sqlite:///{served.folder / 'digest.db'}") as store:
        store.follow("reader@example.org", served.story, datetime.now(UTC))
    status, page = http(served.url("unfollow"))
    assert status == 200 and "Stop following" in page
    assert served.follows() == [TITLE]
    cross = {"Origin": "https://evil.example"}
    assert http(served.url("unfollow"), {"csrf": csrf_of(page)}, **cross)[0] == 403
    status, page = http(served.url("unfollow"), {"csrf": csrf_of(page)})
    assert status == 200 and "You no longer follow" in page
    assert served.follows() == []


@pytest.mark.slow
def test_wrong_tokens_and_missing_stories_are_refused_plainly(served: Served) -> None:
    for path in ("follow", "unfollow"):
        assert http(served.url(path, token="nope"))[0] == 404
        assert http(served.url(path, token=""))[0] == 404
        assert http(served.url(path, token="nope"), {"csrf": "x"})[0] == 404
        status, page = http(served.url(path, story=999_999))
        assert status == 404 and "There is no such story here" in page
        assert http(served.url(path, story="1e3"))[0] == 404


@pytest.mark.slow
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.lists(
        st.tuples(st.sampled_from(["token", "story", "csrf", "x"]), st.text(max_size=30)),
        max_size=4,
    ),
    path=st.sampled_from(["follow", "unfollow"]),
    post=st.booleans(),
    known=st.booleans(),
)
def test_hostile_query_strings_never_break_the_server(
    served: Served, query: list[tuple[str, str]], path: str, post: bool, known: bool
) -> None:
    if known:  # the real token, so that the story and the form are what is hostile
        query = [("token", served.token), *query]
    url = f"http://127.0.0.1:{served.port}/{path}?{urllib.parse.urlencode(query)}"
    status, _ = http(url, {"csrf": "1.x", "story": "1"} if post else None)
    assert status in (200, 303, 400, 403, 404)


# -- follow links in the email ---------------------------------------------------------------


def test_each_story_in_the_email_has_its_readers_own_follow_link() -> None:
    # The parts are rendered once and shared: each reader's token in their own links only.
    ed = mailfixtures.edition()
    ids = [story.id for section in ed.sections for story in section.stories]
    for mine, other in (("ann", "bob"), ("bob", "ann")):
        msg = build_message(
            ed,
            Recipient(f"{mine}@example.com"),
            mailfixtures.CONFIG,
            archive_url=None,
            unsubscribe_url=f"https://news.example.org/u?t={mine}",
            follow_url=f"https://news.example.org/follow?token={mine}&story={{story}}",
        )
        parsed = message_from_bytes(msg.as_bytes(), policy=default_policy)
        text = parsed.get_body(("plain",)).get_content()
        page = parsed.get_body(("html",)).get_content()
        for story in ids:
            link = f"https://news.example.org/follow?token={mine}&story={story}"
            assert f"Follow this story: {link}" in text
            assert f'href="{html.escape(link)}"' in page
        assert text.count("Follow this story") == len(ids)
        assert f"token={other}" not in text and f"token={other}" not in page
        assert "slot.invalid" not in text and "slot.invalid" not in page


@pytest.mark.parametrize("budget", [COMPACT_CHARS, 1000])
def test_each_story_in_a_chat_message_has_its_readers_own_follow_link(budget: int) -> None:
    # Rendered once per copy and shared, as the email: each reader's token in their links only.
    ed = mailfixtures.edition()
    for mine, other in (("ann", "bob"), ("bob", "ann")):
        _, markdown, text = render_notification(
            ed,
            title="Morning digest",
            archive=None,
            preferences=f"https://news.example.org/p?t={mine}",
            budget=budget,
            follow=f"https://news.example.org/follow?token={mine}&story={{story}}",
        )
        shown = [s.id for sec in ed.sections for s in sec.stories if s.title[:30] in text]
        assert shown  # the stories that fit, each with its link
        for story in shown:
            link = f"https://news.example.org/follow?token={mine}&story={story}"
            assert f"Follow this story: {link}" in text
            assert f"[Follow this story]({link})" in markdown
        assert text.count("Follow this story") == len(shown)
        assert len(markdown) <= budget and len(text) <= budget
        assert f"token={other}" not in text + markdown and "slot.invalid" not in text + markdown
    # Without a follow link (none configured for the reader): none in the message.
    _, markdown, text = render_notification(
        ed, title="Morning digest", archive=None, preferences="https://news.example.org/p"
    )
    assert "Follow this story" not in markdown + text


def test_a_follow_link_must_name_the_reader_and_the_story() -> None:
    with pytest.raises(ValidationError, match="story"):
        MemoryConfig(follow_url="https://news.example.org/follow?token={token}")


# -- kill -9 while an alert is being sent ----------------------------------------------------

HANGING_SENDER = """
import asyncio, sys
from pathlib import Path

from digest.app import App
from digest.config import load_config
from digest.jobs.alerts import send_alerts

folder = Path(sys.argv[1])


class Hang:
    # Takes the first message and never answers: the process is killed mid-send.
    def scope(self, msg):
        return "mail"

    async def send(self, msg):
        (folder / "sending").write_text(str(msg["To"]))
        await asyncio.sleep(3600)

    async def aclose(self):
        pass


App.channels = lambda self: Hang()


async def main():
    async with App(load_config(folder / "digest.toml")) as app:
        await send_alerts(app)


asyncio.run(main())
"""


def kill_while_sending(folder: Path) -> str:
    """Send the alerts owed in a process of their own, SIGKILL it while the first is being
    sent; to whom that one was going."""
    script = folder / "hanging_sender.py"
    script.write_text(HANGING_SENDER, encoding="utf-8")
    quiet = subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, str(script), str(folder)],
        cwd=folder,
        env=cli_env(),
        stdout=quiet,
        stderr=quiet,
    )
    try:
        deadline = time.monotonic() + 60
        while not (folder / "sending").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    return (folder / "sending").read_text()


@pytest.mark.slow
async def test_kill_9_while_sending_an_alert_doubles_nothing(service):
    now = datetime.now(UTC)
    with service.store() as store:  # two followers, by email only
        reader = store.subscriber(service.reader)
        store.save_preferences(service.reader, replace(reader.preferences, channels=()))
        other = store.add_subscriber("second@example.org", categories=None, timezone="UTC").email
        store.follow(other, service.story, now)
    service.event("fact", "fact:b:dead:30", outlet="Outlet B", text="30 dead")
    hung = await asyncio.to_thread(kill_while_sending, service.folder)
    waiting = other if hung == service.reader else service.reader

    report = await service.alerts()  # the restart
    assert [str(m["To"]) for m in service.emails()] == [waiting]  # the one never claimed
    assert [r.state for r in report.stuck] == ["sending"]  # reported, not sent again
    service.event("fact", "fact:c:dead:31", outlet="Outlet C", text="31 dead")
    later = datetime.now(UTC) + 6 * HOUR  # `[memory] alert_every` after the first
    await service.alerts(later)
    await service.alerts(later)
    sent_to = [str(m["To"]) for m in service.emails()]
    assert sent_to.count(waiting) == 2 and hung not in sent_to  # no second alert while stuck
    result = await asyncio.to_thread(run_cli, "status", cwd=service.folder)
    assert "alerts: 0 pending, 1 sending, 2 sent, 0 failed, 0 skipped" in result.stdout


hostile_sentences = st.lists(
    st.sampled_from(["Relief", "teams", "reached", "14", "villages.", "donate", "at"])
    | st.sampled_from(HOSTILE_LINKS),
    min_size=1,
    max_size=6,
).map(" ".join)


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["fact", "correction"]),
            hostile_sentences,
            st.sampled_from(["", "Relief Desk", "Daily Planet"]),
        ),
        max_size=30,
    )
)
def test_an_alerts_lines_are_its_events_each_once_none_lost_and_without_links(
    told: list[tuple[str, str, str]],
) -> None:
    from digest.deliver.follow_alert import MAX_LINES, alert_text, event_line
    from digest.models import StoryEvent

    events = [
        StoryEvent(n + 1, 1, kind, NOW, NOW, outlet=outlet, text=text)
        for n, (kind, text, outlet) in enumerate(told)
    ]
    alert = alert_text("Quake", events, unfollow_url="https://news.example.org/unfollow?t=1")
    lines = [line[2:] for line in alert.text.splitlines() if line.startswith("- ")]
    more = [line for line in lines if re.fullmatch(r"and \d+ more", line)]
    lines = [line for line in lines if line not in more]
    in_order = sorted(events, key=lambda e: e.kind != "correction")  # corrections first
    wanted = list(dict.fromkeys(x for e in in_order if (x := event_line(e))))
    assert lines == wanted[:MAX_LINES] and len(lines) == len(set(lines))
    assert more == ([f"and {len(wanted) - MAX_LINES} more"] if len(wanted) > MAX_LINES else [])
    assert not [bad for bad in LEFT_OVER if bad in alert.text + alert.markdown]


def test_an_archive_story_page_says_how_to_follow_it(tmp_path: Path) -> None:
    # The archive is public and static: no one is known there, so no button, no address form.
    edition = make_edition(date(2026, 11, 29))
    write_archive([edition], ArchiveConfig(title="Morning digest"), tmp_path, now=NOW)
    story = edition.sections[0].stories[0]
    page = (tmp_path / story_path(edition.day, story.id)).read_text("utf-8")
    assert "use the \u201cFollow this story\u201d link under it in your digest" in page
    assert "<form" not in page and "token" not in page


# -- end to end: the two days of issue 31 through deepen and publish, with a follower -------


def alert_mails(outbox: Path) -> list[str]:
    """The alerts in the outbox (not the editions), as their plain text, in no set order."""
    found = []
    for path in outbox.glob("*.eml"):
        msg = message_from_bytes(path.read_bytes(), policy=default_policy)
        if str(msg["Message-ID"]).startswith("<follow-"):
            found.append(body(msg))
    return found


@pytest.mark.slow
async def test_a_follower_of_a_developing_story_gets_each_new_fact_once(
    tmp_path, monkeypatch, threaded_news_web, threaded_llm_server
) -> None:
    from digest.jobs.deepen import deepen
    from digest.jobs.publish import publish
    from tests import test_story_memory as memory

    web, llm = threaded_news_web, threaded_llm_server
    monkeypatch.setenv("TEST_LLM_KEY", "k")
    days = memory.Days(monkeypatch)
    outbox = tmp_path / "outbox"
    config = parse_config(
        {
            "database": {"url": f"sqlite:///{tmp_path / 'digest.db'}"},
            "sources": {"categories": ["world"], "ddg": False},
            "fetch": {"allowed_networks": ["127.0.0.1/32"]},
            "crawl": {"mode": "http", "respect_robots": False},
            "schedule": {"timezone": "UTC"},
            "archive": {"dir": str(tmp_path / "site"), "title": "Morning digest"},
            "email": {"outbox_dir": str(outbox)},
            "llm": {**llm.config(api_key_env="TEST_LLM_KEY", timeout=10.0).model_dump()},
        }
    )

    def article(key: str, lede: str, when: datetime, title: str) -> Item:
        path, outlet = f"/world/quake-{key}.html", key.upper()
        web.add(Route(path, memory.quake_page(key, title, lede)))
        return storefixtures.item(
            web.url(path, site=0),
            title=title,
            lede=lede,
            category="world",
            published=when,
            source=outlet,
        )

    # Day 1: A reports 12 dead; the edition goes out with a follow link under the story.
    days.on_day1()
    day1_at = datetime.combine(days.day1, clock(20), UTC)
    async with App(config) as app:
        store = await app.store()
        reader = store.add_subscriber(memory.READER, categories=None, timezone="UTC")
        store.upsert_items(
            [article("a", memory.A_DAY1, day1_at, memory.QUAKE_TITLE.format(12))],
            seen_at=day1_at + timedelta(minutes=30),
        )
        await deepen(app)
        memory.a_day_later(tmp_path / "digest.db", days.day1)
        assert (await publish(app, days.day1)).status == "ok"
        [story_id] = [s.id for sec in store.edition(days.day1).sections for s in sec.stories]
        text, _ = email_parts(outbox, days.day1)
        link = f"/follow?token={reader.token}&story={story_id}"
        assert f"Follow this story: http://localhost:8000{link}" in text
        # The reader follows it (the link's POST, as `digest serve` does it).
        assert store.follow(reader.email, story_id, datetime.now(UTC))

    # Day 2: B and C report "at least 30"; A updated its article to 30.
    days.on_day2()
    day2_at = min(datetime.combine(days.day2, clock(0, 30), UTC), days.real)
    async with App(config) as app:
        store = await app.store()
        store.upsert_items(
            [
                article("a", memory.A_DAY2, day1_at, memory.QUAKE_TITLE.format(30)),
                article("b", memory.B_LEDE, day2_at, memory.QUAKE_TITLE.format("at least 30")),
                article("c", memory.C_LEDE, day2_at, memory.QUAKE_TITLE.format("at least 30")),
            ],
            seen_at=day2_at,
        )
        await deepen(app)
        (first,) = alert_mails(outbox)  # one alert for the run, whatever it learned
        assert "At least 30 people were killed" in first and "(B)" in first
        assert "12" not in first.split("Stop following")[0].replace("Valdoria kills 12", "")
        await deepen(app)  # again (or after a restart): nothing new, nothing sent
        assert len(alert_mails(outbox)) == 1

        # Six hours on (`[memory] alert_every`: the next alert waits for that long).
        from digest.jobs import alerts as alerts_module

        later = datetime.now(UTC) + timedelta(hours=6)

        class Later(datetime):
            @classmethod
            def now(cls, tz=None):  # type: ignore[override]
                return later

        monkeypatch.setattr(alerts_module, "datetime", Later)
        assert (await publish(app, days.day2)).status == "ok"  # the correction of "12"
        second = [m for m in alert_mails(outbox) if m != first]
        assert len(second) == 1
        assert "Update: the death toll is now 30, up from 12" in second[0]
        assert (await publish(app, days.day2)).edition_state == "unchanged"
        assert len(alert_mails(outbox)) == 2

"""A hostile feed against a story's followers (issue 37): one item an hour under a made-up
outlet name, each with a new figure and a link. Hourly runs over the faked clock (as
`tests/test_story_memory.py` fakes it): the follower gets one alert in 6 hours, holding every
new fact once, and no link the feed wrote."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.policy import default as default_policy
from email.utils import format_datetime
from html import escape
from pathlib import Path

import pytest

from digest.app import App
from digest.config import parse_config
from digest.jobs.collect import collect
from digest.jobs.deepen import deepen
from tests.linkforms import HOSTILE_LINKS, LEFT_OVER
from tests.newsweb import Article, Route, render_article

HOUR = timedelta(hours=1)
RSS = "application/rss+xml"
READER = "reader@example.org"
TITLE = "Earthquake in northern Valdoria kills 12 people"
A_LEDE = "An earthquake killed 12 people in northern Valdoria on Monday, officials said."
MORE = (
    "Rescue teams worked through the night in the mountain villages near the epicentre.",
    "The regional government opened shelters in schools and sports halls for those displaced.",
)
LINKS = HOSTILE_LINKS
# What the hostile outlet reports each hour: a figure no one gave before (a quantity of
# `figures.QUANTITIES`: since issue 38 "300 tents" is no figure), and a link.
HOURLY = (
    "Relief teams rescued 14 people near the epicentre, donate at {link} today.",
    "Volunteers evacuated 300 people from the mountain valleys, details at {link} for donors.",
    "Doctors treated 85 injured in the field hospital overnight, write to {link} to help.",
    "Engineers said 40 people are missing along the northern road, updates at {link} for donors.",
    "Police arrested 60 looters at the shelters in the north, see {link} for more.",
    "Officials said 25 people were displaced in the northern valleys, see {link} for more.",
    "Pilots flew 9 hostages out of the northern valleys, see {link} for more.",
)


class Clock:
    """The runs' clock: deepen's (its story summaries' too) and the alerts' `datetime.now` answer
    `now`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, start: datetime) -> None:
        from digest.jobs import alerts, deepen, story_summary

        self.now = start
        clock = self

        class Faked(datetime):
            @classmethod
            def now(cls, tz=None):  # type: ignore[override]
                return clock.now

        for module in (deepen, story_summary, alerts):
            monkeypatch.setattr(module, "datetime", Faked)


def feed(title: str, items: list[tuple[str, str, datetime]]) -> bytes:
    entries = "".join(
        f"<item><title>{escape(t)}</title><link>{url}</link><guid>{url}</guid>"
        f"<pubDate>{format_datetime(when)}</pubDate></item>"
        for t, url, when in items
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{title}'
        f"</title><link>http://127.0.0.1/</link><description>News</description>{entries}"
        "</channel></rss>"
    ).encode()


def page(slug: str, title: str, lede: str) -> bytes:
    return render_article(
        Article(slug, "world", title, lede, MORE, "A quake in Valdoria."), script_bytes=2_000
    )


def alert_mails(outbox: Path) -> list[str]:
    """The alerts' plain text, oldest first."""
    found = []
    for path in outbox.glob("*.eml"):
        msg = message_from_bytes(path.read_bytes(), policy=default_policy)
        if str(msg["Message-ID"]).startswith("<follow-"):
            found.append((path.stat().st_mtime_ns, msg.get_body(("plain",)).get_content()))
    return [text for _, text in sorted(found)]


def listed(alert: str) -> list[str]:
    return [line[2:] for line in alert.splitlines() if line.startswith("- ")]


@pytest.mark.slow
async def test_a_feed_adding_an_item_an_hour_sends_a_follower_one_alert_in_6_hours(
    tmp_path, monkeypatch, threaded_news_web
) -> None:
    web = threaded_news_web
    outbox = tmp_path / "outbox"
    config = parse_config(
        {
            "database": {"url": f"sqlite:///{tmp_path / 'digest.db'}"},
            "sources": {
                "categories": ["world"],
                "ddg": False,
                "feeds": [
                    {"url": web.url("/feeds/flood-a.rss"), "category": "world", "name": "A"},
                    # No name: the feed's own title is the outlet, made up.
                    {"url": web.url("/feeds/flood-relief.rss"), "category": "world"},
                ],
            },
            "fetch": {"allowed_networks": ["127.0.0.1/32"]},
            "crawl": {"mode": "http", "respect_robots": False},
            "schedule": {"timezone": "UTC"},
            "email": {"outbox_dir": str(outbox)},
        }
    )
    start = datetime.now(UTC).replace(microsecond=0)
    clock = Clock(monkeypatch, start)
    a_url = web.url("/world/flood-a.html")
    web.add(Route("/world/flood-a.html", page("flood-a", TITLE, A_LEDE)))
    web.add(Route("/feeds/flood-a.rss", feed("A", [(TITLE, a_url, start - HOUR)]), RSS))
    web.add(Route("/feeds/flood-relief.rss", feed("Valdoria Relief Desk", []), RSS))
    items: list[tuple[str, str, datetime]] = []

    async def hourly_run(hour: int, app: App, after: Callable[[], None] = lambda: None) -> None:
        """The hostile feed adds its item of `hour`; collect and deepen run (as the daemon's
        hourly collection does, deepen sending the alerts)."""
        clock.now = start + hour * HOUR + timedelta(minutes=10)
        slug = f"flood-relief-{hour}"
        lede = f"{A_LEDE} {HOURLY[hour].format(link=LINKS[hour % len(LINKS)])}"
        web.add(Route(f"/world/{slug}.html", page(slug, f"{TITLE}, relief desk says", lede)))
        items.append((f"{TITLE}, relief desk says", web.url(f"/world/{slug}.html"), clock.now))
        web.add(Route("/feeds/flood-relief.rss", feed("Valdoria Relief Desk", items), RSS))
        assert (await collect(app)).status == "ok"
        await deepen(app)

    async with App(config) as app:
        store = await app.store()
        store.add_subscriber(READER, categories=None, timezone="UTC")
        assert (await collect(app)).status == "ok"
        await deepen(app)
        [story] = store.stories_since(None, since=start - 2 * HOUR)
        assert store.follow(READER, story.id, clock.now)

        sent_by_hour = []
        for hour in range(6):
            await hourly_run(hour, app)
            sent_by_hour.append(len(alert_mails(outbox)))
        # Six hourly runs, each with a new fact: one alert.
        assert sent_by_hour[-1] == 1, sent_by_hour
        # Six hours after it, the next: what the five later runs learned, merged.
        await hourly_run(6, app)
        alerts = alert_mails(outbox)
        assert len(alerts) == 2, len(alerts)

    lines = [line for alert in alerts for line in listed(alert)]
    assert len(lines) == len(set(lines)), lines  # no line twice, in one alert or across them
    for n, told in enumerate(HOURLY):
        words = told.split(" at ")[0].split(", ")[0]  # "Relief teams reached 14 villages ..."
        assert sum(words in line for line in lines) == 1, (n, lines)  # each fact once
    for alert in alerts:
        assert not any(bad in alert for bad in LEFT_OVER), alert

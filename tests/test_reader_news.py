"""What is new, per reader: a story in a reader's copy is told against the last edition THAT
reader received (`novelty.for_reader`, `reader_plan.news_for`): never sent to them, the whole
story; nothing new since, not repeated; updated, only what is new since then, once."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.app import App
from digest.config import load_config
from digest.edition.reader_plan import History, news_for
from digest.jobs.collect import collect
from digest.jobs.deepen import deepen
from digest.jobs.publish import publish
from digest.models import (
    Correction,
    Edition,
    EditionSection,
    EditionStory,
    Outlet,
    StoryEvent,
    Subscriber,
)
from digest.render.chat import render_notification
from digest.render.corrections import short_day as day_month
from digest.render.email import render_email, since_last
from digest.render.templating import long_date
from digest.stories.novelty import Seen, Telling, for_reader, last_seen, outlet_key
from digest.subscribers.preferences import Preferences
from digest.summarize.translate import translate_editions
from tests.configs import write_config
from tests.linkforms import HOSTILE_LINKS, LEFT_OVER
from tests.newsweb import Article, NewsWeb, Route, render_article, render_rss
from tests.smtpserver import SmtpServer, _Handler
from tests.test_whats_new import plain

DAY1 = date(2026, 12, 1)
DAYS = [DAY1 + timedelta(days=n) for n in range(6)]
NAMES = ["Harbor Times", "Coast Post", "Wire Service", "Metro Wire", "Daily Ledger", "Reuters"]
LEDES = {
    "Harbor Times": "The Vetra river dam burst on Monday night and flooded three villages.",
    "Coast Post": "A dam on the Vetra river burst late on Monday, flooding three villages.",
    "Wire Service": "Inspectors had warned the regional government in March that the "
    "spillway was blocked.",
    "Metro Wire": "The regional water minister Lena Ostrova resigned on Wednesday over the "
    "failure.",
    "Daily Ledger": "Insurers estimate the damage to farms and roads at 80 million euros.",
    "Reuters": "Volunteers from neighbouring towns filled sandbags along the lower valley.",
}


def built(day: date) -> datetime:
    return datetime.combine(day, time(7), UTC)


def outlet(name: str) -> Outlet:
    return Outlet(name=name, url=f"https://www.{name.lower().replace(' ', '')}.example/dam")


def story(names: list[str], **changes: object) -> EditionStory:
    base = EditionStory(
        id=7,
        category="world",
        title="Vetra river dam bursts, flooding three villages",
        brief_summary="The Vetra river dam burst and flooded three villages.",
        summary="The Vetra river dam burst on Monday night and flooded three villages.",
        keywords=("dam",),
        summarizer="extractive",
        outlets=tuple(outlet(n) for n in names),
        first_seen=built(DAY1) - timedelta(hours=3),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def tellings(joined_on: dict[str, date]) -> list[Telling]:
    """Each outlet's article, first seen the day (before 7:00) it joined the story."""
    return [
        Telling(outlet_key(outlet(n)), LEDES[n], built(d) - timedelta(hours=2))
        for n, d in joined_on.items()
    ]


outlet_days = st.lists(
    st.sampled_from(NAMES), min_size=1, max_size=len(NAMES), unique=True
).flatmap(
    lambda names: st.tuples(
        st.just(names), st.lists(st.sampled_from(DAYS), min_size=len(names), max_size=len(names))
    )
)


@given(outlet_days, st.booleans())
def test_a_story_never_sent_to_a_reader_is_always_the_whole_story(found, had_news) -> None:
    names, days = found
    today = story(names, whats_new=None)
    if had_news:  # the edition's own line, told against an edition this reader did not get
        seen = Seen(DAY1, built(DAY1), story(names[:1]))
        joined = dict(zip(names, days, strict=True))
        told = for_reader(today, seen, tellings=tellings(joined))
        today = replace(today, whats_new=told.whats_new if told else None)
    shown = for_reader(today, None, tellings=tellings(dict(zip(names, days, strict=True))))
    assert shown == replace(today, whats_new=None)
    assert shown.summary == today.summary
    assert since_last(shown.whats_new) is None


@given(outlet_days, st.sampled_from(DAYS))
def test_nothing_new_since_the_readers_last_edition_is_not_repeated(found, day) -> None:
    names, _ = found
    # Every outlet and article was there when the edition they received was built.
    joined = dict.fromkeys(names, DAY1)
    seen = Seen(day, built(day), story(names))
    assert for_reader(story(names), seen, tellings=tellings(joined)) is None
    # ... and stays so with timeline facts and corrections they were already told.
    fact = StoryEvent(1, 7, "fact", built(day), built(day), outlet="Coast Post", text="Old.")
    told = Correction("dead", "12", "30", DAY1, "12 people died.")
    old = replace(story(names), corrections=(told,))
    again = replace(story(names), timeline=(fact,), corrections=(told,))
    assert for_reader(again, Seen(day, built(day), old), tellings=tellings(joined)) is None


received_editions = st.dictionaries(
    st.sampled_from(DAYS[:-1]), st.tuples(st.booleans(), st.booleans()), min_size=1
)


@given(received_editions)
def test_the_since_day_is_the_last_edition_the_reader_received_that_carried_it(editions) -> None:
    """Of the earlier editions (each: did it carry the story, did this reader receive it), the
    story is told against the latest one both received and carrying it: never a later one, and
    never one they did not get."""
    today = DAYS[-1]
    received = [
        (d, built(d), [story(NAMES[:2])] if carried else [])
        for d, (carried, got) in sorted(editions.items())
        if got
    ]
    expected = max((d for d, (carried, got) in editions.items() if carried and got), default=None)
    seen = last_seen(7, received)
    assert (seen.day if seen else None) == expected
    joined = {"Harbor Times": DAY1, "Coast Post": DAY1, "Wire Service": today}
    shown = for_reader(story([*NAMES[:3]]), seen, tellings=tellings(joined))
    assert shown is not None
    if expected is None:
        assert shown.whats_new is None
    else:
        assert shown.whats_new is not None and shown.whats_new.since == expected
        assert [o.name for o in shown.whats_new.outlets] == ["Wire Service"]


# -- a reader's copy of three days ---------------------------------------------------------------


def edition(day: date, *stories: EditionStory) -> Edition:
    return Edition(day, "UTC", (EditionSection("world", tuple(stories), ()),), built(day))


def reader(email: str) -> Subscriber:
    return Subscriber(email, "token", built(DAY1), Preferences(timezone="UTC"))


MUSEUM = EditionStory(
    id=9,
    category="world",
    title="City museum reopens its glass hall after restoration",
    brief_summary="The museum reopened its glass hall.",
    summary="The museum reopened its glass hall after a two-year restoration.",
    keywords=(),
    summarizer="extractive",
    outlets=(outlet("Daily Ledger"),),
    first_seen=built(DAY1),
)
DAY2, DAY3 = DAYS[1], DAYS[2]
# A subject the catalogue names (`digest.messages.SUBJECTS`): "the villages flooded" would be a
# word of the page shown as a subject, and gets no line (issue 38).
CORRECTION = Correction("evacuated", "300", "250", DAY1, "Some 300 people were evacuated.")
CORRECTED = "Correction: the number evacuated was 250, not 300, as reported on 1 December."


def three_days() -> tuple[History, Edition]:
    day1 = edition(DAY1, story(["Harbor Times", "Coast Post"]), MUSEUM)
    day2 = edition(DAY2, story(["Harbor Times", "Coast Post", "Wire Service"]))
    today = edition(
        DAY3,
        story(
            ["Harbor Times", "Coast Post", "Wire Service", "Metro Wire"],
            corrections=(CORRECTION,),
        ),
        MUSEUM,
    )
    joined = {"Harbor Times": DAY1, "Coast Post": DAY1, "Wire Service": DAY2, "Metro Wire": DAY3}
    history = History(
        editions={DAY1: day1, DAY2: day2},
        received={
            "steady@example.org": frozenset({DAY1, DAY2}),
            "away@example.org": frozenset({DAY1}),  # their day-2 email was refused
        },
        tellings={7: tuple(tellings(joined)), 9: ()},
    )
    return history, today


def stories(copy: Edition) -> dict[int, EditionStory]:
    return {s.id: s for section in copy.sections for s in section.stories}


def test_a_reader_who_missed_day_2_gets_the_changes_since_day_1_once() -> None:
    history, today = three_days()
    away = stories(news_for(today, reader("away@example.org"), history))
    steady = stories(news_for(today, reader("steady@example.org"), history))
    new = stories(news_for(today, reader("new@example.org"), history))

    assert 9 not in away and 9 not in steady  # the museum: nothing new since day 1
    assert new[9] == MUSEUM and new[7].whats_new is None  # never sent anything: all of it

    news = away[7].whats_new
    assert news is not None and news.for_reader and news.since == DAY1
    assert [o.name for o in news.outlets] == ["Wire Service", "Metro Wire"]
    assert [f.text for f in news.facts] == [LEDES["Wire Service"], LEDES["Metro Wire"]]
    assert news.corrections == (CORRECTION,)  # they were sent "three" on day 1

    news = steady[7].whats_new
    assert news is not None and news.since == DAY2
    assert [o.name for o in news.outlets] == ["Metro Wire"]
    assert [f.text for f in news.facts] == [LEDES["Metro Wire"]]


def test_a_correction_already_carried_by_an_edition_the_reader_got_is_not_repeated() -> None:
    history, today = three_days()
    day2 = history.editions[DAY2]
    told = edition(DAY2, replace(day2.sections[0].stories[0], corrections=(CORRECTION,)))
    history = replace(history, editions={**history.editions, DAY2: told})
    steady = stories(news_for(today, reader("steady@example.org"), history))[7].whats_new
    away = stories(news_for(today, reader("away@example.org"), history))[7].whats_new
    assert steady is not None and steady.corrections == ()
    assert away is not None and away.corrections == (CORRECTION,)  # the day-2 one they missed


def test_the_updated_story_reads_since_your_last_digest_in_chat_too() -> None:
    history, today = three_days()
    copy = news_for(today, reader("away@example.org"), history)
    _, markdown, text = render_notification(
        copy, title="Digest", archive="https://news.example.org/", preferences="https://p.example/"
    )
    for body in (markdown, text):
        flat = " ".join(body.split()).replace("\\", "")
        assert "Since your last digest (1 December): New: Wire Service, Metro Wire" in flat
        assert CORRECTED in flat
        assert "glass hall" not in flat
        assert "Vetra river dam burst and flooded" not in flat  # not the whole brief again


def test_a_spanish_reader_reads_the_correction_in_spanish_in_chat() -> None:
    """The service's line is in the reader's language (issue 38); the story's own text is
    as written (no LLM here)."""
    history, today = three_days()
    copy = news_for(today, reader("away@example.org"), history)
    _, markdown, text = render_notification(
        copy,
        title="Digest",
        archive="https://news.example.org/",
        preferences="https://p.example/",
        language="es",
    )
    for body in (markdown, text):
        flat = " ".join(body.split()).replace("\\", "")
        assert (
            "Corrección: el número de evacuados era de 250, no de 300, como se informó el "
            "1 de diciembre." in flat
        )
        assert CORRECTED not in flat


# -- end to end: three days of collect, deepen and publish on the local news web ----------------

# The clock the service reads (`datetime.now` in the jobs and the store): these days at 9:00
# UTC, moving on with the real one within a day.
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
STEADY, AWAY = "alice@example.org", "bob@example.org"

# The dam story: two outlets on day 1, a third on day 2 with a fact, a fourth on day 3 with
# another; the museum story: one outlet on day 1, the same outlet again on day 3 saying nothing
# new. A wire headline, told alike by every outlet: clustering joins a report of the next day
# to its story only when it is told alike (`digest.stories.cluster`, "Time").
# (publisher, slug, title, lede)
DAM_1 = [
    (
        "Harbor Times",
        "dam-harbor",
        "Vetra river dam bursts, flooding three villages",
        "The Vetra river dam burst on Monday night, flooding three villages downstream. "
        "Rescue teams evacuated 400 residents from their homes.",
    ),
    (
        "Coast Post",
        "dam-coast",
        "Vetra river dam bursts and floods three villages",
        "A dam on the Vetra river burst late on Monday and flooded three villages downstream. "
        "About 400 residents were evacuated by rescue teams.",
    ),
]
DAM_2 = (
    "Wire Service",
    "dam-wire",
    "Vetra river dam bursts, flooding three villages",
    "The Vetra river dam burst after flooding three villages downstream. "
    "Inspectors had warned the regional government in March that the spillway was blocked.",
)
DAM_3 = (
    "Metro Wire",
    "dam-metro",
    "Vetra river dam bursts, flooding three villages",
    "The Vetra river dam burst flooded three villages downstream this week. "
    "The regional water minister Lena Ostrova resigned on Wednesday over the failure.",
)
MUSEUM_1 = (
    "Daily Ledger",
    "museum",
    "City museum reopens its glass hall after restoration",
    "The city museum reopened its glass hall after a two-year restoration of the roof. "
    "Visitors queued around the block on the first morning.",
)
MUSEUM_3 = (
    "Daily Ledger",
    "museum-again",
    "City museum reopens its glass hall after restoration",
    "The city museum reopened its glass hall after a two-year restoration of its roof. "
    "Visitors queued around the block on the first morning.",
)
WIRE_FACT = "Inspectors had warned the regional government in March that the spillway was blocked."
METRO_FACT = "The regional water minister Lena Ostrova resigned on Wednesday over the failure."


class _Clock(datetime):
    """`datetime` whose `now` is the test's day: START, plus the real time gone by, plus
    `days`."""

    days = 0
    began = datetime.now(UTC)

    @classmethod
    def now(cls, tz=None):  # type: ignore[no-untyped-def, override]
        at = START + (datetime.now(UTC) - cls.began) + timedelta(days=cls.days)
        return at if tz is None else at.astimezone(tz)


# The modules whose `datetime.now` is the service's clock in collect, deepen and publish. Only
# these: a module whose annotations name `datetime` (the models) must keep the real one, or the
# edition codec would learn `_Clock` as the type of a date.
CLOCKED = (
    "digest.jobs.collect",
    "digest.jobs.deepen",
    "digest.jobs.story_summary",
    "digest.jobs.publish",
    "digest.sources.feeds",
    "digest.store.base",
    "digest.render.archive",
)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> type[_Clock]:
    import importlib

    for name in CLOCKED:
        module = importlib.import_module(name)
        assert module.datetime is datetime, name
        monkeypatch.setattr(module, "datetime", _Clock)
    monkeypatch.setattr(_Clock, "began", datetime.now(UTC))
    return _Clock


class _Refusing(_Handler):
    """The test SMTP server's handler, refusing the recipients in `refused` (550, no such
    user), as a mailbox that is gone."""

    def __init__(self, owner: SmtpServer) -> None:
        super().__init__(owner)
        self.refused: set[str] = set()

    async def handle_RCPT(self, server, session, envelope, address, options):  # type: ignore[no-untyped-def]
        if address in self.refused:
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"
        return await super().handle_RCPT(server, session, envelope, address, options)


def smtp_config(port: int) -> dict[str, Any]:
    return {
        "transport": "smtp",
        "host": "127.0.0.1",
        "port": port,
        "security": "none",
        "from": "digest@example.org",
    }


def _article(slug: str, title: str, lede: str, when: datetime) -> Article:
    return Article(
        slug=slug,
        category="world",
        title=title,
        lede=lede,
        paragraphs=("Officials said more details would follow later in the day.",),
        description=lede,  # as many outlets' pages do: what collect reads as the lede
        published=when,
    )


def _emails(smtp: SmtpServer) -> dict[tuple[str, str], str]:
    """The emails received, by (recipient, subject's day), their plain text flattened."""
    out = {}
    for r in smtp.received:
        message = r.message()
        body = message.get_body(("plain",))
        assert body is not None
        out[(r.rcpt_tos[0], str(message["Subject"]))] = " ".join(body.get_content().split())
    return out


@pytest.mark.slow  # three days of collect, deepen and publish
async def test_three_days_a_reader_who_missed_day_2_gets_day_1_to_3_once(
    tmp_path: Path, news_web: NewsWeb, clock: type[_Clock]
) -> None:
    web = news_web
    base = web.url("")
    # Each outlet's own feed, named after it; on each day, that day's articles.
    publishers = sorted({p for p, *_ in [*DAM_1, DAM_2, DAM_3, MUSEUM_1]})
    feeds = {
        p: web.add(Route(f"/feeds/{p.lower().replace(' ', '-')}.rss", b"")) for p in publishers
    }

    def publish_feed(told: list[tuple[str, str, str, str]]) -> None:
        when = _Clock.now(UTC) - timedelta(hours=2)
        for publisher, route in feeds.items():
            articles = [
                _article(slug, t, lede, when) for p, slug, t, lede in told if p == publisher
            ]
            for a in articles:
                web.add(Route(a.path, render_article(a)))
            route.body = render_rss(base, "world", articles)

    smtp = SmtpServer()
    refusing = _Refusing(smtp)
    smtp.controller.handler = refusing
    with smtp:
        write_config(
            tmp_path,
            sources={
                "categories": ["world"],
                "ddg": False,
                "feeds": [
                    {"url": web.url(r.path), "category": "world", "name": p}
                    for p, r in feeds.items()
                ],
            },
            stories={"window_hours": 120},
            schedule={"timezone": "UTC"},
            archive={"base_url": "https://news.example.org/"},
            email=smtp_config(smtp.port),
        )
        async with App(load_config(tmp_path / "digest.toml")) as app:
            store = await app.store()
            for who in (STEADY, AWAY):
                store.add_subscriber(who, categories=None, timezone="UTC")

            async def day(n: int, told: list[tuple[str, str, str, str]]) -> None:
                clock.days = n
                publish_feed(told)
                await collect(app)
                await deepen(app)
                report = await publish(app)
                assert report.counts.get("sent", 0) >= 1, report

            await day(0, [*DAM_1, MUSEUM_1])
            refusing.refused = {AWAY}  # bob's mailbox is gone for the day: 550
            await day(1, [DAM_2])
            refusing.refused = set()
            await day(2, [DAM_3, MUSEUM_3])

            days = [(START + timedelta(days=n)).date() for n in range(3)]
            sent = {(d.recipient, d.edition_day): d.state for d in store.deliveries(None)}
            assert sent[(AWAY, days[1])] == "failed" and sent[(STEADY, days[1])] == "sent"
            third = store.edition(days[2])
            assert third is not None
            in_third = {s.title for sec in third.sections for s in sec.stories}
            assert any("museum" in t.lower() for t in in_third)  # in the edition, unchanged

    emails = _emails(smtp)
    by_reader = {
        who: next(
            text
            for (to, subject), text in emails.items()
            if to == who and long_date(days[2]) in subject
        )
        for who in (STEADY, AWAY)
    }
    steady, away = by_reader[STEADY], by_reader[AWAY]
    # Bob, who missed day 2, is told what is new since day 1: day 2's and day 3's news, once.
    assert f"Since your last digest ({day_month(days[0])}): New: Metro Wire, Wire Service" in away
    assert away.count(WIRE_FACT) == 1 and away.count(METRO_FACT) == 1
    assert f"({day_month(days[1])})" not in away  # an edition he did not get
    # Alice, who got day 2, only day 3's.
    assert (
        f"Since your last digest ({day_month(days[1])}): New: Metro Wire — {METRO_FACT}" in steady
    )
    assert WIRE_FACT not in steady and "Wire Service —" not in steady
    # Neither gets the dam's summary again, nor the museum, which has nothing new.
    for text in (steady, away):
        assert "evacuated" not in text
        assert "museum" not in text.lower()


def test_an_updated_storys_corrections_are_told_once_in_what_is_new() -> None:
    history, today = three_days()
    away = stories(news_for(today, reader("away@example.org"), history))[7]
    assert away.corrections == ()  # no second corrections block under the story
    assert away.whats_new is not None and away.whats_new.corrections == (CORRECTION,)
    new = stories(news_for(today, reader("new@example.org"), history))[7]
    assert new.corrections == (CORRECTION,)  # the whole story, as the edition carries it


def away_email(copy: Edition, **extra: Any) -> tuple[str, str]:
    """The email of the reader who was away, rendered as publish renders it."""
    return render_email(
        copy,
        categories=None,
        tz=UTC,
        title="Digest",
        archive="https://news.example.org/2026/12/03/index.html",
        unsubscribe="https://news.example.org/unsubscribe?token=t",
        recipient="away@example.org",
        budget=100_000,
        **extra,
    )


def test_the_email_shows_the_update_in_both_parts_with_a_link_to_the_whole_story() -> None:
    history, today = three_days()
    hostile = replace(
        today.sections[0].stories[0],
        outlets=(
            *today.sections[0].stories[0].outlets,
            Outlet("Evil <script>x()</script>", "https://evil.example/dam"),
        ),
    )
    today = replace(today, sections=(replace(today.sections[0], stories=(hostile,)),))
    copy = news_for(today, reader("away@example.org"), history)
    html, text = away_email(copy)
    flat = " ".join(text.split())
    since = "Since your last digest (1 December): New: Wire Service, Metro Wire, Evil x() —"
    assert f"{since} {LEDES['Wire Service']} — {LEDES['Metro Wire']}" in flat
    assert CORRECTED in flat
    assert "The whole story: https://news.example.org/2026/12/03/stories/7.html" in flat
    assert "Since your last digest (1 December):</strong> New: Wire Service, Metro Wire," in html
    assert 'href="https://news.example.org/2026/12/03/stories/7.html"' in html
    assert "<script>" not in html and "flooded three villages." not in flat  # not the summary


@pytest.mark.parametrize("link", HOSTILE_LINKS)
def test_since_your_last_digest_carries_no_link_of_a_feed_in_either_part(link: str) -> None:
    """A lede and a timeline fact with a link, as a version before issue 37 stored them: the
    reader's "Since your last digest" line tells them without, in the HTML and the text."""
    history, today = three_days()
    lede = f"Volunteers collect donations for the flooded farms at {link} tonight."
    joined = {"Harbor Times": DAY1, "Coast Post": DAY1, "Wire Service": DAY2, "Metro Wire": DAY3}
    told = [
        replace(t, lede=lede) if n == "Metro Wire" else t
        for t, n in zip(tellings(joined), joined, strict=True)
    ]
    fact = StoryEvent(
        1,
        7,
        "fact",
        built(DAY2),
        built(DAY2),
        outlet="Wire Service",
        url="https://www.wireservice.example/dam",
        text=f"Engineers found 3 cracks in the spillway, see {link} for more.",
    )
    [section] = today.sections
    story = replace(section.stories[0], timeline=(fact,))
    today = replace(today, sections=(replace(section, stories=(story,)),))
    history = replace(history, tellings={7: tuple(told), 9: ()})
    html, text = away_email(news_for(today, reader("away@example.org"), history))
    for part in (" ".join(text.split()), " ".join(plain(html).split())):
        assert "Since your last digest (1 December): New: Wire Service, Metro Wire" in part
        assert "Engineers found 3 cracks in the spillway, see for more." in part
        assert "Volunteers collect donations for the flooded farms at tonight." in part
        assert not [bad for bad in LEFT_OVER if bad in part], part


def test_a_story_told_as_an_update_keeps_its_follow_link_and_where_outlets_disagree() -> None:
    from digest.models import Disagreement, Reported

    history, today = three_days()
    copy = news_for(today, reader("away@example.org"), history)
    [story] = copy.sections[0].stories
    assert story.whats_new is not None and story.whats_new.for_reader
    dispute = Disagreement("dead", (Reported("at least 30", ("A", "B")), Reported("45", ("D",))))
    story = replace(story, disagreements=(dispute,))
    copy = replace(copy, sections=(replace(copy.sections[0], stories=(story,)),))
    link = "https://news.example.org/follow?token=t&story={story}"
    html, text = away_email(copy, follow=link)
    followed = link.replace("{story}", str(story.id))
    assert "Since your last digest (1 December)" in text
    assert f"Follow this story: {followed}" in text
    assert f'href="{followed.replace("&", "&amp;")}"' in html
    flat = " ".join(text.split())
    assert "Outlets disagree. The death toll:" in flat and "45, according to D" in flat
    assert "45, according to D" in plain(html)


class _Marking:
    """A translator that marks what it translated."""

    async def translate(self, story: EditionStory, language: str) -> EditionStory:
        return replace(story, title=f"[{language}] {story.title}", translated_from="en")


async def test_readers_of_one_language_share_its_translation_not_each_others_news() -> None:
    history, today = three_days()
    away = news_for(today, reader("away@example.org"), history)
    steady = news_for(today, reader("steady@example.org"), history)
    copies = await translate_editions([(away, "de"), (steady, "de")], _Marking())  # type: ignore[arg-type]
    told = [stories(c)[7] for c in copies]
    assert [s.title.startswith("[de] ") for s in told] == [True, True]
    assert [s.whats_new.since if s.whats_new else None for s in told] == [DAY1, DAY2]

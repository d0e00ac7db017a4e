"""What is new, per reader: a story in a reader's copy is told against the last edition THAT
reader received (`novelty.for_reader`, `edition_plan.news_for`): never sent to them, the whole
story; nothing new since, not repeated; updated, only what is new since then, once."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta

from hypothesis import given
from hypothesis import strategies as st

from digest.deliver.edition_plan import History, news_for
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
from digest.render.email import since_last
from digest.stories.novelty import Seen, Telling, for_reader, last_seen, outlet_key
from digest.subscribers.preferences import Preferences

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
CORRECTION = Correction("villages flooded", "three", "five", DAY1, "It flooded three villages.")


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
        assert "Correction: villages flooded five, not three, as reported on 1 December." in flat
        assert "glass hall" not in flat
        assert "Vetra river dam burst and flooded" not in flat  # not the whole brief again

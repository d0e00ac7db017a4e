"""What an edition is, decided from data (`digest.edition`), without a store or a server: the
lead across categories, the earlier appearance a story is told against, the corrections and the
timeline an edition carries, and where a story a sent edition owes a correction goes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from digest.edition.front_page import lead, lead_stories
from digest.edition.sections import Appearance, appearances_in
from digest.edition.shown_memory import (
    carried_corrections,
    rules_alone,
    shown_timeline,
    stories_to_correct,
    with_carried,
)
from digest.memory.events import NewEvent
from digest.models import Edition, EditionSection, EditionStory, Outlet, StoryEvent

DAY = date(2026, 12, 7)
NOW = datetime(2026, 12, 7, 6, tzinfo=UTC)
CATEGORIES = ("world", "technology", "finance")


def story(story_id: int, category: str, score: float = 0.0, outlets: int = 1) -> EditionStory:
    return EditionStory(
        id=story_id,
        category=category,
        title=f"Story {story_id}",
        brief_summary=f"What story {story_id} says.",
        summary=f"What story {story_id} says.",
        keywords=(),
        summarizer="extractive",
        outlets=tuple(
            Outlet(f"Outlet {i}", f"https://o{i}.example/{story_id}") for i in range(outlets)
        ),
        first_seen=NOW,
        score=score,
    )


def edition(day: date, sections: dict[str, list[EditionStory]]) -> Edition:
    built = tuple(EditionSection(c, tuple(ss), ()) for c, ss in sections.items())
    return Edition(day, "UTC", built, datetime.combine(day, datetime.min.time(), UTC))


@st.composite
def editions(draw: st.DrawFn) -> Edition:
    """An edition of up to three sections of stories with distinct ids and any scores."""
    ids = iter(draw(st.lists(st.integers(1, 500), unique=True, max_size=12)))
    sections: dict[str, list[EditionStory]] = {}
    for category in draw(st.lists(st.sampled_from(CATEGORIES), unique=True, max_size=3)):
        count = draw(st.integers(0, 4))
        sections[category] = [
            story(
                i, category, draw(st.sampled_from([0.0, 1.5, 2.0, 7.25])), draw(st.integers(1, 3))
            )
            for _, i in zip(range(count), ids, strict=False)
        ]
    return edition(DAY, sections)


@given(editions(), st.integers(0, 6))
def test_the_lead_holds_the_best_stories_of_every_section(shown: Edition, n: int) -> None:
    everything = [s for section in shown.sections for s in section.stories]
    top = lead(shown, n)
    assert len(top) == min(n, len(everything))
    assert len({s.id for s in top}) == len(top)
    left = [s for s in everything if s not in top]
    # No story left out ranks above one in the lead: a higher score, or as high with more outlets.
    for out in left:
        for kept in top:
            assert (out.score, len(out.outlets)) <= (kept.score, len(kept.outlets))


@given(editions(), st.integers(1, 6))
def test_top_stories_open_an_edition_only_when_it_has_stories_in_two_categories(
    shown: Edition, n: int
) -> None:
    with_stories = sum(1 for s in shown.sections if s.stories)
    assert lead_stories(shown, n) == (lead(shown, n) if with_stories >= 2 else ())


def test_the_lead_breaks_ties_by_outlets_then_by_section_order() -> None:
    shown = edition(
        DAY,
        {"world": [story(1, "world", 2.0)], "technology": [story(2, "technology", 2.0, 3)]}
        | {"finance": [story(3, "finance", 2.0)]},
    )
    assert [s.id for s in lead(shown, 3)] == [2, 1, 3]


@given(
    st.lists(
        st.lists(st.integers(1, 8), unique=True, max_size=5), min_size=1, max_size=5
    ),  # each earlier edition's story ids, newest edition first
    st.sets(st.integers(1, 8)),
)
def test_a_story_is_told_against_its_latest_earlier_appearance(
    earlier: list[list[int]], wanted: set[int]
) -> None:
    days = [DAY - timedelta(days=n + 1) for n in range(len(earlier))]
    found: dict[int, Appearance] = {}
    for day, ids in zip(days, earlier, strict=True):  # newest first, as the job reads them
        found |= appearances_in(
            edition(day, {"world": [story(i, "world") for i in ids]}), wanted, found
        )
    for story_id in wanted:
        shown_on = [d for d, ids in zip(days, earlier, strict=True) if story_id in ids]
        if shown_on:
            assert found[story_id].day == max(shown_on)
            assert found[story_id].story.id == story_id
        else:
            assert story_id not in found
    assert set(found) <= wanted


def entry(event_id: int, kind: str, **fields: Any) -> StoryEvent:
    return StoryEvent(event_id, 7, kind, NOW, NOW, **fields)


def test_the_timeline_shows_no_correction_and_what_the_check_keeps_out_is_not_shown() -> None:
    entries = [
        entry(1, "first", outlet="Reuters", text="A quake struck the north."),
        entry(
            2,
            "fact",
            outlet="Reuters",
            text="The quake killed 12 people.",
            subject="dead",
            value="12",
        ),
        entry(
            3,
            "revision",
            outlet="Reuters",
            text="The quake killed 15 people.",
            subject="dead",
            value="15",
            previous="12",
        ),
        entry(
            4,
            "correction",
            subject="dead",
            value="15",
            previous="12",
            edition_day=DAY - timedelta(days=1),
        ),
    ]
    assert [e.id for e in shown_timeline(entries, rules_alone)] == [1, 2, 3]
    assert [e.id for e in shown_timeline(entries, lambda kind, pairs: False)] == [1, 2]


def test_an_edition_carries_only_the_corrections_it_made() -> None:
    yesterday = DAY - timedelta(days=1)
    recorded = [
        (
            entry(
                1,
                "correction",
                subject="dead",
                value="15",
                previous="12",
                edition_day=yesterday,
                text="It killed 12.",
            ),
            {"in_edition": yesterday.isoformat(), "outlets": ["BBC"]},
        ),
        (
            entry(
                2,
                "correction",
                subject="toll",
                value="40",
                previous="30",
                edition_day=yesterday,
                text="A toll of 30.",
            ),
            {"in_edition": DAY.isoformat(), "outlets": ["Reuters"]},
        ),
    ]
    [made] = carried_corrections(recorded, DAY)
    assert (made.subject, made.said, made.now, made.said_on, made.outlets) == (
        "toll",
        "30",
        "40",
        yesterday,
        ("Reuters",),
    )


def test_a_story_that_fell_out_of_the_top_is_carried_at_the_end_of_its_section() -> None:
    today = edition(DAY, {"world": [story(1, "world")], "technology": [story(2, "technology")]})
    sent = [
        edition(
            DAY - timedelta(days=1),
            {"world": [story(1, "world"), story(5, "world")], "finance": [story(6, "finance")]},
        )
    ]
    assert stories_to_correct(sent, {1, 2}) == {5: "world", 6: "finance"}
    out = with_carried(today.sections, [story(5, "world"), story(6, "finance")])
    assert [(s.category, [x.id for x in s.stories]) for s in out] == [
        ("world", [1, 5]),
        ("technology", [2]),
        ("finance", [6]),
    ]


def test_a_correction_is_recorded_once_under_a_key_naming_the_day_and_both_values() -> None:
    from digest.edition.shown_memory import correction_events
    from digest.models import Correction

    c = Correction("dead", "12", "15", DAY - timedelta(days=1), "It killed 12.", ("Reuters",))
    [event] = correction_events([c], DAY, NOW)
    assert isinstance(event, NewEvent)
    assert event.key == "correction:2026-12-06:dead:12:15"
    assert event.detail == {"in_edition": "2026-12-07", "outlets": ["Reuters"]}

"""Story memory in the jobs (issue 31): what deepen records of a story it read, and what an
edition shows of it (its timeline, where outlets disagree, corrections of what editions that
went out said). What the events mean is `digest.memory.timeline`, what a figure is
`digest.summarize.figures`; the store keeps the events once each (`Store.record_events`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING

from digest.jobs.figure_check import Keep, rules_alone
from digest.memory.events import NewEvent
from digest.memory.same_quantity import correction_pairs, disagreement_pairs, timeline_pairs
from digest.memory.timeline import OutletText, by_outlet, revised, story_events
from digest.models import Correction, Edition, EditionSection, EditionStory, StoryView
from digest.render.corrections import Corrected
from digest.stories import credited
from digest.stories.language import detect_language

if TYPE_CHECKING:
    from digest.store import Store

log = logging.getLogger(__name__)

# Entries of a story's timeline an edition carries: its newest, oldest first.
EDITION_TIMELINE = 30
# How many sent editions back a story's sentences are checked for corrections.
CORRECTION_LOOKBACK = 14


def outlet_texts(store: Store, story: StoryView) -> list[OutletText]:
    """Each outlet of the story as read now, in story order: its first article's URL and
    headline, the time of its earliest article, and its main text (else its lede)."""
    found: dict[str, OutletText] = {}
    for a in story.articles:
        known = found.get(a.outlet)
        if known is not None:
            if a.when < known.at:
                found[a.outlet] = replace(known, at=a.when)
            continue
        text = (store.article_text(a.id) if a.has_text else None) or a.lede
        found[a.outlet] = OutletText(
            outlet=credited(a.source) or a.outlet,
            url=a.url,
            title=a.title,
            at=a.when,
            text=text,
            lede=a.lede,
            language=detect_language(f"{a.title}\n{a.lede}"),
        )
    return list(found.values())


def record_story(store: Store, story: StoryView, now: datetime) -> int:
    """Record what the story's outlets as read now add to its timeline; how many events were
    new. Run again (or killed and run again) it records nothing more."""
    outlets = outlet_texts(store, story)
    latest = store.latest_figures(story.id)
    recorded = store.recorded_outlets(story.id)
    events = story_events(outlets, latest, recorded=recorded, now=now)
    return len(store.record_events(story.id, events, at=now))


async def record_stories(store: Store, stories: Sequence[StoryView], now: datetime) -> int:
    """`record_story` for each story; a story whose recording fails is logged, not fatal: the
    timeline is a record, and the next run records what this one missed."""
    added = 0
    for story in stories:
        try:
            added += await asyncio.to_thread(record_story, store, story, now)
        except Exception as err:
            log.warning("story %d: its timeline was not recorded: %s", story.id, err)
    return added


# In an edition.


def sent_sentences(sent: Sequence[Edition], story_id: int) -> list[tuple[date, str]]:
    """What the sent editions said of the story: (day, sentence) for each sentence of its
    brief and summary there."""
    from digest.summarize.claims import sentences_of

    said: list[tuple[date, str]] = []
    for edition in sent:
        for section in edition.sections:
            for s in section.stories:
                if s.id == story_id:
                    texts = [s.brief_summary, *s.summary.splitlines()]
                    said += dict.fromkeys(
                        (edition.day, sentence) for t in texts for sentence in sentences_of(t)
                    )
    return said


def correction_key(c: Correction) -> str:
    return f"correction:{c.said_on.isoformat()}:{c.subject}:{c.said}:{c.now}"


def remember(
    store: Store,
    shown: EditionStory,
    day: date,
    sent: Sequence[Edition],
    now: datetime,
    keep: Keep = rules_alone,
) -> EditionStory:
    """The edition story with its memory: its timeline (the newest `EDITION_TIMELINE`
    entries), where its outlets disagree now, and the corrections this edition makes of what
    sent editions said of it. A correction is recorded as an event (once: its key names the
    day it corrects and both values) and carried by the edition that first made it only.
    `keep` has the last word on each disagreement, revision and correction the rules found
    (the model's check, `digest.jobs.figure_check`): one it keeps out is neither shown nor
    recorded."""
    from digest.summarize.figures import corrections, disagreements

    latest = store.latest_figures(shown.id)
    current = by_outlet(latest)
    disputes = tuple(
        d
        for d in disagreements({o: f for o, f in current.items() if f})
        if keep("disagreement", disagreement_pairs(d, current))
    )
    said = sent_sentences(sent, shown.id)
    made = [
        c
        for c in (corrections(said, current, revised(latest)) if said else [])
        if keep("correction", correction_pairs(c, current))
    ]
    events = [
        NewEvent(
            correction_key(c),
            "correction",
            now,
            text=c.sentence,
            subject=c.subject,
            value=c.now,
            previous=c.said,
            edition_day=c.said_on,
            detail={"in_edition": day.isoformat(), "outlets": list(c.outlets)},
        )
        for c in made
    ]
    if events:
        store.record_events(shown.id, events, at=now)
    carried = tuple(
        Correction(
            subject=e.subject,
            said=e.previous,
            now=e.value,
            said_on=e.edition_day or day,
            sentence=e.text,
            outlets=tuple(detail.get("outlets", ())),
        )
        for e, detail in store.story_corrections(shown.id)
        if detail.get("in_edition") == day.isoformat()
    )
    entries = [
        e for e in store.story_timeline(shown.id, limit=EDITION_TIMELINE) if e.kind != "correction"
    ]
    compared = timeline_pairs(entries)  # its revisions and disagreements
    timeline = tuple(e for e in entries if e.id not in compared or keep(e.kind, compared[e.id]))
    # The headline stays the outlet's words: a disagreement has its own line under the story.
    return replace(shown, timeline=timeline, disagreements=disputes, corrections=carried)


def sent_editions(store: Store, day: date) -> list[Edition]:
    """The editions before `day` that went to at least one reader, newest first (at most
    `CORRECTION_LOOKBACK`): only what was sent is corrected."""
    found = []
    for sent_day in store.sent_edition_days(day)[:CORRECTION_LOOKBACK]:
        try:
            edition = store.edition(sent_day)
        except Exception as err:
            log.warning("edition %s is not checked for corrections: %s", sent_day, err)
            continue
        if edition is not None:
            found.append(edition)
    return found


def stories_to_correct(sent: Sequence[Edition], shown: set[int]) -> dict[int, str]:
    """The stories of sent editions that today's edition does not show, by id with their
    category: a correction of one of them is carried all the same."""
    found: dict[int, str] = {}
    for edition in sent:
        for section in edition.sections:
            for s in section.stories:
                if s.id not in shown:
                    found.setdefault(s.id, s.category)
    return found


def with_memory(
    store: Store,
    sections: Sequence[EditionSection],
    day: date,
    now: datetime,
    shown_as: Callable[[StoryView], EditionStory],
    keep: Keep = rules_alone,
) -> tuple[EditionSection, ...]:
    """The edition's sections with each story's memory (`remember`). A story of a sent edition
    that fell out of today's top but has a correction today is carried all the same, at the end
    of its category's section (`shown_as` makes it the edition story it is today). `keep`:
    as `remember` has it."""
    sent = sent_editions(store, day)
    shown = {s.id for section in sections for s in section.stories}
    others = stories_to_correct(sent, shown)
    carried: dict[str, list[EditionStory]] = {}
    for view in store.stories_by_id(sorted(others)) if others else []:
        story = remember(store, shown_as(view), day, sent, now, keep)
        if story.corrections:
            carried.setdefault(story.category, []).append(story)
    out = [
        replace(
            section,
            stories=(
                *(remember(store, s, day, sent, now, keep) for s in section.stories),
                *carried.pop(section.category, ()),
            ),
        )
        for section in sections
    ]
    out += (EditionSection(category, tuple(stories), ()) for category, stories in carried.items())
    return tuple(out)


def archive_corrections(store: Store) -> dict[date, list[Corrected]]:
    """The corrections made of each edition's sentences, by the day of the edition that said
    them: its archive pages mark them and its Atom entry is updated (`digest.render.archive`)."""
    found: dict[date, list[Corrected]] = {}
    for event, detail in store.all_corrections():
        if event.edition_day is None:
            continue
        made_on = date.fromisoformat(str(detail.get("in_edition") or event.edition_day))
        correction = Correction(
            subject=event.subject,
            said=event.previous,
            now=event.value,
            said_on=event.edition_day,
            sentence=event.text,
            outlets=tuple(detail.get("outlets", ())),
        )
        found.setdefault(event.edition_day, []).append(
            Corrected(event.story_id, correction, made_on, event.recorded_at)
        )
    return found

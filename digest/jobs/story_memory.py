"""Story memory in the jobs (issue 31): what deepen records of a story it read, and what an
edition shows of it (its timeline, where outlets disagree, corrections of what editions that
went out said). What the events mean is `digest.memory.timeline`, what a figure is
`digest.facts.figures`; the store keeps the events once each (`Store.record_events`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING

from digest.edition.shown_memory import (
    CORRECTION_LOOKBACK,
    EDITION_TIMELINE,
    Keep,
    carried_corrections,
    correction_events,
    corrections_made,
    disputes_now,
    rules_alone,
    sent_sentences,
    shown_timeline,
    stories_to_correct,
    with_carried,
)
from digest.memory.timeline import OutletText, story_events
from digest.models import Correction, Edition, EditionSection, EditionStory, StoryView
from digest.render.corrections import Corrected
from digest.stories import credited
from digest.stories.language import detect_language

if TYPE_CHECKING:
    from digest.store import Store
    from digest.store.face import StoreFace

log = logging.getLogger(__name__)


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


async def record_stories(store: StoreFace, stories: Sequence[StoryView], now: datetime) -> int:
    """`record_story` for each story; a story whose recording fails is logged, not fatal: the
    timeline is a record, and the next run records what this one missed."""
    added = 0
    for story in stories:
        try:
            added += await store.call(record_story, story, now)
        except Exception as err:
            log.warning("story %d: its timeline was not recorded: %s", story.id, err)
    return added


# In an edition: what it shows is decided in `digest.edition.shown_memory`; here it is read and
# recorded.


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
    latest = store.latest_figures(shown.id)
    disputes = disputes_now(latest, keep)
    made = corrections_made(latest, sent_sentences(sent, shown.id), keep)
    if events := correction_events(made, day, now):
        store.record_events(shown.id, events, at=now)
    carried = carried_corrections(store.story_corrections(shown.id), day)
    timeline = shown_timeline(store.story_timeline(shown.id, limit=EDITION_TIMELINE), keep)
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
    carried = []
    for view in store.stories_by_id(sorted(others)) if others else []:
        story = remember(store, shown_as(view), day, sent, now, keep)
        if story.corrections:
            carried.append(story)
    remembered = [
        replace(
            section,
            stories=tuple(remember(store, s, day, sent, now, keep) for s in section.stories),
        )
        for section in sections
    ]
    return with_carried(remembered, carried)


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

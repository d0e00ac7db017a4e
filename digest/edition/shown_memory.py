"""The pure half of story memory in an edition (issue 31): which corrections an edition makes
of what sent editions said, which it carries, where outlets disagree now, which timeline entries
it shows, and which stories of sent editions it still owes a correction. `Keep` (the model's
check, `digest.jobs.figure_check`) has the last word on each line the rules found.
`digest.jobs.story_memory` reads the figures, events and sent editions and records what is
decided here."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from digest.facts.claims import sentences_of
from digest.facts.figures import corrections, disagreements
from digest.memory.events import NewEvent
from digest.memory.same_quantity import Pair, correction_pairs, disagreement_pairs, timeline_pairs
from digest.memory.timeline import Latest, by_outlet, revised
from digest.models import (
    Correction,
    Disagreement,
    Edition,
    EditionSection,
    EditionStory,
    StoryEvent,
)

# Entries of a story's timeline an edition carries: its newest, oldest first.
EDITION_TIMELINE = 30
# How many sent editions back a story's sentences are checked for corrections.
CORRECTION_LOOKBACK = 14

# Whether a line may be shown, given what it is ("disagreement", "revision", "correction")
# and the sentence pairs it compares.
Keep = Callable[[str, Sequence[Pair]], bool]


def rules_alone(kind: str, pairs: Sequence[Pair]) -> bool:
    """No model configured: what the rules accepted is shown, as it always was."""
    return True


def sent_sentences(sent: Sequence[Edition], story_id: int) -> list[tuple[date, str]]:
    """What the sent editions said of the story: (day, sentence) for each sentence of its
    brief and summary there."""
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


def disputes_now(latest: Latest, keep: Keep) -> tuple[Disagreement, ...]:
    """Where the story's outlets disagree now (`latest`: its latest figures), each as `keep`
    lets through."""
    current = by_outlet(latest)
    return tuple(
        d
        for d in disagreements({o: f for o, f in current.items() if f})
        if keep("disagreement", disagreement_pairs(d, current))
    )


def corrections_made(
    latest: Latest, said: Sequence[tuple[date, str]], keep: Keep
) -> list[Correction]:
    """The corrections the latest figures make of what sent editions `said` of the story,
    each as `keep` lets through."""
    if not said:
        return []
    current = by_outlet(latest)
    return [
        c
        for c in corrections(said, current, revised(latest))
        if keep("correction", correction_pairs(c, current))
    ]


def correction_events(made: Iterable[Correction], day: date, now: datetime) -> list[NewEvent]:
    """The corrections as events of the story's timeline: once each (the key names the day it
    corrects and both values), carried by the edition of `day` that first made it only."""
    return [
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


def carried_corrections(
    recorded: Iterable[tuple[StoryEvent, Mapping[str, Any]]], day: date
) -> tuple[Correction, ...]:
    """Of the story's recorded corrections (event and detail), those the edition of `day`
    made: the ones it carries."""
    return tuple(
        Correction(
            subject=e.subject,
            said=e.previous,
            now=e.value,
            said_on=e.edition_day or day,
            sentence=e.text,
            outlets=tuple(detail.get("outlets", ())),
        )
        for e, detail in recorded
        if detail.get("in_edition") == day.isoformat()
    )


def shown_timeline(entries: Sequence[StoryEvent], keep: Keep) -> tuple[StoryEvent, ...]:
    """The timeline an edition shows of the story's newest entries: no corrections (they have
    their own lines), and each revision and disagreement as `keep` lets through."""
    entries = [e for e in entries if e.kind != "correction"]
    compared = timeline_pairs(entries)  # its revisions and disagreements
    return tuple(e for e in entries if e.id not in compared or keep(e.kind, compared[e.id]))


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


def with_carried(
    sections: Sequence[EditionSection], carried: Iterable[EditionStory]
) -> tuple[EditionSection, ...]:
    """The sections with each `carried` story (one of a sent edition that fell out of today's
    top but has a correction today) at the end of its category's section; a category without
    a section gets one."""
    extra: dict[str, list[EditionStory]] = {}
    for story in carried:
        extra.setdefault(story.category, []).append(story)
    out = [
        replace(section, stories=(*section.stories, *extra.pop(section.category, ())))
        for section in sections
    ]
    out += (EditionSection(category, tuple(stories), ()) for category, stories in extra.items())
    return tuple(out)

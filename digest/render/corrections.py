"""Corrections as readers see them (issue 31): the line an edition carries ("Correction: the
toll was 30, not 12, as reported on 3 December"), and the mark on the corrected sentence in
the archive page of the edition that said it, linked to the correction. A sent edition is never
rewritten: its pages are rendered from the stored edition and the corrections made of it since
(`Corrected`, looked up by its day and story when the archive is rendered)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from markupsafe import Markup, escape

from digest.models import Correction
from digest.render.layout import Links, story_path
from digest.summarize.figures import rising

# What a figure's subject is called in a sentence; others are "the <subject>".
_SUBJECTS = {
    "dead": "the death toll",
    "deaths": "the death toll",
    "killed": "the death toll",
    "toll": "the toll",
    "injured": "the number injured",
    "missing": "the number missing",
    "evacuated": "the number evacuated",
}


@dataclass(frozen=True, slots=True)
class Corrected:
    """A correction made of a sentence of the edition of `said_on`: by the edition of
    `made_on`, for story `story_id`, learned at `at`."""

    story_id: int
    correction: Correction
    made_on: date
    at: datetime


def subject_phrase(subject: str) -> str:
    return _SUBJECTS.get(subject.lower(), f"the {subject.replace('_', ' ')}")


def correction_line(c: Correction) -> str:
    """ "Correction: the death toll was 30, not 12, as reported on 3 December." (text); a
    toll that has grown since is an update, not an error: "Update: the death toll is now 30,
    up from 12 reported on 3 December." """
    what, day = subject_phrase(c.subject), short_day(c.said_on)
    if rising(c.subject, c.said, c.now):
        return f"Update: {what} is now {c.now}, up from {c.said} reported on {day}."
    return f"Correction: {what} was {c.now}, not {c.said}, as reported on {day}."


def mark_corrected(paragraph: str, notes: Sequence[Corrected], links: Links) -> Markup:
    """The paragraph, escaped, with each corrected sentence in it marked (<mark>) and followed
    by a link to the correction (the story's page in the edition that made it); a paragraph
    without one comes back merely escaped."""
    out = escape(paragraph)
    for note in notes:
        sentence = note.correction.sentence.strip()
        if not sentence or sentence not in paragraph:
            continue
        said = escape(sentence)
        href = links(story_path(note.made_on, note.story_id))
        link = (
            Markup(' <a class="correction-link" href="{}#corrections">{}</a>').format(
                href, f"Corrected on {short_day(note.made_on)}"
            )
            if href
            else Markup(" <span>(corrected on {})</span>").format(short_day(note.made_on))
        )
        marked = Markup('<mark class="corrected">{}</mark>{}').format(said, link)
        out = Markup(out.replace(said, marked, 1))
    return out


_MONTHS = (
    "January February March April May June July August September October November December"
).split()


def short_day(day: date) -> str:
    """ "3 December": the day a reader is told, whatever the locale."""
    return f"{day.day} {_MONTHS[day.month - 1]}"

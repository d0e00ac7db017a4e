"""Corrections as readers see them (issue 31): the line an edition carries ("Correction: the
death toll was 30, not 12, as reported on 3 December"), in the edition's language
(`digest.messages`: "Korrektur: die Zahl der Toten lag bei 30, ..."), and the mark on the
corrected sentence in the archive page of the edition that said it, linked to the correction.
A correction of a subject the catalogue cannot name has no line: nothing is said. A sent
edition is never rewritten: its pages are rendered from the stored edition and the corrections
made of it since (`Corrected`, looked up by its day and story when the archive is rendered)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from markupsafe import Markup, escape

from digest import messages
from digest.facts.figures import rising
from digest.models import Correction, Disagreement
from digest.render.layout import Links, story_path


@dataclass(frozen=True, slots=True)
class Corrected:
    """A correction made of a sentence of the edition of `said_on`: by the edition of
    `made_on`, for story `story_id`, learned at `at`."""

    story_id: int
    correction: Correction
    made_on: date
    at: datetime


def subject_phrase(subject: str, language: str | None = "en") -> str:
    """ "the death toll" (`messages.subject_phrase`); "" for a subject it does not know."""
    return messages.subject_phrase(subject, language)


def is_update(c: Correction) -> bool:
    """A toll that has grown since it was sent: news, not an error corrected."""
    return rising(c.subject, c.said, c.now)


def correction_line(c: Correction, language: str | None = "en") -> str:
    """ "Correction: the death toll was 30, not 12, as reported on 3 December." (text) in
    `language` (the edition's, `messages.edition_language`); a toll that has grown since is an
    update, not an error: "Update: the death toll is now 30, up from 12 reported on 3
    December." "" when the subject is not one the catalogue names (no line is better than a
    word of the page shown as a subject). The values stay as the outlets wrote them."""
    what = messages.subject_phrase(c.subject, language)
    if not what:
        return ""
    say = messages.catalogue(language).gettext
    values = {"what": what, "now": c.now, "said": c.said, "day": short_day(c.said_on, language)}
    if is_update(c):
        return (
            say("Update: %(what)s is now %(now)s, up from %(said)s reported on %(day)s.") % values
        )
    return say("Correction: %(what)s was %(now)s, not %(said)s, as reported on %(day)s.") % values


def attributed_values(d: Disagreement, language: str | None = "en") -> str:
    """Each value of a disagreement with who reports it, in `language`: "at least 30,
    according to A and B; 45, according to C"."""
    say = messages.catalogue(language).gettext("%(value)s, according to %(outlets)s")
    return "; ".join(
        say % {"value": r.value, "outlets": messages.names(r.outlets, language)} for r in d.reported
    )


def dispute_line(d: Disagreement, language: str | None = "en") -> str:
    """A disagreement as one line in `language`: "The death toll: at least 30, according to
    A; 45, according to B"; "" when the catalogue cannot name its subject."""
    what = messages.subject_phrase(d.subject, language)
    if not what:
        return ""
    say = messages.catalogue(language).gettext("%(what)s: %(values)s")
    return say % {"what": what[:1].upper() + what[1:], "values": attributed_values(d, language)}


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


def short_day(day: date, language: str | None = "en") -> str:
    """ "3 December" ("3. Dezember", "3 de diciembre"): the day a reader is told."""
    return messages.day_month(day, language)

"""A story's summary where its outlets disagree on a figure (issue 31): it does not pick one.

When outlets report different values for the same thing (`digest.summarize.figures`: a toll, a
fine, a rate), a summary sentence that states one of them as fact, unattributed and without the
other values (`one_sided`), is removed as a sentence with an unsupported claim is (counted in
`sentences_removed`, logged with the values in dispute), and the summary ends with one sentence
per disagreement that attributes each value to its outlets, figures as the outlets write them:
"At least 30 dead, according to A; 45, according to B and C.", in the summary's own language
when the catalogue has it ("Al menos 30 muertos, según A; 45, según B y C.", `digest.messages`),
else English; a subject the catalogue cannot name gets no sentence (never a word of the page
shown as a subject). A translator takes these sentences out (`unattributed`) and the reader's
copy gets them anew in the reader's language, not machine-translated. A summary that already has a
sentence giving two of the values (a range, or each attributed) gets none for that subject; one
that gives a single value attributed ("45 were killed, the mayor said") is kept, and gets it.
Extractive summaries (an outlet's own sentences, which state its value as fact) are treated the
same way. A headline is never rewritten: it is an outlet's words, and the disagreement has its
own line under the story. Pure, no I/O.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from digest import messages
from digest.models import Disagreement, StorySummary
from digest.summarize.claims import sentences_of, text_language
from digest.summarize.figures import (
    Figure,
    covers,
    disagreements,
    figures_of,
    one_sided,
    reported,
)
from digest.summarize.text import join_sentences
from digest.summarize.types import StoryInput, StorySource

log = logging.getLogger(__name__)


def texts_by_outlet(story: StoryInput) -> dict[str, str]:
    """Each outlet's text in a story (an outlet with several sources: their texts together)."""
    out: dict[str, list[str]] = {}
    for s in story.sources:
        out.setdefault(s.outlet or s.url, []).append(s.text)
    return {outlet: "\n\n".join(texts) for outlet, texts in out.items()}


def outlet_figures(story: StoryInput) -> dict[str, list[Figure]]:
    """Each outlet's figures as the story memory reads them (`figures.reported` with the
    headline and day of the outlet's first source: a report that looks back at an earlier
    event, or a figure dated apart from the report, is not the story's), so that a summary's
    disputes and the timeline compare the same figures."""
    first: dict[str, StorySource] = {}
    for s in story.sources:
        first.setdefault(s.outlet or s.url, s)
    found: dict[str, list[Figure]] = {}
    for outlet, text in texts_by_outlet(story).items():
        source = first[outlet]
        day = source.published.date() if source.published else None
        found[outlet] = reported(text, None, source.title, day)
    return found


def story_disagreements(story: StoryInput) -> list[Disagreement]:
    """Where a story's outlets disagree on a figure (`outlet_figures`)."""
    return disagreements(outlet_figures(story))


def story_disputes(by_outlet: Mapping[str, str]) -> list[Disagreement]:
    """Where the outlets' texts (outlet → text) disagree on a figure, as their leads tell it
    (`figures.lead`: what a page says further down is often another event's; an outlet with
    several sources is read by the first's lead), each outlet's own figure where its lead
    gives two: `figures.reported`, what the story memory records of an outlet too. Texts
    alone, without headline or day: `story_disagreements` reads a story's with both."""
    return disagreements({outlet: reported(text) for outlet, text in by_outlet.items()})


@dataclass(frozen=True, slots=True)
class Confirmed:
    """The disagreements the rules found in a story's texts, and those of them the model
    confirmed (`digest.jobs.figure_check`): a sentence taking one side of any is removed (the
    figure is in doubt), the values of the confirmed alone are given attributed (one not
    confirmed may be two events: better no line than a wrong one)."""

    found: tuple[Disagreement, ...]
    confirmed: tuple[Disagreement, ...]


def found_and_attributed(
    by_outlet: Mapping[str, str] | Sequence[Disagreement] | Confirmed,
) -> tuple[list[Disagreement], list[Disagreement]]:
    """The disagreements whose one-sided sentences go, and those given attributed: the
    rules' own from texts by outlet or a list of disagreements (the same both), or a
    `Confirmed`."""
    if isinstance(by_outlet, Confirmed):
        return list(by_outlet.found), list(by_outlet.confirmed)
    found = story_disputes(by_outlet) if isinstance(by_outlet, Mapping) else list(by_outlet)
    return found, found


@cache
def _attributed_sentence() -> re.Pattern[str]:
    """The shape of an attributed sentence in any catalogue language (ours, or a model's like
    it): "X, according to A; Y, according to B." (", laut", ", según", ", selon" ...), so that
    a disputed summary is given its sentences anew from the current disagreements (their
    outlets kept current) and a translator can leave them out."""
    words = set()
    for language in messages.LANGUAGES:
        pattern = messages.catalogue(language).gettext("%(value)s, according to %(outlets)s")
        middle = pattern.split("%(value)s")[1].split("%(outlets)s")[0]
        words.add(re.escape(middle))
    said = "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"
    return re.compile(rf"[^;]+{said}[^;]+(?:; [^;]+{said}[^;]+)+\.")


def attributed(dispute: Disagreement, language: str | None = "en") -> str:
    """One sentence giving each value of a disagreement with its outlets, in `language`:
    "At least 30 dead, according to A; 45, according to B and C."; "" when the catalogue
    cannot name what is counted."""
    what = messages.counted(dispute.subject, language)
    if not what:
        return ""
    say = messages.catalogue(language).gettext("%(value)s, according to %(outlets)s")
    parts = [
        say % {"value": r.value, "outlets": messages.names(r.outlets, language)}
        for r in dispute.reported
    ]
    first = dispute.reported[0]
    parts[0] = say % {
        "value": f"{first.value} {what}",
        "outlets": messages.names(first.outlets, language),
    }
    sentence = "; ".join(parts) + "."
    return sentence[:1].upper() + sentence[1:]


@dataclass(frozen=True, slots=True)
class DisputedText:
    """A text without its one-sided sentences, and how many it lost."""

    text: str
    removed: tuple[str, ...]


def without_one_sided(text: str, disputes: Sequence[Disagreement]) -> DisputedText:
    """`text` without the sentences that state one side of a dispute as fact (its paragraphs
    kept, as the claim check keeps them)."""
    if not disputes or not text.strip():
        return DisputedText(text, ())
    removed: list[str] = []
    paragraphs: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        kept: list[str] = []
        for sentence in sentences_of(paragraph):
            if one_sided(sentence, disputes):
                removed.append(sentence)
            else:
                kept.append(sentence)
        if kept:
            paragraphs.append(join_sentences(kept))
    return DisputedText("\n\n".join(paragraphs), tuple(removed))


def _covered(text: str, dispute: Disagreement) -> bool:
    """Whether a sentence of `text` already gives the disputed values (a range, or each)."""
    return any(
        f.subject == dispute.subject and covers(f.sentence, dispute) for f in figures_of(text)
    )


def summary_language(text: str) -> str:
    """The language a summary's attributed sentences are in: the summary's, when the catalogue
    has it, else English."""
    return messages.edition_language(text_language(text) if text.strip() else None)


def with_attributions(
    text: str, disputes: Sequence[Disagreement], language: str | None = None
) -> str:
    """`text` ending with an attributed sentence for each dispute it does not already cover,
    in `language` (None: the text's own, `summary_language`)."""
    language = summary_language(text) if language is None else language
    added = [s for d in disputes if not _covered(text, d) and (s := attributed(d, language))]
    if not added:
        return text
    return join_sentences([text, *added]) if text.strip() else join_sentences(added)


def unattributed(text: str) -> str:
    """`text` without its attributed sentences, in whichever catalogue language (see
    `_attributed_sentence`)."""
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text):
        kept = [s for s in sentences_of(paragraph) if not _attributed_sentence().fullmatch(s)]
        if kept:
            paragraphs.append(join_sentences(kept))
    return "\n\n".join(paragraphs)


def describe(removed: Sequence[str], disputes: Sequence[Disagreement]) -> str:
    """One line for the logs: what was removed and which values are in dispute."""
    shown = "; ".join(f"{d.subject}: " + " / ".join(r.value for r in d.reported) for d in disputes)
    return f"{len(removed)} sentences removed that take one side where outlets disagree ({shown})"


def dispute_summary(
    summary: StorySummary, by_outlet: Mapping[str, str] | Sequence[Disagreement] | Confirmed
) -> StorySummary:
    """`summary` where the outlets disagree: its one-sided sentences (summary and brief)
    removed and counted in `sentences_removed`, one attributed sentence per disagreement added.
    `by_outlet`: the story's sources' texts by outlet, or the disagreements already found (or
    those and the ones the model confirmed: only these are attributed). An attributed sentence
    the summary has is given again from these (its outlets kept current)."""
    disputes, attributed = found_and_attributed(by_outlet)
    if not disputes:
        return summary
    body = without_one_sided(unattributed(summary.summary), disputes)
    brief = without_one_sided(summary.brief_summary, disputes)
    removed = body.removed + brief.removed
    if removed:
        log.info("summary of “%s”: %s", summary.title, describe(removed, disputes))
    text = with_attributions(body.text, attributed)
    brief_text = brief.text or " ".join(sentences_of(text)[:2])
    return replace(
        summary,
        summary=text,
        brief_summary=brief_text,
        sentences_removed=summary.sentences_removed + len(removed),
    )

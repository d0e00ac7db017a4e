"""A reader's keyword rules, and the edition they leave: pure, no I/O.

A rule is a list of words and phrases, typed as `digest subscribers add --include "word, a
phrase"` or on the preferences page: terms are separated by commas (or semicolons, or lines),
quotes around a term are dropped. A term matches a story when its words appear in that order,
next to each other, in the story's title, brief, summary or one of its keywords (a day's other
headline: its title or lede). Words are compared as the archive search compares them
(`digest search`): case and diacritics ignored ("zurich" finds "Zürich"), one inflection
stripped ("election" finds "elections", `digest.stories.tokens.stem`), numbers whole ("7.1").
Unlike the search, no word is too common to count: a rule says exactly what its reader typed.

`include`: a story is kept when any of its terms matches (no include terms: every story);
`exclude`: a story is dropped when any of its terms matches, whatever the include terms say.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from digest.models import Edition, EditionHeadline, EditionStory
from digest.stories.tokens import every_word, stem

__all__ = [
    "MAX_TERMS",
    "MAX_TERM_CHARS",
    "Rules",
    "format_terms",
    "is_empty",
    "parse_terms",
    "tailor",
]

# A rule longer than this is cut: the page and the CLI refuse nothing a reader types, and no
# rule makes matching slow.
MAX_TERMS = 50
MAX_TERM_CHARS = 100
_SEPARATORS = re.compile(r"[,;\n\r]")
_QUOTES = "\"'“”„‘’«»"


def parse_terms(text: str | Iterable[str]) -> tuple[str, ...]:
    """The terms of a rule: "word, a phrase" → ("word", "a phrase").

    Each term is the text between separators with its quotes and surrounding spaces dropped
    and inner whitespace collapsed to one space, control and format characters removed; terms
    without a word are dropped, as are repeats (terms with the same stems: "Election" after
    "elections"). A sequence of strings is read as its parts joined by commas. Never raises.
    """
    if not isinstance(text, str):
        text = ",".join(text)
    found: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for piece in _SEPARATORS.split(text):
        cleaned = "".join(
            " " if unicodedata.category(ch)[0] in "CZ" else ch for ch in piece
        ).strip()
        cleaned = " ".join(cleaned.strip(_QUOTES + " ").split())
        cleaned = cleaned[:MAX_TERM_CHARS].strip()
        key = _stems(cleaned)
        if not key or key in seen:
            continue
        seen.add(key)
        found.append(cleaned)
        if len(found) == MAX_TERMS:
            break
    return tuple(found)


def format_terms(terms: Iterable[str]) -> str:
    """Terms as a reader types them back: "word, a phrase" (`parse_terms` reads it again as
    the same terms)."""
    return ", ".join(terms)


@dataclass(frozen=True, slots=True)
class Rules:
    """A reader's include and exclude terms (each as `parse_terms` gives them)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.include or self.exclude)

    def keeps(self, texts: Iterable[str]) -> bool:
        """Whether a story whose fields are `texts` is kept: an include term matches one of
        them (or there is none), and no exclude term matches any."""
        fields = [_stems(t) for t in texts if t]
        if any(_in_any(_stems(term), fields) for term in self.exclude):
            return False
        return not self.include or any(_in_any(_stems(term), fields) for term in self.include)

    def keeps_story(self, story: EditionStory) -> bool:
        return self.keeps((story.title, story.brief_summary, story.summary, *story.keywords))

    def keeps_headline(self, headline: EditionHeadline) -> bool:
        return self.keeps((headline.title, headline.lede))


def tailor(
    edition: Edition,
    *,
    categories: tuple[str, ...] | None,
    rules: Rules,
    max_stories: int | None = None,
) -> Edition:
    """A reader's own copy of `edition`: their categories; with rules, only the stories and
    other headlines the rules keep (a category left with neither goes); at most `max_stories`
    stories a category, the top ones."""
    mine = edition.only(categories)
    if not rules and max_stories is None:
        return mine
    sections = []
    for section in mine.sections:
        stories = section.stories
        headlines = section.headlines
        if rules:
            stories = tuple(s for s in stories if rules.keeps_story(s))
            headlines = tuple(h for h in headlines if rules.keeps_headline(h))
            if not stories and not headlines:
                continue
        if max_stories is not None:
            stories = stories[:max_stories]
        sections.append(replace(section, stories=stories, headlines=headlines))
    return replace(mine, sections=tuple(sections))


def is_empty(edition: Edition) -> bool:
    """No story and no other headline in any section."""
    return not any(s.stories or s.headlines for s in edition.sections)


@lru_cache(maxsize=8192)
def _stems(text: str) -> tuple[str, ...]:
    # Cached: an edition's few hundred texts are matched against every reader's rules.
    return tuple(stem(w) for w in every_word(text))


def _in_any(term: tuple[str, ...], fields: list[tuple[str, ...]]) -> bool:
    return any(_contains(field, term) for field in fields)


def _contains(field: tuple[str, ...], term: tuple[str, ...]) -> bool:
    n = len(term)
    if n == 0 or n > len(field):
        return False
    first = term[0]
    return any(field[i] == first and field[i : i + n] == term for i in range(len(field) - n + 1))

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

from collections.abc import Iterable
from dataclasses import dataclass, replace

from digest.models import Edition, EditionHeadline, EditionStory
from digest.stories.terms import MAX_TERM_CHARS, MAX_TERMS, format_terms, parse_terms, term_stems

__all__ = [
    "MAX_TERMS",
    "MAX_TERM_CHARS",
    "Rules",
    "format_terms",
    "is_empty",
    "parse_terms",
    "tailor",
]


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
        fields = [term_stems(t) for t in texts if t]
        if any(_in_any(term_stems(term), fields) for term in self.exclude):
            return False
        return not self.include or any(_in_any(term_stems(term), fields) for term in self.include)

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
    """A reader's own copy of `edition`: their categories; with rules, only the stories,
    other headlines and mentions (by title) the rules keep (a category left with no story and
    no headline goes); at most `max_stories` stories a category, the top ones."""
    mine = edition.only(categories)
    if not rules and max_stories is None:
        return mine
    sections = []
    for section in mine.sections:
        stories = section.stories
        headlines = section.headlines
        mentions = section.mentions
        if rules:
            stories = tuple(s for s in stories if rules.keeps_story(s))
            headlines = tuple(h for h in headlines if rules.keeps_headline(h))
            mentions = tuple(m for m in mentions if rules.keeps((m.title,)))
            if not stories and not headlines:
                continue
        if max_stories is not None:
            stories = stories[:max_stories]
        sections.append(replace(section, stories=stories, headlines=headlines, mentions=mentions))
    return replace(mine, sections=tuple(sections))


def is_empty(edition: Edition) -> bool:
    """No story and no other headline in any section."""
    return not any(s.stories or s.headlines for s in edition.sections)


def _in_any(term: tuple[str, ...], fields: list[tuple[str, ...]]) -> bool:
    return any(_contains(field, term) for field in fields)


def _contains(field: tuple[str, ...], term: tuple[str, ...]) -> bool:
    n = len(term)
    if n == 0 or n > len(field):
        return False
    first = term[0]
    return any(field[i] == first and field[i : i + n] == term for i in range(len(field) - n + 1))

"""A reader's copy of the edition in their language: where translation plugs in.

A subscriber who chose a language (`Preferences.language`, ISO 639-1) gets each story whose
language differs from theirs translated by a `Translator`, or, without one, as written and
marked with its language ("English"). A story's language is its first outlet's, the one the
edition leads with (detected when the edition is built, `digest.stories.language`); a story
whose language is not known is left as it is, unmarked.

`Untranslated` is the translator when there is no LLM: it translates nothing and marks. An
LLM translator implements the same protocol: it returns the story with `title`,
`brief_summary` and `summary` in the reader's language, `language` set to that language and
`translated_from` to the original's (or, when it cannot, what `Untranslated` returns). It is
expected to translate each story once per language and keep the result (the store, like
summaries), and to check its claims as any summary is checked; `translate_edition` asks it
once per story and language within one sending run.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import replace
from typing import Protocol

from digest.models import Edition, EditionStory

__all__ = ["Translator", "Untranslated", "story_language", "translate_edition"]


class Translator(Protocol):
    async def translate(self, story: EditionStory, language: str) -> EditionStory:
        """`story` as a reader of `language` gets it (see the module's docstring)."""
        ...


def story_language(story: EditionStory) -> str:
    """The language the story is told in, as far as the edition knows ("" when it does not)."""
    return next((o.language for o in story.outlets if o.language), "")


class Untranslated:
    """No translation (no LLM): the original, marked with its language when that is not the
    reader's."""

    async def translate(self, story: EditionStory, language: str) -> EditionStory:
        original = story_language(story)
        if not original or original == language:
            return story
        return replace(story, language=original, translated_from="")


async def translate_edition(
    edition: Edition,
    language: str | None,
    translator: Translator,
    done: MutableMapping[tuple[int, str], EditionStory] | None = None,
) -> Edition:
    """A reader's copy of `edition` (already theirs: their categories and rules) in
    `language` (None: as written). `done` keeps the stories translated so far in this run, by
    (story id, language): readers of one language share them."""
    if not language:
        return edition
    done = {} if done is None else done
    sections = []
    for section in edition.sections:
        stories = []
        for story in section.stories:
            key = (story.id, language)
            if key not in done:
                done[key] = await translator.translate(story, language)
            stories.append(done[key])
        sections.append(replace(section, stories=tuple(stories)))
    return replace(edition, sections=tuple(sections))

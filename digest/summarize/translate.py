"""A reader's copy of the edition in their language: where translation plugs in.

A subscriber who chose a language (`Preferences.language`, ISO 639-1) gets each story whose
language differs from theirs translated by a `Translator`, or, without one, as written and
marked with its language ("English"). A story's language is its summary's, detected when it is
sent (`digest.stories.language`), else its first outlet's, the one the edition leads with; a
story whose language is not known is left as it is, unmarked.

`Untranslated` is the translator when there is no LLM: it translates nothing and marks.
`digest.summarize.translator.LLMTranslator` implements the same protocol with the LLM: it
returns the story with `title`, `brief_summary` and `summary` in the reader's language,
`language` set to that language and `translated_from` to the original's, or, when it cannot
(the LLM failed, the claim check refused the translation), what `Untranslated` returns. It
translates each text once per language and keeps the result in the store.

`translate_editions` makes every reader's copy of one edition at once: each story is asked for
once per language, whatever the number of readers, and all of them concurrently (the translator
bounds its own LLM calls).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import MutableMapping, Sequence
from dataclasses import replace
from typing import Protocol

from digest.errors import DigestError
from digest.models import Edition, EditionStory
from digest.runtime.threads import off_loop
from digest.stories.language import detect_language

__all__ = [
    "Translator",
    "Untranslated",
    "original_language",
    "story_language",
    "translate_edition",
    "translate_editions",
    "untranslated",
]

log = logging.getLogger(__name__)

# Enough of a summary to tell its language (py3langid: ~100 µs for this much).
DETECT_CHARS = 2000


class Translator(Protocol):
    async def translate(self, story: EditionStory, language: str) -> EditionStory:
        """`story` as a reader of `language` gets it (see the module's docstring)."""
        ...


def story_language(story: EditionStory) -> str:
    """The language the story is told in, as far as the edition knows ("" when it does not)."""
    return next((o.language for o in story.outlets if o.language), "")


def summary_language(story: EditionStory) -> str:
    """The language of the text a reader gets (brief and summary), else the first outlet's."""
    text = f"{story.brief_summary}\n{story.summary}"[:DETECT_CHARS]
    return detect_language(text) or story_language(story)


async def original_language(story: EditionStory) -> str:
    """`summary_language`, in a thread: the first detection loads py3langid's model (~0.8 s)."""
    return await off_loop(summary_language, story)


def untranslated(story: EditionStory, original: str, language: str) -> EditionStory:
    """The story as written, marked with its language `original` when that is not the
    reader's `language` (and known)."""
    if not original or original == language:
        return story
    return replace(story, language=original, translated_from="")


class Untranslated:
    """No translation (no LLM): the original, marked with its language when that is not the
    reader's."""

    async def translate(self, story: EditionStory, language: str) -> EditionStory:
        return untranslated(story, await original_language(story), language)


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
            stories.append(_as_told_to_them(done[key], story))
        sections.append(replace(section, stories=tuple(stories)))
    return replace(edition, sections=tuple(sections))


def _as_told_to_them(translated: EditionStory, story: EditionStory) -> EditionStory:
    """A story translated for another reader of the language, with what is new to this one
    (`novelty.for_reader`: their own `whats_new` and corrections)."""
    if (translated.whats_new, translated.corrections) == (story.whats_new, story.corrections):
        return translated
    return replace(translated, whats_new=story.whats_new, corrections=story.corrections)


async def translate_editions(
    copies: Sequence[tuple[Edition, str | None]], translator: Translator
) -> list[Edition]:
    """Every reader's copy (their edition, their language) in their language, each story
    translated once per language and all of them at once (the translator bounds its calls)."""
    wanted: dict[tuple[int, str], EditionStory] = {}
    for copy, language in copies:
        if language:
            for section in copy.sections:
                for story in section.stories:
                    wanted.setdefault((story.id, language), story)
    keys = list(wanted)
    done = await asyncio.gather(*(_translate(translator, wanted[k], k[1]) for k in keys))
    translated = dict(zip(keys, done, strict=True))
    return [
        await translate_edition(copy, language, translator, translated) for copy, language in copies
    ]


async def _translate(translator: Translator, story: EditionStory, language: str) -> EditionStory:
    """A story translated, or as written when the translator failed (its store, say): one story
    left untranslated never holds up an edition."""
    try:
        return await translator.translate(story, language)
    except DigestError as err:
        log.warning("story %s is sent untranslated into %s: %s", story.id, language, err)
        return untranslated(story, await original_language(story), language)

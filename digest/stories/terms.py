"""The terms of a keyword rule: read as a reader types them ("word, a phrase"), shown back.

Apart from the rules (`digest.stories.rules`), which need the edition's types, so that the
preferences (`digest.subscribers.preferences`) can read and show them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from digest.stories.tokens import every_word, stem

__all__ = ["MAX_TERMS", "MAX_TERM_CHARS", "format_terms", "parse_terms", "term_stems"]

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
        key = term_stems(cleaned)
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


@lru_cache(maxsize=8192)
def term_stems(text: str) -> tuple[str, ...]:
    # Cached: an edition's few hundred texts are matched against every reader's rules.
    return tuple(stem(w) for w in every_word(text))

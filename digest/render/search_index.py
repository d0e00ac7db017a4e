"""The archive's search index: every story, prebuilt as a script for search.html.

The search page must work without a server, also opened from `file://`, where browsers refuse
fetch() of a local file; so the index is a JavaScript file loaded with `<script src>`, which
assigns one object to `window.DIGEST_SEARCH`. That object is JSON (valid JavaScript), and `<`,
`>`, `&`, U+2028 and U+2029 are written as `\\uXXXX` escapes: the file holds no `<` at all, so no
scraped text can end a script element or be read as markup. Text is data here: the page's
script (templates/archive/search.js) puts it in the page with textContent only.

The index stays small: per story its title, page, day, category, outlet count, keywords and at
most TEXT_LIMIT characters of its brief summary (which the results page shows as the snippet).
Matching (lower case, diacritics removed) and ranking are the script's job, so there is one
normalisation, not two to keep in step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from digest.models import Edition
from digest.render.layout import story_path
from digest.render.templating import category_name, clip

__all__ = ["FIELDS", "TEXT_LIMIT", "TITLE_LIMIT", "index_entries", "render_search_index"]

VERSION = 1
# The order of the values in each story's row (rows, not objects: the keys are not repeated).
FIELDS = ("title", "url", "date", "category", "outlets", "keywords", "text")
TEXT_LIMIT = 240  # characters of summary per story: the snippet, and what the search reaches
TITLE_LIMIT = 300
KEYWORDS = 8  # keywords per story, each cut to KEYWORD_LIMIT characters
KEYWORD_LIMIT = 60

# Characters written as escapes: markup (an HTML parser never sees this file, but it cannot hurt
# that "</script>" is impossible), the line separators older JavaScript parsers refused in
# strings, and any lone surrogate (not encodable as UTF-8). Outside strings JSON is ASCII
# punctuation, so these occur only inside strings, where the escape means the same character.
_ESCAPE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def render_search_index(newest_first: Sequence[Edition]) -> bytes:
    """search-index.js for these editions (newest first, text already clean): deterministic."""
    rows = [_JSON.encode(row) for row in _rows(newest_first)]  # one story per line
    head = _JSON.encode({"version": VERSION, "editions": len(newest_first), "fields": FIELDS})
    body = head[:-1] + ',"stories":[\n' + ",\n".join(rows) + ("\n" if rows else "") + "]}"
    script = (
        "/* The stories search.html searches, written by `digest` with the archive. Data only. */\n"
        f"window.DIGEST_SEARCH = {_escape(body)};\n"
    )
    return script.encode("utf-8")


def index_entries(newest_first: Sequence[Edition]) -> list[dict[str, Any]]:
    """The index's stories as dicts (field name -> value), in the order the index holds them."""
    return [dict(zip(FIELDS, row, strict=True)) for row in _rows(newest_first)]


def _rows(newest_first: Sequence[Edition]) -> Iterator[list[Any]]:
    for edition in newest_first:
        seen: set[str] = set()  # a story listed twice in an edition has one page: one entry
        for section in edition.sections:
            for story in section.stories:
                url = story_path(edition.day, story.id)
                if url in seen:
                    continue
                seen.add(url)
                yield [
                    clip(story.title, TITLE_LIMIT),
                    url,
                    edition.day.isoformat(),
                    category_name(story.category),
                    len(story.outlets),
                    " · ".join(k[:KEYWORD_LIMIT] for k in story.keywords[:KEYWORDS]),
                    clip(story.brief_summary, TEXT_LIMIT) or clip(story.summary, TEXT_LIMIT),
                ]


def _escape(text: str) -> str:
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

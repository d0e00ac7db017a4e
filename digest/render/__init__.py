"""Publishing to readers: the HTML digest and the static archive with its Atom feeds.

The public face is small: `write_archive` (and its `ArchiveReport`), `render_digest_html`,
`safe_url` for anyone who turns scraped URLs into links, and the archive's page paths for anyone
who links into it (emails: "read in the archive").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.render.archive import ArchiveReport, render_pages, write_archive
    from digest.render.digest_html import render_digest_html
    from digest.render.layout import (
        absolute_url,
        category_feed_path,
        category_path,
        edition_path,
        story_path,
    )
    from digest.render.sanitize import clean_text, safe_url

# Names are imported on first use: a command that only cleans text for the terminal
# (`digest.render.sanitize`) does not load the templates.
_EXPORTS = {
    "ArchiveReport": "digest.render.archive",
    "render_pages": "digest.render.archive",
    "write_archive": "digest.render.archive",
    "render_digest_html": "digest.render.digest_html",
    "absolute_url": "digest.render.layout",
    "category_feed_path": "digest.render.layout",
    "category_path": "digest.render.layout",
    "edition_path": "digest.render.layout",
    "story_path": "digest.render.layout",
    "clean_text": "digest.render.sanitize",
    "safe_url": "digest.render.sanitize",
}

__all__ = [
    "ArchiveReport",
    "absolute_url",
    "category_feed_path",
    "category_path",
    "clean_text",
    "edition_path",
    "render_digest_html",
    "render_pages",
    "safe_url",
    "story_path",
    "write_archive",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'digest.render' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

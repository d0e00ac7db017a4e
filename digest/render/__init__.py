"""Publishing to readers: the HTML digest and the static archive with its Atom feeds.

The public face is small: `write_archive` (and its `ArchiveReport`), `render_digest_html`,
`safe_url` for anyone who turns scraped URLs into links, and the archive's page paths for anyone
who links into it (emails: "read in the archive").
"""

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

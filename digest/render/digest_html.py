"""The HTML digest: one edition on one page, as the archive holds it and as `latest.html`.

The same page also stands alone (`page=None`): its stylesheet is then inline, pinned in the CSP by
its hash, and its links into the archive are absolute when a base URL is configured (or left
out when none is).
"""

from __future__ import annotations

from datetime import date

from digest.config import ArchiveConfig
from digest.edition.front_page import lead_stories
from digest.models import Edition
from digest.render.layout import LATEST, Links, normalize_base_url
from digest.render.templating import (
    PAGE_CSP,
    clean_edition,
    inline_css,
    inline_style_csp,
    long_date,
    render,
    story_count,
    stylesheet,
)

__all__ = ["LEAD_STORIES", "render_digest_html"]

LEAD_STORIES = 3  # the default of [publish] lead_stories: "Top stories" atop the page


def render_digest_html(
    edition: Edition,
    config: ArchiveConfig,
    *,
    page: str | None = LATEST,
    previous: date | None = None,
    lead: int = LEAD_STORIES,
) -> str:
    """The edition as one HTML page.

    `page` is where the page will live in the archive (links are relative to it); None renders a
    standalone page. `previous` is the day of the edition before this one, linked when given.
    `lead` stories open it ("Top stories"), then its categories in the edition's order, as
    the email has them.
    """
    return render_edition_page(
        clean_edition(edition),
        title=config.title,
        base_url=normalize_base_url(config.base_url),
        page=page,
        previous=previous,
        has_latest=True,
        lead=lead,
    )


def render_edition_page(
    edition: Edition,
    *,
    title: str,
    base_url: str,
    page: str | None,
    previous: date | None,
    has_latest: bool,
    lead: int = LEAD_STORIES,
) -> str:
    """The edition page for an edition whose text is already clean (see `clean_edition`)."""
    standalone = page is None
    return render(
        "archive/edition.html",
        title=f"{long_date(edition.day)} · {title}",
        archive_title=title,
        csp=inline_style_csp(stylesheet()) if standalone else PAGE_CSP,
        css=inline_css() if standalone else None,
        links=Links(page, base_url),
        has_latest=has_latest,
        edition=edition,
        tz=edition.timezone,
        n_stories=story_count(edition),
        previous=previous,
        lead=lead_stories(edition, lead),
    )

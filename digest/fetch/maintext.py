"""The main text and title of an HTML page.

trafilatura with `favor_precision=True`, measured against crawl4ai's markdown on extraction-dev
(990 real pages with must / must-not snippets; `bench/deep.py`): F1 0.92 on the saved HTML
(crawl4ai's `fit_markdown` 0.76, `raw_markdown` 0.69, a whole-body text dump 0.69); on 100 pages
rendered by Chromium, 0.89 on the rendered DOM against 0.76 for `fit_markdown`. A default-settings
retry when the precise pass finds nothing did not help (0.921) and turns "Loading..." shells into
"articles", so there is none: no text is a signal for the crawler's fallback.
It is pure CPU (~20-50 ms a page, far more on hostile shapes): the service runs it through
`digest.fetch.parsers`, in a child process under a deadline, on HTML bounded by `bound_html`.
"""

from __future__ import annotations

import logging
import re

from digest.fetch.shape import bound_html
from digest.models import MainText

log = logging.getLogger(__name__)

_WS = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TITLE_SEPARATORS = (" | ", " – ", " — ", " - ", " :: ", " · ")


def extract_main_text(html: str, url: str | None = None) -> MainText:
    """Main text and title of `html` (never raises: a page trafilatura cannot parse is empty)."""
    if not html or not html.strip():
        return MainText("", "")
    import trafilatura

    html = bound_html(html)
    _quiet_trafilatura()
    try:
        doc = trafilatura.bare_extraction(
            html,
            url=url,
            favor_precision=True,
            include_comments=False,
            include_tables=True,
            with_metadata=True,
            deduplicate=False,
        )
    except Exception as err:  # lxml and trafilatura raise many kinds on broken markup
        log.debug("trafilatura failed on %s: %s", url or "page", err)
        doc = None
    text = _clean(getattr(doc, "text", None) or "")
    title = _clean_title(getattr(doc, "title", None) or "") or html_title(html)
    return MainText(title=title, text=_drop_leading_title(text, title))


def _quiet_trafilatura() -> None:
    """trafilatura logs ERROR for every empty or tiny page, a normal case here."""
    logger = logging.getLogger("trafilatura")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.CRITICAL)


def html_title(html: str) -> str:
    """The page's title from og:title or <title>, without a trailing " | Site name"."""
    from selectolax.lexbor import LexborHTMLParser

    try:
        tree = LexborHTMLParser(html[:500_000])
    except Exception:
        return ""
    for selector in ('meta[property="og:title"]', 'meta[name="twitter:title"]'):
        node = tree.css_first(selector)
        content = node.attributes.get("content") if node is not None else None
        if content and content.strip():
            return _clean_title(content)
    node = tree.css_first("title")
    if node is not None:
        return _strip_site_name(_clean_title(node.text()))
    node = tree.css_first("h1")
    return _clean_title(node.text()) if node is not None else ""


def _clean(text: str) -> str:
    lines = [_WS.sub(" ", line).strip() for line in text.splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _clean_title(title: str) -> str:
    return _WS.sub(" ", title.replace("\n", " ")).strip()[:500]


def _strip_site_name(title: str) -> str:
    for sep in _TITLE_SEPARATORS:
        head, found, tail = title.rpartition(sep)
        if found and len(head) >= 15 and len(tail) <= 40:
            return head.strip()
    return title


def _drop_leading_title(text: str, title: str) -> str:
    """trafilatura keeps the <h1> as the first line; the title is carried separately."""
    first, sep, rest = text.partition("\n")
    if title and sep and first.strip().casefold() == title.casefold():
        return rest.lstrip("\n")
    return text

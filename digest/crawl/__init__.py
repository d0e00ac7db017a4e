"""Deep crawl: pages read in depth (Chromium via crawl4ai, or plain HTTP), PDFs, main text.

`Crawler` is the public face (see `digest/crawl/crawler.py`). Names are imported on first use,
so importing the package (as the PDF worker process does) stays cheap, and crawl4ai is only
imported when a browser starts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.crawl.browser import Browser
    from digest.crawl.crawler import Crawler, Mode
    from digest.errors import BrowserUnavailableError, PdfError
    from digest.fetch.maintext import MainText, extract_main_text

_EXPORTS = {
    "Browser": "digest.crawl.browser",
    "BrowserUnavailableError": "digest.errors",
    "Crawler": "digest.crawl.crawler",
    "Mode": "digest.crawl.crawler",
    "MainText": "digest.fetch.maintext",
    "extract_main_text": "digest.fetch.maintext",
    "PdfError": "digest.errors",
}

__all__ = [
    "Browser",
    "BrowserUnavailableError",
    "Crawler",
    "MainText",
    "Mode",
    "PdfError",
    "extract_main_text",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'digest.crawl' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

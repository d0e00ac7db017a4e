"""DuckDuckGo replaced at its boundary, the `ddgs.DDGS` class: the one peer that cannot exist here.

In-process tests inject `FakeDDGS`-like objects directly. Subprocess tests run the real CLI through
`python -m tests.fake_ddgs ARGS...`, which installs `ScriptedDDGS` in place of `ddgs.DDGS` and then
runs `digest`; the script (results per query, or a failure) comes from the JSON file named by
$DIGEST_FAKE_DDGS, and every call is appended to that file's `.calls` log.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import primp
from ddgs.exceptions import DDGSException, RatelimitException

if TYPE_CHECKING:  # not imported at run time: `python -m tests.fake_ddgs` starts digest
    from tests.newsweb import Article, NewsWeb

ENV = "DIGEST_FAKE_DDGS"


def ddgs_no_network_error() -> DDGSException:
    """Exactly the shape ddgs 9.16 raises with no DNS: outer(inner) with primp error as cause."""
    primp_err = primp.DNSError(
        "error sending request for url (https://duckduckgo.com/?q=finance+news) > error "
        'resolving DNS > DNS error: no records found for Query { name: Name("duckduckgo.com.") }'
    )
    inner = DDGSException(f"{type(primp_err).__name__}: {primp_err!r}")
    inner.__cause__ = primp_err
    return DDGSException(inner)


def news_rows(web: NewsWeb, articles: Iterable[Article]) -> list[dict[str, Any]]:
    """DuckDuckGo news rows for articles of the local news web, dated now."""
    now = datetime.now(UTC).isoformat()
    return [
        {
            "date": now,
            "title": a.title,
            "body": a.description,
            "url": web.url(a.path),
            "image": None,
            "source": "Example News",
        }
        for a in articles
    ]


def long_story_rows(web: NewsWeb) -> list[dict[str, Any]]:
    """Today's technology news as three stories, each told by three outlets at length (the
    retold ones under their own outlets' names, the others copied long under new ones): more
    text than a 2k or 4k context window holds. The long copies are added to `web`."""
    from dataclasses import replace

    from tests.newsweb import ARTICLES, RETELLINGS, Route, render_article

    background = tuple(
        p for a in ARTICLES if a.category == "world" for p in (a.lede, *a.paragraphs)
    )
    outlets = ("Wire Service", "Daily Ledger", "Metro Wire")
    top = [a for a in ARTICLES if a.category == "technology"][:3]
    rows = news_rows(web, top)
    told = {a.slug: 1 for a in top}
    for outlet, article in RETELLINGS:
        if article.category == "technology":
            rows.append({**news_rows(web, [article])[0], "source": outlet})
            base = article.slug.rsplit("-", 1)[0]
            told[base] = told.get(base, 1) + 1
    for original in top:
        for outlet in outlets[told[original.slug] - 1 : 2]:
            slug = f"{original.slug}-{outlet.lower().replace(' ', '-')}-long"
            copy = replace(original, slug=slug, paragraphs=(*original.paragraphs, *background))
            web.add(Route(copy.path, render_article(copy), content_type="text/html"))
            rows.append({**news_rows(web, [copy])[0], "source": outlet})
    return rows


def write_script(path: Path, *, news=None, text=None, fail: str | None = None) -> Path:
    """Write a script for `ScriptedDDGS`: `news`/`text` map a query to result rows (or to an
    error message, which that query then fails with)."""
    path.write_text(json.dumps({"news": news or {}, "text": text or {}, "fail": fail}))
    return path


def calls(path: Path) -> list[dict[str, Any]]:
    log = path.with_suffix(".calls")
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


class ScriptedDDGS:
    """Answers like `ddgs.DDGS` from the script file; fails as ddgs does when told to."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._path = Path(os.environ[ENV])
        self._script = json.loads(self._path.read_text())

    def _answer(self, kind: str, query: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        with self._path.with_suffix(".calls").open("a") as log:
            log.write(json.dumps({"kind": kind, "query": query, **kwargs}) + "\n")
        fail = self._script.get("fail")
        if fail == "offline":
            raise ddgs_no_network_error()
        if fail == "ratelimit":
            raise RatelimitException("202 Ratelimit")
        rows = self._script[kind].get(query)
        if isinstance(rows, str):  # this query fails with the search engine's own message
            raise DDGSException(rows)
        if not rows:
            raise DDGSException("No results found.")
        return rows[: kwargs.get("max_results") or len(rows)]

    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._answer("news", query, kwargs)

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._answer("text", query, kwargs)


if __name__ == "__main__":
    from digest.runtime import stops

    stops.catch_early()  # as `python -m digest` does first

    import ddgs

    from tests.checkout import own_templates

    own_templates()
    ddgs.DDGS = ScriptedDDGS  # type: ignore[misc]
    from digest.cli import main

    main()


def story_rows(web: NewsWeb, category: str = "technology") -> list[dict[str, Any]]:
    """Today's news of a category where stories are told by several outlets in their own words:
    its articles (from "Example News") and their retellings (`newsweb.RETELLINGS`), each
    under its own outlet's name."""
    from tests.newsweb import ARTICLES, RETELLINGS

    rows = news_rows(web, [a for a in ARTICLES if a.category == category])
    for outlet, article in RETELLINGS:
        if article.category == category:
            (row,) = news_rows(web, [article])
            rows.append({**row, "source": outlet})
    return rows

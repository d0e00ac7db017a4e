"""What the on-demand commands return: typed, each with the one `to_json` that gives its JSON.

`digest query` gives a `QueryResult` (archive and live search) or, with `--deep`, a `DeepAnswer`;
`digest extract --deep` gives a `DeepExtract` per URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from digest.models import Item, SearchHit, Summary


@dataclass
class QueryResult:
    query: str
    archive: list[SearchHit] | None = None  # None: not asked
    live: list[Item] | None = None
    live_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query}
        if self.archive is not None:
            out["archive"] = [h.to_json() for h in self.archive]
        if self.live is not None or self.live_error:
            out["live"] = [i.to_json() for i in self.live or []]
        if self.live_error:
            out["live_error"] = self.live_error
        return out


@dataclass(frozen=True, slots=True)
class DeepExtract:
    """One URL read in depth: its main text, summary and keywords, or why there are none."""

    url: str
    title: str = ""
    text: str = ""
    error: str | None = None
    note: str | None = None  # how the page had to be read (cut at the size limit, ...)
    summary: Summary | None = None
    snippet: str | None = None  # the search result's snippet, when it came from a search

    def to_json(self) -> dict[str, Any]:
        s = self.summary
        out: dict[str, Any] = {
            "url": self.url,
            "title": self.title,
            "text": self.text,
            "summary": s.summary if s else "",
            "brief_summary": s.brief_summary if s else "",
            "keywords": list(s.keywords) if s else [],
            "summarizer": s.summarizer if s else None,
            "error": self.error,
            "note": self.note,
        }
        if self.snippet is not None:
            out["snippet"] = self.snippet
        return out


@dataclass(frozen=True, slots=True)
class DeepAnswer:
    """An answer to a query written from its search results' texts only, citing them."""

    query: str
    answer: str
    answerer: str  # "llm:<model>" or "extractive"
    cited: tuple[int, ...]  # the sources the answer cites, as [1], [2], ...
    sources: tuple[DeepExtract, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "answer": self.answer,
            "answerer": self.answerer,
            "cited": list(self.cited),
            "sources": [s.to_json() for s in self.sources],
        }

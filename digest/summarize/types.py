"""What goes into the summarizer and what comes out besides `digest.models.Summary`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from digest.models import Page, Summary


@dataclass(frozen=True, slots=True)
class ArticleInput:
    """One article to summarize: its main text and where it came from."""

    url: str
    title: str
    text: str
    source: str = ""  # the outlet's name, when known

    @classmethod
    def from_page(cls, page: Page, source: str = "") -> ArticleInput:
        return cls(url=page.final_url or page.url, title=page.title, text=page.text, source=source)

    @property
    def content_hash(self) -> str:
        """Identifies the text summarized: an unchanged article need not be summarized again."""
        h = hashlib.sha256()
        for part in (self.title, self.text):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()


class Source(NamedTuple):
    """One numbered source for an answer: its main text, or its summary when that is all we have."""

    url: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A short answer to a query written from the sources, citing them as [1], [2], …

    `cited` lists the source numbers used (1-based, in order of first use); `answerer` is
    "extractive" or "llm:<model>"; `fallback_reason` says why the LLM was not used, if it wasn't.
    """

    query: str
    text: str
    sources: tuple[Source, ...]
    cited: tuple[int, ...] = ()
    answerer: str = "extractive"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallback_reason: str | None = None


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """A summary and, when it is extractive although an LLM is configured, the reason why."""

    summary: Summary
    fallback_reason: str | None = None

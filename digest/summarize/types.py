"""What goes into the summarizer and what comes out besides `digest.models.Summary`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from typing import NamedTuple

from digest.models import Page, StorySummary, Summary


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


@dataclass(frozen=True, slots=True)
class StorySource:
    """One outlet's telling of a story, as a story's summary is written from it."""

    url: str
    outlet: str
    title: str
    text: str
    published: datetime | None = None
    new: bool = False  # not among the sources of the story's earlier summary


@dataclass(frozen=True, slots=True)
class StoryInput:
    """A story to summarize in one call: its outlets' texts (the best first), today's date, and
    its earlier summary when it had one, so that the new one can say what changed."""

    title: str
    sources: tuple[StorySource, ...]
    today: date
    earlier: StorySummary | None = None

    @property
    def content_hash(self) -> str:
        """Identifies what is summarized (each source's URL and text, in order): an unchanged
        story is never summarized twice."""
        h = hashlib.sha256()
        for s in self.sources:
            for part in (s.url, s.title, s.text):
                h.update(part.encode("utf-8"))
                h.update(b"\0")
            h.update(b"\1")
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class StoryOutcome:
    """A story's summary and, when it is extractive although an LLM is configured, why."""

    summary: StorySummary
    fallback_reason: str | None = None

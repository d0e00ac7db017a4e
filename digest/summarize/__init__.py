"""Summaries and sourced answers: an LLM when one is configured, extractive otherwise or when it
fails. The caller looks up the API key (from the variable `LLMConfig.api_key_env` names) and
passes it in; nothing here reads the environment.

    summarizer = Summarizer(config.llm, api_key=key)
    summary = await summarizer.summarize(ArticleInput(url=..., title=..., text=...))
    summary.summarizer        # "llm:<model>" or "extractive"
    answer = await summarizer.answer("query", [(url, title, text), ...])
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from digest.config import LLMConfig
from digest.errors import SummarizeError
from digest.models import Summary
from digest.runtime import metrics
from digest.runtime.closing import AsyncClosing
from digest.runtime.threads import off_loop
from digest.summarize import answer as _answer
from digest.summarize import extractive
from digest.summarize.article import LLMSummarizer
from digest.summarize.llm import LLMClient
from digest.summarize.types import Answer, ArticleInput, Source, SummaryOutcome

if TYPE_CHECKING:  # openai is imported when an LLM client is made, not with the summarizer
    import openai

__all__ = [
    "Answer",
    "ArticleInput",
    "Source",
    "SummarizeError",
    "Summarizer",
    "SummarizerStats",
    "SummaryOutcome",
]

log = logging.getLogger(__name__)

_INLINE_CHARS = 20_000


@dataclass
class SummarizerStats:
    """Counts for reports and `digest status`: how many summaries each way, tokens used."""

    llm: int = 0
    extractive: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    last_fallback_reason: str | None = None


class Summarizer(AsyncClosing):
    """The one entry point: LLM summaries with an extractive fallback, or extractive only."""

    def __init__(
        self,
        config: LLMConfig | None,
        api_key: str | None = None,
        *,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self.config = config
        self._llm = LLMSummarizer(config, api_key, client=client) if config else None
        self.stats = SummarizerStats()

    @property
    def preferred(self) -> str:
        """What a summary from this summarizer is marked with when all goes well."""
        return self._llm.name if self._llm else "extractive"

    @property
    def llm(self) -> LLMClient | None:
        return self._llm.llm if self._llm else None

    async def aclose(self) -> None:
        if self._llm is not None:
            await self._llm.aclose()

    async def summarize(self, article: ArticleInput) -> Summary:
        """A summary that is always there: the LLM's, or an extractive one (marked as such)."""
        return (await self.summarize_with_outcome(article)).summary

    async def summarize_with_outcome(self, article: ArticleInput) -> SummaryOutcome:
        """Like `summarize`, also saying why the LLM was not used when it was configured."""
        reason: str | None = None
        if self._llm is not None:
            try:
                summary = await self._llm.summarize(article)
            except SummarizeError as err:
                reason = str(err)
                log.warning("summary of %s is extractive: %s", article.url, reason)
                self.stats.fallbacks += 1
                self.stats.last_fallback_reason = reason
                self.stats.prompt_tokens += err.prompt_tokens  # spent, even if to no avail
                self.stats.completion_tokens += err.completion_tokens
            else:
                self.stats.llm += 1
                metrics.summaries.labels("llm").inc()
                self.stats.prompt_tokens += summary.prompt_tokens
                self.stats.completion_tokens += summary.completion_tokens
                return SummaryOutcome(summary)
        self.stats.extractive += 1
        metrics.summaries.labels("extractive").inc()
        if len(article.text) > _INLINE_CHARS:  # ~10 ms per 2,000 words: keep the loop free
            summary = await off_loop(extractive.summarize, article)
        else:
            summary = extractive.summarize(article)
        return SummaryOutcome(summary, reason)

    async def answer(self, query: str, sources: Iterable[Source | tuple[str, str, str]]) -> Answer:
        """A short answer from the sources, citing them as [1], [2], …"""
        result = await _answer.answer(query, sources, llm=self.llm)
        if result.fallback_reason:
            log.warning("answer to %r is extractive: %s", query, result.fallback_reason)
        self.stats.prompt_tokens += result.prompt_tokens
        self.stats.completion_tokens += result.completion_tokens
        return result

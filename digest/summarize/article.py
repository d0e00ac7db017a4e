"""One article's summary by the configured model: the article wrapped as untrusted data, the
reply checked like any untrusted text.

It must validate, links other than the article's are removed, and a summary that shares no key
term with the article is refused (a model that obeyed an instruction planted in the page
usually writes about something else).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from digest.config import LLMConfig
from digest.errors import SummarizeError
from digest.facts.text import content_terms, length, searchable, split_sentences
from digest.models import Summary
from digest.summarize import extractive, prompts
from digest.summarize.llm import LLMClient
from digest.summarize.output import (
    RESTATES_HEADLINE,
    one_line,
    restates_headline,
    strip_links,
)
from digest.summarize.request import MAX_KEYWORDS, InvalidOutput, JSONRequest
from digest.summarize.types import ArticleInput

if TYPE_CHECKING:  # imported when a client is made: a command that writes no summary starts without
    import openai

SUMMARY_TOKENS = 800  # room for an article's summary: 300 words, a brief, keywords, in JSON
MAX_SUMMARY_WORDS = 450


def bullets_joined(value: object) -> object:
    """Models sometimes give a list of bullet strings where a string was asked for."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return value


class SummaryReply(BaseModel):
    """The JSON the model must return. Only `summary` is essential: a missing title, brief or
    keywords is filled from the article rather than failing the whole summary."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    title: str = ""
    summary: str = Field(min_length=1)
    brief_summary: str = Field(
        default="", validation_alias=AliasChoices("brief_summary", "briefSummary", "brief")
    )
    keywords: list[str] = Field(default_factory=list)

    _text = field_validator("title", "summary", "brief_summary", mode="before")(bullets_joined)

    @field_validator("keywords", mode="before")
    @classmethod
    def _keywords(cls, value: object) -> object:
        if isinstance(value, str):
            return [k for k in value.replace(";", ",").split(",")]
        if isinstance(value, list):
            return [str(v) for v in value if isinstance(v, str | int | float)]
        return value


def _cap_words(text: str, limit: int) -> str:
    if length(text) <= limit:
        return text
    out: list[str] = []
    total = 0
    for sentence in split_sentences(text):
        n = length(sentence)
        if out and total + n > limit:
            break
        out.append(sentence)
        total += n
    return " ".join(out)


def _on_topic(summary: str, article: ArticleInput) -> bool:
    """Whether the summary shares at least one key term with the article (a heuristic against
    output that an instruction planted in the page replaced wholesale)."""
    if length(article.text) < 80:
        return True
    key_terms = set()
    for phrase in extractive.frequent_terms(article.text, article.title, n=10):
        key_terms.update(content_terms(phrase))
    key_terms.update(content_terms(article.title))
    if not key_terms:
        return True
    return bool(key_terms & set(content_terms(summary)))


def written_keywords(replied: Sequence[str], sources: Sequence[str]) -> list[str]:
    """The model's keywords that the sources write (whatever the case): cleaned of links and
    markup, without repeats. A name the model made up or misspelt is no keyword to search by."""
    written = "\n".join(searchable(s) for s in sources)
    out: list[str] = []
    for k in replied:
        k = one_line(strip_links(k, ()), 60).strip(" .,;:#\"'")
        if k and k.casefold() not in {o.casefold() for o in out} and searchable(k) in written:
            out.append(k)
    return out


def build_summary(data: dict[str, Any], article: ArticleInput, model_name: str) -> Summary:
    """Validate a model's JSON into a Summary: links stripped, lengths capped, gaps filled."""
    reply = SummaryReply.model_validate(data)
    allowed = [article.url]
    summary = _cap_words(strip_links(reply.summary, allowed), MAX_SUMMARY_WORDS)
    if length(summary) < 3:
        raise InvalidOutput("the summary is empty once links and markup are removed")
    if restates_headline(summary, [article.title], [article.source]):
        raise InvalidOutput(RESTATES_HEADLINE)
    if not _on_topic(summary, article):
        raise InvalidOutput("the summary does not describe the article between the markers")
    title = one_line(strip_links(reply.title, allowed), 200) or one_line(article.title, 200)
    brief = one_line(strip_links(reply.brief_summary, allowed), 600)
    if not brief:
        brief = " ".join(split_sentences(summary)[:2])
    keywords = written_keywords(reply.keywords, [article.text, article.title])
    if not keywords:
        keywords = extractive.keywords(article.text, article.title)
    return Summary(
        title=title,
        summary=summary,
        brief_summary=brief,
        keywords=tuple(keywords[:MAX_KEYWORDS]),
        summarizer=model_name,
    )


class LLMSummarizer:
    """One article per call, wrapped as untrusted data; raises SummarizeError on any failure."""

    def __init__(
        self,
        config: LLMConfig,
        api_key: str | None,
        *,
        client: openai.AsyncOpenAI | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        self.config = config
        self.llm = llm or LLMClient(config, api_key, client=client)

    @property
    def name(self) -> str:
        return self.llm.name

    async def aclose(self) -> None:
        await self.llm.aclose()

    async def summarize(self, article: ArticleInput) -> Summary:
        if not article.text.strip():
            raise SummarizeError(f"nothing to summarize: {article.url} has no text")

        def request(max_chars: int) -> JSONRequest[Summary]:
            """The call with the article cut to `max_chars` (what the model sees, and what
            its summary is checked against)."""
            sent = replace(article, text=prompts.cut(article.text, max_chars))
            nonce = prompts.nonce_for(sent.url, sent.title, sent.source or "", sent.text)
            return JSONRequest(
                messages=prompts.summary_messages(sent, nonce),
                schema_name="article_summary",
                schema=prompts.SUMMARY_SCHEMA,
                validate=lambda data: build_summary(data, sent, self.name),
                repair_hint=(
                    "Reply with only the JSON object with the keys title, summary, brief_summary "
                    "and keywords, summarizing the article between the markers."
                ),
                max_tokens=SUMMARY_TOKENS,
                resize=request,
                chars=len(sent.text),
            )

        done = await self.llm.complete_json(request(self.config.max_input_chars))
        s = done.value
        return Summary(
            title=s.title,
            summary=s.summary,
            brief_summary=s.brief_summary,
            keywords=s.keywords,
            summarizer=s.summarizer,
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
        )

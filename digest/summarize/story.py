"""One summary per story: one LLM call reads the story's top outlets' texts and writes its
summary, brief and keywords, citing the outlets as [1], [2], ...; then every claim in it is
checked against those texts before anything is published.

The check (`digest.facts.claims`) removes each sentence with a figure, date, quote or name
the sources do not hold. A summary that loses more than half its words that way, or is left
with fewer than `MIN_WORDS` by it, is not trusted at all: the story gets an extractive summary
of its best source instead, and its note says why. Keywords the sources do not back are dropped too.
Extractive summaries are checked the same way (they are the sources' own sentences, so they
pass) so that every summary carries its counts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from digest.errors import SummarizeError
from digest.facts.claims import SourceIndex
from digest.facts.text import length, split_sentences
from digest.models import Disagreement, Outlet, StorySummary
from digest.runtime.threads import off_loop
from digest.summarize import extractive, prompts
from digest.summarize.article import bullets_joined, written_keywords
from digest.summarize.disputes import (
    Confirmed,
    describe,
    dispute_summary,
    found_and_attributed,
    story_disagreements,
    with_attributions,
    without_one_sided,
)
from digest.summarize.llm import LLMClient
from digest.summarize.output import (
    RESTATES_HEADLINE,
    clean_citations,
    one_line,
    restates_headline,
    strip_links,
)
from digest.summarize.request import MAX_KEYWORDS, InvalidOutput, JSONRequest
from digest.summarize.types import ArticleInput, StoryInput, StoryOutcome

log = logging.getLogger(__name__)

# 200 words of summary, a brief and keywords, in JSON: ~450 tokens; a small model that loops
# is cut here instead of writing on for minutes.
MAX_OUTPUT_TOKENS = 700
MIN_WORDS = 25  # a checked summary shorter than this is replaced by an extractive one
MAX_WORDS = 350
KEPT_SHARE = 0.5  # ... and so is one that lost more than half its words to the check
_INLINE_CHARS = 20_000


class StoryReply(BaseModel):
    """The JSON the model must return; only `summary` is essential."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    summary: str = Field(min_length=1)
    brief_summary: str = Field(
        default="", validation_alias=AliasChoices("brief_summary", "briefSummary", "brief")
    )
    keywords: list[str] = Field(default_factory=list)

    _text = field_validator("summary", "brief_summary", mode="before")(bullets_joined)

    @field_validator("keywords", mode="before")
    @classmethod
    def _keywords(cls, value: object) -> object:
        if isinstance(value, str):
            return value.replace(";", ",").split(",")
        if isinstance(value, list):
            return [str(v) for v in value if isinstance(v, str | int | float)]
        return value


def _clean(text: str, story: StoryInput) -> str:
    text, _ = clean_citations(strip_links(text, [s.url for s in story.sources]), len(story.sources))
    return text


def _cap(text: str, limit: int) -> str:
    out: list[str] = []
    total = 0
    for sentence in split_sentences(text):
        if out and total + length(sentence) > limit:
            break
        out.append(sentence)
        total += length(sentence)
    return " ".join(out)


def _outlets(story: StoryInput) -> tuple[Outlet, ...]:
    return tuple(Outlet(name=s.outlet, url=s.url, title=s.title) for s in story.sources)


def _index(story: StoryInput, texts: Sequence[str]) -> SourceIndex:
    """What claims are checked against: the texts the model was given (and the earlier summary
    it was shown, itself checked against its own sources), with the story's headlines."""
    known = [*texts, *(s.title for s in story.sources), story.title]
    if story.earlier is not None:
        known.append(story.earlier.summary)
    return SourceIndex(known)


# What a summary's disagreements are judged on: the texts by outlet (the rules find them), or the
# disagreements the rules found and those the model confirmed (`digest.jobs.figure_check`).
Judged = Mapping[str, str] | Sequence[Disagreement] | Confirmed


def build_story_summary(
    data: dict[str, Any],
    story: StoryInput,
    texts: Sequence[str],
    model_name: str,
    *,
    by_outlet: Judged | None = None,
) -> StorySummary:
    """Validate a model's JSON into a checked StorySummary; InvalidOutput when nothing usable
    is left (the caller falls back to extractive and says why). Where the outlets' texts
    (`by_outlet`, else the story's sources) disagree on a figure, a sentence taking one side is
    removed like one with an unfound claim, and the values are given attributed
    (`digest.summarize.disputes`)."""
    reply = StoryReply.model_validate(data)
    summary = _cap(_clean(reply.summary, story), MAX_WORDS)
    if length(summary) < 3:
        raise InvalidOutput("the summary is empty once links and markup are removed")
    headlines = [story.title, *(s.title for s in story.sources)]
    if restates_headline(summary, headlines, [s.outlet for s in story.sources]):
        raise InvalidOutput(RESTATES_HEADLINE)
    index = _index(story, texts)
    checked = index.check(summary)
    if checked.removed:
        log.info("claim check of the summary of “%s”: %s", story.title, checked.describe())
    disputes, attributed = found_and_attributed(
        story_disagreements(story) if by_outlet is None else by_outlet
    )
    sided = without_one_sided(checked.text, disputes)
    described = checked.describe()
    if sided.removed:
        described += "; " + describe(sided.removed, disputes)
        log.info("summary of “%s”: %s", story.title, describe(sided.removed, disputes))
    removed = checked.removed + len(sided.removed)
    kept = length(sided.text)
    # A short summary whose claims were all found stands; one cut short by the check does not.
    if removed and (kept < MIN_WORDS or kept < KEPT_SHARE * length(summary)):
        raise UnfoundClaims(described, checked.claims, checked.found, removed)
    brief_check = index.check(one_line(_clean(reply.brief_summary, story), 600))
    brief_sided = without_one_sided(brief_check.text, disputes)
    brief = brief_sided.text or " ".join(split_sentences(sided.text)[:2])
    sources = [*texts, *(s.title for s in story.sources), story.title]
    keywords = [k for k in written_keywords(reply.keywords, sources) if not index.check(k).removed]
    if not keywords:
        keywords = _extractive_keywords(story, texts)
    return StorySummary(
        title=story.title,
        summary=with_attributions(sided.text, attributed),
        brief_summary=brief,
        keywords=tuple(keywords[:MAX_KEYWORDS]),
        summarizer=model_name,
        sources=_outlets(story),
        claims=checked.claims + brief_check.claims,
        claims_found=checked.found + brief_check.found,
        sentences_removed=removed + brief_check.removed + len(brief_sided.removed),
    )


class UnfoundClaims(InvalidOutput):
    """The claim check left too little of the summary to publish. Not repaired: a model that
    invented facts in one reply is likely to in the next, and a second call would double what
    the story costs; the story gets its extractive summary instead."""

    repairable = False

    def __init__(self, described: str, claims: int, found: int, removed: int) -> None:
        super().__init__(f"claim check: {described}")
        self.claims, self.found, self.removed = claims, found, removed


def _extractive_keywords(story: StoryInput, texts: Sequence[str]) -> list[str]:
    return extractive.keywords(texts[0] if texts else "", story.title)


async def llm_story_summary(
    llm: LLMClient, story: StoryInput, *, by_outlet: Judged | None = None
) -> StorySummary:
    """The LLM's checked summary of the story, in one call (a repair request aside); raises
    SummarizeError when the server fails or nothing trustworthy is left of the reply."""
    if not any(s.text.strip() for s in story.sources):
        raise SummarizeError(f"nothing to summarize: no source of “{story.title}” has a text")
    rejected: list[UnfoundClaims] = []

    def request(max_chars: int) -> JSONRequest[StorySummary]:
        """The call with the outlets' texts sharing `max_chars` (fewer when the model's
        context window is small: less of each outlet, never fewer outlets)."""
        texts = prompts.story_texts(story, max_chars)
        earlier = story.earlier.summary if story.earlier else ""
        nonce = prompts.nonce_for(story.title, earlier, *(s.url for s in story.sources), *texts)

        def validate(data: dict[str, Any]) -> StorySummary:
            try:
                return build_story_summary(data, story, texts, llm.name, by_outlet=by_outlet)
            except UnfoundClaims as err:
                rejected.append(err)
                raise

        return JSONRequest(
            messages=prompts.story_messages(story, texts, nonce),
            schema_name="story_summary",
            schema=prompts.STORY_SCHEMA,
            validate=validate,
            repair_hint=(
                "Reply with only the JSON object with the keys summary, brief_summary and "
                "keywords, using only facts stated in the sources and citing them as "
                f"[1] to [{len(story.sources)}]."
            ),
            max_tokens=MAX_OUTPUT_TOKENS,
            resize=request,
            chars=sum(len(t) for t in texts),
        )

    try:
        done = await llm.complete_json(request(llm.config.max_input_chars))
    except SummarizeError as err:
        if rejected:  # the model answered, but what it said was not in the sources
            raise ClaimCheckFailed(str(rejected[-1]), rejected[-1], err) from None
        raise
    return replace(
        done.value, prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens
    )


class ClaimCheckFailed(SummarizeError):
    """The model's summaries made claims the sources do not hold, too many to publish."""

    def __init__(self, message: str, check: UnfoundClaims, cause: SummarizeError) -> None:
        super().__init__(
            message, prompt_tokens=cause.prompt_tokens, completion_tokens=cause.completion_tokens
        )
        self.check = check


def extractive_story_summary(
    story: StoryInput,
    max_chars: int,
    note: str = "",
    *,
    rejected: UnfoundClaims | None = None,
    by_outlet: Judged | None = None,
) -> StorySummary:
    """The best source's own sentences (the first source with a text), checked like any
    summary; `note` says why it is extractive, and a rejected LLM summary's counts are kept."""
    texts = prompts.story_texts(story, max_chars)
    first = next((i for i, t in enumerate(texts) if t.strip()), 0)
    source = story.sources[first] if story.sources else None
    article = ArticleInput(
        url=source.url if source else "",
        title=story.title,
        text=texts[first] if texts else "",
        source=source.outlet if source else "",
    )
    made = extractive.summarize(article)
    checked = _index(story, texts).check(made.summary)
    made_summary = StorySummary(
        title=story.title,
        summary=made.summary,
        brief_summary=made.brief_summary,
        keywords=made.keywords,
        summarizer="extractive",
        sources=_outlets(story)[first : first + 1],
        claims=rejected.claims if rejected else checked.claims,
        claims_found=rejected.found if rejected else checked.found,
        sentences_removed=rejected.removed if rejected else 0,
        note=note,
    )
    # The best source's sentences state its own figures as fact: where outlets disagree, they
    # are attributed like a model's (`digest.summarize.disputes`).
    return dispute_summary(
        made_summary, story_disagreements(story) if by_outlet is None else by_outlet
    )


async def summarize_story(
    llm: LLMClient | None, story: StoryInput, *, by_outlet: Judged | None = None
) -> StoryOutcome:
    """A checked summary that is always there: the LLM's, or an extractive one saying why.
    `by_outlet`: the texts (outlet → text) a figure's disagreement is judged on, the story's
    sources when None (`digest.summarize.disputes`), or those the rules found with those the
    model confirmed (`Confirmed`)."""
    max_chars = llm.config.max_input_chars if llm else 12_000
    if llm is not None:
        try:
            return StoryOutcome(await llm_story_summary(llm, story, by_outlet=by_outlet))
        except ClaimCheckFailed as err:
            reason = str(err)
            log.warning("summary of “%s” is extractive: %s", story.title, reason)
            summary = await _extractive(
                story, max_chars, reason, rejected=err.check, by_outlet=by_outlet
            )
            return StoryOutcome(
                replace(
                    summary,
                    prompt_tokens=err.prompt_tokens,
                    completion_tokens=err.completion_tokens,
                ),
                reason,
            )
        except SummarizeError as err:
            reason = str(err)
            log.warning("summary of “%s” is extractive: %s", story.title, reason)
            summary = await _extractive(story, max_chars, reason, by_outlet=by_outlet)
            return StoryOutcome(
                replace(
                    summary,
                    prompt_tokens=err.prompt_tokens,
                    completion_tokens=err.completion_tokens,
                ),
                reason,
            )
    return StoryOutcome(await _extractive(story, max_chars, "", by_outlet=by_outlet))


async def _extractive(
    story: StoryInput,
    max_chars: int,
    note: str,
    *,
    rejected: UnfoundClaims | None = None,
    by_outlet: Judged | None = None,
) -> StorySummary:
    if sum(len(s.text) for s in story.sources) > _INLINE_CHARS:  # keep the loop free
        return await off_loop(
            extractive_story_summary,
            story,
            max_chars,
            note,
            rejected=rejected,
            by_outlet=by_outlet,
        )
    return extractive_story_summary(story, max_chars, note, rejected=rejected, by_outlet=by_outlet)

"""A short answer to a query, written only from numbered sources and citing them as [1], [2], …

With an LLM: the same negotiation and untrusted wrapping as summaries; citations outside 1..n are
dropped, links other than the sources' are removed, and an answer left with no valid citation is
refused. Without one (or when it fails): the source sentences most relevant to the query, each
followed by its [n].
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from digest.errors import SummarizeError
from digest.facts.text import content_terms, length, split_sentences
from digest.summarize import prompts
from digest.summarize.extractive import without_instructions
from digest.summarize.llm import LLMClient
from digest.summarize.output import clean_citations, clean_control, is_link_like, strip_links
from digest.summarize.request import InvalidOutput, JSONRequest
from digest.summarize.types import Answer, Source

ANSWER_MAX_WORDS = 150
ANSWER_TOKENS = 450  # room for the reply: 150 words with citations, in JSON
EXTRACTIVE_SENTENCES = 4
_MIN_SENTENCE_WORDS = 5
_BRACKETED_NUMBER = re.compile(r"\[[\d\s,;–-]*\]")
_PREFIX = 6  # query terms match words sharing their first six letters ("elect" ≈ "election")


def as_sources(items: Iterable[Source | tuple[str, str, str]]) -> tuple[Source, ...]:
    return tuple(s if isinstance(s, Source) else Source(*s) for s in items)


class AnswerReply(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    answer: str = Field(
        min_length=1, validation_alias=AliasChoices("answer", "text", "response", "content")
    )


def build_answer_text(
    data: dict[str, Any], sources: Sequence[Source]
) -> tuple[str, tuple[int, ...]]:
    """Validate a model's JSON answer: links other than the sources' removed, citations checked."""
    reply = AnswerReply.model_validate(data)
    text, cited = reply.answer, tuple[int, ...]()
    # Each cleaner only deletes, but one can expose work for the other ("x.example[]/y"):
    # alternate until neither changes anything.
    for _ in range(5):
        before = text
        text, cited = clean_citations(strip_links(text, [s.url for s in sources]), len(sources))
        if text == before:
            break
    else:
        raise InvalidOutput("the answer's links and citations could not be cleaned")
    if not cited:
        raise InvalidOutput(
            f"the answer cites no source as [1]..[{len(sources)}] (every statement needs one)"
        )
    return text, cited


async def llm_answer(llm: LLMClient, query: str, sources: Sequence[Source]) -> Answer:
    """The LLM's answer; raises SummarizeError when it fails or its output stays invalid."""
    if not sources:
        raise SummarizeError("no sources to answer from")
    nonce = prompts.nonce_for(query, *(part for s in sources for part in s))

    def request(max_chars: int) -> JSONRequest[tuple[str, tuple[int, ...]]]:
        """The call with the sources sharing `max_chars` (less of each in a small window)."""
        messages = prompts.answer_messages(query, sources, nonce, max_chars)
        return JSONRequest(
            messages=messages,
            schema_name="sourced_answer",
            schema=prompts.ANSWER_SCHEMA,
            validate=lambda data: build_answer_text(data, sources),
            repair_hint=(
                'Reply with only the JSON object {"answer": "..."}, citing the sources as '
                f"[1] to [{len(sources)}]."
            ),
            max_tokens=ANSWER_TOKENS,
            resize=request,
            chars=min(max_chars, sum(len(s.text) for s in sources)),
        )

    done = await llm.complete_json(request(llm.config.max_input_chars))
    text, cited = done.value
    return Answer(
        query=query,
        text=text,
        sources=tuple(sources),
        cited=cited,
        answerer=llm.name,
        prompt_tokens=done.prompt_tokens,
        completion_tokens=done.completion_tokens,
    )


def _stems(text: str) -> set[str]:
    return {t[:_PREFIX] for t in content_terms(text)}


def extractive_answer(
    query: str,
    sources: Iterable[Source | tuple[str, str, str]],
    *,
    fallback_reason: str | None = None,
) -> Answer:
    """The sentences of the sources that best match the query, each with its source number.

    Sentences are scored by the query terms they contain (weighted by rarity across all the
    sources' sentences) with a small bonus for a source's opening; at most two per source, so
    one long article does not crowd out the others. Only sentences that share a term with the
    query are used; when none does, the sources' opening sentences stand in, still cited.
    """
    numbered = as_sources(sources)
    query_stems = _stems(query)
    candidates: list[tuple[int, int, str, set[str]]] = []  # (source no., position, text, stems)
    for number, source in enumerate(numbered, start=1):
        text = without_instructions(clean_control(source.text))
        for position, sentence in enumerate(split_sentences(text)):
            if length(sentence) < _MIN_SENTENCE_WORDS:
                continue
            if any(is_link_like(w) for w in sentence.split()):
                sentence = strip_links(sentence, [source.url])
            # The page's own reference marks ("[3]") would read as citations of our sources.
            sentence = _BRACKETED_NUMBER.sub("", sentence).strip()
            if not sentence:
                continue
            candidates.append((number, position, sentence, _stems(sentence)))
    if not candidates:
        return Answer(query, "", numbered, answerer="extractive", fallback_reason=fallback_reason)
    df: Counter[str] = Counter()
    for *_, stems in candidates:
        df.update(stems & query_stems)
    n = len(candidates)

    def score(c: tuple[int, int, str, set[str]]) -> float:
        number, position, _, stems = c
        matched = stems & query_stems
        relevance = sum(math.log(1 + n / df[s]) for s in matched)
        return relevance + 0.3 / (1 + position) + 0.1 / number

    matching = [c for c in candidates if c[3] & query_stems]
    if matching:
        ranked = sorted(matching, key=lambda c: (-score(c), c[0], c[1]))
    else:  # nothing mentions the query: the sources' openings, source by source
        ranked = sorted(candidates, key=lambda c: (c[1], c[0]))
    chosen: list[tuple[int, int, str, set[str]]] = []
    per_source: Counter[int] = Counter()
    words = 0
    for c in ranked:
        if len(chosen) == EXTRACTIVE_SENTENCES:
            break
        if per_source[c[0]] == 2 or (chosen and words + length(c[2]) > ANSWER_MAX_WORDS):
            continue
        chosen.append(c)
        per_source[c[0]] += 1
        words += length(c[2])
    text = " ".join(f"{_end_sentence(c[2])} [{c[0]}]" for c in chosen)
    cited = tuple(dict.fromkeys(c[0] for c in chosen))
    return Answer(
        query=query,
        text=text,
        sources=numbered,
        cited=cited,
        answerer="extractive",
        fallback_reason=fallback_reason,
    )


_END = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")


def _end_sentence(sentence: str) -> str:
    return sentence if _END.search(sentence) else sentence + "."


async def answer(
    query: str,
    sources: Iterable[Source | tuple[str, str, str]],
    *,
    llm: LLMClient | None = None,
) -> Answer:
    """Answer from the sources with the LLM when one is given, extractively when not or when it
    fails (the Answer's `fallback_reason` then says why)."""
    numbered = as_sources(sources)
    if llm is None or not numbered:
        return extractive_answer(query, numbered)
    try:
        return await llm_answer(llm, query, numbered)
    except SummarizeError as err:
        return extractive_answer(query, numbered, fallback_reason=str(err))

"""`digest query TEXT --deep`: a short answer written only from the sources, citing [1], [2], …"""

from __future__ import annotations

import re
import socket

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from digest.summarize import Source, Summarizer
from digest.summarize.answer import build_answer_text, extractive_answer
from digest.summarize.output import clean_citations, find_links
from digest.summarize.request import InvalidOutput
from tests import llmserver
from tests.llmserver import FOREIGN_LINKS, LLMServer
from tests.newsweb import ARTICLES

llm_server = llmserver.llm_server  # until conftest.py loads tests.llmserver as a plugin

BY_SLUG = {a.slug: a for a in ARTICLES}


def source(slug: str) -> Source:
    a = BY_SLUG[slug]
    return Source(
        url=f"https://news.example/{a.category}/{slug}.html",
        title=a.title,
        text="\n\n".join([a.lede, *a.paragraphs]),
    )


SOURCES = [source("chip-plant"), source("battery-recall"), source("open-model")]


def citations(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\[(\d+)\]", text)]


async def test_llm_answer_cites_its_sources(llm_server: LLMServer) -> None:
    async with Summarizer(llm_server.config(), api_key="k") as summarizer:
        answer = await summarizer.answer("What happened in technology?", SOURCES)

    assert answer.answerer == "llm:fake-model"
    assert answer.fallback_reason is None
    assert answer.cited == (1, 2, 3)
    assert citations(answer.text) == [1, 2, 3]
    assert answer.prompt_tokens > 0 and answer.completion_tokens > 0
    user = llm_server.completions[0].body["messages"][1]["content"]
    nonce = re.search(r"<<<SOURCE 1 (\w+)>>>", user).group(1)  # type: ignore[union-attr]
    assert all(f"<<<END SOURCE {i} {nonce}>>>" in user for i in (1, 2, 3))
    assert user.startswith("Question: What happened in technology?")


async def test_citations_to_sources_that_do_not_exist_are_dropped(llm_server: LLMServer) -> None:
    llm_server.script("bad_citations")  # cites [8] and [0] besides the real ones
    async with Summarizer(llm_server.config(), api_key="k") as summarizer:
        answer = await summarizer.answer("chips", SOURCES)

    assert answer.answerer == "llm:fake-model"
    assert set(citations(answer.text)) == {1, 2, 3}
    assert "[8]" not in answer.text and "[0]" not in answer.text


async def test_answer_without_citations_falls_back_to_cited_sentences(
    llm_server: LLMServer,
) -> None:
    llm_server.always("no_citations")
    async with Summarizer(llm_server.config(), api_key="k") as summarizer:
        answer = await summarizer.answer("battery fires recall", SOURCES)

    assert answer.answerer == "extractive"
    assert answer.fallback_reason is not None and "cites no source" in answer.fallback_reason
    assert answer.cited and set(answer.cited) <= {1, 2, 3}
    assert citations(answer.text)[0] == 2  # the battery story answers a battery question


async def test_links_in_an_answer_are_removed_except_the_sources(llm_server: LLMServer) -> None:
    llm_server.script("foreign_link")
    async with Summarizer(llm_server.config(), api_key="k") as summarizer:
        answer = await summarizer.answer("chips", SOURCES)

    assert answer.answerer == "llm:fake-model"
    assert set(find_links(answer.text)) <= {s.url for s in SOURCES}
    assert FOREIGN_LINKS[0] not in answer.text


async def test_llm_down_gives_the_most_relevant_sentences_with_their_numbers() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = LLMServer().config().model_copy(update={"base_url": f"http://127.0.0.1:{port}/v1"})
    async with Summarizer(config, api_key="k") as summarizer:
        answer = await summarizer.answer("Why were the e-bike batteries recalled?", SOURCES)

    assert answer.answerer == "extractive"
    assert answer.fallback_reason is not None and "unreachable" in answer.fallback_reason
    first = answer.text.split(" [")[0]
    assert "60,000 battery packs" in first or "batteries" in first
    assert citations(answer.text)[0] == 2
    assert set(citations(answer.text)) <= {1, 2, 3}


def test_extractive_answer_without_a_match_cites_the_sources_openings() -> None:
    answer = extractive_answer("volcano eruption Iceland", SOURCES)
    assert answer.answerer == "extractive"
    assert answer.text.startswith(SOURCES[0].text[:40])
    assert answer.cited[:2] == (1, 2)


def test_sources_can_be_plain_tuples_and_may_be_summaries() -> None:
    answer = extractive_answer(
        "recount",
        [("https://a.example/1", "Recount ordered", "A court ordered a recount of all votes.")],
    )
    assert answer.text == "A court ordered a recount of all votes. [1]"
    assert answer.cited == (1,)


def test_a_pages_own_reference_marks_are_not_taken_for_citations() -> None:
    answer = extractive_answer(
        "recount",
        [
            ("https://a.example/1", "A", "Nothing about that here, only weather news today."),
            ("https://b.example/2", "B", "A court ordered a recount of all votes.[3][12]"),
        ],
    )
    assert answer.text == "A court ordered a recount of all votes. [2]"


async def test_no_sources_gives_an_empty_answer() -> None:
    async with Summarizer(None) as summarizer:
        answer = await summarizer.answer("anything", [])
    assert answer.text == "" and answer.cited == ()


@given(
    st.lists(
        st.sampled_from(["[", "]", "1", "9", ",", "-", " ", "[2]", "[1, 7]", "x"]), max_size=30
    ).map("".join)
    | st.text(max_size=200),
    st.integers(min_value=0, max_value=6),
)
@settings(max_examples=300, deadline=None)
def test_cleaned_citations_are_always_in_range(text: str, count: int) -> None:
    cleaned, cited = clean_citations(text, count)
    assert all(1 <= n <= count for n in cited)
    assert all(1 <= n <= count for n in citations(cleaned))
    assert set(cited) == set(citations(cleaned))


@given(
    st.text(max_size=200)
    | st.lists(
        st.sampled_from(
            [
                "[",
                "]",
                "1",
                "4",
                "(",
                ")",
                "x.example",
                "/y",
                "https://",
                "evil.example",
                " ",
                "[2]",
                "www.",
            ]
        ),
        max_size=25,
    ).map("".join)
)
@settings(max_examples=300, deadline=None)
def test_llm_answers_keep_only_valid_citations_and_source_links(text: str) -> None:
    try:
        cleaned, cited = build_answer_text({"answer": text or "x"}, SOURCES)
    except (InvalidOutput, ValidationError):
        return  # refused (no valid citation): the extractive answer is used instead
    assert cited and all(1 <= n <= len(SOURCES) for n in citations(cleaned))
    assert set(find_links(cleaned)) <= {s.url for s in SOURCES}

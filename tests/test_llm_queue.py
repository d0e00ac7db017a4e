"""The LLM client against servers that queue and stream as local ones do: at most `[llm]
concurrency` requests in flight, the others waiting in line untimed; a server that writes
slowly is told from one that does not answer."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from digest.summarize.llm import LLMClient
from digest.summarize.story import summarize_story
from digest.summarize.timing import counted_calls
from digest.summarize.types import StoryInput, StorySource
from tests import llmserver
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES

llm_server = llmserver.llm_server


def story(n: int) -> StoryInput:
    a = ARTICLES[n % 6]
    text = "\n\n".join([a.lede, *a.paragraphs])
    source = StorySource(
        url=f"https://news.example{a.path}", outlet="Example", title=a.title, text=text
    )
    return StoryInput(a.title, (source,), datetime.now(UTC).date())


async def summarize_all(client: LLMClient, n: int) -> list[tuple[str, str | None]]:
    outcomes = await asyncio.gather(*(summarize_story(client, story(i)) for i in range(n)))
    return [(o.summary.summarizer, o.fallback_reason) for o in outcomes]


async def test_requests_waiting_in_line_are_not_timed_out(llm_server: LLMServer) -> None:
    llm_server.serial, llm_server.delay = True, 0.4  # one at a time, 0.4 s each
    config = llm_server.config(timeout=1.0, first_token_timeout=0.8, concurrency=1)
    client = LLMClient(config, "k")
    try:
        done = await summarize_all(client, 4)  # 1.6 s in all: more than any one timeout
    finally:
        await client.aclose()
    assert done == [("llm:fake-model", None)] * 4
    assert llm_server.max_in_flight == 1


async def test_sent_all_at_once_to_a_server_that_queues_the_last_ones_time_out(
    llm_server: LLMServer,
) -> None:
    # The first call, which negotiates, measures how fast the server reads (a prompt in about
    # a second and a half); the others are each allowed that, half again and 0.8 s more, and
    # the last in the server's line waits longer.
    llm_server.serial, llm_server.prompt_speed = True, 500.0
    config = llm_server.config(timeout=1.0, first_token_timeout=0.8, concurrency=4)
    client = LLMClient(config, "k")
    try:
        done = await summarize_all(client, 4)
    finally:
        await client.aclose()
    assert llm_server.max_in_flight == 3  # after the first call, which negotiated
    failed = [why for who, why in done if who == "extractive"]
    assert failed and all(why and "sent no token within" in why for why in failed)
    assert all("first_token_timeout 0.8 s more): it is not answering" in why for why in failed)


async def test_a_slow_writer_is_given_its_time_and_a_silent_server_is_not(
    llm_server: LLMServer,
) -> None:
    llm_server.token_delay = 0.3  # four chunks: about a second of writing
    config = llm_server.config(timeout=5.0, first_token_timeout=0.5)
    client = LLMClient(config, "k")
    try:
        assert await summarize_all(client, 1) == [("llm:fake-model", None)]
        llm_server.always("hang")
        ((who, why),) = await summarize_all(client, 1)
    finally:
        await client.aclose()
    assert who == "extractive" and why
    # Its first reply was quick: the prompt's reading time is a moment at the speed measured.
    assert why.startswith(f"LLM at {llm_server.url} sent no token within 1 s of the request")
    assert "tokens/s it was measured reading, and [llm] first_token_timeout 0.5 s more" in why


async def test_a_server_still_writing_at_the_timeout_is_called_slow(llm_server: LLMServer) -> None:
    config = llm_server.config(timeout=1.0, first_token_timeout=0.5)
    client = LLMClient(config, "k")
    try:
        # Its first reply is written at once: that is the pace the next one is given.
        assert await summarize_all(client, 1) == [("llm:fake-model", None)]
        llm_server.token_delay = 0.5  # now two seconds for four chunks
        ((who, why),) = await summarize_all(client, 1)
    finally:
        await client.aclose()
    assert who == "extractive" and why
    assert why.startswith(f"LLM at {llm_server.url} was still writing after")
    assert "[llm] timeout 1 s allowed" in why and why.endswith("a slow server")


async def test_concurrent_first_calls_negotiate_once(llm_server: LLMServer) -> None:
    llm_server.json_schema = "http500"  # as llama-cpp-python's server
    client = LLMClient(llm_server.config(concurrency=3), "k")
    try:
        with counted_calls() as calls:
            done = await summarize_all(client, 3)
    finally:
        await client.aclose()
    assert done == [("llm:fake-model", None)] * 3
    assert llm_server.modes() == [("json_schema", 500)] + [("json_object_schema", 200)] * 3
    assert calls == [4]


async def test_without_streaming_the_reply_is_the_same(llm_server: LLMServer) -> None:
    client = LLMClient(llm_server.config(stream=False), "k")
    try:
        done = await summarize_all(client, 2)
    finally:
        await client.aclose()
    assert done == [("llm:fake-model", None)] * 2
    assert not any(r.body.get("stream") for r in llm_server.completions)

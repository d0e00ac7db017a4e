"""The fake LLM server's context windows behave as the real servers they imitate do, seen
through the real `openai` client: the summarizer's window handling is tested against these
fakes, so a fake that drifted from its server would let that code pass against nothing real.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
import pytest
import pytest_asyncio

from digest.summarize.output import parse_json_object
from tests import llmserver
from tests.llmserver import LLMServer, fake_tokens, prompt_tokens

llm_server = llmserver.llm_server

SYSTEM = "You summarize news articles. Reply with one JSON object and nothing else. " * 4
LEDE = "The harbour authority opened the new flood barrier on Monday after six years of work. "


def article_chat(paragraphs: int = 1) -> list[dict[str, Any]]:
    """A summary request shaped as the summarizer's: instructions, then the marked article."""
    body = "\n\n".join(LEDE + f"Paragraph {i} adds detail." for i in range(paragraphs))
    block = f"<<<ARTICLE ab12>>>\nTitle: Flood barrier opens\n\n{body}\n<<<END ARTICLE ab12>>>"
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Summarize this article as the JSON object described.\n\n{block}",
        },
    ]


def answer_chat() -> list[dict[str, Any]]:
    """A question over three numbered sources, as the answerer asks it."""
    outlets = ("Elbe Courier", "Harbour Post", "Coast Daily")
    blocks = [
        f"<<<SOURCE {i} cd34>>>\nTitle: {outlet}\n\n{outlet} reports that the barrier held. "
        f"{'More words follow here. ' * 20}\n<<<END SOURCE {i} cd34>>>"
        for i, outlet in enumerate(outlets, start=1)
    ]
    user = "Question: did the barrier hold?\n\n" + "\n\n".join(blocks)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@pytest_asyncio.fixture
async def client(llm_server: LLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    c = openai.AsyncOpenAI(base_url=llm_server.url, api_key="k", max_retries=0)
    yield c
    await c.close()


async def get(srv: LLMServer, path: str) -> tuple[int, Any]:
    root = srv.url.removesuffix("/v1")
    async with aiohttp.ClientSession() as http, http.get(root + path) as resp:
        return resp.status, await resp.json() if resp.status == 200 else None


async def post(srv: LLMServer, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    root = srv.url.removesuffix("/v1")
    async with aiohttp.ClientSession() as http, http.post(root + path, json=body) as resp:
        return resp.status, await resp.json() if resp.status == 200 else None


async def streamed(client: openai.AsyncOpenAI, messages: list[dict[str, Any]], **kw: Any) -> Any:
    """(text, usage, finish reason, number of chunks) of one streamed completion."""
    stream = await client.chat.completions.create(
        model="fake-model",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        **kw,
    )
    parts, usage, finish, chunks = [], None, None, 0
    async for chunk in stream:
        chunks += 1
        usage = chunk.usage or usage
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    return "".join(parts), usage, finish, chunks


# -- defaults: a server that says nothing of a window and refuses nothing --------------------------


async def test_by_default_no_window_is_told_or_enforced(
    llm_server: LLMServer, client: openai.AsyncOpenAI
) -> None:
    """Existing tests rely on the old server: usage in words, no window, no extra endpoints."""
    messages = article_chat(paragraphs=400)  # ~11k fake tokens
    reply = await client.chat.completions.create(
        model="fake-model",
        messages=messages,
        max_tokens=100_000,
    )

    words = sum(len(m["content"].split()) for m in messages)
    assert reply.usage is not None and reply.usage.prompt_tokens == words
    assert parse_json_object(reply.choices[0].message.content or "") is not None
    [seen] = llm_server.completions
    assert seen.prompt_tokens == prompt_tokens(messages) > 10_000 and seen.max_tokens == 100_000
    assert (await get(llm_server, "/props"))[0] == 404
    assert (await post(llm_server, "/tokenize", {"content": "x"}))[0] == 404
    assert [r.status for r in llm_server.received[1:]] == [404, 404]


# -- a window over which requests are refused ---------------------------------------------------


@pytest.mark.parametrize("style", ["llama-cpp-python", "llama.cpp", "vllm"])
async def test_a_request_over_the_window_is_refused_as_its_server_does(
    llm_server: LLMServer, client: openai.AsyncOpenAI, style: Any
) -> None:
    messages = article_chat()
    prompt = prompt_tokens(messages)
    llm_server.context_limit = prompt + 1000
    llm_server.context_error_style = style

    fits = await client.chat.completions.create(
        model="fake-model",
        messages=messages,
        max_tokens=1000,
    )
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(
            model="fake-model",
            messages=messages,
            max_tokens=1001,
        )

    assert fits.usage is not None and fits.usage.prompt_tokens == prompt
    assert parse_json_object(fits.choices[0].message.content or "") is not None
    err, limit = refused.value, prompt + 1000
    told = f"maximum context length is {limit} tokens. However, you requested {limit + 1} tokens"
    if style == "llama.cpp":
        assert err.body == {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": limit,
        }
    elif style == "vllm":
        assert told in err.message and f"({prompt} in the messages, 1001 in" in err.message
        assert isinstance(err.body, dict) and err.body["object"] == "error"
    else:
        assert told in err.message and err.code == "context_length_exceeded"
    assert [(r.status, r.prompt_tokens, r.max_tokens) for r in llm_server.completions] == [
        (200, prompt, 1000),
        (400, prompt, 1001),
    ]


async def test_stream_empty_closes_the_stream_without_a_word_when_the_prompt_fills_the_window(
    llm_server: LLMServer, client: openai.AsyncOpenAI
) -> None:
    """llama-cpp-python 0.3.36, streaming: a prompt that fills the window gets a 200 and an
    empty stream; not streaming, the 400; a prompt that fits gets its max_tokens cut silently,
    and so the reply stops where the window ends."""
    messages = article_chat(paragraphs=3)
    prompt = prompt_tokens(messages)
    llm_server.context_error_style = "stream-empty"
    llm_server.context_limit = prompt

    text, usage, _, chunks = await streamed(client, messages, max_tokens=10)
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(
            model="fake-model",
            messages=messages,
            max_tokens=10,
        )
    llm_server.context_limit = prompt + 20
    cut, cut_usage, finish, _ = await streamed(client, messages, max_tokens=1000)

    assert (text, usage, chunks) == ("", None, 0)
    assert refused.value.code == "context_length_exceeded"
    assert finish == "length" and fake_tokens(cut) <= 20 and parse_json_object(cut) is None
    assert cut_usage is not None and cut_usage.prompt_tokens == prompt
    assert [r.status for r in llm_server.completions] == [200, 400, 200]


# -- a window told, tokens counted ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("advertise", "path", "window_of"),
    [
        ("llama.cpp", "/props", lambda b: b["default_generation_settings"]["n_ctx"]),
        ("vllm", "/v1/models", lambda b: b["data"][0]["max_model_len"]),
        ("openrouter", "/v1/models", lambda b: b["data"][0]["context_length"]),
        ("lmstudio", "/api/v0/models", lambda b: b["data"][0]["loaded_context_length"]),
    ],
)
async def test_each_server_tells_its_window_where_it_does(
    llm_server: LLMServer, advertise: Any, path: str, window_of: Any
) -> None:
    llm_server.advertise = advertise
    told_default = window_of((await get(llm_server, path))[1])
    llm_server.context_limit = 6000
    status, body = await get(llm_server, path)

    assert (told_default, status, window_of(body)) == (4096, 200, 6000)
    assert [r.path for r in llm_server.received] == [path, path]


@pytest.mark.parametrize(
    ("tokenizer", "path", "body", "count_of"),
    [
        ("llama-cpp-python", "/extras/tokenize/count", {"input": "x"}, lambda b: b["count"]),
        ("llama.cpp", "/tokenize", {"content": "x"}, lambda b: len(b["tokens"])),
        ("vllm", "/tokenize", {"model": "fake-model", "prompt": "x"}, lambda b: b["count"]),
    ],
)
async def test_each_tokenizer_counts_with_the_fake_tokenizer(
    llm_server: LLMServer, tokenizer: Any, path: str, body: dict[str, Any], count_of: Any
) -> None:
    text = "Flood barrier holds – ünïcode counts in bytes. " * 7
    key = next(k for k in body if k != "model")
    llm_server.tokenizer = tokenizer
    status, answer = await post(llm_server, path, {**body, key: text})

    assert status == 200 and count_of(answer) == fake_tokens(text) == 90
    if tokenizer == "vllm":
        assert answer["max_model_len"] == 4096
    assert [r.path for r in llm_server.received] == [path]


# -- a slow reader ------------------------------------------------------------------------------


async def test_a_long_prompt_is_read_before_anything_is_sent(
    llm_server: LLMServer, client: openai.AsyncOpenAI
) -> None:
    """At 100 tokens/s, a ~300-token prompt keeps its stream silent while a short request
    sent after it is answered whole."""
    llm_server.prompt_speed = 100.0
    long = article_chat(paragraphs=12)
    short = [
        {"role": "user", "content": "<<<ARTICLE ef>>>\nTitle: T\n\nOne.\n<<<END ARTICLE ef>>>"}
    ]
    assert prompt_tokens(long) >= 300 and prompt_tokens(short) <= 20

    reading = asyncio.create_task(streamed(client, long))
    quick = await client.chat.completions.create(model="fake-model", messages=short)
    both_in = len(llm_server.completions) == 2
    silent_meanwhile = not reading.done()
    text, usage, _, _ = await reading

    assert both_in and silent_meanwhile
    assert quick.usage is not None and quick.usage.prompt_tokens == prompt_tokens(short)
    assert parse_json_object(text) is not None
    assert usage is not None and usage.prompt_tokens == prompt_tokens(long)


# -- Ollama: the front of the prompt silently dropped --------------------------------------------


async def test_a_cut_system_message_leaves_a_model_writing_prose(
    llm_server: LLMServer, client: openai.AsyncOpenAI
) -> None:
    messages = article_chat(paragraphs=2)
    limit = prompt_tokens(messages) - 10
    llm_server.cut_front_to = limit

    reply = await client.chat.completions.create(
        model="fake-model",
        messages=messages,
        response_format={"type": "json_object"},
    )

    text = reply.choices[0].message.content or ""
    assert reply.usage is not None and reply.usage.prompt_tokens == limit
    assert parse_json_object(text) is None and text.startswith("Here is some news about")
    assert "flood barrier" in text
    assert llm_server.completions[0].prompt_tokens == limit + 10


async def test_a_cut_user_message_leaves_only_the_sources_still_seen(
    llm_server: LLMServer, client: openai.AsyncOpenAI
) -> None:
    """Without a system message to lose first, the cut takes the question and the start of
    the first source: the model answers from the two sources it still sees."""
    messages = answer_chat()[1:]
    user = messages[0]["content"]
    middle_of_first = user.index("More words", user.index("<<<SOURCE 1"))
    dropped = len(user[:middle_of_first].encode()) // 4
    whole = await client.chat.completions.create(model="fake-model", messages=messages)
    llm_server.cut_front_to = prompt_tokens(messages) - dropped
    cut = await client.chat.completions.create(model="fake-model", messages=messages)

    full = parse_json_object(whole.choices[0].message.content or "")
    kept = parse_json_object(cut.choices[0].message.content or "")
    assert full is not None and "Elbe Courier reports that the barrier held. [1]" in full["answer"]
    assert kept is not None and "Elbe Courier" not in kept["answer"]
    assert "Harbour Post reports that the barrier held. [2]" in kept["answer"]
    assert "Coast Daily reports that the barrier held. [3]" in kept["answer"]
    assert cut.usage is not None and cut.usage.prompt_tokens == llm_server.cut_front_to
    assert [r.prompt_tokens for r in llm_server.completions] == [prompt_tokens(messages)] * 2

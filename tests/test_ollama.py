"""Ollama's native API (digest.summarize.ollama) against a local fake (tests/ollamaserver.py).

What a user notices: a long story sent with a window large enough is read whole and summarized
from every source; without one, Ollama's default window silently loses its front (the system
prompt and the first sources), which the counts in the last chunk make visible; Ollama's errors
arrive as OllamaError with its own words, whatever a server sends.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from datetime import date
from typing import Any

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.summarize import ollama, prompts
from digest.summarize.ollama import OllamaChunk, OllamaError
from digest.summarize.types import ArticleInput, StoryInput, StorySource
from tests import ollamaserver
from tests.llmserver import LLMServer, sentences
from tests.newsweb import ARTICLES
from tests.ollamaserver import OllamaServer, prompt_tokens

ollama_server = ollamaserver.ollama_server

TIMEOUT = 10.0


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


def long_story() -> list[dict[str, str]]:
    """A story prompt of about 3500 fake tokens: eight outlets, each text given twice over."""
    sources = tuple(
        StorySource(
            url=f"https://news.example/{a.slug}.html",
            outlet=f"Outlet {i}",
            title=a.title,
            text="\n\n".join([a.lede, *a.paragraphs, *a.paragraphs]),
        )
        for i, a in enumerate(ARTICLES, start=1)
    )
    story = StoryInput(title="Eight stories in one", sources=sources, today=date(2026, 12, 4))
    texts = prompts.story_texts(story, 100_000)
    messages = prompts.story_messages(story, texts, prompts.nonce_for(*texts))
    assert 3000 < prompt_tokens(messages) < 8000
    return messages


def short_chat() -> list[dict[str, str]]:
    article = ARTICLES[0]
    inp = ArticleInput(
        url="https://news.example/chip.html",
        title=article.title,
        text="\n\n".join([article.lede, *article.paragraphs]),
    )
    return prompts.summary_messages(inp, prompts.nonce_for(article.lede))


async def collect(
    http: httpx.AsyncClient,
    srv: OllamaServer,
    messages: Sequence[dict[str, Any]],
    *,
    model: str | None = None,
    format: dict[str, Any] | str | None = None,
    num_ctx: int | None = None,
    num_predict: int | None = None,
) -> list[OllamaChunk]:
    return [
        chunk
        async for chunk in ollama.chat_stream(
            http,
            srv.root,
            model or srv.model,
            messages,
            format=format,
            num_ctx=num_ctx,
            num_predict=num_predict,
            temperature=0.0,
            timeout=TIMEOUT,
        )
    ]


def text_of(chunks: Sequence[OllamaChunk]) -> str:
    return "".join(c.content for c in chunks)


def first_sentence(n: int) -> str:
    return sentences(ARTICLES[n].lede)[0]


# -- version and show ----------------------------------------------------------------------------


async def test_version_says_ollama(ollama_server: OllamaServer, http: httpx.AsyncClient) -> None:
    assert await ollama.version(http, ollama_server.root, TIMEOUT) == "0.12.3"


async def test_version_is_none_for_a_server_that_is_not_ollama(http: httpx.AsyncClient) -> None:
    async with LLMServer() as other:  # OpenAI-compatible only: no /api/version
        root = other.url.removesuffix("/v1")
        assert await ollama.version(http, root, TIMEOUT) is None


async def test_version_is_none_for_a_server_that_answers_200_to_anything(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    ollama_server.version_reply = "no_version"
    assert await ollama.version(http, ollama_server.root, TIMEOUT) is None


async def test_version_through_a_proxy_whose_ollama_is_down_is_an_error(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    """Not "this is not Ollama": the caller must not fall back to /v1 and its short window."""
    ollama_server.version_reply = "bad_gateway"
    with pytest.raises(OllamaError) as caught:
        await ollama.version(http, ollama_server.root, TIMEOUT)
    assert (caught.value.status, caught.value.message) == (502, "502 Bad Gateway")


async def test_version_lets_a_refused_connection_through(http: httpx.AsyncClient) -> None:
    async with OllamaServer() as srv:
        root = srv.root
    with pytest.raises(httpx.ConnectError):
        await ollama.version(http, root, TIMEOUT)


async def test_show_gives_the_models_limit(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    model = await ollama.show(http, ollama_server.root, "fake-llama", TIMEOUT)
    assert model.context_length == 8192
    assert model.num_ctx is None  # its Modelfile sets no window: Ollama's default applies
    assert model.architecture == "llama"
    assert "completion" in model.capabilities


async def test_show_gives_the_window_the_modelfile_sets(http: httpx.AsyncClient) -> None:
    async with OllamaServer(model_limit=131072, modelfile_ctx=4096) as srv:
        model = await ollama.show(http, srv.root, srv.model, TIMEOUT)
    assert (model.context_length, model.num_ctx) == (131072, 4096)


async def test_a_missing_model_is_a_404_in_ollamas_words(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    with pytest.raises(OllamaError) as caught:
        await ollama.show(http, ollama_server.root, "mistral-nemo", TIMEOUT)
    assert caught.value.status == 404
    assert caught.value.message == "model 'mistral-nemo' not found"
    assert "model 'mistral-nemo' not found" in str(caught.value)

    with pytest.raises(OllamaError) as caught:
        await collect(http, ollama_server, short_chat(), model="mistral-nemo")
    assert caught.value.status == 404


def test_parameters_block_as_ollama_prints_it() -> None:
    text = f'{"num_ctx":<30} 4096\n{"stop":<30} "<|eot_id|>"\nstop  "x"'
    assert ollama.parse_parameters(text) == {"num_ctx": ["4096"], "stop": ['"<|eot_id|>"', '"x"']}


# -- chat ----------------------------------------------------------------------------------------


async def test_chat_streams_pieces_then_a_last_chunk_with_the_counts(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    chunks = await collect(http, ollama_server, short_chat(), format=prompts.SUMMARY_SCHEMA)
    *pieces, last = chunks
    assert len(pieces) > 1 and all(not c.done and c.content for c in pieces)
    assert last.done and last.content == "" and last.done_reason == "stop"
    reply = json.loads(text_of(chunks))
    assert reply["title"] == ARTICLES[0].title
    sent = ollama_server.chats[0]
    assert last.prompt_tokens == sent.kept_tokens == sent.prompt_tokens  # nothing was cut
    assert last.completion_tokens > 0
    # the fake reads a token in 1 ms and writes one in 20 ms (Ollama's durations in ns)
    assert last.prompt_seconds == pytest.approx(last.prompt_tokens / 1000)
    assert last.write_seconds == pytest.approx(last.completion_tokens * 0.02)
    assert sent.format == prompts.SUMMARY_SCHEMA


async def test_a_long_story_is_read_whole_when_the_window_fits_it(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    messages = long_story()
    chunks = await collect(http, ollama_server, messages, format=prompts.STORY_SCHEMA, num_ctx=8192)
    sent = ollama_server.chats[0]
    assert (sent.num_ctx, sent.window) == (8192, 8192)
    assert chunks[-1].prompt_tokens == prompt_tokens(messages)
    summary = json.loads(text_of(chunks))["summary"]
    assert first_sentence(0) in summary and first_sentence(len(ARTICLES) - 1) in summary


async def test_without_num_ctx_the_default_window_loses_the_front(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    messages = long_story()
    chunks = await collect(http, ollama_server, messages, format=prompts.STORY_SCHEMA)
    sent = ollama_server.chats[0]
    assert (sent.num_ctx, sent.window) == (None, 2048)
    assert chunks[-1].prompt_tokens <= 2048 < prompt_tokens(messages)
    reply = text_of(chunks)
    with pytest.raises(json.JSONDecodeError):  # the instructions were cut away
        json.loads(reply)
    assert first_sentence(0) not in reply  # the first source was lost
    assert first_sentence(len(ARTICLES) - 1) in reply  # the last one was read


async def test_num_ctx_beyond_the_models_limit_gets_the_limit(http: httpx.AsyncClient) -> None:
    async with OllamaServer(model_limit=4096) as srv:
        chunks = await collect(http, srv, long_story(), num_ctx=32768)
    assert srv.chats[0].window == 4096
    assert chunks[-1].prompt_tokens <= 4096


async def test_openai_endpoint_cannot_ask_for_a_window(ollama_server: OllamaServer) -> None:
    """The reason for the native API: /v1 runs at the default window, whatever is sent."""
    messages = long_story()
    client = openai.AsyncOpenAI(base_url=ollama_server.url, api_key="ollama", max_retries=0)
    try:
        stream = await client.chat.completions.create(  # type: ignore[call-overload]
            model=ollama_server.model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, usage = "", None
        async for chunk in stream:
            text += "".join(c.delta.content or "" for c in chunk.choices)
            usage = chunk.usage or usage
    finally:
        await client.close()
    assert usage is not None and usage.prompt_tokens <= 2048 < prompt_tokens(messages)
    assert ollama_server.chats[0].window == 2048
    assert first_sentence(0) not in text


async def test_num_predict_ends_the_reply_with_length(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    chunks = await collect(http, ollama_server, short_chat(), num_predict=10)
    assert chunks[-1].done_reason == "length"
    assert chunks[-1].completion_tokens == 10


async def test_an_error_mid_stream_is_an_ollama_error(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    ollama_server.script("error_midstream")
    got: list[OllamaChunk] = []
    with pytest.raises(OllamaError) as caught:
        async for chunk in ollama.chat_stream(
            http,
            ollama_server.root,
            ollama_server.model,
            short_chat(),
            format="json",
            num_ctx=4096,
            num_predict=512,
            temperature=0.0,
            timeout=TIMEOUT,
        ):
            got.append(chunk)
    assert len(got) == 2  # the pieces before the error came through
    assert caught.value.status is None
    assert caught.value.message == "an error was encountered while running the model"


async def test_an_error_status_is_an_ollama_error(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    ollama_server.script("error500")
    with pytest.raises(OllamaError) as caught:
        await collect(http, ollama_server, short_chat())
    assert caught.value.status == 500
    assert caught.value.message == "llama runner process has terminated"


async def test_a_stream_that_stops_before_its_last_chunk_is_an_error(
    ollama_server: OllamaServer, http: httpx.AsyncClient
) -> None:
    ollama_server.script("cut_stream")
    with pytest.raises(OllamaError, match="ended before its last chunk"):
        await collect(http, ollama_server, short_chat())


# -- the line parser -----------------------------------------------------------------------------


def test_parse_line_reads_ollamas_last_chunk() -> None:
    line = (
        b'{"model":"llama3.2","created_at":"2023-08-04T19:22:45.499127Z","message":'
        b'{"role":"assistant","content":""},"done_reason":"stop","done":true,'
        b'"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,'
        b'"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}'
    )
    assert ollama.parse_line(line) == OllamaChunk(
        content="",
        done=True,
        prompt_tokens=26,
        completion_tokens=282,
        prompt_seconds=0.342546,
        write_seconds=4.535599,
        done_reason="stop",
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
CHUNK_KEYS = st.sampled_from(
    ["message", "done", "done_reason", "error", "prompt_eval_count", "eval_count",
     "prompt_eval_duration", "eval_duration"]
)  # fmt: skip


@given(st.binary(max_size=300))
def test_parse_line_raises_only_ollama_error_on_any_bytes(line: bytes) -> None:
    with contextlib.suppress(OllamaError):
        ollama.parse_line(line)


@given(st.dictionaries(CHUNK_KEYS, JSON | st.dictionaries(st.just("content"), JSON)))
def test_parse_line_raises_only_ollama_error_on_any_chunk_shape(data: dict[str, Any]) -> None:
    try:
        chunk = ollama.parse_line(json.dumps(data).encode())
    except OllamaError:
        return
    assert isinstance(chunk.content, str) and chunk.prompt_tokens >= 0


def test_parse_line_keeps_a_thinking_models_reasoning_apart() -> None:
    line = b'{"message":{"role":"assistant","content":"","thinking":"Let me see"},"done":false}'
    chunk = ollama.parse_line(line)
    assert (chunk.content, chunk.thinking, chunk.done) == ("", "Let me see", False)

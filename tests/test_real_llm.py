"""The summarizer against a real OpenAI-compatible server (llama-cpp-python with SmolLM2-135M).

Only the protocol is asserted: what the server refuses, what negotiation settles on, that the
model's own reply is JSON of the asked shape and becomes the summary. The model's facts are
invented and never checked here.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from digest.summarize import ArticleInput
from digest.summarize.article import LLMSummarizer
from digest.summarize.request import MAX_KEYWORDS
from tests import realllm
from tests.newsweb import ARTICLES
from tests.realllm import RealLLM

real_llm = realllm.real_llm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

CHIP = ARTICLES[0]
ARTICLE = ArticleInput(
    url="https://news.example/technology/chip-plant.html",
    title=CHIP.title,
    text="\n\n".join([CHIP.lede, *CHIP.paragraphs]),
)


class Exchanges:
    """Every request the openai client sent and the response it got, as the server saw them."""

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], int, bytes]] = []

    async def record(self, response: httpx.Response) -> None:
        await response.aread()
        self.seen.append(
            (json.loads(response.request.content), response.status_code, response.content)
        )

    def formats(self) -> list[tuple[str, int]]:
        out = []
        for body, status, _ in self.seen:
            fmt = body.get("response_format") or {}
            name = fmt.get("type", "plain") + ("_schema" if "schema" in fmt else "")
            out.append((name, status))
        return out

    def reply(self, i: int) -> str:
        content = json.loads(self.seen[i][2])["choices"][0]["message"]["content"]
        assert isinstance(content, str)
        return content


async def test_the_real_server_gets_json_object_with_a_schema_and_its_model_writes_the_summary(
    real_llm: RealLLM,
) -> None:
    exchanges = Exchanges()
    config = real_llm.config(stream=False)  # whole replies, to read them back as the server sent
    client = openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key="no-key",
        timeout=config.timeout,
        max_retries=config.max_retries,
        http_client=httpx.AsyncClient(event_hooks={"response": [exchanges.record]}),
    )
    summarizer = LLMSummarizer(config, api_key=None, client=client)
    try:
        first = await summarizer.summarize(ARTICLE)
        second = await summarizer.summarize(ARTICLE)
    finally:
        await summarizer.aclose()

    # json_schema is refused with a 500 and not retried; the schema beside json_object is
    # accepted, remembered, and used alone for the next summary.
    assert exchanges.formats() == [
        ("json_schema", 500),
        ("json_object_schema", 200),
        ("json_object_schema", 200),
    ], real_llm.log_tail()
    assert summarizer.llm.mode == "json_object_schema"
    # The model's reply itself is JSON of the asked shape (no tolerant parsing, no repair).
    for i in (1, 2):
        data = json.loads(exchanges.reply(i))
        assert set(data) == {"title", "summary", "brief_summary", "keywords"}
        assert all(isinstance(data[k], str) for k in ("title", "summary", "brief_summary"))
        assert isinstance(data["keywords"], list) and len(data["keywords"]) <= MAX_KEYWORDS
        assert all(isinstance(k, str) for k in data["keywords"])
    for s in (first, second):
        assert s.summarizer == "llm:smollm2"  # from the model, not extractive
        assert s.summary.strip() and s.prompt_tokens > 0 and s.completion_tokens > 0

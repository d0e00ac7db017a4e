"""The translator against a real OpenAI-compatible server (llama-cpp-python with SmolLM2-135M).

Only the protocol is asserted: the request is accepted in the negotiated mode, each story comes
back either translated (JSON of the asked shape, past the claim check) or as written with the
reason. That tiny model invents: what the check refuses is counted and printed, never asserted.
Seen here: both stories refused, their translations far shorter than the summaries (about 60
tokens each) and missing a name; without the check for what is left out both had passed.
"""

from __future__ import annotations

from datetime import date

import pytest

from digest.summarize.llm import LLMClient
from digest.summarize.translator import LLMTranslator
from tests import realllm
from tests.editions import make_edition
from tests.realllm import RealLLM

real_llm = realllm.real_llm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


async def test_stories_come_back_translated_or_as_written_with_the_reason(
    real_llm: RealLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    stories = make_edition(date(2026, 11, 29)).sections[1].stories[:2]
    llm = LLMClient(real_llm.config(), None)
    try:
        translator = LLMTranslator(llm)
        out = [await translator.translate(story, "de") for story in stories]
    finally:
        await llm.aclose()
    stats = translator.stats
    assert stats.translated + stats.refused + stats.failed == len(stories)
    assert llm.mode is not None  # a structured mode was settled on
    for story, got in zip(stories, out, strict=True):
        if got.translated_from:
            assert (got.language, got.translated_from) == ("de", "en") and got.summary.strip()
        else:
            assert (got.title, got.summary, got.language) == (story.title, story.summary, "en")
    if stats.refused or stats.failed:
        assert stats.last_error
    with capsys.disabled():
        print(f"\nSmolLM2 translations ({llm.mode}): {stats.describe()}")

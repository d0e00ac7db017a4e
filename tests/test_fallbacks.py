"""Why summaries fell back, once per cause and counted (issue 39: "3 summaries fell back to
extractive: ... the reply was empty" named one cause for three different failures)."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from digest.config import LLMConfig
from digest.summarize import fallbacks
from digest.summarize.llm import LLMClient
from digest.summarize.story import summarize_story
from digest.summarize.types import StoryInput, StorySource
from tests import llmserver
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES

llm_server = llmserver.llm_server

URL = "http://127.0.0.1:8080/v1"
# As the summarizer writes them (digest.summarize.llm_transport, .timing, .llm, .story).
EMPTY = "llm:m output stayed invalid after a second request: the reply was empty"
CLAIMS = "claim check: 4 of 6 claims not found in the sources (the summary lost 70% of its words)"
SILENT = (
    f"LLM at {URL} sent no token within {{}} s of the request (the prompt's reading time at an "
    "assumed 25 tokens/s, and [llm] first_token_timeout 30 s more): it is not answering"
)


def test_three_causes_are_three_counts_not_the_first_named_for_all() -> None:
    reasons = [EMPTY, CLAIMS, SILENT.format(36)]
    assert fallbacks.tally(reasons) == "1 empty reply, 1 claim check, 1 no first token in 36 s"


def test_a_cause_hit_twice_is_counted_with_the_range_of_its_seconds() -> None:
    reasons = [SILENT.format(41), EMPTY, SILENT.format(36), EMPTY, CLAIMS]
    assert fallbacks.tally(reasons) == (
        "2 no first token in 36-41 s, 2 empty replies, 1 claim check"
    )


@given(st.text(max_size=400), st.integers(min_value=1, max_value=5))
def test_any_reason_is_one_short_cause_counted_whole(reason: str, times: int) -> None:
    label, _ = fallbacks.cause(reason)
    assert label and len(label) <= 60 and "\n" not in label
    told = fallbacks.tally([reason] * times)
    assert told.startswith(f"{times} ") and "\n" not in told


async def test_the_reasons_the_client_gives_are_named_by_their_cause(
    llm_server: LLMServer,
) -> None:
    """The reasons as a real exchange gives them: a model writing prose twice, a server
    answering 500."""
    a = ARTICLES[0]
    story = StoryInput(
        a.title,
        (StorySource(url="https://a.example/1", outlet="A", title=a.title, text=a.lede),),
        date.today(),
    )
    config = llm_server.config(max_retries=0)
    reasons = []
    for fault in ("invalid_json", "error500"):
        llm_server.always(fault)  # type: ignore[arg-type]
        client = LLMClient(LLMConfig(**config.model_dump()), "k")
        try:
            outcome = await summarize_story(client, story)
        finally:
            await client.aclose()
        assert outcome.fallback_reason
        reasons.append(outcome.fallback_reason)
    assert fallbacks.tally(reasons) == "1 no JSON in the reply, 1 HTTP 500"


def test_a_deepen_the_budget_cannot_hold_says_how_many_stories_the_model_will_write(
    caplog,
) -> None:
    """20 stories at a measured 50 tokens/s read and 5 written take about 113 s each: a
    900 s budget holds 7 of them, said once before they start, not found out at the end."""
    from types import SimpleNamespace

    from digest.jobs.llm_budget import LLMBudget as _Budget
    from digest.summarize.timing import Speeds
    from digest.summarize.window import ServerFacts

    facts = ServerFacts("llama-cpp-python", 2048, "named", speeds=Speeds([50.0], [5.0]))
    llm = SimpleNamespace(known_facts=facts, config=LLMConfig(model="m"))
    budget = _Budget(900.0, stories=20)
    budget.foresee(llm)  # type: ignore[arg-type]
    budget.foresee(llm)  # type: ignore[arg-type]
    said = [r.getMessage() for r in caplog.records if "will likely hold" in r.getMessage()]
    assert said == [
        "the [llm] budget (900 s left) will likely hold 7 of the 20 stories still to "
        "summarize, at about 113 s each as measured; the rest will be extractive"
    ]
    # Speeds only assumed (nothing measured yet): nothing is said.
    caplog.clear()
    unmeasured = SimpleNamespace(known_facts=ServerFacts("x", 2048, "a"), config=llm.config)
    _Budget(900.0, stories=20).foresee(unmeasured)  # type: ignore[arg-type]
    assert not caplog.records

"""The figure check (issue 38) against a real OpenAI-compatible server (llama-cpp-python with
SmolLM2-135M): the question is accepted and answered within the limits, and whatever the tiny
model answers, each figure line is either shown (a clear yes to each of its pairs) or silent,
never an error. Its answers are printed, never asserted: it cannot tell a quake's toll from
another's."""

from __future__ import annotations

import pytest

from digest.jobs.figure_check import FigureCheck
from digest.memory.same_quantity import passes
from digest.store import Store
from digest.summarize.llm import LLMClient
from tests import realllm, storefixtures
from tests.realllm import RealLLM
from tests.test_figure_check import a_developing_story, figure_lines, remembered

real_llm = realllm.real_llm
db_url, store = storefixtures.db_url, storefixtures.store

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_each_figure_line_is_shown_on_a_yes_or_silent_whatever_smollm2_answers(
    store: Store, db_url: str, real_llm: RealLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    _, section = a_developing_story(store)
    llm = LLMClient(real_llm.config(), None)
    try:
        check = FigureCheck(llm)
        shown = await remembered(store, section, check)
    finally:
        await llm.aclose()
    assert check.asked == 3  # a revision, a disagreement, a correction: one pair each
    assert set(check.answers) == set(check.replies) | set(check.why)
    yes = [p for p, said in check.answers.items() if said is True]
    assert sum(figure_lines(shown)) == len(yes) == 3 - len(check.kept_out)
    for p in check.answers:
        assert passes([p], check.answers) == (p in yes)
    if check.kept_out:
        said = check.report()
        assert said is not None and said.startswith(f"{len(check.kept_out)} figure line")
    with capsys.disabled():
        replies = "; ".join(repr(r) for r in check.replies.values())
        print(f"\nSmolLM2 on the figure check: {replies}; {check.report() or 'all shown'}")

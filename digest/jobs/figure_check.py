"""The model's check of the figures the rules compared (issue 38): before an edition shows a
disagreement, a revision or a correction, the configured model is asked once per pair of
sentences whether they report the same quantity of the same event
(`digest.memory.same_quantity`). Only a clear "yes" lets the line through; "no", an unclear
reply, a refusal or an error keeps it out, and the run says once how many lines were kept
out and why. A run asks at most `[llm] figure_check_questions` (a CPU model takes seconds for
each): a line whose pairs are left unasked then stays out too ("question limit reached").
Without `[llm]` (or with `check_figures = false`) the rules alone decide.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from digest.edition.shown_memory import Keep, rules_alone
from digest.memory import same_quantity
from digest.memory.same_quantity import Pair
from digest.summarize.fallbacks import cause

if TYPE_CHECKING:
    from digest.jobs.units import Parts
    from digest.summarize.llm import LLMClient

log = logging.getLogger(__name__)

# A run's error source when the check failed to get an answer (a "no" is no failure).
FIGURE_CHECK = "figure check"
ANSWERED_NO = "answered no"
OVER_LIMIT = "question limit reached"


class FigureCheck:
    """One run's questions to the model, each pair asked once; the lines kept out, counted by
    cause."""

    def __init__(self, llm: LLMClient | None, questions: int = 40) -> None:
        self.llm = llm
        self.questions = questions  # at most this many asked in the run
        self.answers: dict[Pair, bool | None] = {}
        self.why: dict[Pair, str] = {}  # a pair not answered yes: in a few words, why
        self.replies: dict[Pair, str] = {}  # what the model wrote, as it wrote it
        self.kept_out: list[str] = []  # one cause per line kept out
        self.asked = 0

    @property
    def on(self) -> bool:
        return self.llm is not None

    async def _ask(self, p: Pair) -> None:
        if p in self.answers or self.llm is None:
            return
        if self.asked >= self.questions:
            self.why[p] = OVER_LIMIT  # not asked, not remembered: the line stays out
            return
        self.asked += 1
        try:
            reply = await self.llm.ask(same_quantity.messages(p), same_quantity.MAX_TOKENS)
        except Exception as err:  # the server's failure keeps the line out, never the run
            self.answers[p] = None
            label, number = cause(str(err))
            self.why[p] = label.format(number) if number is not None else label
            log.info("figure check: no answer for %r: %s", p, err)
            return
        said = same_quantity.answer(reply)
        self.answers[p], self.replies[p] = said, reply
        if said is None:
            self.why[p] = "refusal" if reply.startswith("(refused") else "unclear reply"
        elif not said:
            self.why[p] = ANSWERED_NO
        log.info("figure check: %r -> %r", p, reply[:80])

    async def passes(self, kind: str, pairs: Sequence[Pair]) -> bool:
        """Whether the line may be shown: the rules' word without a model, else a clear yes of
        the model to each pair (each asked once a run)."""
        if not self.on:
            return True
        for p in pairs:
            await self._ask(p)
        if same_quantity.passes(pairs, self.answers):
            return True
        reasons = [self.why[p] for p in pairs if p in self.why]
        self.kept_out.append(reasons[0] if reasons else "nothing to ask")
        log.info("figure check: a %s kept out (%s): %r", kind, self.kept_out[-1], list(pairs))
        return False

    def from_thread(self, loop: asyncio.AbstractEventLoop) -> Keep:
        """`passes` for code running in a worker thread (`asyncio.to_thread`) while `loop`
        runs: the story memory of an edition is built there."""
        if not self.on:
            return rules_alone

        def keep(kind: str, pairs: Sequence[Pair]) -> bool:
            return asyncio.run_coroutine_threadsafe(self.passes(kind, pairs), loop).result()

        return keep

    def report(self) -> str | None:
        """One line for the run when lines were kept out: how many, and why."""
        return kept_out_line(self.kept_out) if self.kept_out else None


async def for_app(app: Parts) -> FigureCheck:
    """The check a run of `app` makes: the model's when `[llm]` is configured with
    `check_figures` (the default), else the rules alone."""
    llm = app.config.llm
    if llm is None or not llm.check_figures:
        return FigureCheck(None)
    return FigureCheck((await app.summarizer()).llm, llm.figure_check_questions)


def kept_out_line(causes: Sequence[str], what: str = "disagreement, revision or correction") -> str:
    """The run's one line for the lines the check kept out, one cause each: how many, and
    why."""
    n = len(causes)
    return (
        f"{n} figure line{'' if n == 1 else 's'} ({what}) kept out by the [llm] figure "
        f"check: {same_quantity.tally(causes)}"
    )

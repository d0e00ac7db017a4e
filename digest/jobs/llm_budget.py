"""The `[llm] budget` a deepen's story summaries share.

It starts at the first LLM summary; the stories still waiting when it is spent are summarized
extractively. It hears of each story's summary (one log line each: how long, how much budget
is left) and says once, as early as it can, how many stories the model will likely write when
it cannot hold them all: from the server's speeds measured in this process, or, in a fresh
process, from those an earlier deepen recorded (`MEASURED` in its run's `counts`).

The story units of one deepen that run in its process share one budget (`shared_budget`); a
unit on a worker has its own, counted from its first LLM call (`story_budget`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from digest.store.face import StoreFace
    from digest.summarize.llm import LLMClient

log = logging.getLogger(__name__)


@dataclass(slots=True)
class LLMBudget:
    """The `[llm] budget` of a deepen's summaries: it starts at the first LLM summary. It hears
    of each story's summary (one log line each: how long, how much budget is left), and says
    once how many stories the model will likely write when the budget cannot hold them all."""

    seconds: float | None
    deadline: float | None = None
    stories: int = 0  # the deepen's stories to summarize (0: a story on a worker, alone)
    done: int = 0
    foreseen: bool = False
    counted: set[int] = field(default_factory=set)  # the stories `stories` counts

    def kept(self, story: int) -> None:
        """A story counted as to summarize kept its summary after all (its pages read anew
        had not changed)."""
        if story in self.counted:
            self.counted.discard(story)
            self.stories -= 1

    def begin(self) -> float | None:
        if self.deadline is None and self.seconds is not None:
            self.deadline = asyncio.get_running_loop().time() + self.seconds
        return self.deadline

    def left(self) -> float | None:
        if self.seconds is None:
            return None
        if self.deadline is None:
            return self.seconds
        return max(0.0, self.deadline - asyncio.get_running_loop().time())

    def foresee(
        self, llm: LLMClient | None, each: float | None = None, measured: str = "as measured"
    ) -> None:
        """Say once, when the stories left would take longer than the budget left, how many
        the model will likely write: at `each` seconds a story (`measured` says where it came
        from), else at the server's speeds measured in this process (nothing is said from
        speeds only assumed: a guess is no forecast)."""
        left, waiting = self.left(), self.stories - self.done
        if self.foreseen or left is None or llm is None or waiting <= 0:
            return
        if each is None:
            from digest.summarize.check import story_estimate

            facts = llm.known_facts
            if facts is None or not (facts.speeds.prompt_speed and facts.speeds.write_speed):
                return
            each = story_estimate(facts, llm.config.max_input_chars)[1]
        if not each or waiting * each <= left:
            return
        self.foreseen = True
        likely = min(waiting, int(left // each))
        log.warning(
            "the [llm] budget (%.0f s left) will likely hold %d of the %d stor%s still to "
            "summarize, at about %.0f s each %s; the rest will be extractive",
            left,
            likely,
            waiting,
            "y" if waiting == 1 else "ies",
            each,
            measured,
        )

    def progress_detail(self, story: str) -> str:
        """What a terminal's progress line names for a story done: the story, and the budget
        left once it has started (the bar beside it shows the time spent)."""
        left = self.left()
        if left is None or self.deadline is None:
            return story
        return f"{story} · [llm] budget {left:.0f} s left"

    def ended(self, title: str, how: str, took: float) -> None:
        """One line per story: which it was, how its summary was made and in how long."""
        self.done += 1
        of = f" {self.done} of {self.stories}" if self.stories else ""
        left = self.left()
        budget = f"; [llm] budget {left:.0f} s left" if left is not None else ""
        log.info("story%s summarized (%s) in %.0f s%s: %s", of, how, took, budget, title)


# The budget shared by the story units of one deepen that run in its process; a unit on a
# worker has its own, counted from its first LLM call.
_shared: ContextVar[LLMBudget | None] = ContextVar("deepen_budget", default=None)


@contextmanager
def shared_budget(budget: LLMBudget) -> Iterator[None]:
    token = _shared.set(budget)
    try:
        yield
    finally:
        _shared.reset(token)


def story_budget(seconds: float | None) -> LLMBudget:
    """The budget a story's summary is written within: its deepen's, shared, when the story
    runs in the deepen's process; else its own of `seconds` (a story on a worker, alone)."""
    return _shared.get() or LLMBudget(seconds)


# The run record's `counts` entry for the speeds the deepen measured of its LLM server, and
# the forecast's words when it comes from them.
MEASURED = "llm_measured"
EARLIER = "as measured in an earlier run"
# The deepens looked back on for them: the last one may have had nothing new to summarize.
EARLIER_RUNS = 20


def measured_speeds(llm: LLMClient | None) -> dict[str, Any] | None:
    """The speeds measured of the LLM server in this process (the slowest recent ones), with
    the server and model they belong to and the window a story's request was fitted to; None
    before both were measured."""
    facts = llm.known_facts if llm is not None else None
    if llm is None or facts is None:
        return None
    prompt, write = facts.speeds.prompt_speed, facts.speeds.write_speed
    if not (prompt and write):
        return None
    return {
        "base_url": llm.config.base_url,
        "model": llm.config.model,
        "window": facts.window,
        "prompt_speed": round(prompt, 3),
        "write_speed": round(write, 3),
    }


async def earlier_story_seconds(store: StoreFace, llm: LLMClient) -> float | None:
    """A story's seconds at the speeds the latest deepen that measured this server and model
    recorded in the store (`measured_speeds`): a command's first story then need not be waited
    for to say what the budget will hold. None when none did (speeds of another server or model
    say nothing of this one)."""
    from digest.summarize.check import story_estimate
    from digest.summarize.timing import Speeds
    from digest.summarize.window import ServerFacts

    for run in await store.recent_runs(EARLIER_RUNS, "deepen"):
        seen = run.counts.get(MEASURED)
        if not isinstance(seen, dict):
            continue
        if (seen.get("base_url"), seen.get("model")) != (llm.config.base_url, llm.config.model):
            continue
        try:
            window = int(seen["window"])
            prompt, write = float(seen["prompt_speed"]), float(seen["write_speed"])
        except (KeyError, TypeError, ValueError):
            continue
        if not (window > 0 and prompt > 0 and write > 0):
            continue
        facts = ServerFacts("", window, "an earlier run's", speeds=Speeds([prompt], [write]))
        return story_estimate(facts, llm.config.max_input_chars)[1]
    return None

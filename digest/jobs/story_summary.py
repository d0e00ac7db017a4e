"""A top story's one summary, as a deepen writes it.

It is written in one LLM call from the main texts of the story's first `SOURCES_PER_STORY`
outlets (`story_sources`, the representative first; `story_input`) and checked claim by claim
against them (`digest.summarize.story`); a story whose texts have not changed keeps its
summary (`has_summary`). Where its outlets disagree, the disagreements the summary attributes
are those the model confirms (`confirmed_disputes`). The summary is written within the
`[llm] budget` (`digest.jobs.llm_budget`): a story still waiting when it is spent is
summarized extractively (`write_summary`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from digest.jobs.figure_check import FigureCheck
from digest.models import ArticleView, Disagreement, StorySummary, StoryView
from digest.runtime.threads import off_loop
from digest.stories import credited
from digest.summarize.fallbacks import tally as fallback_causes

if TYPE_CHECKING:
    from digest.jobs.llm_budget import LLMBudget
    from digest.jobs.units import Parts
    from digest.summarize.disputes import Confirmed
    from digest.summarize.types import StoryInput
    from digest.summarize.types import StoryOutcome as Summarized

# Outlets a story's summary is written from: enough to compare tellings, few enough that each
# gets a fair share of `[llm] max_input_chars`.
SOURCES_PER_STORY = 4


def story_sources(story: StoryView) -> list[ArticleView]:
    """The articles a story's summary is written from: the first of each outlet, in story
    order (the representative first), at most SOURCES_PER_STORY."""
    seen: set[str] = set()
    out: list[ArticleView] = []
    for a in story.articles:
        if a.outlet not in seen:
            seen.add(a.outlet)
            out.append(a)
    return out[:SOURCES_PER_STORY]


async def story_input(app: Parts, story: StoryView, today: datetime) -> StoryInput:
    """The story as its summary is written from: each source's stored main text (its lede
    when it has none), the earlier summary when the story had one on an earlier day."""
    from digest.summarize.types import StoryInput, StorySource

    store = await app.face()
    fresh = await store.stories_by_id([story.id])
    story = fresh[0] if fresh else story
    earlier = story.summary
    if earlier is not None and (earlier.created_at is None or earlier.created_at >= today):
        earlier = None  # made today: not an earlier edition's
    before = {o.url for o in earlier.sources} if earlier else set()
    sources = []
    for a in story_sources(story):
        text = await store.article_text(a.id) if a.has_text else None
        text = text or a.lede
        if text.strip():
            sources.append(
                StorySource(
                    url=a.url,
                    outlet=credited(a.source) or a.outlet,
                    title=a.title,
                    text=text,
                    published=a.published,
                    new=bool(earlier) and a.url not in before,
                )
            )
    return StoryInput(story.title, tuple(sources), today.date(), earlier)


async def has_summary(app: Parts, story: int, key: str, preferred: str) -> bool:
    """Whether the story's texts (`key`) have a summary to keep: the summarizer's, or the
    extractive one made when the model's was not trusted."""
    store = await app.face()
    if await store.find_story_summary(story, key, preferred) is not None:
        return True
    if preferred == "extractive":
        return False
    other = await store.find_story_summary(story, key, "extractive")
    return other is not None and other.note.startswith("claim check")


@dataclass(frozen=True, slots=True)
class Written:
    """What writing a story's summary did: the summary written and saved (None: none written),
    whether the story kept the summary its texts had, whether the `[llm] budget` was spent
    before it (the summary is then extractive), how many sources it was written from, and
    why the LLM's summary fell back to extractive if it did."""

    summary: StorySummary | None = None
    kept: bool = False
    over_budget: bool = False
    sources: int = 0
    fallback: str | None = None

    @property
    def has_summary(self) -> bool:
        """Whether the story has a summary now: kept, or written."""
        return self.kept or self.summary is not None


async def write_summary(
    app: Parts, story: StoryView, budget: LLMBudget, check: FigureCheck | None = None
) -> Written:
    """The story's summary written and saved, unless its texts' summary is known. Where its
    outlets disagree, the disagreements it attributes are those `check` confirms (the rules'
    alone without a model), asked within the `[llm] budget`."""
    from digest.summarize.disputes import Confirmed, story_disagreements
    from digest.summarize.story import extractive_story_summary, summarize_story

    store = await app.face()
    summarizer = await app.summarizer()
    llm = summarizer.llm
    preferred = summarizer.preferred
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    item = await story_input(app, story, today)
    if not item.sources:
        return Written()
    key = item.content_hash
    if await has_summary(app, story.id, key, preferred):
        budget.kept(story.id)
        return Written(kept=True)
    over = False
    began = time.monotonic()
    check = check or FigureCheck(None)
    # The disagreements the rules found and the model confirmed; None: the rules' own.
    disputes: Confirmed | None = None

    async def summarized() -> Summarized:
        nonlocal disputes
        if check.on:
            disputes = await confirmed_disputes(check, item)
        return await summarize_story(llm, item, by_outlet=disputes)

    try:
        deadline = budget.begin()
        if deadline is not None:
            async with asyncio.timeout_at(deadline):
                outcome = await summarized()
        else:
            outcome = await summarized()
        summary, reason = outcome.summary, outcome.fallback_reason
        how = "by the model" if summary.summarizer != "extractive" else "extractive"
        if reason:
            how = f"extractive: {fallback_causes([reason])}"
    except TimeoutError:
        note = f"the [llm] budget of {budget.seconds:g} s for this deepen was spent"
        max_chars = llm.config.max_input_chars if llm else 12_000
        if check.on and disputes is None:  # spent while the model was asked: none confirmed
            disputes = Confirmed(tuple(story_disagreements(item)), ())
        summary = extractive_story_summary(item, max_chars, note, by_outlet=disputes)
        reason, how = None, "extractive: the [llm] budget was spent"
        over = True
    budget.ended(story.title, how, time.monotonic() - began)
    if llm is not None:
        budget.foresee(llm)  # the speeds its first summary measured
    summary = replace(summary, created_at=datetime.now(UTC))
    await store.save_story_summary(story.id, key, summary)
    return Written(summary, False, over, len(item.sources), reason or None)


async def confirmed_disputes(check: FigureCheck, item: Any) -> Confirmed:
    """The disagreements the rules find in the story's texts (`disputes.story_disputes`),
    and those of them the model confirms, each asked of its outlets' clauses."""
    from digest.facts.figures import disagreements
    from digest.memory.same_quantity import disagreement_pairs
    from digest.summarize.disputes import Confirmed, outlet_figures

    def found() -> tuple[dict[str, Any], list[Disagreement]]:
        current = outlet_figures(item)
        return current, disagreements(current)

    current, candidates = await off_loop(found)
    confirmed = [
        d for d in candidates if await check.passes("disagreement", disagreement_pairs(d, current))
    ]
    return Confirmed(tuple(candidates), tuple(confirmed))

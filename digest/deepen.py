"""The deep path: cluster the day's articles into stories, crawl the top ones, summarize them.

Each top story gets one summary, written in one LLM call from the main texts of its first
`SOURCES_PER_STORY` outlets (the representative first) and checked claim by claim against them
(`digest.summarize.story`); a story whose texts have not changed keeps its summary. The LLM
summaries of one deepen share `[llm] budget` seconds: the stories still waiting when it is spent
are summarized extractively, and the run record says how many and why.

One failed page never sinks the batch: its error is recorded on the run and the story keeps
whatever else was read. With no LLM configured, or the LLM failing, summaries are extractive
(and marked so).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from digest import metrics
from digest.app import App
from digest.clustering import NO_EMBEDDINGS, cluster_category, cluster_with_embeddings, top_stories
from digest.models import ArticleView, Failure, Page, StorySummary, StoryView, Summary
from digest.progress import NO_PROGRESS, Progress
from digest.store import content_hash
from digest.summarize.llm import counted_calls

log = logging.getLogger(__name__)

# Outlets a story's summary is written from: enough to compare tellings, few enough that each
# gets a fair share of `[llm] max_input_chars`.
SOURCES_PER_STORY = 4
# The source of a run's error when the embeddings endpoint failed and stories were told by
# their words alone: a fallback, not a failure of the run's own work.
EMBEDDINGS = "embeddings"
BUDGET = "llm budget"

# What a deepen counts (the run record's `counts`; a story task on a worker counts the same).
COUNTS = (
    *("stories", "crawled", "crawl_failed", "summarized", "reused", "llm", "extractive"),
    *("tokens", "embedded", "llm_calls", "sources_read", "claims", "claims_found"),
    *("sentences_removed", "claims_rejected", "over_budget", "summary_ms"),
)


@dataclass(frozen=True, slots=True)
class DeepenReport:
    run_id: int
    status: str  # "ok", "partial" (some pages failed) or "failed" (nothing could be read)
    counts: dict[str, int] = field(default_factory=dict)
    crawl_mode: str = ""
    crawl_mode_reason: str = ""
    errors: list[Failure] = field(default_factory=list)
    elapsed: float = 0.0
    similarity: str = "lexical"  # how stories were told apart: "embeddings" or "lexical"
    similarity_reason: str = ""  # why lexical: no [stories.embeddings], or the endpoint's error

    @property
    def failed_pages(self) -> list[Failure]:
        """The pages that could not be read. The other errors are the run's own (the
        embeddings endpoint, the LLM, its budget, a lost task): no page failed in them."""
        return [e for e in self.errors if is_page(e)]


def is_page(failure: Failure) -> bool:
    """A failure of one page (named by its URL), not of the run."""
    return failure.source.startswith(("http://", "https://"))


async def summarize_text(
    app: App, *, url: str, title: str, text: str, source: str = "", article_id: int | None = None
) -> tuple[Summary, bool, str | None]:
    """Summarize one text, reusing a stored summary of the same text by the same summarizer.

    Returns (summary, reused, why the LLM was not used if it was configured but failed).
    """
    from digest.summarize import ArticleInput

    summarizer = await app.summarizer()
    key = content_hash(text)
    store = await app.store() if article_id is not None else None
    if store is not None:
        known = await asyncio.to_thread(store.find_summary, key, summarizer.preferred)
        if known is not None:
            return known, True, None
    outcome = await summarizer.summarize_with_outcome(
        ArticleInput(url=url, title=title, text=text, source=source)
    )
    if store is not None and article_id is not None:
        await asyncio.to_thread(store.save_summary, article_id, key, outcome.summary)
    return outcome.summary, False, outcome.fallback_reason


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


async def deepen(
    app: App,
    categories: list[str] | None = None,
    *,
    top: int | None = None,
    progress: Progress = NO_PROGRESS,
) -> DeepenReport:
    """Cluster, crawl and summarize the top stories of each category (default: all);
    `progress` hears of each step: clustering, reading pages, summarizing."""
    started = time.monotonic()
    config = app.config
    cats = [config.check_category(c) for c in categories] if categories else None
    cats = cats or list(config.sources.categories)
    limit = top or config.stories.top
    store = await app.store()
    embedder = await app.embedder()
    run_id = await asyncio.to_thread(store.start_run, "deepen")
    now = datetime.now(UTC)
    counts = dict.fromkeys(COUNTS, 0)
    errors: list[Failure] = []
    status, mode, mode_reason = "failed", "", ""
    similarity = "embeddings" if embedder else "lexical"
    similarity_reason = "" if embedder else NO_EMBEDDINGS
    with counted_calls() as own_calls:  # this run's, whatever else shares the client
        try:
            stories: list[StoryView] = []
            progress.step("clustering categories", len(cats))
            for category in cats:
                # Once the endpoint failed, the rest of the run goes without it: a dead server
                # costs one timeout per run, not one per category.
                if embedder is not None and similarity == "embeddings":
                    result = await cluster_with_embeddings(
                        store, category, now=now, config=config.stories, embedder=embedder
                    )
                    counts["embedded"] += result.embedded
                    if result.embedding_error:
                        similarity, similarity_reason = "lexical", result.embedding_error
                        reason = result.embedding_error
                        log.warning("stories told by their words alone: %s", reason)
                        errors.append(Failure(EMBEDDINGS, f"lexical similarity only: {reason}"))
                else:
                    await asyncio.to_thread(
                        cluster_category, store, category, now=now, config=config.stories
                    )
                stories += await asyncio.to_thread(
                    top_stories, store, category, since=now - timedelta(hours=24), limit=limit
                )
                progress.advance(1, category)
            counts["stories"] = len(stories)
            metrics.stories_deepened.inc(len(stories))
            targets = [a for s in stories for a in story_sources(s) if not a.has_text]
            queue = await app.queue()
            if queue is not None:  # crawl + summary, one task per story, on the workers
                from digest.queue.work import deepen_stories

                progress.step("reading and summarizing stories on the workers")
                mode, mode_reason, ok = await deepen_stories(
                    app, queue, stories, targets, counts, errors
                )
            else:
                if targets:
                    progress.step("reading pages", len(targets))
                    crawler = await app.crawler()
                    mode, mode_reason = crawler.mode, crawler.mode_reason
                    await asyncio.gather(
                        *(_crawl(app, crawler, a, counts, errors, progress) for a in targets)
                    )
                ok = await _summarize_stories(app, stories, counts, errors, progress)
            own = [e for e in errors if e.source != EMBEDDINGS]  # pages and summaries
            status = "ok" if not errors else ("partial" if ok or not own else "failed")
        except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl+C, SIGTERM: not a failure
            status = "interrupted"
            raise
        finally:
            counts["llm_calls"] += own_calls[
                0
            ]  # and the workers' (their story tasks report theirs)
            recorded: dict[str, Any] = {
                **counts,
                "crawl_mode": mode,
                "crawl_mode_reason": mode_reason,
                "similarity": similarity,
                "similarity_reason": similarity_reason,
            }
            await asyncio.to_thread(
                store.finish_run,
                run_id,
                status=status,
                counts=recorded,
                errors=[e.to_json() for e in errors],
            )
            metrics.run_finished("deepen", status, time.monotonic() - started)
    return DeepenReport(
        run_id,
        status,
        counts,
        mode,
        mode_reason,
        errors,
        time.monotonic() - started,
        similarity,
        similarity_reason,
    )


async def _crawl(
    app: App,
    crawler: Any,
    article: ArticleView,
    counts: dict[str, int],
    errors: list[Failure],
    progress: Progress = NO_PROGRESS,
) -> None:
    store = await app.store()
    page: Page = await crawler.crawl_one(article.url)
    await asyncio.to_thread(store.save_crawl, article.id, page)
    progress.advance(1, article.url)
    if not page.ok:
        counts["crawl_failed"] += 1
        errors.append(Failure(article.url, page.error or "no main text found"))
        return
    counts["crawled"] += 1


async def story_input(app: App, story: StoryView, today: datetime) -> Any:
    """The story as its summary is written from: each source's stored main text (its lede
    when it has none), the earlier summary when the story had one on an earlier day."""
    from digest.summarize.types import StoryInput, StorySource

    store = await app.store()
    fresh = await asyncio.to_thread(store.stories_by_id, [story.id])
    story = fresh[0] if fresh else story
    earlier = story.summary
    if earlier is not None and (earlier.created_at is None or earlier.created_at >= today):
        earlier = None  # made today: not an earlier edition's
    before = {o.url for o in earlier.sources} if earlier else set()
    sources = []
    for a in story_sources(story):
        text = await asyncio.to_thread(store.article_text, a.id) if a.has_text else None
        text = text or a.lede
        if text.strip():
            sources.append(
                StorySource(
                    url=a.url,
                    outlet=a.source or a.outlet,
                    title=a.title,
                    text=text,
                    published=a.published,
                    new=bool(earlier) and a.url not in before,
                )
            )
    return StoryInput(story.title, tuple(sources), today.date(), earlier)


async def _summarize_stories(
    app: App,
    stories: list[StoryView],
    counts: dict[str, int],
    errors: list[Failure],
    progress: Progress | None = None,
) -> int:
    """Summarize each story that needs it, all queued at once (the LLM client lets
    `[llm] concurrency` through); returns how many stories have a summary."""
    heard = progress or NO_PROGRESS  # a worker's story task passes None
    from digest.summarize.story import extractive_story_summary, summarize_story

    store = await app.store()
    summarizer = await app.summarizer()
    llm = summarizer.llm
    preferred = summarizer.preferred
    budget = llm.config.budget if llm else None
    loop = asyncio.get_running_loop()
    deadline: float | None = None
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    summarized = 0
    reasons: list[str] = []

    async def one(story: StoryView) -> None:
        nonlocal deadline, summarized
        try:
            item = await story_input(app, story, today)
            if not item.sources:
                return
            key = item.content_hash
            known = await asyncio.to_thread(store.find_story_summary, story.id, key, preferred)
            if known is None and preferred != "extractive":
                other = await asyncio.to_thread(
                    store.find_story_summary, story.id, key, "extractive"
                )
                if other is not None and other.note.startswith("claim check"):
                    known = other  # the model's summary of these texts was not trusted
            if known is not None:
                counts["reused"] += 1
                summarized += 1
                return
            if deadline is None and budget is not None:
                deadline = loop.time() + budget
            try:
                if deadline is not None:
                    async with asyncio.timeout_at(deadline):
                        outcome = await summarize_story(llm, item)
                else:
                    outcome = await summarize_story(llm, item)
                summary, reason = outcome.summary, outcome.fallback_reason
            except TimeoutError:
                note = f"the [llm] budget of {budget:g} s for this deepen was spent"
                max_chars = llm.config.max_input_chars if llm else 12_000
                summary = extractive_story_summary(item, max_chars, note)
                reason = None
                counts["over_budget"] += 1
            summary = replace(summary, created_at=datetime.now(UTC))
            await asyncio.to_thread(store.save_story_summary, story.id, key, summary)
            _count(counts, summary, len(item.sources))
            summarized += 1
            if reason:
                reasons.append(reason)
        finally:
            heard.advance(1, story.articles[0].url if story.articles else story.title)

    heard.step("summarizing stories", len(stories))
    began = time.monotonic()
    await asyncio.gather(*(one(s) for s in stories))
    counts["summary_ms"] = round((time.monotonic() - began) * 1000)
    log.info(
        "story summaries: %d made (%d by %s, %d extractive, %d left to extractive by the "
        "budget), %d unchanged; claims %d of %d found, %d sentences removed",
        counts["summarized"],
        counts["llm"],
        preferred,
        counts["extractive"],
        counts["over_budget"],
        counts["reused"],
        counts["claims_found"],
        counts["claims"],
        counts["sentences_removed"],
    )
    if reasons:
        errors.append(
            Failure(
                "llm",
                f"{len(reasons)} summar{'y' if len(reasons) == 1 else 'ies'} fell back to "
                f"extractive: {reasons[0]}",
            )
        )
    if counts["over_budget"]:
        n = counts["over_budget"]
        errors.append(
            Failure(
                BUDGET,
                f"{n} stor{'y' if n == 1 else 'ies'} summarized extractively: the [llm] budget "
                f"of {budget:g} s for this deepen was spent",
            )
        )
    return summarized


def _count(counts: dict[str, int], summary: StorySummary, sources: int) -> None:
    counts["summarized"] += 1
    method = "extractive" if summary.summarizer == "extractive" else "llm"
    counts[method] += 1
    metrics.summaries.labels(method).inc()
    counts["tokens"] += summary.prompt_tokens + summary.completion_tokens
    counts["sources_read"] += sources
    counts["claims"] += summary.claims
    counts["claims_found"] += summary.claims_found
    counts["sentences_removed"] += summary.sentences_removed
    if summary.note.startswith("claim check"):
        counts["claims_rejected"] += 1

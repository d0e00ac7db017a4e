"""The deep path: cluster the day's articles into stories, crawl the top ones, summarize them.

One failed page never sinks the batch: its error is recorded on the run and the story keeps
whatever else was read. With no LLM configured, or the LLM failing, summaries are extractive
(and marked so); an unchanged text is never summarized twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from digest import metrics
from digest.app import App
from digest.clustering import cluster_category, cluster_with_embeddings, top_stories
from digest.models import ArticleView, Failure, Page, StoryView, Summary
from digest.store import content_hash

log = logging.getLogger(__name__)

# Articles read per story: the representative and one more outlet in case the first fails.
ARTICLES_PER_STORY = 2
# The source of a run's error when the embeddings endpoint failed and stories were told by
# their words alone: a fallback, not a failure of the run's own work.
EMBEDDINGS = "embeddings"
NO_EMBEDDINGS = "no [stories.embeddings]"

Progress = Callable[[str, int, int], None]  # (url, done, total)


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


def _needs_work(article: ArticleView, preferred: str) -> bool:
    return not (article.has_text and article.summary and article.summary.summarizer == preferred)


async def deepen(
    app: App,
    categories: list[str] | None = None,
    *,
    top: int | None = None,
    progress: Progress | None = None,
) -> DeepenReport:
    """Cluster, crawl and summarize the top stories of each category (default: all)."""
    started = time.monotonic()
    config = app.config
    cats = [config.check_category(c) for c in categories] if categories else None
    cats = cats or list(config.sources.categories)
    limit = top or config.stories.top
    store = await app.store()
    summarizer = await app.summarizer()
    embedder = await app.embedder()
    run_id = await asyncio.to_thread(store.start_run, "deepen")
    now = datetime.now(UTC)
    counts = dict.fromkeys(
        ("stories", "crawled", "crawl_failed", "summarized", "reused", "llm", "extractive"), 0
    )
    counts["tokens"] = 0
    counts["embedded"] = 0
    errors: list[Failure] = []
    status, mode, mode_reason = "failed", "", ""
    similarity = "embeddings" if embedder else "lexical"
    similarity_reason = "" if embedder else NO_EMBEDDINGS
    try:
        stories: list[StoryView] = []
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
                    log.warning("stories told by their words alone: %s", result.embedding_error)
                    errors.append(
                        Failure(EMBEDDINGS, f"lexical similarity only: {result.embedding_error}")
                    )
            else:
                await asyncio.to_thread(
                    cluster_category, store, category, now=now, config=config.stories
                )
            stories += await asyncio.to_thread(
                top_stories, store, category, since=now - timedelta(hours=24), limit=limit
            )
        counts["stories"] = len(stories)
        metrics.stories_deepened.inc(len(stories))
        targets = [
            a
            for s in stories
            for a in s.articles[:ARTICLES_PER_STORY]
            if _needs_work(a, summarizer.preferred)
        ]
        counts["reused"] = sum(len(s.articles[:ARTICLES_PER_STORY]) for s in stories) - len(targets)
        queue = await app.queue()
        if targets and queue is not None:  # crawl + summary, one task per story, on the workers
            from digest.queue.work import deepen_stories

            mode, mode_reason = await deepen_stories(app, queue, stories, targets, counts, errors)
        elif targets:
            crawler = await app.crawler()
            mode, mode_reason = crawler.mode, crawler.mode_reason
            done = 0

            async def one(article: ArticleView) -> None:
                nonlocal done
                try:
                    await _deepen_article(app, crawler, article, counts, errors)
                finally:
                    done += 1
                    if progress:
                        progress(article.url, done, len(targets))

            await asyncio.gather(*(one(a) for a in targets))
        ok = counts["crawled"] + counts["reused"]
        own = [e for e in errors if e.source != EMBEDDINGS]  # pages and summaries
        status = "ok" if not errors else ("partial" if ok or not own else "failed")
    finally:
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


async def _deepen_article(
    app: App, crawler: Any, article: ArticleView, counts: dict[str, int], errors: list[Failure]
) -> None:
    store = await app.store()
    if article.has_text:
        text = await asyncio.to_thread(store.article_text, article.id) or ""
        page = Page(url=article.url, final_url=article.url, title=article.title, text=text)
    else:
        page = await crawler.crawl_one(article.url)
        await asyncio.to_thread(store.save_crawl, article.id, page)
        if not page.ok:
            counts["crawl_failed"] += 1
            errors.append(Failure(article.url, page.error or "no main text found"))
            return
        counts["crawled"] += 1
    summary, reused, fallback = await summarize_text(
        app,
        url=article.url,
        title=page.title or article.title,
        text=page.text,
        source=article.source,
        article_id=article.id,
    )
    if reused:
        counts["reused"] += 1
        return
    counts["summarized"] += 1
    counts["extractive" if summary.summarizer == "extractive" else "llm"] += 1
    counts["tokens"] += summary.prompt_tokens + summary.completion_tokens
    if fallback and not any(e.source == "llm" for e in errors):
        errors.append(Failure("llm", f"summaries fell back to extractive: {fallback}"))

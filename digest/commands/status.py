"""`digest status`: what the service did, what failed, and what happens next.

It derives nothing itself: next runs come from `digest.schedule` (the instants the daemon's
triggers fire on), whether a daemon runs from its lock (`digest.store.daemon_lock`, not the
daemon itself), everything else from the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from digest.app import App
from digest.deliver.ledger import Delivery
from digest.models import FeedState, RunRecord
from digest.queue.queue import QueueCounts
from digest.schedule import next_collect, next_publish_due, parse_clock, parse_interval
from digest.store import Store
from digest.store.daemon_lock import daemon_holds

RECENT_RUNS = 30
FAILED_DELIVERIES_SHOWN = 20


@dataclass(frozen=True, slots=True)
class Status:
    """The state of one deployment, as `digest status` shows it."""

    daemon_running: bool
    next_collect: datetime
    next_publish: datetime
    runs: tuple[RunRecord, ...]  # newest first
    feeds: tuple[FeedState, ...]  # every feed fetched, the failing ones first
    llm_tokens_today: int
    deliveries: dict[str, int]  # ledger rows per state
    failed_deliveries: tuple[Delivery, ...]  # of the newest edition in the ledger
    database_bytes: int | None
    articles: dict[str, int]  # "articles", "with_text"
    browser_configured: str
    llm: str
    embeddings_configured: str | None = None  # "model at base_url"; None: no [stories.embeddings]
    article_vectors: int = 0  # stored, in the configured model's space
    queue: QueueCounts | None = None  # None: [queue] off, the work runs in-process
    # What the claim check did to today's story summaries (StorySummariesMixin.story_summary_checks)
    summary_checks: dict[str, int] = field(default_factory=dict)
    # Alerts to followers of stories, rows per state (FollowsMixin.alert_counts)
    alerts: dict[str, int] = field(default_factory=dict)

    @property
    def llm_last_deepen(self) -> dict[str, Any]:
        """How the last deepen's summaries went: by the LLM or extractive, the claims checked,
        and the stories the [llm] budget left to extractive summaries (with why)."""
        deepen = self.last_runs.get("deepen")
        if deepen is None:
            return {}
        c = deepen.counts
        keys = ("summarized", "reused", "llm", "extractive", "llm_calls", "sources_read")
        out: dict[str, Any] = {k: c.get(k, 0) for k in keys}
        out["claims"] = {
            "total": c.get("claims", 0),
            "found": c.get("claims_found", 0),
            "sentences_removed": c.get("sentences_removed", 0),
            "summaries_rejected": c.get("claims_rejected", 0),
        }
        out["over_budget"] = c.get("over_budget", 0)
        out["why"] = [e["error"] for e in deepen.errors if e.get("source") in ("llm", "llm budget")]
        return out

    @property
    def last_runs(self) -> dict[str, RunRecord]:
        """The newest run of each kind."""
        last: dict[str, RunRecord] = {}
        for run in self.runs:
            last.setdefault(run.kind, run)
        return last

    @property
    def failing_feeds(self) -> tuple[FeedState, ...]:
        return tuple(f for f in self.feeds if f.error_count)

    @property
    def failing_sources(self) -> list[dict[str, Any]]:
        """The sources the last collection could not read."""
        collect = self.last_runs.get("collect")
        return list(collect.errors) if collect else []

    @property
    def failing_hosts(self) -> dict[str, int]:
        """Hosts whose pages were late or failed in the last collection, with how many."""
        collect = self.last_runs.get("collect")
        return dict(collect.counts.get("failing_hosts", {})) if collect else {}

    @property
    def browser_last_used(self) -> tuple[str | None, str | None]:
        """The crawl mode the last deepen used, and why."""
        deepen = self.last_runs.get("deepen")
        counts = deepen.counts if deepen else {}
        return counts.get("crawl_mode"), counts.get("crawl_mode_reason")

    @property
    def similarity_last_used(self) -> tuple[str | None, str | None]:
        """How the last deepen told stories apart ("embeddings" or "lexical"), and why lexical."""
        deepen = self.last_runs.get("deepen")
        counts = deepen.counts if deepen else {}
        return counts.get("similarity"), counts.get("similarity_reason") or None

    def to_json(self) -> dict[str, Any]:
        mode, why = self.browser_last_used
        used, used_why = self.similarity_last_used
        return {
            "daemon_running": self.daemon_running,
            "next_runs": {
                "collect": self.next_collect.isoformat(),
                "publish": self.next_publish.isoformat(),
            },
            "last_runs": {kind: _run_json(r) for kind, r in self.last_runs.items()},
            "recent_runs": [
                {
                    "id": r.id,
                    "kind": r.kind,
                    "status": r.status,
                    "started_at": r.started_at.isoformat(),
                }
                for r in self.runs[:10]
            ],
            "failing_feeds": [
                {
                    "url": f.url,
                    "errors_in_a_row": f.error_count,
                    "last_error": f.last_error,
                    "last_ok_at": f.last_ok_at.isoformat() if f.last_ok_at else None,
                }
                for f in self.failing_feeds
            ],
            "failing_sources": self.failing_sources,
            "failing_hosts": self.failing_hosts,
            "llm_tokens_today": self.llm_tokens_today,
            "deliveries": self.deliveries,
            "alerts": self.alerts,
            "failed_deliveries": [
                {
                    "edition": d.edition_day.isoformat(),
                    "recipient": d.recipient,
                    "reply": d.last_reply or "",
                }
                for d in self.failed_deliveries
            ],
            "database_bytes": self.database_bytes,
            "articles": self.articles,
            "browser": {"configured": self.browser_configured, "last_used": mode, "why": why},
            "llm": self.llm,
            "summaries": {"today": self.summary_checks, "last_deepen": self.llm_last_deepen},
            "embeddings": {
                "configured": self.embeddings_configured,
                "last_used": used,
                "why": used_why,
                "article_vectors": self.article_vectors,
            },
            "queue": {"enabled": False}
            if self.queue is None
            else {"enabled": True, **self.queue.to_json()},
        }


def _run_json(r: RunRecord) -> dict[str, Any]:
    took = (r.finished_at - r.started_at).total_seconds() if r.finished_at else None
    return {
        "id": r.id,
        "status": r.status,
        "key": r.key,
        "started_at": r.started_at.isoformat(),
        "duration_s": round(took, 2) if took is not None else None,
        "counts": r.counts,
        "errors": r.errors,
    }


def failed_deliveries(store: Store, limit: int = FAILED_DELIVERIES_SHOWN) -> list[Delivery]:
    """The failed emails of the newest edition in the ledger, with the reason kept for each:
    an address the rule refuses, say, fails the same way every day until it is fixed."""
    newest = store.deliveries(limit=1)
    if not newest:
        return []
    return store.deliveries(limit, edition_day=newest[0].edition_day, states=("failed",))


async def status(app: App) -> Status:
    store = await app.face(create=False)
    now = datetime.now(UTC)
    sched = app.config.schedule
    llm = app.config.llm
    embeddings = app.config.stories.embeddings
    space = None
    if embeddings is not None:  # the client's module (and the summarizers beside it) only then
        from digest.stories.embeddings import Embedder

        space = Embedder.space_of(embeddings)
    today = app.config.today_start(now)
    return Status(
        daemon_running=await store.call(lambda s: daemon_holds(app.config, s)),
        next_collect=next_collect(now, parse_interval(sched.collect_every)),
        next_publish=next_publish_due(now, parse_clock(sched.publish_at), sched.timezone),
        runs=tuple(await store.recent_runs(RECENT_RUNS)),
        feeds=tuple(await store.feed_states()),
        llm_tokens_today=await store.tokens_used(today)
        + await store.story_tokens_used(today)
        + await store.translation_tokens(today),
        summary_checks=await store.story_summary_checks(today),
        deliveries=await store.ledger_counts(),
        alerts=await store.alert_counts(),
        failed_deliveries=tuple(await store.call(failed_deliveries)),
        database_bytes=await store.database_size(),
        articles=await store.article_counts(),
        browser_configured=app.config.crawl.mode,
        llm=f"llm:{llm.model}" if llm else "extractive (no llm configured)",
        embeddings_configured=(
            f"{embeddings.model} at {embeddings.base_url}" if embeddings is not None else None
        ),
        article_vectors=await store.vector_count(model=space) if space is not None else 0,
        queue=await queue.counts() if (queue := await app.queue()) is not None else None,
    )

"""The queue's connection to PostgreSQL: procrastinate's app, its schema, tasks waited for.

Procrastinate's schema is applied through its own API, on first use, under an advisory lock
(and not by an Alembic migration): it belongs to procrastinate and only exists on PostgreSQL
when the queue is on, while our migrations run on SQLite too. Tasks have no return value in
procrastinate, so each task writes what it did to `digest_task_results`, a table of the
queue's, created beside procrastinate's; whoever enqueued the task reads and removes it.

A task whose worker died (SIGKILL, a lost host) stays `doing` with a worker that no longer
sends heartbeats: whoever waits for tasks, and every worker, puts such tasks back in the queue
(`retry_stalled`). What makes a retry harmless is the rest of the service: articles are upserted
by canonical URL, summaries are kept once per text, and the delivery ledger claims each message
with a compare-and-set before it is sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from digest.config import Config
from digest.errors import DigestError

log = logging.getLogger("digest.queue")

# How often a waiter looks at its tasks' states.
POLL_SECONDS = 0.25
_SCHEMA_LOCK_KEY = 0x64717565  # pg_advisory_xact_lock: two processes applying the schema take turns
_RESULTS_TABLE = """
CREATE TABLE IF NOT EXISTS digest_task_results (
    job_id bigint PRIMARY KEY,
    task_name varchar NOT NULL,
    ok boolean NOT NULL,
    result jsonb NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now()
)
"""
_FINAL = ("succeeded", "failed", "cancelled", "aborted")


class TaskFailedError(DigestError):
    """A task raised, or ended without saying what it did."""


@dataclass(frozen=True, slots=True)
class WorkerState:
    id: int
    last_heartbeat: datetime
    running: int


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """What `digest status` shows of the queue: tasks per kind and state, and live workers."""

    tasks: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> state -> count
    workers: tuple[WorkerState, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "workers": [
                {"id": w.id, "last_heartbeat": w.last_heartbeat.isoformat(), "running": w.running}
                for w in self.workers
            ],
        }


def conninfo(url: str) -> str:
    """libpq's URI for a SQLAlchemy PostgreSQL URL (its `options=-csearch_path=...` kept)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


class Queue:
    """The procrastinate app of one process, open while the `async with` lasts."""

    def __init__(self, config: Config, *, pool_size: int = 4) -> None:
        import procrastinate

        self.config = config.queue
        connector = procrastinate.PsycopgConnector(
            conninfo=conninfo(config.database_url()),
            min_size=1,
            max_size=pool_size,
            kwargs={"application_name": "digest queue"},
        )
        self.procrastinate = procrastinate.App(connector=connector)
        self._db = connector  # the app's, as its PostgreSQL connector (its pool, its queries)

    async def __aenter__(self) -> Queue:
        await self.procrastinate.open_async()
        try:
            await self._ensure_schema()
        except BaseException:
            await self.procrastinate.close_async()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.procrastinate.close_async()

    async def _ensure_schema(self) -> None:
        """Procrastinate's tables (once per database or schema) and the results table."""
        from psycopg_pool import AsyncConnectionPool

        pool: AsyncConnectionPool = self._db.pool
        async with pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
            row = await (await conn.execute("SELECT to_regclass('procrastinate_jobs')")).fetchone()
            if row is None or row[0] is None:
                log.info("creating the task queue's tables (procrastinate)")
                schema = self.procrastinate.schema_manager.get_schema()
                await conn.execute(schema)
            await conn.execute(_RESULTS_TABLE)

    async def enqueue(
        self, kind: str, arguments: Sequence[dict[str, Any]], *, locks: Sequence[str] = ()
    ) -> list[int]:
        """Defer one task of `kind` per item of `arguments`; `locks`: one per task, so that two
        tasks of the same lock never run at once (on any worker)."""
        if not arguments:
            return []
        if locks:
            return [
                await self.procrastinate.configure_task(name=kind, lock=lock).defer_async(**args)
                for args, lock in zip(arguments, locks, strict=True)
            ]
        deferrer = self.procrastinate.configure_task(name=kind)
        return await deferrer.batch_defer_async(*arguments)

    async def run(
        self, kind: str, arguments: Sequence[dict[str, Any]], *, locks: Sequence[str] = ()
    ) -> list[Any]:
        """Enqueue the tasks and wait until they all ended: what each did, in order.

        A task that failed gives a TaskFailedError in its place (the others still count).
        """
        ids = await self.enqueue(kind, arguments, locks=locks)
        if ids:
            log.info("%s: %d task(s) enqueued", kind, len(ids))
        await self.wait(ids)
        return await self._results(ids)

    async def wait(self, ids: Sequence[int]) -> None:
        """Until every task of `ids` ended (succeeded tasks are deleted by the workers), putting
        the tasks of dead workers back in the queue meanwhile."""
        pending = set(ids)
        quiet = 0.0
        while pending:
            rows = await self._db.execute_query_all_async(
                "SELECT id, status FROM procrastinate_jobs WHERE id = ANY(%(ids)s)",
                ids=list(pending),
            )
            present = {r["id"]: str(r["status"]) for r in rows}
            pending = {i for i in pending if i in present and present[i] not in _FINAL}
            if not pending:
                break
            await self.retry_stalled()
            await asyncio.sleep(POLL_SECONDS)
            quiet += POLL_SECONDS
            if quiet >= 60:
                quiet = 0.0
                workers = await self.live_workers()
                log.warning(
                    "still waiting for %d task(s); %d live worker(s)", len(pending), len(workers)
                )

    async def retry_stalled(self) -> list[int]:
        """Put back in the queue the running tasks of workers whose heartbeat stopped."""
        manager = self.procrastinate.job_manager
        stalled = await manager.get_stalled_jobs(seconds_since_heartbeat=self.config.stalled_after)
        retried: list[int] = []
        for job in stalled:
            try:
                await manager.retry_job(job)
            except Exception as err:  # another waiter or worker retried it first
                log.debug("task %s not retried: %s", job.id, err)
                continue
            retried.append(job.id or 0)
            log.warning(
                "task %s (%s) was running on a worker that stopped: retrying it",
                job.id,
                job.task_name,
            )
        return retried

    async def save_result(self, job_id: int, kind: str, result: Any, *, ok: bool = True) -> None:
        await self._db.execute_query_async(
            "INSERT INTO digest_task_results (job_id, task_name, ok, result)"
            " VALUES (%(job_id)s, %(kind)s, %(ok)s, %(result)s)"
            " ON CONFLICT (job_id) DO UPDATE SET ok = EXCLUDED.ok, result = EXCLUDED.result,"
            " finished_at = now()",
            job_id=job_id,
            kind=kind,
            ok=ok,
            result={"value": result},
        )

    async def _results(self, ids: Sequence[int]) -> list[Any]:
        if not ids:
            return []
        rows = await self._db.execute_query_all_async(
            "DELETE FROM digest_task_results WHERE job_id = ANY(%(ids)s)"
            " RETURNING job_id, ok, result",
            ids=list(ids),
        )
        found = {r["job_id"]: r for r in rows}
        out: list[Any] = []
        for job_id in ids:
            row = found.get(job_id)
            if row is None:
                out.append(TaskFailedError(f"task {job_id} ended without a result"))
            elif not row["ok"]:
                out.append(TaskFailedError(str(row["result"]["value"])))
            else:
                out.append(row["result"]["value"])
        return out

    async def live_workers(self) -> tuple[WorkerState, ...]:
        rows = await self._db.execute_query_all_async(
            "SELECT w.id, w.last_heartbeat, count(j.id) AS running"
            " FROM procrastinate_workers w"
            " LEFT JOIN procrastinate_jobs j ON j.worker_id = w.id AND j.status = 'doing'"
            " WHERE w.last_heartbeat > now() - make_interval(secs => %(after)s)"
            " GROUP BY w.id, w.last_heartbeat ORDER BY w.id",
            after=self.config.stalled_after,
        )
        return tuple(WorkerState(r["id"], r["last_heartbeat"], r["running"]) for r in rows)

    async def counts(self) -> QueueCounts:
        rows = await self._db.execute_query_all_async(
            "SELECT task_name, status::text AS status, count(*) AS n FROM procrastinate_jobs"
            " WHERE status IN ('todo', 'doing', 'failed') GROUP BY task_name, status"
        )
        names = {"todo": "waiting", "doing": "running", "failed": "failed"}
        tasks: dict[str, dict[str, int]] = {}
        for r in rows:
            tasks.setdefault(r["task_name"], dict.fromkeys(names.values(), 0))[
                names[r["status"]]
            ] = r["n"]
        return QueueCounts(tasks, await self.live_workers())

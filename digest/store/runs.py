"""Runs: every job run with its counts and errors, and a unique key per (job, period) so that a
restarted scheduler never does a period twice."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from digest.errors import RunExistsError, StoreError
from digest.models import RunRecord
from digest.store.base import StoreBase, now
from digest.store.owners import current_owner, owner_alive
from digest.store.schema import runs

FINISHED_STATUSES = ("ok", "partial", "failed", "interrupted")
# A run stopped part-way: by a signal (Ctrl+C, SIGTERM), or by its process dying (recovered).
INTERRUPTED = "interrupted"


class RunsMixin(StoreBase):
    """Runs of the jobs, as `digest status` shows them."""

    def start_run(self, kind: str, key: str | None = None) -> int:
        """Record a run as started and return its id.

        `key` names the (job, period) it covers; a second run with the same key raises
        RunExistsError, which is how a restarted scheduler avoids doing a period twice.
        """
        values: dict[str, Any] = {
            "kind": kind,
            "key": key,
            "started_at": now(),
            "status": "running",
            "counts": {},
            "errors": [],
            "owner": current_owner(),
        }
        with self._write() as conn:
            try:
                stmt = runs.insert().values(values).returning(runs.c.id)
                return int(conn.execute(stmt).scalar_one())
            except IntegrityError:
                raise RunExistsError(f"a run with key {key!r} exists already") from None

    def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        counts: Mapping[Any, Any],
        errors: Iterable[Mapping[Any, Any]],
    ) -> None:
        """Record how a run ended: `status` is ok, partial (some sources failed), failed, or
        interrupted (a signal stopped it part-way). An interrupted run gives up its period key,
        as one whose process died does (`recover_interrupted`): the daemon's next start runs
        the period again, rather than taking a restart's cut-short period as done."""
        if status not in FINISHED_STATUSES:
            raise ValueError(f"run status must be one of {FINISHED_STATUSES}, not {status!r}")
        values: dict[str, Any] = {
            "status": status,
            "finished_at": now(),
            "counts": dict(counts),
            "errors": [dict(e) for e in errors],
        }
        if status == INTERRUPTED:
            values["key"] = None
        with self._write() as conn:
            result = conn.execute(update(runs).where(runs.c.id == run_id).values(values))
            if result.rowcount == 0:
                raise StoreError(f"no run with id {run_id}")

    def recent_runs(self, limit: int, kind: str | None = None) -> list[RunRecord]:
        """The latest runs (of one `kind`, or all), newest first: what `digest status` shows."""
        query = select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
        if kind is not None:
            query = query.where(runs.c.kind == kind)
        with self._read() as conn:
            return [
                RunRecord(
                    id=row["id"],
                    kind=row["kind"],
                    key=row["key"],
                    status=row["status"],
                    started_at=row["started_at"],
                    finished_at=row["finished_at"],
                    counts=row["counts"],
                    errors=row["errors"],
                )
                for row in conn.execute(query).mappings()
            ]

    def recover_interrupted(self, started_before: datetime) -> list[str]:
        """Runs a dead process left 'running': mark them interrupted and free their period keys, so
        that a restarted daemon runs those periods again. A run whose process is still alive (a
        CLI command at work, digest.store.owners) is left alone. Returns the freed keys (or
        ids)."""
        when = now()
        freed = []
        with self._write() as conn:
            rows = conn.execute(
                select(runs.c.id, runs.c.key, runs.c.errors, runs.c.owner, runs.c.started_at).where(
                    runs.c.status == "running", runs.c.started_at < started_before
                )
            ).all()
            for run_id, key, errors, owner, started_at in rows:
                if owner_alive(owner, started_at, when):
                    continue
                conn.execute(
                    update(runs)
                    .where(runs.c.id == run_id)
                    .values(
                        status=INTERRUPTED,
                        key=None,
                        errors=[*(errors or []), {"source": "run", "error": "interrupted"}],
                    )
                )
                freed.append(key or f"run {run_id}")
        return freed

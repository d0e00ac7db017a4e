"""Fast passes take turns: one at a time in a process, one per core on the machine.

A fast pass has 1.5 s for all its pages, most of it spent parsing them. Passes run at once share
the cores, and past one pass per core all of them are late: 4 workers of 4 tasks on 2 cores, each
running its passes at once, gave 1 page in 10 its lede; one pass at a time per worker, still 4 at
once on the machine, lost up to 8% of them. So a pass holds its process's turn, then one of the
host's slots, lock files (`flock`) in the temporary folder that every worker of this user on
this machine shares; the kernel frees a slot with its process, also one killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
from pathlib import Path

from filelock import FileLock, Timeout

from digest.runtime.subprocesses import usable_cores
from digest.runtime.threads import off_loop

POLL = 0.02  # seconds between looks for a free slot while all are taken


class PassTurns:
    """`async with turns:` around a fast pass's reading of its pages."""

    def __init__(self, slots: int | None = None, folder: Path | None = None) -> None:
        self.slots = slots or usable_cores()
        self.folder = folder or Path(tempfile.gettempdir()) / f"digest-passes-{os.getuid()}"
        self._own = asyncio.Lock()  # this process's turn
        self._held: FileLock | None = None
        self._locks: list[FileLock] = []  # one per slot, made at the first look

    async def __aenter__(self) -> None:
        await self._own.acquire()
        try:
            # Other processes free the slots: no event of this process tells when.
            while (held := await self._look()) is None:  # noqa: ASYNC110
                await asyncio.sleep(POLL)
        except BaseException:
            self._own.release()
            raise
        self._held = held

    async def _look(self) -> FileLock | None:
        attempt = asyncio.ensure_future(off_loop(self._try_slots))
        try:
            return await asyncio.shield(attempt)
        except asyncio.CancelledError:  # the thread may take a slot still: give it back then
            attempt.add_done_callback(_give_back)
            raise

    async def __aexit__(self, *exc: object) -> None:
        held, self._held = self._held, None
        try:
            if held is not None:
                await off_loop(held.release)
        finally:
            self._own.release()

    def _try_slots(self) -> FileLock | None:
        """A free slot, now taken, or None; starting at a random one, so that processes that
        look at once do not all try the same lock first."""
        if not self._locks:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._locks = [
                FileLock(self.folder / f"slot-{i}.lock", thread_local=False)
                for i in range(self.slots)
            ]
        first = random.randrange(self.slots)
        for lock in self._locks[first:] + self._locks[:first]:
            try:
                lock.acquire(timeout=0)
            except Timeout:
                continue
            return lock
        return None


def _give_back(attempt: asyncio.Future[FileLock | None]) -> None:
    if not attempt.cancelled() and attempt.exception() is None and (lock := attempt.result()):
        lock.release()

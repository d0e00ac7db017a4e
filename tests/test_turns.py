"""Fast passes take turns across the worker processes of one machine (digest.fetch.turns)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from digest.fetch.turns import PassTurns

pytestmark = pytest.mark.slow

# A worker process in a pass: takes a turn of the folder's one slot, says so, holds it.
HOLDER = """
import asyncio, sys
from pathlib import Path
from digest.fetch.turns import PassTurns

async def main():
    async with PassTurns(slots=1, folder=Path(sys.argv[1])):
        print("in", flush=True)
        await asyncio.sleep(float(sys.argv[2]))

asyncio.run(main())
"""


def holding(folder: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "in\n"
    return proc


async def test_a_pass_waits_while_another_process_has_the_machines_slot(tmp_path: Path):
    other = holding(tmp_path, 0.8)
    try:
        started = time.monotonic()
        async with PassTurns(slots=1, folder=tmp_path):
            waited = time.monotonic() - started
        assert waited > 0.5  # until the other pass's 0.8 s were over
    finally:
        other.kill()
        other.wait()


async def test_a_worker_killed_in_its_pass_frees_its_slot(tmp_path: Path):
    other = holding(tmp_path, 60)
    other.send_signal(signal.SIGKILL)
    other.wait()
    async with asyncio.timeout(5):
        async with PassTurns(slots=1, folder=tmp_path):
            pass


async def test_as_many_passes_at_once_as_slots_and_one_per_process(tmp_path: Path):
    turns = PassTurns(slots=2, folder=tmp_path)
    inside = 0
    most = 0

    async def one_pass() -> None:
        nonlocal inside, most
        async with turns:
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.05)
            inside -= 1

    await asyncio.gather(*(one_pass() for _ in range(4)))
    assert most == 1  # two slots on the machine, but this process takes one turn at a time
    other = holding(tmp_path, 60)  # its slot is held: this process still gets the other one
    try:
        async with asyncio.timeout(5):
            async with turns:
                pass
    finally:
        other.kill()
        other.wait()


async def test_a_pass_cancelled_while_waiting_leaves_no_slot_taken(tmp_path: Path):
    other = holding(tmp_path, 0.5)
    turns = PassTurns(slots=1, folder=tmp_path)
    waiting = asyncio.create_task(turns.__aenter__())
    await asyncio.sleep(0.1)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    other.wait()
    async with asyncio.timeout(5):  # neither this process nor the other holds the slot
        async with turns:
            pass

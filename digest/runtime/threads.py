"""Work that would hold up the event loop, run in a worker thread: the one place, beside the
store's face (`digest.store.face`), where the service calls `asyncio.to_thread`.

`off_loop` is for code of our own that takes a while but ends by itself (detecting languages
while an edition's sections are built, reading figures out of texts, writing the archive's
pages); a call of a library that could wait for ever on something outside the process gets a
helper of its own here, with a timeout. The store's calls go through its face, not here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


async def off_loop(work: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """`work(*args, **kwargs)` in a worker thread, awaited: CPU-bound work of our own (or local
    files), which ends by itself; the loop serves other coroutines meanwhile."""
    return await asyncio.to_thread(work, *args, **kwargs)

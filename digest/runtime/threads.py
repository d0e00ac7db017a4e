"""Work that would hold up the event loop, run in a worker thread: the one place, beside the
store's face (`digest.store.face`), where the service calls `asyncio.to_thread`.

`off_loop` is for code of our own that takes a while but ends by itself (detecting languages
while an edition's sections are built, reading figures out of texts, writing the archive's
pages); `bounded` for a call that waits on something outside the process (a host name looked up)
and could block for long: it is awaited for so many seconds at most. The store's calls go
through its face, not here.
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


async def bounded(seconds: float, work: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """`work(*args, **kwargs)` in a worker thread, awaited `seconds` at most: TimeoutError
    after that. The thread cannot be stopped: it ends when the call returns, unawaited."""
    return await asyncio.wait_for(asyncio.to_thread(work, *args, **kwargs), seconds)

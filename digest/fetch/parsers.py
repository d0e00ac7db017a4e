"""Untrusted HTML and feeds are parsed in child processes, under a deadline that really holds.

A page is hostile input to its parser: some shapes cost lexbor and libxml2 time that grows faster
than the page (`digest.fetch.shape` bounds the known ones), and a parser that runs on the event
loop, or in a thread that cannot be stopped, turns one such page into a frozen quick path.
So the lede finder, the main-text extractor and the feed parser run in a small pool of worker
processes (`digest.fetch._parse_worker`): a call gets the caller's remaining time, waiting for a
free worker included. A lede call may also get a CPU allowance: a parse is judged hostile when
its worker has used that much CPU on it (read from /proc), not when the clock says so, since on
a machine busy with other processes a normal page's parse can wait for a core for longer than
it parses (91 local pages kept 73 ledes at load 4-5 on 2 cores when wall time judged).
When either is used up the caller has its answer (late) at once, and a worker still busy a
`grace` later is killed (SIGKILL) and replaced. A killed or crashed parse is
that page's error; the other pages, and the service, carry on.

Workers start when first needed and stop after `idle_timeout` without work, so an idle daemon
holds no parser processes. A worker costs about 15 MB (lede) or 40 MB (main text) and starts in
30-200 ms; a call adds about a millisecond for moving a page through a pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from digest.errors import FeedError, ParseError, ParseOverrunError, ParseTimeoutError
from digest.fetch._parse_worker import FRAME
from digest.fetch.lede import Lede
from digest.models import MainText
from digest.runtime.subprocesses import child_env, process_cpu, usable_cores

if TYPE_CHECKING:  # feedparser (0.09 s) is imported where feeds are read: `extract` needs none
    from digest.fetch.feed_parser import ParsedFeed

_KINDS = frozenset(("article", "meta", ""))


@dataclass(eq=False)
class _Worker:
    proc: asyncio.subprocess.Process
    idle_since: float = 0.0
    # Reads the worker's unasked first answer: done once it has imported its modules.
    ready: asyncio.Task[dict[str, Any]] | None = None
    busy: bool = False  # handed a request: a late answer means the worker must go
    cpu_at_hand: float | None = None  # its CPU seconds when handed the request, if known

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def cpu_seconds(self) -> float | None:
        """User and system CPU time the process has had so far (None: not on Linux)."""
        return process_cpu(self.proc.pid)

    async def ask(
        self, header: dict[str, Any], body: bytes, on_handed: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        stdin = self.proc.stdin
        assert stdin is not None
        if self.ready is not None:
            await asyncio.shield(self.ready)  # cancelling the wait leaves the worker whole
        self.busy = True
        self.cpu_at_hand = self.cpu_seconds()
        if on_handed is not None:
            on_handed()
        data = json.dumps(header).encode()
        stdin.write(FRAME.pack(len(data), len(body)) + data + body)
        await stdin.drain()
        answer = await self.answer()
        self.busy = False
        return answer

    async def answer(self) -> dict[str, Any]:
        stdout = self.proc.stdout
        assert stdout is not None
        header_len, body_len = FRAME.unpack(await stdout.readexactly(FRAME.size))
        answer = json.loads(await stdout.readexactly(header_len))
        if body_len:
            await stdout.readexactly(body_len)
        if not isinstance(answer, dict):
            raise ParseError("the parser answered nonsense")
        return answer


@dataclass(eq=False)
class ParserPool:
    """Up to `size` parser processes; use as `async with ParserPool() as parsers:`."""

    size: int = 4
    memory_mb: int = 1024
    idle_timeout: float = 300.0
    # How long a parse may go on after its caller gave up before its worker is killed.
    grace: float = 1.0
    # Modules a new worker imports before its first request, so the first call is not late.
    preload: tuple[str, ...] = ("lede",)
    _idle: list[_Worker] = field(default_factory=list, init=False)
    _live: set[_Worker] = field(default_factory=set, init=False)
    _slots: asyncio.Semaphore | None = field(default=None, init=False)
    _exits: set[asyncio.Task[Any]] = field(default_factory=set, init=False)
    _reaper: asyncio.TimerHandle | None = field(default=None, init=False)
    _closed: bool = field(default=False, init=False)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self, *, wait: bool = False) -> None:
        """Start a worker per core now, instead of at first use: they import in the background
        (30-50 ms) while the caller's requests go out. `wait`: until they are ready to parse."""
        while len(self._live) < min(self.size, usable_cores()) and not self._closed:
            self._idle.append(await self._spawn())
        if wait:
            await asyncio.gather(*(worker.ask({"op": "ping"}, b"") for worker in self._idle))

    async def lede(
        self,
        body: bytes,
        charset: str | None,
        max_chars: int,
        *,
        timeout: float,  # noqa: ASYNC109  (the deadline is the point: it kills the worker)
        cpu_timeout: float | None = None,
        on_handed: Callable[[], None] | None = None,
    ) -> Lede:
        """`find_lede` of the page in `body`, decoded by `decode_html`, within `timeout`, and
        ParseOverrunError once its worker has spent `cpu_timeout` seconds of CPU on it;
        `on_handed` is called when a ready worker gets the page (after any wait for one)."""
        header = {"op": "lede", "charset": charset, "max_chars": max_chars}
        answer = await self._call(header, body, timeout, on_handed, cpu_timeout)
        kind = answer.get("kind")
        if kind not in _KINDS or not isinstance(answer.get("text"), str):
            raise ParseError("the parser answered nonsense")
        site, title = answer.get("site"), answer.get("title")
        return Lede(
            answer["text"],
            kind,
            site if isinstance(site, str) else "",
            title if isinstance(title, str) else "",
        )

    async def main_text(
        self,
        html: str,
        url: str | None,
        *,
        timeout: float,  # noqa: ASYNC109
    ) -> MainText:
        """`extract_main_text(html, url)` within `timeout`."""
        answer = await self._call(
            {"op": "main_text", "url": url}, html.encode("utf-8", "replace"), timeout
        )
        title, text = answer.get("title"), answer.get("text")
        if not isinstance(title, str) or not isinstance(text, str):
            raise ParseError("the parser answered nonsense")
        return MainText(title=title, text=text)

    async def feed(
        self,
        body: bytes,
        *,
        feed_url: str,
        category: str,
        name: str | None,
        base_url: str | None,
        charset: str | None,
        timeout: float,  # noqa: ASYNC109
    ) -> ParsedFeed:
        """`parse_feed` of the document in `body` within `timeout`; FeedError when the
        document is not a readable feed, ParseError when its parse was late or crashed."""
        from digest.fetch.feed_parser import ParsedFeed  # here: see the top of the module

        header = {
            "op": "feed",
            "feed_url": feed_url,
            "category": category,
            "name": name,
            "base_url": base_url,
            "charset": charset,
        }
        answer = await self._call(header, body, timeout)
        if isinstance(answer.get("feed_error"), str):
            raise FeedError(answer["feed_error"])
        try:
            return ParsedFeed.from_json(answer["feed"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ParseError("the parser answered nonsense") from None

    async def close(self) -> None:
        self._closed = True
        if self._reaper is not None:
            self._reaper.cancel()
        for worker in list(self._live):
            self._kill(worker)
        while self._exits:  # a late parse's end may add its worker's exit meanwhile
            await asyncio.gather(*list(self._exits), return_exceptions=True)

    async def _call(
        self,
        header: dict[str, Any],
        body: bytes,
        timeout: float,  # noqa: ASYNC109
        on_handed: Callable[[], None] | None = None,
        cpu_timeout: float | None = None,
    ) -> dict[str, Any]:
        if self._closed:
            raise ParseError("the parser pool is closed")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.size)
        slots = self._slots
        deadline = asyncio.get_running_loop().time() + timeout
        late = f"parsing took longer than the {timeout:.2f} s left and was given up"
        try:
            async with asyncio.timeout_at(deadline):
                await slots.acquire()
        except TimeoutError:
            raise ParseTimeoutError(late) from None
        worker: _Worker | None = None
        ask: asyncio.Future[dict[str, Any]] | None = None
        answer: dict[str, Any] | None = None
        handed_over = False  # the worker and its slot went to `_finish_late`
        try:
            async with asyncio.timeout_at(deadline):
                worker = self._idle.pop() if self._idle else await self._spawn()
                ask = asyncio.ensure_future(worker.ask(header, body, on_handed))
                answer = await _within_cpu(worker, ask, cpu_timeout)
        except (TimeoutError, asyncio.CancelledError) as err:
            if worker is not None and ask is not None and worker.busy and not ask.done():
                handed_over = True
                self._finish_late(worker, ask)
            if isinstance(err, (asyncio.CancelledError, ParseOverrunError)):
                raise
            raise ParseTimeoutError(late) from None
        except (OSError, asyncio.IncompleteReadError, ValueError) as err:
            code = worker.proc.returncode if worker is not None else None
            how = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
            raise ParseError(f"the parser process died ({how}): {err}") from None
        finally:
            if not handed_over:
                if ask is not None and not ask.done():
                    ask.cancel()  # still waiting for the worker to start: it was handed nothing
                if worker is not None:
                    if not worker.busy and worker.alive and not self._closed:
                        self._release(worker)  # it answered, or was never handed the request
                    else:
                        self._kill(worker)  # broken mid-request: never reuse it
                slots.release()
        if "error" in answer:
            raise ParseError(str(answer["error"]))
        ok = answer.get("ok")
        if not isinstance(ok, dict):
            raise ParseError("the parser answered nonsense")
        return ok

    def _finish_late(self, worker: _Worker, ask: asyncio.Future[dict[str, Any]]) -> None:
        """A parse its caller gave up on: its answer is dropped, and the worker goes back to the
        pool if it ends within `grace`, else it is killed. Killing every late parse at once
        costs a process start (0.2-0.5 s of CPU) each: on a loaded machine that made more
        parses late, and the pool spent its time starting workers. The slot stays taken
        meanwhile, so the pool never runs more than `size` parsers."""
        slots = self._slots
        assert slots is not None

        async def finish() -> None:
            try:
                await asyncio.wait_for(ask, self.grace)
            except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
                self._kill(worker)
            except asyncio.CancelledError:  # the loop is closing: leave no parser behind
                self._kill(worker)
                raise
            else:
                if worker.alive and not self._closed:
                    self._release(worker)
                else:
                    self._kill(worker)
            finally:
                slots.release()

        task = asyncio.ensure_future(finish())
        self._exits.add(task)
        task.add_done_callback(self._exits.discard)

    async def _spawn(self) -> _Worker:
        args = ["--memory-mb", str(self.memory_mb)]
        for name in self.preload:
            args += ["--preload", name]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "digest.fetch._parse_worker",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=child_env(),
        )
        _widen_pipe(proc.stdin)
        worker = _Worker(proc)
        worker.ready = asyncio.ensure_future(worker.answer())
        self._live.add(worker)
        return worker

    def _release(self, worker: _Worker) -> None:
        loop = asyncio.get_running_loop()
        worker.idle_since = loop.time()
        self._idle.append(worker)
        if self._reaper is not None:
            self._reaper.cancel()
        self._reaper = loop.call_later(self.idle_timeout, self._reap)

    def _reap(self) -> None:
        """Stop workers that have had nothing to do for `idle_timeout`."""
        now = asyncio.get_running_loop().time()
        for worker in list(self._idle):
            if now - worker.idle_since >= self.idle_timeout - 0.01:
                self._kill(worker)

    def _kill(self, worker: _Worker) -> None:
        if worker not in self._live:
            return  # killed already (a late parse's worker, when the pool closed)
        self._live.discard(worker)
        if worker.ready is not None and not worker.ready.done():
            worker.ready.cancel()
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        if worker.alive:
            with contextlib.suppress(ProcessLookupError):
                worker.proc.kill()
        task = asyncio.ensure_future(worker.proc.wait())
        self._exits.add(task)
        task.add_done_callback(self._exits.discard)


async def _within_cpu(
    worker: _Worker, ask: asyncio.Future[dict[str, Any]], cpu_timeout: float | None
) -> dict[str, Any]:
    """The worker's answer, or ParseOverrunError once it has had `cpu_timeout` seconds of CPU
    since it was handed the request. Looked at when that much wall time has passed since the
    last look (CPU time never runs faster than the clock), so a quick parse costs no look."""
    if cpu_timeout is None:
        return await asyncio.shield(ask)
    left = cpu_timeout
    while True:
        done, _ = await asyncio.wait({ask}, timeout=max(left, _MIN_LOOK))
        if done:
            return ask.result()
        if not worker.busy:
            continue  # still starting: its parse has not begun
        now = worker.cpu_seconds()
        if worker.cpu_at_hand is None or now is None:
            return await asyncio.shield(ask)  # no CPU clock: the caller's deadline alone
        left = cpu_timeout - (now - worker.cpu_at_hand)
        if left <= 0:
            raise ParseOverrunError(
                f"parsing used its {cpu_timeout:.2f} s of CPU time and was given up"
            )


_MIN_LOOK = 0.02  # seconds between looks at a parser's CPU time, at least (a clock tick: 0.01)

# Most pages go to their parser in one write: the default pipe holds 64 KB, so a larger page
# took several, each waiting for the parser to read the one before (with the event loop's
# callbacks between them). Not more: past `pipe-user-pages-soft` (64 MB by default) in all,
# every new pipe of the user's processes would get a tiny buffer.
_PIPE_BYTES = 256 << 10


def _widen_pipe(stream: asyncio.StreamWriter | None) -> None:
    pipe = stream.transport.get_extra_info("pipe") if stream is not None else None
    if pipe is None or not hasattr(fcntl, "F_SETPIPE_SZ"):
        return
    with contextlib.suppress(OSError):  # a lower limit set by the machine: the default stays
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)

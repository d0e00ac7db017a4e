"""How long a model is waited for, and how many requests it is sent at once.

Local servers answer one request at a time, so at most `[llm] concurrency` requests are in
flight (`Gate`); the others wait in line, and a request's time limits start when it is sent (a
request timed out for the time it queued behind others is what made a llama.cpp server give no
summary at all). Replies are streamed: no token within the first-token allowance (the prompt's
reading time at the server's measured speed, and `[llm] first_token_timeout` more) means the
server is not answering; tokens that keep coming are a slow server, given the writing allowance
(at least `[llm] timeout`) in all. Speeds are measured from each reply (`Speeds`), so that a CPU
server reading a long prompt is waited for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from digest.config import LLMConfig
from digest.errors import SummarizeError
from digest.summarize.request import Choice, ContextExceeded, Message, Streamed, Usage

# Speeds assumed before the first reply of a server was measured: a 7B model on a laptop CPU.
PRIOR_PROMPT_SPEED = 25.0  # tokens read per second
PRIOR_WRITE_SPEED = 3.0  # tokens written per second
MIN_MEASURED_PROMPT = 150  # a shorter prompt's time to first token is mostly fixed costs


@dataclass
class Speeds:
    """How fast a server reads a prompt and writes a reply, from its recent replies (the slowest
    of the last few: the machine it runs on may be busy)."""

    prompt: list[float] = field(default_factory=list)
    write: list[float] = field(default_factory=list)

    KEEP = 5

    def record(
        self, prompt_tokens: int, completion_tokens: int, first_token: float, total: float
    ) -> None:
        if prompt_tokens >= MIN_MEASURED_PROMPT and first_token > 0:
            self.prompt = [*self.prompt, prompt_tokens / first_token][-self.KEEP :]
        writing = total - first_token
        if completion_tokens >= 20 and writing > 0:
            self.write = [*self.write, completion_tokens / writing][-self.KEEP :]

    @property
    def prompt_speed(self) -> float | None:
        return min(self.prompt) if self.prompt else None

    @property
    def write_speed(self) -> float | None:
        return min(self.write) if self.write else None

    def first_token_allowance(self, prompt_tokens: int, silence: float) -> float:
        """Seconds a request of `prompt_tokens` may take to its first token: the time to read the
        prompt at the slowest measured speed (or the prior), half again, plus `silence`."""
        speed = self.prompt_speed or PRIOR_PROMPT_SPEED
        return silence + 1.5 * prompt_tokens / speed

    def writing_allowance(self, max_tokens: int, least: float) -> float:
        """Seconds for writing up to `max_tokens` after the first, at least `least`."""
        speed = self.write_speed or PRIOR_WRITE_SPEED
        return max(least, 1.5 * max_tokens / speed)


# The chat completions sent for one piece of work (a `deepen` run, a queue's story task): the
# tasks it starts inherit its tally; other work on the same client, at the same time, has its own.
_work_calls: ContextVar[list[int] | None] = ContextVar("llm_work_calls", default=None)


@contextmanager
def counted_calls() -> Iterator[list[int]]:
    """`[n]`: the chat completions sent inside the block, by this task and the tasks it starts
    (probes, repairs and retries by the openai client aside)."""
    tally = [0]
    token = _work_calls.set(tally)
    try:
        yield tally
    finally:
        _work_calls.reset(token)


class Gate:
    """At most `concurrency` requests in flight; waiting here is not timed, and each request
    let through counts in the tally of the work that sent it (`counted_calls`)."""

    def __init__(self, concurrency: int) -> None:
        self._concurrency = concurrency
        self._semaphore: asyncio.Semaphore | None = None  # made on first use, inside the loop

    @asynccontextmanager
    async def sending(self) -> AsyncIterator[None]:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self._concurrency)
        async with self._semaphore:
            if (tally := _work_calls.get()) is not None:
                tally[0] += 1
            yield


# What a stream yields: text ("" for none, None for an event that adds none) and, once, the usage.
Pieces = AsyncIterator[tuple[str | None, Usage | None]]


@dataclass
class _Heard:
    """What a stream said so far."""

    parts: list[str] = field(default_factory=list)
    usage: Usage | None = None
    chunks: int = 0
    events: int = 0
    first_at: float | None = None


async def timed(
    pieces: Pieces,
    speeds: Speeds,
    config: LLMConfig,
    prompt_tokens: int,
    first_token: float,
    total: float,
) -> Streamed:
    """A streamed reply put together: SummarizeError when no token came within
    `first_token` seconds (counted from sending: the time the prompt needs at the server's
    measured speed, and `[llm] first_token_timeout` more) or the whole reply took over
    `total`; ContextExceeded when the server closed it without a word."""
    started = time.monotonic()
    heard = _Heard()
    try:
        async with asyncio.timeout(total) as whole:
            await _listen(pieces, heard, started + first_token)
    except TimeoutError:
        raise _too_slow(
            heard, speeds, config, started, whole.expired(), first_token, total
        ) from None
    finally:
        aclose = getattr(pieces, "aclose", None)
        if aclose is not None:
            await aclose()
    if heard.events == 0:
        raise ContextExceeded(
            "closed the reply without a word (llama-cpp-python's server does this when the "
            "prompt exceeds its context window)"
        )
    usage = heard.usage
    reported = usage is not None and bool(usage.prompt_tokens or usage.completion_tokens)
    finished = time.monotonic()
    if not reported or usage is None:
        # No usage sent (llama-cpp-python): the prompt as counted here, a token a chunk.
        usage = Usage(0, heard.chunks)
        measured = Usage(prompt_tokens, heard.chunks)
    else:
        measured = usage
    if heard.first_at is not None:
        speeds.record(
            measured.prompt_tokens,
            measured.completion_tokens,
            heard.first_at - started,
            finished - started,
        )
    return Streamed([Choice(Message("".join(heard.parts)))], usage, reported)


async def _listen(pieces: Pieces, heard: _Heard, first_by: float) -> None:
    """Read the stream into `heard`; TimeoutError when nothing came by `first_by`."""
    iterator = pieces.__aiter__()
    while True:
        try:
            if heard.first_at is None:
                left = first_by - time.monotonic()
                piece, said = await asyncio.wait_for(anext(iterator), max(left, 0.001))
            else:
                piece, said = await anext(iterator)
        except StopAsyncIteration:
            return
        heard.events += 1
        if heard.first_at is None:  # any event, even a role alone: the model is writing
            heard.first_at = time.monotonic()
        if said is not None:
            heard.usage = said
        if piece:
            heard.parts.append(piece)
            heard.chunks += 1


def _too_slow(
    heard: _Heard,
    speeds: Speeds,
    config: LLMConfig,
    started: float,
    expired: bool,
    first_token: float,
    total: float,
) -> SummarizeError:
    """The one line for a reply that did not come in time: none at all, no first token, or
    still being written."""
    waited = time.monotonic() - started
    if heard.first_at is None and expired:
        return SummarizeError(f"LLM at {config.base_url} did not answer within {total:.0f} s")
    if heard.first_at is None:
        speed = speeds.prompt_speed
        reading = (
            f"at the {speed:.0f} tokens/s it was measured reading"
            if speed
            else f"at an assumed {PRIOR_PROMPT_SPEED:g} tokens/s"
        )
        return SummarizeError(
            f"LLM at {config.base_url} sent no token within {first_token:.0f} s of the "
            f"request (the prompt's reading time {reading}, and [llm] "
            f"first_token_timeout {config.first_token_timeout:g} s more): it is not "
            "answering"
        )
    # What it wrote so far measures its pace: the next request is given that.
    speeds.record(0, heard.chunks, heard.first_at - started, time.monotonic() - started)
    return SummarizeError(
        f"LLM at {config.base_url} was still writing after {waited:.0f} s "
        f"({heard.chunks} tokens; its measured writing speed and [llm] timeout "
        f"{config.timeout:g} s allowed {total:.0f} s): a slow server"
    )

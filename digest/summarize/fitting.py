"""A request made to fit the model's context window, with room for its reply.

Counted in tokens, not characters (an outlet's text in Hangul takes several times the tokens of
one in English): its sources are cut shorter first, leaving room for a repair request too while
they keep `TEXT_FLOOR` tokens; then without that room; then with a reply down to `REPLY_FLOOR`
of what was asked and the sources down to their headlines if need be.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Generic, TypeVar

from digest.errors import SummarizeError
from digest.summarize import window
from digest.summarize.request import JSONRequest, Sized
from digest.summarize.window import ServerFacts

# A small window may leave a reply less room than asked, down to this share of it.
REPLY_FLOOR = 0.7
# The tokens of text a request's sources keep, in all, before room to ask once more after an
# unusable reply is given up (about an English lede from each of three outlets).
TEXT_FLOOR = 150

T = TypeVar("T")
# The prompt's tokens, and whether the server's tokenizer counted them.
Counter = Callable[[list[dict[str, str]]], Awaitable[tuple[int, bool]]]


class _Cutting(Generic[T]):
    """A request cut shorter step by step, counted after each cut."""

    def __init__(self, request: JSONRequest[T], count: Counter, tokens: int, exact: bool) -> None:
        self.request = request
        self.tokens = tokens
        self.exact = exact
        self._count = count
        self._fixed: int | None = None  # the tokens of everything but the sources' texts

    async def shrink(self, target: int, floor: int) -> bool:
        """Cut the sources until the request takes `target` tokens at most, its texts
        keeping `floor` tokens (or what they have, if less): whether it fits."""
        for _ in range(6):
            if self.tokens <= target:
                return True
            request = self.request
            if request.resize is None or target <= 0:
                return False
            if self._fixed is None:
                self._fixed = (await self._count(request.resize(0).messages))[0]
            texts = max(1, self.tokens - self._fixed)
            # The texts' share shrinks; the instructions and headlines stay.
            share = max(target - self._fixed, min(floor, texts)) / texts
            chars = max(0, int(request.chars * min(share, 1.0) * 0.95))
            smaller = request.resize(chars)
            if smaller.chars >= request.chars:
                return False  # cut as far as the floor allows
            self.request = smaller
            self.tokens, self.exact = await self._count(smaller.messages)
        return self.tokens <= target

    def sized(self) -> Sized[T]:
        return Sized(self.request, self.tokens, self.exact)


async def fit(
    request: JSONRequest[T],
    facts: ServerFacts,
    count: Counter,
    model: str,
    *,
    below: int | None = None,
) -> Sized[T]:
    """The request cut to fit the window with room for its reply (and, after the server
    refused it, to under `below` tokens as well); SummarizeError when it cannot be made to."""
    asked = request.reply_tokens

    def room(reply: int, repair: int) -> int:
        limit = facts.window - reply - window.MARGIN - repair
        return limit if below is None else min(limit, int(below * 0.8))

    cutting = _Cutting(request, count, *await count(request.messages))
    if await cutting.shrink(room(asked, window.REPAIR_ROOM), TEXT_FLOOR):
        return cutting.sized()
    if await cutting.shrink(room(asked, 0), TEXT_FLOOR):
        return cutting.sized()  # no room to ask again after a bad reply
    least = int(asked * REPLY_FLOOR)
    if await cutting.shrink(room(least, 0), 0):
        tokens = cutting.tokens
        reply = min(asked, facts.window - window.MARGIN - tokens)
        return Sized(replace(cutting.request, max_tokens=reply), tokens, cutting.exact)
    raise SummarizeError(
        f"the request does not fit the model's context window: about {cutting.tokens} tokens, "
        f"and {model} reads {facts.window} ({facts.window_source}) with "
        f"{least} at least kept for its reply"
    )

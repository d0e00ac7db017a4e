"""How much of an LLM server's reply is read: no more than the reply asked for could take.

A server that ignores `max_tokens` (a bug, or a hostile one) can answer without end: read whole,
a 50 MB reply cost some 600 MB of memory and a minute before the summary was given up. So every
response of the server is read up to a cap and no further (`ReplyTooLong`): a chat completion's
is `BYTES_PER_TOKEN` × its `max_tokens` + `SLACK`, set around the request with `replying`;
anything else (the window probes, the models list, a tokenizer's count) `PROBE_BYTES`.

`BYTES_PER_TOKEN` is 1 KiB: a streamed token comes as one server-sent event of 150 to 450 bytes
(llama.cpp's, with its id, model, fingerprint and timings; vLLM's and OpenAI's about 200), a
token's text JSON-escaped is a few dozen bytes at most, and a reply read whole spends less per
token than a stream. `SLACK` (256 KiB) is the fixed part: the usage event and [DONE], a whole
reply's envelope, the keep-alive comments some proxies send while a long prompt is read. So a
story's reply (700 tokens) is cut at 956 KiB, `llm check`'s (64) at 320 KiB: two or more times
what a server keeping to `max_tokens` sends, and a fiftieth of the 50 MB reply.

Compressed replies are not asked for (`Accept-Encoding: identity`), and one that comes compressed
all the same is refused: the bytes read would not bound the bytes decoded. The cap is applied by
httpx event hooks (`EVENT_HOOKS`), so it holds through a proxy from the environment too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx

BYTES_PER_TOKEN = 1024
SLACK = 256 * 1024
# The largest answer a probe gets is a hosted API's models list (OpenRouter's: about 1 MB).
PROBE_BYTES = 16 * 1024 * 1024

# The cap for the response to a request sent in this context, and the reply's max_tokens.
_cap: ContextVar[tuple[int, int] | None] = ContextVar("reply_cap", default=None)


class ReplyTooLong(httpx.HTTPError):
    """A reply longer than its cap, or compressed though asked not to be: not read further.
    The message says what was sent, to follow "LLM at ... sent". Not an httpx.RequestError, so
    that the openai client does not send the request again for another such reply."""


def cap_for(max_tokens: int) -> int:
    """The most bytes read of a reply of up to `max_tokens` tokens."""
    return BYTES_PER_TOKEN * max(0, max_tokens) + SLACK


@contextmanager
def replying(max_tokens: int) -> Iterator[int]:
    """Within the block, a response is read up to `cap_for(max_tokens)` bytes (yielded)."""
    cap = cap_for(max_tokens)
    token = _cap.set((cap, max_tokens))
    try:
        yield cap
    finally:
        _cap.reset(token)


def _kib(n: int) -> str:
    return f"{n // 1024:,} KiB"


async def _ask_uncompressed(request: httpx.Request) -> None:
    request.headers["Accept-Encoding"] = "identity"


async def _capped(response: httpx.Response) -> None:
    """Refuse a compressed or announced-too-long reply; read any other up to its cap."""
    cap, max_tokens = _cap.get() or (PROBE_BYTES, 0)
    asked = f", far more than {max_tokens} tokens take" if max_tokens else ""
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        named = "".join(c for c in encoding[:20] if c.isascii() and (c.isalnum() or c in ", -"))
        raise ReplyTooLong(f"a reply compressed ({named}) though asked not to be: not read")
    length = response.headers.get("Content-Length", "")
    if length.isascii() and length.isdigit() and (len(length) > 15 or int(length) > cap):
        raise ReplyTooLong(f"a reply of {length[:20]} bytes, over {_kib(cap)}{asked}: not read")
    response.stream = _CappedStream(response.stream, cap, asked)


class _CappedStream(httpx.AsyncByteStream):
    """A response body that ends in ReplyTooLong past `cap` bytes."""

    def __init__(self, stream: Any, cap: int, asked: str) -> None:
        self._stream = stream
        self._cap = cap
        self._asked = asked

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._stream:
            read += len(chunk)
            if read > self._cap:
                raise ReplyTooLong(
                    f"a reply past {_kib(self._cap)}{self._asked}: stopped reading it"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


# For `httpx.AsyncClient(event_hooks=...)`: every request asks for the reply uncompressed, and
# every response is read up to its cap.
EVENT_HOOKS: dict[str, list[Any]] = {"request": [_ask_uncompressed], "response": [_capped]}

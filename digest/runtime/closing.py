"""`async with` for the service's clients: entered as they are, closed by `aclose()` on the way
out, whether the block ended well or not (an LLM client, the SMTP transport, an embeddings
endpoint)."""

from __future__ import annotations

from typing import Self


class AsyncClosing:
    """Base of a client that needs no start and releases its connections in `aclose()`."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

"""The one place that builds the service from configuration and hands the parts down.

Modules never read the environment or reach for globals: they get what they need from `App`.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Self

from digest.config import Config
from digest.fetch.client import HttpClient
from digest.fetch.fast import FastExtractor
from digest.sources.ddg import DuckDuckGo
from digest.store.engine import open_store
from digest.store.repo import Store


class App:
    """The service's parts for one process: store, HTTP client, sources and the fast extractor.

    Use as `async with App(config) as app:`; everything opened is closed on every path.
    The store is opened (and migrated) only when first asked for, so `query` and `extract`
    work without a database.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._stack = AsyncExitStack()
        self._store: Store | None = None
        self._store_lock = asyncio.Lock()
        self.http: HttpClient
        self.extractor: FastExtractor
        self.ddg: DuckDuckGo

    async def __aenter__(self) -> Self:
        self.http = await self._stack.enter_async_context(HttpClient(self.config.fetch))
        self.extractor = FastExtractor(self.http, self.config.fetch)
        self.ddg = DuckDuckGo(self.config.sources)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self._stack.aclose()
        finally:
            if self._store is not None:
                await asyncio.to_thread(self._store.close)

    async def store(self) -> Store:
        """The database, opened and upgraded on first use (in a thread: it is blocking I/O)."""
        async with self._store_lock:
            if self._store is None:
                self._store = await asyncio.to_thread(open_store, self.config.database_url())
            return self._store

"""The one place that builds the service from configuration and hands the parts down.

Modules never read the environment or reach for globals: they get what they need from `App`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Self

from digest.config import Config
from digest.errors import NoDatabaseError, TokenError
from digest.runtime.subprocesses import usable_cores
from digest.sources.ddg import DuckDuckGo

if TYPE_CHECKING:
    from digest.crawl import Crawler
    from digest.deliver.push_types import Channels
    from digest.deliver.transport import Transport
    from digest.fetch.client import HttpClient
    from digest.fetch.fast import FastExtractor
    from digest.fetch.parsers import ParserPool
    from digest.jobs.units import Runner
    from digest.queue import Queue
    from digest.store import Store
    from digest.store.face import StoreFace
    from digest.stories.embeddings import Embedder
    from digest.summarize import Summarizer
    from digest.summarize.translate import Translator


class App:
    """The service's parts for one process: store, sources, HTTP client, fast extractor,
    crawler, summarizer and embedder, each but the sources made on first use: a command that
    only reads the store starts without the network's code (aiohttp).

    Use as `async with App(config) as app:`; everything opened is closed on every path.
    The store is opened (and migrated) only when first asked for, so `query` and `extract`
    work without a database.
    """

    def __init__(self, config: Config, *, environ: Mapping[str, str] | None = None) -> None:
        self.config = config
        self._environ = os.environ if environ is None else environ
        self._crawler: Crawler | None = None
        self._crawler_lock = asyncio.Lock()
        self._summarizer: Summarizer | None = None
        self._embedder: Embedder | None = None
        self._llm_slots: asyncio.Semaphore | None = None  # translation calls in flight
        self._queue: Queue | None = None
        self._queue_lock = asyncio.Lock()
        self._runner: Runner | None = None
        # Set in `digest worker`: this process runs the tasks, so its jobs must not enqueue more.
        self.is_worker = False
        self._stack = AsyncExitStack()
        self._face: StoreFace | None = None
        self._store_lock = asyncio.Lock()
        self._http: HttpClient | None = None
        self._extractor: FastExtractor | None = None
        self._feed_parsers: ParserPool | None = None
        self.ddg: DuckDuckGo

    async def __aenter__(self) -> Self:
        self.ddg = DuckDuckGo(self.config.sources)
        return self

    @property
    def http(self) -> HttpClient:
        """The HTTP client, opened on first use (from a coroutine) and closed with the app."""
        if self._http is None:
            from digest.fetch.client import HttpClient

            self._http = HttpClient(self.config.fetch).start()
            self._stack.push_async_callback(self._http.close)
        return self._http

    @property
    def extractor(self) -> FastExtractor:
        """The fast extractor and its parsers, made on first use (closed before the client)."""
        if self._extractor is None:
            from digest.fetch.fast import FastExtractor
            from digest.fetch.parsers import ParserPool

            http = self.http
            # Two parsers per core, and four at least: a parse is judged by the CPU time it had,
            # so a page that keeps a parser busy until its deadline (three hostile links in one
            # feed) no longer leaves the normal pages waiting for one. Only a core's worth start
            # at once. (When wall time judged parses, 4 per worker on 2 cores cost 4 workers 25%
            # more CPU per page than 2 did, bench/scale.py; not measured again since this change.)
            parsers = ParserPool(size=max(4, 2 * usable_cores()), preload=("lede",))
            self._stack.push_async_callback(parsers.close)
            self._extractor = FastExtractor(http, self.config.fetch, parsers)
        return self._extractor

    @property
    def feed_parsers(self) -> ParserPool:
        """Feeds have a pool of their own: a burst of feed documents never holds up a lede,
        whose page has a 1.5 s budget; and a feed off this process leaves its core free."""
        if self._feed_parsers is None:
            from digest.fetch.parsers import ParserPool

            self._feed_parsers = ParserPool(size=2, preload=("feed",))
            self._stack.push_async_callback(self._feed_parsers.close)
        return self._feed_parsers

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self._stack.aclose()
        finally:
            if self._face is not None:
                await self._face.close()

    def bearer_token(self, variable: str, *, setting: str) -> str | None:
        """The token a server's clients must bear, from the environment variable `variable`
        that `[serve] setting` names; None when it names none. Read once, as the server is
        built; raises TokenError (the server does not start) when it is unset or unusable."""
        if not variable:
            return None
        return usable_token(self._environ.get(variable), variable=variable, setting=setting)

    async def crawler(self) -> Crawler:
        """The deep crawler (and its browser), started on first use and closed with the app."""
        async with self._crawler_lock:  # a deepen's stories ask at once: one crawler, one browser
            if self._crawler is None:
                from digest.crawl import Crawler

                self._crawler = await self._stack.enter_async_context(
                    Crawler(self.config.crawl, self.config.fetch, self.http, work_dir=self.work_dir)
                )
        return self._crawler

    async def summarizer(self) -> Summarizer:
        """LLM summaries when `[llm]` is configured, extractive ones otherwise."""
        if self._summarizer is None:
            from digest.summarize import Summarizer

            llm = self.config.llm
            key = self._environ.get(llm.api_key_env) if llm else None
            self._summarizer = await self._stack.enter_async_context(Summarizer(llm, api_key=key))
        return self._summarizer

    async def embedder(self) -> Embedder | None:
        """Article vectors when `[stories.embeddings]` is configured; None: words alone."""
        embeddings = self.config.stories.embeddings
        if embeddings is None:
            return None
        if self._embedder is None:
            from digest.stories.embeddings import Embedder

            key = self._environ.get(embeddings.api_key_env)
            self._embedder = await self._stack.enter_async_context(
                Embedder(embeddings, api_key=key)
            )
        return self._embedder

    def transport(self) -> Transport:
        """Where emails go: .eml files in the outbox folder (default) or an SMTP server."""
        email = self.config.email
        if email.transport == "smtp":
            from digest.deliver.transport import SmtpTransport

            password = self._environ.get(email.password_env) if email.password_env else None
            return SmtpTransport(email, password)
        from digest.deliver.transport import OutboxTransport

        return OutboxTransport(self.config.resolve(email.outbox_dir))

    def channels(self) -> Channels:
        """Where every message goes: emails to `transport()`, the compact digests of
        subscribers' other channels through their push type's transport (Apprise's; their
        URLs' `{env:NAME}` placeholders resolved from this process's environment). Close it
        with `aclose()`."""
        from digest.deliver.push_types import Channels

        return Channels.of_types(self.transport(), self._environ, self.config.channels)

    async def translator(self) -> Translator:
        """Stories into subscribers' languages for one sending run: by the LLM when `[llm]` is
        configured (through the summarizer's client, each text once per language, kept in the
        store; its stats are the run's), else as written and marked with their language
        (`digest.summarize.translate`). Every run's LLM calls share one bound."""
        from digest.summarize.translate import Untranslated

        llm = (await self.summarizer()).llm
        if llm is None:
            return Untranslated()
        from digest.summarize.translator import LLMTranslator

        if self._llm_slots is None:
            self._llm_slots = asyncio.Semaphore(self.llm_concurrency)
        return LLMTranslator(llm, await self.face(), slots=self._llm_slots)

    @property
    def llm_concurrency(self) -> int:
        """LLM requests in flight at once: `[llm] concurrency` where the configuration has it,
        else one (a local server answers one at a time; one waiting in its queue times out)."""
        return max(1, int(getattr(self.config.llm, "concurrency", 1) or 1))

    @property
    def work_dir(self) -> Path:
        """Scratch space beside the config (the browser's profile and caches)."""
        return self.config.resolve(".digest")

    async def queue(self) -> Queue | None:
        """The task queue when `[queue] enabled` (opened on first use); None: work in-process
        (also inside a worker, which runs the tasks it is given)."""
        if not self.config.queue.enabled or self.is_worker:
            return None
        async with self._queue_lock:
            if self._queue is None:
                from digest.queue import Queue

                self._queue = await self._stack.enter_async_context(Queue(self.config))
            return self._queue

    async def runner(self) -> Runner:
        """What runs the jobs' units: the task queue's workers when `[queue] enabled` (and this
        process is not a worker, which runs the units it is given), else this process."""
        if self._runner is None:
            queue = await self.queue()
            if queue is None:
                from digest.jobs.units import InProcess

                self._runner = InProcess(self)
            else:
                from digest.queue import QueueRunner

                self._runner = QueueRunner(queue)
        return self._runner

    async def face(self, *, create: bool = True) -> StoreFace:
        """The database, opened and upgraded on first use, through its async face
        (`digest.store.face`): the store's methods, awaited, each run in a thread.

        `create=False` is for what only reads: where the configured database does not exist,
        NoDatabaseError says where it was looked for and how to make one, and none is made."""
        async with self._store_lock:
            if self._face is None:
                from digest.store.face import StoreFace  # SQLAlchemy: none for `extract`

                url = self.config.database_url()
                try:
                    self._face = await StoreFace.open(url, create=create)
                except NoDatabaseError as err:
                    raise NoDatabaseError(f"{err} {how_to_start(self.config)}") from None
            return self._face

    async def store(self, *, create: bool = True) -> Store:
        """The store itself (`face().sync`), for code that runs in a thread already."""
        return (await self.face(create=create)).sync


def usable_token(value: str | None, *, variable: str, setting: str) -> str:
    """`value` as a bearer token, whitespace around it dropped: a secrets file's last newline is
    no part of it, and no client could send it (HTTP trims a header's value). Unset, empty, or
    holding what no request's token can match (a control character, a letter that is not
    ASCII) is a TokenError: else every request would get 401, or none would need a token."""
    named = f"[serve] {setting} names the environment variable {variable}"
    if value is None:
        raise TokenError(
            f"{named}, which is not set: set it to the token, or remove {setting} from the config"
        )
    token = value.strip()
    if not token:
        raise TokenError(
            f"{named}, which is empty: set it to the token, or remove {setting} from the config"
        )
    if not all(" " <= c <= "~" for c in token):
        raise TokenError(
            f"{named}, whose token holds a control character or a letter that is not ASCII, "
            "which no Authorization header can match: use letters, digits and -._~+/= "
            "(openssl rand -hex 32 makes one)"
        )
    return token


def how_to_start(config: Config) -> str:
    """Where a missing database was looked for and what to do: the usual cause is a command run
    outside the folder of the deployment's digest.toml, which then takes the defaults."""
    if config.path is None:
        return (
            "(no digest.toml here: the defaults): run digest in the folder of your digest.toml "
            "or give --config; to start one here, `digest init` then `digest collect`"
        )
    return (
        f"(database.url of {config.path}): `digest collect` starts it, `digest db upgrade` "
        "makes it empty"
    )

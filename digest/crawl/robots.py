"""robots.txt, honoured per host with protego, fetched through the guarded HTTP client.

Each origin's robots.txt is fetched once (concurrent pages of one host share the fetch) and
cached for `ttl` seconds. What its absence means follows common crawler practice: a 4xx (no
file) or an unreachable server (5xx, timeout, refused connection) allows everything, while
401/403 forbid everything (the site is asking not to be read). Unreachable answers are cached
for a shorter time so a flapping server is retried soon.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
from protego import Protego
from yarl import URL

from digest.errors import FetchError
from digest.fetch.client import HttpClient

log = logging.getLogger(__name__)

MAX_ROBOTS_BYTES = 512 * 1024  # Google reads the first 500 KiB and ignores the rest
DEFAULT_TTL = 3600.0
UNREACHABLE_TTL = 300.0


@dataclass(frozen=True, slots=True)
class _Rules:
    parser: Protego | None  # None: no rules apply
    deny_all: bool
    expires: float
    note: str  # why, for logs and error messages


class RobotsRules:
    """`await robots.disallowed(url)` → None when allowed, else a reason fit for `Page.error`."""

    def __init__(
        self,
        http: HttpClient,
        user_agent: str,
        *,
        ttl: float = DEFAULT_TTL,
        timeout: float = 10.0,
        max_hosts: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.http = http
        self.user_agent = user_agent
        self.ttl = ttl
        self.timeout = timeout
        self.max_hosts = max_hosts
        self._clock = clock
        self._cache: OrderedDict[str, _Rules] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def allowed(self, url: str) -> bool:
        return await self.disallowed(url) is None

    async def disallowed(self, url: str) -> str | None:
        rules = await self._rules_for(_origin(url))
        if rules.deny_all:
            return f"robots.txt forbids all crawling ({rules.note})"
        if rules.parser is not None and not rules.parser.can_fetch(url, self.user_agent):
            return "disallowed by robots.txt"
        return None

    async def _rules_for(self, origin: str) -> _Rules:
        now = self._clock()
        cached = self._cache.get(origin)
        if cached is not None and cached.expires > now:
            self._cache.move_to_end(origin)
            return cached
        lock = self._locks.setdefault(origin, asyncio.Lock())
        try:
            async with lock:  # concurrent pages of one host share a single fetch
                cached = self._cache.get(origin)
                if cached is not None and cached.expires > self._clock():
                    return cached
                rules = await self._fetch(origin)
                self._cache[origin] = rules
        finally:
            if self._locks.get(origin) is lock and not lock.locked():
                del self._locks[origin]
        while len(self._cache) > self.max_hosts:
            self._cache.popitem(last=False)
        return rules

    async def _fetch(self, origin: str) -> _Rules:
        url = origin + "/robots.txt"
        now = self._clock()
        try:
            async with self.http.open(
                url,
                max_bytes=MAX_ROBOTS_BYTES,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            ) as stream:
                status = stream.status
                body = await stream.read() if 200 <= status < 300 else b""
        except FetchError as err:
            log.info("robots.txt unreachable, allowing: %s (%s)", url, err)
            return _Rules(None, False, now + min(self.ttl, UNREACHABLE_TTL), "unreachable")
        if status in (401, 403):
            return _Rules(None, True, now + self.ttl, f"robots.txt answers HTTP {status}")
        if 200 <= status < 300:
            try:
                parser = Protego.parse(body.decode("utf-8", "replace"))
            except Exception as err:  # protego is lenient, but a parser must not sink a crawl
                log.info("unparseable robots.txt at %s, allowing: %s", url, err)
                parser = None
            return _Rules(parser, False, now + self.ttl, "robots.txt")
        if status >= 500:
            return _Rules(None, False, now + min(self.ttl, UNREACHABLE_TTL), f"HTTP {status}")
        return _Rules(None, False, now + self.ttl, f"no robots.txt (HTTP {status})")


def _origin(url: str) -> str:
    parsed = URL(url)
    return str(parsed.origin())

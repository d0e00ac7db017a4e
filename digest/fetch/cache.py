"""In-memory caches for the fetch layer, with expiry.

`TTLCache` is a bounded LRU whose entries also expire; `FailureCache` remembers failed URLs for a
while (so one timeout is retried later, not blacklisted forever) and counts recent failures per
host so a host that keeps failing is skipped as a whole until it cools down. Both take a `clock`
(seconds, monotonic) so tests can move time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import cachetools
from yarl import URL

K = TypeVar("K")
V = TypeVar("V")
Clock = Callable[[], float]


class TTLCache(Generic[K, V]):
    """At most `maxsize` entries; the least recently used goes first; entries expire after `ttl`.

    cachetools' TTLCache, behind the get/put/pop the fetch layer uses (it returns None for a
    missing or expired key instead of raising).
    """

    def __init__(self, maxsize: int, ttl: float, *, clock: Clock = time.monotonic) -> None:
        if maxsize <= 0 or ttl <= 0:
            raise ValueError("maxsize and ttl must be positive")
        self.maxsize = maxsize
        self.ttl = ttl
        self._data: cachetools.TTLCache[K, V] = cachetools.TTLCache(maxsize, ttl, timer=clock)

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def put(self, key: K, value: V) -> None:
        self._data[key] = value

    def pop(self, key: K) -> V | None:
        return self._data.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        self._data.expire()
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a URL was skipped: the earlier failure, and when it may be tried again."""

    url: str
    reason: str
    retry_at: float
    host_wide: bool = False  # the whole host is cooling down, not only this URL


class FailureCache:
    """Recent failures per URL (each expires after `ttl`) and per host.

    A URL that failed is skipped until its entry expires. A host with `host_limit` failures inside
    one `ttl` window is skipped entirely until the window passes; a success resets its count.
    """

    def __init__(
        self,
        ttl: float,
        *,
        host_limit: int = 3,
        maxsize: int = 4096,
        clock: Clock = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.host_limit = host_limit
        self._clock = clock
        self._urls: TTLCache[str, Failure] = TTLCache(maxsize, ttl, clock=clock)
        self._hosts: TTLCache[str, list[float]] = TTLCache(maxsize, ttl, clock=clock)

    def record_failure(self, url: str, reason: str, *, count_for_host: bool = True) -> None:
        """Remember a failure; `count_for_host=False` for page-specific ones (a 404)."""
        now = self._clock()
        self._urls.put(url, Failure(url, reason, now + self.ttl))
        if not count_for_host:
            return
        host = host_of(url)
        times = [t for t in self._hosts.get(host) or [] if now - t < self.ttl]
        self._hosts.put(host, [*times, now])

    def record_success(self, url: str) -> None:
        self._urls.pop(url)
        self._hosts.pop(host_of(url))

    def check(self, url: str) -> Failure | None:
        """The failure that makes `url` skippable now, or None when it may be fetched."""
        failure = self._urls.get(url)
        if failure is not None:
            return failure
        now = self._clock()
        times = [t for t in self._hosts.get(host_of(url)) or [] if now - t < self.ttl]
        if len(times) >= self.host_limit:
            return Failure(
                url,
                f"{len(times)} recent failures on {host_of(url)}",
                times[0] + self.ttl,
                host_wide=True,
            )
        return None

    def host_failures(self, url: str) -> int:
        """Failures on the URL's host inside the current window."""
        now = self._clock()
        return sum(1 for t in self._hosts.get(host_of(url)) or [] if now - t < self.ttl)


def host_of(url: str) -> str:
    """ "host:port" of a URL (the unit of politeness and of failure counting); "" if it has none."""
    try:
        parsed = URL(url)
        host = (parsed.host or "").lower()
        return f"{host}:{parsed.port}" if host else ""
    except (ValueError, TypeError):
        return ""

"""DuckDuckGo news and web search through `ddgs`, as async calls that return `Headline`s.

`ddgs` is synchronous, so every call runs in a worker thread awaited `ddg_timeout` seconds at
most (`digest.runtime.threads.bounded`): ddgs's own HTTP timeout bounds each request it makes,
not the whole call, which may try several engines. A thread cannot be killed: when the deadline
passes the call is abandoned, not stopped. It ends on its own once ddgs's own HTTP timeout (set
to the same `ddg_timeout`) fires, so abandoned threads do not pile up for long.

How ddgs 9 reports trouble (read from its source, checked here without a network):
- every engine error is caught and only the last one is re-raised, as
  `DDGSException(DDGSException("DNSError: ..."))` whose inner exception has the `primp` error as
  `__cause__` (`primp.DNSError`, `primp.ConnectError`, ...): no network surfaces in ~0.1 s;
- `TimeoutException` when the last engine error was a timeout;
- a refused request (HTTP 202/403/429, DuckDuckGo's way of throttling) is not an error to ddgs:
  the engine yields nothing and ddgs raises `DDGSException("No results found.")`, which we treat
  as an empty result because it is indistinguishable from a quiet news day;
- "Could not extract vqd" means DuckDuckGo answered without its search token, which is how it
  throttles; it is retried like `RatelimitException` (which ddgs 9.16 defines but never raises).
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from digest.config import SourcesConfig
from digest.errors import ConfigError, InvalidQueryError, NetworkUnreachableError, SourceError
from digest.models import Headline
from digest.runtime.threads import bounded

logger = logging.getLogger(__name__)

SAFESEARCH_VALUES = ("on", "moderate", "off")
_HOST_IN_MESSAGE = re.compile(r"url \((https?://[^/)\s?]+)")


class SearchBackend(Protocol):
    """The part of `ddgs.DDGS` this adapter uses; tests pass a fake with the same shape."""

    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...


class _Retryable(Exception):
    """One attempt failed in a way that may pass if tried again later."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DuckDuckGo:
    """News per category and web search, with retries and clear errors.

    `ddgs_factory` builds a fresh `DDGS`-like object per call (inside the worker thread);
    `sleep` is awaited between retries. Both exist so tests need neither a network nor a clock.
    """

    def __init__(
        self,
        config: SourcesConfig,
        *,
        ddgs_factory: Callable[[], SearchBackend] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        if config.safesearch.lower() not in SAFESEARCH_VALUES:
            allowed = ", ".join(SAFESEARCH_VALUES)
            raise ConfigError(
                f"sources.safesearch must be one of {allowed} (got {config.safesearch!r})"
            )
        self._config = config
        self._factory = ddgs_factory or self._default_factory
        self._sleep = sleep

    def _default_factory(self) -> SearchBackend:
        from ddgs import DDGS  # the real class loads every engine (and lxml) on first use

        return DDGS(timeout=self._config.ddg_timeout)  # type: ignore[arg-type]  # float works

    async def news(self, category: str, *, max_results: int | None = None) -> list[Headline]:
        """The past day's news for one category, in ddgs's ranking, at most `max_results`."""
        limit = self._config.results_per_category if max_results is None else max_results
        _check_limit("max_results", limit)
        query = self._config.query_for(category).strip()
        if not query:
            raise InvalidQueryError(f"the search query for category {category!r} is empty")
        rows = await self._call(
            f"news search for {category!r}",
            "news",
            query,
            region=self._config.region,
            safesearch=self._config.safesearch.lower(),
            timelimit="d",
            max_results=_ask_for(limit),
        )
        return _take(
            (_news_headline(row, category) for row in rows),
            limit,
        )

    async def search(self, query: str, *, k: int = 6) -> list[Headline]:
        """Web search results for `query`, at most `k` of them."""
        _check_limit("k", k)
        query = query.strip()
        if not query:
            raise InvalidQueryError("the search query is empty")
        rows = await self._call(
            f"web search for {_clip(query, 60)!r}",
            "text",
            query,
            region=self._config.region,
            safesearch=self._config.safesearch.lower(),
            max_results=_ask_for(k),
        )
        return _take((_text_headline(row) for row in rows), k)

    async def _call(self, search: str, method: str, query: str, **kwargs: Any) -> list[Any]:
        what = f"{search} ({ddgs_backends(method)})"
        cfg = self._config
        attempts = cfg.ddg_retries + 1
        reason = ""
        for attempt in range(attempts):
            if attempt:
                delay = cfg.ddg_backoff * 2 ** (attempt - 1) * random.uniform(1.0, 1.5)
                logger.warning("%s: %s; retrying in %.1f s", what, reason, delay)
                await self._sleep(delay)
            try:
                return await self._attempt(what, method, query, kwargs)
            except _Retryable as err:
                reason = err.reason
        raise SourceError(f"{what}: {reason} after {attempts} attempts")

    async def _attempt(
        self, what: str, method: str, query: str, kwargs: Mapping[str, Any]
    ) -> list[Any]:
        def run() -> list[Any]:
            return getattr(self._factory(), method)(query, **kwargs)

        timeout = self._config.ddg_timeout
        try:
            rows = await bounded(timeout, run)
        except TimeoutError:
            raise _Retryable(f"no answer within {timeout:g} s") from None
        except RatelimitException:
            raise _Retryable("rate limited") from None
        except TimeoutException:
            raise _Retryable("timed out") from None
        except DDGSException as err:
            message = _message(err)
            if message == "No results found.":
                logger.info("%s: no results", what)
                return []
            if "Could not extract vqd" in message:
                raise _Retryable("rate limited") from None
            if unreachable := _unreachable_reason(err):
                raise NetworkUnreachableError(f"{what} failed: {unreachable}") from err
            raise SourceError(f"{what} failed: {_clip(message, 200)}") from err
        return list(rows or [])


def ddgs_backends(method: str) -> str:
    """Who a search of ddgs goes to, as its failures name them: "ddgs: bing, duckduckgo,
    yahoo" for news in ddgs 9.16. ddgs's backend "auto" tries every engine of its registry
    for the kind of search (in random order, re-raising the last error), so the host in an
    error may be any of them: not DuckDuckGo's, as the name of this module would suggest."""
    from ddgs.engines import ENGINES  # importing it loads every engine (and lxml): when used

    engines = sorted(ENGINES.get(method, {}))
    return f"ddgs: {', '.join(engines)}" if engines else "ddgs"


def _check_limit(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer (got {value!r})")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ask_for(n: int) -> int:
    """How many results to request so that `n` remain after dropping duplicates and blanks."""
    return n + max(2, n // 2)


def _take(headlines: Iterable[Headline | None], limit: int) -> list[Headline]:
    out: list[Headline] = []
    seen: set[str] = set()
    for h in headlines:
        if h is None:
            continue
        key = _url_key(h.url)
        if key in seen:
            continue
        seen.add(key)
        out.append(h)
        if len(out) == limit:
            break
    return out


def _news_headline(row: Mapping[str, Any], category: str) -> Headline | None:
    title, url = _text(row.get("title")), _http_url(row.get("url"))
    if not title or not url:
        return None
    return Headline(
        title=title,
        url=url,
        source=_text(row.get("source")) or _host(url),
        published=parse_published(row.get("date")),
        snippet=_text(row.get("body")),
        image=_http_url(row.get("image")),
        category=category,
        origin="ddg:news",
    )


def _text_headline(row: Mapping[str, Any]) -> Headline | None:
    title, url = _text(row.get("title")), _http_url(row.get("href"))
    if not title or not url:
        return None
    return Headline(
        title=title,
        url=url,
        source=_host(url),
        snippet=_text(row.get("body")),
        origin="ddg:text",
    )


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _http_url(value: Any) -> str | None:
    """An absolute http(s) URL, or None. Protocol-relative image URLs get https."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if url.startswith("//"):
        url = "https:" + url
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return url


def _host(url: str) -> str:
    host = urlsplit(url).hostname or ""
    return host.removeprefix("www.")


def _url_key(url: str) -> str:
    """Same page, same key: scheme and host case, fragment and a trailing slash do not count."""
    p = urlsplit(url)
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), p.path.rstrip("/"), p.query, ""))


def parse_published(value: Any) -> datetime | None:
    """A result's date as an aware UTC datetime, or None when it cannot be read.

    ddgs hands over ISO 8601 (DuckDuckGo's epoch seconds, converted), but engines fall back to
    the raw text they scraped, so epoch numbers, RFC 2822 and "Z"-suffixed ISO are accepted too.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
        seconds = float(value)
        if seconds > 1e11:  # milliseconds
            seconds /= 1000
        if seconds < 1e8:  # before 1973: a year or a count, not a timestamp
            return None
        try:
            dt = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            try:
                dt = email.utils.parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                return None
    else:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def _message(err: BaseException) -> str:
    """ddgs nests its last engine error as the first argument; unwrap to the readable text."""
    inner: BaseException = err
    while inner.args and isinstance(inner.args[0], BaseException):
        inner = inner.args[0]
    text = str(inner.args[0]) if inner.args else str(inner)
    return " ".join(text.split())


def _causes(err: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    stack = [err]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack.extend(a for a in e.args if isinstance(a, BaseException))
        stack.extend(c for c in (e.__cause__, e.__context__) if c is not None)


def _unreachable_reason(err: DDGSException) -> str | None:
    """A one-line reason when the error chain says the network is missing, else None."""
    for e in _causes(err):
        name, text = type(e).__name__, str(e)
        if name == "DNSError" or text.startswith("DNSError:"):
            kind = "DNS lookup failed"
        elif name == "ConnectError" or text.startswith("ConnectError:"):
            kind = "connection failed"
        elif isinstance(e, ConnectionError):
            kind = f"connection failed ({e})"
        else:
            continue
        host = _HOST_IN_MESSAGE.search(text)
        where = f" for {urlsplit(host.group(1)).hostname}" if host else ""
        return f"{kind}{where} (is this machine offline?)"
    return None

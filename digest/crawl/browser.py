"""Chromium driven by crawl4ai: one browser per process, reused, closed on every path.

crawl4ai (and Playwright, litellm... behind it) is imported only when a browser is started: the
daemon idles small. Its environment is set first (no cloud banner, no litellm call home, its
working folder under a directory we choose).

All of the browser's traffic goes through `EgressProxy`, which applies the same SSRF policy as
the HTTP client to every connection Chromium makes (navigations, redirects, JavaScript
navigations, subresources, fetch/XHR, WebSockets); see `digest/crawl/egress.py`.

    async with Browser(config.crawl, policy=policy, user_agent=ua, work_dir=dir) as browser:
        rendered = await browser.render(url, timeout=20)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from digest.config import CrawlConfig
from digest.crawl.egress import GUARD_MARKER, Cut, EgressProxy
from digest.errors import BrowserUnavailableError
from digest.fetch.guard import AddressPolicy
from digest.runtime.threads import off_loop

if TYPE_CHECKING:  # Playwright comes with crawl4ai, imported when a browser starts
    from playwright.async_api import BrowserContext, Page

log = logging.getLogger(__name__)

# Chromium switches: quiet (no calls home, no component downloads), light (no GPU, no images:
# only text is read), and all traffic through the guard proxy, loopback included.
BASE_ARGS = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
    "--blink-settings=imagesEnabled=false",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy",
)
# After load: wait until no request is in flight and the DOM has not changed for SETTLE_QUIET_MS
# (at most SETTLE_NETWORK + SETTLE_DOM s, and a third of the page's time): late scripts that fetch
# and insert the article get their chance, bounded so that chatty pages cost little.
SETTLE_NETWORK = 3.0
SETTLE_DOM = 2.0
SETTLE_QUIET_MS = 300
CLOSE_TIMEOUT = 10.0
# Where `_track_requests` leaves a page's requests in flight for `_settle`: an attribute of the
# page object.
_INFLIGHT = "_digest_inflight"

_QUIET_DOM_JS = """
(args) => new Promise((resolve) => {
  let timer = null, cap = null, obs = null;
  const done = () => { if (obs) obs.disconnect(); clearTimeout(timer); clearTimeout(cap);
                       resolve(true); };
  try {
    obs = new MutationObserver(() => {
      clearTimeout(timer); timer = setTimeout(done, args.quiet);
    });
    obs.observe(document, {subtree: true, childList: true, characterData: true});
  } catch (e) { resolve(false); return; }
  timer = setTimeout(done, args.quiet);
  cap = setTimeout(done, args.max);
})
"""

# What the executable hook replaces, and where crawl4ai 0.9.5 calls it (BrowserManager._start_impl
# launches Chromium with `self._build_browser_args()`). tests/test_crawl_browser.py checks both.
HOOK_CLASS = "BrowserManager"
HOOK_METHOD = "_build_browser_args"
_hook_path: str | None = None


@dataclass(frozen=True, slots=True)
class Rendered:
    """What the browser made of one URL. `error` is set when it produced nothing usable."""

    url: str
    final_url: str
    html: str = ""
    status: int | None = None
    error: str | None = None
    elapsed: float = 0.0


# A system's Chromium or Chrome: these names on PATH, then these usual places.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
USUAL_PLACES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/snap/bin/chromium",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
)


def playwright_download() -> Path | None:
    """The folder of a Chromium that `playwright install chromium` downloaded, or None."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH", "")
    if root in ("", "0"):  # "0": in the package; unknown here, so Playwright is tried anyway
        cache = "Library/Caches" if sys.platform == "darwin" else ".cache"
        root = str(Path.home() / cache / "ms-playwright")
    found = sorted(Path(root).glob("chromium*-*")) if os.path.isdir(root) else []
    return found[-1] if found else None


def system_browser() -> str | None:
    """The system's Chromium or Chrome (PATH, then the usual places), or None."""
    for name in BROWSER_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return next((p for p in USUAL_PLACES if _executable(p)), None)


def browser_candidates(executable_path: str | None) -> list[tuple[str | None, str]]:
    """The browsers to try, in order, each (path, what it is); a path of None is Playwright's
    own download. `crawl.executable_path`, when set, is the one choice. Unset: Playwright's
    download when there is one, else the system's Chromium or Chrome; Playwright is tried
    last even when no download was seen (its folder may be elsewhere)."""
    if executable_path:
        return [(executable_path, "crawl.executable_path")]
    system = system_browser()
    own: list[tuple[str | None, str]] = [(None, "Playwright's Chromium")]
    theirs: list[tuple[str | None, str]] = [(system, "the system's browser")] if system else []
    return own + theirs if playwright_download() else theirs + own


def default_work_dir() -> Path:
    """crawl4ai's working folder when the caller gives none: per user, in the temp directory."""
    return Path(tempfile.gettempdir()) / f"digest-crawl4ai-{os.getuid()}"


def chromium_args(extra: Sequence[str] = (), *, proxy_url: str | None = None) -> list[str]:
    args = list(BASE_ARGS)
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run sandboxed as root
    if proxy_url:
        args += [f"--proxy-server={proxy_url}", "--proxy-bypass-list=<-loopback>"]
    args += list(extra)
    return list(dict.fromkeys(args))


def import_crawl4ai(work_dir: Path) -> ModuleType:
    """Import crawl4ai with its environment set first (some of it is read at import time)."""
    if "crawl4ai" not in sys.modules:
        work_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.environ["CRAWL4AI_NO_CLOUD_NOTICE"] = "1"
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ["CRAWL4_AI_BASE_DIRECTORY"] = str(work_dir)
    try:
        import crawl4ai
    except ImportError as err:
        raise BrowserUnavailableError(f"crawl4ai is not installed ({err})") from None
    return crawl4ai


def install_executable_hook(path: str | None) -> None:
    """Make crawl4ai launch the Chromium at `path` (crawl4ai 0.9.5 has no option for it).

    Wraps `BrowserManager._build_browser_args` to add Playwright's `executable_path`; with `path`
    None the wrapper adds nothing. Raises BrowserUnavailableError when the hook point is gone.
    """
    global _hook_path
    from crawl4ai import browser_manager

    cls = getattr(browser_manager, HOOK_CLASS, None)
    original = getattr(cls, HOOK_METHOD, None)
    if cls is None or not callable(original):
        raise BrowserUnavailableError(
            f"crawl4ai {_crawl4ai_version()} has no {HOOK_CLASS}.{HOOK_METHOD}: the hook that sets "
            "crawl.executable_path needs updating (digest pins crawl4ai==0.9.5)"
        )
    _hook_path = path
    if getattr(original, "_digest_hook", False):
        return

    def build_browser_args(self: Any) -> dict[str, Any]:
        args = original(self)
        if _hook_path:
            args = {**args, "executable_path": _hook_path}
        return args

    build_browser_args._digest_hook = True  # type: ignore[attr-defined]
    setattr(cls, HOOK_METHOD, build_browser_args)


def _crawl4ai_version() -> str:
    try:
        from crawl4ai.__version__ import __version__

        return str(__version__)
    except Exception:
        return "(unknown version)"


class Browser:
    """One Chromium (through crawl4ai) and its guard proxy; an async context manager."""

    def __init__(
        self,
        config: CrawlConfig,
        *,
        policy: AddressPolicy,
        user_agent: str,
        work_dir: Path | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.policy = policy
        self.user_agent = user_agent
        self.work_dir = work_dir or default_work_dir()
        self.extra_args = tuple(extra_args)
        self.proxy = EgressProxy(policy, max_body_bytes=config.max_page_bytes)
        self._crawler: Any = None
        self._c4: ModuleType | None = None
        self.executable: str | None = None  # the Chromium started; None: Playwright's own
        self.pids: frozenset[int] = frozenset()  # Chromium processes this browser started

    async def __aenter__(self) -> Browser:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch Chromium, the first of `browser_candidates` that starts (`executable`: its
        path, None for Playwright's own); BrowserUnavailableError, with each one's reason, when
        none does."""
        path = self.config.executable_path
        if path and not _executable(path):
            raise BrowserUnavailableError(f"browser executable not found: {path}")
        c4 = await off_loop(import_crawl4ai, self.work_dir)  # ~1 s of imports
        self._c4 = c4
        reasons = []
        for candidate, what in browser_candidates(path):
            try:
                await self._launch(c4, candidate)
            except BrowserUnavailableError as err:
                reasons.append(f"{what}: {err}" if not path else str(err))
                continue
            self.executable = candidate
            return
        raise BrowserUnavailableError("; ".join(reasons))

    async def _launch(self, c4: ModuleType, path: str | None) -> None:
        """Launch the Chromium at `path` (None: Playwright's own)."""
        install_executable_hook(path)
        before = set(chromium_processes())
        await self.proxy.start()
        browser_config = c4.BrowserConfig(
            browser_type="chromium",
            headless=True,
            verbose=False,
            user_agent=self.user_agent,
            java_script_enabled=True,
            extra_args=chromium_args(self.extra_args, proxy_url=self.proxy.url),
        )
        crawler = None
        try:
            crawler = c4.AsyncWebCrawler(config=browser_config, base_directory=str(self.work_dir))
            await crawler.start()
            crawler.crawler_strategy.set_hook("on_page_context_created", self._track_requests)
            crawler.crawler_strategy.set_hook("before_retrieve_html", self._settle)
        except BaseException as err:
            if crawler is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(crawler.close(), CLOSE_TIMEOUT)
            await self.proxy.close()
            _kill(set(chromium_processes()) - before)
            if isinstance(err, Exception):
                reason = _first_line(err)
                raise BrowserUnavailableError(f"browser did not start: {reason}") from None
            raise
        self._crawler = crawler
        self.pids = frozenset(set(chromium_processes()) - before)

    async def close(self) -> None:
        crawler, self._crawler = self._crawler, None
        tree = process_tree(sorted(self.pids))  # before closing: orphans lose their parent link
        try:
            if crawler is not None:
                try:
                    await asyncio.wait_for(crawler.close(), CLOSE_TIMEOUT)
                except Exception as err:
                    log.warning("closing the browser failed: %s", _first_line(err))
        finally:
            await self.proxy.close()
            # Whatever Playwright left behind (a crash, a close that timed out) goes too.
            names = _process_names()
            _kill({pid for pid in tree if pid in names and _is_chromium(names[pid][0])})

    @property
    def running(self) -> bool:
        return self._crawler is not None

    async def render(self, url: str, *, timeout: float) -> Rendered:  # noqa: ASYNC109
        """Load `url` in a fresh page and return its HTML after scripts ran; never raises for the
        page's own failures (they are in `Rendered.error`), only TimeoutError past `timeout`."""
        if self._crawler is None or self._c4 is None:
            raise RuntimeError("Browser is not started; use `async with Browser(...)`")
        c4 = self._c4
        started = time.monotonic()
        since = asyncio.get_running_loop().time()
        run = c4.CrawlerRunConfig(
            cache_mode=c4.CacheMode.DISABLED,
            wait_until="domcontentloaded",  # then `_settle`, bounded: "load" may never come
            page_timeout=int(max(timeout, 0.1) * 1000),
            check_robots_txt=False,  # done by us, with our user agent and cache
            verbose=False,
            log_console=False,
            max_retries=0,
            remove_consent_popups=False,
        )
        # The strategy's crawl, not `AsyncWebCrawler.arun`: only the rendered HTML is needed, and
        # arun's markdown generation and anti-bot heuristics cost CPU in the event loop.
        strategy = self._crawler.crawler_strategy
        cut = self.proxy.watch(url)
        crawl = asyncio.ensure_future(strategy.crawl(url, config=run))
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wait({crawl, cut}, return_when=asyncio.FIRST_COMPLETED)
                if not crawl.done():
                    # Cut at the cap: this render would be thrown away, so it stops now rather
                    # than leave Chromium parsing megabytes (it was still at it at the timeout).
                    await _cancel(crawl)
                    reason = _cut_reason(cut.result())
                    return Rendered(url, url, error=reason, elapsed=time.monotonic() - started)
                response = crawl.result()
        except TimeoutError:
            raise
        except Exception as err:  # navigation errors, a crashed page...
            failure = self._cut(url, url, since) or _first_line(err)
            return Rendered(url, url, error=failure, elapsed=time.monotonic() - started)
        finally:
            cut.cancel()
            await _cancel(crawl)
        elapsed = time.monotonic() - started
        final_url = response.redirected_url or url
        status = response.redirected_status_code or response.status_code
        html = response.html or ""
        error = self._cut(url, final_url, since)
        if GUARD_MARKER in html[:2000] and (refusal := self.proxy.refused(final_url)):
            # The guard proxy refused where the page (a redirect, its script) led the browser.
            error = f"blocked address: the page led the browser to {final_url} ({refusal.reason})"
        return Rendered(url, final_url, html, status, error, elapsed)

    def _cut(self, url: str, final_url: str, since: float) -> str | None:
        """Why the page's own body is incomplete, when the proxy cut it at the cap."""
        cut = self.proxy.cut_since(final_url, since) or self.proxy.cut_since(url, since)
        return None if cut is None else _cut_reason(cut)

    async def _track_requests(
        self, page: Page, context: BrowserContext | None = None, **_: object
    ) -> Page:
        """crawl4ai hook on a new page: count its requests in flight, for `_settle`."""
        inflight = _InFlight()
        page.on("request", inflight.add)
        page.on("requestfinished", inflight.discard)
        page.on("requestfailed", inflight.discard)
        setattr(page, _INFLIGHT, inflight)  # Playwright's Page has no slot of ours
        return page

    async def _settle(self, page: Page, context: BrowserContext | None = None, **_: object) -> Page:
        """crawl4ai hook before the HTML is read: give late scripts a bounded chance.

        Waits for the load event, then until no request is in flight and the DOM has not changed
        for SETTLE_QUIET_MS, repeating while quiet DOMs still have requests in flight.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(SETTLE_NETWORK + SETTLE_DOM, self.config.page_timeout / 3)
        inflight: _InFlight = getattr(page, _INFLIGHT, None) or _InFlight()
        with contextlib.suppress(Exception):
            left = deadline - loop.time()
            await page.wait_for_load_state("load", timeout=max(left, 0.001) * 1000)
        while loop.time() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(inflight.idle.wait(), deadline - loop.time())
            left = deadline - loop.time()
            if left <= 0:
                break
            try:
                await page.evaluate(
                    _QUIET_DOM_JS, {"quiet": SETTLE_QUIET_MS, "max": int(left * 1000)}
                )
            except Exception:
                break  # navigated away or closed: the caller reads what is there
            if inflight.idle.is_set():
                break
        return page


class _InFlight:
    """A page's requests in flight; `idle` is set while there are none."""

    def __init__(self) -> None:
        self._requests: set[int] = set()
        self.idle = asyncio.Event()
        self.idle.set()

    def add(self, request: Any) -> None:
        self._requests.add(id(request))
        self.idle.clear()

    def discard(self, request: Any) -> None:
        self._requests.discard(id(request))
        if not self._requests:
            self.idle.set()


# -- the browser's processes (for cleanup, tests and `bench/deep.py`) --------------------------


def chromium_processes(root: int | None = None) -> list[int]:
    """Chromium processes descending from `root` (default: this process)."""
    root = os.getpid() if root is None else root
    names = _process_names()
    return [
        pid for pid in process_tree([root], names) if pid != root and _is_chromium(names[pid][0])
    ]


def process_tree(
    roots: Sequence[int], names: dict[int, tuple[str, int]] | None = None
) -> list[int]:
    """`roots` and all their descendants that are alive, sorted."""
    names = _process_names() if names is None else names
    children: dict[int, list[int]] = {}
    for pid, (_name, ppid) in names.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [r for r in roots if r in names]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return sorted(found)


def _process_names() -> dict[int, tuple[str, int]]:
    """pid → (command name, parent pid) for every live process, from /proc."""
    out: dict[int, tuple[str, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read().decode("latin-1")
        except OSError:
            continue
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields and fields[0] not in ("Z", "X"):
            out[int(entry.name)] = (name, int(fields[1]))
    return out


def _is_chromium(name: str) -> bool:
    name = name.lower()
    return "chrom" in name or "headless" in name


def process_memory(pids: Sequence[int]) -> tuple[int, int]:
    """(RSS, PSS) in bytes summed over `pids`, from /proc/PID/smaps_rollup (0 when unreadable)."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key == "Rss":
                        rss += int(value.split()[0]) * 1024
                    elif key == "Pss":
                        pss += int(value.split()[0]) * 1024
        except (OSError, ValueError):
            continue
    return rss, pss


def _cut_reason(cut: Cut) -> str:
    what = "a tunnel to its site" if cut.url.startswith("https:") else "its body"
    return f"the proxy cut {what} at {cut.relayed} bytes (crawl.max_page_bytes)"


async def _cancel(task: asyncio.Future[Any]) -> None:
    """Cancel `task` and wait until it has cleaned up (a no-op when it is done)."""
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _kill(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, 9)


def _first_line(err: BaseException | str) -> str:
    """The informative line of a Playwright/crawl4ai error ("Failed on navigating ACS-GOTO:\n
    Page.goto: net::ERR_..." says what happened on its second line)."""
    text = str(err)
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    line = lines[0] if lines else type(err).__name__
    if line.endswith(":") and len(lines) > 1:
        line = lines[1]
    for prefix in ("BrowserType.launch: ", "Page.goto: ", "Error: "):
        line = line.removeprefix(prefix)
    return line[:300]

"""Deep-path benchmark: main-text quality per method, and the deep crawl, browser against HTTP.

Run from the repository root:

    .venv/bin/python bench/deep.py [--dataset PATH] [--limit N] [--rendered N]
                                   [--pages 30] [--repeat 3] [--chromium PATH] [--only SECTION]
                                   [--max-page-bytes N]
    .venv/bin/python bench/deep.py --hostile [--repeat 3]       (only section c)

(a) quality: main-text quality on extraction-dev (990 real pages with snippets a good extraction
    must / must not contain; scored as trafilatura's own evaluation does: a `with` snippet found
    is a true positive, a `without` snippet found a false positive; whitespace normalised).
    Methods on the saved HTML: a whole-body text dump (the get_text baseline), trafilatura with
    favor_precision=True, our `extract_main_text` (the same, plus the title, which it carries
    separately), and crawl4ai's markdown (raw and fit, the fit one with
    PruningContentFilterLXML) through its browser-less pipeline. Then, on `--rendered` pages
    rendered by Chromium through crawl4ai, the same methods on the rendered DOM. Markdown is
    scored after its syntax is stripped (links, emphasis, list and heading marks), so it is not
    penalised for formatting.
(b) crawl: a deep crawl of `--pages` local news-web pages (8 sites, 20-300 ms latency, 3 of
    them written by JavaScript): wall time, pages per minute, pages with text, and the peak
    memory (RSS and PSS summed over the Chromium processes, sampled every 100 ms from
    /proc/PID/smaps_rollup), browser mode against HTTP mode; medians over `--repeat` runs.
    The news web runs in this process: its CPU is counted in the wall time.
(c) hostile: the deep crawl, in the browser, of a page whose body never ends, of a 10 MB page
    on one line (both begin with a real article), and of an article whose script fetches both
    (the HTTP fetch cannot see those; only the proxy caps them): wall time against the page
    timeout, what came back, the body bytes the guard proxy let through to the browser, what the
    news web wrote of the endless body, and the peak memory of the Chromium tree against the same
    browser idle; a fresh browser for every run, medians over `--repeat`.
    `--max-page-bytes` sets crawl.max_page_bytes (default: the configured default).

Summaries per minute against the local LLM server are a separate section (see `SECTIONS`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import CrawlConfig, FetchConfig  # noqa: E402
from digest.crawl import Crawler  # noqa: E402
from digest.crawl.browser import (  # noqa: E402
    chromium_args,
    chromium_processes,
    import_crawl4ai,
    install_executable_hook,
    process_memory,
)
from digest.fetch.client import HttpClient  # noqa: E402
from digest.fetch.decode import decode_html  # noqa: E402
from digest.fetch.maintext import extract_main_text  # noqa: E402
from tests.newsweb import ARTICLES, NewsWeb, Route, render_article  # noqa: E402

DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "extraction-dev"
TEST_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",)
MiB = 1 << 20

# -- (a) main-text quality --------------------------------------------------------------------


@dataclass
class Score:
    """Snippet counts over all cases, and the time spent producing the outputs."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    pages: int = 0
    empty: int = 0
    seconds: float = 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float:
        total = self.tp + self.fp + self.tn + self.fn
        return (self.tp + self.tn) / total if total else 0.0

    def add(self, case: dict, output: str) -> None:
        text = _norm(output)
        self.pages += 1
        self.empty += not text
        for snippet in case["with"]:
            if _norm(snippet) in text:
                self.tp += 1
            else:
                self.fn += 1
        for snippet in case["without"]:
            if _norm(snippet) in text:
                self.fp += 1
            else:
                self.tn += 1


def _norm(text: str) -> str:
    return " ".join(text.split())


_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_MD_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[*+-][ \t]+|\|)", re.M)
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|`+)")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")


def markdown_to_text(markdown: str) -> str:
    """Markdown without its syntax, so snippets are matched on the words alone."""
    text = _MD_IMAGE.sub(r"\1", markdown)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_LINE_MARKS.sub("", text)
    text = _MD_EMPHASIS.sub("", text)
    text = text.replace(" | ", " ")
    return _MD_ESCAPE.sub(r"\1", text)


def load_cases(dataset: Path, limit: int | None = None) -> list[dict]:
    cases = json.loads((dataset / "cases.json").read_text())
    return cases[:limit] if limit else cases


def read_page(dataset: Path, case: dict) -> str:
    return decode_html(gzip.decompress((dataset / case["file"]).read_bytes()))


def body_text(html: str) -> str:
    """The get_text baseline: every text node of <body>."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    for node in tree.css("script, style, noscript"):
        node.decompose()
    return tree.body.text(separator=" ") if tree.body is not None else ""


def trafilatura_precise(html: str, url: str | None = None) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url, favor_precision=True, include_comments=False) or ""


def ours(html: str, url: str | None = None) -> str:
    main = extract_main_text(html, url)
    return f"{main.title}\n{main.text}" if main.title else main.text


HTML_METHODS: dict[str, Callable[[str, str | None], str]] = {
    "body text (get_text baseline)": lambda html, url: body_text(html),
    "trafilatura favor_precision": trafilatura_precise,
    "extract_main_text (ours)": ours,
}


def _quiet_logs() -> None:
    import logging

    for name in ("trafilatura", "htmldate", "courlan", "charset_normalizer"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _markdown_config(c4):
    return c4.CrawlerRunConfig(
        cache_mode=c4.CacheMode.DISABLED,
        verbose=False,
        markdown_generator=c4.DefaultMarkdownGenerator(
            content_filter=c4.PruningContentFilterLXML()
        ),
    )


async def _crawl4ai_on_raw_html(
    dataset: Path, cases: list[dict], work_dir: Path
) -> tuple[Score, Score]:
    """crawl4ai's raw and fit markdown from the saved HTML, through its browser-less pipeline."""
    c4 = import_crawl4ai(work_dir)
    from crawl4ai.async_crawler_strategy import AsyncHTTPCrawlerStrategy

    raw, fit = Score(), Score()
    config = _markdown_config(c4)
    async with c4.AsyncWebCrawler(
        crawler_strategy=AsyncHTTPCrawlerStrategy(),
        config=c4.BrowserConfig(verbose=False),
        base_directory=str(work_dir),
    ) as crawler:
        for case in cases:
            html = read_page(dataset, case)
            started = time.perf_counter()
            result = await crawler.arun("raw:" + html, config=config)
            elapsed = time.perf_counter() - started
            md = result.markdown
            raw.add(case, markdown_to_text(md.raw_markdown or "") if md else "")
            fit.add(case, markdown_to_text(md.fit_markdown or "") if md else "")
            raw.seconds += elapsed  # one pipeline run produces both
            fit.seconds += elapsed
    return raw, fit


async def _rendered(
    dataset: Path, cases: list[dict], chromium: str | None, work_dir: Path, concurrency: int = 4
) -> dict[str, Score]:
    """Each page served from 127.0.0.1 and rendered by Chromium through crawl4ai."""
    from aiohttp import web

    c4 = import_crawl4ai(work_dir)
    install_executable_hook(chromium)
    pages = {str(i): read_page(dataset, case) for i, case in enumerate(cases)}

    async def serve(request: web.Request) -> web.Response:
        html = pages.get(request.match_info["n"])
        if html is None:
            return web.Response(status=404)
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/page/{n}", serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    scores = {
        "rendered: crawl4ai raw_markdown": Score(),
        "rendered: crawl4ai fit_markdown": Score(),
        "rendered: trafilatura favor_precision on result.html": Score(),
        "rendered: extract_main_text (ours) on result.html": Score(),
        "same pages, saved HTML: trafilatura favor_precision": Score(),
    }
    browser_config = c4.BrowserConfig(
        headless=True, verbose=False, extra_args=chromium_args(TEST_ARGS)
    )
    config = _markdown_config(c4)
    config.page_timeout = 20_000
    slots = asyncio.Semaphore(concurrency)
    try:
        async with c4.AsyncWebCrawler(
            config=browser_config, base_directory=str(work_dir)
        ) as crawler:

            async def one(i: int, case: dict) -> None:
                async with slots:
                    started = time.perf_counter()
                    result = await crawler.arun(f"{base}/page/{i}", config=config)
                    elapsed = time.perf_counter() - started
                md = result.markdown
                html = result.html or ""
                for name, text in (
                    ("raw_markdown", md.raw_markdown if md else ""),
                    ("fit_markdown", md.fit_markdown if md else ""),
                ):
                    score = scores[f"rendered: crawl4ai {name}"]
                    score.add(case, markdown_to_text(text or ""))
                    score.seconds += elapsed
                for name, method in (
                    ("rendered: trafilatura favor_precision on result.html", trafilatura_precise),
                    ("rendered: extract_main_text (ours) on result.html", ours),
                ):
                    started = time.perf_counter()
                    out = method(html, case["url"])
                    scores[name].seconds += time.perf_counter() - started
                    scores[name].add(case, out)
                started = time.perf_counter()
                out = trafilatura_precise(pages[str(i)], case["url"])
                saved = scores["same pages, saved HTML: trafilatura favor_precision"]
                saved.seconds += time.perf_counter() - started
                saved.add(case, out)

            await asyncio.gather(*(one(i, case) for i, case in enumerate(cases)))
    finally:
        await runner.cleanup()
    return scores


def main_text_quality(
    dataset: Path = DEFAULT_DATASET,
    *,
    limit: int | None = None,
    rendered: int = 100,
    chromium: str | None = "/usr/bin/chromium",
    crawl4ai_raw: bool = True,
) -> dict[str, Score]:
    """Main-text quality on extraction-dev for each method (see the module docstring)."""
    _quiet_logs()
    cases = load_cases(dataset, limit)
    scores: dict[str, Score] = {name: Score() for name in HTML_METHODS}
    for case in cases:
        html = read_page(dataset, case)
        for name, method in HTML_METHODS.items():
            started = time.perf_counter()
            out = method(html, case["url"])
            scores[name].seconds += time.perf_counter() - started
            scores[name].add(case, out)
    with tempfile.TemporaryDirectory(prefix="digest-bench-") as tmp:
        work_dir = Path(tmp)
        if crawl4ai_raw:
            raw, fit = asyncio.run(_crawl4ai_on_raw_html(dataset, cases, work_dir))
            scores["crawl4ai raw_markdown (no browser)"] = raw
            scores["crawl4ai fit_markdown (no browser)"] = fit
        if rendered and chromium is not None:
            subset = _spread(cases, rendered)
            scores |= asyncio.run(_rendered(dataset, subset, chromium, work_dir))
    return scores


def _spread(cases: list[dict], n: int) -> list[dict]:
    """`n` cases spread evenly over the dataset (deterministic)."""
    if n >= len(cases):
        return cases
    step = len(cases) / n
    return [cases[int(i * step)] for i in range(n)]


def print_quality(scores: dict[str, Score]) -> None:
    print(
        f"{'method':56} {'pages':>5} {'prec':>6} {'recall':>6} {'F1':>6} {'acc':>6} "
        f"{'empty':>5} {'ms/page':>8}"
    )
    for name, s in scores.items():
        ms = 1000 * s.seconds / s.pages if s.pages else 0.0
        print(
            f"{name:56} {s.pages:5d} {s.precision:6.3f} {s.recall:6.3f} {s.f1:6.3f} "
            f"{s.accuracy:6.3f} {s.empty:5d} {ms:8.1f}"
        )


# -- (b) the deep crawl -----------------------------------------------------------------------

LATE_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>
<body><nav><a href="/">Home</a></nav><main id="app"><p>Loading...</p></main><script>
fetch('/api/{slug}.json').then(r => r.json()).then(story => {{
  const main = document.getElementById('app'); main.innerHTML = '<article><h1></h1></article>';
  main.querySelector('h1').textContent = story.title;
  for (const t of story.paragraphs) {{
    const p = document.createElement('p'); p.textContent = t;
    main.querySelector('article').appendChild(p);
  }}
}});
</script></body></html>"""


@dataclass
class CrawlRun:
    mode: str
    seconds: float
    pages: int
    with_article: int  # pages whose text holds the article's real opening
    start_seconds: float
    peak_rss: int = 0
    peak_pss: int = 0
    samples: list[tuple[int, int]] = field(default_factory=list, repr=False)


def _news_web_urls(web: NewsWeb, pages: int, sites: int) -> tuple[list[str], list[str]]:
    """URLs of `pages` pages spread over the sites, and each one's expected opening words."""
    for article in ARTICLES[:3]:
        slug = f"js-{article.slug}"
        web.add(
            Route(f"/late/{slug}.html", LATE_PAGE.format(title=article.title, slug=slug).encode())
        )
        web.add(
            Route(
                f"/api/{slug}.json",
                json.dumps(
                    {"title": article.title, "paragraphs": [article.lede, *article.paragraphs]}
                ).encode(),
                content_type="application/json",
            )
        )
    paths = [(f"/late/js-{a.slug}.html", a) for a in ARTICLES[:3]]
    paths += [(a.path, a) for a in ARTICLES]
    urls, ledes = [], []
    for i in range(pages):
        path, article = paths[i % len(paths)]
        site = (i // len(paths) + i) % sites
        urls.append(web.url(path, site=site))
        ledes.append(article.lede[:40])
    # 20-300 ms latencies, different per site
    for site in range(sites):
        for path, _ in paths:
            web.set_latency(path, 0.02 + 0.28 * ((site * 7 + len(path)) % 10) / 9, site=site)
    return urls, ledes


async def _sample_memory(into: CrawlRun, stop: asyncio.Event) -> None:
    while not stop.is_set():
        rss, pss = await asyncio.to_thread(lambda: process_memory(chromium_processes()))
        into.samples.append((rss, pss))
        into.peak_rss = max(into.peak_rss, rss)
        into.peak_pss = max(into.peak_pss, pss)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


async def _crawl_once(mode: str, pages: int, chromium: str | None, work_dir: Path) -> CrawlRun:
    fetch = FetchConfig(allowed_networks=["127.0.0.1/32"], per_host_connections=8)
    config = CrawlConfig(mode=mode, executable_path=chromium, page_timeout=20)  # type: ignore[arg-type]
    sites = 8
    async with NewsWeb(sites=sites) as web, HttpClient(fetch) as http:
        urls, ledes = _news_web_urls(web, pages, sites)
        started = time.perf_counter()
        async with Crawler(config, fetch, http, work_dir=work_dir, browser_args=TEST_ARGS) as c:
            if mode == "browser" and c.mode != "browser":
                raise SystemExit(f"browser did not start: {c.mode_reason}")
            start_seconds = time.perf_counter() - started
            run = CrawlRun(mode, 0.0, len(urls), 0, start_seconds)
            stop = asyncio.Event()
            sampler = asyncio.create_task(_sample_memory(run, stop))
            began = time.perf_counter()
            result = await c.crawl(urls)
            run.seconds = time.perf_counter() - began
            stop.set()
            await sampler
        run.with_article = sum(
            1 for page, lede in zip(result, ledes, strict=True) if lede in page.text
        )
    return run


def deep_crawl(
    *, pages: int = 30, repeat: int = 3, chromium: str | None = "/usr/bin/chromium"
) -> dict[str, list[CrawlRun]]:
    """Deep crawl of `pages` local pages, browser mode against HTTP mode, `repeat` times each."""
    _quiet_logs()
    runs: dict[str, list[CrawlRun]] = {"http": [], "browser": []}
    with tempfile.TemporaryDirectory(prefix="digest-bench-") as tmp:
        for _ in range(repeat):
            for mode in runs:
                if mode == "browser" and chromium is None:
                    continue
                runs[mode].append(asyncio.run(_crawl_once(mode, pages, chromium, Path(tmp))))
    return runs


def print_crawl(runs: dict[str, list[CrawlRun]]) -> None:
    print(
        f"{'mode':8} {'runs':>4} {'pages':>5} {'article':>9} {'wall s':>7} {'pages/min':>9} "
        f"{'start s':>7} {'peak RSS MiB':>12} {'peak PSS MiB':>12}"
    )
    for mode, items in runs.items():
        if not items:
            continue
        wall = statistics.median(r.seconds for r in items)
        rate = statistics.median(60 * r.pages / r.seconds for r in items)
        start = statistics.median(r.start_seconds for r in items)
        rss = statistics.median(r.peak_rss for r in items) / MiB
        pss = statistics.median(r.peak_pss for r in items) / MiB
        text = statistics.median(r.with_article for r in items)
        print(
            f"{mode:8} {len(items):4d} {items[0].pages:5d} {text:9.0f} {wall:7.2f} {rate:9.1f} "
            f"{start:7.2f} {rss:12.0f} {pss:12.0f}"
        )


# -- (c) hostile pages ------------------------------------------------------------------------

HOSTILE = {
    "endless body": "/endless.html",
    "10 MB on one line": "/one-line.html",
    "script pulls both": "/pull.html",  # what the HTTP fetch cannot see: only the proxy caps it
}
PULL_PAGE = render_article(ARTICLES[0], script_bytes=8_000).replace(
    b"</body>",
    b"""<p id="pulled">waiting</p><script>
Promise.all(['/endless.html', '/one-line.html'].map(u => fetch(u).then(r => r.arrayBuffer())))
  .then(bodies => { document.getElementById('pulled').textContent = 'got ' + bodies.length; });
</script></body>""",
)


@dataclass
class HostileRun:
    page: str
    seconds: float
    fetched_by: str
    chars: int  # of main text
    outcome: str  # the page's error, else its note
    relayed: int | None  # body bytes the guard proxy let through to the browser
    streamed: int | None  # body bytes the news web wrote of the endless page
    idle_rss: int
    idle_pss: int
    peak_rss: int = 0
    peak_pss: int = 0


async def _hostile_once(
    name: str, path: str, chromium: str, work_dir: Path, max_page_bytes: int | None
) -> HostileRun:
    fetch = FetchConfig(allowed_networks=["127.0.0.1/32"])
    extra = {} if max_page_bytes is None else {"max_page_bytes": max_page_bytes}
    config = CrawlConfig(mode="browser", executable_path=chromium, respect_robots=False, **extra)
    async with NewsWeb() as web, HttpClient(fetch) as http:
        web.add(Route("/pull.html", PULL_PAGE))
        async with Crawler(config, fetch, http, work_dir=work_dir, browser_args=TEST_ARGS) as c:
            if c.mode != "browser":
                raise SystemExit(f"browser did not start: {c.mode_reason}")
            await asyncio.sleep(1.0)  # let the fresh browser settle before its idle figure
            idle_rss, idle_pss = process_memory(chromium_processes())
            assert c._browser is not None
            proxy = c._browser.proxy
            relayed_before = proxy.relayed
            probe = CrawlRun("browser", 0.0, 1, 0, 0.0)
            stop = asyncio.Event()
            sampler = asyncio.create_task(_sample_memory(probe, stop))
            began = time.perf_counter()
            [page] = await c.crawl([web.url(path)])
            seconds = time.perf_counter() - began
            stop.set()
            await sampler
            relayed = proxy.relayed - relayed_before
        streamed = web.streamed["/endless.html"]
    return HostileRun(
        page=name,
        seconds=seconds,
        fetched_by=page.fetched_by,
        chars=len(page.text),
        outcome=page.error or page.note or "",
        relayed=relayed,
        streamed=streamed if path != "/one-line.html" else None,
        idle_rss=idle_rss,
        idle_pss=idle_pss,
        peak_rss=probe.peak_rss,
        peak_pss=probe.peak_pss,
    )


def hostile(
    *, repeat: int = 3, chromium: str = "/usr/bin/chromium", max_page_bytes: int | None = None
) -> dict[str, list[HostileRun]]:
    """The deep crawl of each hostile page, `repeat` times, a fresh browser each time."""
    _quiet_logs()
    runs: dict[str, list[HostileRun]] = {name: [] for name in HOSTILE}
    with tempfile.TemporaryDirectory(prefix="digest-bench-") as tmp:
        for _ in range(repeat):
            for name, path in HOSTILE.items():
                runs[name].append(
                    asyncio.run(_hostile_once(name, path, chromium, Path(tmp), max_page_bytes))
                )
    return runs


def print_hostile(runs: dict[str, list[HostileRun]], page_timeout: float) -> None:
    print(
        f"{'page':18} {'runs':>4} {'wall s':>7} {'by':>7} {'chars':>6} {'relayed MiB':>11} "
        f"{'written MiB':>11} {'idle RSS':>8} {'peak RSS':>8} {'idle PSS':>8} {'peak PSS':>8}"
    )

    def mib(values: list[int | None]) -> str:
        known = [v for v in values if v is not None]
        return f"{statistics.median(known) / MiB:.1f}" if known else "-"

    for name, items in runs.items():
        if not items:
            continue
        med = statistics.median
        memory = " ".join(
            f"{med(getattr(r, key) for r in items) / MiB:8.0f}"
            for key in ("idle_rss", "peak_rss", "idle_pss", "peak_pss")
        )
        print(
            f"{name:18} {len(items):4d} {med(r.seconds for r in items):7.1f} "
            f"{items[0].fetched_by:>7} {med(r.chars for r in items):6.0f} "
            f"{mib([r.relayed for r in items]):>11} {mib([r.streamed for r in items]):>11} {memory}"
        )
        print(f"{'':18} outcome: {items[-1].outcome or '(ok)'}")
    print(f"(memory in MiB, summed over the Chromium processes; page timeout {page_timeout:g} s)")


# -- command line -------------------------------------------------------------------------------

SECTIONS = ("quality", "crawl", "hostile")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    parser.add_argument("--rendered", type=int, default=100, help="pages rendered by Chromium")
    parser.add_argument(
        "--no-crawl4ai-raw", action="store_true", help="skip crawl4ai on saved HTML"
    )
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--chromium",
        default=os.environ.get("DIGEST_CHROMIUM")
        or shutil.which("chromium")
        or "/usr/bin/chromium",
        help="browser executable ('' to skip everything that needs a browser)",
    )
    parser.add_argument("--only", choices=SECTIONS, action="append")
    parser.add_argument("--hostile", action="store_true", help="only (c): hostile pages")
    parser.add_argument("--max-page-bytes", type=int, default=None, help="crawl.max_page_bytes")
    args = parser.parse_args(list(argv) if argv is not None else None)
    chromium = args.chromium or None
    only = {"hostile"} if args.hostile else set(args.only or SECTIONS)
    if "quality" in only:
        if not (args.dataset / "cases.json").is_file():
            print(f"(a) quality: skipped, no dataset at {args.dataset}")
        else:
            print(f"(a) main-text quality on {args.dataset}")
            print_quality(
                main_text_quality(
                    args.dataset,
                    limit=args.limit,
                    rendered=args.rendered,
                    chromium=chromium,
                    crawl4ai_raw=not args.no_crawl4ai_raw,
                )
            )
            print()
    if "crawl" in only:
        print(f"(b) deep crawl of {args.pages} local pages, median of {args.repeat} runs")
        print_crawl(deep_crawl(pages=args.pages, repeat=args.repeat, chromium=chromium))
        print()
    if "hostile" in only:
        if chromium is None:
            print("(c) hostile: skipped, no browser")
        else:
            cap = args.max_page_bytes or CrawlConfig().max_page_bytes
            print(
                f"(c) hostile pages in the browser, cap {cap} bytes, median of {args.repeat} runs"
            )
            runs = hostile(
                repeat=args.repeat, chromium=chromium, max_page_bytes=args.max_page_bytes
            )
            print_hostile(runs, CrawlConfig().page_timeout)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

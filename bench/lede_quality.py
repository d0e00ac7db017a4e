"""Lede quality benchmark: how well each lede method finds the opening of a page's article.

Run from the repository root (DATASET_DIR defaults to ../shared/data/extraction-dev, trafilatura's
evaluation pages; they are read from there, never copied into the project):

    .venv/bin/python bench/lede_quality.py [DATASET_DIR] [--limit N] [--failures N]

Every page is read whole (gzip in the dataset), decoded once, and given to each method:

- ours, whole page: `find_lede` on the whole page.
- ours, first 64 KB: `find_lede` on the first 64 KB of bytes, what the fast path sees first.
- ours, adaptive: what the fast path does: 64 KB, doubling up to 1 MB until the kind is "article";
  its time is the sum of all its calls, and the bytes it read are summarised under the table.
- seed: the seed's lede: first 20 KB of bytes, text of the first 15 `<p>`, joined.
- largest <p> parent + meta: the `<p>` texts of the element holding the most `<p>` text, else the
  description meta tags (the 0.81 baseline in DESIGN.md).
All ledes are cut to 300 characters at a word boundary, so the methods differ in what they pick.

Columns:
- lede: share of pages with a non-empty lede; article: share whose kind is "article".
- boiler: share of ledes containing one of the page's boilerplate ("without") snippets, matched as
  trafilatura's evaluation matches them: whitespace-normalised, case-sensitive substring. A snippet
  that starts inside the lede but runs past its cut does not count. Some snippets also occur in the
  article itself (a name, a date), so even trafilatura's own opening scores above 0 (last row).
- in main: share of ledes found in the page's main text as trafilatura extracts it: at least 80%
  of the lede's 4-word shingles (lower-cased `\\w+` words) occur in trafilatura's text; a lede of
  under 4 words must occur whole. Pages where trafilatura finds nothing are left out.
  art. in main: the same for ledes of kind "article" (how far "article" can be trusted).
- good: share of pages (with trafilatura text) whose lede is non-empty, in main and free of
  boilerplate snippets: the figure to compare.
- F1 open: mean 4-word-shingle F1 of the lede against the opening of trafilatura's text without
  its headings, cut the same way: a proxy for "the article's real opening". Trafilatura mostly
  leaves out standfirsts and sometimes keeps bylines, so its opening is not ground truth either.
- med ms, p95 ms: time per page of the method (parsing included, decoding not), best of 3 runs.

Trafilatura's text is computed once per page and cached under the system temp directory.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from digest.fetch.lede import find_lede  # noqa: E402

DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "data" / "extraction-dev"
CACHE_DIR = Path(tempfile.gettempdir()) / "digest-lede-bench"
MAX_CHARS = 300
FIRST_READ = 64 * 1024
MAX_READ = 1024 * 1024
SEED_READ = 20 * 1024
SEED_PARAGRAPHS = 15
FOUND_SHARE = 0.8
REPEAT = 3
TRAFILATURA_TIMED_PAGES = 50

_WORD = re.compile(r"\w+")
_META_SELECTORS = (
    'meta[property="og:description"]',
    'meta[name="twitter:description"]',
    'meta[name="description"]',
)


# --- pages and the reference -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Page:
    file: str
    url: str
    raw: bytes
    html: str
    encoding: str
    without: tuple[str, ...]  # boilerplate snippets, whitespace-normalised

    def prefix(self, n_bytes: int) -> str:
        """The page as the fast path sees it after reading `n_bytes`."""
        return self.raw[:n_bytes].decode(self.encoding, errors="ignore")


@dataclass(frozen=True, slots=True)
class Reference:
    """Trafilatura's main text of a page, and the same without its headings."""

    text: str
    body: str


def _decode(raw: bytes) -> tuple[str, str]:
    from trafilatura.utils import detect_encoding

    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    for encoding in detect_encoding(raw):
        try:
            return raw.decode(encoding), encoding
        except (LookupError, UnicodeDecodeError):
            continue
    return raw.decode("utf-8", errors="replace"), "utf-8"


def load_pages(dataset_dir: Path, limit: int | None = None) -> list[Page]:
    cases = json.loads((dataset_dir / "cases.json").read_text(encoding="utf-8"))
    pages = []
    for case in cases[:limit]:
        raw = gzip.decompress((dataset_dir / case["file"]).read_bytes())
        html, encoding = _decode(raw)
        without = tuple(s for s in map(normalise, case.get("without", [])) if s)
        pages.append(Page(case["file"], case["url"], raw, html, encoding, without))
    return pages


def _trafilatura_reference(html: str) -> tuple[str, str]:
    import trafilatura
    from lxml import etree

    xml = trafilatura.extract(html, output_format="xml", include_comments=False)
    main = etree.fromstring(xml.encode("utf-8")).find("main") if xml else None
    if main is None:
        return "", ""
    text = normalise(" ".join(main.itertext()))
    body = normalise(" ".join(" ".join(e.itertext()) for e in main if e.tag != "head"))
    return text, body


def reference_texts(pages: list[Page]) -> dict[str, Reference]:
    """Trafilatura's text for every page, from the cache or computed in parallel."""
    import trafilatura

    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    cache_file = CACHE_DIR / f"trafilatura-{trafilatura.__version__}-xml.json"
    cache: dict[str, list[str]] = {}
    if cache_file.exists():
        cache = json.loads(cache_file.read_text(encoding="utf-8"))
    key = {p.file: f"{p.file}:{hashlib.sha1(p.raw).hexdigest()}" for p in pages}
    missing = [p for p in pages if key[p.file] not in cache]
    if missing:
        print(f"trafilatura: extracting {len(missing)} pages (cache: {cache_file})", flush=True)
        with ProcessPoolExecutor() as pool:
            results = pool.map(_trafilatura_reference, [p.html for p in missing], chunksize=8)
            for page, result in zip(missing, results, strict=True):
                cache[key[page.file]] = list(result)
        cache_file.write_text(json.dumps(cache), encoding="utf-8")
    return {p.file: Reference(*cache[key[p.file]]) for p in pages}


# --- text measures -----------------------------------------------------------------------------


def normalise(text: str) -> str:
    return " ".join(text.split())


def cut(text: str, max_chars: int = MAX_CHARS) -> str:
    """Whitespace-normalised and cut at a word boundary."""
    text = normalise(text)
    if len(text) <= max_chars:
        return text
    head = text[: max_chars + 1]
    space = head.rfind(" ")
    return head[:space] if space > 0 else text[:max_chars]


def shingles(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def found_in(lede: str, reference: str, reference_shingles: set[tuple[str, ...]]) -> bool:
    mine = shingles(lede)
    if not mine:
        return False
    if len(next(iter(mine))) < 4:  # a lede of under 4 words
        return " ".join(next(iter(mine))) in " ".join(_WORD.findall(reference.lower()))
    return len(mine & reference_shingles) >= FOUND_SHARE * len(mine)


def f1(lede: str, reference: str) -> float:
    mine, theirs = shingles(lede), shingles(reference)
    common = len(mine & theirs)
    if not common:
        return 0.0
    precision, recall = common / len(mine), common / len(theirs)
    return 2 * precision * recall / (precision + recall)


# --- the methods -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    kind: str | None  # "article", "meta", "" or None for a method that does not say
    read: int | None = None  # bytes read, for the adaptive fast path


def ours_whole(page: Page) -> Answer:
    lede = find_lede(page.html, MAX_CHARS)
    return Answer(lede.text, lede.kind)


def ours_first_read(page: Page) -> Answer:
    lede = find_lede(page.prefix(FIRST_READ), MAX_CHARS)
    return Answer(lede.text, lede.kind)


def ours_adaptive(page: Page) -> Answer:
    size = FIRST_READ
    while True:
        lede = find_lede(page.prefix(size), MAX_CHARS)
        if lede.kind == "article" or size >= min(len(page.raw), MAX_READ):
            return Answer(lede.text, lede.kind, min(size, len(page.raw)))
        size *= 2


def seed_method(page: Page) -> Answer:
    tree = LexborHTMLParser(page.prefix(SEED_READ))
    text = " ".join(p.text() for p in tree.css("p")[:SEED_PARAGRAPHS])
    return Answer(cut(text), None)


def largest_parent_method(page: Page) -> Answer:
    tree = LexborHTMLParser(page.html)
    texts: dict[int, list[str]] = {}
    weight: dict[int, int] = {}
    for p in tree.css("p"):
        parent = p.parent
        if parent is not None:
            text = normalise(p.text())
            texts.setdefault(parent.mem_id, []).append(text)
            weight[parent.mem_id] = weight.get(parent.mem_id, 0) + len(text)
    if weight:
        best = max(weight, key=weight.__getitem__)
        text = cut(" ".join(t for t in texts[best] if t))
        if text:
            return Answer(text, "article")
    for selector in _META_SELECTORS:
        node = tree.css_first(selector)
        content = cut(node.attributes.get("content") or "") if node is not None else ""
        if content:
            return Answer(content, "meta")
    return Answer("", "")


METHODS: list[tuple[str, Callable[[Page], Answer]]] = [
    ("ours, whole page", ours_whole),
    ("ours, first 64 KB", ours_first_read),
    ("ours, adaptive 64 KB..1 MB", ours_adaptive),
    ("seed: first 15 <p> of 20 KB", seed_method),
    ("largest <p> parent + meta", largest_parent_method),
]


# --- scoring -----------------------------------------------------------------------------------


@dataclass
class Tally:
    name: str
    pages: int = 0
    with_lede: int = 0
    articles: int = 0
    says_kind: bool = False
    boiler: int = 0
    judged_pages: int = 0  # pages where trafilatura found text
    judged: int = 0  # ... that have a lede
    in_main: int = 0
    judged_articles: int = 0
    articles_in_main: int = 0
    good: int = 0
    f1_sum: float = 0.0
    times: list[float] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    failures: list[tuple[Page, Answer, str]] = field(default_factory=list)

    def add(self, page: Page, answer: Answer, reference: Reference, ref_shingles: set) -> None:
        self.pages += 1
        self.says_kind = self.says_kind or answer.kind is not None
        lede = normalise(answer.text)
        hit = next((s for s in page.without if s in lede), None) if lede else None
        if lede:
            self.with_lede += 1
            self.articles += answer.kind == "article"
            self.boiler += hit is not None
            if hit is not None:
                self.failures.append((page, answer, f"boilerplate snippet {hit!r}"))
        if not reference.text:
            return
        self.judged_pages += 1
        self.f1_sum += f1(lede, cut(reference.body))
        if not lede:
            self.failures.append((page, answer, "no lede"))
            return
        found = found_in(lede, reference.text, ref_shingles)
        self.judged += 1
        self.in_main += found
        self.good += found and hit is None
        if answer.kind == "article":
            self.judged_articles += 1
            self.articles_in_main += found
        if not found:
            self.failures.append((page, answer, "not in trafilatura's text"))

    def row(self) -> tuple[str, ...]:
        return (
            self.name,
            _pct(self.with_lede, self.pages),
            _pct(self.articles, self.pages) if self.says_kind else "-",
            _pct(self.boiler, self.with_lede),
            _pct(self.in_main, self.judged),
            _pct(self.articles_in_main, self.judged_articles) if self.says_kind else "-",
            _pct(self.good, self.judged_pages),
            f"{self.f1_sum / self.judged_pages:.3f}" if self.judged_pages else "-",
            _ms(self.times, 0.5),
            _ms(self.times, 0.95),
        )


HEADER = (
    "method",
    "lede",
    "article",
    "boiler",
    "in main",
    "art. in main",
    "good",
    "F1 open",
    "med ms",
    "p95 ms",
)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _ms(times: list[float], quantile: float) -> str:
    if not times:
        return "-"
    ordered = sorted(times)
    if quantile == 0.5:
        return f"{statistics.median(ordered) * 1000:.2f}"
    return f"{ordered[min(len(ordered) - 1, int(quantile * len(ordered)))] * 1000:.2f}"


def _timed(method: Callable[[Page], Answer], page: Page) -> tuple[Answer, float]:
    best, answer = float("inf"), Answer("", "")
    for _ in range(REPEAT):
        start = time.perf_counter()
        answer = method(page)
        best = min(best, time.perf_counter() - start)
    return answer, best


def _trafilatura_times(pages: list[Page]) -> list[float]:
    import trafilatura

    times = []
    for page in pages[:TRAFILATURA_TIMED_PAGES]:
        start = time.perf_counter()
        trafilatura.extract(page.html, include_comments=False)
        times.append(time.perf_counter() - start)
    return times


def print_table(rows: Iterable[tuple[str, ...]]) -> None:
    rows = [HEADER, *rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        print("  ".join(cells))


def run(dataset_dir: str, *, limit: int | None = None, failures: int = 0) -> None:
    """Measure every lede method on the dataset at `dataset_dir` and print a table."""
    pages = load_pages(Path(dataset_dir), limit)
    references = reference_texts(pages)
    tallies = [Tally(name) for name, _ in METHODS]
    opening = Tally(f"trafilatura's opening (first {TRAFILATURA_TIMED_PAGES} pages timed)")
    for page in pages:
        reference = references[page.file]
        ref_shingles = shingles(reference.text)
        for (_, method), tally in zip(METHODS, tallies, strict=True):
            answer, seconds = _timed(method, page)
            tally.times.append(seconds)
            if answer.read is not None:
                tally.reads.append(answer.read)
            tally.add(page, answer, reference, ref_shingles)
        text = cut(reference.body)
        opening.add(page, Answer(text, "article" if text else ""), reference, ref_shingles)
    opening.times = _trafilatura_times(pages)

    print(f"{len(pages)} pages from {dataset_dir}; ledes cut to {MAX_CHARS} characters\n")
    print_table([t.row() for t in [*tallies, opening]])
    for tally in tallies:
        if tally.reads:
            reads = sorted(tally.reads)
            print(
                f"\n{tally.name}: read median {statistics.median(reads) / 1024:.0f} KB, "
                f"p90 {reads[int(0.9 * len(reads))] / 1024:.0f} KB"
            )
    if failures:
        print(f"\nfirst {failures} failures of {tallies[0].name!r}:")
        for page, answer, why in tallies[0].failures[:failures]:
            print(f"- {page.file}: {why} [{answer.kind or 'no'} lede]")
            print(f"    lede:        {answer.text[:150]!r}")
            print(f"    trafilatura: {cut(references[page.file].body, 150)!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset_dir", nargs="?", default=str(DEFAULT_DATASET))
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages")
    parser.add_argument("--failures", type=int, default=0, help="list N failures of ours")
    args = parser.parse_args(argv)
    run(args.dataset_dir, limit=args.limit, failures=args.failures)


if __name__ == "__main__":
    main()

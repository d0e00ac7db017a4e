"""Figure entries on real English and German pages (issue 38): what the story memory would tell a
reader ("at least 58 dead", with its clause) of each page or news article of a corpus, against
hand labels, per language.

    .venv/bin/python bench/figures_real.py DATASET [--corpus extraction-dev|gva|10kgnad|trends-de]
        [--held-out] [--show N] [--whole] [--cache FILE] [--section TEXT]

**The corpora** (`--corpus`), each read where it lies, never copied into the project:

- `extraction-dev` (the default): DATASET is extraction-dev's folder (below).
- `gva`: English news. DATASET is a clone or bare git directory of `cltl/LongTailQATask`
  (`fetch github:cltl/LongTailQATask`), whose `the_violent_corpus` holds 6,335 local US news
  articles (2014-2017, archive.org copies) on the Gun Violence Archive's incidents, gathered for
  SemEval-2018 task 5 (counting events and participants): shootings with their dead, injured
  and arrested, the commonest English toll reporting there is. Each is a pickled `NewsItem`
  (title, date, URL, text with its paragraphs), read by an unpickler that builds nothing but
  that record and a date. The article's date is passed as `published`, as the timeline does.
- `10kgnad`: German news. DATASET is a clone or bare git directory of `tblock/10kGNAD`
  (`fetch github:tblock/10kGNAD`): its `test.csv`, 1,028 derStandard.at articles (2015-2016;
  Panorama, International, Inland, ... ; the larger train.csv is not in the stored copy). Each
  is its teaser and body text as one line, without headline, date or paragraphs (the dataset
  dropped them, and its quote marks): the teaser is given as the opening sentence, no
  headline, and each sentence as a paragraph, so that the lead the figures are read from
  (`figures.lead`: whole paragraphs up to 1,000 characters) is about as long as a crawled
  article's.
- `trends-de`: more German news. DATASET is a clone or bare git directory of
  `nguyenvulebinh/trends` (`fetch github:nguyenvulebinh/trends`): its `_posts`, Markdown pages
  of articles its owner scraped from the news Google Trends linked, 2024-2025; the 7,209 tagged
  `entries DE` (not its English `llm` summaries) are German articles of many outlets (tagesschau,
  Spiegel, ZDF, Stern, regional papers, ...): headline and URL from the post's link line, date
  from its front matter, text as scraped (teaser, then paragraphs, ad placeholders and all). Its
  `_posts/...` file keys cannot collide with 10kgnad's `test.csv:...` rows (10kGNAD's full
  set, `realjanpaulus/german-corpora`'s `german_news.csv`, is stored only as LFS pointers).

extraction-dev: 990 real web pages from trafilatura's evaluation set, mostly German, some
English (`../shared/data/extraction-dev` beside the project). CL-TLS, which measures Spanish
and French (`bench/story_memory_real.py`), has no German and its English is not stored: these
are English's and German's real-text measurements.

**Each extraction-dev page, through the service's own code**: its main text and title as the
crawl extracts them (`digest.fetch.maintext.extract_main_text`), its lede as the fast path finds it
(`digest.fetch.lede.find_lede`; the feed's lede in the service, which these pages have none of);
its language as the story memory tells an outlet's (`detect_language` of headline and lede,
`digest.jobs.story_memory.outlet_texts`); links stripped as the timeline does (`without_links`);
then `digest.summarize.figures.reported(text, language, title, published)`, as `story_events`
calls it (the news corpora the same way, from their headline and text). Each
figure it gives is a "fact" entry a reader is shown: its clause (`Figure.clause`). `--whole`:
every figure of the main text instead (`figures_of`), not only its lead's, as a diagnostic: the
same rules on more of the real text, where pages of every kind give few figures in their leads.

**The split**: a page is dev when the first byte of the SHA-256 of its file name is even, else
held out (`--held-out`). Rules are tuned on dev entries only; the held-out half is labelled once
after the rules are final and reported as it comes.

**The labels** (`bench/labels/extraction_figures.tsv` for extraction-dev,
`bench/labels/news_figures.tsv` for the news corpora, the rule at the top of each): one row per
entry, keyed by page file, quantity, value and qualifier, with "right" or "wrong". An entry
without a row is unlabelled (printed, counted apart, not scored). `--section TEXT`: also the
precision of the rows of one section of the labels alone (the rows below the `# --` header
that contains TEXT, up to the next such header), e.g. `--section "fresh held-out sample"` for
the fresh English held-out sample. extraction-dev's pages are of
every kind (blogs, institutions, shops, news): most give no figure. Silence is not scored here
(recall is CL-TLS's measure).
Entries are listed in the order of their page's hash, so that the first N of a half (`--show
N`, when a half gives more entries than can be labelled by hand) are a sample of it, not the
corpus's first folder.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import hashlib
import io
import json
import pickle
import re
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.fetch.lede import find_lede  # noqa: E402
from digest.fetch.maintext import extract_main_text  # noqa: E402
from digest.memory.timeline import OutletText, number, without_links  # noqa: E402
from digest.stories.language import detect_language  # noqa: E402
from digest.summarize.claims import sentences_of, text_language  # noqa: E402
from digest.summarize.figures import figures_of, reported  # noqa: E402

LABELS = ROOT / "bench" / "labels" / "extraction_figures.tsv"
NEWS_LABELS = ROOT / "bench" / "labels" / "news_figures.tsv"
CORPORA = ("extraction-dev", "gva", "10kgnad", "trends-de")
GVA_FOLDER = "EventRegistries/GunViolenceArchive/the_violent_corpus"
LANGUAGES = ("en", "de")


@dataclass(frozen=True, slots=True)
class Page:
    """A page as the service would hold it after a deep crawl."""

    file: str
    url: str
    title: str
    lede: str
    text: str
    published: str = ""  # ISO date, when the corpus gives it


@dataclass(frozen=True, slots=True)
class Entry:
    """A figure entry a reader would be shown."""

    file: str
    lang: str
    subject: str
    value: str
    qualifier: str
    clause: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.file, self.subject, self.value, self.qualifier)


def held_out(file: str) -> bool:
    """Whether a page is in the held-out half (deterministic: its file name's hash)."""
    return hashlib.sha256(file.encode()).digest()[0] % 2 == 1


def read_pages(dataset: Path, cache: Path | None) -> list[Page]:
    """Every page's title, lede and main text, extracted as the service does (cached in `cache`,
    outside the project, when given: extraction is most of the run)."""
    if cache is not None and cache.exists():
        return [Page(**p) for p in json.loads(cache.read_text())]
    cases = json.loads((dataset / "cases.json").read_text())
    pages = []
    for case in cases:
        html = gzip.decompress((dataset / case["file"]).read_bytes()).decode("utf-8", "replace")
        main = extract_main_text(html, case["url"])
        lede = find_lede(html).text
        pages.append(Page(case["file"], case["url"], main.title, lede, main.text))
    if cache is not None:
        cache.write_text(json.dumps([asdict(p) for p in pages]))
    return pages


def _git_files(repo: Path, prefix: str) -> dict[str, bytes]:
    """The files under `prefix` of `repo` (a work tree, or a bare git directory: its HEAD)."""
    if (repo / prefix).exists():
        base = repo / prefix
        files = [f for f in sorted(base.rglob("*")) if f.is_file()] if base.is_dir() else [base]
        return {str(f.relative_to(repo)): f.read_bytes() for f in files}
    git = ["git", "--git-dir", str(repo)]
    listed = subprocess.run(
        [*git, "ls-tree", "-r", "HEAD", prefix], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    blobs = [(line.split()[2], line.split("\t", 1)[1]) for line in listed]
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    out: dict[str, bytes] = {}
    at = 0
    for _, path in blobs:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        out[path] = batch[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
    return out


class _NewsItem:
    """The record the GVA corpus pickled (title, dct, uri, id, content)."""

    title: str
    dct: dt.date
    uri: str
    content: str


class _NewsItemOnly(pickle.Unpickler):
    """Unpickles a GVA `NewsItem` and nothing else: any other class is refused."""

    def find_class(self, module: str, name: str) -> type:
        if (module, name) == ("classes", "NewsItem"):
            return _NewsItem
        if (module, name) == ("datetime", "date"):
            return dt.date
        raise pickle.UnpicklingError(f"not a news item: {module}.{name}")


def read_gva(repo: Path) -> list[Page]:
    """The GVA corpus's news articles: headline, text and date as their outlet published them."""
    pages = []
    for path, raw in sorted(_git_files(repo, GVA_FOLDER).items()):
        item = _NewsItemOnly(io.BytesIO(raw)).load()
        file = path.removeprefix(GVA_FOLDER + "/")
        published = item.dct.isoformat() if isinstance(item.dct, dt.date) else ""
        pages.append(Page(file, item.uri, item.title, "", item.content, published))
    return pages


def read_gnad(repo: Path) -> list[Page]:
    """10kGNAD's test articles: one line each, teaser and body; each sentence made a paragraph
    (see the module docstring)."""
    raw = _git_files(repo, "test.csv")["test.csv"].decode("utf-8")
    pages = []
    for i, row in enumerate(csv.reader(io.StringIO(raw), delimiter=";", quotechar="'")):
        if len(row) < 2:
            continue
        category, text = row[0], row[1]
        paragraphs = "\n".join(sentences_of(text))
        pages.append(Page(f"test.csv:{i + 1}:{category}", "", "", "", paragraphs))
    return pages


_FRONT = re.compile(r"\A---\n(?P<front>.*?)\n---\n", re.S)
_LINK = re.compile(r"^\[(?P<title>[^\n]+)\]\((?P<url>https?://[^\s)]+)\)\s*$", re.M)
_IMAGE = re.compile(r"^!\[[^\n]*\]\([^\n]*\)\s*$", re.M)


def read_trends(repo: Path) -> list[Page]:
    """The German news articles of `nguyenvulebinh/trends` (posts tagged `entries DE`, not its
    English `llm` summaries): headline and URL from the post's link line, date from its front
    matter, text as the post holds it (the outlet's page as scraped, its ad placeholders kept)."""
    pages = []
    for path, raw in sorted(_git_files(repo, "_posts").items()):
        post = raw.decode("utf-8", "replace")
        front = _FRONT.match(post)
        if front is None or not re.search(r"^categories: entries DE$", front["front"], re.M):
            continue
        body = post[front.end() :]
        link = _LINK.search(body)
        if link is None:
            continue
        text = _IMAGE.sub("", body[link.end() :]).strip()
        date = re.search(r"^date: \w+, (\d+ \w+ \d{4})", front["front"], re.M)
        published = (
            datetime.strptime(date[1], "%d %b %Y").date().isoformat() if date is not None else ""
        )
        pages.append(Page(path, link["url"], link["title"], "", text, published))
    return pages


def read_corpus(corpus: str, dataset: Path, cache: Path | None) -> list[Page]:
    """The pages of `corpus` at `dataset` (cached in `cache`, outside the project, when given)."""
    if cache is not None and cache.exists():
        return [Page(**p) for p in json.loads(cache.read_text())]
    if corpus == "gva":
        pages = read_gva(dataset)
    elif corpus == "10kgnad":
        pages = read_gnad(dataset)
    elif corpus == "trends-de":
        pages = read_trends(dataset)
    else:
        return read_pages(dataset, cache)
    if cache is not None:
        cache.write_text(json.dumps([asdict(p) for p in pages]))
    return pages


def entries_of(page: Page, whole: bool = False) -> tuple[str, list[Entry]]:
    """The page's language (as the figure reading takes it) and its figure entries (`whole`:
    every figure of its main text, not only what a reader is shown)."""
    lede = page.lede or page.text[:300]
    o = without_links(
        OutletText(
            outlet=page.file,
            url=page.url,
            title=page.title,
            at=datetime(2026, 1, 1, tzinfo=UTC),
            text=page.text or page.lede,
            lede=page.lede,
            language=detect_language(f"{page.title}\n{lede}"),
        )
    )
    lang = o.language or text_language(o.text) or ""
    if whole:
        found = figures_of(o.text, lang or None) if lang in LANGUAGES else []
    else:
        published = dt.date.fromisoformat(page.published) if page.published else None
        found = reported(o.text, o.language or None, o.title, published)
    return lang, [
        Entry(page.file, lang, f.subject, number(f.value), f.qualifier, " ".join(f.clause.split()))
        for f in found
    ]


def read_labels(path: Path = LABELS) -> dict[tuple[str, str, str, str], str]:
    """(file, quantity, value, qualifier) -> "right" | "wrong"."""
    out: dict[tuple[str, str, str, str], str] = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        file, subject, value, qualifier, verdict = cells[:5]
        out[(file, subject, value, qualifier)] = verdict
    return out


def section_keys(path: Path, text: str) -> set[tuple[str, str, str, str]]:
    """The keys of the label rows below the `# --` header line containing `text` (up to the
    next `# --` header)."""
    keys: set[tuple[str, str, str, str]] = set()
    inside = False
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("# --"):
            inside = text in line
        elif inside and line.strip() and not line.startswith("#"):
            file, subject, value, qualifier = line.split("\t")[:4]
            keys.add((file, subject, value, qualifier))
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", type=Path, help="the corpus's folder or git directory")
    parser.add_argument(
        "--corpus", choices=CORPORA, default="extraction-dev", help="which corpus DATASET is"
    )
    parser.add_argument("--held-out", action="store_true", help="the held-out half, not dev")
    parser.add_argument(
        "--show", type=int, default=-1, metavar="N", help="entries printed per language (all)"
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="every figure of each main text, not only its lead's (a diagnostic: more entries)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="a JSON file of the extracted pages, outside the project: written once, then read",
    )
    parser.add_argument(
        "--section",
        default=None,
        metavar="TEXT",
        help="also score alone the label rows under the '# --' header containing TEXT",
    )
    args = parser.parse_args()
    pages = [
        p
        for p in read_corpus(args.corpus, args.dataset, args.cache)
        if held_out(p.file) == args.held_out
    ]
    pages.sort(key=lambda p: hashlib.sha256(p.file.encode()).hexdigest())
    labels_path = LABELS if args.corpus == "extraction-dev" else NEWS_LABELS
    labels = read_labels(labels_path)
    section = section_keys(labels_path, args.section) if args.section else set()
    read: Counter[str] = Counter()
    entries: list[Entry] = []
    for page in pages:
        lang, found = entries_of(page, args.whole)
        read[lang or "?"] += 1
        entries += found
    half = "held-out" if args.held_out else "dev"
    reading = "whole text (figures_of)" if args.whole else "what a reader is shown (reported)"
    print(f"{args.corpus}, {reading}; {half} half: {len(pages)} pages")
    print(f"pages read per language: {dict(read.most_common())}")
    for lang in LANGUAGES:
        mine = [e for e in entries if e.lang == lang]
        tally = Counter(labels.get(e.key, "unlabelled") for e in mine)
        shown = mine if args.show < 0 else mine[: args.show]
        print(f"\n{lang}: {read[lang]} pages read, {len(mine)} figure entries")
        for e in shown:
            verdict = labels.get(e.key, "?")
            print(f"  [{verdict}] {e.file}\t{e.subject}\t{e.value}\t{e.qualifier}\t| {e.clause}")
        scored = tally["right"] + tally["wrong"]
        precision = f"{tally['right'] / scored:.2f}" if scored else "n/a"
        print(
            f"  {lang} precision {precision}  (right {tally['right']}, wrong {tally['wrong']}, "
            f"unlabelled {tally['unlabelled']})"
        )
        if args.section:
            part = Counter(labels[e.key] for e in mine if e.key in section)
            scored = part["right"] + part["wrong"]
            precision = f"{part['right'] / scored:.2f}" if scored else "n/a"
            print(
                f"  {lang} section {args.section!r}: precision {precision}  "
                f"(right {part['right']}, wrong {part['wrong']})"
            )
    others = Counter(e.lang for e in entries if e.lang not in LANGUAGES)
    if others:
        print(f"\nentries in other languages (not scored): {dict(others)}")


if __name__ == "__main__":
    main()

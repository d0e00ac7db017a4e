"""Figure entries on real English and German pages (issue 38): what the story memory would tell a
reader ("at least 58 dead", with its clause) of each of extraction-dev's pages, against hand
labels, per language.

    .venv/bin/python bench/figures_real.py DATASET_DIR [--held-out] [--show N] [--whole]
        [--cache FILE]

DATASET_DIR: extraction-dev (990 real web pages from trafilatura's evaluation set, mostly German,
some English; `../shared/data/extraction-dev` beside the project), read there, never copied.
CL-TLS, which measures Spanish and French (`bench/story_memory_real.py`), has no German and its
English is not stored: this is English's and German's real-text measurement.

**Each page, through the service's own code**: its main text and title as the crawl extracts them
(`digest.fetch.maintext.extract_main_text`), its lede as the fast path finds it
(`digest.fetch.lede.find_lede`; the feed's lede in the service, which these pages have none of);
its language as the story memory tells an outlet's (`detect_language` of headline and lede,
`digest.jobs.story_memory.outlet_texts`); links stripped as the timeline does (`without_links`);
then `digest.summarize.figures.reported(text, language, title)`, as `story_events` calls it. Each
figure it gives is a "fact" entry a reader is shown: its clause (`Figure.clause`). `--whole`:
every figure of the main text instead (`figures_of`), not only its lead's, as a diagnostic: the
same rules on more of the real text, where pages of every kind give few figures in their leads.

**The split**: a page is dev when the first byte of the SHA-256 of its file name is even, else
held out (`--held-out`). Rules are tuned on dev entries only; the held-out half is labelled once
after the rules are final and reported as it comes.

**The labels** (`bench/labels/extraction_figures.tsv`, the rule at its top): one row per entry,
keyed by page file, quantity, value and qualifier, with "right" or "wrong". An entry without a row
is unlabelled (printed, counted apart, not scored). Pages are of every kind (blogs, institutions,
shops, news): most give no figure, and silence is not scored here (recall is CL-TLS's measure).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
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
from digest.summarize.claims import text_language  # noqa: E402
from digest.summarize.figures import figures_of, reported  # noqa: E402

LABELS = ROOT / "bench" / "labels" / "extraction_figures.tsv"
LANGUAGES = ("en", "de")


@dataclass(frozen=True, slots=True)
class Page:
    """A page as the service would hold it after a deep crawl."""

    file: str
    url: str
    title: str
    lede: str
    text: str


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
        found = reported(o.text, o.language or None, o.title)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", type=Path, help="extraction-dev's folder")
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
    args = parser.parse_args()
    pages = [p for p in read_pages(args.dataset, args.cache) if held_out(p.file) == args.held_out]
    labels = read_labels()
    read: Counter[str] = Counter()
    entries: list[Entry] = []
    for page in pages:
        lang, found = entries_of(page, args.whole)
        read[lang or "?"] += 1
        entries += found
    half = "held-out" if args.held_out else "dev"
    reading = "whole text (figures_of)" if args.whole else "what a reader is shown (reported)"
    print(f"{reading}; {half} half: {len(pages)} pages")
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
    others = Counter(e.lang for e in entries if e.lang not in LANGUAGES)
    if others:
        print(f"\nentries in other languages (not scored): {dict(others)}")


if __name__ == "__main__":
    main()

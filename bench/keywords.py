"""Keywords benchmark: names against frequent words, on real pages.

Run from the repository root (DATASET_DIR defaults to ../shared/data/extraction-dev, trafilatura's
evaluation pages, mostly German; read from there, never copied into the project):

    .venv/bin/python bench/keywords.py [DATASET_DIR] [--sample 100] [--seed 30] [--show 10]

A seeded sample of pages is read whole, its main text and title extracted as the service does
(`extract_main_text`), and given to both keyword methods:

- before: `frequent_terms`, the frequent content words and repeated pairs the digest showed;
- after: `keywords`, the names (people, places, organisations) first, frequent terms filling up.

Each keyword is put in one class, by how it is written: "name, 2+ words" (two or more words, every
one capitalized but for connectors such as "of" and "von"), "acronym" (one all-caps word),
"capitalized word" (one word with a capital: a name or, in German, any noun) or "common word"
(lowercase). The table gives each class's share of all keywords per method and language (German
as `detect_language` names it, and the rest), the mean number of keywords per page, and the
share of keywords the text and title do not write (case and whitespace aside: a phrase made of
two words that are not side by side, "Martinot Lagarde" for "Martinot-Lagarde"). Then
`--show` pages' keywords before and after, and the time per page of each method.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.facts.names import CONNECTORS  # noqa: E402
from digest.facts.text import searchable, words  # noqa: E402
from digest.fetch.decode import decode_html  # noqa: E402
from digest.fetch.maintext import extract_main_text  # noqa: E402
from digest.stories.language import detect_language  # noqa: E402
from digest.summarize.extractive import frequent_terms, keywords  # noqa: E402

DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "extraction-dev"
CLASSES = ("name, 2+ words", "acronym", "capitalized word", "common word")


def kind(keyword: str) -> str:
    ws = words(keyword)
    capped = [w for w in ws if w not in CONNECTORS]
    if len(capped) >= 2 and all(w[0].isupper() for w in capped):
        return CLASSES[0]
    if len(ws) == 1 and len(ws[0]) >= 2 and ws[0].isupper():
        return CLASSES[1]
    if len(ws) == 1 and ws[0][0].isupper():
        return CLASSES[2]
    return CLASSES[3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--show", type=int, default=10)
    args = parser.parse_args()

    cases = json.loads((args.dataset / "cases.json").read_text())
    sample = random.Random(args.seed).sample(cases, min(args.sample, len(cases)))
    pages = []
    for case in sample:
        html = decode_html(gzip.decompress((args.dataset / case["file"]).read_bytes()))
        main_text = extract_main_text(html, case["url"])
        if main_text.text.strip():
            lang = detect_language(f"{main_text.title}\n{main_text.text[:600]}")
            pages.append((case["url"], main_text.title, main_text.text, lang))
    keywords("warm up", "the language model")

    shares: dict[tuple[str, str], Counter[str]] = {}
    per_page: dict[tuple[str, str], list[int]] = {}
    unwritten: Counter[tuple[str, str]] = Counter()  # keywords the text and title do not write
    seconds: Counter[str] = Counter()
    shown: list[tuple[str, str, list[str], list[str]]] = []
    for url, title, text, lang in pages:
        group = "German" if lang == "de" else "other"
        results = {}
        for method, fn in (("before", frequent_terms), ("after", keywords)):
            started = time.perf_counter()
            results[method] = fn(text, title)
            seconds[method] += time.perf_counter() - started
            written = searchable(f"{text}\n{title}")
            for g in (group, "all"):
                shares.setdefault((method, g), Counter()).update(kind(k) for k in results[method])
                unwritten[method, g] += sum(searchable(k) not in written for k in results[method])
                per_page.setdefault((method, g), []).append(len(results[method]))
        shown.append((url, lang, results["before"], results["after"]))

    print(f"{len(pages)} pages with main text of {len(sample)} sampled (seed {args.seed})\n")
    head = f"{'method':<8} {'pages':<14}" + "".join(f"{c:>18}" for c in CLASSES)
    head += "   per page  unwritten"
    print(head)
    for group in ("all", "German", "other"):
        for method in ("before", "after"):
            counts = shares.get((method, group), Counter())
            total = sum(counts.values()) or 1
            n_pages = len(per_page.get((method, group), []))
            cells = "".join(f"{counts[c] / total:>18.0%}" for c in CLASSES)
            mean = sum(per_page.get((method, group), [0])) / max(1, n_pages)
            missing = unwritten[method, group] / total
            print(f"{method:<8} {f'{group} ({n_pages})':<14}{cells}   {mean:8.1f}  {missing:9.0%}")
    print()
    # German and other pages alternately, so the examples show both.
    german = [s for s in shown if s[1] == "de"]
    other = [s for s in shown if s[1] != "de"]
    mixed = [s for pair in zip(other, german, strict=False) for s in pair]
    for url, lang, before, after in mixed[: args.show]:
        print(f"{url} [{lang or '?'}]\n  before: {', '.join(before)}\n  after:  {', '.join(after)}")
    print()
    for method in ("before", "after"):
        print(f"{method}: {1000 * seconds[method] / max(1, len(pages)):.2f} ms a page")


if __name__ == "__main__":
    main()

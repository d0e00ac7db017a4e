"""Story memory benchmark: disagreements and corrections of figures, on real pages.

This half changes real pages' figures synthetically; bench/story_memory_real.py measures on real
multi-day reporting (CL-TLS, hand labels) and prints this table beside its own (issue 38).

Run from the repository root (DATASET_DIR defaults to ../shared/data/extraction-dev, trafilatura's
evaluation pages, mostly German; read from there, never copied into the project):

    .venv/bin/python bench/story_memory.py [DATASET_DIR] [--sample 300] [--seed 31]

A seeded sample of pages, main text extracted as the service does (`extract_main_text`); pages
with at least one figure whose subject `digest.facts.figures` tells are used. Each page's text
is outlet A; other outlets are copies of it, each as another outlet would retell it: a fifth of
its sentences left out, some sentences cut at their last comma before a number (less detail),
"about" put before some numbers. From each page:

- a *same* story: A and two such copies, nothing changed: every disagreement found is false;
- a *changed* story: A, a copy, and a copy with one or two figures changed (every occurrence of
  a figure, one digit made another: 30 → 70, 7.1% → 7.4%): each change is one true
  disagreement, anything else found is false;
- *revisions*: A and A with a figure changed, as one outlet's two versions;
- *corrections*: sent sentences of A (the one with the changed figure and up to two others with
  figures), then current reports: two copies with the new value (a correction is due), A's own
  new version with its revision alone (none due: one outlet's revision is not corroborated),
  A's revision and a copy with the new value (due), two unchanged copies (none due), one
  changed and one unchanged copy (a dispute: none due).

A found disagreement is true when two of its values are the changed figure's old and new
values; a correction when it is of the changed sentence. The baseline, in the same run: "any
differing number in aligned sentences" (each sentence of one outlet aligned to the sentence of
the other that shares most of its words, at least half; a disagreement where their numbers, as
the claim check reads them, differ; a correction where that holds for two current outlets, or
for the outlet that revised). Time: CPU (process time) per story, median: every outlet's figures
read and compared.

Measured on all 990 pages (`--sample 990`, seed 31; 584 with a figure whose subject is told;
2-core machine, 2 minutes; CPU ms per story, median). The rules were tuned on the default
300-page sample, part of these:

                           precision  recall    TP    FP    FN  CPU ms/story
    disagreements              0.970   0.954   700    22    34          4.98
      baseline                 0.210   0.894   656  2470    78          7.03
    revisions                  0.994   0.951   698     4    36          3.71
    corrections                0.982   0.886  1216    22   156          2.97
      baseline                 0.923   0.821  1126    94   246          1.33
    any number changed         0.934   0.339   198    14   386             -
      baseline                 0.329   0.872   509  1040    75             -

Ratios to the baseline: disagreements precision 4.62, recall 1.07, CPU 0.71; corrections
precision 1.06, recall 1.08. "any number changed": recall when any number the claim check reads
(not a 4-digit year) is changed once in a copy; most have no subject told, and go unseen. The
300-page default (seed 31): disagreements 0.991 / 0.964, corrections 0.974 / 0.877.

Issue 38 (corrections need a second outlet; figures in English and German only; the case of
one outlet's revision alone no longer due), 300-page default, seed 31, on a busy machine: 129
pages with a figure (was 141: pages in other languages have none now); disagreements 0.987 /
0.975, revisions 0.994 / 0.968, corrections 1.000 / 0.878 (0 false of 274; the baseline 0.647
/ 0.869). The real-reporting half is `bench/story_memory_real.py`.

Issue 38, closed vocabulary (a figure is a count of `figures.QUANTITIES`: dead, injured, ...;
no fine, price or percentage; Spanish and French rules added), 300-page default, seed 31: 5
pages with a figure (was 144); disagreements 1.000 / 1.000 (5 0 0), revisions 1.000 / 0.800,
corrections 1.000 / 0.400 (4 0 6). These pages are mostly not news of events: what they
measure now is that the closed vocabulary says nothing wrong, not how much it says.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.facts.claims import numbers_in, sentences_of  # noqa: E402
from digest.facts.figures import (  # noqa: E402
    Figure,
    corrections,
    disagreements,
    figures_of,
    revisions,
)
from digest.fetch.decode import decode_html  # noqa: E402
from digest.fetch.maintext import extract_main_text  # noqa: E402
from digest.models import Correction, Disagreement  # noqa: E402

DEFAULT_DATASET = ROOT.parent / "shared" / "data" / "extraction-dev"
DAY = date(2026, 12, 3)
_DIGITS = re.compile(r"\d+(?:[.,']\d+)*")
_WORDS = re.compile(r"[^\W\d_]{2,}")
# Where "about" can go: before a number after a lower-case word ("killed 12"), not inside a
# name ("Folge 35").
_ABOUT_BEFORE = re.compile(r"(?:^|\s)[a-zäöüß]+ (\d)")

# -- making outlets ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """A figure changed in a copy: its sentence in A, and the values before and after."""

    sentence: str
    old: frozenset[Decimal]
    new: frozenset[Decimal]


def _changed_digits(raw: str, rnd: random.Random) -> str:
    """`raw` with the first digit of its last group made another (never a leading zero)."""
    groups = list(re.finditer(r"\d+", raw))
    g = groups[-1]
    first = raw[g.start()]
    leading = g.start() == 0
    choices = [d for d in "0123456789" if d != first and not (leading and d == "0")]
    return raw[: g.start()] + rnd.choice(choices) + raw[g.start() + 1 :]


def change_figures(
    sentences: Sequence[str], figure: Figure, rnd: random.Random
) -> tuple[list[str], Change] | None:
    """The sentences with every occurrence of `figure` (its subject and value) changed."""
    out = list(sentences)
    new_raw = None
    old_values: frozenset[Decimal] = frozenset()
    new_values: frozenset[Decimal] = frozenset()
    for i, sentence in enumerate(sentences):
        for f in figures_of(sentence):
            if f.subject != figure.subject or f.value != figure.value:
                continue
            at = sentence.find(f.written)
            m = _DIGITS.search(f.written)
            if at < 0 or m is None:
                continue
            raw = m.group(0)
            if new_raw is None:
                new_raw = _changed_digits(raw, rnd)
            start = at + m.start()
            changed = sentence[:start] + new_raw + sentence[start + len(raw) :]
            before = [n for n in numbers_in(sentence) if n.start <= start < n.end]
            after = [n for n in numbers_in(changed) if n.start <= start < n.end]
            if not before or not after or before[0].values == after[0].values:
                return None
            old_values, new_values = before[0].values, after[0].values
            out[i] = changed
            break
    if new_raw is None:
        return None
    return out, Change(figure.sentence, old_values, new_values)


def retold(sentences: Sequence[str], keep: set[int], rnd: random.Random) -> str:
    """A copy as another outlet would write it: some sentences left out, some cut short
    before a number after their last comma, "about" before some numbers (`keep`: sentences
    left whole)."""
    out = []
    for i, s in enumerate(sentences):
        if i not in keep and rnd.random() < 0.2:
            continue
        if i not in keep and len(numbers_in(s)) >= 2 and rnd.random() < 0.3:
            cut = s.rfind(", ")
            if cut > 0 and any(n.start > cut for n in numbers_in(s)):
                s = s[:cut] + "."
        if i not in keep and rnd.random() < 0.2 and (m := _ABOUT_BEFORE.search(s)):
            s = s[: m.start(1)] + "about " + s[m.start(1) :]
        out.append(s)
    return " ".join(out)


# -- the baseline -------------------------------------------------------------------------------


def _values(sentence: str) -> frozenset[Decimal]:
    return frozenset(v for n in numbers_in(sentence) for v in n.values)


def _aligned(sentence: str, other: Sequence[str]) -> str | None:
    words = set(_WORDS.findall(sentence.casefold()))
    best, score = None, 0.0
    for s in other:
        theirs = set(_WORDS.findall(s.casefold()))
        if not words or not theirs:
            continue
        j = len(words & theirs) / len(words | theirs)
        if j > score:
            best, score = s, j
    return best if score >= 0.5 else None


def naive_disagreements(texts: Mapping[str, str]) -> list[tuple[frozenset[Decimal], ...]]:
    """Pairs of differing number sets in aligned sentences of two outlets."""
    split = {o: sentences_of(t) for o, t in texts.items()}
    found: set[tuple[frozenset[Decimal], frozenset[Decimal]]] = set()
    names = sorted(split)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for s in split[a]:
                mine = _values(s)
                if not mine:
                    continue
                other = _aligned(s, split[b])
                if other is None:
                    continue
                theirs = _values(other)
                if theirs and mine != theirs:
                    key = tuple(sorted((mine - theirs, theirs - mine), key=sorted))
                    found.add((key[0], key[1]))
    return list(found)


def naive_corrections(sent: Sequence[str], current: Mapping[str, str], needed: int) -> list[str]:
    out = []
    split = {o: sentences_of(t) for o, t in current.items()}
    for s in sent:
        mine = _values(s)
        differ = 0
        for sentences in split.values():
            other = _aligned(s, sentences)
            if other is not None and _values(other) and _values(other) != mine:
                differ += 1
        if mine and differ >= needed:
            out.append(s)
    return out


# -- scoring ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    seconds: list[float] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def _written_values(written: str) -> frozenset[Decimal]:
    return frozenset(v for n in numbers_in(written) for v in n.values)


def _matches(d: Disagreement, change: Change) -> bool:
    values = [_written_values(r.value) for r in d.reported]
    return any(not v.isdisjoint(change.old) for v in values) and any(
        not v.isdisjoint(change.new) for v in values
    )


def _naive_matches(pair: tuple[frozenset[Decimal], ...], change: Change) -> bool:
    a, b = pair
    return (not a.isdisjoint(change.old) and not b.isdisjoint(change.new)) or (
        not b.isdisjoint(change.old) and not a.isdisjoint(change.new)
    )


def score_found(
    score: Score,
    found: Sequence[object],
    changes: Sequence[Change],
    match: Callable[[object, Change], bool],
) -> None:
    hit = [any(match(f, c) for f in found) for c in changes]
    score.tp += sum(hit)
    score.fn += len(hit) - sum(hit)
    score.fp += sum(1 for f in found if not any(match(f, c) for c in changes))


def _corrections(
    sent: Sequence[tuple[date, str]],
    current: Mapping[str, str],
    revised: Mapping[str, Sequence[tuple[Figure, Figure]]] | None,
) -> list[Correction]:
    return corrections(sent, {o: figures_of(t) for o, t in current.items()}, revised)


def _score_sentences(score: Score, corrected: set[str], expected: set[str]) -> None:
    score.tp += len(corrected & expected)
    score.fn += len(expected - corrected)
    score.fp += len(corrected - expected)


def timed(score: Score, fn: Callable[[], object]) -> object:
    start = time.process_time()
    out = fn()
    score.seconds.append(time.process_time() - start)
    return out


# -- one page -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Scores:
    disagree: Score = field(default_factory=Score)
    disagree_naive: Score = field(default_factory=Score)
    revise: Score = field(default_factory=Score)
    correct: Score = field(default_factory=Score)
    correct_naive: Score = field(default_factory=Score)
    any_number: Score = field(default_factory=Score)
    any_number_naive: Score = field(default_factory=Score)


def _unambiguous(figures: Sequence[Figure]) -> list[Figure]:
    by: dict[str, set[Decimal]] = {}
    for f in figures:
        by.setdefault(f.subject, set()).add(f.value)
    seen: set[str] = set()
    out = []
    for f in figures:
        if len(by[f.subject]) == 1 and f.subject not in seen:
            seen.add(f.subject)
            out.append(f)
    return out


def page_story(text: str, rnd: random.Random, scores: Scores) -> bool:
    sentences = sentences_of(text)
    figures = _unambiguous(figures_of(text))
    if not figures:
        return False
    picked = rnd.sample(figures, min(len(figures), rnd.choice((1, 2))))
    changed_sentences: list[str] = list(sentences)
    changes: list[Change] = []
    for figure in picked:
        made = change_figures(changed_sentences, figure, rnd)
        if made is None:
            continue
        changed_sentences, change = made
        changes.append(change)
    if not changes:
        return False
    keep = {i for i, (a, b) in enumerate(zip(sentences, changed_sentences, strict=True)) if a != b}
    copy1 = retold(sentences, keep, rnd)
    copy2 = retold(sentences, keep, rnd)
    changed1 = retold(changed_sentences, keep, rnd)
    changed2 = retold(changed_sentences, keep, rnd)

    def found(texts: Mapping[str, str]) -> list[Disagreement]:
        return disagreements({o: figures_of(t) for o, t in texts.items()})

    # the same story: nothing to find
    same = {"A": text, "B": copy1, "C": copy2}
    scores.disagree.fp += len(timed(scores.disagree, lambda: found(same)))  # type: ignore[arg-type]
    scores.disagree_naive.fp += len(
        timed(scores.disagree_naive, lambda: naive_disagreements(same))  # type: ignore[arg-type]
    )
    # a figure changed in one copy
    story = {"A": text, "B": copy1, "C": changed1}
    got = timed(scores.disagree, lambda: found(story))
    score_found(scores.disagree, got, changes, _matches)  # type: ignore[arg-type]
    naive = timed(scores.disagree_naive, lambda: naive_disagreements(story))
    score_found(scores.disagree_naive, naive, changes, _naive_matches)  # type: ignore[arg-type]
    # the same outlet's text revised
    changed_text = " ".join(changed_sentences)
    pairs: list[tuple[Figure, Figure]] = timed(  # type: ignore[assignment]
        scores.revise, lambda: revisions(figures_of(text), figures_of(changed_text))
    )
    hit = [
        any(not a.values.isdisjoint(c.old) and not b.values.isdisjoint(c.new) for a, b in pairs)
        for c in changes
    ]
    scores.revise.tp += sum(hit)
    scores.revise.fn += len(hit) - sum(hit)
    scores.revise.fp += sum(
        1
        for a, b in pairs
        if not any(
            not a.values.isdisjoint(c.old) and not b.values.isdisjoint(c.new) for c in changes
        )
    )
    # corrections of sent sentences: due for those whose figure was changed
    changed_at = {sentences[i] for i in keep}
    first = changes[0].sentence
    others = [s for s in sentences if s != first and figures_of(s)]
    sent_sentences = [first, *rnd.sample(others, min(2, len(others)))]
    sent = [(DAY, s) for s in sent_sentences]
    expected = changed_at & set(sent_sentences)
    cases: list[tuple[dict[str, str], dict[str, list[tuple[Figure, Figure]]] | None, bool]] = [
        ({"B": changed1, "C": changed2}, None, True),
        # One outlet's revision alone is a disagreement, not a correction (issue 38): due
        # only when another outlet reports the new value too.
        ({"A": changed_text}, {"A": pairs}, False),
        ({"A": changed_text, "B": changed1}, {"A": pairs}, True),
        ({"B": copy1, "C": copy2}, None, False),
        ({"B": changed1, "C": copy1}, None, False),
    ]
    for current, revised, due in cases:
        made: list[Correction] = timed(  # type: ignore[assignment]
            scores.correct, functools.partial(_corrections, sent, current, revised)
        )
        _score_sentences(scores.correct, {c.sentence for c in made}, expected if due else set())
        naive: list[str] = timed(  # type: ignore[assignment]
            scores.correct_naive,
            functools.partial(naive_corrections, sent_sentences, current, 1 if revised else 2),
        )
        _score_sentences(scores.correct_naive, set(naive), expected if due else set())
    any_number(sentences, copy1, keep, rnd, scores)
    return True


def any_number(
    sentences: Sequence[str], copy1: str, keep: set[int], rnd: random.Random, scores: Scores
) -> None:
    """Recall when any number read as a claim (not a 4-digit year) is changed, once, in a copy:
    most have no subject this module tells, and go unseen."""
    spots = [
        (i, n)
        for i, s in enumerate(sentences)
        for n in numbers_in(s)
        if not re.fullmatch(r"1[89]\d\d|20\d\d", s[n.start : n.end])
    ]
    if not spots:
        return
    i, n = rnd.choice(spots)
    s = sentences[i]
    m = _DIGITS.search(s, n.start, n.end)
    if m is None:
        return
    changed = s[: m.start()] + _changed_digits(m.group(0), rnd) + s[m.end() :]
    after = [k for k in numbers_in(changed) if k.start <= m.start() < k.end]
    if not after or after[0].values == n.values:
        return
    change = Change(s, n.values, after[0].values)
    copy = retold([*sentences[:i], changed, *sentences[i + 1 :]], keep | {i}, rnd)
    story = {"A": " ".join(sentences), "B": copy1, "C": copy}
    found = disagreements({o: figures_of(t) for o, t in story.items()})
    score_found(scores.any_number, found, [change], _matches)  # type: ignore[arg-type]
    naive = naive_disagreements(story)
    score_found(scores.any_number_naive, naive, [change], _naive_matches)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    report(args.dataset, args.sample, args.seed)


def report(dataset: Path, size: int, seed: int) -> None:
    """Measure on a seeded sample of `size` pages of `dataset` and print the table (also run
    by bench/story_memory_real.py, beside the figures on real reporting)."""
    cases = json.loads((dataset / "cases.json").read_text())
    sample = random.Random(seed).sample(cases, min(size, len(cases)))
    rnd = random.Random(seed)
    scores = Scores()
    used = 0
    for case in sample:
        html = decode_html(gzip.decompress((dataset / case["file"]).read_bytes()))
        text = extract_main_text(html, case["url"]).text
        if text.strip() and page_story(text, rnd, scores):
            used += 1

    def ms(s: Score) -> float:
        return 1000 * statistics.median(s.seconds) if s.seconds else 0.0

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}" if b else "-"

    print(f"{len(sample)} pages sampled, {used} with a figure whose subject is told (seed {seed})")
    print()
    print(
        f"{'':22} {'precision':>9} {'recall':>7} {'TP':>5} {'FP':>5} {'FN':>5} {'CPU ms/story':>13}"
    )
    rows = (
        ("disagreements", scores.disagree),
        ("  baseline", scores.disagree_naive),
        ("revisions", scores.revise),
        ("corrections", scores.correct),
        ("  baseline", scores.correct_naive),
        ("any number changed", scores.any_number),
        ("  baseline", scores.any_number_naive),
    )
    for name, s in rows:
        print(
            f"{name:22} {s.precision:9.3f} {s.recall:7.3f} {s.tp:5} {s.fp:5} {s.fn:5} "
            + (f"{ms(s):13.2f}" if s.seconds else f"{'-':>13}")
        )
    print()
    d, n = scores.disagree, scores.disagree_naive
    c, cn = scores.correct, scores.correct_naive
    print(
        "figures / baseline: disagreements precision "
        f"{ratio(d.precision, n.precision)}, recall {ratio(d.recall, n.recall)}, "
        f"CPU {ratio(ms(d), ms(n))}; corrections precision {ratio(c.precision, cn.precision)}, "
        f"recall {ratio(c.recall, cn.recall)}"
    )


if __name__ == "__main__":
    main()

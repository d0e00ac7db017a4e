"""What checking a summary's claims against its sources costs.

    .venv/bin/python -m bench.claims [--rounds 200] [--words 900] [--baseline-ref REF]

A 20-sentence summary against 3 sources of about `--words` words each (news articles from the
test news web, put together until long enough): the median time of `check_summary` (the sources
indexed and the summary checked), and of its two halves, indexing the sources and checking a
summary against an index built once, and the same for claims.py at `--baseline-ref` (loaded
apart, as bench/hostile.py does) with the ratio, in the same run. Half of the summary's
sentences are copied from the sources, the others reworded, some with a figure or a name that
the sources do not have.

Measured here on a busy 2-core machine (sources of 1,070, 908 and 976 words, 20 sentences): a
median 13.3 ms for check_summary, 11.5 ms of it indexing the sources, 1.5 ms checking; the
verdict found 26 of 30 claims and removed the 2 sentences with the 4 invented ones. With numbers
written as words read (`--rounds 40 --baseline-ref 1d2fb6b`, the machine busier still): 36 of
40 claims found (the 10 more are words such as "eleven fires", all found), same 2 sentences
removed; check_summary a median 180 ms against 120 ms for 1d2fb6b in the same run (1.50x),
indexing 132 against 128 ms, checking 24.6 against 12.1 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from types import ModuleType

from digest.facts import claims
from digest.facts.text import split_sentences
from tests.newsweb import ARTICLES

REWORDED = [
    "Halvard Microsystems is spending 4.2 billion euros on its third plant on the Elbe.",
    "The company expects its first wafers in 2028 and plans to hire 1,800 people.",
    "Velora is recalling around 60,000 battery packs after eleven fires.",
    "Velora's parent company lost 4% in morning trading.",
    "Dock workers at Valmora ended their strike on Sunday after 82% backed the deal.",
    "The court in Kestria ordered a recount after a margin of 212 votes.",
    "The lab's model has 1.3bn parameters and was trained for eleven days.",
    "Fibre for the villages would have cost over €30 million, the minister said.",
    "Analysts at Brackenridge Partners expect 3,400 job cuts.",  # invented
    "The recount will cost $12 million, Judge Amara Osei said.",  # invented
]


def sources(words: int) -> list[str]:
    texts = ["\n\n".join([a.lede, *a.paragraphs]) for a in ARTICLES if a.lede.isascii()]
    out: list[str] = []
    for k in range(3):
        parts: list[str] = []
        i = k
        while sum(len(p.split()) for p in parts) < words:
            parts.append(texts[i % len(texts)])
            i += 3
        out.append("\n\n".join(parts))
    return out


def summary(srcs: list[str]) -> str:
    copied = [s for src in srcs for s in split_sentences(src)][::7][:10]
    return " ".join(s for pair in zip(copied, REWORDED, strict=False) for s in pair)


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="timed runs of each step")
    parser.add_argument("--words", type=int, default=900, help="words in each of the 3 sources")
    parser.add_argument("--baseline-ref", help="git ref of claims.py to compare with")
    args = parser.parse_args()

    srcs = sources(args.words)
    text = summary(srcs)
    print(f"3 sources of {', '.join(str(len(s.split())) for s in srcs)} words")
    ours = measure("ours", claims, srcs, text, args.rounds)
    if args.baseline_ref:
        from bench.hostile import old_claims

        old = measure(args.baseline_ref, old_claims(args.baseline_ref), srcs, text, args.rounds)
        print(f"ours / {args.baseline_ref}: {ours / old:.2f} (check_summary, medians)")


def measure(label: str, module: ModuleType, srcs: list[str], text: str, rounds: int) -> float:
    """Print and return the median ms of `module.check_summary` (and of its two halves)."""
    result = module.check_summary(text, srcs)
    module.check_summary(text[:200], srcs[:1])  # first use loads the language model
    index = module.SourceIndex(srcs)
    print(f"{label}: summary of {len(result.sentences)} sentences, {len(text.split())} words")
    print(f"  verdict: {result.describe()}")
    whole = median_ms(lambda: module.check_summary(text, srcs), rounds)
    indexing = median_ms(lambda: module.SourceIndex(srcs), rounds)
    checking = median_ms(lambda: index.check(text), rounds)
    print(f"  check_summary: median {whole:.2f} ms over {rounds} runs")
    print(
        f"  indexing the sources: {indexing:.2f} ms; checking against the index: {checking:.2f} ms"
    )
    return whole


if __name__ == "__main__":
    main()

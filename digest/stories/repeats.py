"""Which of a category's stories, best first, are its top stories: not a minor one, not a repeat.

Clustering keeps apart what it is not sure of (precision first), so a big event leaves pieces:
a few headlines worded unlike the bulk ("Grown-ups: put down the smartphones at mealtime"
beside "Parents pay attention to their phones more than their kids"). Ranked on their own, the
pieces filled a category's top slots under the story they belong to (clustering-dev, health:
slots 3-5 of 5). Two rules keep them out of the top, in the order shown:

- minor: a story that scores less than `MINOR_SHARE` (1/12) of the category's best is not a top
  story. Beside a story told by 47 outlets, an item of 3 is not one of the day's biggest; beside
  one of 3, an item of 1 still is (a third). On clustering-dev's health the second labelled
  story's biggest piece scores 0.109 of the lead (5 outlets; 0.273 fed from a Google News
  feed) and every other piece 0.068 or less: any share from 1/14 to 1/10 holds them apart in
  both feeds, and 1/12 sits between, a fifth to a third from either end. The cost, further
  down a long top: at k = 20, 3 of business's smaller labelled stories (bench/front_page.py);
- repeat: a story whose term centroid's cosine with a top story above reaches
  `REPEAT_SIMILARITY` (0.3) repeats it. A story is the mean of its titles' TF-IDF unit vectors
  in clustering's own space (`digest.stories.cluster`: word stems and character n-grams, weighed
  as a pair's similarity weighs them, a term counted once per story of the list); 0.3 is
  clustering's own join threshold (0.28) rounded up: a repeat is as close as a join. Lower
  thresholds took distinct stories of one market for repeats (clustering-dev's business, top
  20: 0.25 held one distinct story out, 0.2 one or two; 0.3 none, and it held out one piece
  of the Bank of England story under that story).

Neither rule removes a story: it stays listed after the top, its headlines among the others.
Pure and deterministic: the answer depends on the stories, their scores and their order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from digest.stories.cluster import GRAM_WEIGHT, IDF_PRIOR, Features

MINOR_SHARE = 1 / 12
REPEAT_SIMILARITY = 0.3

Vector = dict[str, float]


def story_vectors(stories: Sequence[Sequence[str]]) -> list[Vector]:
    """Each story's (its titles') term centroid, unit length; IDF over the stories given."""
    features = [[Features.build(title, "") for title in titles] for titles in stories]
    stem_df: Counter[str] = Counter()
    gram_df: Counter[str] = Counter()
    for story in features:
        stem_df.update({t for f in story for t in f.stems})
        gram_df.update({t for f in story for t in f.grams})
    n = len(stories)

    def idf(d: int) -> float:
        return math.log((1 + n + IDF_PRIOR) / (1 + d)) + 1

    out = []
    for story in features:
        centroid: dict[str, float] = {}
        for f in story:
            for prefix, counts, df, share in (
                ("s:", f.stems, stem_df, 1 - GRAM_WEIGHT),
                ("g:", f.grams, gram_df, GRAM_WEIGHT),
            ):
                for term, w in _unit(counts, df, idf).items():
                    key = prefix + term
                    centroid[key] = centroid.get(key, 0.0) + w * math.sqrt(share)
        norm = math.sqrt(sum(w * w for w in centroid.values()))
        out.append({t: w / norm for t, w in centroid.items()} if norm else {})
    return out


def _unit(
    counts: Mapping[str, float], df: Mapping[str, int], idf: Callable[[int], float]
) -> Vector:
    """TF-IDF of one title, unit length, as clustering weighs it (a repeated term damped)."""
    weights = {t: (1 + math.log(c) if c > 1 else c) * idf(df[t]) for t, c in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {t: w / norm for t, w in weights.items()} if norm else {}


def cosine(a: Vector, b: Vector) -> float:
    if len(b) < len(a):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def top_picks(
    scores: Sequence[float],
    titles: Sequence[Sequence[str]],
    *,
    limit: int,
    similarity: float = REPEAT_SIMILARITY,
    minor_share: float = MINOR_SHARE,
) -> list[int]:
    """The indexes of the top stories (at most `limit`) among stories shown best first, each
    given by its score and its articles' titles: the first ones neither minor nor a repeat."""
    if limit <= 0 or not scores:
        return []
    floor = round(max(scores[0], 0.0) * minor_share, 9)
    vectors = story_vectors(titles)  # weights over all of them, as clustering's over a window
    kept: list[int] = []
    for i, s in enumerate(scores):
        if len(kept) >= limit:
            break
        if round(s, 9) < floor:
            continue  # minor
        if not any(round(cosine(vectors[i], vectors[k]), 9) >= similarity for k in kept):
            kept.append(i)
    return kept

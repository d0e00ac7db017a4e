"""Which articles tell the same story: pure clustering of headlines, across outlets and runs.

Similarity. Each article becomes a TF-IDF vector of the character 3-grams of the content words of
its title and of the first `TEXT_WORDS` words of its text (lede or snippet): see
`digest.stories.tokens`. Character n-grams match across inflection and compounds in any language
("quake"/"earthquake", "Zinsen"/"Leitzins", "Japan"/"Japan's") where whole words do not. IDF is
taken over the articles given, a category's window, so the words of that day's category weigh
little; `IDF_PRIOR` virtual articles that contain none of the n-grams keep a handful of articles
from giving extreme weights (without them, three reports of one event in an empty window looked
less alike than the same three among forty other headlines). Two articles are linked when the
cosine of their vectors reaches the threshold (StoriesConfig.similarity, 0.35: on the headline
sets of tests/headlines.py, reports of one event link at 0.39 and above, the closest unrelated
pair sits at 0.35), or when their titles are identical (same content words, at least
`MIN_TITLE_KEY_TERMS` of them).

Linkage. Links are taken strongest first (single link in Kruskal order) under three rules:
- an article that already belongs to a story keeps it: stories are never split;
- two existing stories are never merged: a new article like both joins the closer one;
- a story spans at most the window, from its earliest to its latest article, so a recurring
  headline ("Markets wrap") cannot chain day after day into one endless story.

Everything is ordered by article id, and links by (similarity, ids), before any decision: the
result does not depend on the order of the input.

Speed. Pairs are only compared when they share at least `MIN_SHARED_TERMS` word stems, found
through an inverted index. A stem in more than `max(BLOCK_MIN_DF, N * BLOCK_DF_FRACTION)` articles
pairs each article only with its `NEIGHBOURS` next ones in time (sorted-neighbourhood blocking):
a big story's common words still connect its articles without comparing all pairs. The n-gram
cosine (~300 features an article) is only computed for pairs whose TF-IDF cosine over word stems
(~40 features) reaches `WORD_GATE`; reports of one event in the test sets are at 0.15 and above.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import combinations

from digest.stories.tokens import grams, stem, words

# Only the start of the text: a lede's first sentences carry the event, later ones drift.
TEXT_WORDS = 60
GRAM = 3
# Identical titles always tell the same story, unless they are too generic to say so.
MIN_TITLE_KEY_TERMS = 2
MIN_SHARED_TERMS = 2
BLOCK_MIN_DF = 30
BLOCK_DF_FRACTION = 0.01
NEIGHBOURS = 5
WORD_GATE = 0.1
IDF_PRIOR = 30

Vector = Mapping[str, float]


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """One outlet's article as clustering sees it."""

    id: int
    title: str
    text: str = ""  # the lede, else the snippet
    first_seen: datetime
    published: datetime | None = None
    outlet: str = ""
    story_id: int | None = None  # the story it was put in by an earlier run

    @property
    def when(self) -> datetime:
        """When the article counts as news: its publication time, else when it was first seen."""
        return self.published or self.first_seen


@dataclass(frozen=True, slots=True)
class Group:
    """One story after clustering: an existing one (`story_id`) or a new one (None)."""

    story_id: int | None
    article_ids: tuple[int, ...]  # every member among the input, ascending
    new_article_ids: tuple[int, ...]  # members that had no story before this clustering
    representative_id: int  # the member most like the others; its title names the story

    @property
    def is_new(self) -> bool:
        return self.story_id is None


@dataclass(frozen=True, slots=True)
class Clustering:
    """The stories of one clustering: existing ones by id, then new ones by first article id."""

    groups: tuple[Group, ...]

    @property
    def created(self) -> tuple[Group, ...]:
        return tuple(g for g in self.groups if g.story_id is None)

    @property
    def grown(self) -> tuple[Group, ...]:
        """Existing stories that gained members (the caller decides if that makes them updated)."""
        return tuple(g for g in self.groups if g.story_id is not None and g.new_article_ids)

    def partition(self) -> frozenset[frozenset[int]]:
        return frozenset(frozenset(g.article_ids) for g in self.groups)


def cluster_reports(
    reports: Iterable[Report], *, window: timedelta, similarity: float
) -> Clustering:
    """Group `reports` into stories. `similarity` is the cosine threshold (0..1)."""
    items = sorted(reports, key=lambda r: r.id)
    ids = [r.id for r in items]
    if len(set(ids)) != len(ids):
        raise ValueError("article ids must be unique")
    for r in items:
        _require_aware(r.first_seen, r.id)
        if r.published is not None:
            _require_aware(r.published, r.id)
    if not 0 < similarity <= 1:
        raise ValueError(f"similarity must be in (0, 1], not {similarity}")

    features = [_Features.of(r) for r in items]
    vectors = _tfidf([f.grams for f in features])
    word_vectors = _tfidf([f.stems for f in features])
    edges = _edges(items, features, vectors, word_vectors, window, similarity)
    forest = _Forest(items)
    for _, i, j in sorted(edges):
        forest.link(i, j, window)
    return _groups(items, vectors, forest)


def vectorize(docs: Sequence[tuple[str, str]]) -> list[dict[str, float]]:
    """The unit-length vectors that `cluster_reports` compares, for (title, text) pairs."""
    return _tfidf([_Features.build(title, text).grams for title, text in docs])


def cosine(a: Vector, b: Vector) -> float:
    return sum(a[t] * b[t] for t in a.keys() & b.keys())


@dataclass(frozen=True, slots=True)
class _Features:
    grams: Counter[str]  # character n-gram counts, title and lead together
    stems: Counter[str]  # word stem counts, for blocking and the cheap first comparison
    title_key: tuple[str, ...]  # the title's stems, in order

    @classmethod
    def of(cls, report: Report) -> _Features:
        return cls.build(report.title, report.text)

    @classmethod
    def build(cls, title: str, text: str) -> _Features:
        title_words = words(title)
        all_words = title_words + words(" ".join(text.split()[:TEXT_WORDS]))
        counts: Counter[str] = Counter()
        for word in all_words:
            counts.update(grams(word, GRAM))
        return cls(
            grams=counts,
            stems=Counter(stem(w) for w in all_words),
            title_key=tuple(stem(w) for w in title_words),
        )


def _tfidf(counts: Sequence[Counter[str]]) -> list[dict[str, float]]:
    df: Counter[str] = Counter()
    for tf in counts:
        df.update(tf.keys())
    n = len(counts)
    idf = {term: math.log((1 + n + IDF_PRIOR) / (1 + d)) + 1 for term, d in df.items()}
    vectors = []
    for tf in counts:
        weights = {t: (1 + math.log(c)) * idf[t] for t, c in tf.items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        vectors.append({t: w / norm for t, w in weights.items()} if norm else {})
    return vectors


def _edges(
    items: Sequence[Report],
    features: Sequence[_Features],
    vectors: Sequence[Vector],
    word_vectors: Sequence[Vector],
    window: timedelta,
    threshold: float,
) -> list[tuple[float, int, int]]:
    """(-similarity, i, j) for every pair that may be linked, i < j."""
    postings: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(features):
        for term in f.stems:
            postings[term].append(i)
    max_df = max(BLOCK_MIN_DF, int(len(items) * BLOCK_DF_FRACTION))
    shared: Counter[tuple[int, int]] = Counter()
    for docs in postings.values():
        if len(docs) <= max_df:
            shared.update(combinations(docs, 2))  # docs ascending, so i < j
            continue
        by_time = sorted(docs, key=lambda i: (items[i].when, i))
        for k, i in enumerate(by_time):
            for j in by_time[k + 1 : k + 1 + NEIGHBOURS]:
                shared[min(i, j), max(i, j)] += 1

    sims: dict[tuple[int, int], float] = {}
    for (i, j), count in shared.items():
        if (
            count >= MIN_SHARED_TERMS
            and abs(items[i].when - items[j].when) <= window
            and cosine(word_vectors[i], word_vectors[j]) >= WORD_GATE
        ):
            # Rounded: the order of a float sum (set order, hash-seeded) must not decide anything.
            sim = round(cosine(vectors[i], vectors[j]), 9)
            if sim >= threshold:
                sims[i, j] = sim

    by_title: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, f in enumerate(features):
        if len(f.title_key) >= MIN_TITLE_KEY_TERMS:
            by_title[f.title_key].append(i)
    for docs in by_title.values():
        for i, j in combinations(docs, 2):
            if abs(items[i].when - items[j].when) <= window:
                sims[i, j] = 1.0
    return [(-sim, i, j) for (i, j), sim in sims.items()]


class _Forest:
    """Union-find over article indexes; each root knows its story and its time span."""

    def __init__(self, items: Sequence[Report]) -> None:
        self.parent = list(range(len(items)))
        self.story = [r.story_id for r in items]
        self.first = [r.when for r in items]
        self.last = [r.when for r in items]
        by_story: dict[int, int] = {}
        for i, r in enumerate(items):
            if r.story_id is None:
                continue
            if r.story_id in by_story:
                self._union(by_story[r.story_id], i)
            else:
                by_story[r.story_id] = i

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:  # path compression
            self.parent[i], i = root, self.parent[i]
        return root

    def link(self, i: int, j: int, window: timedelta) -> None:
        a, b = self.find(i), self.find(j)
        if a == b:
            return
        if self.story[a] is not None and self.story[b] is not None:
            return  # two existing stories stay apart
        if max(self.last[a], self.last[b]) - min(self.first[a], self.first[b]) > window:
            return
        self._union(a, b)

    def _union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a == b:
            return
        if b < a:
            a, b = b, a
        self.parent[b] = a
        self.story[a] = self.story[a] if self.story[a] is not None else self.story[b]
        self.first[a] = min(self.first[a], self.first[b])
        self.last[a] = max(self.last[a], self.last[b])


def _groups(items: Sequence[Report], vectors: Sequence[Vector], forest: _Forest) -> Clustering:
    members: dict[int, list[int]] = defaultdict(list)
    for i in range(len(items)):
        members[forest.find(i)].append(i)
    groups = []
    for root, idx in members.items():
        groups.append(
            Group(
                story_id=forest.story[root],
                article_ids=tuple(items[i].id for i in idx),
                new_article_ids=tuple(items[i].id for i in idx if items[i].story_id is None),
                representative_id=items[_representative(idx, items, vectors)].id,
            )
        )
    groups.sort(key=lambda g: (g.story_id is None, g.story_id or 0, g.article_ids[0]))
    return Clustering(tuple(groups))


def _representative(idx: Sequence[int], items: Sequence[Report], vectors: Sequence[Vector]) -> int:
    """The member with the highest total similarity to the others; ties: earliest, lowest id."""
    if len(idx) == 1:
        return idx[0]
    total = dict.fromkeys(idx, 0.0)
    for i, j in combinations(idx, 2):
        sim = cosine(vectors[i], vectors[j])
        total[i] += sim
        total[j] += sim
    # Rounded: float sums in another order must not pick another representative.
    return min(idx, key=lambda i: (-round(total[i], 9), items[i].when, items[i].id))


def _require_aware(value: datetime, article_id: int) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"article {article_id}: naive datetime {value.isoformat()}")

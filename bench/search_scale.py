"""`digest search` at archive scale on PostgreSQL: 100,000 and 1,000,000 articles in one run.

    .venv/bin/python -m bench.search --scale                  # 100,000 and 1,000,000
    .venv/bin/python -m bench.search --scale --sizes 100000   # one size
    .venv/bin/python -m bench.search --scale --rebuild        # generate and load again
    .venv/bin/python -m bench.search --scale --explain        # EXPLAIN ANALYZE the slowest
    .venv/bin/python -m bench.search --scale --without-pairs  # beside: phrases as before 0011

1. Text from real news: headlines from `--headlines` (clustering-dev: 2,145 real headlines) and
   the main-text snippets of `--snippets` (extraction-dev's cases.json: 990 pages, mostly German,
   some English) are read by path and turned into word-bigram chains, one for headlines, one for
   English prose, one for German prose. Generated titles and ledes are walks of those chains:
   real word pairs, real names, real diacritics. Real text is small (some 12,000 distinct
   words), so a tail of made-up names (`TAIL_WORDS`, drawn by a Zipf law) stands in for one
   token in 25: a million articles name many more people and places than 2,145 headlines.
   Per article: a title of 6-14 words, a lede of ~300 characters (90%; the rest failed
   extraction) and its first 170 as the snippet, a main text of 1,500-6,000 characters for
   `--text-fraction` (10%: only the top stories are crawled), a summary for
   `--summary-fraction` (5%), 15% in German; 6 categories; published over 365 days, in order;
   stories of 1-6 articles (half of the articles join a recent story of their category).
2. Load: into the database `digest_bench_search` (created if missing), one schema per size,
   migrated by `open_store` as the service would, then COPY (the tsvector trigger indexes each
   row as it arrives), the articles' secondary indexes dropped before and rebuilt after, then
   VACUUM ANALYZE. Cached: a later run whose size, seed and generator match reuses the schema
   (and `open_store` applies any newer migration to it, timed: an upgrade of a full archive).
3. Queries: ~40 of 12 kinds, their words picked from the generated text by document frequency
   (common, middling, rare, made-up), through `Store.search` (limit 10), the same call
   `digest search` makes. One warm-up round, then `--repeats` rounds, the sizes alternating.
   Median and p95 over all runs, per kind, per query; the matching articles per query.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import random
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.search import NOW, Query, count_matches, p95, progress, search_once
from digest.store import Store, content_hash, open_store
from digest.store.search_backends import PostgresBackend
from digest.store.search_query import COMMON

PG_HOST, PG_PORT = "127.0.0.1", 5432
DATABASE = "digest_bench_search"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # ../shared/data
DAYS = 365
CATEGORIES = ("technology", "finance", "entertainment", "sports", "world", "health")
GENERATOR = "scale-4"  # change when the generated text changes: cached archives are rebuilt
TAIL_WORDS = 150_000
TAIL_SHARE = 0.04
GERMAN_SHARE = 0.15
_GERMAN = frozenset(
    "der die das und ist nicht mit sich auf für den dem des ein eine zu von im".split()
)
_ENGLISH = frozenset("the and of to is in for that with on are was this".split())
_WORD = re.compile(r"[\w'’.-]+|[,;:]")

# -- Text from real news ------------------------------------------------------------------------


@dataclass
class Chain:
    """Word bigrams of real sentences: a walk is a plausible sentence of real word pairs."""

    starts: list[str] = field(default_factory=list)
    next: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def learn(self, sentence: str) -> None:
        words = _WORD.findall(sentence)
        if len(words) < 3:
            return
        self.starts.append(words[0])
        for a, b in zip(words, [*words[1:], ""], strict=True):
            self.next[a].append(b)

    def walk(self, rng: random.Random, low: int, high: int) -> list[str]:
        out = [rng.choice(self.starts)]
        want = rng.randint(low, high)
        while len(out) < want:
            follow = self.next.get(out[-1])
            word = rng.choice(follow) if follow else ""
            if not word:
                if len(out) >= low:
                    break
                word = rng.choice(self.starts)
            out.append(word)
        return out


@dataclass
class Corpus:
    titles: Chain
    english: Chain
    german: Chain
    tail: list[str]
    tail_cum: list[float]
    outlets: list[str]


def load_corpus(headlines: Path, snippets: Path) -> Corpus:
    titles, english, german = Chain(), Chain(), Chain()
    outlets: list[str] = []
    with headlines.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            titles.learn(row["TITLE"])
            english.learn(row["TITLE"])
            outlets.append(row["PUBLISHER"])
    for case in json.loads(snippets.read_text(encoding="utf-8")):
        for snippet in case["with"]:
            for sentence in re.split(r"(?<=[.!?])\s+", snippet):
                words = {w.lower() for w in sentence.split()}
                if len(words & _GERMAN) > len(words & _ENGLISH):
                    german.learn(sentence)
                elif words & _ENGLISH:
                    english.learn(sentence)
    rng = random.Random(7)
    taken: set[str] = set()
    tail: list[str] = []
    onsets = "b c d f g h k l m n p r s t v z br tr st pr gr".split()
    vowels = "a e i o u a e o ia ou".split()
    while len(tail) < TAIL_WORDS:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.choice((2, 3))))
        word += rng.choice("n r l s t m nd rt st x k".split()) if rng.random() < 0.7 else ""
        if word not in taken and 5 <= len(word) <= 12:
            taken.add(word)
            tail.append(word.capitalize())
    cum: list[float] = []
    total = 0.0
    for rank in range(1, TAIL_WORDS + 1):
        total += 1.0 / (rank + 100)  # Zipf-Mandelbrot: no one made-up name in every story
        cum.append(total)
    return Corpus(titles, english, german, tail, cum, sorted(set(outlets)))


class Writer:
    """Titles and prose from pools of chain walks (generated once: walking per article would
    take half an hour at a million), each sentence with its own made-up name now and then."""

    POOL = 60_000

    def __init__(self, corpus: Corpus, rng: random.Random) -> None:
        self.c = corpus
        self.rng = rng
        pool_rng = random.Random(11)
        self.pools = {
            (kind, german): [
                chain.walk(pool_rng, low, high)
                for _ in range(self.POOL if not german else self.POOL // 3)
            ]
            for kind, german, chain, low, high in (
                ("title", False, corpus.titles, 6, 14),
                ("title", True, corpus.german, 6, 12),
                ("prose", False, corpus.english, 8, 30),
                ("prose", True, corpus.german, 8, 30),
            )
        }

    def _sentence(self, kind: str, german: bool) -> str:
        rng, c = self.rng, self.c
        words = rng.choice(self.pools[(kind, german)])
        if rng.random() < TAIL_SHARE * len(words):
            words = list(words)
            words[rng.randrange(len(words))] = c.tail[_draw(c.tail_cum, rng.random())]
        return _join(words)

    def title(self, german: bool) -> str:
        return self._sentence("title", german)

    def prose(self, german: bool, chars: int) -> str:
        out: list[str] = []
        length = 0
        while length < chars:
            sentence = self._sentence("prose", german)
            sentence = sentence[0].upper() + sentence[1:]
            out.append(sentence if sentence[-1] in ".!?" else sentence + ".")
            length += len(out[-1]) + 1
        return " ".join(out)


def _draw(cum: Sequence[float], u: float) -> int:
    lo, hi, target = 0, len(cum) - 1, u * cum[-1]
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _join(words: list[str]) -> str:
    return re.sub(r" ([,;:])", r"\1", " ".join(words))


@dataclass(frozen=True, slots=True)
class Row:
    story: int
    title: str
    source: str
    category: str
    published: datetime
    snippet: str
    lede: str
    text: str | None
    summary_text: str | None
    german: bool


def generate(corpus: Corpus, n: int, seed: int, text_share: float, summary_share: float):
    """The archive in publication order, with its stories: (story id, category, Row)."""
    rng = random.Random(seed)
    writer = Writer(corpus, rng)
    open_stories: dict[str, list[int]] = {c: [] for c in CATEGORIES}
    next_story = 1
    start = NOW - timedelta(days=DAYS)
    step = DAYS * 86400 / n
    for i in range(n):
        category = rng.choice(CATEGORIES)
        recent = open_stories[category]
        if recent and rng.random() < 0.5:
            story = rng.choice(recent)
        else:
            story = next_story
            next_story += 1
            recent.append(story)
            if len(recent) > 30:
                recent.pop(0)
        german = rng.random() < GERMAN_SHARE
        published = start + timedelta(seconds=(i + rng.random()) * step)
        lede_text = writer.prose(german, 300)
        lede = lede_text if rng.random() < 0.9 else ""
        snippet = lede_text[:170].rsplit(" ", 1)[0] + "…"
        body = summary = None
        if rng.random() < text_share:
            body = writer.prose(german, rng.randint(1500, 6000))
            if rng.random() < summary_share / text_share:
                sentences = re.split(r"(?<=[.!?]) ", body)
                summary = " ".join(sentences[:1]) + " " + " ".join(sentences[:4])
        yield Row(
            story,
            writer.title(german),
            rng.choice(corpus.outlets),
            category,
            published,
            snippet,
            lede,
            body,
            summary,
            german,
        )


# -- Load -----------------------------------------------------------------------------------------


def _admin_connect(dbname: str) -> Any:
    import psycopg

    return psycopg.connect(
        host=PG_HOST, port=PG_PORT, user="postgres", dbname=dbname, autocommit=True
    )


def ensure_database() -> None:
    with _admin_connect("postgres") as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
            return
        conn.execute(f'CREATE DATABASE "{DATABASE}"')


def store_url(schema: str) -> str:
    return (
        f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/{DATABASE}"
        f"?options=-csearch_path%3D{schema}"
    )


def signature(args: argparse.Namespace, n: int) -> str:
    return json.dumps(
        [GENERATOR, n, args.seed, args.text_fraction, args.summary_fraction], sort_keys=True
    )


def cached(schema: str, sig: str) -> dict[str, Any] | None:
    with _admin_connect(DATABASE) as conn:
        found = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".bench_meta',)).fetchone()
        if found is None or found[0] is None:
            return None
        row = conn.execute(f'SELECT value FROM "{schema}".bench_meta WHERE key = %s', ("sig",))
        got = row.fetchone()
        if got is None or got[0] != sig:
            return None
        meta = conn.execute(f'SELECT key, value FROM "{schema}".bench_meta').fetchall()
        return {k: v for k, v in meta}


def build(args: argparse.Namespace, corpus: Corpus, n: int, schema: str) -> dict[str, Any]:
    """A fresh schema of `n` articles, loaded with COPY: returns its load figures."""
    with _admin_connect(DATABASE) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{schema}"')
    open_store(store_url(schema)).close()  # the service's own migrations make the tables
    started = time.perf_counter()
    with _admin_connect(DATABASE) as conn:
        conn.execute(f'SET search_path = "{schema}"')
        indexes = conn.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = %s "
            "AND i.tablename = 'articles' AND NOT EXISTS (SELECT 1 FROM pg_constraint c "
            "WHERE c.conname = i.indexname)",
            (schema,),
        ).fetchall()
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        # Stories are known once their articles are: their foreign key waits for both.
        foreign = conn.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = 'articles'::regclass AND contype = 'f'"
        ).fetchall()
        for name, _ in foreign:
            conn.execute(f'ALTER TABLE articles DROP CONSTRAINT "{name}"')
        stories: dict[int, list[Any]] = {}
        columns = (
            "id, url, original_url, title, source, category, published, snippet, lede, "
            "extract_status, http_status, origin, first_seen, last_seen, fetched_at, story_id, "
            "text, text_hash, crawled_at, crawl_status, fetched_by, summary_text"
        )
        german = 0
        with conn.cursor() as cur, cur.copy(f"COPY articles ({columns}) FROM STDIN") as copy:
            rows = generate(corpus, n, args.seed, args.text_fraction, args.summary_fraction)
            for i, row in enumerate(rows, 1):
                seen = row.published + timedelta(minutes=5)
                slug = "-".join(re.findall(r"\w+", row.title.lower())[:6])
                url = f"https://{_host(row.source)}/{row.category}/{seen:%Y/%m/%d}/{slug}-{i}"
                crawled = seen + timedelta(minutes=10) if row.text else None
                copy.write_row(
                        (
                            i, url, url, row.title, row.source, row.category, row.published,
                            row.snippet, row.lede, "ok" if row.lede else "error",
                            200 if row.lede else 403, "ddg:news", seen, seen, seen,
                            row.story, row.text,
                            content_hash(row.text) if row.text else None, crawled,
                            "ok" if row.text else None, "http" if row.text else None,
                            row.summary_text,
                        )
                    )  # fmt: skip
                german += row.german
                story = stories.get(row.story)
                if story is None:
                    stories[row.story] = [row.category, row.title, seen, seen, 1]
                else:
                    story[3] = seen
                    story[4] += 1
                if i % 50_000 == 0:
                    took = time.perf_counter() - started
                    progress(f"{schema}: {i:,}/{n:,} rows, {took:,.0f} s")
        copied = time.perf_counter() - started
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY stories (id, category, title, first_seen, last_seen, updated_at, "
                "article_count, outlet_count, score) FROM STDIN"
            ) as copy,
        ):
            for sid, (cat, title, first, last, count) in stories.items():
                copy.write_row((sid, cat, title, first, last, last, count, count, 0.0))
        conn.execute("SELECT setval(pg_get_serial_sequence('articles', 'id'), %s)", (n,))
        conn.execute("SELECT setval(pg_get_serial_sequence('stories', 'id'), %s)", (max(stories),))
        t_index = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '256MB'")
        for name, definition in indexes:
            t0 = time.perf_counter()
            conn.execute(definition)
            progress(f"{schema}: index {name} in {time.perf_counter() - t0:,.0f} s")
        for name, definition in foreign:
            conn.execute(f'ALTER TABLE articles ADD CONSTRAINT "{name}" {definition}')
        indexed = time.perf_counter() - t_index
        t_vac = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) articles")
        conn.execute("VACUUM (ANALYZE) stories")
        vacuumed = time.perf_counter() - t_vac
        meta = {
            "sig": signature(args, n),
            "copy_s": f"{copied:.1f}",
            "index_s": f"{indexed:.1f}",
            "vacuum_s": f"{vacuumed:.1f}",
            "stories": str(len(stories)),
            "german": str(german),
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        conn.execute("CREATE TABLE bench_meta (key text PRIMARY KEY, value text)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO bench_meta VALUES (%s, %s)", list(meta.items()))
    return meta


def _host(source: str) -> str:
    return (re.sub(r"[^a-z0-9]+", "", source.lower()) or "news") + ".example"


def sizes(schema: str) -> dict[str, float]:
    with _admin_connect(DATABASE) as conn:
        conn.execute(f'SET search_path = "{schema}"')
        total = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (schema,),
        ).fetchone()
        indexes = conn.execute(
            "SELECT indexname, pg_relation_size(format('%%I.%%I', schemaname, indexname)) "
            "FROM pg_indexes WHERE schemaname = %s AND tablename = 'articles'",
            (schema,),
        ).fetchall()
        heap = conn.execute("SELECT pg_table_size('articles')").fetchone()
    out = {"total_mb": float(total[0]) / 1e6, "articles_mb": float(heap[0]) / 1e6}
    for name, size in indexes:
        out[f"index {name}"] = float(size) / 1e6
    return out


# -- Queries --------------------------------------------------------------------------------------


KINDS = (
    "common word",
    "middling word",
    "rare word",
    "made-up name",
    "two words",
    "phrase",
    "diacritics",
    "OR",
    "exclusion",
    "category",
    "since",
    "any_word",
    "no match",
)


def pick_queries(corpus: Corpus, args: argparse.Namespace) -> list[Query]:
    """Words by document frequency in a sample of the generated archive (its first 20,000)."""
    df: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    umlauts: Counter[str] = Counter()
    tails: Counter[str] = Counter()
    tail_set = set(corpus.tail)
    sample = 20_000
    for row in generate(corpus, sample, args.seed, args.text_fraction, args.summary_fraction):
        doc = f"{row.title} {row.lede}"
        words = re.findall(r"[^\W\d_]+", doc)
        # dicts, not sets: the words (and so the queries) must not depend on PYTHONHASHSEED
        lower = dict.fromkeys(w.lower() for w in words)
        unique = dict.fromkeys(words)
        df.update(w for w in lower if w not in COMMON and len(w) > 3 and w.isascii())
        for a, b in itertools.pairwise(words):
            if all(w.lower() not in COMMON and len(w) > 2 and w.isascii() for w in (a, b)):
                pairs[(a.lower(), b.lower())] += 1
        umlauts.update(w for w in unique if re.search("[äöüßéÄÖÜ]", w) and len(w) > 4)
        tails.update(w for w in unique if w in tail_set)
    tail_lower = {w.lower() for w in tail_set}
    ranked = [w for w, _ in df.most_common() if w.isalpha() and w not in tail_lower]

    def at(share: float) -> str:
        """The word found in about `share` of the articles."""
        target = share * sample
        return min(ranked, key=lambda w: abs(df[w] - target))

    common1, common2, common3 = ranked[0], ranked[3], ranked[10]
    mid1, mid2, mid3 = at(0.01), at(0.003), at(0.001)
    rare1, rare2 = at(0.0003), at(0.0001)
    made_up = [w for w, _ in tails.most_common()]
    tail_common, tail_rare = made_up[0], made_up[len(made_up) // 2]
    phrases = [" ".join(p) for p, _ in pairs.most_common(40)]
    umlaut_words = [w for w, _ in umlauts.most_common(20)]
    u1, u2 = umlaut_words[0], umlaut_words[5]
    month, week = NOW - timedelta(days=30), NOW - timedelta(days=7)
    return [
        Query("common word", common1),
        Query("common word", common2),
        Query("common word", common3),
        Query("middling word", mid1),
        Query("middling word", mid2),
        Query("middling word", mid3),
        Query("rare word", rare1),
        Query("rare word", rare2),
        Query("made-up name", tail_common),
        Query("made-up name", tail_rare),
        Query("made-up name", corpus.tail[-1]),
        Query("two words", f"{common1} {mid1}"),
        Query("two words", f"{mid1} {mid2}"),
        Query("two words", f"{common2} {tail_rare}"),
        Query("phrase", f'"{phrases[0]}"'),
        Query("phrase", f'"{phrases[10]}"'),
        Query("phrase", f'"{phrases[30]}"'),
        Query("phrase", f'"{common1} {common2} {common3}"'),
        Query("diacritics", u1),
        Query("diacritics", u2),
        Query("diacritics", _strip(u1)),
        Query("OR", f"{mid1} OR {mid2}"),
        Query("OR", f"{rare1} OR {rare2} OR {tail_rare}"),
        Query("OR", f"{common1} OR {common3}"),
        Query("exclusion", f"{common1} -{common2}"),
        Query("exclusion", f"{mid1} -{common1}"),
        Query("category", common1, category="health"),
        Query("category", mid2, category="sports"),
        Query("category", f'"{phrases[0]}"', category="technology"),
        Query("since", common1, since=week),
        Query("since", mid1, since=month),
        Query("since", f"{common2} {mid2}", category="finance", since=month),
        Query("any_word", f"what is the latest on {mid1} and {rare1}", any_word=True),
        Query("any_word", f"why did {common3} {mid3} happen", any_word=True),
        Query("no match", "qzxvjykw"),
        Query("no match", f'"{common3} {common2} {common1}"'),
        Query("no match", f"{rare1} {rare2}"),
    ]


def _strip(word: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


# -- Run ------------------------------------------------------------------------------------------


@dataclass
class Archive:
    n: int
    schema: str
    store: Store
    meta: dict[str, Any]
    upgrade_s: float
    pairs: bool = True  # False: phrases tested without the pairs index (as before migration 0011)
    runs: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    matches: dict[int, int] = field(default_factory=dict)
    hits: dict[int, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.n:,}" + ("" if self.pairs else " no pairs")

    def search(self, q: Query) -> tuple[float, list[str]]:
        if self.pairs:
            return search_once(self.store, q)
        # The same search with no pairs asked for: the phrase test reads every row with the words.
        adjacent = PostgresBackend.adjacent
        PostgresBackend.adjacent = lambda self, conn: None  # type: ignore[method-assign]
        try:
            return search_once(self.store, q)
        finally:
            PostgresBackend.adjacent = adjacent  # type: ignore[method-assign]


def explain(archive: Archive, q: Query) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of every statement one search runs."""
    from sqlalchemy import event

    plans: list[str] = []
    statements: list[tuple[str, Any]] = []

    def grab(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(("SELECT", "WITH", "SET")):
            statements.append((statement, parameters))

    event.listen(archive.store.engine, "before_cursor_execute", grab)
    try:
        search_once(archive.store, q)
    finally:
        event.remove(archive.store.engine, "before_cursor_execute", grab)
    with archive.store.engine.connect() as conn:
        for statement, parameters in statements:
            cursor = conn.connection.driver_connection.cursor()
            if statement.lstrip().upper().startswith("SET"):  # SET LOCAL: as the search ran
                cursor.execute(statement, parameters)
                continue
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {statement}", parameters)
            plans.append("\n".join(r[0] for r in cursor.fetchall()))
    return "\n\n".join(plans)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="bench.search --scale", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--text-fraction", type=float, default=0.10)
    parser.add_argument("--summary-fraction", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the 3 slowest")
    parser.add_argument(
        "--without-pairs",
        action="store_true",
        help="also search each archive without the adjacent-pairs index (as before 0011)",
    )
    parser.add_argument("--headlines", type=Path, default=DATA / "clustering-dev" / "headlines.csv")
    parser.add_argument("--snippets", type=Path, default=DATA / "extraction-dev" / "cases.json")
    args = parser.parse_args(list(argv))
    wall = time.perf_counter()
    corpus = load_corpus(args.headlines, args.snippets)
    qs = pick_queries(corpus, args)
    ensure_database()
    archives: list[Archive] = []
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            schema = f"scale_{n}"
            meta = None if args.rebuild else cached(schema, signature(args, n))
            if meta is None:
                progress(f"{schema}: generating and loading {n:,} articles")
                meta = build(args, corpus, n, schema)
            else:
                progress(f"{schema}: cached, built {meta['built_at']}")
            started = time.perf_counter()
            store = open_store(store_url(schema))  # applies newer migrations, if any
            upgrade_s = time.perf_counter() - started
            archives.append(Archive(n, schema, store, meta, upgrade_s))
            if args.without_pairs:
                archives.append(Archive(n, schema, store, meta, upgrade_s, pairs=False))
        for i, q in enumerate(qs):
            for a in archives:
                a.search(q)
                a.matches[i] = count_matches(a.store, q)
        for round_ in range(args.repeats):
            for i, q in enumerate(qs):
                order = archives if (round_ + i) % 2 == 0 else archives[::-1]
                for a in order:
                    seconds, urls = a.search(q)
                    a.runs[i].append(seconds)
                    a.hits[i] = len(urls)
            progress(f"round {round_ + 1}/{args.repeats} done")
        report(args, archives, qs, time.perf_counter() - wall)
        if args.explain:
            big = archives[-1]
            slowest = sorted(range(len(qs)), key=lambda i: -statistics.median(big.runs[i]))[:3]
            for i in slowest:
                print(f"\n--- EXPLAIN at {big.n:,}: {qs[i].kind}: {qs[i].label()}")
                print(explain(big, qs[i]))
    finally:
        for a in archives:
            a.store.close()
    return 0


def report(args: argparse.Namespace, archives: list[Archive], qs: list[Query], wall: float) -> None:
    print()
    print("=" * 100)
    print("digest search at scale on PostgreSQL (Store.search, limit 10)")
    print("=" * 100)
    with _admin_connect("postgres") as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
        settings = {
            k: conn.execute(f"SHOW {k}").fetchone()[0]
            for k in ("shared_buffers", "work_mem", "effective_cache_size", "random_page_cost")
        }
    print(f"PostgreSQL {version}; " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print(
        f"text from {args.headlines} and {args.snippets}; seed {args.seed}; main texts "
        f"{args.text_fraction:.0%}, summaries {args.summary_fraction:.0%}, German "
        f"{GERMAN_SHARE:.0%}; {len(qs)} queries x {args.repeats} runs after a warm-up; "
        f"whole run {wall / 60:,.1f} min"
    )
    header = f"{'figure':<34}" + "".join(f"{a.name:>16}" for a in archives)
    print()
    print(header)
    print("-" * len(header))

    def line(label: str, values: Sequence[str]) -> None:
        print(f"{label:<34}" + "".join(f"{v:>16}" for v in values))

    line("load: COPY (+ tsvector trigger)", [f"{float(a.meta['copy_s']):,.0f} s" for a in archives])
    line("load: rebuild indexes", [f"{float(a.meta['index_s']):,.0f} s" for a in archives])
    line("load: VACUUM ANALYZE", [f"{float(a.meta['vacuum_s']):,.0f} s" for a in archives])
    line("open_store (newer migrations)", [f"{a.upgrade_s:,.1f} s" for a in archives])
    line("stories", [f"{int(a.meta['stories']):,}" for a in archives])
    measured = [sizes(a.schema) for a in archives]
    for key in sorted({k for m in measured for k in m}):
        line(f"size: {key}"[:34], [f"{m.get(key, 0):,.0f} MB" for m in measured])

    def ms(v: float) -> str:
        return f"{v * 1000:,.1f} ms"

    def all_runs(a: Archive, kind: str | None = None) -> list[float]:
        return [t for i, q in enumerate(qs) if kind in (None, q.kind) for t in a.runs[i]]

    line("search: median, all runs", [ms(statistics.median(all_runs(a))) for a in archives])
    line("search: p95, all runs", [ms(p95(all_runs(a))) for a in archives])
    line("search: max, all runs", [ms(max(all_runs(a))) for a in archives])
    for kind in KINDS:
        if any(q.kind == kind for q in qs):
            line(f"  median {kind}", [ms(statistics.median(all_runs(a, kind))) for a in archives])
    for a in archives:
        if not a.pairs:  # the same archive with the pairs index, measured in the same rounds
            b = next(b for b in archives if b.n == a.n and b.pairs)
            ratios = [
                f"{f(all_runs(a, kind)) / f(all_runs(b, kind)):.2f}"
                for f, kind in (
                    (statistics.median, None),
                    (p95, None),
                    (statistics.median, "phrase"),
                )
            ]
            print(
                f"{a.n:,}: without / with the pairs index: median x{ratios[0]}, p95 x{ratios[1]}, "
                f"median phrase x{ratios[2]}"
            )
    print()
    print("per query: median ms / matching articles")
    print(f"{'kind':<14}{'query':<44}" + "".join(f"{a.name:>22}" for a in archives))
    for i, q in enumerate(qs):
        cells = "".join(
            f"{statistics.median(a.runs[i]) * 1000:>10,.1f} /{a.matches[i]:>10,}" for a in archives
        )
        print(f"{q.kind:<14}{q.label()[:43]:<44}{cells}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

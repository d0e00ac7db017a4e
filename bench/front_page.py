"""Front page benchmark: does a category's top k lead with the day's biggest stories, once each?

    .venv/bin/python -m bench.front_page --dataset ../shared/data/clustering-dev/headlines.csv
    .venv/bin/python -m bench.front_page --dataset PATH.csv --top 5 --collects 24
    .venv/bin/python -m bench.front_page --dataset PATH.csv --feed google-news
    .venv/bin/python -m bench.front_page --dataset PATH.csv --via cli

The CSV has the columns of the UCI "News Aggregator" data: ID, TITLE, URL, PUBLISHER, CATEGORY,
STORY, HOSTNAME, TIMESTAMP (milliseconds since the epoch); it is read from PATH, never copied.
`PUBLISHER` is the outlet, `STORY` the labelled story.

What runs is the service's own path, through a real store: for each category, its busiest 24 h
(the 24 h from one of its headlines that hold the most of them) go into a fresh SQLite store in a
temporary folder as collected items, then `digest.jobs.clustering.cluster_category` forms the
stories as `deepen` does (the default `[stories]` config: words alone) and `top_stories` ranks them
as `deepen` and `publish` do, at the end of the 24 h. `--collects N` splits the 24 h into N
collects, each followed by a clustering (default 1: one collect and one deepen at the end, as the
issue measured it from outside). How the items are fed (`--feed`):
- `publisher` (default): each row as an item with its title, URL and the publisher as source,
  published at its timestamp: what collect should hand over once outlets come from the item;
- `google-news`: the rows as one Google News search feed (title "TITLE - PUBLISHER", an opaque
  news.google.com link, `<source url>` PUBLISHER, pubDate) read by the service's feed parser
  (`digest.fetch.feed_parser.parse_feed`): what collect hands over today from such a feed.

`--via cli` runs the commands a user runs instead: `digest collect`, `deepen` and `stories
--json` on a Google News- and a Bing News-shaped feed of each category's day, served on
127.0.0.1, inside a network namespace with only loopback (`bench.front_page_cli` says how, and
how the 2014 rows are moved to today); its table puts the order `stories --json` prints beside
the in-process path's on the same feed (`--feed` and `--collects` do not apply).

Scores of the top k (`--top`, default 5). A story's label is the majority label of its headlines
(ties: the label with more headlines in the window, then the smaller label). Its gain is the
number of distinct publishers of that labelled story in the window, and 0 when a story higher up
had the same label (a duplicate). nDCG@k = DCG / ideal DCG, DCG = sum of gain / log2(rank + 1),
the ideal being the window's labelled stories ordered by distinct publishers. Beside the service's
order, two baselines rank the same stored stories in the same run: newest first (the newest
headline, then the lower story id) and most headlines first (then newest, then lower id). "CPU s":
`time.process_time` of the service's part (`cluster_category` and `top_stories`); feeding the
store (parsing, upserts) is timed apart. "Left out": the stories `top_stories` passed over as
minor or as repeats (`digest.stories.top_picks`) among those ranked above its last slot (all,
when it found fewer than k), and how many distinct labels among them no top story has: labelled
stories wrongly left out.

Figures on clustering-dev (business: 1,117 headlines and 20 labelled stories in its busiest 24 h
from 11 March 2014 17:35 UTC; health: 84 headlines, 2 stories), k = 5, on the 2-core machine
(duplicates: of the 5 top slots of each category). Now, with outlets from the item, the ranking
of digest/stories/rank.py (outlets, growth, languages, recency) and top stories that leave out
minor stories and repeats (digest/stories/repeats.py); CPU s of three runs at one collect, two
at 24:

    feed         collects  ranking               business      health      mean   CPU s
                                                nDCG@5 dup   nDCG@5 dup   nDCG@5
    publisher    1         service               0.997  0     1.000  0     0.999   0.78-0.91
                           newest first          0.394  3     0.308  4     0.351
                           most headlines first  1.000  0     1.000  3     1.000
                 24        service               0.997  0     1.000  0     0.999   6.3-7.2
                           most headlines first  1.000  0     1.000  3     1.000
    google-news  1         service               0.998  0     1.000  0     0.999   0.77-0.89
                           newest first          0.360  3     0.308  4     0.334
                           most headlines first  0.952  0     1.000  3     0.976
                 24        service               0.983  0     1.000  0     0.991   6.8-7.2
                           most headlines first  0.983  0     1.000  3     0.991

(newest first is the same at 24 collects.) Health's top is two stories, its two labelled ones:
its other 21 stories (17 from the Google News feed), pieces of those two of 1-5 headlines, score
under 1/12 of the lead (47 outlets). No labelled story was wrongly left out in these runs, nor
at k = 10 (service 0.997 and 0.996 against most headlines first 0.998 and 0.985, with 8
duplicates of 20); there only the minor rule left stories out. Further down it costs: at k = 20
from the Google News feed, business's top is 19 stories and 3 smaller labelled stories fall
under 1/12 of the lead (115 outlets); two pieces of the Bank of England story
(14 and 11 outlets, centroid cosine under 0.3) remain duplicates (nDCG@20 0.967 against 0.964,
2 duplicates of 40 against 19). From the publisher's items at k = 20 the repeat rule leaves one
piece of that story out (16 outlets, "Carney: RBS might have to leave..."), one stays.
Business's top 5 are its five biggest labelled stories once each; where most headlines first
scores higher (publisher, 1.000 against 0.997) it puts the Bank of England story (113
headlines, 70 outlets, 95 publishers in its label, some in pieces apart) above the Men's
Wearhouse story (101 headlines, 85 outlets, 90 publishers): by its own outlets the service
orders them the other way. At 24 collects from the Google News feed, clustering each hour
splits the US stocks story, and both rankings put Fannie Mae (60 publishers) fifth instead
(0.983). Clustering is the same as before (bench/clustering.py, full set: B-cubed precision
0.910, recall 0.632, F1 0.746, before and after).

Before (the first run, one collect: every story could be a top story, ranked by outlets and
recency; from the Google News feed, every item's outlet was the feed's name):

    feed         ranking               business      health      mean   CPU s
                                      nDCG@5 dup   nDCG@5 dup   nDCG@5
    publisher    service               0.997  0     1.000  3     0.999   1.0
                 newest first          0.394  3     0.308  4     0.351
                 most headlines first  1.000  0     1.000  3     1.000
    google-news  service               0.360  3     0.308  4     0.334   1.5
                 newest first          0.360  3     0.308  4     0.334
                 most headlines first  0.957  0     1.000  3     0.978

With the publisher as source, the ranking by distinct outlets found the five biggest business
stories, once each; health's slots 3-5 held pieces of its two stories (3-5 headlines each, the
clustering's recall), duplicates that cost no nDCG. Fed from a Google News feed, every item's
outlet was the feed ("business - Google News") and its host news.google.com: every story had one
outlet, the service's order came down to newest first, and 7 of 10 slots repeated a story, as
the issue measured on held-out data (nDCG@5 0.25 and 0.43).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import StoriesConfig  # noqa: E402
from digest.errors import InvalidURLError  # noqa: E402
from digest.fetch.feed_parser import parse_feed  # noqa: E402
from digest.jobs.clustering import cluster_category, top_stories  # noqa: E402
from digest.models import Extract, Headline, Item, StoryView  # noqa: E402
from digest.store import Store, canonical_url, open_store  # noqa: E402
from digest.stories import best_first  # noqa: E402

DAY = timedelta(hours=24)
# The UCI data's category codes, as a reader's categories would be named.
CATEGORY_NAMES = {"b": "business", "t": "technology", "e": "entertainment", "m": "health"}
ORIGIN = "feed:https://news.example/bench.rss"
GOOGLE_NEWS = "https://news.google.com/rss/search?q=bench&hl=en-US&gl=US&ceid=US:en"
UNKNOWN = "(none)"  # the label of a story none of whose headlines is a row (never expected)


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    title: str
    url: str
    publisher: str
    category: str
    story: str
    seen: datetime


def read_rows(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as f:
        return [
            Row(
                id=r["ID"],
                title=r["TITLE"],
                url=r["URL"],
                publisher=r["PUBLISHER"].strip(),
                category=CATEGORY_NAMES.get(r["CATEGORY"], r["CATEGORY"]),
                story=r["STORY"],
                seen=datetime.fromtimestamp(int(r["TIMESTAMP"]) / 1000, UTC),
            )
            for r in csv.DictReader(f)
        ]


def busiest_day(rows: Sequence[Row]) -> tuple[datetime, list[Row]]:
    """The start of the 24 h (from one of the rows) that hold the most rows, and those rows; the
    earliest such 24 h on a tie."""
    ordered = sorted(rows, key=lambda r: (r.seen, r.id))
    best, best_count, end = 0, 0, 0
    for start, row in enumerate(ordered):
        while end < len(ordered) and ordered[end].seen < row.seen + DAY:
            end += 1
        if end - start > best_count:
            best, best_count = start, end - start
    return ordered[best].seen, ordered[best : best + best_count]


# The service's part


@dataclass(frozen=True, slots=True)
class Served:
    stories: list[StoryView]  # every story of the 24 h, in no order
    top: list[StoryView]  # the service's top k
    skipped: int  # rows whose URL the store refused
    feed_cpu: float
    service_cpu: float


def item(row: Row) -> Item:
    headline = Headline(
        title=row.title,
        url=row.url,
        source=row.publisher,
        published=row.seen,
        category=row.category,
        origin=ORIGIN,
    )
    return Item(headline=headline, extract=Extract(url=row.url))


def google_news_link(row: Row) -> str:
    """An opaque link as Google News gives one, leading to the article through a redirect."""
    return f"https://news.google.com/rss/articles/CBMi{row.id}?oc=5"


def google_news_feed(category: str, rows: Sequence[Row]) -> bytes:
    """The rows as a Google News search feed shows them: "TITLE - PUBLISHER", an opaque link,
    the publisher in `<source url>`."""
    entries = "".join(google_news_entry(r) for r in rows)
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>{escape(category)} - Google News</title><link>https://news.google.com</link>"
        f"<description>Google News</description>{entries}</channel></rss>"
    ).encode()


def google_news_entry(row: Row) -> str:
    link = f"<a href={quoteattr(row.url)}>{escape(row.title)}</a>"
    return (
        f"<item><title>{escape(f'{row.title} - {row.publisher}')}</title>"
        f"<link>{escape(google_news_link(row))}</link>"
        f'<guid isPermaLink="false">{row.id}</guid>'
        f"<pubDate>{format_datetime(row.seen, usegmt=True)}</pubDate>"
        f"<description>{escape(link)}</description>"
        f"<source url={quoteattr(host_url(row.url))}>{escape(row.publisher)}</source></item>"
    )


def host_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def fed(category: str, rows: Sequence[Row], how: str) -> list[Item]:
    """The rows as collect hands them to the store: straight (the publisher as source), or
    through the service's feed parser from a Google News-shaped feed."""
    if how == "publisher":
        return [item(r) for r in rows]
    parsed = parse_feed(google_news_feed(category, rows), feed_url=GOOGLE_NEWS, category=category)
    return [Item(headline=h, extract=Extract(url=h.url)) for h in parsed.headlines]


def serve(
    store: Store,
    category: str,
    rows: Sequence[Row],
    start: datetime,
    *,
    top: int,
    collects: int,
    how: str,
) -> Served:
    """Collect the rows in `collects` rounds over the 24 h from `start` (fed as `how` says),
    cluster after each as `deepen` does, and rank the category's stories at the end as
    `top_stories` does."""
    config = StoriesConfig()
    feed_cpu = service_cpu = 0.0
    skipped = 0
    pending = sorted(rows, key=lambda r: (r.seen, r.id))
    for n in range(1, collects + 1):
        now = start + DAY * n / collects
        batch = [r for r in pending if r.seen < now or n == collects]
        pending = pending[len(batch) :]
        started = time.process_time()
        skipped += store.upsert_items(fed(category, batch, how), seen_at=now).skipped
        feed_cpu += time.process_time() - started
        started = time.process_time()
        cluster_category(store, category, now=now, config=config)
        service_cpu += time.process_time() - started
    end = start + DAY
    started = time.process_time()
    ranked = top_stories(store, category, since=end - DAY, limit=top)
    service_cpu += time.process_time() - started
    stories = store.stories_since(category, since=end - DAY)
    return Served(stories, ranked, skipped, feed_cpu, service_cpu)


# Scores


class Labels:
    """The labelled stories of one category's 24 h, and the label of a stored story."""

    def __init__(self, rows: Sequence[Row], link: Callable[[Row], str]) -> None:
        self.rows_of_url: dict[str, list[Row]] = defaultdict(list)
        publishers: dict[str, set[str]] = defaultdict(set)
        self.size: Counter[str] = Counter()
        for row in rows:
            publishers[row.story].add(row.publisher.casefold())
            self.size[row.story] += 1
            # Stored under the aggregator's link, or the article's own when the feed gives it.
            for url in {link(row), row.url}:
                with contextlib.suppress(InvalidURLError):  # the store skips it too
                    self.rows_of_url[canonical_url(url)].append(row)
        self.gain = {story: len(names) for story, names in publishers.items()}

    def label(self, story: StoryView) -> str:
        """The majority label of the story's headlines (ties: the bigger label, then the
        smaller label)."""
        votes = Counter(r.story for a in story.articles for r in self.rows_of_url.get(a.url, ()))
        return min(votes, key=lambda s: (-votes[s], -self.size[s], s), default=UNKNOWN)

    def ideal(self, k: int) -> float:
        return dcg(sorted(self.gain.values(), reverse=True)[:k])


def dcg(gains: Iterable[int]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


@dataclass(frozen=True, slots=True)
class Score:
    ndcg: float
    duplicates: int


def judge(order: Sequence[StoryView], labels: Labels, k: int) -> Score:
    seen: set[str] = set()
    gains = []
    duplicates = 0
    for story in order[:k]:
        label = labels.label(story)
        if label in seen:
            duplicates += 1
            gains.append(0)
        else:
            gains.append(labels.gain.get(label, 0))
        seen.add(label)
    ideal = labels.ideal(k)
    return Score(dcg(gains) / ideal if ideal else 0.0, duplicates)


@dataclass(frozen=True, slots=True)
class LeftOut:
    stories: int  # ranked above the top's last slot (all, when the top is short) but not in it
    lost: int  # distinct labels among them that no top story has: stories wrongly left out


def left_out(served: Served, labels: Labels, k: int) -> LeftOut:
    """What `top_stories` left out (minor stories, repeats) of the stories ranked as high."""
    order = best_first(served.stories)
    top = {s.id for s in served.top}
    positions = [n for n, s in enumerate(order) if s.id in top]
    cut = positions[-1] + 1 if len(served.top) >= k and positions else len(order)
    left = [s for s in order[:cut] if s.id not in top]
    shown = {labels.label(s) for s in served.top}
    return LeftOut(len(left), len({labels.label(s) for s in left} - shown))


def newest_first(stories: Iterable[StoryView]) -> list[StoryView]:
    return sorted(stories, key=lambda s: (-s.newest.timestamp(), s.id))


def most_headlines_first(stories: Iterable[StoryView]) -> list[StoryView]:
    return sorted(stories, key=lambda s: (-s.article_count, -s.newest.timestamp(), s.id))


RANKINGS: list[tuple[str, Callable[[Served], list[StoryView]]]] = [
    ("service", lambda served: served.top),
    ("newest first", lambda served: newest_first(served.stories)),
    ("most headlines first", lambda served: most_headlines_first(served.stories)),
]


# Main


def describe_top(top: Sequence[StoryView], labels: Labels) -> None:
    print(f"  {'#':>3} {'headlines':>9} {'outlets':>7} {'label':<10} {'gain':>5}  title")
    seen: set[str] = set()
    for rank, story in enumerate(top, start=1):
        label = labels.label(story)
        gain = 0 if label in seen else labels.gain.get(label, 0)
        seen.add(label)
        print(
            f"  {rank:>3} {story.article_count:>9} {story.outlet_count:>7} {label[:10]:<10}"
            f" {gain:>5}  {story.title[:60]}"
        )


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True, help="CSV of labelled headlines")
    parser.add_argument("--top", type=int, default=5, help="k: the top stories scored")
    parser.add_argument(
        "--collects", type=int, default=1, help="collects (each followed by a clustering) in 24 h"
    )
    parser.add_argument(
        "--feed",
        choices=("publisher", "google-news"),
        default="publisher",
        help="items with the publisher as source, or parsed from a Google News-shaped feed",
    )
    parser.add_argument(
        "--via",
        choices=("process", "cli"),
        default="process",
        help="the service's functions in this process, or its commands (bench.front_page_cli)",
    )
    parser.add_argument(
        "--crawl",
        choices=("http", "auto", "browser"),
        default="http",
        help="with --via cli: deepen's crawl mode (browser: the system's Chromium)",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    k = args.top
    if args.via == "cli":
        from bench.front_page_cli import main_cli

        return main_cli(args.dataset, k, args.crawl)

    rows = read_rows(args.dataset)
    categories: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        categories[row.category].append(row)
    print(f"{args.dataset}: {len(rows)} headlines, {len({r.story for r in rows})} stories")
    print(
        f"top {k}, {args.collects} collect(s) in the 24 h, items: {args.feed},"
        " [stories] defaults: words alone"
    )

    scores: dict[str, list[Score]] = defaultdict(list)
    feed_cpu = service_cpu = 0.0
    lost = 0
    for category in sorted(categories):
        start, day = busiest_day(categories[category])
        labels = Labels(day, google_news_link if args.feed == "google-news" else lambda r: r.url)
        with (
            tempfile.TemporaryDirectory() as folder,
            open_store(f"sqlite:///{Path(folder) / 'digest.db'}") as store,
        ):
            served = serve(
                store, category, day, start, top=k, collects=args.collects, how=args.feed
            )
        feed_cpu += served.feed_cpu
        service_cpu += served.service_cpu
        print()
        print(
            f"{category}: {len(day)} headlines, {len(labels.gain)} labelled stories from"
            f" {start:%d %b %H:%M} UTC; {len(served.stories)} stories"
            + (f", {served.skipped} URLs refused" if served.skipped else "")
        )
        print(f"  {'ranking':<22} {f'nDCG@{k}':>7} {'duplicates':>10}")
        for name, rank in RANKINGS:
            score = judge(rank(served), labels, k)
            scores[name].append(score)
            print(f"  {name:<22} {score.ndcg:>7.3f} {score.duplicates:>10}")
        out = left_out(served, labels, k)
        lost += out.lost
        print(
            f"  left out of the service's top: {out.stories} stories ranked as high,"
            f" {out.lost} labelled stories that no top story has"
        )
        ideal = sorted(labels.gain.values(), reverse=True)[:k]
        print(f"  the service's top {k} (ideal gains: {', '.join(map(str, ideal))})")
        describe_top(served.top, labels)

    print()
    print(f"mean of {len(categories)} categories")
    print(f"  {'ranking':<22} {f'nDCG@{k}':>7} {'duplicates':>10}")
    for name, _ in RANKINGS:
        found = scores[name]
        mean = sum(s.ndcg for s in found) / len(found)
        duplicates = sum(s.duplicates for s in found)
        print(f"  {name:<22} {mean:>7.3f} {duplicates:>7} of {k * len(found)}")
    print(f"labelled stories wrongly left out of the service's top: {lost}")
    print(f"CPU s: service (clustering, top_stories) {service_cpu:.2f}; feeding {feed_cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

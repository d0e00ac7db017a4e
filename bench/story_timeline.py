"""What a story's timeline costs to keep (issue 31): rows and bytes of `story_events` per story
per day, and the time recording takes, on real headlines over the days they appeared.

    .venv/bin/python -m bench.story_timeline --dataset ../shared/data/clustering-dev/headlines.csv

Each day of the dataset is collected (its headlines, the title standing for the lede), clustered
as deepen does, and every story with an article that day is recorded (`record_story`), twice:
the second pass must add nothing. Stories with one outlet and no figure are most of them.

Beside it, in the same run: the bytes the store already keeps of the same articles (links,
title, source, snippet, lede, main text) and the CPU clustering takes. On clustering-dev (its
first 4 days: 2 with headlines, 2,145 headlines, 392 story-days; 2-core machine): 5.69 rows and
810 bytes of payload per story per day (about 80 more a row for the row and its indexes),
0.77 of the articles' own bytes here, where a lede is only the title (with real ledes and main
texts, a few KB an article, far less); recording 3.5 ms of CPU a story, 0.73 of what clustering
takes.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.clustering import read_rows  # noqa: E402
from digest.config import StoriesConfig  # noqa: E402
from digest.jobs.clustering import cluster_category  # noqa: E402
from digest.jobs.story_memory import record_story  # noqa: E402
from digest.models import Extract, Headline, Item  # noqa: E402
from digest.store import open_store  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--days", type=int, default=4, help="the first N days of the dataset")
    args = parser.parse_args()
    rows = read_rows(args.dataset)
    by_day: dict[object, list] = defaultdict(list)
    for row in rows:
        by_day[row.seen.date()].append(row)
    days = sorted(by_day)[: args.days]
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "timeline.db"
        store = open_store(f"sqlite:///{db}")
        elapsed, clustering, recorded, story_days = 0.0, 0.0, 0, 0
        for day in days:
            items = [
                Item(
                    Headline(
                        title=r.title,
                        url=f"https://{r.outlet.lower().replace(' ', '')}.example/{r.id}",
                        source=r.outlet,
                        published=r.seen,
                        category=r.category,
                    ),
                    Extract(url="", full_content=r.title, status="ok"),
                )
                for r in by_day[day]
            ]
            end = datetime.combine(day, datetime.min.time(), UTC) + timedelta(days=1)
            store.upsert_items(items, seen_at=end - timedelta(minutes=1))
            began = time.process_time()
            for category in sorted({r.category for r in by_day[day]}):
                cluster_category(store, category, now=end, config=StoriesConfig())
            clustering += time.process_time() - began
            stories = store.stories_since(None, since=end - timedelta(days=1))
            began = time.process_time()
            for story in stories:
                recorded += record_story(store, story, end)
            elapsed += time.process_time() - began
            story_days += len(stories)
            again = sum(record_story(store, story, end) for story in stories)
            assert again == 0, f"recording {day} again added {again} events"
            print(f"{day}: {len(by_day[day])} headlines, {len(stories)} stories recorded")
        store.close()
        with sqlite3.connect(db) as conn:
            n, payload = conn.execute(
                "select count(*), sum(length(key) + length(text) + length(outlet) + length(url)"
                " + length(detail) + length(kind)) from story_events"
            ).fetchone()
            kinds = dict(conn.execute("select kind, count(*) from story_events group by kind"))
            # The baseline: what the store already keeps of the same articles.
            articles = conn.execute(
                "select sum(length(url) + length(original_url) + length(title) + length(source)"
                " + length(snippet) + length(lede) + coalesce(length(text), 0))"
                " from articles"
            ).fetchone()[0]
        print(f"{n} events ({kinds}) over {story_days} story-days")
        print(
            f"per story per day: {n / story_days:.2f} rows, {payload / story_days:.0f} bytes of "
            f"payload (plus ~80 bytes of row and index overhead a row); recording "
            f"{elapsed * 1000 / story_days:.2f} ms CPU a story"
        )
        print(
            f"beside the same run's baseline: the articles' own text and links "
            f"{articles / story_days:.0f} bytes per story-day (timeline / articles = "
            f"{payload / articles:.2f}); clustering {clustering * 1000 / story_days:.2f} ms CPU "
            f"per story-day (recording / clustering = {elapsed / clustering:.2f})"
        )


if __name__ == "__main__":
    main()

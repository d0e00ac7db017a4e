"""One story across categories: how often the stories it joins are one labelled story.

    .venv/bin/python -m bench.across_categories \\
        --dataset ../shared/data/clustering-dev/headlines.csv
    .venv/bin/python -m bench.across_categories --dataset PATH.csv --link 0.28,0.35,0.45

The CSV is clustering-dev's (ID, TITLE, PUBLISHER, CATEGORY, STORY, TIMESTAMP), titles only. No
labelled story spans two categories there, so each category's headlines are split at random
(`--seeds`) into two pseudo-categories ("b1", "b2"): every labelled story the split put in both
halves is an event collected under two categories. Each pseudo-category is clustered alone at
`--similarity` (the service's default), then `digest.stories.across.same_events` links its
stories at each `--link` threshold. Per seed and threshold: the links made, how many join two
stories of one labelled story (by each story's majority label), how many join two real
categories (always wrong), and how many of the labelled stories in both halves are linked.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.config import StoriesConfig  # noqa: E402
from digest.stories.across import Filed, same_events  # noqa: E402
from digest.stories.cluster import Report, cluster_reports  # noqa: E402


def _report(row: dict[str, str]) -> Report:
    seen = datetime.fromtimestamp(int(row["TIMESTAMP"]) / 1000, UTC)
    return Report(id=int(row["ID"]), title=row["TITLE"], first_seen=seen, outlet=row["PUBLISHER"])


def split_stories(
    rows: list[dict[str, str]], seed: int, similarity: float, window: timedelta
) -> list[Filed]:
    """Each category's headlines in two random halves, each clustered alone."""
    rnd = random.Random(seed)
    halves: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        halves[f"{row['CATEGORY']}{rnd.randint(1, 2)}"].append(row)
    filed: list[Filed] = []
    for half, members in sorted(halves.items()):
        reports = {int(r["ID"]): _report(r) for r in members}
        clustering = cluster_reports(reports.values(), window=window, similarity=similarity)
        for group in clustering.groups:
            filed.append(
                Filed(
                    id=len(filed) + 1,
                    category=half,
                    score=float(len(group.article_ids)),
                    reports=tuple(reports[i] for i in group.article_ids),
                )
            )
    return filed


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--link", default="0.28", help="comma-separated link thresholds")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--similarity", type=float, default=StoriesConfig().similarity)
    args = parser.parse_args(list(argv) if argv is not None else None)
    with args.dataset.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    label = {int(r["ID"]): r["STORY"] for r in rows}
    window = timedelta(hours=StoriesConfig().window_hours)
    print("seed  link   stories  links  same story  across real categories  labels linked")
    for seed in (int(s) for s in args.seeds.split(",")):
        filed = split_stories(rows, seed, args.similarity, window)
        majority = {
            f.id: Counter(label[r.id] for r in f.reports).most_common(1)[0][0] for f in filed
        }
        half = {f.id: f.category for f in filed}
        halves_of: dict[str, set[str]] = defaultdict(set)
        for f in filed:
            halves_of[majority[f.id]].add(f.category)
        in_both = {lab for lab, cats in halves_of.items() if len(cats) > 1}
        for link in (float(x) for x in args.link.split(",")):
            events = same_events(filed, similarity=link, window=window)
            pairs = [
                (a, b)
                for e in events
                for n, a in enumerate(e.story_ids)
                for b in e.story_ids[n + 1 :]
            ]
            same = sum(majority[a] == majority[b] for a, b in pairs)
            across = sum(half[a][:-1] != half[b][:-1] for a, b in pairs)
            linked = {majority[a] for a, b in pairs if majority[a] == majority[b]} & in_both
            share = same / len(pairs) if pairs else 0.0
            print(
                f"{seed:>4}  {link:.2f}  {len(filed):>7}  {len(pairs):>5}  "
                f"{same:>4} ({share:.3f})  {across:>22}  {len(linked):>5} of {len(in_both)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

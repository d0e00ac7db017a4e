"""`digest stories` lists categories in the configured order (issue 39), not by name."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from digest.config import StoriesConfig
from digest.edition.front_page import by_category
from digest.jobs.clustering import cluster_category
from digest.store import Store
from tests import headlines as H
from tests import storefixtures
from tests.configs import write_config
from tests.conftest import earlier_today, run_cli
from tests.storefixtures import item
from tests.test_more_headlines import story

db_url, store = storefixtures.db_url, storefixtures.store


@pytest.mark.slow  # two runs of the real command
def test_digest_stories_lists_the_configured_categories_in_their_order(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    when = earlier_today(1)
    lines = {"world": H.QUAKE, "technology": H.NVIDIA, "business": H.FED}
    items = [
        item(
            f"https://{line.outlet.lower().replace(' ', '')}.example/{category}/{i}",
            title=line.title,
            lede=line.text,
            category=category,
            published=when,
            source=line.outlet,
        )
        for category, told in lines.items()
        for i, line in enumerate(told)
    ]
    store.upsert_items(items, seen_at=when)
    for category in lines:
        cluster_category(store, category, now=when + timedelta(minutes=5), config=StoriesConfig())
    order = ["world", "technology", "business"]  # not alphabetical
    write_config(tmp_path, database={"url": db_url}, sources={"categories": order, "ddg": False})
    result = run_cli("stories", "--json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    listed = json.loads(result.stdout)
    assert list(dict.fromkeys(s["category"] for s in listed)) == order
    firsts = [next(s["title"] for s in listed if s["category"] == c) for c in order]
    text = " ".join(run_cli("stories", cwd=tmp_path).stdout.split())
    at = [text.index(" ".join(title.split())[:30]) for title in firsts]
    assert at == sorted(at)


def test_a_category_no_longer_configured_comes_after_the_configured_ones() -> None:
    stored = [
        replace(story(i, H.DECOYS[i]), category=c)
        for i, c in enumerate(["arts", "world", "zoo", "technology"])
    ]
    order = [s.category for s in by_category(stored, ["world", "technology"])]
    assert order == ["world", "technology", "arts", "zoo"]
    assert [s.category for s in by_category(stored)] == ["arts", "technology", "world", "zoo"]

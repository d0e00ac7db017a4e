"""An edition's "More headlines" (issue 39): a category's other stories, one line each with its
outlets, never the same story twice, never a story already shown above it."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from pathlib import Path

from digest.app import App
from digest.config import StoriesConfig, parse_config
from digest.edition.sections import more_headlines
from digest.jobs.clustering import cluster_category
from digest.jobs.publish import build_edition
from digest.models import ArticleView, Item, StoryView
from digest.render.headlines import outlets_line
from digest.store import Store
from tests import headlines as H
from tests import storefixtures
from tests.storefixtures import item

db_url, store = storefixtures.db_url, storefixtures.store

DAY = date(2025, 3, 3)


def at(hour: int) -> datetime:
    return datetime.combine(DAY, time(hour), UTC)


def news(line: H.Line, hour: int = 9) -> Item:
    host = line.outlet.lower().replace(" ", "")
    slug = "-".join(line.title.lower().split()[:4])
    return item(
        f"https://www.{host}.example/technology/{slug}",
        title=line.title,
        lede=line.text,
        category="technology",
        published=at(hour),
        source=line.outlet,
    )


async def test_more_headlines_lists_each_story_once_with_its_outlets(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    lines = [*H.FED, *H.TESLA[:2], *H.NVIDIA, H.DECOYS[1], H.DECOYS[2]]
    store.upsert_items([news(line) for line in lines], seen_at=at(10))
    cluster_category(store, "technology", now=at(11), config=StoriesConfig())
    config = parse_config(
        {
            "database": {"url": db_url},
            "stories": {"top": 1},
            "sources": {"categories": ["technology"], "ddg": False},
            "schedule": {"timezone": "UTC"},
            "archive": {"dir": str(tmp_path / "site")},
            "email": {"outbox_dir": str(tmp_path / "outbox")},
        }
    )
    async with App(config) as app:
        edition = await build_edition(app, DAY, now=at(12))
    [section] = edition.sections
    [lead] = section.stories
    assert lead.title in {x.title for x in H.FED} and len(lead.outlets) == 3  # the widest
    titles = [h.title for h in section.headlines]
    assert len(titles) == len(set(titles))
    # Tesla and Nvidia, two outlets each, are one line each, naming both.
    by_title = {h.title: h for h in section.headlines}
    tesla = next(h for t, h in by_title.items() if t in {x.title for x in H.TESLA})
    nvidia = next(h for t, h in by_title.items() if t in {x.title for x in H.NVIDIA})
    assert set(tesla.names) == {"Reuters", "The Verge"}
    assert set(nvidia.names) == {"Reuters", "CNBC"}
    others = {x.title for x in (*H.TESLA, *H.NVIDIA)}
    assert sum(t in others for t in titles) == 2
    # Nothing of the lead story is listed again under it.
    lead_urls = {o.url for o in lead.outlets}
    assert not lead_urls & {h.url for h in section.headlines}
    assert not {x.title for x in H.FED} & set(titles)
    assert {H.DECOYS[1].title, H.DECOYS[2].title} <= set(titles)


def story(story_id: int, *lines: H.Line, score: float = 1.0) -> StoryView:
    articles = tuple(
        ArticleView(
            id=story_id * 10 + i,
            url=f"https://{line.outlet.lower().replace(' ', '')}.example/{story_id}",
            title=line.title,
            source=line.outlet,
            outlet=line.outlet.casefold(),
            published=at(9),
            first_seen=at(9),
            lede=line.text,
            origin="feed:x",
            has_text=False,
            text_hash=None,
            crawl_status=None,
            summary=None,
        )
        for i, line in enumerate(lines)
    )
    outlets = len({a.outlet for a in articles})
    return StoryView(
        id=story_id,
        category="technology",
        title=lines[0].title,
        first_seen=at(9),
        last_seen=at(9),
        updated=False,
        updated_at=None,
        article_count=len(articles),
        outlet_count=outlets,
        score=score,
        articles=articles,
    )


def test_a_story_that_repeats_one_shown_above_or_a_line_before_is_not_listed() -> None:
    shown = story(1, H.TESLA[0], H.TESLA[1])
    # A piece clustering kept apart, worded as the shown story: a repeat of it.
    piece = story(2, H.Line("tesla", "AP News", H.TESLA[0].title, H.TESLA[0].text), score=0.9)
    nvidia = story(3, *H.NVIDIA, score=0.8)
    again = story(4, H.Line("nvidia", "The Verge", H.NVIDIA[0].title, ""), score=0.5)
    loose = [news(H.Line(None, "Bloomberg", H.NVIDIA[1].title, "")), news(H.DECOYS[2])]
    lines = more_headlines([again, piece, nvidia], loose, [shown])
    assert [h.title for h in lines] == [H.NVIDIA[0].title, H.DECOYS[2].title]
    assert lines[0].names == ("Reuters", "CNBC")
    assert lines[1].names == ("Reuters",)  # an article: its source


def test_a_headlines_outlets_read_in_one_line() -> None:
    assert outlets_line(["BBC", "Reuters"]) == "BBC, Reuters"
    assert outlets_line(["A", "B", "C", "D", "E"]) == "A, B, C and 2 more"
    assert outlets_line(["A", " A ", ""]) == "A"
    assert outlets_line([]) == ""

"""Ranking a category's stories: outlets first, then diversity and recency."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.stories import Coverage, StoryStats, outlet, rank_stories, registrable_host, score

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def cov(source: str, url: str, *, origin: str = "ddg:news", age: timedelta = HOUR) -> Coverage:
    return Coverage(source=source, url=url, origin=origin, when=NOW - age)


def stats(story_id: int, *coverage: Coverage) -> StoryStats:
    return StoryStats.of(story_id, coverage)


def test_more_outlets_rank_first() -> None:
    three = stats(
        1,
        cov("Reuters", "https://www.reuters.com/a"),
        cov("AP News", "https://apnews.com/b"),
        cov("CNBC", "https://www.cnbc.com/c"),
    )
    two = stats(2, cov("BBC News", "https://www.bbc.co.uk/a"), cov("CNN", "https://cnn.com/b"))
    one = stats(3, cov("The Verge", "https://www.theverge.com/a", age=timedelta(0)))
    ranked = rank_stories([one, two, three], now=NOW)
    assert [r.stats.story_id for r in ranked] == [1, 2, 3]
    assert [r.stats.story_id for r in rank_stories([one, two, three], now=NOW, top=2)] == [1, 2]


def test_recency_halves_the_score_every_day() -> None:
    fresh = stats(1, cov("Reuters", "https://reuters.com/a", age=timedelta(0)))
    day_old = stats(2, cov("Reuters", "https://reuters.com/a", age=timedelta(hours=24)))
    assert score(fresh, now=NOW) == pytest.approx(1.0)
    assert score(day_old, now=NOW) == pytest.approx(0.5)
    # Three outlets a day ago still beat one outlet now; two days ago they no longer do.
    old_big = [cov(s, f"https://{s}.com/x", age=timedelta(hours=24)) for s in ("a", "b", "c")]
    older_big = [cov(s, f"https://{s}.com/x", age=timedelta(hours=48)) for s in ("a", "b", "c")]
    assert score(stats(3, *old_big), now=NOW) > score(fresh, now=NOW)
    assert score(stats(4, *older_big), now=NOW) < score(fresh, now=NOW)


def test_the_newest_article_sets_a_storys_age_and_the_future_counts_as_now() -> None:
    story = stats(
        1,
        cov("Reuters", "https://reuters.com/a", age=timedelta(hours=30)),
        cov("AP", "https://apnews.com/b", age=timedelta(0)),
    )
    assert score(story, now=NOW) == pytest.approx(2.0)
    ahead = stats(2, cov("AP", "https://apnews.com/b", age=-HOUR))
    assert score(ahead, now=NOW) == pytest.approx(1.0)


def test_outlets_behind_one_host_count_half() -> None:
    syndicated = stats(
        1,
        cov("Reuters", "https://www.msn.com/a"),
        cov("AP", "https://www.msn.com/b"),
        cov("Bloomberg", "https://www.msn.com/c"),
    )
    independent = stats(
        2,
        cov("Reuters", "https://reuters.com/a"),
        cov("AP", "https://apnews.com/b"),
        cov("Bloomberg", "https://bloomberg.com/c"),
    )
    assert (syndicated.outlets, syndicated.hosts) == (3, 1)
    assert score(syndicated, now=NOW) == pytest.approx(2.0 * 0.5 ** (1 / 24))
    assert score(independent, now=NOW) == pytest.approx(3.0 * 0.5 ** (1 / 24))


def test_being_found_by_search_and_in_feeds_adds_a_quarter() -> None:
    both = stats(
        1,
        cov("Reuters", "https://reuters.com/a", origin="ddg:news", age=timedelta(0)),
        cov("AP", "https://apnews.com/b", origin="feed:https://apnews.com/rss", age=timedelta(0)),
    )
    search_only = stats(
        2,
        cov("Reuters", "https://reuters.com/a", age=timedelta(0)),
        cov("AP", "https://apnews.com/b", age=timedelta(0)),
    )
    assert (both.origins, search_only.origins) == (2, 1)
    assert score(both, now=NOW) == pytest.approx(2.5)
    assert score(search_only, now=NOW) == pytest.approx(2.0)


def test_one_outlet_twice_is_one_outlet() -> None:
    twice = stats(
        1,
        cov("Reuters", "https://www.reuters.com/a"),
        cov("reuters ", "https://reuters.com/b"),
        cov("", "https://reuters.com/c"),
        cov("Reuters.com", "https://feeds.reuters.com/d"),
    )
    assert (twice.outlets, twice.hosts) == (2, 1)  # "reuters" and the host "reuters.com"


def test_ties_go_to_more_outlets_then_newer_then_the_older_story() -> None:
    a = stats(5, cov("X", "https://x.com/a"))
    b = stats(3, cov("Y", "https://y.com/a"))
    c = stats(4, cov("Z", "https://z.com/a", age=timedelta(0)))
    assert [r.stats.story_id for r in rank_stories([a, b, c], now=NOW)] == [4, 3, 5]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://www.bbc.co.uk/news/world-1", "bbc.co.uk"),
        ("https://news.bbc.co.uk/x", "bbc.co.uk"),
        ("https://edition.cnn.com/2025/x", "cnn.com"),
        ("https://m.spiegel.de/politik/x", "spiegel.de"),
        ("https://www.abc.net.au/news/x", "abc.net.au"),
        ("https://news.yahoo.co.jp/articles/x", "yahoo.co.jp"),
        ("https://example.com./x", "example.com"),
        ("http://127.0.0.1:8080/x", "127.0.0.1"),
        ("not a url", ""),
    ],
)
def test_registrable_host(url: str, host: str) -> None:
    assert registrable_host(url) == host


def test_outlet_is_the_source_name_else_the_host() -> None:
    assert outlet("The Guardian", "https://www.theguardian.com/x") == "guardian"
    assert outlet("  Financial   Times ", "https://ft.com/x") == "financial times"
    assert outlet("", "https://www.tagesschau.de/x") == "tagesschau.de"
    assert outlet("www.Reuters.com", "https://news.example/x") == "reuters.com"


def test_a_story_without_articles_is_refused() -> None:
    with pytest.raises(ValueError, match="no articles"):
        StoryStats.of(1, [])


@given(
    st.lists(
        st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 2), st.integers(0, 96)),
        min_size=1,
        max_size=30,
    ),
    st.permutations(range(30)),
)
def test_ranking_is_a_total_order_independent_of_input_order(
    rows: list[tuple[int, int, int, int]], order: list[int]
) -> None:
    stories = [
        StoryStats(
            story_id=n,
            outlets=outlets,
            hosts=hosts,
            origins=origins,
            newest=NOW - timedelta(hours=age),
        )
        for n, (outlets, hosts, origins, age) in enumerate(rows)
    ]
    shuffled = [stories[i] for i in order if i < len(stories)]
    ranked = rank_stories(stories, now=NOW)
    assert [r.stats for r in ranked] == [r.stats for r in rank_stories(shuffled, now=NOW)]
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)

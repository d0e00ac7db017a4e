"""Ranking a category's stories: outlets first, then languages, growth, diversity and recency;
which of them are top stories (no minor story, no repeat of one above)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.stories import (
    Candidate,
    Coverage,
    StoryStats,
    outlet,
    rank_stories,
    registrable_host,
    score,
    top_picks,
)

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
        ("http://[2001:db8::1]/x", "2001:db8::1"),
        ("not a url", ""),
        # The Public Suffix List: country and private suffixes; a suffix alone stays itself.
        ("https://www.lemonde.fr/x", "lemonde.fr"),
        ("https://www3.nhk.or.jp/news/x", "nhk.or.jp"),
        ("https://www.theage.com.au/x", "theage.com.au"),
        ("https://g1.globo.com/x", "globo.com"),
        ("https://www.city.kobe.jp/x", "city.kobe.jp"),  # an exception to "*.kobe.jp"
        ("https://someone.blogspot.com/2025/x", "someone.blogspot.com"),
        ("https://team.github.io/x", "team.github.io"),
        ("https://www.gov.uk/x", "gov.uk"),
        ("http://localhost:8080/x", "localhost"),
        ("http://news.example/x", "news.example"),
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


def test_blogs_on_one_platform_are_independent_hosts() -> None:
    blogs = stats(
        1,
        cov("Ann", "https://ann.blogspot.com/a"),
        cov("Bob", "https://bob.blogspot.com/b"),
        cov("Cy", "https://cy.blogspot.com/c"),
    )
    assert (blogs.outlets, blogs.hosts) == (3, 3)


def test_a_story_told_in_more_languages_ranks_higher() -> None:
    english = stats(
        1,
        Coverage(source="Reuters", url="https://reuters.com/a", when=NOW, language="en"),
        Coverage(source="AP", url="https://apnews.com/b", when=NOW, language="en"),
    )
    two = stats(
        2,
        Coverage(source="Reuters", url="https://reuters.com/a", when=NOW, language="en"),
        Coverage(source="Spiegel", url="https://spiegel.de/b", when=NOW, language="de"),
    )
    assert (english.languages, two.languages) == (1, 2)
    assert score(two, now=NOW) == pytest.approx(2.5)
    assert score(english, now=NOW) == pytest.approx(2.0)
    # One outlet in two languages is still one outlet's voice.
    bilingual = stats(
        3,
        Coverage(source="DW", url="https://dw.com/en/a", when=NOW, language="en"),
        Coverage(source="DW", url="https://dw.com/de/a", when=NOW, language="de"),
    )
    assert score(bilingual, now=NOW) == pytest.approx(1.0)


def test_the_language_of_an_article_comes_from_its_title_and_lede() -> None:
    def candidate(title: str, text: str) -> Candidate:
        return Candidate(
            id=1,
            title=title,
            text=text,
            source="x",
            url="https://x.example/a",
            origin="feed:x",
            published=None,
            first_seen=NOW,
            last_seen=NOW,
            story_id=None,
        )

    german = candidate(
        "Erdbeben erschüttert die Türkei",
        "Die Behörden sprechen von vielen Opfern und Schäden in der Region",
    )
    english = candidate("Quake hits Turkey", "The authorities say that there are many victims")
    assert german.coverage().language == "de"
    assert english.coverage().language == "en"
    assert candidate("Stocks slip", "").coverage().language == ""


def test_outlets_gained_in_the_last_hours_count_half_more() -> None:
    def seen(name: str, ago: timedelta) -> Coverage:
        return Coverage(source=name, url=f"https://{name}.com/a", when=NOW, seen=NOW - ago)

    growing = StoryStats.of(1, [seen("a", HOUR * 30), seen("b", HOUR), seen("c", HOUR)], now=NOW)
    steady = StoryStats.of(
        2, [seen("a", HOUR * 30), seen("b", HOUR * 9), seen("c", HOUR * 7)], now=NOW
    )
    assert (growing.gained, steady.gained) == (2, 0)
    assert score(growing, now=NOW) == pytest.approx(4.0)
    assert score(steady, now=NOW) == pytest.approx(3.0)
    # An outlet counts as gained by its first report in the story, not its latest.
    again = StoryStats.of(3, [seen("a", HOUR * 30), seen("a", HOUR)], now=NOW)
    assert again.gained == 0
    assert StoryStats.of(4, [seen("a", HOUR)]).gained == 0  # no `now`, no growth


def story_stats(
    story_id: int = 1,
    *,
    outlets: int = 1,
    hosts: int = 1,
    origins: int = 1,
    languages: int = 1,
    gained: int = 0,
    age: float = 0.0,
) -> StoryStats:
    return StoryStats(
        story_id=story_id,
        outlets=outlets,
        hosts=hosts,
        origins=origins,
        newest=NOW - timedelta(hours=age),
        languages=languages,
        gained=gained,
    )


counts = st.integers(0, 60)
ages = st.floats(0, 24 * 30, allow_nan=False)


@given(
    outlets=st.integers(1, 60),
    hosts=st.integers(1, 60),  # 0 only when no article has a host: then outlets count whole
    origins=st.integers(0, 2),
    languages=st.integers(0, 8),
    gained=counts,
    age=ages,
)
def test_more_outlets_languages_growth_or_paths_never_lower_the_score(
    outlets: int, hosts: int, origins: int, languages: int, gained: int, age: float
) -> None:
    base = {
        "outlets": outlets,
        "hosts": hosts,
        "origins": origins,
        "languages": languages,
        "gained": gained,
        "age": age,
    }
    before = score(story_stats(**base), now=NOW)  # type: ignore[arg-type]
    for name in ("outlets", "hosts", "origins", "languages", "gained"):
        more = {**base, name: base[name] + 1}
        assert score(story_stats(**more), now=NOW) >= before, name  # type: ignore[arg-type]
    older = {**base, "age": age + 1}
    assert score(story_stats(**older), now=NOW) <= before  # type: ignore[arg-type]


@given(
    outlets=st.integers(1, 60),
    hosts=st.integers(1, 60),  # 0 only when no article has a host: then outlets count whole
    origins=st.integers(0, 2),
    languages=st.integers(0, 8),
    gained=counts,
    age=ages,
)
def test_the_score_stays_within_its_bounds(
    outlets: int, hosts: int, origins: int, languages: int, gained: int, age: float
) -> None:
    stats_ = story_stats(
        outlets=outlets, hosts=hosts, origins=origins, languages=languages, gained=gained, age=age
    )
    recency = 0.5 ** (age / 24)
    # Coverage: outlets when their hosts are as many, down to half of them (plus one) behind one.
    assert (outlets + 1) / 2 * recency - 1e-9 <= score(stats_, now=NOW)
    assert score(stats_, now=NOW) <= outlets * 1.5 * 1.75 * 1.25 * recency + 1e-9


@given(
    single=st.builds(
        story_stats,
        st.just(2),
        outlets=st.just(1),
        hosts=st.integers(0, 1),
        origins=st.integers(0, 2),
        languages=st.integers(0, 8),
        gained=st.integers(0, 1),
        age=st.floats(-48, 24 * 30, allow_nan=False),
    ),
    wide=st.builds(
        story_stats,
        st.just(1),
        outlets=st.integers(30, 200),
        hosts=st.integers(0, 200),
        origins=st.integers(0, 2),
        languages=st.integers(0, 8),
        gained=st.integers(0, 200),
        age=st.floats(0, 48, allow_nan=False),
    ),
)
def test_one_outlets_item_never_outranks_a_story_told_by_thirty_within_the_window(
    single: StoryStats, wide: StoryStats
) -> None:
    assert [r.stats.story_id for r in rank_stories([single, wide], now=NOW)] == [1, 2]


# Top stories: no minor story, no repeat of a story above.

PHONES = [
    "Parents pay attention to their phones more than their kids, study finds",
    "Parents distracted by phones at meals, study finds",
    "Study: parents on phones ignore their kids at mealtime",
]
POT = [
    "Colorado gets $2 million in first month of marijuana taxes",
    "Colorado collects $2 million in marijuana taxes in January",
]
MARKETS = ["US stocks dip on weak China data", "Wall Street slips as China exports slump"]


def test_a_fragment_of_a_story_above_is_no_top_story_but_a_distinct_story_is() -> None:
    fragment = ["Parents on phones: study says kids notice at mealtime"]
    stories = [PHONES, POT, fragment, MARKETS]
    assert top_picks([10.0, 9.0, 8.0, 7.0], stories, limit=5) == [0, 1, 3]
    assert top_picks([10.0, 9.0, 8.0, 7.0], stories, limit=2) == [0, 1]


def test_a_story_far_smaller_than_the_lead_is_no_top_story() -> None:
    # Beside 47 outlets, three are a minor item; beside three, one outlet still is a story.
    assert top_picks([47.0, 5.0, 3.0], [PHONES, POT, MARKETS], limit=5) == [0, 1]
    assert top_picks([3.0, 1.0], [PHONES, MARKETS], limit=5) == [0, 1]
    assert top_picks([], [], limit=5) == []
    assert top_picks([3.0], [PHONES], limit=0) == []


words_ = st.sampled_from(["quake", "turkey", "fed", "rates", "phones", "kids", "pot", "tax"])


@given(
    st.lists(
        st.tuples(
            st.floats(0, 100, allow_nan=False),
            st.lists(
                st.lists(words_, min_size=1, max_size=5).map(" ".join), min_size=1, max_size=3
            ),
        ),
        max_size=12,
    ),
    st.integers(0, 6),
)
def test_top_picks_are_the_first_story_and_others_in_order_at_most_the_limit(
    stories: list[tuple[float, list[str]]], limit: int
) -> None:
    stories.sort(key=lambda s: -s[0])
    scores = [s for s, _ in stories]
    titles = [t for _, t in stories]
    picks = top_picks(scores, titles, limit=limit)
    assert picks == sorted(set(picks))
    assert len(picks) <= limit
    if stories and limit:
        assert picks[0] == 0
    assert picks == top_picks(scores, titles, limit=limit)

"""Clustering headlines into stories: known answers, runs that build on each other, properties."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.stories import Report, cluster_reports
from digest.stories.tokens import language, terms
from tests import headlines as H

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(hours=48)
THRESHOLD = 0.28  # StoriesConfig().similarity


def reports(lines: list[H.Line], *, first_id: int = 1, at: datetime = T0) -> list[Report]:
    return [
        Report(id=n, title=line.title, text=line.text, first_seen=at, outlet=line.outlet)
        for n, line in enumerate(lines, start=first_id)
    ]


def partition(items: list[Report], threshold: float = THRESHOLD) -> frozenset[frozenset[int]]:
    return cluster_reports(items, window=WINDOW, similarity=threshold).partition()


def test_every_event_told_by_several_outlets_is_one_story_and_singles_stay_alone() -> None:
    # Words alone may or may not join the English and German reports of the Japan quake (one
    # event; vectors join them, tests/test_embeddings_e5.py); everything else is exact.
    joined = H.expected_partition(H.ALL)
    first_en, first_de = H.ALL.index(H.QUAKE[0]) + 1, H.ALL.index(H.QUAKE_DE[0]) + 1
    quake = next(g for g in joined if first_en in g)
    by_language = (joined - {quake}) | {
        frozenset(i for i in quake if i < first_de),
        frozenset(i for i in quake if i >= first_de),
    }
    assert partition(reports(H.ALL)) in (joined, by_language)


def test_three_wordings_of_one_rate_decision_are_one_story() -> None:
    lines = H.FED + H.SINGLES
    assert partition(reports(lines)) == H.expected_partition(lines)


def test_headlines_sharing_only_common_words_do_not_merge() -> None:
    # "market", "new", "rates", "cuts", "chip", "third", "strong"...
    assert all(len(group) == 1 for group in partition(reports(H.SINGLES)))


def test_another_story_about_the_same_company_or_club_stays_apart() -> None:
    # Nvidia GPUs vs Nvidia earnings, Tesla shares vs Tesla recall, Boeing deliveries vs the
    # Boeing strike, a Real Madrid signing vs Real Madrid's final.
    lines = H.DECOYS + H.TESLA + H.NVIDIA + H.BOEING + H.FINAL
    assert partition(reports(lines)) == H.expected_partition(lines)


def test_german_headlines_cluster_across_compounds_and_inflections() -> None:
    lines = H.ECB_DE + H.QUAKE_DE + H.SINGLES_DE
    assert partition(reports(lines)) == H.expected_partition(lines)


def test_a_stricter_threshold_splits_and_a_looser_one_merges() -> None:
    items = reports(H.ALL)
    assert len(partition(items, 0.9)) > len(partition(items))
    assert len(partition(items, 0.1)) < len(partition(items))


def test_the_same_story_beyond_the_window_is_a_new_story() -> None:
    line = H.TESLA[0]
    again = H.Line("tesla", "Other", line.title, line.text)
    early = Report(id=1, title=line.title, text=line.text, first_seen=T0)
    three_days = Report(id=2, title=again.title, text=again.text, first_seen=T0 + timedelta(days=3))
    next_day = Report(id=3, title=again.title, text=again.text, first_seen=T0 + timedelta(days=1))

    assert partition([early, three_days]) == {frozenset({1}), frozenset({2})}
    assert partition([early, next_day]) == {frozenset({1, 3})}


def test_published_time_counts_before_first_seen() -> None:
    line = H.TESLA[0]
    old = Report(
        id=1,
        title=line.title,
        text=line.text,
        first_seen=T0,
        published=T0 - timedelta(days=5),
    )
    new = Report(id=2, title=line.title, text=line.text, first_seen=T0)
    assert partition([old, new]) == {frozenset({1}), frozenset({2})}


def test_a_story_keeps_its_identity_across_runs_and_gains_members() -> None:
    # Run 1: two outlets on the rate decision, a single.
    first = reports(H.FED[:2] + H.SINGLES[:1])
    run1 = cluster_reports(first, window=WINDOW, similarity=THRESHOLD)
    assert [g.article_ids for g in run1.created] == [(1, 2), (3,)]
    assert run1.grown == ()
    story_of = {aid: 100 + n for n, g in enumerate(run1.created) for aid in g.article_ids}

    # Run 2, that evening: the stored articles with their stories, a third outlet, a new event.
    later = T0 + timedelta(hours=7)
    stored = [
        Report(id=r.id, title=r.title, text=r.text, first_seen=T0, story_id=story_of[r.id])
        for r in first
    ]
    arriving = reports(H.FED[2:] + H.QUAKE, first_id=4, at=later)
    run2 = cluster_reports(stored + arriving, window=WINDOW, similarity=THRESHOLD)

    fed = next(g for g in run2.groups if g.story_id == 100)
    assert (fed.article_ids, fed.new_article_ids) == ((1, 2, 4), (4,))
    assert [g.story_id for g in run2.grown] == [100]
    assert [g.article_ids for g in run2.created] == [(5, 6)]
    single = next(g for g in run2.groups if g.story_id == 101)
    assert (single.article_ids, single.new_article_ids) == ((3,), ())


MARKETS = [
    "Wall Street closes lower as weak China trade data weighs on stocks",
    "Stocks close lower on Wall Street as China trade data disappoints",
]


@pytest.mark.parametrize(("hours", "stories"), [(2, 1), (24, 2)])
def test_a_market_report_a_day_later_is_a_new_story(hours: int, stories: int) -> None:
    # Two closes of the market told alike: the same story within hours, the next day's close
    # is another event.
    items = [
        Report(id=1, title=MARKETS[0], first_seen=T0),
        Report(id=2, title=MARKETS[1], first_seen=T0 + timedelta(hours=hours)),
        *reports(H.SINGLES, first_id=10),
    ]
    result = cluster_reports(items, window=WINDOW, similarity=THRESHOLD)
    assert sum(1 for g in result.groups if {1, 2} & set(g.article_ids)) == stories


def test_existing_stories_are_never_split_nor_merged() -> None:
    a, b = H.FED[0], H.FED[1]
    # An earlier run put two dissimilar articles in story 7 and a look-alike of one in story 8.
    stored = [
        Report(id=1, title=a.title, text=a.text, first_seen=T0, story_id=7),
        Report(id=2, title=H.SINGLES[2].title, text=H.SINGLES[2].text, first_seen=T0, story_id=7),
        Report(id=3, title=b.title, text=b.text, first_seen=T0, story_id=8),
    ]
    # A new article almost identical to article 1, and similar to article 3 too.
    new = Report(id=4, title=a.title + " again", text=a.text, first_seen=T0 + timedelta(hours=1))
    result = cluster_reports([*stored, new], window=WINDOW, similarity=THRESHOLD)

    assert [(g.story_id, g.article_ids) for g in result.groups] == [(7, (1, 2, 4)), (8, (3,))]
    assert result.created == ()


def test_a_recurring_headline_does_not_chain_into_an_endless_story() -> None:
    daily = [
        Report(
            id=n,
            title="Markets wrap: stocks edge higher as bond yields steady",
            text="Stocks edged higher and bond yields held steady in quiet trading.",
            first_seen=T0 + timedelta(days=n),
        )
        for n in range(6)
    ]
    groups = cluster_reports(daily, window=WINDOW, similarity=THRESHOLD).groups
    for group in groups:
        times = [daily[i].when for i in group.article_ids]
        assert max(times) - min(times) <= WINDOW
    assert len(groups) == 2  # days 0-2 and 3-5


def test_the_representative_is_the_member_most_like_the_others() -> None:
    result = cluster_reports(reports(H.FINAL), window=WINDOW, similarity=THRESHOLD)
    (group,) = result.groups
    # "Real Madrid beat Dortmund 2-0 to win 15th Champions League title" shares most with both.
    assert group.representative_id == 1


def test_invalid_input_is_refused() -> None:
    naive = datetime(2025, 3, 1, 12, 0)
    with pytest.raises(ValueError, match="naive"):
        cluster_reports([Report(id=1, title="x", first_seen=naive)], window=WINDOW, similarity=0.3)
    twice = [Report(id=1, title="x", first_seen=T0), Report(id=1, title="y", first_seen=T0)]
    with pytest.raises(ValueError, match="unique"):
        cluster_reports(twice, window=WINDOW, similarity=0.3)
    assert cluster_reports([], window=WINDOW, similarity=0.3).groups == ()


def test_titles_are_compared_as_content_words() -> None:
    assert terms("The Fed's rate cuts: what it means for you") == ["fed", "rat", "cut", "mean"]
    assert terms("Erdbeben der Stärke 7,1 vor Japans Küste") == [
        "erdbeb",
        "stark",
        "7.1",
        "japan",
        "kust",
    ]


def test_a_few_thousand_articles_cluster_without_comparing_all_pairs() -> None:
    rng = random.Random(7)
    vocab = sorted({w for line in H.ALL for w in (line.title + " " + line.text).split()})
    items = []
    for n in range(2000):
        title = " ".join(rng.sample(vocab, 8))
        items.append(Report(id=n, title=title, text=" ".join(rng.sample(vocab, 30)), first_seen=T0))
    items.append(Report(id=5000, title=items[0].title, first_seen=T0))
    result = cluster_reports(items, window=WINDOW, similarity=THRESHOLD)
    assert sum(len(g.article_ids) for g in result.groups) == 2001
    assert any({0, 5000} <= set(g.article_ids) for g in result.groups)


# Properties

WORDS = sorted({w for t in (line.title for line in H.ALL) for w in t.split() if len(terms(w)) == 1})


@st.composite
def report_sets(draw: st.DrawFn, max_hours: int = 120) -> list[Report]:
    count = draw(st.integers(min_value=0, max_value=25))
    ids = draw(st.lists(st.integers(1, 10_000), min_size=count, max_size=count, unique=True))
    out = []
    for article_id in ids:
        title = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=10)))
        hours = draw(st.integers(0, max_hours))
        story = draw(st.sampled_from([None, None, None, 1, 2]))
        out.append(
            Report(
                id=article_id,
                title=title,
                text=text,
                first_seen=T0 + timedelta(hours=hours),
                story_id=story,
            )
        )
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(report_sets())
def test_every_article_is_in_exactly_one_story_and_stories_are_never_split(
    items: list[Report],
) -> None:
    result = cluster_reports(items, window=WINDOW, similarity=THRESHOLD)
    assigned = [aid for g in result.groups for aid in g.article_ids]
    assert sorted(assigned) == sorted(r.id for r in items)
    for r in items:
        if r.story_id is not None:
            group = next(g for g in result.groups if r.id in g.article_ids)
            assert group.story_id == r.story_id
    assert len({g.story_id for g in result.groups if g.story_id is not None}) == len(
        [g for g in result.groups if g.story_id is not None]
    )


@settings(max_examples=100, deadline=None)
@given(report_sets(), st.randoms(use_true_random=False))
def test_the_order_of_the_input_does_not_change_the_stories(
    items: list[Report], rnd: random.Random
) -> None:
    shuffled = list(items)
    rnd.shuffle(shuffled)
    a = cluster_reports(items, window=WINDOW, similarity=THRESHOLD)
    b = cluster_reports(shuffled, window=WINDOW, similarity=THRESHOLD)
    assert a == b


@settings(max_examples=100, deadline=None)
@given(
    report_sets(max_hours=48),  # no chain of others can stretch a story past the window
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=8).filter(
        lambda ws: len(terms(" ".join(ws))) >= 2
    ),
    st.integers(0, 48),
)
def test_identical_titles_within_the_window_always_cluster(
    others: list[Report], title_words: list[str], hours_apart: int
) -> None:
    title = " ".join(title_words)
    news = [r for r in others if r.story_id is None]
    a = Report(id=20_001, title=title, text="one text entirely", first_seen=T0)
    b = Report(id=20_002, title=title, first_seen=T0 + timedelta(hours=hours_apart))
    result = cluster_reports([*news, a, b], window=WINDOW, similarity=THRESHOLD)
    assert any({a.id, b.id} <= set(g.article_ids) for g in result.groups)


# Volume: a story is what its members have in common, not a chain of neighbours

CHAIN = [
    # Each headline shares two words with the next and none with any other.
    "Zephyr Airlines braces for pilot strike",
    "Pilot strike shuts Denver airport",
    "Denver airport closed by blizzard warning",
    "Blizzard warning for ski resorts",
    "Ski resorts raise lift tickets",
    "Lift tickets draw antitrust probe",
    "Antitrust probe hits Alpine Holdings",
    "Alpine Holdings shares tumble",
]


def test_a_chain_of_look_alike_neighbours_is_not_one_story() -> None:
    # Single link made one story of all eight: each neighbour is alike enough (0.38-0.54).
    items = [Report(id=n, title=title, first_seen=T0) for n, title in enumerate(CHAIN)]
    groups = cluster_reports(items, window=WINDOW, similarity=THRESHOLD).groups
    for group in groups:
        # No story holds two headlines that share no word: here, at most two neighbours.
        assert len(group.article_ids) <= 2
        if len(group.article_ids) == 2:
            first, second = group.article_ids
            assert second == first + 1
    assert not any({0, len(CHAIN) - 1} <= set(g.article_ids) for g in groups)


def test_a_chain_stays_apart_among_other_news_and_across_runs() -> None:
    # The same chain arriving in two runs, amid the other test headlines.
    lines = H.ALL
    first = reports(lines) + [
        Report(id=100 + n, title=title, first_seen=T0) for n, title in enumerate(CHAIN[:4])
    ]
    run1 = cluster_reports(first, window=WINDOW, similarity=THRESHOLD)
    story_of = {aid: 1000 + n for n, g in enumerate(run1.groups) for aid in g.article_ids}
    stored = [
        Report(id=r.id, title=r.title, text=r.text, first_seen=T0, story_id=story_of[r.id])
        for r in first
    ]
    later = T0 + timedelta(hours=6)
    arriving = [
        Report(id=104 + n, title=title, first_seen=later) for n, title in enumerate(CHAIN[4:])
    ]
    run2 = cluster_reports(stored + arriving, window=WINDOW, similarity=THRESHOLD)
    assert not any({100, 100 + len(CHAIN) - 1} <= set(g.article_ids) for g in run2.groups)
    chained = [g for g in run2.groups if len({a for a in g.article_ids if a >= 100}) > 2]
    assert chained == []


# Runs that build on each other: an article keeps its story, stories are never split or merged


@st.composite
def two_runs(draw: st.DrawFn) -> tuple[list[Report], list[Report]]:
    """Realistic headlines in two runs, a few hours apart, with unrelated ids."""
    lines = H.ALL + [H.Line(None, "Wire", title, "") for title in CHAIN]
    chosen = draw(st.lists(st.sampled_from(range(len(lines))), min_size=2, max_size=30))
    ids = draw(st.lists(st.integers(1, 10_000), min_size=len(chosen), max_size=len(chosen)))
    ids = list(dict.fromkeys(ids))
    split = draw(st.integers(1, len(ids)))
    hours = draw(st.lists(st.integers(0, 30), min_size=len(ids), max_size=len(ids)))
    made = [
        Report(
            id=article_id,
            title=lines[k].title,
            text=lines[k].text,
            first_seen=T0 + timedelta(hours=h),
        )
        for article_id, k, h in zip(ids, chosen, hours, strict=False)
    ]
    return made[:split], made[split:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_runs())
def test_a_second_run_keeps_every_story_of_the_first_whole_and_apart(
    runs: tuple[list[Report], list[Report]],
) -> None:
    old, new = runs
    run1 = cluster_reports(old, window=WINDOW, similarity=THRESHOLD)
    story_of = {aid: 500 + n for n, g in enumerate(run1.groups) for aid in g.article_ids}
    stored = [replace(r, story_id=story_of[r.id]) for r in old]
    run2 = cluster_reports(stored + new, window=WINDOW, similarity=THRESHOLD)

    group_of = {aid: g for g in run2.groups for aid in g.article_ids}
    for r in stored:  # every old article keeps its story
        assert group_of[r.id].story_id == r.story_id
    for g in run2.groups:  # each story in one group, with all its old articles, alone
        old_members = {a for a in g.article_ids if a in story_of}
        assert {story_of[a] for a in old_members} <= {g.story_id}
        if g.story_id is not None:
            assert old_members == {a for a, s in story_of.items() if s == g.story_id}
        assert set(g.new_article_ids) == set(g.article_ids) - old_members
    assert sorted(a for g in run2.groups for a in g.article_ids) == sorted(
        r.id for r in stored + new
    )


# Determinism: the same stories whatever the order of the input


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_runs(), st.randoms(use_true_random=False), st.booleans())
def test_realistic_input_in_any_order_gives_the_same_stories_and_names(
    runs: tuple[list[Report], list[Report]], rnd: random.Random, embedded: bool
) -> None:
    old, new = runs
    items = [replace(r, story_id=7) for r in old[:2]] + old[2:] + new
    if embedded:
        items = [replace(r, embedding=_vector(r.title, seed=r.id % 3)) for r in items]
    shuffled = list(items)
    rnd.shuffle(shuffled)
    a = cluster_reports(items, window=WINDOW, similarity=THRESHOLD)
    b = cluster_reports(shuffled, window=WINDOW, similarity=THRESHOLD)
    assert a == b  # the groups, their order and their representatives


# Embeddings: a vector per article, from any model, adds to the lexical similarity

DIM = 64


def _unit(v: list[float]) -> list[float]:
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


CONE = _unit([1.0] * DIM)  # what every vector of a sentence-embedding model shares


def _vector(text: str, *, seed: int = 0, near: list[float] | None = None) -> tuple[float, ...]:
    """A synthetic embedding: the common cone plus a direction of its own (or `near` one)."""
    rng = random.Random(f"{text}/{seed}")
    noise = _unit([rng.gauss(0, 1) for _ in range(DIM)])
    own = _unit([n + 0.1 * x for n, x in zip(near, noise, strict=True)]) if near else noise
    return tuple(0.9 * c + 0.44 * o for c, o in zip(CONE, own, strict=True))


QUAKE_3 = [
    "Earthquake shakes southern coast, thousands flee",
    "Erdbeben erschüttert Südküste, Tausende fliehen",
    "Terremoto sacude la costa sur, miles huyen",
]


def _window(vectors: bool, event: list[float] | None) -> list[Report]:
    background = [
        Report(
            id=n,
            title=line.title,
            text=line.text,
            first_seen=T0,
            embedding=_vector(line.title) if vectors else None,
        )
        for n, line in enumerate(H.SINGLES + H.SINGLES_DE, start=1)
    ]
    quake = [
        Report(
            id=100 + n,
            title=title,
            first_seen=T0 + timedelta(hours=n),
            embedding=_vector(title, near=event) if vectors else None,
        )
        for n, title in enumerate(QUAKE_3)
    ]
    return background + quake


def test_one_event_in_three_languages_is_one_story_when_its_vectors_agree() -> None:
    rng = random.Random(3)  # one generator: a new one per coordinate repeats one value
    event = _unit([rng.gauss(0, 1) for _ in range(DIM)])
    result = cluster_reports(_window(True, event), window=WINDOW, similarity=THRESHOLD)
    assert frozenset({100, 101, 102}) in result.partition()
    assert all(len(g) == 1 for g in result.partition() if not g & {100, 101, 102})
    # No word in common: without vectors, three stories; with vectors of their own, too.
    for vectors, near in ((False, None), (True, None)):
        alone = cluster_reports(_window(vectors, near), window=WINDOW, similarity=THRESHOLD)
        assert all(len(g) == 1 for g in alone.partition())


def test_vectors_far_apart_keep_look_alike_headlines_apart() -> None:
    a = Report(id=1, title="Apple shares jump after record iPhone sales", first_seen=T0)
    b = Report(id=2, title="Apple harvest jumps after record warm spring", first_seen=T0)
    others = reports(H.SINGLES, first_id=10)
    lexical = cluster_reports([a, b, *others], window=WINDOW, similarity=THRESHOLD)
    assert frozenset({1, 2}) in lexical.partition()  # 0.41 alike by their words

    # Their vectors point away from each other, beyond what all of them share: shares, fruit.
    rng = random.Random("shares")
    g = [rng.gauss(0, 1) for _ in range(DIM)]
    along = sum(x * c for x, c in zip(g, CONE, strict=True))
    shares = _unit([x - along * c for x, c in zip(g, CONE, strict=True)])
    fruit = [-x for x in shares]
    embedded = [
        replace(a, embedding=_vector(a.title, near=shares)),
        replace(b, embedding=_vector(b.title, near=fruit)),
        *(replace(r, embedding=_vector(r.title)) for r in others),
    ]
    result = cluster_reports(embedded, window=WINDOW, similarity=THRESHOLD)
    assert frozenset({1}) in result.partition()
    assert frozenset({2}) in result.partition()


def test_embeddings_of_different_lengths_are_refused() -> None:
    items = [
        Report(id=1, title="a b", first_seen=T0, embedding=(1.0, 0.0)),
        Report(id=2, title="c d", first_seen=T0, embedding=(1.0, 0.0, 0.0)),
    ]
    with pytest.raises(ValueError, match="lengths"):
        cluster_reports(items, window=WINDOW, similarity=THRESHOLD)


# Languages: vectors weigh the words within a language and stand in for them across languages


def test_a_reports_language_is_told_by_its_function_words() -> None:
    fed, quake_de, quake_fr = H.FED[0], H.QUAKE_DE[0], H.QUAKE_FR[0]
    assert language(f"{fed.title}\n{fed.text}") == "en"
    assert language(f"{quake_de.title}\n{quake_de.text}") == "de"
    assert language(f"{quake_fr.title}\n{quake_fr.text}") == "fr"
    assert language("El terremoto sacude la costa sur y miles huyen tras la alerta") == "es"
    # Names and nouns only, or one stray word ("MIT"), say nothing.
    assert language("Mt. Gox collapse: MIT study") is None
    assert language("") is None


def _direction(seed: object) -> list[float]:
    rng = random.Random(str(seed))
    return _unit([rng.gauss(0, 1) for _ in range(DIM)])


def _spread(near: list[float], amount: float, seed: str) -> list[float]:
    rng = random.Random(seed)
    return _unit([n + amount * rng.gauss(0, 1) for n in near])


def _embedded(lines: list[H.Line], first_id: int, vectors: list[list[float]]) -> list[Report]:
    return [
        Report(
            id=n,
            title=line.title,
            text=line.text,
            first_seen=T0,
            outlet=line.outlet,
            embedding=tuple(0.9 * c + 0.44 * o for c, o in zip(CONE, v, strict=True)),
        )
        for n, (line, v) in enumerate(zip(lines, vectors, strict=True), start=first_id)
    ]


def test_one_event_told_in_english_german_and_french_is_one_story() -> None:
    # Vectors of one event that agree only loosely (centred cosines about 0.5, as
    # multilingual-e5 gives across languages), among unrelated news in the same languages.
    event = _direction(11)
    quake = H.QUAKE + H.QUAKE_DE + H.QUAKE_FR
    told = _embedded(quake, 100, [_spread(event, 0.13, line.title) for line in quake])
    others = H.SINGLES + H.SINGLES_DE
    background = _embedded(others, 1, [_direction(o.title) for o in others])
    result = cluster_reports(background + told, window=WINDOW, similarity=THRESHOLD)
    assert frozenset(r.id for r in told) in result.partition()
    assert all(len(g) == 1 for g in result.partition() if not g & {r.id for r in told})

    # Without vectors, words join each language's reports and no more.
    lexical = cluster_reports(
        [replace(r, embedding=None) for r in background + told],
        window=WINDOW,
        similarity=THRESHOLD,
    )
    assert frozenset({100, 101}) in lexical.partition()
    assert frozenset({102, 103}) in lexical.partition()
    assert frozenset({104, 105}) in lexical.partition()


def test_within_one_language_vectors_alone_never_join_two_headlines() -> None:
    # Two English reports that share no word but whose vectors are alike: the vectors weigh
    # what the words say, they do not stand in for words in a language both are written in.
    direction = _direction(5)
    a = H.Line(None, "Wire", "Storm batters the coast", "Thousands lost power at the weekend.")
    b = H.Line(
        None, "Daily", "Hurricane leaves millions in darkness", "It is the worst in decades."
    )
    near = [_spread(direction, 0.05, "a"), _spread(direction, 0.05, "b")]
    others = H.SINGLES
    items = _embedded([a, b, *others], 1, near + [_direction(o.title) for o in others])
    assert language(f"{a.title}\n{a.text}") == language(f"{b.title}\n{b.text}") == "en"
    result = cluster_reports(items, window=WINDOW, similarity=THRESHOLD)
    assert frozenset({1}) in result.partition()
    assert frozenset({2}) in result.partition()


# A story across days (issue 38): coverage of one developing event, collected once a day (noon),
# stays one story; two events of one topic on consecutive days stay two.
DAM_EN = [
    [
        (
            "Dam collapse in southern Laos floods six villages, hundreds missing",
            "A hydropower dam under construction in Attapeu province collapsed on Monday night, "
            "sending a wall of water through six villages; hundreds of people are missing.",
        ),
        (
            "Laos dam collapse leaves hundreds missing in Attapeu",
            "Several people were killed and hundreds are missing after the Xe Pian-Xe Namnoy "
            "dam in Attapeu province collapsed, state media said.",
        ),
    ],
    [
        (
            "Laos dam collapse: rescuers search for hundreds missing as death toll rises to 26",
            "Rescue teams in boats reached flooded villages in Attapeu province a day after the "
            "Xe Pian-Xe Namnoy dam collapsed; 26 bodies have been recovered.",
        ),
        (
            "Death toll from Laos dam collapse rises, thousands homeless in Attapeu",
            "Thousands of villagers in Attapeu were left homeless by the dam collapse, and "
            "rescuers were still searching for the missing.",
        ),
    ],
    [
        (
            "Laos dam collapse survivors describe wall of water as toll reaches 35",
            "Survivors of the Xe Pian-Xe Namnoy dam collapse in Attapeu told of a wall of water "
            "that swept their homes away; 35 people are confirmed dead.",
        ),
    ],
]
QUAKE_ES = [
    [
        (
            "Un terremoto de magnitud 7,1 sacude el centro de México y deja decenas de muertos",
            "El sismo, con epicentro en el estado de Puebla, derrumbó edificios en Ciudad de "
            "México y dejó al menos 49 muertos, según Protección Civil.",
        ),
        (
            "Fuerte terremoto en México: al menos 49 muertos en Puebla y Ciudad de México",
            "El terremoto de magnitud 7,1 derribó decenas de edificios en la capital y en Puebla.",
        ),
    ],
    [
        (
            "Asciende a 217 la cifra de muertos por el terremoto en México",
            "Los rescatistas siguen buscando sobrevivientes entre los escombros de los edificios "
            "derrumbados por el terremoto en Ciudad de México y Puebla.",
        ),
        (
            "Rescatistas buscan sobrevivientes del terremoto entre los escombros en México",
            "Soldados y voluntarios trabajan sin descanso en Ciudad de México un día después del "
            "terremoto de magnitud 7,1, que ya deja 217 muertos.",
        ),
    ],
    [
        (
            "Sube a 273 el número de muertos por el terremoto en México",
            "Protección Civil elevó a 273 los muertos del terremoto de magnitud 7,1 en Ciudad de "
            "México, Puebla y Morelos, mientras continúan las labores de rescate.",
        ),
    ],
]
# Two clashes of one uprising on consecutive days, in other places with other people.
CLASHES_EN = [
    [
        (
            "Clashes in Sanaa leave 38 injured as protesters demand Saleh's exit",
            "Supporters of President Ali Abdullah Saleh attacked thousands of anti-government "
            "protesters near Sanaa University, leaving 38 people injured, witnesses said.",
        ),
    ],
    [
        (
            "Benghazi buries 20 protesters killed by Gaddafi's security forces",
            "Thousands marched in Benghazi to bury 20 protesters shot dead by security forces, "
            "as the revolt against Muammar Gaddafi spread across eastern Libya.",
        ),
    ],
]
CLASHES_ES = [
    [
        (
            "Enfrentamientos en Saná dejan 38 heridos entre los manifestantes contra Saleh",
            "Partidarios del presidente Ali Abdulá Saleh atacaron a miles de manifestantes "
            "junto a la Universidad de Saná, con un saldo de 38 heridos.",
        ),
    ],
    [
        (
            "Bengasi entierra a 20 manifestantes muertos por las fuerzas de Gadafi",
            "Miles de personas marcharon en Bengasi para enterrar a 20 manifestantes abatidos "
            "por las fuerzas de seguridad, mientras la revuelta contra Muamar Gadafi se extiende.",
        ),
    ],
]


def collected_daily(days: list[list[tuple[str, str]]], others: list[H.Line]) -> list[set[int]]:
    """Each day's articles (published at noon) clustered at 23:00 with the stories collected
    before, as the service does with one collect a day; `others` come on the first day. The
    stories of the days' articles (ids from 1, in order), by id."""
    stored: list[Report] = []
    story_of: dict[int, int] = {}
    next_id = 1
    for day, told in enumerate(days):
        noon = T0 + timedelta(days=day)
        arriving = [
            Report(id=next_id + n, title=title, text=text, first_seen=noon, outlet=f"o{n}")
            for n, (title, text) in enumerate(told)
        ]
        next_id += len(told)
        if day == 0:
            arriving += reports(others, first_id=1000, at=noon)
        window_start = noon + timedelta(hours=11) - WINDOW
        recent = [r for r in stored if r.when >= window_start]
        alive = {r.story_id for r in recent}
        batch = [r for r in stored if r.story_id in alive] + arriving
        result = cluster_reports(batch, window=WINDOW, similarity=THRESHOLD)
        for group in result.groups:
            story = group.story_id if group.story_id is not None else 100 + len(story_of)
            story_of.update((i, story) for i in group.new_article_ids)
        stored += [replace(r, story_id=story_of[r.id]) for r in arriving]
    ours = range(1, next_id)
    return [{i for i in ours if story_of[i] == s} for s in sorted({story_of[i] for i in ours})]


@pytest.mark.parametrize("days", [DAM_EN, QUAKE_ES], ids=["en", "es"])
def test_a_developing_story_collected_once_a_day_stays_one_story(
    days: list[list[tuple[str, str]]],
) -> None:
    articles = sum(len(d) for d in days)
    assert collected_daily(days, H.SINGLES) == [set(range(1, articles + 1))]


@pytest.mark.parametrize("days", [CLASHES_EN, CLASHES_ES], ids=["en", "es"])
def test_two_events_of_one_uprising_on_consecutive_days_stay_two_stories(
    days: list[list[tuple[str, str]]],
) -> None:
    assert collected_daily(days, H.SINGLES) == [{1}, {2}]

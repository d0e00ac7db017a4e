"""Archive search (digest.store.search) on SQLite FTS5 and PostgreSQL full-text search."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from digest.config import StoriesConfig
from digest.errors import InvalidQueryError
from digest.jobs.clustering import cluster_category
from digest.models import Page, Summary
from digest.store import Store, open_store, search_backends
from digest.store.engine import alembic_config, make_engine, upgrade
from digest.store.search import split_marked
from digest.store.search_query import SearchQuery, Term, fts5_expression, parse_query
from tests import storefixtures
from tests.storefixtures import NOW, PG_HOST, PG_PORT, PG_URL, item, postgres_reachable

db_url, store = storefixtures.db_url, storefixtures.store

BANK = "https://news-a.example/economy/central-bank"
STORM = "https://news-b.example/weather/storm"
CHIP = "https://news-c.example/tech/chip-plant"


def seed(store: Store) -> dict[str, int]:
    """Three unrelated articles, each with a word found nowhere else, in a different field."""
    store.upsert_items(
        [
            item(
                BANK,
                title="Central bank raises interest rates",
                lede="Policymakers voted eight to one on Tuesday.",
                source="Ledger Daily",
                category="finance",
                published=NOW - timedelta(hours=2),
            ),
            item(
                STORM,
                title="Storm closes the harbour",
                lede="Ferries stayed in port as gusts reached 120 km/h in Zürich and Basel.",
                source="Coast Herald",
                category="world",
                published=NOW - timedelta(days=40),
            ),
            item(
                CHIP,
                title="New chip plant opens",
                lede="The factory will employ 3,000 people.",
                source="Tech Wire",
                category="technology",
                published=NOW - timedelta(hours=5),
            ),
        ],
        seen_at=NOW,
    )
    ids = {url: store.article_by_url(url).id for url in (BANK, STORM, CHIP)}  # type: ignore[union-attr]
    text = "Deep in the report: the plant draws cooling water from the Rhine aquifer."
    store.save_crawl(ids[CHIP], Page(url=CHIP, final_url=CHIP, title="x", text=text), at=NOW)
    summary = Summary(
        title="Storm",
        summary="Harbour authorities expect a reopening once the squall passes.",
        brief_summary="The harbour is shut by a squall.",
    )
    store.save_summary(ids[STORM], "h-storm", summary, at=NOW)
    return ids


def urls(hits) -> list[str]:
    return [h.url for h in hits]


def highlighted(hit) -> list[str]:
    return [hit.snippet[a:b] for a, b in hit.highlights]


# Finding things, on both databases


def test_search_finds_words_of_the_headline_lede_text_and_summary(store: Store) -> None:
    seed(store)
    (by_title,) = store.search("interest")
    assert (by_title.url, by_title.matched) == (BANK, "headline")
    (by_lede,) = store.search("ferries")
    assert (by_lede.url, by_lede.matched) == (STORM, "lede")
    assert "Ferries" in highlighted(by_lede)
    (by_text,) = store.search("aquifer")
    assert by_text.url == CHIP and by_text.matched == "text"
    assert "aquifer" in highlighted(by_text)
    (by_summary,) = store.search("squall")
    assert (by_summary.url, by_summary.matched) == (STORM, "summary")
    assert "squall" in highlighted(by_summary)
    assert store.search("volcano") == []


def test_search_stems_words_and_carries_what_a_result_needs(store: Store) -> None:
    seed(store)
    (hit,) = store.search("raising rate")  # "raises", "rates"
    assert hit.url == BANK
    data = hit.to_json()
    assert {"title", "url", "published", "category", "snippet"} <= set(data)
    assert data["category"] == "finance"
    assert data["published"].startswith((NOW - timedelta(hours=2)).date().isoformat())
    assert data["outlets"] == [{"name": "Ledger Daily", "url": BANK}]


def test_phrases_exclusions_and_alternatives(store: Store) -> None:
    seed(store)
    assert urls(store.search('"interest rates"')) == [BANK]
    assert store.search('"rates interest"') == []
    assert urls(store.search("harbour -squall")) == []  # the summary mentions the squall
    assert urls(store.search("ferries squall")) == [STORM]  # words from the lede and summary
    assert urls(store.search("harbour -ferries -policymakers")) == []
    assert sorted(urls(store.search("aquifer OR policymakers"))) == sorted([BANK, CHIP])
    assert urls(store.search("storm OR nonsenseword")) == [STORM]


def test_category_and_since_filter_results(store: Store) -> None:
    seed(store)
    both = "plant OR harbour"
    assert sorted(urls(store.search(both))) == sorted([CHIP, STORM])
    assert urls(store.search(both, category="technology")) == [CHIP]
    assert urls(store.search(both, since=NOW - timedelta(days=7))) == [CHIP]
    assert store.search(both, category="finance") == []


def test_a_headline_match_ranks_above_a_passing_mention(store: Store) -> None:
    store.upsert_items(
        [
            item("https://a.example/1", title="Election results", lede="Counting continues."),
            item(
                "https://b.example/2",
                title="Weather for the weekend",
                lede="Sunny, said a forecaster who was asked about the election by a reporter.",
            ),
        ],
        seen_at=NOW,
    )
    assert urls(store.search("election")) == ["https://a.example/1", "https://b.example/2"]


def test_one_result_per_story_listing_every_outlet(store: Store) -> None:
    title = "Parliament passes the climate bill after a night session"
    store.upsert_items(
        [
            item(f"https://{host}.example/bill", title=title, source=name, lede="Bill passed.")
            for host, name in [("one", "One Post"), ("two", "Two Times"), ("three", "Three FM")]
        ],
        seen_at=NOW,
    )
    cluster_category(store, "technology", now=NOW, config=StoriesConfig())
    (hit,) = store.search("climate bill")
    assert hit.story_id is not None
    assert sorted(o.name for o in hit.outlets) == ["One Post", "Three FM", "Two Times"]
    assert len({o.url for o in hit.outlets}) == 3


def test_the_index_follows_updates_and_pruned_texts(store: Store) -> None:
    ids = seed(store)
    store.upsert_items(
        [item(BANK, title="Central bank holds rates", lede="A surprise pause.")], seen_at=NOW
    )
    assert store.search("interest") == []
    assert urls(store.search("pause")) == [BANK]
    # Seeing an article again without changes keeps it findable (the trigger skips it).
    store.upsert_items([item(BANK, title="Central bank holds rates")], seen_at=NOW)
    assert urls(store.search("pause")) == [BANK]
    assert store.prune_texts(NOW + timedelta(days=1)) == 1
    assert store.search("aquifer") == []
    assert urls(store.search("chip")) == [CHIP]  # the article itself is kept
    assert ids[CHIP]


HOSTILE = [
    '"',
    '"unclosed phrase',
    "AND OR NOT",
    "NEAR(a b)",
    "col:umn",
    "a* ^b",
    "(((",
    "-",
    "--rates",
    "'; DROP TABLE articles; --",
    "\x00rates",
    "zürich",
    "中央銀行",
    "🙂 rates",
    "rates" * 200,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_give_results_or_a_clear_message(store: Store, text: str) -> None:
    seed(store)
    try:
        hits = store.search(text)
    except InvalidQueryError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert isinstance(hits, list)
    assert len(store.search("rates")) == 1  # nothing was harmed


def test_words_with_diacritics_match_without_them_on_sqlite(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'd.db'}") as s:
        seed(s)
        assert urls(s.search("zurich")) == [STORM]
        assert urls(s.search("Zürich")) == [STORM]


# Migration


def test_upgrading_an_archive_indexes_what_it_already_holds(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0003")
            conn.execute(
                text(
                    "INSERT INTO articles (url, original_url, title, source, snippet, lede, "
                    "extract_status, origin, first_seen, last_seen) VALUES "
                    "(:u, :u, 'Central bank raises interest rates', 'A', '', '', 'ok', '', "
                    ":t, :t)"
                ),
                {"u": BANK, "t": NOW},
            )
            conn.execute(
                text(
                    "INSERT INTO summaries (article_id, content_hash, summarizer, title, "
                    "summary, brief_summary, keywords, prompt_tokens, completion_tokens, "
                    "created_at) VALUES (1, 'h', 'extractive', 't', 'Markets shrugged.', "
                    "'A quarter point.', '[]', 0, 0, :t)"
                ),
                {"t": NOW},
            )
        upgrade(engine)
        assert urls(Store(engine).search("interest")) == [BANK]
        assert urls(Store(engine).search("shrugged quarter")) == [BANK]
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0003")
        upgrade(engine)
        assert urls(Store(engine).search("interest")) == [BANK]
    finally:
        engine.dispose()


# The query language (pure)


def test_parse_query_reads_words_phrases_exclusions_and_or() -> None:
    q = parse_query('Climate "carbon tax" -coal OR solar')
    assert q == SearchQuery(
        (
            (Term(("Climate",)), Term(("carbon", "tax")), Term(("coal",), exclude=True)),
            (Term(("solar",)),),
        )
    )
    assert fts5_expression(q) == '("Climate" AND "carbon tax" NOT "coal") OR ("solar")'


@pytest.mark.parametrize("text", ["", "   ", '""', "-coal", "OR", "... ---", "\x00\t"])
def test_queries_with_nothing_to_find_are_refused_clearly(text: str) -> None:
    with pytest.raises(InvalidQueryError):
        parse_query(text)


def test_split_marked_turns_markers_into_spans() -> None:
    plain, spans = split_marked("a \x02big\x03  storm\n \x02here\x03")
    assert plain == "a big storm here"
    assert [plain[a:b] for a, b in spans] == ["big", "here"]


@given(st.text(max_size=80))
@example('"a" OR -"b c" d*')
@example("\x02x\x03")
def test_parse_query_takes_any_input(text: str) -> None:
    try:
        q = parse_query(text)
    except InvalidQueryError as err:
        assert str(err)
        return
    expression = fts5_expression(q)
    assert expression.count('"') % 2 == 0  # every term is one closed, quoted string
    assert all(w and "\x00" not in w for g in q.groups for t in g for w in t.words)


@pytest.fixture(scope="module")
def sqlite_archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path = tmp_path_factory.mktemp("fuzz") / "digest.db"
    with open_store(f"sqlite:///{path}") as s:
        seed(s)
        yield s


@pytest.fixture(scope="module")
def postgres_archive() -> Iterator[Store]:
    if not postgres_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}")
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        with open_store(f"{PG_URL}?options=-csearch_path%3D{schema}") as s:
            seed(s)
            yield s
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as a:
            a.execute(f'DROP SCHEMA "{schema}" CASCADE')


QUERY_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from('"-*():^'),
    max_size=40,
) | st.lists(st.sampled_from(["rates", "OR", "-", '"', "storm", "NOT", "*", "zürich"])).map(
    " ".join
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERY_TEXT)
@example(text="rates OR storm")
@example(text='"rates')
def test_any_query_runs_on_sqlite(sqlite_archive: Store, text: str) -> None:
    _runs_or_is_refused(sqlite_archive, text)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERY_TEXT)
@example(text="rates OR storm")
@example(text="the OR a")  # stop words only: an empty tsquery
def test_any_query_runs_on_postgresql(postgres_archive: Store, text: str) -> None:
    _runs_or_is_refused(postgres_archive, text)


def _runs_or_is_refused(store: Store, text: str) -> None:
    try:
        hits = store.search(text, limit=5)
    except InvalidQueryError:
        return
    assert len(hits) <= 5
    for hit in hits:
        assert all(0 <= a < b <= len(hit.snippet) for a, b in hit.highlights)


def test_any_word_finds_stories_that_share_some_of_the_words(store: Store) -> None:
    seed(store)
    assert store.search("what happened to the chip plant aquifer") == []
    hits = store.search("what happened to the chip plant aquifer", any_word=True)
    assert urls(hits)[0] == CHIP
    assert store.search("chip -aquifer", any_word=True) == []
    # Words every question has do not count: "what is the news" alone finds the words anyway.
    assert store.search("what is the news on the storm", any_word=True)[0].url == STORM
    assert len(store.search("what is the news on the storm", any_word=True)) == 1


def test_words_too_common_to_search_for_are_left_out_alike_on_both_databases(store: Store) -> None:
    seed(store)
    assert urls(store.search("the storm")) == [STORM]
    assert urls(store.search("storm -the")) == [STORM]  # not: every article has "the"
    assert urls(store.search('"closes the harbour"')) == [STORM]  # a phrase keeps its words
    with pytest.raises(InvalidQueryError, match='"the", "and": too common'):
        store.search("the and")


def test_postgresql_ranks_the_newest_matches_of_a_common_word(store: Store, monkeypatch) -> None:
    if store.engine.dialect.name != "postgresql":
        pytest.skip("SQLite ranks every match")
    monkeypatch.setattr(search_backends, "PG_RANK_WINDOW", 1)  # the window is then the pool: 50
    old = item("https://old.example/1", title="Storm storm storm", published=NOW - timedelta(300))
    newer = [
        item(f"https://new.example/{n}", title=f"Storm number {n}", published=NOW - timedelta(n))
        for n in range(60)
    ]
    store.upsert_items([old, *newer], seen_at=NOW)
    found = urls(store.search("storm", limit=10))
    assert len(found) == 10 and "https://old.example/1" not in found
    assert set(found) <= {f"https://new.example/{n}" for n in range(50)}
    monkeypatch.setattr(search_backends, "PG_RANK_WINDOW", 2_000)
    assert urls(store.search("storm", limit=1)) == ["https://old.example/1"]

"""Phrase search through the adjacent-pairs index (migration 0011, PostgreSQL): the pairs only
narrow what the phrase test reads, so a phrase finds exactly what it finds on SQLite, which
tests positions in its FTS5 index."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from digest.models import Page
from digest.store import Store, open_store
from digest.store.engine import alembic_config, upgrade
from digest.store.search_query import adjacent_pairs
from tests import storefixtures
from tests.storefixtures import NOW, item

db_url, store, pg_url = storefixtures.db_url, storefixtures.store, storefixtures.pg_url

ADJACENT = "https://a.example/adjacent"
APART = "https://b.example/apart"


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[Store]:
    """The pairs index is PostgreSQL's: FTS5 tests positions in its own index."""
    with open_store(pg_url) as opened:
        yield opened


def urls(hits) -> list[str]:
    return [h.url for h in hits]


def seed(store: Store) -> None:
    store.upsert_items(
        [
            item(ADJACENT, title="New chip plant opens", lede="It employs 3,000 people."),
            item(
                APART,
                title="Plant closes",
                lede="A chip shortage shut the plant; chip makers blame the plant's owner.",
                published=NOW - timedelta(hours=1),
            ),
        ],
        seen_at=NOW,
    )


def test_a_phrase_finds_its_words_side_by_side_and_not_apart(store: Store) -> None:
    seed(store)
    assert urls(store.search('"chip plant"')) == [ADJACENT]
    assert set(urls(store.search("chip plant"))) == {ADJACENT, APART}
    assert set(urls(store.search('"chip shortage" OR "chip plant"'))) == {ADJACENT, APART}
    assert urls(store.search('"chip plant" -employs')) == []
    # A phrase with a stop word inside keeps its gap; hyphenated words are phrases of their own.
    assert urls(store.search('"shut the plant"')) == [APART]
    assert urls(store.search('"chip-plant"')) == [ADJACENT]


def test_a_phrase_follows_a_changed_text_and_a_main_text(store: Store) -> None:
    seed(store)
    article = store.article_by_url(APART)
    assert article is not None
    assert store.search('"rhine aquifer"') == []
    page = Page(url=APART, final_url=APART, title="x", text="Water comes from the Rhine aquifer.")
    store.save_crawl(article.id, page, at=NOW)
    assert urls(store.search('"rhine aquifer"')) == [APART]
    # A sighting that changes no searched text keeps the pairs as they are.
    store.upsert_items([item(APART, title="Plant closes")], seen_at=NOW + timedelta(hours=1))
    assert urls(store.search('"rhine aquifer"')) == [APART]


def test_upgrading_an_archive_pairs_what_it_already_holds(pg_store: Store) -> None:
    seed(pg_store)
    with pg_store.engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0010")
        assert conn.execute(text("SELECT count(*) FROM articles")).scalar_one() == 2
    upgrade(pg_store.engine)
    assert urls(pg_store.search('"chip plant"')) == [ADJACENT]
    assert urls(pg_store.search('"chip shortage"')) == [APART]


# Words as pages and queries have them: stop words, hyphens, apostrophes, numbers, diacritics.
WORDS = st.sampled_from(
    "the a of and chip plant plants planting well-known o'brien's 3.14 1,5 zürich co-op "
    "e-mail x.com/path über straße rally rallies".split()
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(document=st.lists(WORDS, min_size=1, max_size=12), phrase=st.lists(WORDS, max_size=4))
def test_whatever_a_phrase_matches_holds_its_pairs(
    pg_store: Store, document: list[str], phrase: list[str]
) -> None:
    """PostgreSQL's own phrase operator is the reference: every document it matches has every
    pair that adjacent_pairs reads off the phrase's tsquery (the index never hides a match)."""
    with pg_store.engine.connect() as conn:
        row = conn.execute(
            text(
                "SELECT to_tsvector('english', :d) @@ phraseto_tsquery('english', :p), "
                "articles_search_pairs(to_tsvector('english', :d)), "
                "phraseto_tsquery('english', :p)::text"
            ),
            {"d": " ".join(document), "p": " ".join(phrase)},
        ).one()
    matches, stored, printed = row
    needed = adjacent_pairs(printed)
    if matches and needed is not None:
        assert set(needed) <= set(stored), (printed, stored)


def test_adjacent_pairs_reads_chains_and_refuses_anything_else() -> None:
    assert adjacent_pairs("'bank' <2> 'england'") == ()
    assert adjacent_pairs("'chip' <-> 'plant' <-> 'chip' <-> 'plant'") == (
        "chip plant",
        "plant chip",
    )
    assert adjacent_pairs("'o' <-> 'brien' <2> 'plan'") == ("o brien",)
    assert adjacent_pairs("'it''s' <1> 'x'") == ("it's x",)
    for not_a_chain in ("'a' & 'b'", "!'a'", "( 'a' <-> 'b' )", "'a' <->", "<-> 'a'", "'a' 'b'"):
        assert adjacent_pairs(not_a_chain) is None

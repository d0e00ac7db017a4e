"""Keyword rules: the parser (property-tested) and what a rule keeps of known headline sets."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.models import Edition, EditionHeadline, EditionSection, EditionStory, Outlet
from digest.stories.rules import (
    MAX_TERM_CHARS,
    MAX_TERMS,
    Rules,
    format_terms,
    is_empty,
    parse_terms,
    tailor,
)
from tests import headlines as known

DAY = date(2025, 3, 4)
NOW = datetime(2025, 3, 4, 7, 0, tzinfo=UTC)


def story(
    title: str, text: str = "", *, story_id: int = 1, category: str = "world"
) -> EditionStory:
    return EditionStory(
        id=story_id,
        category=category,
        title=title,
        brief_summary=text,
        summary=text,
        keywords=(),
        summarizer="extractive",
        outlets=(Outlet("Example", "https://example.org/a"),),
        first_seen=NOW,
    )


# The known headline sets of the clustering tests: English and German, events and singles.
TITLES = [line.title for line in known.ALL]
STORIES = [story(title, story_id=i) for i, title in enumerate(TITLES)]


def kept(include: str = "", exclude: str = "") -> list[str]:
    """The known headlines a rule keeps, by their first words."""
    rules = Rules(parse_terms(include), parse_terms(exclude))
    return [" ".join(s.title.split()[:3]) for s in STORIES if rules.keeps_story(s)]


# -- the parser ----------------------------------------------------------------------------------


def test_a_rule_is_words_and_phrases_between_commas() -> None:
    assert parse_terms('interest rates, "Bank of England" ; quake\nTesla') == (
        "interest rates",
        "Bank of England",
        "quake",
        "Tesla",
    )
    assert parse_terms("  ,, ;  ") == ()
    assert parse_terms(["fed", "rate cut"]) == ("fed", "rate cut")


def test_repeats_and_inflections_of_a_term_count_once() -> None:
    assert parse_terms("Election, elections, ELECTION, élection") == ("Election",)


def test_terms_without_a_word_are_dropped() -> None:
    assert parse_terms('"", --, ..., ¡!, fed') == ("fed",)


printable = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=300,
)
# Letters whose case folds back and forth (not the Turkish dotless i, for one), with accents.
word = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIZ0123456789äöüéèàçñøåß", min_size=1, max_size=12
)
phrase = st.lists(word, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(printable)
def test_any_text_parses_and_reading_the_result_again_changes_nothing(text: str) -> None:
    terms = parse_terms(text)
    assert isinstance(terms, tuple) and len(terms) <= MAX_TERMS
    for term in terms:
        assert term == term.strip() and term
        assert len(term) <= MAX_TERM_CHARS
        assert not any(c in term for c in ",;\n\r")
        assert all(unicodedata.category(c)[0] not in "CZ" or c == " " for c in term)
    assert parse_terms(format_terms(terms)) == terms


@settings(max_examples=300, deadline=None)
@given(st.lists(phrase, min_size=1, max_size=8))
def test_typed_terms_come_back_as_typed_in_order(typed: list[str]) -> None:
    terms = parse_terms(", ".join(typed))
    # The typed terms in the typed order, a repeat (the same words, however inflected) left out;
    # every typed term is still found by the terms kept.
    assert len(set(terms)) == len(terms)
    rest = iter(typed)
    assert all(any(t == u for u in rest) for t in terms)
    for t in typed:
        assert Rules(include=terms).keeps([t])


@settings(max_examples=300, deadline=None)
@given(phrase, st.lists(word, max_size=5), st.lists(word, max_size=5))
def test_a_phrase_is_found_in_any_case_and_with_diacritics_wherever_it_stands(
    term: str, before: list[str], after: list[str]
) -> None:
    text = " ".join([*before, term.upper(), *after])
    assert Rules(include=(term,)).keeps([text])
    assert not Rules(exclude=(term,)).keeps([text])
    accented = unicodedata.normalize("NFD", term)
    assert Rules(include=(term,)).keeps([accented])


@settings(max_examples=200, deadline=None)
@given(st.lists(phrase, max_size=4), st.lists(phrase, min_size=1, max_size=4), printable)
def test_an_exclude_term_wins_over_every_include_term(
    include: list[str], exclude: list[str], text: str
) -> None:
    rules = Rules(parse_terms(include), parse_terms(exclude))
    hit = f"{text} {exclude[0]}"
    if parse_terms(exclude):
        assert not rules.keeps([hit])


# -- known headline sets -------------------------------------------------------------------------


def test_a_word_matches_whole_words_in_any_inflection() -> None:
    # "quake" is not in "earthquake": a word is a word, not a piece of one.
    assert kept("earthquake") == ["Magnitude 7.1 earthquake"]
    assert kept("quake, earthquake, erdbeben") == [
        "Magnitude 7.1 earthquake",
        "Strong quake jolts",
        "Schweres Erdbeben erschüttert",
        "Erdbeben der Stärke",
    ]
    assert kept("recall") == ["Tesla recalls over", "Tesla recall: Autopilot"]


def test_a_phrase_matches_its_words_next_to_each_other_in_order() -> None:
    assert kept("rate cut") == ["Powell says Fed"]  # not "Fed cuts interest rates"
    assert kept("interest rates") == ["Fed cuts interest"]
    assert kept("bank of england") == ["Bank of England"]
    assert kept("bank england, england bank, rates interest") == []


def test_diacritics_case_numbers_and_possessives_are_read_as_search_reads_them() -> None:
    assert kept("europaische zentralbank") == ["Europäische Zentralbank senkt"]
    assert kept("STARKE") == ["Erdbeben der Stärke"]
    assert kept("Zinssenkung") == ["DAX schließt auf"]  # "Zinssenkungen"
    assert kept("7.1") == ["Magnitude 7.1 earthquake", "Erdbeben der Stärke"]  # "7,1" too
    assert kept("japan exports") == ["Japan's exports rise"]


def test_exclusion_drops_every_story_it_matches_and_keeps_the_rest() -> None:
    everything = kept()
    assert len(everything) == len(TITLES)
    without = kept(exclude="tesla")
    assert len(without) == len(TITLES) - 4 and not any("Tesla" in t for t in without)


def test_exclusion_wins_over_inclusion() -> None:
    assert kept("real madrid", exclude="champions league") == [
        "Dortmund heartbreak at",
        "Real Madrid sign",
    ]
    assert kept("nvidia", exclude="nvidia") == []


def test_the_brief_summary_and_keywords_count_too() -> None:
    fed = replace(
        STORIES[0], title="Markets wrap", brief_summary="Powell spoke.", keywords=("FOMC",)
    )
    assert Rules(include=("powell",)).keeps_story(fed)
    assert Rules(include=("fomc",)).keeps_story(fed)
    assert not Rules(include=("spoke powell",)).keeps_story(fed)
    # A phrase does not run from one field into the next.
    assert not Rules(include=("wrap powell",)).keeps_story(fed)


# -- the reader's edition ------------------------------------------------------------------------


def edition() -> Edition:
    world = [story(line.title, line.text, story_id=i) for i, line in enumerate(known.ALL[:12])]
    other = EditionHeadline("Tesla recalls cars", "https://example.org/t", "Example", "")
    return Edition(
        day=DAY,
        timezone="UTC",
        sections=(
            EditionSection("world", tuple(world), (other,)),
            EditionSection(
                "technology",
                (story("Chip plant opens", story_id=99, category="technology"),),
                (),
            ),
        ),
        generated_at=NOW,
    )


def test_tailoring_keeps_matching_stories_and_headlines_at_most_n_a_category() -> None:
    mine = tailor(edition(), categories=None, rules=Rules(include=("fed", "tesla")), max_stories=2)
    assert [s.category for s in mine.sections] == ["world"]  # technology had nothing left
    (world,) = mine.sections
    assert len(world.stories) == 2
    assert all(Rules(include=("fed", "tesla")).keeps_story(s) for s in world.stories)
    assert [h.title for h in world.headlines] == ["Tesla recalls cars"]


def test_without_rules_a_category_keeps_all_its_headlines_and_top_stories() -> None:
    mine = tailor(edition(), categories=("technology",), rules=Rules(), max_stories=None)
    assert mine == edition().only(("technology",))
    capped = tailor(edition(), categories=None, rules=Rules(), max_stories=1)
    assert [len(s.stories) for s in capped.sections] == [1, 1]
    assert capped.sections[0].stories[0] == edition().sections[0].stories[0]


def test_a_rule_that_matches_nothing_leaves_an_empty_edition() -> None:
    mine = tailor(edition(), categories=None, rules=Rules(include=("zeppelin",)))
    assert is_empty(mine) and not is_empty(edition())


@pytest.mark.parametrize("categories", [None, ("world",)])
def test_tailoring_never_adds_or_changes_a_story(categories: tuple[str, ...] | None) -> None:
    full = {s.id: s for sec in edition().sections for s in sec.stories}
    mine = tailor(edition(), categories=categories, rules=Rules(exclude=("quake",)), max_stories=3)
    for section in mine.sections:
        for s in section.stories:
            assert full[s.id] == s and replace(s) == s

"""Headlines as readers see them: no outlet after them, no section label before them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.render.headlines import clean_headline, first_sentence

NYT = "The New York Times"


@pytest.mark.parametrize(
    ("title", "outlets", "shown"),
    [
        # The subject line.
        (
            "Opinion | Republicans Are Following Trump to Nowhere - The New York Times",
            [NYT],
            "Republicans Are Following Trump to Nowhere",
        ),
        ("Fed holds rates steady | Reuters", ["Reuters"], "Fed holds rates steady"),
        ("Fed holds rates steady — BBC News", ["BBC News"], "Fed holds rates steady"),
        ("Fed holds rates steady - New York Times", [NYT], "Fed holds rates steady"),
        ("Fed holds rates steady - NYTimes.com", [NYT], "Fed holds rates steady"),
        ("Fed holds rates steady - The New York Times", ["nytimes.com"], "Fed holds rates steady"),
        ("Guest Essay | The Case for Slower Trains", [], "The Case for Slower Trains"),
        ("LIVE: Storm makes landfall in Florida", [], "Storm makes landfall in Florida"),
        ("Analysis: Why the bond market shrugged", ["Reuters"], "Why the bond market shrugged"),
        # Not an outlet of this item: the suffix is part of the headline.
        ("Apple sues Samsung - again", ["Reuters"], "Apple sues Samsung - again"),
        ("Fed holds rates steady - Reuters", ["AP News"], "Fed holds rates steady - Reuters"),
        # Not a section label: an ordinary headline with a colon or a short bar.
        ("Ukraine: Russia strikes Kyiv overnight", [], "Ukraine: Russia strikes Kyiv overnight"),
        ("Markets wrap | Reuters", [], "Markets wrap | Reuters"),
        ("Markets wrap | Reuters", ["Reuters"], "Markets wrap"),
        # Nothing would be left: it stays.
        ("Reuters", ["Reuters"], "Reuters"),
        (" - Reuters", ["Reuters"], " - Reuters"),
        ("Opinion | ", [], "Opinion | "),
    ],
)
def test_headlines_lose_their_outlet_suffix_and_section_prefix_only(
    title: str, outlets: list[str], shown: str
) -> None:
    assert clean_headline(title, outlets) == shown


NAMES = st.sampled_from(["Reuters", NYT, "BBC News", "nytimes.com", "Le Monde", "AP"])
PIECES = st.sampled_from(
    [" - ", " | ", " — ", ": ", "Opinion", "LIVE", "Reuters", NYT, "The", "a", " ", "-", "|"]
)
TITLES = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(PIECES, st.text(min_size=1, max_size=8)), max_size=12).map("".join),
)


@given(TITLES, st.lists(NAMES, max_size=3))
def test_cleaning_never_empties_never_lengthens_and_is_idempotent(
    title: str, outlets: list[str]
) -> None:
    shown = clean_headline(title, outlets)
    assert len(shown) <= len(title)
    assert shown or not title
    assert clean_headline(shown, outlets) == shown
    if shown != title:  # something was taken off: what is left is words, taken from the title
        assert shown.strip() and shown in title


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("One thing happened. Then another.", "One thing happened."),
        (
            "Mr. Smith met Dr. Jones in the U.S. on Monday. They talked.",
            "Mr. Smith met Dr. Jones in the U.S. on Monday.",
        ),
        ('He said "never." Talks ended.', 'He said "never."'),
        ("No full stop here", "No full stop here"),
        ("Shares rose 4.5 per cent. Analysts were surprised.", "Shares rose 4.5 per cent."),
    ],
)
def test_the_first_sentence_of_a_brief(text: str, first: str) -> None:
    assert first_sentence(text) == first


@given(st.text(max_size=200))
def test_the_first_sentence_is_a_start_of_the_text(text: str) -> None:
    first = first_sentence(text)
    assert " ".join(text.split()).startswith(first)
    assert first or not text.strip()

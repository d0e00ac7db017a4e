"""What is new in an updated story (`digest.stories.novelty`): pure, tested without a store."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from digest.models import EditionStory, Outlet
from digest.stories.novelty import (
    MAX_FACTS,
    Joined,
    Telling,
    new_facts,
    outlet_key,
    sentences,
    whats_new,
)
from tests import headlines as H

DAY = date(2025, 3, 3)
BUILT = datetime(2025, 3, 3, 7, tzinfo=UTC)

KNOWN = [line.text for line in H.FED[:2]]  # what Reuters and AP said on day 1


def facts(known: list[str], *joined: Joined, languages: frozenset[str] = frozenset()) -> list[str]:
    return [f.text for f in new_facts(known, joined, known_languages=languages)]


# -- sentences -----------------------------------------------------------------------------------


def test_sentences_split_at_full_stops_but_not_at_initials_abbreviations_or_decimals() -> None:
    text = (
        "The U.S. Federal Reserve cut rates to 4.25%.  Dr. Powell spoke at 2 p.m. on Wednesday! "
        'Was it enough? "No," said one analyst. Markets fell in Nov. as well.'
    )
    assert sentences(text) == [
        "The U.S. Federal Reserve cut rates to 4.25%.",
        "Dr. Powell spoke at 2 p.m. on Wednesday!",
        "Was it enough?",
        '"No," said one analyst.',
        "Markets fell in Nov. as well.",
    ]


def test_sentences_of_other_languages_and_a_cut_lede() -> None:
    assert sentences("Die EZB senkt den Zins. Ökonomen hatten das erwartet. Der Dax stieg um…") == [
        "Die EZB senkt den Zins.",
        "Ökonomen hatten das erwartet.",
        "Der Dax stieg um…",
    ]
    assert sentences("¿Qué pasó? El Banco Central bajó los tipos.") == [
        "¿Qué pasó?",
        "El Banco Central bajó los tipos.",
    ]
    assert sentences("") == [] and sentences("   ") == []


@given(st.text(alphabet=st.sampled_from("aZ.!? 7,Ü\n\t\"'«…"), max_size=80))
def test_sentences_keep_every_word_in_order(text: str) -> None:
    assert " ".join(sentences(text)) == " ".join(text.split())


# -- new facts -----------------------------------------------------------------------------------


def test_a_sentence_mostly_made_of_new_words_is_a_fact_and_a_repeat_is_not() -> None:
    lede = (
        "The Federal Reserve cut its key interest rate by a quarter point on Wednesday. "
        "Stocks tumbled after the decision, with the Dow losing 1,100 points."
    )
    assert facts(KNOWN, Joined("CNBC", "en", (lede,))) == [
        "Stocks tumbled after the decision, with the Dow losing 1,100 points."
    ]


def test_nothing_is_new_in_a_lede_that_was_already_known() -> None:
    assert facts(KNOWN, Joined("Reuters", "en", (KNOWN[0],))) == []
    assert facts([], Joined("CNBC", "en", ())) == []


def test_datelines_and_bylines_are_too_short_to_be_facts() -> None:
    lede = "By Jane Doe. WASHINGTON. Treasury yields climbed to their highest level since May."
    assert facts(KNOWN, Joined("CNBC", "en", (lede,))) == [
        "Treasury yields climbed to their highest level since May."
    ]


def test_in_another_language_known_numbers_are_a_repeat_and_new_numbers_a_fact() -> None:
    lede = (
        "Die Fed hat den Leitzins um 25 Basispunkte auf 4,25 bis 4,50 Prozent gesenkt. "
        "Die Zahl der Arbeitslosen stieg auf 7,1 Millionen. "
        "Der Präsident kritisierte die Notenbank scharf."
    )
    german = Joined("Spiegel", "de", (lede,))
    assert facts(KNOWN, german, languages=frozenset({"en"})) == [
        "Die Zahl der Arbeitslosen stieg auf 7,1 Millionen.",
        "Der Präsident kritisierte die Notenbank scharf.",  # no numbers: judged by its words
    ]
    # Told in a language the story already had, figures alone do not make a repeat.
    assert facts(KNOWN, german, languages=frozenset({"de"}))[0].startswith("Die Fed hat")


def test_two_outlets_saying_the_same_new_thing_give_one_fact_and_at_most_a_few() -> None:
    same = "Treasury yields climbed to their highest level since May."
    more = [line.text for line in H.SINGLES[:5]]  # five unrelated, all new
    got = new_facts(
        KNOWN,
        [Joined("CNBC", "en", (same,)), Joined("CNN", "en", (same, " ".join(more)))],
    )
    assert [(f.outlet, f.text) for f in got[:2]] == [("CNBC", same), ("CNN", more[0])]
    assert len(got) == MAX_FACTS


ledes = st.lists(
    st.lists(st.sampled_from([line.text for line in H.ALL]), max_size=3), min_size=1, max_size=3
)


@given(ledes, st.lists(st.sampled_from([line.text for line in H.ALL]), max_size=4))
def test_facts_are_sentences_of_the_new_ledes_in_order_and_few(
    joined_ledes: list[list[str]], known: list[str]
) -> None:
    joined = [Joined(f"outlet {i}", "en", tuple(t)) for i, t in enumerate(joined_ledes)]
    got = new_facts(known, joined)
    candidates = [(j.outlet, s) for j in joined for lede in j.ledes for s in sentences(lede)]
    assert len(got) <= MAX_FACTS
    positions = [candidates.index((f.outlet, f.text)) for f in got]
    assert positions == sorted(set(positions))  # in order, no sentence twice
    assert new_facts(known, joined) == got  # deterministic
    # Whatever was already said is never new.
    assert new_facts([*known, *(t for j in joined for t in j.ledes)], joined) == ()


# -- what's new in a story -----------------------------------------------------------------------


def outlet(name: str, language: str = "en") -> Outlet:
    host = name.lower().replace(" ", "")
    return Outlet(
        name=name, url=f"https://{host}.example/a", title=f"{name}'s headline", language=language
    )


def story(*outlets: Outlet) -> EditionStory:
    return EditionStory(
        id=7,
        category="finance",
        title="Fed cuts interest rates",
        brief_summary="The Fed cut rates.",
        summary=KNOWN[0],
        keywords=(),
        summarizer="lede",
        outlets=outlets,
        first_seen=BUILT - timedelta(hours=5),
    )


def tell(name: str, lede: str, hours: int = -1) -> Telling:
    return Telling(outlet_key(outlet(name)), lede, BUILT + timedelta(hours=hours))


def test_a_story_whose_outlets_did_not_change_has_nothing_new() -> None:
    earlier = story(outlet("Reuters"), outlet("AP News"))
    now = story(outlet("AP News"), Outlet(" REUTERS ", "https://other.example/b"))
    tellings = [tell("Reuters", KNOWN[0]), tell("AP News", KNOWN[1], hours=3)]
    assert whats_new(now, earlier, since=DAY, as_of=BUILT, tellings=tellings) is None


def test_outlets_that_joined_are_listed_with_their_new_facts() -> None:
    earlier = story(outlet("Reuters"), outlet("AP News"))
    joined = outlet("Spiegel", "de")
    now = story(outlet("Reuters"), joined, outlet("AP News"))
    tellings = [
        tell("Reuters", KNOWN[0]),
        tell(
            "Spiegel",
            "Die Fed senkte den Zins auf 4,25 bis 4,50 Prozent. Der Dax fiel um 2 Prozent.",
        ),
        tell("AP News", KNOWN[1]),
    ]
    news = whats_new(now, earlier, since=DAY, as_of=BUILT, tellings=tellings)
    assert news is not None
    assert news.since == DAY and news.outlets == (joined,)
    assert [(f.outlet, f.text, f.language) for f in news.facts] == [
        ("Spiegel", "Der Dax fiel um 2 Prozent.", "de")
    ]


def test_what_the_old_outlets_published_after_the_edition_is_not_taken_as_known() -> None:
    earlier = story(outlet("Reuters"))
    now = story(outlet("Reuters"), outlet("CNN"))
    fact = "Treasury yields climbed to their highest level since May."
    late = [tell("Reuters", KNOWN[0]), tell("Reuters", fact, hours=2), tell("CNN", fact)]
    news = whats_new(now, earlier, since=DAY, as_of=BUILT, tellings=late)
    assert news is not None and [f.text for f in news.facts] == [fact]
    early = [tell("Reuters", KNOWN[0]), tell("Reuters", fact, hours=-2), tell("CNN", fact)]
    news = whats_new(now, earlier, since=DAY, as_of=BUILT, tellings=early)
    assert news is not None and news.facts == ()  # the reader had it on day 1


def test_an_earlier_edition_without_languages_takes_the_old_outlets_languages_of_now() -> None:
    earlier = story(outlet("Reuters", ""), outlet("AP News", ""))
    now = story(outlet("Reuters"), outlet("AP News"), outlet("Spiegel", "de"))
    repeat = "Die Fed senkte den Leitzins um 25 Basispunkte auf 4,25 bis 4,50 Prozent."
    tellings = [tell("Reuters", KNOWN[0]), tell("AP News", KNOWN[1]), tell("Spiegel", repeat)]
    news = whats_new(now, earlier, since=DAY, as_of=BUILT, tellings=tellings)
    assert news is not None and news.facts == ()  # judged by its numbers, all known


def test_an_outlet_is_the_same_by_its_name_whatever_its_case_or_link() -> None:
    assert outlet_key(Outlet("  Der   Spiegel ", "https://a.example")) == "der spiegel"
    assert outlet_key(Outlet("", "https://www.spiegel.de/x")) == "spiegel.de"
    assert outlet_key(Outlet("Élysée Info", "")) == outlet_key(Outlet("elysee info", "x"))

"""Figures in news text: what they count, where outlets disagree, revisions and corrections."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.models import Disagreement, Reported
from digest.summarize.figures import (
    Figure,
    agree,
    corrections,
    disagreements,
    figures_of,
    one_sided,
    per_subject,
    revisions,
    rising,
)


def _one(text: str) -> Figure:
    found = figures_of(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "subject", "value", "qualifier", "written"),
    [
        ("A blast left 12 dead in the city centre.", "dead", "12", "", "12"),
        ("At least 12 people were killed on Monday.", "dead", "12", "at least", "At least 12"),
        ("The gunman opened fire, killing 12.", "dead", "12", "", "12"),
        ("The death toll rose to 30 overnight.", "dead", "30", "", "30"),
        ("Officials gave a toll of 30.", "dead", "30", "", "30"),
        ("More than 40 were wounded.", "injured", "40", "more than", "More than 40"),
        ("Police arrested 14 people.", "arrested", "14", "", "14"),
        ("Nearly 3 are still missing.", "missing", "3", "nearly", "Nearly 3"),
        ("The regulator imposed a $48 million fine.", "fine", "48000000", "", "$48 million"),
        ("Inflation rose to 7.1% in March 2025.", "inflation", "7.1", "", "7.1%"),
        ("The company will cut 500 jobs.", "job", "500", "", "500"),
        ("More than 300 people were evacuated.", "evacuated", "300", "more than", "More than 300"),
        (
            "Bei dem Unglück kamen mindestens 12 Menschen ums Leben.",
            "dead",
            "12",
            "at least",
            "mindestens 12",
        ),
        ("Es gab rund 30 Verletzte.", "injured", "30", "about", "rund 30"),
        ("Die Inflation stieg auf 7,1 Prozent.", "inflation", "7.1", "", "7,1 Prozent"),
        ("Er zahlt eine Strafe von 3,2 Mrd. Euro.", "strafe", "3200000000", "", "3,2 Mrd. Euro"),
    ],
)
def test_a_figure_is_read_with_what_it_counts(
    text: str, subject: str, value: str, qualifier: str, written: str
) -> None:
    f = _one(text)
    assert (f.subject, f.value, f.qualifier, f.written) == (
        subject,
        Decimal(value),
        qualifier,
        written,
    )
    assert f.sentence == text


@pytest.mark.parametrize(
    "text",
    [
        "The death toll rose from 12 to 30.",
        "Die Zahl der Toten stieg von 12 auf 30.",
        "30 dead, up from 12 on Monday.",
    ],
)
def test_a_former_value_is_not_the_figure_the_text_reports(text: str) -> None:
    assert [(f.subject, f.value) for f in figures_of(text)] == [("dead", 30)]


def test_an_outlet_that_updates_its_toll_in_place_is_a_revision() -> None:
    (pair,) = revisions(figures_of("12 dead."), figures_of("The death toll rose from 12 to 30."))
    assert (pair[0].value, pair[1].value) == (12, 30)


def test_two_figures_in_one_sentence_keep_their_own_subjects() -> None:
    found = figures_of("The attack, killing 12 and injuring 30, shocked the city.")
    assert [(f.subject, f.value) for f in found] == [("dead", 12), ("injured", 30)]


@pytest.mark.parametrize(
    "text",
    [
        "The bridge opened in 2019.",
        "A 12-year-old boy was found.",
        "It was the 3rd time this week.",
        "The meeting starts at 10:30.",
        "He met 300 people.",
        "The trial lasted 12 days.",
        "Cases of COVID-19 rose.",
        "On 12 March the market opened.",
    ],
)
def test_numbers_that_count_nothing_nameable_are_no_figures(text: str) -> None:
    assert figures_of(text) == []


def test_values_agree_when_one_is_exactly_the_other_and_a_bound_is_a_value_of_its_own() -> None:
    at_least_30 = _one("At least 30 dead.")
    assert agree(at_least_30, _one("The toll rose to 30."))
    assert not agree(at_least_30, _one("45 dead."))
    assert not agree(_one("30 dead."), _one("30 injured."))


def _outlets(**texts: str) -> dict[str, list[Figure]]:
    return {name: figures_of(text) for name, text in texts.items()}


def test_outlets_that_report_different_tolls_disagree_each_with_its_value() -> None:
    found = disagreements(
        _outlets(
            A="At least 30 people were killed in the attack.",
            B="The attack left 45 dead.",
            C="The death toll rose to 45, officials said.",
        )
    )
    assert found == [
        Disagreement("dead", (Reported("45", ("B", "C")), Reported("At least 30", ("A",))))
    ]


def test_no_disagreement_among_outlets_that_say_the_same_or_of_one_outlet_alone() -> None:
    assert disagreements(_outlets(A="12 dead.", B="The toll stood at 12.")) == []
    assert disagreements(_outlets(A="12 dead. Later the toll rose to 30.")) == []


def test_a_subject_one_outlet_gives_two_values_is_too_ambiguous_to_disagree_on() -> None:
    found = disagreements(
        _outlets(
            A="First 12 dead were reported. The death toll rose to 30.",
            B="15 dead.",
            C="30 dead.",
        )
    )
    assert found == []


def test_figures_in_units_that_cannot_be_one_quantity_do_not_disagree() -> None:
    found = disagreements(
        _outlets(A="Inflation rose to 7.1%.", B="Inflation rose to 7.1 percentage points.")
    )
    assert found == []


def test_what_an_outlet_reports_per_subject_leaves_out_subjects_it_gives_two_values() -> None:
    found = per_subject(figures_of("12 dead. 30 injured. Later 14 dead were counted."))
    assert {s: f.written for s, f in found.items()} == {"injured": "30"}


def test_a_revised_figure_is_the_old_and_the_new_value() -> None:
    old = figures_of("12 dead in the blast. A $5 million fine.")
    new = figures_of("The death toll rose to 30. A $5 million fine.")
    assert [(a.written, b.written) for a, b in revisions(old, new)] == [("12", "30")]
    assert revisions(old, old) == []


DISPUTE = [Disagreement("dead", (Reported("At least 30", ("A",)), Reported("45", ("B",))))]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The attack killed 45.", True),
        ("At least 30 people died.", True),
        ("The attack killed 45, according to B.", False),
        ("Between 30 and 45 people were killed.", False),
        ("Officials said 45 died.", False),
        ("The attack injured 20.", False),
        ("The city mourned.", False),
    ],
)
def test_a_sentence_states_one_side_unless_it_attributes_or_ranges(
    sentence: str, expected: bool
) -> None:
    assert one_sided(sentence, DISPUTE) is expected


DAY1 = date(2026, 12, 3)


def test_a_figure_sent_is_corrected_when_its_source_revised_it_and_another_outlet_agrees() -> None:
    sent = [(DAY1, "The blast killed 12, police said.")]
    revised = {"A": revisions(figures_of("12 dead."), figures_of("The toll rose to 30."))}
    current = _outlets(A="The toll rose to 30.", B="30 people died.")
    (c,) = corrections(sent, current, revised)
    assert (c.subject, c.said, c.now, c.said_on) == ("dead", "12", "30", DAY1)
    assert c.outlets == ("A", "B")
    assert c.sentence == sent[0][1]


def test_one_outlets_revision_alone_corrects_nothing() -> None:
    """A mistake or a hostile page changed in place must not reach every reader as a
    correction: it needs a second outlet, and no outlet may still report what was sent."""
    sent = [(DAY1, "The blast killed 12, police said.")]
    revised = {"A": revisions(figures_of("12 dead."), figures_of("The toll rose to 300."))}
    alone = _outlets(A="The toll rose to 300.")
    assert corrections(sent, alone, revised) == []
    others_still_say_12 = _outlets(A="The toll rose to 300.", B="12 dead.", C="12 people died.")
    assert corrections(sent, others_still_say_12, revised) == []


@pytest.mark.parametrize(
    ("subject", "said", "now", "expected"),
    [
        ("dead", "12", "30", True),
        ("dead", "12", "at least 30", True),
        ("injured", "40", "38", False),
        ("dead", "30", "12", False),
        ("fine", "$48 million", "$50 million", False),
        ("missing", "10", "12", False),
    ],
)
def test_a_higher_toll_later_is_an_update_not_an_error(
    subject: str, said: str, now: str, expected: bool
) -> None:
    assert rising(subject, said, now) is expected


@pytest.mark.parametrize(
    "text",
    [
        "Al menos 12 personas murieron y 30 resultaron heridas en 2011, hace 18 días.",
        "Au moins 12 personnes sont mortes et 200 000 ont manifesté mercredi.",
        "Almeno 12 persone sono morte e 30 sono rimaste ferite nel 2011.",
    ],
)
def test_a_language_without_rules_has_no_figures(text: str) -> None:
    """English rules on Spanish read "años" as a count and "según" as a subject: nothing is
    better than that."""
    assert figures_of(text) == []
    assert figures_of(text, "es") == []


def test_a_figure_sent_is_corrected_when_two_newer_reports_agree_on_another() -> None:
    sent = [(DAY1, "The blast killed 12.")]
    (c,) = corrections(sent, _outlets(B="At least 30 dead.", C="At least 30 people died."))
    assert (c.said, c.now, c.outlets) == ("12", "At least 30", ("B", "C"))


def test_no_correction_on_one_report_on_a_dispute_or_on_a_bound_that_still_holds() -> None:
    sent = [(DAY1, "The blast killed 12.")]
    assert corrections(sent, _outlets(B="30 dead.")) == []
    assert corrections(sent, _outlets(A="12 dead.", B="30 dead.", C="30 dead.")) == []
    assert (
        corrections([(DAY1, "At least 12 were killed.")], _outlets(B="30 dead.", C="30 dead."))
        == []
    )


# -- properties ------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "12",
        "at least 30",
        "1,200",
        "7,1 Prozent",
        "$48 million",
        "dead",
        "killed",
        "people",
        "were",
        "toll",
        "the",
        "rose to",
        "fine",
        "Verletzte",
        "mindestens",
        "3.",
        "2025",
        "March",
        ",",
        ".",
        " ",
        "-",
        ":",
        "%",
        "über",
        "killing",
        "and",
        "\u202f200",
        "\n",
    ]
)
_TEXT = st.one_of(st.text(max_size=200), st.lists(_PIECES, max_size=30).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_reading_figures_never_fails_and_each_is_written_in_its_sentence(text: str) -> None:
    for f in figures_of(text):
        assert f.written and f.written in f.sentence
        assert f.subject


_REPORTS = st.sampled_from(
    [
        "12 dead.",
        "At least 30 dead.",
        "The toll rose to 30.",
        "45 were killed.",
        "A $5m fine.",
        "Inflation rose to 7%.",
        "No figures here.",
        "15 injured and 3 missing.",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from("ABCDE"), _REPORTS, max_size=5), st.randoms())
def test_disagreements_do_not_depend_on_the_order_of_outlets(
    reports: dict[str, str], rnd: object
) -> None:
    names = list(reports)
    rnd.shuffle(names)  # type: ignore[attr-defined]
    shuffled = {n: figures_of(reports[n]) for n in names}
    assert disagreements(shuffled) == disagreements(_outlets(**reports))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("ABCDE"), min_size=1, max_size=5, unique=True), _REPORTS)
def test_outlets_that_all_say_the_same_never_disagree(outlets: list[str], report: str) -> None:
    assert disagreements({o: figures_of(report) for o in outlets}) == []


@settings(max_examples=150, deadline=None)
@given(
    digits=st.text(alphabet="0123456789", min_size=25, max_size=60),
    words=st.sampled_from(["It killed {} people.", "Order {} was placed.", "A fine of €{}."]),
)
def test_a_number_longer_than_decimals_hold_is_read_not_a_crash(digits: str, words: str) -> None:
    # An id or a reference number in a page is no reason for a story's summary to fail.
    for figure in figures_of(words.format(digits)):
        assert figure.value >= 0


def test_two_outlets_over_two_days_disagree_then_update_the_sent_toll() -> None:
    """Issue 38's English case: day 1 A says twelve died (12 bodies recovered), B at least 15;
    day 2 A says 30 and C at least 30. Day 1 shows the disagreement; day 2 the sent 12 is
    updated, in words that do not call a rising toll an error."""
    from digest.render.corrections import correction_line

    a1 = "Twelve people died, and 12 bodies have been recovered from the river."
    b1 = "At least 15 people died when the bridge collapsed, the fire service said."
    (dispute,) = disagreements({"A": figures_of(a1), "B": figures_of(b1)})
    assert dispute.subject == "dead"
    assert {(r.value, r.outlets) for r in dispute.reported} == {
        ("12", ("A",)),
        ("At least 15", ("B",)),
    }
    a2 = "Thirty people died, and 30 bodies have been recovered from the river."
    c2 = "At least 30 people died when the bridge collapsed."
    sent = [(DAY1, "Twelve people died, and 12 bodies have been recovered.")]
    current = {"A": figures_of(a2), "B": figures_of(b1), "C": figures_of(c2)}
    (c,) = corrections(sent, current, {"A": revisions(figures_of(a1), figures_of(a2))})
    assert correction_line(c) == (
        "Update: the death toll is now 30, up from 12 reported on 3 December."
    )

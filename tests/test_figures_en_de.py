"""English and German figures that count no event (issue 38): a rate, a period's total, a thing
that is not people. Sentences after the wrong entries of real pages (`bench/figures_real.py`)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.summarize.figures import figures_of, reported


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Bis zu 1600 tote Hummeln pro Baum.", "de"),  # bumblebees, per tree
        ("Unter einer Linde fanden Forscher mehr als 1600 tote Hummeln.", "de"),
        ("Bei dem Stallbrand starben 40 Kühe.", "de"),
        ("Im Mai dieses Jahres waren es mindestens 30 Tote allein in der Provinz.", "de"),
        ("Auf den Straßen der Stadt sterben jährlich 30 Menschen.", "de"),
        ("There were 34 deaths in September compared to four in August.", "en"),
        ("Road crashes kill about 300 people a year in the county.", "en"),
        ("The virus has killed 120 people in the region this year.", "en"),
        ("Some 40 people died every week at the border crossing.", "en"),
    ],
)
def test_a_rate_a_period_or_a_thing_is_no_figure(text: str, lang: str) -> None:
    assert figures_of(text, lang) == []


@pytest.mark.parametrize(
    ("text", "lang", "subject", "value", "qualifier"),
    [
        ("Bei dem Anschlag gab es mindestens 30 tote Zivilisten.", "de", "dead", 30, "at least"),
        ("Am 6. Mai wurden 12 Menschen getötet.", "de", "dead", 12, ""),
        ("Die Polizei hat 12 Demonstranten festgenommen.", "de", "arrested", 12, ""),
        ("At least 12 people were killed on May 5 in the capital.", "en", "dead", 12, "at least"),
        ("Gunmen killed 12 people a day after the vote.", "en", "dead", 12, ""),
        ("The damage was extensive, and four people were killed.", "en", "dead", 4, ""),
    ],
)
def test_an_events_count_beside_a_date_or_people_is_still_read(
    text: str, lang: str, subject: str, value: int, qualifier: str
) -> None:
    found = figures_of(text, lang)
    assert [(f.subject, f.value, f.qualifier) for f in found] == [
        (subject, Decimal(value), qualifier)
    ]


def test_a_reader_is_shown_no_toll_of_bumblebees() -> None:
    text = (
        "Warum findet man im Sommer so viele tote Hummeln? Die Insekten verhungern.\n"
        "Bis zu 1600 tote Hummeln pro Baum\n"
        "Normalerweise leben Hummeln etwa zwei Monate."
    )
    assert reported(text, "de", "Tote Hummeln unter Linden: Die Erklärung") == []


def test_german_dead_and_injured_in_one_sentence_are_both_read() -> None:
    found = figures_of("Bei dem Unglück gab es 12 Tote und 30 Verletzte.", "de")
    assert [(f.subject, f.value) for f in found] == [
        ("dead", Decimal(12)),
        ("injured", Decimal(30)),
    ]


@given(n=st.integers(min_value=3, max_value=999), day=st.integers(min_value=1, max_value=28))
def test_a_day_of_the_month_keeps_the_count_and_a_rate_drops_it(n: int, day: int) -> None:
    dated = figures_of(f"At least {n} people were killed on May {day} in the north.", "en")
    assert [f.value for f in dated] == [Decimal(n)]  # (a 4-digit number can be a year)
    assert figures_of(f"At least {n} people were killed per week in the north.", "en") == []
    assert figures_of(f"Jedes Jahr sterben {n} Menschen im Norden.", "de") == []


# Real news (`bench/figures_real.py --corpus gva|10kgnad`, dev half): a distance, an intent, the
# fate of refugees and a part of the toll were shown to a reader as a toll.
@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("The 17-year-olds were pronounced dead about 30 yards apart.", "en"),
        ("Prosecutors say he plotted to kill 100 people at the mall.", "en"),
        ("Mann wollte mit seinem Cousin offenbar mehr als 100 Menschen töten.", "de"),
        ("Er habe mit seinem Cousin mehr als 100 Menschen töten wollen.", "de"),
        ("An Bord wurden die Leichen von fünf Flüchtlingen entdeckt.", "de"),
        ("Mehr als 100 Flüchtlinge seien von der Küstenwache gerettet worden.", "de"),
        ("Fünf gerettete Kinder schwebten in Lebensgefahr.", "de"),
    ],
)
def test_a_distance_an_intent_a_fate_or_a_part_is_no_toll(text: str, lang: str) -> None:
    assert figures_of(text, lang) == []


@pytest.mark.parametrize(
    ("text", "lang", "subject", "value"),
    [
        (
            "Police want to talk to a man about a shooting that left three people dead.",
            "en",
            "dead",
            3,
        ),
        ("Mindestens 50 Flüchtlinge überquerten die Grenze.", "de", "refugees", 50),
        (
            "Bei dem Anschlag wurden 12 Menschen getötet, der Täter wollte fliehen.",
            "de",
            "dead",
            12,
        ),
        ("Drei Meter entfernt wurden 13 weitere Menschen gerettet.", "de", "rescued", 13),
    ],
)
def test_a_toll_beside_a_wish_a_crossing_or_a_length_is_still_read(
    text: str, lang: str, subject: str, value: int
) -> None:
    found = figures_of(text, lang)
    assert [(f.subject, f.value) for f in found] == [(subject, Decimal(value))]

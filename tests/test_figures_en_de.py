"""English and German figures that count no event (issue 38): a rate, a period's total, a thing
that is not people. Sentences after the wrong entries of real pages (`bench/figures_real.py`)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.facts.figures import figures_of, reported


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


# German news of 2024-2025 (`bench/figures_real.py --corpus trends-de`, dev half) and the
# derStandard errors left (`--corpus 10kgnad`): a range, an expectation, "several" thousands,
# freed hostages, a world's total to date.
@pytest.mark.parametrize(
    "text",
    [
        "Die Nachrichtenagentur AFP spricht unter Verweis auf Rettungskräfte von 60 bis 80 "
        "Verletzten.",
        "21:20 Uhr | Bericht über 60 bis 80 Verletzte",
        "Zum Parteitag erwartet die Polizei mehrere zehntausend Demonstranten, darunter auch "
        "gewaltbereite.",
        "Die Behörden befürchten bis zu 100 Tote in den überfluteten Dörfern.",
        "Am Rande des Gipfels wurden einige hundert Demonstranten festgenommen.",
        "Drei Geiseln im Gazastreifen wurden von der Hamas freigelassen und nach Israel "
        "zurückgebracht.",
        "Bis heute wurden weltweit über 10.000 Menschen infiziert, von denen knapp 800 starben.",
    ],
)
def test_german_ranges_expectations_and_freed_hostages_are_no_toll(text: str) -> None:
    assert figures_of(text, "de") == []


@pytest.mark.parametrize(
    ("text", "subject", "value"),
    [
        ("Die Zahl der Toten stieg von 60 auf 80.", "dead", 80),
        (
            "Wenige Tage vor der weltweit größten muslimischen Pilgerfahrt sind in Mekka "
            "mindestens 107 Menschen ums Leben gekommen.",
            "dead",
            107,
        ),
        ("Die Hamas hält noch 94 Geiseln im Gazastreifen fest.", "hostages", 94),
        (
            "In Berlin versammelten sich etwa 80.000 Demonstranten vor dem Reichstag.",
            "protesters",
            80000,
        ),
    ],
)
def test_german_counts_beside_those_words_are_still_read(
    text: str, subject: str, value: int
) -> None:
    assert [(f.subject, f.value) for f in figures_of(text, "de")] == [(subject, Decimal(value))]


def test_an_english_toll_that_rose_from_a_value_is_still_read_but_a_range_is_not() -> None:
    assert [f.value for f in figures_of("The toll rose from 60 to 80 dead.", "en")] == [Decimal(80)]
    assert figures_of("Between 60 to 80 people were injured in the crash.", "en") == []


@given(low=st.integers(min_value=2, max_value=400), extra=st.integers(min_value=1, max_value=400))
def test_a_german_range_never_gives_its_upper_bound(low: int, extra: int) -> None:
    high = low + extra
    assert figures_of(f"Die Polizei spricht von {low} bis {high} Verletzten.", "de") == []
    found = figures_of(f"Die Polizei spricht von {high} Verletzten.", "de")
    assert [f.value for f in found] == [Decimal(high)]


def test_a_reader_is_not_shown_an_earlier_crash_recalled_in_a_report_on_a_new_one() -> None:
    text = (
        "Ein Kleinflugzeug stürzte aus noch unbekannter Ursache in Philadelphia im Bundesstaat "
        "Pennsylvania ab.\n"
        "Am vergangenen Donnerstag hatte es bereits in der Hauptstadt Washington ein "
        "Flugzeugunglück mit 67 Todesopfern gegeben: Eine Passagiermaschine und ein "
        "Militärhubschrauber waren aus noch ungeklärter Ursache zusammengestoßen."
    )
    title = "Erneutes Unglück: Kleinflugzeug stürzt in Wohngebiet in Philadelphia"
    assert reported(text, "de", title) == []


def test_the_reports_own_accident_told_in_the_pluperfect_is_shown() -> None:
    text = (
        "Die A2 im Landkreis Börde bleibt in Richtung Hannover bis auf Weiteres gesperrt.\n"
        "Am Dienstag hatte es auf der Autobahn einen schweren Verkehrsunfall mit einem Toten "
        "und vier Verletzten gegeben."
    )
    found = reported(text, "de", "Nach tödlichem Unfall: A2 weiter gesperrt")
    assert [(f.subject, f.value) for f in found] == [("injured", Decimal(4))]


def test_a_reader_is_not_shown_an_anniversarys_toll_nor_a_years_statistics() -> None:
    anniversary = (
        "Am 10. Juni vor 80 Jahren brannten Einheiten der SS das französische Dorf "
        "Oradour-sur-Glane nieder. Dabei starben 643 Zivilisten, darunter viele Kinder."
    )
    assert reported(anniversary, "de", "Oradour-sur-Glane: 80 Jahre nach dem Massaker") == []
    statistics = (
        "Deutschlandweit habe die Polizei 921 einschlägige Delikte im Jahr 2015 registriert. "
        "Bei den Angriffen wurden demnach mindestens 691 Menschen verletzt."
    )
    assert reported(statistics, "de", "Rechte Gewalt drastisch gestiegen") == []
    teaser = (
        "7.112 Tatverdächtige ermittelt – Mindestens 691 Personen verletzt.\n"
        "Berlin – Im vergangenen Jahr ist die Zahl rechter Gewalttaten drastisch gestiegen."
    )
    assert reported(teaser, "de") == []


def test_the_days_attack_told_after_its_place_is_still_shown() -> None:
    text = (
        "In der Innenstadt von Solingen ist am Dienstag ein Brandsatz explodiert. "
        "Bei der Explosion wurden vier Menschen verletzt."
    )
    found = reported(text, "de", "Brandsatz in Solingen explodiert: Mehrere Verletzte")
    assert [(f.subject, f.value) for f in found] == [("injured", Decimal(4))]


def test_a_reader_is_not_shown_the_bodies_of_a_crime_series_plot() -> None:
    text = (
        "Nacheinander treiben die Leichen von drei jungen Menschen an den Strand der Ostsee. "
        "Die Kieler Ermittler um Klaus Borowski finden heraus, was sie verbindet."
    )
    title = "„Tatort“ aus Kiel – „Borowski und das ewige Meer“: Viel Mahnung"
    assert reported(text, "de", title) == []
    assert reported(text, "de", "Kiel: Drei Leichen am Strand der Ostsee gefunden") != []

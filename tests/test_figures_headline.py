"""A figure of another, earlier event than a report's headline tells (issue 38): recalled in a
relative clause ("el accidente ... en el que murieron 79 personas") in a sentence that shares
no content word with the headline and the lead's opening, it is left out of what the story
memory records; the headline's own event, told the same way, stays."""

from __future__ import annotations

from datetime import date
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.memory.timeline import reported


def _entries(text: str, lang: str, title: str) -> list[tuple[str, str]]:
    return [(f.subject, f.written) for f in reported(text, lang, title)]


@pytest.mark.parametrize(
    ("lang", "title", "text"),
    [
        (
            "es",
            "Un tren descarrila cerca de Santiago sin causar víctimas",
            "Un tren de pasajeros descarriló este martes cerca de Santiago sin causar heridos.\n"
            "La línea es la misma del accidente de Angrois, en el que murieron 79 personas.",
        ),
        (
            "fr",
            "Le procès de l'ancien préfet s'ouvre à Paris",
            "Le procès de l'ancien préfet de police s'est ouvert lundi devant la cour d'assises.\n"
            "Il avait interdit la manifestation du 17 octobre, qui a fait au moins 40 morts "
            "selon les historiens.",
        ),
        (
            "en",
            "Court adjourns trial of former police chief",
            "A court in Cairo adjourned on Monday the trial of the city's former police chief "
            "until next month.\nHe is accused over the crackdown on the uprising that killed "
            "846 people.",
        ),
        (
            "de",
            "Prozess gegen früheren Polizeichef vertagt",
            "Ein Gericht in Kairo hat den Prozess gegen den früheren Polizeichef der Stadt am "
            "Montag vertagt.\nEr ist wegen der Niederschlagung des Aufstands angeklagt, bei dem "
            "846 Menschen starben.",
        ),
    ],
)
def test_a_past_events_toll_recalled_in_a_relative_clause_is_not_the_reports(
    lang: str, title: str, text: str
) -> None:
    assert _entries(text, lang, title) == []


@pytest.mark.parametrize(
    ("lang", "title", "text", "entries"),
    [
        # The headline's event named again ("ataque químico"): its toll, in a relative clause.
        (
            "es",
            "Rusia veta una resolución de la ONU para condenar el ataque químico en Siria",
            "Rusia vetó este miércoles en el Consejo de Seguridad de la ONU una resolución "
            "occidental.\nEsta resolución es la respuesta mínima tras el ataque con armas "
            "químicas en la provincia de Idlib en el que murieron más de 80 personas.",
            [("dead", "más de 80")],
        ),
        (
            "es",
            "El accidente de Angrois, ante el juez",
            "Un juez de Santiago cita a declarar al maquinista.\n"
            "La línea es la misma del accidente de Angrois, en el que murieron 79 personas.",
            [("dead", "79")],
        ),
        # The lead's opening tells the headline's event, relative clause or not.
        (
            "fr",
            "Rastan, la nouvelle cible du régime syrien",
            "Au lendemain du violent pilonnage qui a fait sept morts, l'armée a de nouveau "
            "bombardé Rastane lundi.",
            [("dead", "sept")],
        ),
        # The headline names the quantity: the figure is what it announces.
        (
            "en",
            "Twelve dead as coach crashes on motorway",
            "Police closed the motorway on Tuesday.\nThe crash, which killed 12 people, was "
            "caused by speeding, investigators said.",
            [("dead", "12")],
        ),
        (
            "de",
            "Anschlag in Berlin: Ermittler suchen Komplizen",
            "Nach dem Anschlag in Berlin suchen die Ermittler mögliche Komplizen.\n"
            "Der Anschlag, bei dem 12 Menschen starben, erschütterte die Stadt.",
            [("dead", "12")],
        ),
        # No relative clause: a sentence without a headline word stays (a synonym, "ofensiva").
        (
            "es",
            "Estados Unidos ataca una base aérea siria con 59 misiles",
            "Estados Unidos ataca una base aérea siria con 59 misiles\n"
            "El Pentágono lanzó el ataque en la madrugada del viernes.\n"
            "El ejército de este país dijo que seis personas murieron en la ofensiva.",
            [("missiles", "59"), ("dead", "seis")],
        ),
    ],
)
def test_the_headlines_event_keeps_its_toll_however_it_is_told(
    lang: str, title: str, text: str, entries: list[tuple[str, str]]
) -> None:
    assert _entries(text, lang, title) == entries


_PIECES = st.sampled_from(
    [
        "en el que murieron 23 personas",
        "que dejó 850 muertos",
        "qui a fait 40 morts",
        "that killed 12 people",
        ", bei dem 12 Menschen starben",
        "al menos 70 personas murieron",
        "ataque",
        "accidente",
        "Anschlag",
        "crash",
        "procès",
        "\n",
        ".",
        ",",
        "l'",
    ]
)


# An opening, then a sentence of pieces: where a relative clause's figure is not the opening's.
_REPORTS = st.lists(st.lists(_PIECES, max_size=8).map(" ".join), min_size=1, max_size=4).map(
    ".\n".join
)


@settings(max_examples=300, deadline=None)
@given(
    _REPORTS | st.lists(_PIECES, max_size=25).map(" ".join) | st.text(max_size=300),
    st.lists(_PIECES, max_size=5).map(" ".join) | st.text(max_size=60),
    st.sampled_from(["es", "fr", "en", "de"]),
    st.none() | st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 1, 1)),
)
def test_the_headline_rule_never_raises_and_never_adds_a_figure(
    text: str, title: str, lang: str, published: date | None
) -> None:
    """Untrusted page text and headline: the rule reads them without raising, and what the
    memory records with it is what it records without it, less what it leaves out."""
    with_rule = reported(text, lang, title, published)
    with mock.patch("digest.facts.figures._past_event", return_value=False):
        without = reported(text, lang, title, published)
    assert all(f in without for f in with_rule)

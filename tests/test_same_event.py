"""Issue 38, precision before speech: a revision is an outlet updating its own count of one
event, and a disagreement compares counts of one scope. Real-looking reporting in Spanish,
English, French and German; the properties check the rules only ever leave things out."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from digest.facts import figures
from digest.facts.figures import Figure, disagreements, reported, revisions
from digest.memory.events import NewEvent
from digest.memory.timeline import Latest, OutletText, figure_of, revised, story_events
from digest.models import StoryEvent

DAY1 = datetime(2011, 2, 16, 12, tzinfo=UTC)
DAY2 = DAY1 + timedelta(days=1)


def _recorded(events: list[NewEvent]) -> Latest:
    """The latest figures as the store keeps them (`Store.latest_figures`): each outlet's
    newest "fact" or "revision" of a subject."""
    latest: dict[tuple[str, str], tuple[StoryEvent, dict]] = {}
    for i, e in enumerate(events):
        if e.kind in ("fact", "revision") and e.subject:
            event = StoryEvent(
                i, 1, e.kind, e.at, e.at, e.outlet, e.url, e.text, e.subject, e.value, e.previous
            )
            latest[(e.outlet, e.subject)] = (event, dict(e.detail or {}))
    return latest


def _outlet(url: str, title: str, text: str, lang: str, at: datetime = DAY1) -> OutletText:
    return OutletText("El Diario", url, title, at, text, text, lang)


def _two_days(day1: OutletText, day2: OutletText) -> list[NewEvent]:
    latest = _recorded(story_events([day1], {}, now=DAY1))
    return story_events([day2], latest, now=DAY2)


def _figure_events(events: list[NewEvent], kind: str) -> list[tuple[str, str, str]]:
    return [(e.subject, e.previous, e.value) for e in events if e.kind == kind]


# -- a revision is an outlet updating its own count of one event ------------------------------


def test_one_outlets_articles_about_two_clashes_are_not_a_revision_of_its_tolls() -> None:
    night = _outlet(
        "https://diario.example/bengasi-noche",
        "Enfrentamientos en Bengasi",
        "Al menos tres personas murieron y 38 resultaron heridas en los enfrentamientos de la "
        "noche del martes en Bengasi, según testigos.",
        "es",
    )
    rage = _outlet(
        "https://diario.example/dia-de-la-ira",
        "Día de la Ira en Libia",
        "Seis personas murieron y 35 resultaron heridas este jueves en Bengasi, en el Día de la "
        "Ira convocado contra Gadafi.",
        "es",
    )
    events = _two_days(night, rage)
    assert _figure_events(events, "revision") == []
    # The newer article's figures are its own facts, with its URL: not lost, not "3 -> 6".
    facts = [(e.subject, e.value, e.url) for e in events if e.kind == "fact" and e.subject]
    assert ("dead", "Seis", rage.url) in facts
    assert ("injured", "35", rage.url) in facts
    assert revised(_recorded(events)) == {}


def test_an_updated_page_is_a_revision_up_or_down() -> None:
    url = "https://a.example/bridge"
    before = _outlet(
        url,
        "Harbourton bridge collapse",
        "At least 12 people died when the Harbourton bridge collapsed on Monday, the fire "
        "service said.",
        "en",
    )
    up = replace(before, text=before.text.replace("12", "20"), at=DAY2)
    down = replace(before, text=before.text.replace("12", "9"), at=DAY2)
    assert _figure_events(_two_days(before, up), "revision") == [
        ("dead", "At least 12", "At least 20")
    ]
    # The outlet corrected its own page: a lower count is its revision too.
    assert _figure_events(_two_days(before, down), "revision") == [
        ("dead", "At least 12", "At least 9")
    ]


def test_a_new_article_that_says_the_count_rose_is_a_revision_in_each_language() -> None:
    cases = [
        (
            "en",
            "At least 12 people died when the Harbourton bridge collapsed on Monday, the fire "
            "service said.",
            "The Harbourton bridge death toll rose to 20 on Tuesday, the fire service said.",
            ("dead", "At least 12", "20"),
        ),
        (
            "es",
            "Al menos tres personas murieron en los enfrentamientos de Bengasi, según testigos.",
            "El número de muertos asciende a seis en Bengasi, según fuentes médicas.",
            ("dead", "Al menos tres", "seis"),
        ),
        (
            "de",
            "Bei den Protesten in Bengasi kamen mindestens 4 Menschen ums Leben, berichteten "
            "Ärzte.",
            "Die Zahl der Toten ist auf 9 gestiegen.",
            ("dead", "mindestens 4", "9"),
        ),
    ]
    for lang, first, then, revision in cases:
        a = _outlet("https://x.example/1", "Bengasi Harbourton", first, lang)
        b = _outlet("https://x.example/2", "Bengasi Harbourton", then, lang, DAY2)
        assert _figure_events(_two_days(a, b), "revision") == [revision], lang


def test_a_running_count_lower_in_another_article_is_never_a_revision() -> None:
    a = _outlet(
        "https://monde.example/1",
        "Benghazi",
        "Le bilan des affrontements de Benghazi s'élève à huit morts, selon des sources médicales.",
        "fr",
    )
    b = _outlet(
        "https://monde.example/2",
        "Benghazi",
        "Le bilan des affrontements de Benghazi est passé à cinq morts, selon des sources "
        "médicales.",
        "fr",
        DAY2,
    )
    events = _two_days(a, b)
    assert _figure_events(events, "revision") == []
    assert ("dead", "", "cinq") in _figure_events(events, "fact")


def test_a_single_outlets_revision_never_makes_a_correction() -> None:
    url = "https://a.example/bridge"
    text = "At least 12 people died when the Harbourton bridge collapsed, the fire service said."
    a = _outlet(url, "Harbourton bridge collapse", text, "en")
    b = _outlet(url, "Harbourton bridge collapse", text.replace("12", "20"), "en", DAY2)
    latest = _recorded(story_events([a], {}, now=DAY1))
    latest = {**latest, **_recorded(story_events([b], latest, now=DAY2))}
    assert list(revised(latest)) == ["El Diario"]
    sent = [(DAY1.date(), "At least 12 people died when the Harbourton bridge collapsed.")]
    current = {o: [figure_of(*latest[(o, s)])] for o, s in latest}
    assert figures.corrections(sent, current, revised(latest)) == []


SENTENCES = [
    ("es", "Al menos tres personas murieron y 38 resultaron heridas en Bengasi."),
    ("es", "Seis personas murieron y 35 resultaron heridas este jueves en Bengasi."),
    ("es", "El número de muertos asciende a seis en Bengasi, según fuentes médicas."),
    ("en", "At least 12 people died when the Harbourton bridge collapsed on Monday."),
    ("en", "The Harbourton bridge death toll rose to 20 on Tuesday."),
    ("fr", "Le bilan des affrontements de Benghazi s'élève à huit morts."),
    ("fr", "Le bilan des affrontements de Benghazi est passé à cinq morts."),
    ("de", "Die Zahl der Toten ist auf 9 gestiegen."),
    ("de", "Bei den Protesten kamen mindestens 14 Menschen ums Leben."),
]


@given(
    day1=st.lists(st.tuples(st.sampled_from(SENTENCES), st.integers(0, 2)), min_size=1),
    day2=st.lists(st.tuples(st.sampled_from(SENTENCES), st.integers(0, 2)), min_size=1),
    noise=st.text(max_size=40),
)
def test_the_revision_rule_only_ever_leaves_revisions_out(
    day1: list[tuple[tuple[str, str], int]], day2: list[tuple[tuple[str, str], int]], noise: str
) -> None:
    """Whatever two days' articles say, every revision recorded is one the outlet's figures
    changed by (the rule off: `figures.revisions`), and nothing raises."""

    def read(said: list[tuple[tuple[str, str], int]], at: datetime) -> list[OutletText]:
        by_outlet: dict[str, OutletText] = {}
        for (lang, text), article in said:
            outlet = f"O{article % 2}"  # articles 0 and 2 are one outlet's two pages
            by_outlet[outlet] = OutletText(
                outlet,
                f"https://{outlet}.example/{article}",
                "Bengasi",
                at,
                f"{text} {noise}",
                "",
                lang,
            )
        return list(by_outlet.values())

    latest = _recorded(story_events(read(day1, DAY1), {}, now=DAY1))
    outlets = read(day2, DAY2)
    allowed = set()
    for o in outlets:
        for f in reported(o.text, o.language, o.title, o.at.date()):
            if (o.outlet, f.subject) in latest:
                old = figure_of(*latest[(o.outlet, f.subject)])
                allowed |= {(o.outlet, w.written, n.written) for w, n in revisions([old], [f])}
    said = {
        (e.outlet, e.previous, e.value)
        for e in story_events(outlets, latest, now=DAY2)
        if e.kind == "revision"
    }
    assert said <= allowed


# -- a disagreement compares counts of one scope ------------------------------------------------


def _said(outlet_texts: dict[str, tuple[str, str]]) -> dict[str, list[Figure]]:
    return {
        o: reported(text, lang, "Libia Libya Benghazi Bengasi", DAY2.date())
        for o, (lang, text) in outlet_texts.items()
    }


def _values(found: list) -> list[set[str]]:
    return [{r.value for r in d.reported} for d in found]


def test_libyas_tolls_of_one_day_are_still_a_disagreement() -> None:
    """The labelled disagreement of 18 February 2011: 27, 84, about 50, 46 and 141 dead."""
    by_outlet = {
        "A": [Figure("dead", Decimal(27), "", "27", "27 muertos")],
        "B": [Figure("dead", Decimal(84), "", "84", "84 muertos")],
        "C": [Figure("dead", Decimal(50), "about", "unos 50", "unos 50 muertos")],
        "D": [Figure("dead", Decimal(46), "", "46", "46 muertos")],
        "E": [Figure("dead", Decimal(141), "", "141", "141 muertos")],
    }
    (d,) = disagreements(by_outlet)
    assert {r.value for r in d.reported} == {"27", "84", "unos 50", "46", "141"}


def test_a_citys_day_against_an_uprisings_toll_is_no_disagreement() -> None:
    found = disagreements(
        _said(
            {
                "España": ("es", "Seis personas murieron este jueves en Bengasi, según testigos."),
                "ELMUNDO.es": (
                    "es",
                    "Más de 80 personas han muerto en la revuelta contra Gadafi en Libia, según "
                    "Human Rights Watch.",
                ),
            }
        )
    )
    assert found == []


def test_a_far_off_toll_is_left_out_and_the_others_still_disagree() -> None:
    found = disagreements(
        _said(
            {
                "A": ("en", "Six people were killed in Benghazi on Friday, witnesses said."),
                "B": ("en", "Nine people were killed in Benghazi on Friday, witnesses said."),
                "C": (
                    "en",
                    "More than 86 people were killed in Benghazi on Friday, witnesses said.",
                ),
            }
        )
    )
    assert _values(found) == [{"Six", "Nine"}]


def test_a_german_lower_bound_too_high_and_a_french_one_close_by() -> None:
    far = disagreements(
        {
            "A": [Figure("dead", Decimal(100), "more than", "mehr als 100", "mehr als 100 Tote")],
            "B": [Figure("dead", Decimal(20), "", "20", "20 Tote")],
        }
    )
    assert far == []
    near = disagreements(
        {
            "A": [Figure("dead", Decimal(12), "at least", "au moins 12", "au moins 12 morts")],
            "B": [Figure("dead", Decimal(30), "", "30", "30 morts")],
        }
    )
    assert _values(near) == [{"au moins 12", "30"}]


_FIGURE = st.builds(
    lambda subject, value, qualifier: Figure(
        subject, Decimal(value), qualifier, f"{qualifier} {value}".strip(), f"{value} dead"
    ),
    st.sampled_from(["dead", "injured"]),
    st.integers(0, 2000),
    st.sampled_from(["", "at least", "more than", "about", "up to", "less than"]),
)


@given(st.dictionaries(st.sampled_from("ABCDEF"), st.lists(_FIGURE, min_size=1, max_size=2)))
def test_the_scope_rule_only_ever_leaves_disagreements_out(
    by_outlet: dict[str, list[Figure]],
) -> None:
    with_rule = disagreements(by_outlet)
    with mock.patch.object(figures, "_one_scope", lambda pairs: list(pairs)):
        without = {d.subject: d for d in disagreements(by_outlet)}
    for d in with_rule:
        assert d.subject in without
        outlets = {o for r in d.reported for o in r.outlets}
        assert outlets <= {o for r in without[d.subject].reported for o in r.outlets}
        assert len(d.reported) >= 2

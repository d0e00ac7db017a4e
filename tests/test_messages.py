"""What the service itself says to a reader is in the edition's language (issue 38): the
correction, update and disagreement lines, the coverage line and the follow alert, from the
message catalogue (digest/messages.py, digest/locale/*/LC_MESSAGES/digest.po). A subject the
catalogue cannot name gets no line; an English reader reads what they read before."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from digest import messages, templates
from digest.deliver.follow_alert import alert_text
from digest.models import Correction, Disagreement, Reported, StoryEvent
from digest.render.corrections import correction_line, dispute_line
from digest.render.email import render_email
from digest.summarize.disputes import attributed, unattributed, with_attributions
from tests.editions import make_edition

DAY = date(2026, 12, 3)
FELL = Correction("dead", "30", "12", DAY, "30 people died.")  # a correction: fewer than said
ROSE = Correction("dead", "12", "30", DAY, "12 people died.")  # an update: the toll grew
DISPUTE = Disagreement("dead", (Reported("at least 30", ("A",)), Reported("45", ("B", "C"))))
# Words of the English lines that must not reach a reader of another language.
ENGLISH = ("according to", "Correction", "Update", "was", "not", "death toll", "and", "December")

EXPECTED = {
    "de": {
        "correction": "Korrektur: die Zahl der Toten lag bei 12, nicht bei 30, wie am 3. Dezember "
        "gemeldet.",
        "update": "Neuer Stand: die Zahl der Toten liegt jetzt bei 30, nach 12 am 3. Dezember.",
        "sentence": "At least 30 Tote laut A; 45 laut B und C.",
        "line": "Die Zahl der Toten: at least 30 laut A; 45 laut B und C",
    },
    "es": {
        "correction": "Corrección: el número de muertos era de 12, no de 30, como se informó el "
        "3 de diciembre.",
        "update": "Actualización: el número de muertos es ahora de 30, frente a 12 el 3 de "
        "diciembre.",
        "sentence": "At least 30 muertos, según A; 45, según B y C.",
        "line": "El número de muertos: at least 30, según A; 45, según B y C",
    },
    "fr": {
        "correction": "Rectificatif : le nombre de morts était de 12, et non de 30, comme "
        "annoncé le 3 décembre.",
        "update": "Mise à jour : le nombre de morts est désormais de 30, contre 12 le 3 décembre.",
        "sentence": "At least 30 morts, selon A ; 45, selon B et C.".replace(" ;", ";"),
        "line": "Le nombre de morts : at least 30, selon A; 45, selon B et C",
    },
}


def english_words(line: str) -> list[str]:
    return [w for w in ENGLISH if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", line)]


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_a_reader_of_another_language_reads_the_lines_in_it(language: str) -> None:
    """The values stay as the outlets wrote them ("at least 30"); every word around them is
    the reader's."""
    lines = {
        "correction": correction_line(FELL, language),
        "update": correction_line(ROSE, language),
        "sentence": attributed(DISPUTE, language),
        "line": dispute_line(DISPUTE, language),
    }
    assert lines == EXPECTED[language]
    for kind, line in lines.items():
        said = line.replace("at least", "").replace("At least", "")  # the outlet's own words
        assert english_words(said) == [], (kind, line)


def test_an_english_reader_reads_the_lines_as_before() -> None:
    assert correction_line(FELL) == (
        "Correction: the death toll was 12, not 30, as reported on 3 December."
    )
    assert correction_line(ROSE, "en") == (
        "Update: the death toll is now 30, up from 12 reported on 3 December."
    )
    assert attributed(DISPUTE) == "At least 30 dead, according to A; 45, according to B and C."
    assert (
        dispute_line(DISPUTE)
        == "The death toll: at least 30, according to A; 45, according to B and C"
    )


@pytest.mark.parametrize("language", ["it", "ko", None, "", "DE"])
def test_a_language_the_catalogue_has_not_is_english_and_case_does_not_matter(
    language: str | None,
) -> None:
    expected = "de" if language == "DE" else "en"
    assert messages.edition_language(language) == expected
    assert correction_line(FELL, language) == correction_line(FELL, expected)


@pytest.mark.parametrize("language", messages.LANGUAGES)
@pytest.mark.parametrize("subject", ["ano", "año", "personas", "asciende", "fine", ""])
def test_a_subject_the_catalogue_cannot_name_gets_no_line(language: str, subject: str) -> None:
    """Issue 38's "The ano: 40, according to ...": an accent-stripped word of the page shown
    as a subject. Saying nothing beats it."""
    assert correction_line(Correction(subject, "12", "30", DAY, "s"), language) == ""
    dispute = Disagreement(subject, DISPUTE.reported)
    assert dispute_line(dispute, language) == ""
    assert attributed(dispute, language) == ""
    assert with_attributions("Forty were counted.", [dispute], language) == "Forty were counted."


def test_every_known_subject_is_named_in_every_language() -> None:
    for language in messages.LANGUAGES:
        phrases = {messages.subject_phrase(key, language) for key in messages.SUBJECTS}
        nouns = {messages.counted(key, language) for key in messages.SUBJECTS}
        assert "" not in phrases and "" not in nouns
        assert len(phrases) == len(nouns) == len(messages.SUBJECTS)  # no two keys the same


def test_a_summarys_sentence_is_in_the_summarys_language_and_is_found_again_in_any() -> None:
    """The attributed sentence a summary ends with is in the summary's language; a
    translator finds it again (to say it anew in the reader's), whichever language it is in."""
    spanish = "El terremoto sacudió la ciudad durante la noche y derrumbó varios edificios."
    told = with_attributions(spanish, [DISPUTE])
    assert told.endswith("At least 30 muertos, según A; 45, según B y C.")
    english = "The quake struck the city at night and brought down several buildings."
    assert with_attributions(english, [DISPUTE]).endswith("according to B and C.")
    for language in messages.LANGUAGES:
        text = with_attributions(english, [DISPUTE], language)
        assert text != english and unattributed(text) == english


def test_a_german_reader_gets_the_email_lines_in_german() -> None:
    """Coverage, where outlets disagree and corrections, in both parts of the email; the
    same edition for an English reader keeps today's English lines."""
    edition = make_edition(DAY, categories=("world",), stories=1, headlines=0)
    section = edition.sections[0]
    story = section.stories[0]
    story = type(story)(
        **{
            **{f: getattr(story, f) for f in story.__dataclass_fields__},
            "disagreements": (DISPUTE,),
            "corrections": (FELL, ROSE, Correction("ano", "3", "4", DAY, "s")),
        }
    )
    edition = type(edition)(
        day=edition.day,
        timezone=edition.timezone,
        sections=(type(section)(section.category, (story,), ()),),
        generated_at=edition.generated_at,
    )
    n = len(story.outlets)

    def parts(language: str | None) -> str:
        html, text = render_email(
            edition,
            categories=None,
            tz=UTC,
            title="digest",
            archive=None,
            unsubscribe="https://news.example.org/u",
            recipient="r@example.org",
            budget=100_000,
            language=language,
        )
        flat = re.sub(r"<[^>]+>", " ", html)
        return re.sub(r"\s+", " ", flat) + "\n" + re.sub(r"\s+", " ", text)

    german = parts("de")
    assert german.count("Die Medien widersprechen sich. Die Zahl der Toten: at least 30 laut") == 2
    assert german.count(EXPECTED["de"]["correction"]) == 2
    assert german.count(EXPECTED["de"]["update"]) == 2
    assert german.count(f"Von {n} Medien berichtet") == 2
    # (The story's own brief, an outlet's words, says "according to reports".)
    for gone in ("Outlets disagree", "according to A", "Correction:", "Update:", "Covered by"):
        assert gone not in german
    english = parts(None)
    assert english.count("Outlets disagree. The death toll: at least 30, according to A") == 2
    assert (
        english.count(correction_line(FELL)) == 2 and english.count(f"Covered by {n} outlets") == 2
    )
    assert "the ano" not in english


def event(n: int, kind: str, **fields: object) -> StoryEvent:
    at = datetime(2026, 12, 4, 8, n, tzinfo=UTC)
    return StoryEvent(id=n, story_id=1, kind=kind, at=at, recorded_at=at, **fields)  # type: ignore[arg-type]


def toll(n: int, said: str, now: str) -> StoryEvent:
    return event(
        n, "correction", subject="dead", previous=said, value=now, edition_day=DAY, text="s"
    )


@pytest.mark.parametrize(
    ("events", "language", "what"),
    [
        ([toll(1, "12", "30")], None, "An update"),
        ([toll(1, "30", "12")], None, "A correction"),
        ([toll(1, "12", "30"), toll(2, "40", "35")], None, "A correction and an update"),
        (
            [toll(1, "12", "30"), event(2, "fact", text="A bridge fell.", outlet="B")],
            None,
            "New facts and an update",
        ),
        ([toll(1, "12", "30")], "de", "Ein neuer Stand"),
        ([toll(1, "30", "12")], "es", "Una corrección"),
        ([toll(1, "12", "30")], "fr", "Une mise à jour"),
    ],
)
def test_the_follow_alert_says_what_its_lines_are(
    events: list[StoryEvent], language: str | None, what: str
) -> None:
    """A toll that grew is an update, and the alert says so, not "A correction"."""
    alert = alert_text(
        "Quake", events, unfollow_url="https://news.example.org/unfollow?t=1", language=language
    )
    assert f": {what} " in alert.subject
    assert alert.text.startswith(what)


def test_a_german_follower_reads_no_english_around_the_line() -> None:
    alert = alert_text(
        "Beben",
        [toll(1, "12", "30")],
        unfollow_url="https://news.example.org/unfollow?t=1",
        story_url="https://news.example.org/s/1.html",
        language="de",
    )
    assert EXPECTED["de"]["update"] in alert.text
    assert "Die Meldung: https://news.example.org/s/1.html" in alert.text
    assert "Dieser Meldung nicht mehr folgen: https://news.example.org/unfollow?t=1" in alert.text
    assert english_words(alert.text.replace("https://news.example.org/", "")) == []
    assert "[Dieser Meldung nicht mehr folgen](" in alert.markdown


def test_an_unknown_subject_is_left_out_of_an_alert() -> None:
    unknown = event(1, "correction", subject="ano", previous="3", value="4", edition_day=DAY)
    figure = event(2, "fact", subject="ano", value="40", outlet="B")
    alert = alert_text("Quake", [unknown, figure], unfollow_url="https://n.example.org/u")
    assert "ano" not in alert.text and "- " not in alert.text


# -- the catalogue is complete -----------------------------------------------------------------

ROOT = Path(messages.__file__).parent
TEMPLATES = Path(templates.__path__[0])  # this checkout's (tests/conftest.py)
KEYWORDS = {"gettext": None, "ngettext": (1, 2), "N_": None, "say": None}
# The templates' marks (jinja2.ext.i18n): `_`, `gettext` and `ngettext`, as a reader's copy
# renders them (`templating.reader_environment`: the same whitespace options).
TEMPLATE_KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2)}
TEMPLATE_OPTIONS = {"trim_blocks": "true", "lstrip_blocks": "true", "newstyle_gettext": "true"}
PLACEHOLDER = re.compile(r"%\(\w+\)s")


def messages_in_code() -> dict[str | tuple[str, str], str]:
    """Every message the code and the templates mark, with where (Babel's extractors over
    digest/ and templates/: Python's, and Jinja's for the templates)."""
    kinds = ("html", "txt", "md", "xml")
    found: dict[str | tuple[str, str], str] = {}
    marked = [
        extract_from_dir(ROOT, [("**.py", "python")], keywords=KEYWORDS),
        extract_from_dir(
            TEMPLATES,
            [(f"**.{kind}", "jinja2") for kind in kinds],
            keywords=TEMPLATE_KEYWORDS,
            options_map={f"**.{kind}": TEMPLATE_OPTIONS for kind in kinds},
        ),
    ]
    for extracted in marked:
        for name, line, message, _, _ in extracted:
            if isinstance(message, tuple):
                message = (message[0], message[1])
            found.setdefault(message, f"{name}:{line}")
    return found


def test_the_extractor_sees_the_lines() -> None:
    found = messages_in_code()
    assert "Correction: %(what)s was %(now)s, not %(said)s, as reported on %(day)s." in found
    assert ("Covered by %(n)s outlet", "Covered by %(n)s outlets") in found
    assert "the death toll" in found and "An update" in found


def test_the_extractor_sees_the_templates_frame() -> None:
    """The email's parts and the chat digest are extracted too (issue 38's frame)."""
    found = messages_in_code()
    for message in ("Top stories", "More headlines", "Unsubscribe", "Your preferences"):
        assert found.get(message, "").startswith(("email/", "notify/")), message
    assert ("%(num)s outlet", "%(num)s outlets") in found
    assert "Since your last digest (%(day)s):" in found


@pytest.mark.parametrize("language", [lang for lang in messages.LANGUAGES if lang != "en"])
def test_every_message_in_code_has_a_translation_in_each_catalogue(language: str) -> None:
    """A newcomer who adds a line to the code cannot forget a language: each message the
    code marks has a translation (not fuzzy, not empty) with the same placeholders, and the
    catalogue holds no message the code no longer says."""
    path = ROOT / "locale" / language / "LC_MESSAGES" / "digest.po"
    with path.open("rb") as f:
        catalogue = read_po(f, locale=language)
    in_code = messages_in_code()
    for message, where in in_code.items():
        entry = catalogue.get(message[0] if isinstance(message, tuple) else message)
        assert entry is not None, f"{where}: {message!r} has no {language} translation"
        assert not entry.fuzzy, f"{where}: {message!r} is fuzzy in {language}"
        ids = message if isinstance(message, tuple) else (message,)
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        assert all(strings), f"{where}: {message!r} is empty in {language}"
        for text in strings:
            assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(ids[-1])), (
                f"{where}: {message!r} in {language} does not keep its placeholders"
            )
    said = {m[0] if isinstance(m, tuple) else m for m in in_code}
    stale = [
        m.id
        for m in catalogue
        if m.id and (m.id[0] if isinstance(m.id, tuple) else m.id) not in said
    ]
    assert stale == []


@pytest.mark.parametrize("language", [lang for lang in messages.LANGUAGES if lang != "en"])
def test_the_chat_digests_translations_are_plain_text_in_markdown(language: str) -> None:
    """The Markdown digest puts its translated words in as they are (its values are escaped):
    a translation with a character Markdown reads (`*`, `_`, `[`...) would turn into markup."""
    markdown = {
        message if isinstance(message, str) else (message[0], message[1])
        for _, _, message, _, _ in extract_from_dir(
            TEMPLATES / "notify",
            [("**.md", "jinja2")],
            keywords=TEMPLATE_KEYWORDS,
            options_map={"**.md": TEMPLATE_OPTIONS},
        )
    }
    assert "Follow this story" in markdown
    special = re.compile(r"[\\`*_{}\[\]()<>#+!|~]")
    for message in markdown:
        if isinstance(message, tuple):
            strings = tuple(
                messages.catalogue(language).ngettext(message[0], message[1], n) for n in (1, 2)
            )
        else:
            strings = (messages.catalogue(language).gettext(message),)
        for text in strings:
            assert special.findall(PLACEHOLDER.sub("", text)) == [], (language, text)

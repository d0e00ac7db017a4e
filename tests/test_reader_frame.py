"""The frame of what a reader is sent is in their language (issue 38): the email's masthead,
"Top stories", "More headlines", "Since your last digest", the marks and the footer, in both
its parts, and the chat digest's links, from the message catalogue through the templates'
i18n marks (`templating.reader_environment`). An English reader reads what they read before."""

from __future__ import annotations

import html as html_module
import re
from dataclasses import replace
from datetime import UTC, date, timedelta

import pytest

from digest.deliver.message import _subject
from digest.models import Edition, NewFact, WhatsNew
from digest.render.chat import render_notification
from digest.render.email import render_email
from digest.render.headlines import outlets_line
from tests.editions import make_edition

DAY = date(2026, 12, 3)  # a Thursday
ARCHIVE = "https://news.example.org/2026/12/03/"
UNSUBSCRIBE = "https://news.example.org/u?t=1"
PREFS = "https://news.example.org/p?t=1"
FOLLOW = "https://news.example.org/f?t=1&s={story}"

# The English frame (each shown to an English reader of the same copy) that a reader of
# another language must never read.
FRAME = (
    "Top stories",
    "TOP STORIES",
    "More headlines",
    "Unsubscribe",
    "Since your last digest",
    "Follow this story",
    "(updated)",
    "Updated",
    "translated from",
    "In this email",
    "more headlines in the archive",
    "Read this edition in the archive",
    "You receive this digest",
    "Change your preferences",
    "compiled",
    "Thursday",
    "December",
    "New:",
)
CHAT_FRAME = ("Follow this story", "The whole edition", "Your preferences", "Thursday", "December")

# What each language says instead, in both parts of the email.
EMAIL = {
    "de": (
        "Donnerstag, 3. Dezember 2026",
        "Top-Meldungen",
        "Weitere Schlagzeilen",
        "Abmelden",
        "Seit Ihrer letzten Ausgabe (2. Dezember):",
        "Dieser Meldung folgen",
        "vom Modell übersetzt, Original auf Englisch",
        "3 weitere Schlagzeilen im Archiv",
        "Sie erhalten diese Nachrichtenübersicht an r@example.org.",
        "Einstellungen ändern",
    ),
    "es": (
        "jueves, 3 de diciembre de 2026",
        "Noticias destacadas",
        "Más titulares",
        "Darse de baja",
        "Desde su último resumen (2 de diciembre):",
        "Seguir esta noticia",
        "traducido del inglés por el modelo",
        "3 titulares más en el archivo",
        "Recibe este resumen en r@example.org.",
        "Cambiar sus preferencias",
    ),
    "fr": (
        "jeudi 3 décembre 2026",
        "À la une",
        "Autres titres",
        "Se désabonner",
        "Depuis votre dernier résumé (2 décembre) :",
        "Suivre cette actualité",
        "traduit par le modèle, original en anglais",
        "3 autres titres dans les archives",
        "Vous recevez ce résumé à l’adresse r@example.org.",
        "Modifier vos préférences",
    ),
}
CHAT = {
    "de": ("digest, Donnerstag, 3. Dezember 2026", "Dieser Meldung folgen", "Ihre Einstellungen"),
    "es": ("digest, jueves, 3 de diciembre de 2026", "Seguir esta noticia", "Sus preferencias"),
    "fr": ("digest, jeudi 3 décembre 2026", "Suivre cette actualité", "Vos préférences"),
}


def reader_copy() -> Edition:
    """Two categories (so "Top stories"), more headlines than an email shows, a story updated
    since this reader's last digest and one the model translated for them."""
    edition = make_edition(DAY, categories=("technology", "world"), stories=3, headlines=8)
    world = edition.sections[1]
    first, second = world.stories[0], world.stories[1]
    news = WhatsNew(
        since=DAY - timedelta(days=1),
        outlets=first.outlets[-1:],
        facts=(NewFact(first.outlets[-1].name, "The bridge reopened at noon.", "en"),),
        for_reader=True,
    )
    stories = (
        replace(first, whats_new=news, updated=True),
        replace(second, translated_from="en", language="de"),
        *world.stories[2:],
    )
    sections = (edition.sections[0], replace(world, stories=stories))
    return replace(edition, sections=sections)


def email(language: str | None, budget: int = 100_000) -> tuple[str, str]:
    return render_email(
        reader_copy(),
        categories=None,
        tz=UTC,
        title="digest",
        archive=ARCHIVE,
        unsubscribe=UNSUBSCRIBE,
        recipient="r@example.org",
        budget=budget,
        preferences=PREFS,
        follow=FOLLOW,
        language=language,
    )


def shown(html: str) -> str:
    """The HTML part as a reader sees it: its text, entities decoded, spaces collapsed."""
    body = re.split(r"<body[^>]*>", html, maxsplit=1)[1]
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", " ", body)))


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def frame_words(text: str, words: tuple[str, ...] = FRAME) -> list[str]:
    return [w for w in words if w in text]


@pytest.mark.parametrize("language", sorted(EMAIL))
def test_a_readers_email_is_framed_in_their_language_in_both_parts(language: str) -> None:
    html, text = email(language)
    for part in (shown(html), flat(text)):
        # (The plain part's headings are in capitals: "TOP-MELDUNGEN", checked below.)
        missing = [said for said in EMAIL[language] if said not in part.replace(said.upper(), said)]
        assert missing == []
        assert frame_words(part) == []
    assert f'<html lang="{language}">' in html
    # The plain part's heading is the translated one, underlined to its length.
    heading = EMAIL[language][1].upper()
    assert f"{heading}\n{'-' * len(heading)}\n" in text


@pytest.mark.parametrize("language", sorted(EMAIL))
def test_a_shortened_email_says_so_in_the_readers_language(language: str) -> None:
    html, text = email(language, budget=14_000)
    said = {"de": "Diese E-Mail ist gekürzt", "es": "Este correo está abreviado"}
    expected = said.get(language, "Cet e-mail est raccourci")
    assert expected in shown(html) and expected in flat(text)
    assert "This email is shortened" not in html + text


def test_an_english_readers_email_is_framed_as_before() -> None:
    """The English frame is the msgids themselves; a language the catalogue has not is English."""
    html, text = email(None)
    for part in (shown(html), flat(text)):
        for said in ("Thursday 3 December 2026", "More headlines", "Unsubscribe"):
            assert said in part
        assert "Since your last digest (2 December): New: " in part
        assert "translated from English by the model" in part
        assert "3 more headlines in the archive" in part
    assert "TOP STORIES\n-----------\n" in text and ">Top stories</h2>" in html
    assert '<html lang="en">' in html
    assert email("en") == email("it") == (html, text)


@pytest.mark.parametrize("language", sorted(CHAT))
def test_a_readers_chat_digest_is_framed_in_their_language(language: str) -> None:
    head, markdown, text = render_notification(
        reader_copy(),
        title="digest",
        archive=ARCHIVE,
        preferences=PREFS,
        follow=FOLLOW,
        language=language,
    )
    title, follow, preferences = CHAT[language]
    assert head == title
    assert f"[{follow}](" in markdown and f"[{preferences}]({PREFS})" in markdown
    colon = " :" if language == "fr" else ":"  # French typography: a space before the colon
    assert f"{follow}{colon} " in text and f"{preferences}{colon} {PREFS}" in text
    since = EMAIL[language][4]
    assert since in markdown.replace("\\(", "(").replace("\\)", ")") and since in text
    for body in (markdown, text):
        assert frame_words(body, (*CHAT_FRAME, "Since your last digest", "translated from")) == []


def test_an_english_readers_chat_digest_is_framed_as_before() -> None:
    head, markdown, text = render_notification(
        reader_copy(), title="digest", archive=ARCHIVE, preferences=PREFS, follow=FOLLOW
    )
    assert head == "digest, Thursday 3 December 2026"
    assert f"[The whole edition]({ARCHIVE})" in markdown and f"Your preferences: {PREFS}" in text
    assert "[Follow this story](" in markdown and "Follow this story: " in text


def test_the_subject_names_the_day_in_the_readers_language() -> None:
    edition = reader_copy()
    assert _subject("digest", edition, "fr").startswith("digest, jeudi 3 décembre 2026: ")
    assert _subject("digest", edition).startswith("digest, Thursday 3 December 2026: ")


def test_a_headlines_outlets_are_counted_in_the_readers_language() -> None:
    names = ["BBC", "Reuters", "AP", "AFP"]
    assert outlets_line(names, 2) == "BBC, Reuters and 2 more"
    assert outlets_line(names, 2, language="de") == "BBC, Reuters und 2 weitere"
    assert outlets_line(names, 2, language="es") == "BBC, Reuters y 2 más"
    assert outlets_line(names[:2], 2, language="fr") == "BBC, Reuters"

"""The frame of what a reader is sent is in their language (issue 38): the email's masthead,
"Top stories", "More headlines", "Since your last digest", the marks and the footer, in both
its parts, and the chat digest's links, from the message catalogue through the templates'
i18n marks (`templating.reader_environment`). An English reader reads what they read before."""

from __future__ import annotations

import html as html_module
import re
from dataclasses import replace
from datetime import UTC, date, timedelta
from functools import cache

import pytest
from babel import Locale
from babel.messages.pofile import read_po

from digest import messages
from digest.config import DEFAULT_CATEGORIES
from digest.deliver.follow_alert import alert_text
from digest.deliver.message import _subject
from digest.models import (
    Disagreement,
    Edition,
    EditionHeadline,
    EditionMention,
    EditionStory,
    NewFact,
    Outlet,
    Reported,
    WhatsNew,
)
from digest.render.chat import render_notification
from digest.render.email import render_email
from digest.render.headlines import outlets_line
from tests.editions import make_edition
from tests.test_messages import ROOT, event, messages_in_code, toll

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


def test_a_label_before_its_list_has_the_languages_colon() -> None:
    """French sets a space before a colon, after "Couverte par 2 médias" as elsewhere."""
    said = {lang: email(lang)[1] for lang in ("fr", "de", "en")}
    assert "   Couverte par 2 médias :\n   - " in said["fr"]
    assert "   Von 2 Medien berichtet:\n   - " in said["de"]
    assert "   Covered by 2 outlets:\n   - " in said["en"]
    assert "Couverte par 2 médias</span> : <a " in email("fr")[0]


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


# -- no English word of the frame, wherever it is said ------------------------------------------

# The outlets of a copy whose every text is Spanish, as an outlet would write it: what is left
# in English can only be what the service says.
SPANISH_OUTLETS = {
    "Reuters": "El País",
    "AP News": "El Mundo",
    "BBC News": "La Vanguardia",
    "The Guardian": "Diario Sur",
    "Le Monde": "Clarín",
    "Ars Technica": "Xataka",
    "Financial Times": "Expansión",
    "Der Spiegel": "La Nación",
}
BRIEF = "Según varios medios, el gobierno anunció ayer nuevas medidas para la región."
FACT = "El puente volvió a abrir al mediodía."
TITLE = "Noticia número {n} de la jornada"
OUTLET_TITLE = "Titular del medio"
SENTENCE = "Murieron 30 personas."
HEADLINE = "Breve número {n} de la sección"
LEDE = "Los vecinos esperan una respuesta de las autoridades."
MENTION = "Noticia vista en otra sección"
FOLLOWED = "Noticia seguida"
SERVICE = "El Diario"  # the operator's title
# Every word of the copy that is not the service's: the outlets' (and the operator's title,
# the reader's address, the time zone's abbreviation).
NOT_THE_FRAME = (
    " ".join(
        (BRIEF, FACT, TITLE, OUTLET_TITLE, SENTENCE, HEADLINE, LEDE, MENTION, FOLLOWED, SERVICE)
    )
    + " "
    + " ".join(("al menos", "r@example.org", "UTC", *SPANISH_OUTLETS.values()))
)


def _outlet(o: Outlet) -> Outlet:
    return replace(o, name=SPANISH_OUTLETS[o.name], title=OUTLET_TITLE, language="es")


def _names(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(SPANISH_OUTLETS.get(n, n) for n in names)


def _spanish_story(story: EditionStory, n: int, reader: str) -> EditionStory:
    news = story.whats_new
    return replace(
        story,
        title=TITLE.format(n=n),
        brief_summary=BRIEF,
        summary=BRIEF,
        # (A copy marks a story's language only when it is not the reader's.)
        language=story.language if story.translated_from else "" if reader == "es" else "es",
        outlets=tuple(map(_outlet, story.outlets)),
        whats_new=None
        if news is None
        else replace(
            news,
            outlets=tuple(map(_outlet, news.outlets)),
            facts=tuple(NewFact(SPANISH_OUTLETS[f.outlet], FACT, "es") for f in news.facts),
        ),
        disagreements=tuple(
            Disagreement(
                d.subject,
                tuple(
                    Reported(r.value.replace("at least", "al menos"), _names(r.outlets))
                    for r in d.reported
                ),
            )
            for d in story.disagreements
        ),
        corrections=tuple(
            replace(c, sentence=SENTENCE, outlets=_names(c.outlets)) for c in story.corrections
        ),
    )


def spanish_copy(reader: str) -> Edition:
    """`reader_copy` with every outlet's text in Spanish, and a story of technology shown
    again under world (issue 30's "Also in")."""
    edition = reader_copy()
    counter = iter(range(1, 100))
    sections = tuple(
        replace(
            section,
            stories=tuple(_spanish_story(st, next(counter), reader) for st in section.stories),
            headlines=tuple(
                EditionHeadline(
                    title=HEADLINE.format(n=i),
                    url=h.url,
                    source=SPANISH_OUTLETS[h.source],
                    lede=LEDE,
                    outlets=_names(h.outlets),
                )
                for i, h in enumerate(section.headlines, 1)
            ),
        )
        for section in edition.sections
    )
    technology, world = sections
    also = EditionMention(technology.stories[0].id, MENTION, "technology", 2)
    return replace(edition, sections=(technology, replace(world, mentions=(also,))))


def english_words(language: str) -> set[str]:
    """Every word (of three letters or more) of the catalogue's English messages, of the
    English calendar and of what an English reader is sent of the Spanish copy but the
    outlets' (so a line said in English outside the catalogue counts too), less those the
    language's own catalogue uses ("Finance" is French)."""
    sent = (_unlinked(body) for body in everything_sent("en").values())
    said = set().union(*map(_words, sent)) - _words(NOT_THE_FRAME)
    for message in messages_in_code():
        for text in message if isinstance(message, tuple) else (message,):
            said.update(_words(text))
    english = Locale("en")
    for names in (english.days["format"]["wide"], english.months["format"]["wide"]):
        said.update(w.lower() for w in names.values())
    if language == "en":
        return said
    path = ROOT / "locale" / language / "LC_MESSAGES" / "digest.po"
    with path.open("rb") as f:
        catalogue = read_po(f, locale=language)
    theirs: set[str] = set()
    for entry in catalogue:
        if not entry.id:  # the header
            continue
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for text in strings:
            theirs.update(_words(text or ""))
    return said - theirs


def _words(text: str) -> set[str]:
    """The words of `text` (placeholders left out), in lower case."""
    return {w.lower() for w in re.findall(r"[^\W\d_]{3,}", re.sub(r"%\(\w+\)s", " ", text))}


def _unlinked(text: str) -> str:
    """Text without its URLs (hosts and paths are no words of the frame)."""
    return re.sub(r"https?://[^\s)\]]+", " ", text)


@cache
def everything_sent(language: str) -> dict[str, str]:
    """All a reader of `language` can receive of a copy: the email's subject and both parts
    (whole, shortened and empty), the chat digest's two forms and its title, a follow alert."""
    copy = spanish_copy(language)
    said: dict[str, str] = {"subject": _subject(SERVICE, copy, language)}
    for name, edition, budget in (
        ("email", copy, 100_000),
        ("shortened email", copy, 14_000),
        ("empty email", replace(copy, sections=()), 100_000),
    ):
        html, text = render_email(
            edition,
            categories=("technology", "world"),
            tz=UTC,
            title=SERVICE,
            archive=ARCHIVE,
            unsubscribe=UNSUBSCRIBE,
            recipient="r@example.org",
            budget=budget,
            preferences=PREFS,
            follow=FOLLOW,
            language=language,
        )
        said[f"{name} (HTML)"], said[f"{name} (text)"] = shown(html), text
    head, markdown, text = render_notification(
        copy,
        title=SERVICE,
        archive=ARCHIVE,
        preferences=PREFS,
        follow=FOLLOW,
        language=language,
    )
    said |= {"chat title": head, "chat (Markdown)": markdown, "chat (text)": text}
    alert = alert_text(
        FOLLOWED,
        [toll(1, "12", "30"), event(2, "fact", text=FACT, outlet="El País")],
        unfollow_url=UNSUBSCRIBE,
        story_url=ARCHIVE,
        service=SERVICE,
        language=language,
    )
    said |= {
        "alert subject": alert.subject,
        "alert": alert.text,
        "alert (Markdown)": alert.markdown,
    }
    return said


@pytest.mark.parametrize("language", sorted(EMAIL))
def test_no_english_word_of_the_frame_reaches_a_reader_of_another_language(
    language: str,
) -> None:
    """Issue 38: "no reader-facing line in a language other than the edition's". Every
    outlet's text of the copy is Spanish, so an English word in what is sent (the category
    headings, the contents, "Also in", the notices, the links, the dates...) is the service's."""
    english = english_words(language)
    leaks = {
        part: sorted(_words(_unlinked(body)) & english)
        for part, body in everything_sent(language).items()
    }
    assert {part: words for part, words in leaks.items() if words} == {}


def test_the_english_frame_is_found_where_it_is_said() -> None:
    """The check above can fail: an English reader's copy shows the words it looks for,
    the built-in categories among them."""
    english = english_words("en")
    sent = everything_sent("en")
    found = {part: _words(_unlinked(body)) & english for part, body in sent.items()}
    assert {"technology", "world", "follow", "unsubscribe"} <= found["email (text)"]
    assert {"technology", "also", "december"} <= found["chat (Markdown)"]
    assert {"thursday", "december"} <= found["chat title"] & found["subject"]
    assert {"shortened", "headlines"} <= found["shortened email (HTML)"]
    assert {"stop", "following"} <= found["alert"]


def test_the_built_in_categories_are_named_in_the_readers_language() -> None:
    """`digest init`'s categories have a name in every language; one the operator named is
    shown as written, to every reader."""
    assert set(DEFAULT_CATEGORIES) <= set(messages.CATEGORIES)
    for language in messages.LANGUAGES:
        names = [messages.category_name(c, language) for c in DEFAULT_CATEGORIES]
        assert len(set(names)) == len(names) and all(n[:1].isupper() for n in names)
    assert messages.category_name("technology", "es") == "Tecnología"
    assert messages.category_name("world", "de") == "Welt"
    assert messages.category_name("health", "fr") == "Santé"
    assert messages.categories_named(("technology", "world"), "es") == "tecnología, internacional"
    assert messages.categories_named(("technology", "world")) == "technology, world"
    assert messages.category_name("us politics", "fr") == "Us politics"
    assert messages.category_name("recetas", "de") == "Recetas"


@pytest.mark.parametrize(
    ("language", "heading", "contents", "also"),
    [
        (
            "es",
            "Tecnología",
            "En este correo: Tecnología (3) · Internacional (3)",
            "También en Tecnología:",
        ),
        (
            "de",
            "Technologie",
            "In dieser E-Mail: Technologie (3) · Welt (3)",
            "Auch in Technologie:",
        ),
        (
            "fr",
            "Technologie",
            "Dans cet e-mail : Technologie (3) · International (3)",
            "Aussi dans Technologie :",
        ),
        (None, "Technology", "In this email: Technology (3) · World (3)", "Also in Technology:"),
    ],
)
def test_a_readers_email_and_chat_name_the_categories_in_their_language(
    language: str | None, heading: str, contents: str, also: str
) -> None:
    sent = everything_sent(language or "en")
    html, text = sent["email (HTML)"], flat(sent["email (text)"])
    assert f" {heading} " in html and f"\n{heading.upper()}\n" in sent["email (text)"]
    assert contents in html and contents.replace(" · ", ", ") in text
    assert also in html and also in text
    assert f"**{heading}**" in sent["chat (Markdown)"] and also in sent["chat (Markdown)"]
    assert f"\n{heading.upper()}\n" in "\n" + sent["chat (text)"]

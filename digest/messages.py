"""What the service itself says to a reader, in the edition's language (issue 38): a message
catalogue, so that a German reader never reads "according to" or "Correction:" around their
figures, and a subject is named by a translated phrase, never by a lemma of the page.

The edition's language is the reader's (`Preferences.language`) when the catalogue has it
(`LANGUAGES`), else English, which the archive pages are in too (`edition_language`). English is
the message ids themselves; de, es and fr are gettext catalogues, `digest/locale/LANG/
LC_MESSAGES/digest.po`, compiled in memory by Babel the first time a language is asked for (no
.mo files to build or ship: the .po files are the package data). Code marks what it says with
`gettext`, `ngettext` or `N_` (a table's entries), so that Babel's extractor finds every message
and `tests/test_messages.py` fails when one has no translation.

The categories `digest init` writes are named in the reader's language too (`CATEGORIES`,
`category_name`); one the operator named is shown as written, since the catalogue cannot know
what it means.

What is counted (`digest.facts.figures.Figure.subject`) is named only for the known keys
(`SUBJECTS`): a subject the catalogue does not know gets no line at all (`subject_phrase` and
`counted` return ""), rather than a raw word shown to a reader.
"""

from __future__ import annotations

import gettext
import io
from datetime import date
from functools import cache
from importlib import resources

from babel import Locale
from babel.dates import format_date
from babel.messages import mofile, pofile

__all__ = [
    "CATEGORIES",
    "LANGUAGES",
    "N_",
    "SUBJECTS",
    "catalogue",
    "categories_named",
    "category_name",
    "counted",
    "day_month",
    "edition_language",
    "language_called",
    "long_day",
    "names",
    "subject_phrase",
]

# The languages the catalogue speaks; English is its message ids.
LANGUAGES = ("en", "de", "es", "fr")
DOMAIN = "digest"


def N_(message: str) -> str:
    """A message marked for the catalogue where it is defined, translated where it is used."""
    return message


# The quantities a line may name (`Figure.subject` keys): how a sentence calls the number
# ("the death toll was 30") and what a count is of ("30 dead"). A key not here gets no line.
SUBJECTS: dict[str, tuple[str, str]] = {
    "dead": (N_("the death toll"), N_("dead")),
    "injured": (N_("the number injured"), N_("injured")),
    "missing": (N_("the number missing"), N_("missing")),
    "arrested": (N_("the number arrested"), N_("arrested")),
    "evacuated": (N_("the number evacuated"), N_("evacuated")),
    "displaced": (N_("the number displaced"), N_("displaced")),
    "refugees": (N_("the number of refugees"), N_("refugees")),
    "protesters": (N_("the number of protesters"), N_("protesters")),
    "hostages": (N_("the number of hostages"), N_("hostages")),
    "rescued": (N_("the number rescued"), N_("rescued")),
    "missiles": (N_("the number of missiles"), N_("missiles")),
}
# The categories `digest init` writes (`digest.config.DEFAULT_CATEGORIES`), as a sentence names
# them ("top stories in technology"); a heading capitalizes the first letter ("Technology"). A
# category the operator names otherwise is shown as they wrote it, in every language.
CATEGORIES: dict[str, str] = {
    # TRANSLATORS: a news category (a section of the digest) as a sentence names it; its
    # heading is this with the first letter capitalized.
    "technology": N_("technology"),
    # TRANSLATORS: a news category (a section of the digest): markets, companies, the economy.
    "finance": N_("finance"),
    # TRANSLATORS: a news category (a section of the digest): film, music, television, stars.
    "entertainment": N_("entertainment"),
    # TRANSLATORS: a news category (a section of the digest).
    "sports": N_("sports"),
    # TRANSLATORS: a news category (a section of the digest): international news.
    "world": N_("world"),
    # TRANSLATORS: a news category (a section of the digest).
    "health": N_("health"),
}
# Older spellings of a key (stored events, editions made before the keys were closed).
_ALIASES = {"deaths": "dead", "killed": "dead"}


def edition_language(language: str | None) -> str:
    """The language a reader's lines are in: theirs when the catalogue has it, else English."""
    code = (language or "").strip().lower()
    return code if code in LANGUAGES else "en"


@cache
def catalogue(language: str | None) -> gettext.NullTranslations:
    """The translations of `language` (its edition language: English for one not catalogued),
    compiled from its .po file once per process."""
    code = edition_language(language)
    if code == "en":
        return gettext.NullTranslations()
    po = resources.files("digest").joinpath("locale", code, "LC_MESSAGES", f"{DOMAIN}.po")
    with po.open("rb") as f:
        messages = pofile.read_po(f, locale=code, domain=DOMAIN)
    compiled = io.BytesIO()
    mofile.write_mo(compiled, messages)  # fuzzy entries left out: they are not translations
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _key(subject: str) -> str:
    key = subject.strip().lower()
    return _ALIASES.get(key, key)


def subject_phrase(subject: str, language: str | None = "en") -> str:
    """ "the death toll" for the key "dead", in `language`; "" for a key not in `SUBJECTS`."""
    known = SUBJECTS.get(_key(subject))
    return catalogue(language).gettext(known[0]) if known else ""


def counted(subject: str, language: str | None = "en") -> str:
    """What a count of key `subject` is of ("dead": "30 dead"); "" for an unknown key."""
    known = SUBJECTS.get(_key(subject))
    return catalogue(language).gettext(known[1]) if known else ""


def names(items: list[str] | tuple[str, ...], language: str | None = "en") -> str:
    """ "A", "A and B", "A, B and C" in `language`."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    joined = catalogue(language).gettext("%(first)s and %(last)s")
    return joined % {"first": ", ".join(items[:-1]), "last": items[-1]}


def category_name(category: str, language: str | None = "en") -> str:
    """A category as a heading names it: "Technology", "Tecnología" to a Spanish reader; a
    category the catalogue does not know ("us politics") as written, first letter capitalized."""
    name = _category(category, language)
    return name[:1].upper() + name[1:]


def categories_named(categories: tuple[str, ...] | list[str], language: str | None = "en") -> str:
    """Categories as a sentence names them, one after another: "technology, world";
    "tecnología, internacional" to a Spanish reader."""
    return ", ".join(_category(c, language) for c in categories)


def _category(category: str, language: str | None) -> str:
    known = CATEGORIES.get(category.strip().lower())
    return catalogue(language).gettext(known) if known else category


def day_month(day: date, language: str | None = "en") -> str:
    """ "3 December", "3. Dezember", "3 de diciembre", "3 décembre": the day a line names."""
    code = edition_language(language)
    # TRANSLATORS: a CLDR date pattern for a day and its month ("d. MMMM" in German).
    pattern = catalogue(code).gettext("d MMMM")
    return format_date(day, pattern, locale=code)


def long_day(day: date, language: str | None = "en") -> str:
    """ "Monday 7 December 2026", "Montag, 7. Dezember 2026", "lunes, 7 de diciembre de
    2026", "lundi 7 décembre 2026": the day of an edition as its reader's copy names it."""
    code = edition_language(language)
    # TRANSLATORS: a CLDR date pattern for a weekday, day, month and year.
    pattern = catalogue(code).gettext("EEEE d MMMM y")
    return format_date(day, pattern, locale=code)


def language_called(code: str, language: str | None = "en") -> str:
    """The name of language `code` as a reader of `language` calls it ("Englisch" to a German
    reader, "inglés" to a Spanish one), from CLDR (Babel); "" for a code it does not know."""
    name = Locale(edition_language(language)).languages.get(code.strip().lower(), "")
    return str(name)

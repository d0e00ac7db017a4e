"""Figures in news text and what they count: where outlets disagree, where one revised its own
figure, and where something already sent is now contradicted (issue 31, story memory).

Pure, no I/O. The numbers are read as the claim check reads them (`claims.numbers_in`: thousands
separators, decimal commas, scale words, currencies, percentages; dates taken out first, so that
a day or a year of a date is no figure). What this module adds is the *subject*: what the number
counts or measures, from the words next to it, by a few rules in English and German:

- **casualties** by a small synonym table (the only one): dead (dead, killed, killing, died,
  deaths, death toll, toll, fatalities, lives; Tote, getötet, starben, ums Leben, Todesopfer),
  injured (injured, wounded, hurt; Verletzte, verletzt), missing (missing; vermisst), arrested
  (arrested, detained; festgenommen, verhaftet, Festnahmen). Looked for in the few words after
  the number ("12 dead", "12 people were killed", "30 Menschen kamen ums Leben": people and
  auxiliaries skipped), then before it ("killing 12", "death toll rose to 30", "a toll of 30");
- otherwise **the content word right after the number** ("$48 million fine" → fine, "500 jobs"
  → job), then **the nearest content word before it**, over linking words ("inflation rose to
  7.1%" → inflation, "eine Strafe von 48 Millionen Euro" → strafe). The word is folded as
  `digest.stories.tokens` folds (case, accents) with an English plural dropped, and kept
  readable (not cut to a stem) because it is shown. In German text it must be capitalized (a
  noun); elsewhere a capitalized word inside a sentence is a name, not a subject ("Anthony, 10",
  "23 Leonel Moreira"). A time unit ("12 years"), a unit of measure or a currency word ("25 km",
  "Euro 431"), a stopword, an adverb or participle ("respectively", "happened") or nothing found
  gives no subject, and such a number is no figure here.

A context stops at punctuation, another number and "and"/"or"/"but" ("killing 12 and injuring
30" is 12 dead and 30 injured). Qualifiers before the number are normalised: at least
(mindestens, wenigstens), more than (over, über, mehr als), less than (under, fewer than,
weniger als), nearly (almost, fast, knapp), about (around, roughly, some, rund, etwa, circa), up
to (as many as, bis zu). A former value is not what the text reports: "up from 12", "rose from 12
to 30", "von 12 auf 30" give 30 only (with the subject read at 12). Left out, to err toward
saying less: a 4-digit whole number that can be a year, ordinals, times (10:30), ranges and
lists ("5–6", "23- Leonel"), numbers glued to a word ("12-year-old", "COVID-19", "libz.so.1"),
versions and addresses ("0.9.7", "127.0.0.1"), and a number that is part of a name: right after
a capitalized word inside the sentence ("Rocket Pass 4", "GTX 1650", "Artikel 5", "#1").

Decisions:

- `agree`: the same subject, units that can name the same quantity, and the same value (one of
  an ambiguous writing's values). The qualifier does not make values agree: "at least 30" and
  45 are *different* values (both may be true, but the issue wants each attributed); "at least
  30" and 30 agree (one is exactly the other). A summary gives both with their outlets.
- `disagreements`: per subject, each outlet's value; a subject that one outlet's own text gives
  two different values ("12 ... later 30") gives nothing (which figure is that outlet's, and are
  the others' about the same thing?), and so does a subject whose outlets use units that cannot
  be one quantity (percent and a count, euros and dollars). Only ≥2 distinct values from ≥2
  outlets.
- `one_sided`: a sentence with a figure of a disputed subject, no attribution ("according to",
  "said", "reported", "laut", "zufolge", ...) and not two of the disputed values (`covers`).
  Any attribution counts, not only to an outlet: "45 died, the mayor said" is not stated as
  fact (`digest.summarize.disputes` still adds the outlets' values after it).
- `corrections`: a sent figure that was a bound and still holds ("at least 12" when 30 is
  reported now) was not wrong and is not corrected; a value some current outlet still reports is
  a disagreement, not a correction; one outlet's revision alone is not enough (a mistake or a
  hostile page would reach every reader): the new value needs a second outlet. A count that
  grows as an event goes on (dead, injured, arrested) and is higher now is an update
  (`rising`: "now 30, up from 12"), not an error corrected.
- **Languages**: the rules above are English and German (`LANGUAGES`); a text in another
  language has no figures here: saying nothing beats applying English rules to Spanish ("años"
  read as a count, "según" as a subject). A text too short to tell ("30 dead.") keeps only the
  casualty subjects, whose words are no other language's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from digest.models import Correction, Disagreement, Reported
from digest.stories.tokens import STOPWORDS, fold
from digest.summarize.claims import (
    WrittenNumber,
    compatible_units,
    numbers_in,
    sentences_of,
    text_language,
)

__all__ = [
    "Figure",
    "agree",
    "corrections",
    "covers",
    "disagreements",
    "figures_of",
    "one_sided",
    "per_subject",
    "revisions",
    "rising",
]


@dataclass(frozen=True, slots=True)
class Figure:
    """A number in a sentence and what it counts or measures."""

    subject: str  # normalised key of what is counted/measured: "dead", "injured", "fine" ...
    value: Decimal  # the number, scaled ("3.2 million" -> 3200000)
    qualifier: str  # "" | "at least" | "more than" | "less than" | "nearly" | "about" | "up to"
    written: str  # as written in the sentence ("at least 30")
    sentence: str  # the sentence it is in
    unit: str = ""  # a currency ("$", "EUR"), "%" or "pp"; "" for a count
    values: frozenset[Decimal] = field(default=frozenset(), compare=False, repr=False)


# -- vocabulary ------------------------------------------------------------------------------

# The languages the rules below are written for.
LANGUAGES = frozenset({"en", "de"})

_CASUALTIES: dict[str, str] = {}
for _kind, _words in (
    (
        "dead",
        "dead killed killing kills kill died dies deaths death toll tolls fatalities fatality "
        "lives dead body bodies corpses tote toten totet totete getotet starben gestorben "
        "sterben todesopfer todesopfern todesfalle todesfallen leichen",
    ),
    (
        "injured",
        "injured injuring injures injuries wounded wounding hurt verletzt verletzte verletzten "
        "schwerverletzte schwerverletzten leichtverletzte leichtverletzten verwundet verwundete "
        "verwundeten",
    ),
    ("missing", "missing vermisst vermisste vermissten"),
    (
        "arrested",
        "arrested arrests arresting arrest detained detaining festgenommen verhaftet "
        "festnahmen verhaftungen",
    ),
):
    for _w in _words.split():
        _CASUALTIES[_w] = _kind
_KINDS = frozenset(_CASUALTIES.values())
# Who is counted, skipped on the way to the casualty word ("12 people were killed").
_COUNTED = frozenset(
    """people persons person others more further additional civilians soldiers children men
    women residents passengers workers menschen personen weitere kinder zivilisten soldaten
    frauen manner bewohner passagiere""".split()
)
_AUXILIARIES = frozenset(
    """were was are is have has had been be being reportedly now also already confirmed
    reported believed feared thought presumed left so far still remain remained noch
    weiterhin wurden wurde sind waren ist
    worden kamen kam seien bislang bisher mindestens inzwischen nun ums""".split()
)
# Between a subject and its number: "inflation rose to 7.1%", "a toll of 30".
_LINKING = frozenset(
    """rose risen rise rises climbed climbs jumped jumps surged soared fell fallen falls dropped
    drops declined declines slipped increased decreased grew grown reached reaches hit hits
    stood stands stands totalled totaled totals amounted amounts came comes was were is are
    has have had been be now further to at of by from about around some nearly almost over
    than more less least up its their his her the a an this that which with estimated
    reportedly put stieg steigt sank sinkt fiel fallt lag liegt betrug betragt erreichte
    kletterte wuchs auf um bei von vom mit der die das des dem den ein eine einer eines
    einem ist sind war waren wurde wurden hat haben nun bereits""".split()
)
_TIME_UNITS = frozenset(
    """year years yr yrs month months week weeks day days hour hours minute minutes second
    seconds decade decades century centuries time times am pm jahr jahre jahren jahres monat
    monate monaten woche wochen tag tage tagen stunde stunden minute minuten sekunden uhr mal
    jahrzehnt jahrzehnte""".split()
)
# Units of measure: "25 km", "30 Millimetern" measure something the words do not name.
_MEASURES = frozenset(
    """mm cm km kg mg gb mb tb kb kw kwh mw mwh gw gwh mph kmh ps hz ghz mhz metre metres meter
    meters kilometre kilometres kilometer kilometers kilometern millimeter millimetern
    zentimeter zentimetern mile miles foot feet inch inches gram grams grams gramm kilogram
    kilograms kilogramm ton tons tonne tonnes tonnen degree degrees grad celsius fahrenheit
    litre litres liter liters litern pound euro euros dollar dollars cent cents franken pfund
    yen yuan rupee rupees""".split()
)
# Function words of the other languages pages come in (tokens.STOPWORDS has English and German).
_OTHER_FUNCTION_WORDS = frozenset(
    """de la le les un une des du au aux et ou en sur par pour dans avec el los las y con por
    para que del al una unos unas il lo gli della delle dei nel nella di da het een van op voor
    met na ao os dos das em na no com""".split()
)
_BOUNDARY_WORDS = frozenset("and or but while whereas as und oder aber sowie wahrend".split())
_QUALIFIERS: dict[str, str] = {
    "at least": "at least",
    "no fewer than": "at least",
    "mindestens": "at least",
    "wenigstens": "at least",
    "more than": "more than",
    "over": "more than",
    "mehr als": "more than",
    "uber": "more than",
    "über": "more than",
    "fewer than": "less than",
    "less than": "less than",
    "under": "less than",
    "weniger als": "less than",
    "nearly": "nearly",
    "almost": "nearly",
    "fast": "nearly",
    "knapp": "nearly",
    "about": "about",
    "around": "about",
    "roughly": "about",
    "approximately": "about",
    "some": "about",
    "rund": "about",
    "etwa": "about",
    "circa": "about",
    "ca.": "about",
    "ungefahr": "about",
    "ungefähr": "about",
    "up to": "up to",
    "as many as": "up to",
    "bis zu": "up to",
}
_QUALIFIER = re.compile(
    r"(?<![^\W_])("
    + "|".join(re.escape(q) for q in sorted(_QUALIFIERS, key=len, reverse=True))
    + r")\s+$",
    re.IGNORECASE,
)
_LOOK = 5  # words looked at on each side of a number
# A capitalized word right before a number, not first in its sentence: the number is part of a
# name ("Rocket Pass 4", "GTX 1650", "Volume 1", "Artikel 5", "im Jahr 1619").
_LABEL = re.compile(r"\S\s+(?:[^\W\d_]*[A-ZÄÖÜ][^\W_]*|[Nn][or]\.)\s*$")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# What ends a number's context: punctuation that ends a clause, and digits (another number).
_STOP = re.compile(r"[,;:()\[\]{}—–\"“”«»!?\d]|\.(?:\s|$)")
_ATTRIBUTION = re.compile(
    r"(?<![^\W_])(according to|said|says|say|reported|reports|reporting|told|citing|cited|"
    r"claimed|claims|estimated|laut|zufolge|berichtet|berichtete|berichten|sagte|sagten|"
    r"meldete|meldeten|nach angaben|teilte|erklarte|erklärte)(?![^\W_])",
    re.IGNORECASE,
)


def _key(word: str) -> str:
    """A word as a subject: folded, without a possessive or an English plural."""
    w = fold(word).replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.rstrip("'")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith("sses"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _content(word: str) -> bool:
    return (
        len(word) > 1
        and word not in STOPWORDS
        and word not in _OTHER_FUNCTION_WORDS
        and word not in _TIME_UNITS
    )


def _clause(words: list[str]) -> list[str]:
    for i, w in enumerate(words):
        if fold(w) in _BOUNDARY_WORDS:
            return words[:i][:_LOOK]
    return words[:_LOOK]


def _after(text: str, end: int) -> list[str]:
    """The words after a number, up to where its clause stops."""
    stop = _STOP.search(text, end)
    return _clause(_WORD.findall(text[end : stop.start() if stop else len(text)]))


def _before(text: str, start: int) -> list[str]:
    """The words before a number, nearest first, back to where its clause starts."""
    head = text[:start]
    begin = max((m.end() for m in _STOP.finditer(head)), default=0)
    return _clause(_WORD.findall(head[begin:])[::-1])


def _casualty(words: Sequence[str], *, after: bool) -> str:
    for i, w in enumerate(words):
        if w in _CASUALTIES:
            return _CASUALTIES[w]
        if w == "leben" and i and words[i - 1] == "ums":
            return "dead"
        if after and (w in _COUNTED or w in _AUXILIARIES):
            continue
        if not after and (w in _LINKING or w in _AUXILIARIES):
            continue
        return ""
    return ""


def _subject(text: str, start: int, end: int, lang: str | None) -> str:
    """What the number at text[start:end] counts, "" when that cannot be told (`lang`: the
    text's language when known: German subjects are capitalized nouns, and elsewhere a
    capitalized word before a number inside a sentence is a name, not a subject)."""
    german, names = lang == "de", lang not in (None, "de")
    after_written, before_written = _after(text, end), _before(text, start)
    after = [fold(w) for w in after_written]
    before = [fold(w) for w in before_written]
    if after and (after[0] in _TIME_UNITS or after[0] in _MEASURES or len(after[0]) == 1):
        return ""  # a duration, an age, a length: "12 years", "3 days", "25 km", "1 p.m."
    if after and after[0] == "leben" and before[:1] == ["ums"]:
        return "dead"
    found = _casualty(after, after=True) or _casualty(before, after=False)
    if found:
        return found
    if after and after[0] in _COUNTED:
        # "300 people were evacuated" counts the evacuated; "300 people" alone says nothing
        rest = [w for w in after if w not in _COUNTED and w not in _AUXILIARIES]
        return _key(rest[0]) if rest and _content(rest[0]) else ""
    if after and names and after_written[0][:1].isupper():
        return ""  # "23 Leonel Moreira": a number before a name
    if after and _noun(after[0], after_written[0], german):
        return _key(after[0])
    for w, written in zip(before, before_written, strict=True):
        if w in _LINKING or w in _AUXILIARIES:
            continue
        if w in _MEASURES or (names and written[:1].isupper() and _inside(text, written)):
            return ""  # "Euro 431", a name: "Anthony ... 10"
        return _key(w) if _noun(w, written, german) and w not in _COUNTED else ""
    return ""


def _inside(text: str, word: str) -> bool:
    """Whether `word` occurs in `text` other than as its first word."""
    return not text.lstrip(" \"'“„‘«-–—").startswith(word) or text.count(word) > 1


def _noun(word: str, written: str, german: bool) -> bool:
    """Whether a word can name what a number counts: a content word, not an English adverb or
    past participle ("respectively", "happened"), in German a capitalized one (a noun)."""
    if not _content(word) or word in _COUNTED:
        return False
    if german:
        return written[:1].isupper()
    return not word.endswith(("ly", "ed"))


def _year_like(written: str, values: frozenset[Decimal]) -> bool:
    return (
        len(values) == 1
        and written.isdigit()
        and len(written) == 4
        and 1800 <= int(written) <= 2100
    )


def _plain(value: Decimal) -> Decimal:
    """3.2E+6 as 3200000: the value as it reads (a number longer than the decimal context's
    28 digits, an id or a reference number in a page, as it is)."""
    if value != value.to_integral_value():
        return value.normalize()
    try:
        return value.quantize(Decimal(1))
    except InvalidOperation:
        return value


_FROM = re.compile(r"(?<![^\W_])(?:(up|down) )?(from|von)\s+$", re.IGNORECASE)
_TO = re.compile(r"\s+(?:to|auf|bis)\s+", re.IGNORECASE)


def _former(sentence: str, start: int, following: WrittenNumber | None) -> bool:
    """Whether the number at `start` is a figure's former value: "up from 12", "down from
    $5m", or "from 12 to 30" / "von 12 auf 30" (a number follows after "to")."""
    m = _FROM.search(sentence, max(0, start - 12), start)
    if m is None:
        return False
    if m.group(1):
        return True
    return following is not None and bool(
        _TO.fullmatch(sentence, _end_of(sentence, start), following.start)
    )


def _end_of(sentence: str, start: int) -> int:
    """Where the number that starts at `start` ends."""
    return next((n.end for n in numbers_in(sentence) if n.start >= start), start)


def _figures_in(sentence: str, lang: str | None = "") -> list[Figure]:
    """The figures of one sentence (`lang`: the language of its text, None when unknown; from
    the sentence itself when not told)."""
    if lang == "":
        lang = text_language(sentence)
    if lang is not None and lang not in LANGUAGES:
        return []
    out: list[Figure] = []
    numbers = numbers_in(sentence)
    carried = ""  # the subject of a former value: "rose from 12 to 30" gives it to 30
    for k, n in enumerate(numbers):
        given, carried = carried, ""
        digits = sentence[n.start : n.end]
        bare = re.sub(r"^\D+|\D+$", "", digits)
        if not n.unit and not n.scaled and _year_like(bare, n.values):
            continue
        if re.match(r"\d+(?:st|nd|rd|th)$", digits, re.IGNORECASE):
            continue  # an ordinal
        before = sentence[max(0, n.start - 2) : n.start]
        after = sentence[n.end : n.end + 2]
        if re.search(r"[^\W\d_][-.]$|\d[-–:./]$|[#№/]\s*$", before) or re.match(
            r"\s?[-–]|[:/]\d", after
        ):
            continue  # "COVID-19", "12-year-old", "10:30", "5–6", "23- Leonel", "so.2", "#1"
        if re.fullmatch(r"\d+(?:[.,]\d+){2,}", bare) and not re.fullmatch(
            r"\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*", bare
        ):
            continue  # a version or an address: "0.9.7", "127.0.0.1"
        if _LABEL.search(sentence, 0, n.start):
            continue  # a name's number: "Rocket Pass 4", "GTX 1650", "Volume 1", "Nummer 1"
        start = n.start
        qualifier = ""
        if q := _QUALIFIER.search(sentence, max(0, start - 20), start):
            qualifier = _QUALIFIERS.get(q.group(1).casefold()) or _QUALIFIERS.get(
                fold(q.group(1)), ""
            )
            start = q.start()
        subject = _subject(sentence, start, n.end, lang)
        if given and not subject and _TO.fullmatch(sentence, numbers[k - 1].end, start):
            subject = given
        if _former(sentence, start, numbers[k + 1] if k + 1 < len(numbers) else None):
            carried = subject
            continue  # what it was before: "up from 12", "von 12 auf 30"
        if not subject or not n.values:
            continue
        if lang is None and subject not in _KINDS:
            continue  # a language not told: only the casualty words, which are no other's
        if subject not in _KINDS and not any(ch.isdigit() for ch in digits):
            continue  # in words, only a toll is a figure: "three villages" is prose
        out.append(
            Figure(
                subject=subject,
                value=_plain(max(n.values)),
                qualifier=qualifier,
                written=sentence[start : n.end],
                sentence=sentence,
                unit=n.unit or "",
                values=n.values,
            )
        )
    return out


def figures_of(text: str, lang: str | None = None) -> list[Figure]:
    """The figures of `text` whose subject can be told, in order (rules in the docstring);
    none in a language without rules (`lang`: the text's, when the caller knows it)."""
    lang = lang or text_language(text)
    if lang is not None and lang not in LANGUAGES:
        return []
    return [f for sentence in sentences_of(text) for f in _figures_in(sentence, lang)]


# -- comparing -------------------------------------------------------------------------------


def agree(a: Figure, b: Figure) -> bool:
    """Whether two figures say the same: one subject, compatible units, one value (a bound
    and another value do not agree: see the module docstring)."""
    if a.subject != b.subject or not compatible_units(a.unit or None, b.unit or None):
        return False
    return a.value == b.value or not (a.values or {a.value}).isdisjoint(b.values or {b.value})


def _single(figures: Sequence[Figure]) -> Figure | None:
    """The one value a text gives a subject, None when it gives several; written in digits
    where the text writes it so once ("Twelve died ... 12 bodies": 12, as a reader scans it)."""
    first = figures[0]
    if not all(agree(first, f) for f in figures[1:]):
        return None
    return min(figures, key=_in_words)


def _in_words(f: Figure) -> bool:
    return not any(ch.isdigit() for ch in f.written)


def per_subject(figures: Sequence[Figure]) -> dict[str, Figure]:
    """Each subject's one figure in a text (what an outlet reports for it, e.g. to record),
    subjects the text gives several values left out."""
    grouped: dict[str, list[Figure]] = {}
    for f in figures:
        grouped.setdefault(f.subject, []).append(f)
    return {s: one for s, fs in grouped.items() if (one := _single(fs)) is not None}


def _groups(said: Sequence[tuple[str, Figure]]) -> list[list[tuple[str, Figure]]]:
    """(outlet, figure) pairs grouped by agreeing values."""
    groups: list[list[tuple[str, Figure]]] = []
    for outlet, f in said:
        for g in groups:
            if agree(g[0][1], f):
                g.append((outlet, f))
                break
        else:
            groups.append([(outlet, f)])
    return groups


def _reported(group: Sequence[tuple[str, Figure]]) -> Reported:
    writings = Counter(f.written for _, f in group)
    written = min(writings, key=lambda w: (-writings[w], w))
    return Reported(value=written, outlets=tuple(sorted({o for o, _ in group})))


def disagreements(by_outlet: Mapping[str, Sequence[Figure]]) -> list[Disagreement]:
    """Per subject, the outlets grouped by the value they report, where ≥2 outlets report ≥2
    distinct values; by subject, each disagreement's values most outlets first."""
    said: dict[str, list[tuple[str, Figure]]] = {}
    ambiguous: set[str] = set()
    for outlet in sorted(by_outlet):
        figures = by_outlet[outlet]
        one = per_subject(figures)
        ambiguous |= {f.subject for f in figures} - one.keys()
        for subject, f in one.items():
            said.setdefault(subject, []).append((outlet, f))
    out: list[Disagreement] = []
    for subject in sorted(said.keys() - ambiguous):
        pairs = sorted(said[subject], key=lambda of: (of[1].value, of[1].written, of[0]))
        units = {f.unit for _, f in pairs}
        if any(not compatible_units(a or None, b or None) for a in units for b in units):
            continue  # a percentage and a count, euros and dollars: not one quantity
        groups = _groups(pairs)
        if len(groups) < 2:
            continue
        groups.sort(key=lambda g: (-len({o for o, _ in g}), g[0][1].value, g[0][1].written))
        out.append(Disagreement(subject, tuple(_reported(g) for g in groups)))
    return out


def revisions(old: Sequence[Figure], new: Sequence[Figure]) -> list[tuple[Figure, Figure]]:
    """(old, new) for each subject one outlet's text gave one value before and another now
    (subjects with several values in either version left out), by subject."""
    before, after = per_subject(old), per_subject(new)
    return [
        (before[s], after[s])
        for s in sorted(before.keys() & after.keys())
        if not agree(before[s], after[s])
    ]


def _values_of(written: str) -> frozenset[Decimal]:
    return frozenset(v for n in numbers_in(written) for v in n.values)


def one_sided(sentence: str, disputes: Sequence[Disagreement]) -> bool:
    """Whether `sentence` states a value for a disputed subject as fact: no attribution
    ("according to", "said", "reported") and not two of the disputed values (a range or each
    value given)."""
    disputed = {d.subject: d for d in disputes}
    figures = [f for f in _figures_in(sentence) if f.subject in disputed]
    if not figures or _ATTRIBUTION.search(sentence):
        return False
    return any(not covers(sentence, disputed[f.subject]) for f in figures)


def covers(sentence: str, dispute: Disagreement) -> bool:
    """Whether `sentence` gives two or more of the disputed values (a range, or each value)."""
    stated = frozenset(v for n in numbers_in(sentence) for v in n.values)
    values = [_values_of(r.value) for r in dispute.reported]
    return sum(1 for v in values if not v.isdisjoint(stated)) >= 2


# -- corrections -----------------------------------------------------------------------------


# Counts that grow while an event goes on: a higher one later is news, not an error.
_GROWING = frozenset({"dead", "injured", "arrested"})


def rising(subject: str, said: str, now: str) -> bool:
    """Whether a sent figure ("12") was overtaken by a higher count ("at least 30") of
    something that grows as an event goes on: an update ("now 30, up from 12"), not an error
    corrected."""
    if subject not in _GROWING:
        return False
    before, after = _values_of(said), _values_of(now)
    return bool(before and after) and min(after) > max(before)


def _still_holds(said: Figure, now: Figure) -> bool:
    """Whether a sent bound is still true of the value reported now."""
    if said.qualifier in ("at least", "more than"):
        return now.value >= said.value
    if said.qualifier in ("up to", "less than"):
        return now.value <= said.value
    return False


def corrections(
    sent: Sequence[tuple[date, str]],
    current: Mapping[str, Sequence[Figure]],
    revised: Mapping[str, Sequence[tuple[Figure, Figure]]] | None = None,
) -> list[Correction]:
    """Figures in sentences already sent (with the day of their edition) that are now
    contradicted: the outlet that reported the value revised it (`revised`: per outlet, its
    (old, new) pairs, as `revisions` gives them), or ≥2 outlets in `current` (each outlet's
    figures now) agree on another value and none still reports the sent one. A sent bound that
    still holds is no error."""
    now = {outlet: per_subject(figures) for outlet, figures in current.items()}
    out: list[Correction] = []
    seen: set[tuple[date, str, str]] = set()
    for day, sentence in sent:
        for said in sorted(_figures_in(sentence), key=_in_words):
            key = (day, sentence, said.subject)
            if key in seen:
                continue
            reports = sorted((o, fs[said.subject]) for o, fs in now.items() if said.subject in fs)
            if not reports or not all(
                compatible_units(said.unit or None, f.unit or None) for _, f in reports
            ):
                continue
            found = _revised(said, revised or {}, reports) or _overtaken(said, reports)
            if found is None:
                continue
            value, outlets = found
            seen.add(key)
            out.append(
                Correction(
                    subject=said.subject,
                    said=said.written,
                    now=value.written,
                    said_on=day,
                    sentence=sentence,
                    outlets=outlets,
                )
            )
    return out


def _revised(
    said: Figure,
    revised: Mapping[str, Sequence[tuple[Figure, Figure]]],
    reports: Sequence[tuple[str, Figure]],
) -> tuple[Figure, tuple[str, ...]] | None:
    """The new value when an outlet that reported the sent value has revised it, no current
    outlet still reports the sent value, and another outlet reports the new one (one outlet's
    revision alone could be an error or a hostile page: it is a disagreement, not a
    correction)."""
    for outlet in sorted(revised):
        for old, new in revised[outlet]:
            if old.subject != said.subject or not agree(old, said) or agree(new, said):
                continue
            if _still_holds(said, new):
                continue
            if any(agree(f, said) for _, f in reports):
                return None  # an outlet still reports what was sent: a disagreement
            agreeing = {o for o, f in reports if agree(f, new)} | {outlet}
            if len(agreeing) < 2:
                return None  # the reviser alone: not corroborated
            return new, tuple(sorted(agreeing))
    return None


def _overtaken(
    said: Figure, reports: Sequence[tuple[str, Figure]]
) -> tuple[Figure, tuple[str, ...]] | None:
    """The value ≥2 current outlets agree on when none still reports the sent one."""
    if any(agree(f, said) for _, f in reports):
        return None
    groups = [g for g in _groups(reports) if len({o for o, _ in g}) >= 2]
    if len(groups) != 1:
        return None  # nobody agrees on a new value, or outlets still disagree
    new = groups[0][0][1]
    if _still_holds(said, new):
        return None
    return new, tuple(sorted({o for o, _ in groups[0]}))

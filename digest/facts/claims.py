"""Claims in a summary checked against the texts it was written from, before anything is published.

A model that summarizes can invent a figure, a date, a quote or a person. Every checkable claim
in each sentence of a summary must be found in the sources; a sentence with a claim that is not
found is removed (`check_summary`). Pure and cheap: no I/O, a few milliseconds for a summary of
20 sentences against three articles (`bench/claims.py`). Linear in the length of the sources: a
sentence longer than MAX_SENTENCE characters is read in pieces cut at a space, and each kind of
claim is masked in one pass (a page of one 600,000-character paragraph is indexed in about a
second; `bench/hostile.py --only claims`).

What counts as a claim, per sentence (split as the extractive summarizer splits; an answer's
citation markers, `[1]`, `[2, 3]`, are not claims):

- **numbers**: digits with a decimal comma or point and thousands separators (`1,200`,
  `1.200`, `1 200` with a narrow or no-break space, `1'200`); `7,1` and `7.1` are one value.
  A lone separator before exactly three digits (`1,200`) is read both ways (1200 or 1.2). Scale
  words multiply: thousand/k, million/m/mn/Mio, billion/bn/b/Mrd/Milliarden, trillion/tn/
  Billionen; a glued single letter (`48m`, `5k`) may also be a unit (metres), so it stands for
  both 48 million and 48. Ordinals (`3rd`) are numbers. Signs are ignored. Thousands grouped
  by an ordinary space (`200 000`: 1 to 3 digits, then groups of three) are one number; Spanish
  `mil 500 millones` is 1,500 million, `3 mil millones` 3 billion, `30 mil` 30,000.
- **numbers written as words**, in summaries and sources alike, in the text's language (its
  function words, else py3langid; `number_language`), for the languages text2num knows (en,
  fr, es, pt, de, nl, da, it): "three hours", "Twelve people", "seis muertos", "Trente-huit",
  "zweihunderttausend", "a dozen" (12). "three" in a summary is found by "3" in a source and
  the other way round. Not figures: zero, one and two alone (articles, "one of", "les deux"),
  ordinals ("third" is also a fraction), "a few", "several", vague plurals ("dozens",
  "hundreds", "miles de", "Tausende") and "half a dozen". A text in another language (or too
  short to tell) has its number words unread: never another language's rules. text2num was
  chosen over number-parser: its `find_numbers` takes our own tokens and says which tokens
  each number spans, so a figure keeps its place in the sentence (number-parser only rewrites
  the text), it reads the four languages a digest meets most (number-parser reads English,
  Spanish, Hindi, Russian and Ukrainian: no German or French), and it is Rust: about 1 ms for
  1,300 characters.
- **amounts**: a number with a currency symbol, code or word before or after it (`$48 million`,
  `€3.2bn`, `48m dollars`, `£1,200`, `CHF 20`, `3,2 Mrd. Euro`); `$` and "dollars" are any
  dollar, `US$`/`USD` the US one.
- **percentages**: `7.1%`, `7.1 per cent`, `7,1 Prozent`, `7.1 pct`; percentage points
  (`percentage points`, `Prozentpunkte`) are their own unit. In a range (`10-12%`,
  `2 to 3 billion dollars`) the first number takes the unit and scale of the second.
- **dates**: `12 March 2025`, `March 12, 2025`, `12. März`, `March 2025`, `2025-03-12`,
  `12.03.2025`, `12/03/2025` (both day-month orders when both fit), a month named mid-sentence,
  and weekday names (English, German, French, Spanish).
- **quoted phrases**: between the quote marks of the scripts a digest meets: “…”, „…“, ‟…”,
  ”…”, «…», »…«, ‹…›, ›…‹, "…", ＂…＂, ″…″, ``…'', 〝…〞, ❝…❞, ‘…’ (with space or punctuation
  outside), ‚…‘, 「…」, 『…』, 《…》 and 〈…〉; an ellipsis inside a quote (`…`, `...`, `[…]`)
  splits it into parts.
- **proper names**: runs of capitalized words (`Saint-Étienne`, `O'Brien`, `McDonald's`,
  `iPhone`, `Bank of England`, `Ludwig van Beethoven`), not at the start of a sentence (or after
  a colon) unless the sources know the word as a name or it starts a run of two; function words
  (`The`, `However`, `Der`), months and weekdays, personal titles (`President`, `Dr`) and
  nationality adjectives (`Chinese`) are not names. When the sources capitalize nouns (German:
  over a fifth of the words inside sentences), only names of two or more words are checked, and
  their words may occur in any order. Names in lower case: the words after an honorific (`mr
  pryce`, `dr jones`), and, in a sentence written without any capital, every word the sources
  do not write in lower case (`the round was led by jonathan pryce`).

All matching is on a normal form: NFKD without diacritics (`Zürich` is `Zurich`), case folded,
`’` as `'`, dotted acronyms without dots (`U.S.` is `US`). A claim is found when:

- a number: one of its values occurs in the sources with the same scale applied; a plain number
  matches any occurrence of the value, a percentage only a percentage, an amount an amount in a
  compatible currency or a number without a currency (`$48 million` matches `48m`), a year
  also the year of a date;
- a date: a date in the sources agrees on every part the claim gives (a source date without a
  year accepts the claim's year when that year occurs in the sources); a weekday is found when
  the sources name it or give a full date that falls on it;
- a quote: each part's words occur one after another in one source, punctuation and spacing
  aside, the parts in their order, and what an ellipsis leaves out holds no negation (`not`,
  `never`, `won't`, `nicht`, `kein`, `pas`, ...): "We will … raise prices" is not found in "We
  will not raise prices";
- a name: its words (the connectors `of`, `van`, ... and single letters aside) occur in order in
  one source, at most two other words between each, a possessive or genitive `s` aside
  (`Merkels`, `Trump's`); `US`/`United States`/`America`, `UK`/`Britain`, `EU`, `UN`, `AI`
  and a few more count as one name.

What it cannot catch (limits to keep in mind when reading a verdict):

- a claim built only from found pieces: a figure tied to the wrong subject, a known person
  credited with the wrong quote, a date or amount from another story in the same sources, a
  number moved from 7.1% to a 7.1-point rise in a plain sentence ("rose 7.1");
- numbers written as words in a language other than those above, or in a sentence whose
  German accents are lost to a length-changing normal form (`U.S.` in it); "one", "two", "a
  few" against a source's figure; also fractions, times (`10:30` is 10 and 30), signs (-5% and
  5%), and what a glued `m` means (metres or million);
- a single invented name at the very start of a sentence ("Smith said ..."), a made-up
  nationality, title or month, names in a text whose sources capitalize nouns (single words);
  a name written in lower case in a sentence that has capitals, with no honorific before it
  ("The round was led by jonathan pryce" is kept); a quote shortened in a way that turns it
  around without leaving out a negation ("we will stop … raising prices");
- names in another spelling or language (`Zuerich`, `Munich`/`München`, `St-Étienne`) are not
  found, and their sentence is removed: the checker errs towards removing.
"""

from __future__ import annotations

import bisect
import datetime
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Literal

from text_to_num import find_numbers

from digest.facts.text import STOPWORDS, join_sentences, split_sentences
from digest.stories import tokens
from digest.stories.language import detect_language

ClaimKind = Literal["number", "amount", "percent", "date", "quote", "name"]
# (year, month, day, weekday); None where the text does not say. Weekday: Monday is 0.
DateKey = tuple[int | None, int | None, int | None, int | None]

# -- normal form -----------------------------------------------------------------------------

_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_CITATION = re.compile(r"\[\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*\]")  # "[1]", "[2, 3]" in an answer
_LEADING_CITATIONS = re.compile(rf"(?:{_CITATION.pattern}\s*)+")
# A space that groups thousands ("1 200" with a no-break, narrow or thin space) would become an
# ordinary one when sentences are split (and under NFKD): it goes through the split as a
# private-use character, read as "'" (the Swiss separator), and is given back in the sentences
# shown. The split keeps every other character in order, so they are given back one by one.
_HIDDEN = "\ue000"
# The longest sentence read as one: news sentences are far shorter, and a longer one (a page of
# one paragraph without a full stop) is read in pieces, so that the work per sentence is bounded.
MAX_SENTENCE = 2000
_HIDE = re.compile(r"(?<=\d)[\u00a0\u202f\u2009](?=\d{3}(?!\d))|\ue000")


def _sentences(text: str) -> list[tuple[str, str]]:
    """`split_sentences` as (sentence to read, sentence as written): the spaces that group
    digits kept (see _HIDDEN), and an answer's citations with the sentence they follow ("A. [1]
    B. [2]" is "A. [1]" and "B. [2]", so that removing B cannot leave A cited by another
    source)."""
    originals = iter(m.group(0) for m in _HIDE.finditer(text))
    out: list[str] = []
    for sentence in _capped(split_sentences(_HIDE.sub(_HIDDEN, text))):
        lead = _LEADING_CITATIONS.match(sentence)
        if lead and out:
            out[-1] += " " + lead.group(0).strip()
            sentence = sentence[lead.end() :]
        if sentence:
            out.append(sentence)
    return [(s, re.sub(_HIDDEN, lambda _: next(originals), s)) for s in out]


def _capped(sentences: Iterable[str]) -> Iterator[str]:
    """Each sentence, one longer than MAX_SENTENCE cut into pieces at the last space before the
    bound (anywhere when there is none): a page of one endless sentence costs what a page of
    many short ones does."""
    for sentence in sentences:
        start = 0
        while len(sentence) - start > MAX_SENTENCE:
            cut = sentence.rfind(" ", start, start + MAX_SENTENCE + 1)
            if cut <= start:
                cut = start + MAX_SENTENCE
            yield sentence[start:cut]
            start = cut
            while sentence.startswith(" ", start):
                start += 1
        if start < len(sentence):
            yield sentence[start:]


_DOTTED_ACRONYM = re.compile(r"(?<![^\W\d_])(?:[^\W\d_]\.){2,}(?![^\W\d_])")
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_MASK = "\x00"  # what a claim already taken is overwritten with: no word, no space, no digit


def _prepare(text: str) -> str:
    """The text claims are read from: NFKD without diacritics, one apostrophe, and dotted
    acronyms without dots (`U.S.` is `US`), case kept."""
    text = unicodedata.normalize("NFKD", text.replace(_HIDDEN, "'"))
    text = _COMBINING.sub("", text).replace("’", "'").replace("ʼ", "'")
    return _DOTTED_ACRONYM.sub(lambda m: m.group(0).replace(".", ""), text)


def _fold(prepared: str) -> str:
    return _COMBINING.sub("", prepared.casefold())


def fold(text: str) -> str:
    """The normal form words are compared in: `_prepare`d and case folded."""
    return _fold(_prepare(text))


def _words(prepared: str) -> list[str]:
    return _TOKEN.findall(_fold(prepared))


@functools.lru_cache(maxsize=65536)
def _key(word: str) -> str:
    """The key a word of a prepared text is looked up by: folded, without its possessive."""
    return _name_key(_fold(word))


@functools.lru_cache(maxsize=65536)
def _name_key(word: str) -> str:
    """A folded word without its possessive (`trump's` → `trump`, `jones'` → `jones`)."""
    if word.endswith("'s"):
        return word[:-2]
    return word.rstrip("'")


# -- vocabularies ----------------------------------------------------------------------------

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    [
        "january jan januar janvier enero jänner",
        "february feb februar fevrier febrero",
        "march mar marz mars marzo",
        "april apr avril abril",
        "may mai mayo",
        "june jun juni juin junio",
        "july jul juli juillet julio",
        "august aug aout agosto",
        "september sep sept septembre septiembre",
        "october oct oktober octobre octubre",
        "november nov novembre noviembre",
        "december dec dezember decembre diciembre",
    ],
    start=1,
):
    for _name in _names.split():
        _MONTHS[fold(_name)] = _number
# Abbreviations and short words that are months only next to a day or a year.
_MONTH_ONLY_WITH_NUMBERS = frozenset(
    "jan feb mar apr jun jul aug sep sept oct nov dec mars".split()
)
_WEEKDAYS: dict[str, int] = {}
for _number, _names in enumerate(
    [
        "monday montag lundi lunes",
        "tuesday dienstag mardi martes",
        "wednesday mittwoch mercredi miercoles",
        "thursday donnerstag jeudi jueves",
        "friday freitag vendredi viernes",
        "saturday samstag sonnabend samedi sabado",
        "sunday sonntag dimanche domingo",
    ]
):
    for _name in _names.split():
        _WEEKDAYS[fold(_name)] = _number

_SCALES: dict[str, int] = {}
for _power, _names in (
    (3, "thousand thousands k tsd tausend mil"),
    (6, "million millions m mn mio mill millionen millon millones"),
    (9, "billion billions bn b bln mrd milliarde milliarden milliard milliards"),
    (12, "trillion trillions tn trn billionen"),
):
    for _name in _names.split():
        _SCALES[_name] = _power
_SCALES["mil millones"] = 9  # Spanish: "3 mil millones" is 3 billion

# Currency words, symbols and codes → a unit. "$" and "dollar" are any dollar (see _compatible).
_CURRENCIES: dict[str, str] = {
    "$": "$",
    "us$": "USD",
    "c$": "CAD",
    "ca$": "CAD",
    "a$": "AUD",
    "au$": "AUD",
    "nz$": "NZD",
    "hk$": "HKD",
    "s$": "SGD",
    "r$": "BRL",
    "€": "EUR",
    "£": "GBP",
    "¥": "¥",
    "₹": "INR",
    "₩": "KRW",
    "₽": "RUB",
    "₺": "TRY",
    "₪": "ILS",
    "fr": "CHF",
    "sfr": "CHF",
    "rs": "INR",
}
_CODES = "USD EUR GBP JPY CNY RMB INR CAD AUD NZD HKD SGD CHF SEK NOK DKK PLN CZK HUF RUB"
for _code in _CODES.split():
    _CURRENCIES[_code.lower()] = "CNY" if _code == "RMB" else _code
for _unit, _names in (
    ("$", "dollar dollars"),
    ("USD", "us-dollar us-dollars"),
    ("EUR", "euro euros"),
    ("GBP", "pound pounds sterling"),
    ("JPY", "yen"),
    ("CNY", "yuan renminbi"),
    ("CHF", "franc francs franken"),
    ("INR", "rupee rupees"),
    ("KRW", "won"),
    ("RUB", "rouble roubles ruble rubles rubel"),
    ("SEK", "kronor krona"),
    ("TRY", "lira"),
):
    for _name in _names.split():
        _CURRENCIES[_name] = _unit
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "HKD", "SGD"})
_YEN_YUAN = frozenset({"JPY", "CNY"})

PERCENT = "%"
POINTS = "pp"


# Capitalized words that are not names: function words of the languages the digest summarizes
# in, and words that open English news sentences.
def _folded(words: Iterable[str]) -> frozenset[str]:
    return frozenset(fold(w) for w in words)


FUNCTION_WORDS = _folded(STOPWORDS) | _folded(
    """
    the a an and or but if so yet nor for in on at by of to as from with without after before
    despite during since until unless while whereas although though because meanwhile however
    moreover furthermore nevertheless nonetheless instead also still thus hence therefore
    yesterday today tomorrow tonight earlier later recently currently previously separately
    overall finally initially eventually ultimately last next this that these those there here
    it its he she they we i you his her their our my your them us him who whom whose what which
    when where why how all both each every some many most much more few several no not none
    one two three four five six seven eight nine ten such other another any only even just
    first second third new former latest according following amid among between under over
    against toward towards into onto upon within across along around behind beyond near
    officials experts analysts critics observers residents authorities police investigators
    reports report sources shares prices markets stocks
    der die das ein eine einer eines dem den des im am vom zum zur beim nach laut trotz wegen
    seit während doch auch aber und oder sowie zudem außerdem dabei damit dennoch jedoch zuvor
    le la les un une des du au aux et ou mais dans sur selon apres avant depuis pendant
    el la los las un una y o pero en con segun tras desde durante
    """.split()
)
TITLES = _folded(
    """
    mr mrs ms miss dr prof professor sir dame lord lady president vice prime minister chancellor
    secretary senator sen rep representative congressman congresswoman governor gov mayor king
    queen prince princess emperor pope cardinal bishop rabbi imam sheikh judge justice general
    gen colonel col captain capt lieutenant lt sergeant commander admiral ceo cfo coo cto chief
    executive chairman chairwoman chair director founder spokesman spokeswoman spokesperson
    ambassador commissioner coach officer deputy herr frau bundeskanzler kanzler kanzlerin
    ministerpräsident ministerpraesident präsident praesident präsidentin bürgermeister monsieur
    madame mme senor senora don
    """.split()
)
NATIONALITIES = _folded(
    """
    american british english scottish welsh irish chinese german french russian ukrainian
    european israeli palestinian iranian iraqi syrian lebanese saudi egyptian turkish greek
    italian spanish portuguese dutch belgian swiss austrian polish czech hungarian romanian
    swedish norwegian danish finnish japanese korean indian pakistani afghan bangladeshi
    indonesian vietnamese thai filipino australian canadian mexican brazilian argentine
    argentinian chilean colombian venezuelan cuban african nigerian kenyan ethiopian
    south-african asian arab western eastern northern southern
    deutsche deutschen deutscher französische französischen russische russischen chinesische
    chinesischen amerikanische amerikanischen europäische europäischen
    """.split()
)
# Titles that only ever stand before a name: the words after one are a name in any case.
HONORIFICS = _folded("mr mrs dr prof sir dame herr frau mme mlle monsieur madame".split())
_MAX_LOWER_NAME = 3  # words of a lower-case name after an honorific
# Words inside a name that are written in lower case: "Bank of England", "Charles de Gaulle".
CONNECTORS = frozenset("of de del della der den van von da di du la le bin ibn al el zu y".split())
# Spellings of one name: a claim written one way is found when the sources use another.
ALIASES: tuple[tuple[str, ...], ...] = (
    ("us", "usa", "united states", "united states of america", "america"),
    ("uk", "united kingdom", "britain", "great britain"),
    ("eu", "european union"),
    ("un", "united nations"),
    ("ai", "artificial intelligence"),
    ("gdp", "gross domestic product"),
    ("ecb", "european central bank"),
    ("fed", "federal reserve"),
    ("imf", "international monetary fund"),
    ("who", "world health organization"),
    ("nato", "north atlantic treaty organization"),
)
_ALIAS_OF: dict[str, tuple[str, ...]] = {name: group for group in ALIASES for name in group}

_NAME_GAP = 2  # other words allowed between two words of a name in the sources
# Words that turn a statement around: an ellipsis in a quote may not leave one out.
NEGATIONS = _folded(
    """
    not no never nor neither none nobody nothing nowhere cannot without
    nicht kein keine keinen keinem keiner keines nie niemals nichts weder
    ne pas jamais aucun aucune rien ni non nunca jamas ningun ninguna ninguno nada tampoco
    niet geen nooit
    """.split()
)


def _negation(word: str) -> bool:
    """Whether a folded word negates: a negation word, or a contraction (`won't`, `n'a`)."""
    return word in NEGATIONS or word.endswith("n't") or word.startswith("n'")


_CAPITALIZED_NOUNS = 0.2  # share of capitalized words inside sentences: a German-like text

# -- claims ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """One checkable statement in a sentence: its kind, its text as written, and its normal
    form (numbers: candidate values and unit; dates: candidate dates; quotes: the words of each
    part; names: the words to find)."""

    kind: ClaimKind
    text: str
    values: frozenset[Decimal] = field(default=frozenset(), repr=False)
    unit: str | None = field(default=None, repr=False)
    dates: frozenset[DateKey] = field(default=frozenset(), repr=False)
    words: tuple[tuple[str, ...], ...] = field(default=(), repr=False)


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    """A sentence of the summary, its claims, and those the sources do not back."""

    sentence: str
    claims: tuple[Claim, ...]
    unfound: tuple[Claim, ...]

    @property
    def kept(self) -> bool:
        return not self.unfound


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """The outcome for one summary: the text to publish (its sentences whose claims were all
    found), the verdict on each sentence, and counts for the summary's record and the logs."""

    text: str
    sentences: tuple[SentenceVerdict, ...]
    claims: int
    found: int
    removed: int

    @property
    def unfound(self) -> tuple[Claim, ...]:
        return tuple(c for v in self.sentences for c in v.unfound)

    @property
    def kept_sentences(self) -> tuple[str, ...]:
        return tuple(v.sentence for v in self.sentences if v.kept)

    def describe(self, limit: int = 5) -> str:
        """One line for a log or a fallback reason: what was not found, what was removed."""
        line = (
            f"{self.found} of {self.claims} claims found in the sources; "
            f"{self.removed} of {len(self.sentences)} sentences removed"
        )
        missing = self.unfound
        if missing:
            shown = ", ".join(f"{c.kind} “{c.text}”" for c in missing[:limit])
            more = f" and {len(missing) - limit} more" if len(missing) > limit else ""
            line += f" (not found: {shown}{more})"
        return line


# -- numbers ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![^\W_])\d+(?:[.,']\d+)*")
_ORDINAL = re.compile(r"(?:st|nd|rd|th)(?![^\W_])", re.IGNORECASE)
_GLUED_SCALE = re.compile(r"(bn|mn|tn|m|b|k)(?![^\W_])", re.IGNORECASE)
_SCALE_WORD = re.compile(
    r" ?("
    + "|".join(sorted((w for w in _SCALES if len(w) > 1), key=len, reverse=True))
    + r")(?:\.|(?![^\W_]))",
    re.IGNORECASE,
)
_PERCENT_AFTER = re.compile(
    r" ?(?:(%)|(percentage[ -]points?|prozentpunkte?|points? de pourcentage|"
    r"puntos? porcentuales|pp(?![^\W_]))|(per[ -]?cent|percent|pct|prozent|pour[ -]?cent|"
    r"por[ -]?ciento|procent|percento)(?![^\W_]))",
    re.IGNORECASE,
)
_CURRENCY_AFTER = re.compile(
    r" ?(?:([€$£¥₹₩₽₺₪])|(?:(?:us|american|canadian|australian|swiss|hong kong|singapore|"
    r"new zealand)[ -])?("
    + "|".join(
        sorted((w for w in _CURRENCIES if w.replace("-", "").isalpha()), key=len, reverse=True)
    )
    + r")(?![^\W_]))",
    re.IGNORECASE,
)
_CURRENCY_BEFORE = re.compile(
    r"(?:(?<![^\W_])(us\$|ca?\$|au?\$|nz\$|hk\$|s\$|r\$|sfr\.?|fr\.|rs\.?|"
    r"usd|eur|gbp|jpy|cny|rmb|inr|cad|aud|nzd|hkd|sgd|chf|sek|nok|dkk|pln|czk|huf|rub)"
    r"|([$€£¥₹₩₽₺₪])) ?$",
    re.IGNORECASE,
)
# Between the two numbers of a range: "10-12%", "2 to 3 billion", "zwischen 5 und 7 Prozent".
_RANGE_GAP = re.compile(r" ?(?:-|–|—|to|and|or|bis|und|oder|à|a|et|y) ?", re.IGNORECASE)


def _parse_number(raw: str) -> frozenset[Decimal]:
    """The values a written number may have (several when its separators are ambiguous)."""
    if "'" in raw:  # Swiss, or a grouping space: "1'200", "1 200"
        parts = raw.split("'")
        if not all(len(p) == 3 for p in parts[1:]):
            return frozenset(v for p in parts for v in _parse_number(p))
        raw = "".join(parts)
    commas, points = raw.count(","), raw.count(".")
    try:
        if commas and points:
            decimal_sep = "," if raw.rfind(",") > raw.rfind(".") else "."
            thousands = "." if decimal_sep == "," else ","
            whole, _, frac = raw.rpartition(decimal_sep)
            return frozenset({Decimal(f"{whole.replace(thousands, '')}.{frac}")})
        sep = "," if commas else "." if points else ""
        if not sep:
            return frozenset({Decimal(raw)})
        parts = raw.split(sep)
        if len(parts) > 2:
            if all(len(p) == 3 for p in parts[1:]) and 1 <= len(parts[0]) <= 3:
                return frozenset({Decimal("".join(parts))})
            return frozenset(Decimal(p) for p in parts)  # a version or a list, not one value
        whole, frac = parts
        as_decimal = Decimal(f"{whole}.{frac}")
        if len(frac) == 3 and 1 <= len(whole) <= 3 and whole != "0":
            return frozenset({as_decimal, Decimal(whole + frac)})  # 1,200: 1200 or 1.2
        return frozenset({as_decimal})
    except InvalidOperation:
        return frozenset()


@dataclass(slots=True)
class _Number:
    start: int
    end: int
    values: frozenset[Decimal]
    unit: str | None
    power: int  # the power of ten of its scale word; 0 when none
    glued: bool  # the scale was a letter glued to the digits: "48m" (also 48 plain)


# Numbers written as words, per language, by text2num's `find_numbers` over the sentence's own
# tokens, so that a figure keeps its place in the text (see the module docstring for why).
WORD_LANGUAGES = frozenset({"en", "fr", "es", "pt", "de", "nl", "da", "it"})
_WORD_TOKEN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]")
# Alone, these name no figure: a vague plural ("hundreds", "Tausende", "miles de personas").
_VAGUE = _folded(
    """
    tens dozens hundreds thousands millions billions trillions
    decenas docenas cientos centenares miles millares millones
    dezenas centenas centenas milhares milhoes
    dizaines douzaines centaines milliers milliards
    dutzende hunderte tausende zehntausende hunderttausende millionen milliarden
    decine centinaia migliaia milioni miliardi
    tientallen honderden duizenden miljoenen
    """.split()
)
# "a dozen" is 12 (text2num does not read it); "dozens" and "half a dozen" are not figures.
_DOZEN = re.compile(
    r"(?<![^\W_])(?<!half )(?:a|one|une|una|un|ein|einem|einer|eine|een|et) "
    r"(dozen|douzaine|docena|dutzend|dozzina|dutzend|dusin|duzia)(?![^\W_])",
    re.IGNORECASE,
)
_BESIDE_DIGITS = re.compile(r"[.,']?\d")
# Thousands grouped by an ordinary space ("200 000 manifestants"): 1 to 3 digits, then groups of
# exactly three; read as if grouped by "'" (positions kept).
_SPACE_GROUPED = re.compile(r"(?<![\d.,'])\d{1,3}(?: \d{3})+(?!\d|[.,]\d)")
# Spanish thousands of millions: "mil 500 millones", "2 mil 500 millones" (2,500 million).
_MIL_MILLONES = re.compile(
    r"(?<![^\W_])(?<![\d.,] )(?:(\d{1,3}) )?mil (\d{1,3}) (?:millones|millon|millón)(?![^\W_])",
    re.IGNORECASE,
)


class _Token:
    """A word as text2num's `find_numbers` takes it."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


def _spelled(text: str, language: str) -> list[tuple[int, int, Decimal]]:
    """Numbers written as words in `text` as (start, end, value), in one of WORD_LANGUAGES:
    "three", "Trente-huit", "zweihunderttausend", "a dozen". Not read: ordinals ("third" is
    also a fraction), zero, one and two alone (articles and "one of", "les deux"), vague
    plurals ("hundreds", "dozens"), and a scale word next to digits ("500 millones" is the
    digits' own)."""
    found = [(m.start(), m.end(), Decimal(12)) for m in _DOZEN.finditer(text)]
    spans = list(_WORD_TOKEN.finditer(text))
    tokens = [_Token(m.group(0)) for m in spans]
    for o in find_numbers(tokens, language):
        if o.is_ordinal:
            continue
        start, end = spans[o.start].start(), spans[o.end - 1].end()
        single = o.end - o.start == 1
        value = Decimal(o.text) if o.text.isdigit() else None
        if value is None or (single and (value < 3 or _fold(text[start:end]) in _VAGUE)):
            continue
        before = text[max(0, start - 2) : start]
        if _BESIDE_DIGITS.match(text, end + (text[end : end + 1] == " ")) or (
            before[-1:].isdigit() or (before[:1].isdigit() and before[1:] == " ")
        ):
            continue
        found.append((start, end, value))
    return found


def _scan_numbers(
    text: str, *, language: str | None = None, written: str | None = None
) -> list[_Number]:
    """Figures in `text`; in one of WORD_LANGUAGES also those written as words ("four percent",
    "seis muertos"), read from `written` (the text with its accents, when its length is that
    of `text`: German "zwölf" is not "zwolf" to text2num)."""
    found: list[_Number] = []
    text = _SPACE_GROUPED.sub(lambda m: m.group(0).replace(" ", "'"), text)
    matches: list[tuple[int, int, frozenset[Decimal], int]] = []
    for m in _MIL_MILLONES.finditer(text):  # "mil 500 millones": 1,500 million
        value = (int(m.group(1) or 1) * 1000 + int(m.group(2))) * 10**6
        matches.append((m.start(), m.end(), frozenset({Decimal(value)}), 6))
    if matches:
        text = _masked(text, ((start, end) for start, end, _, _ in matches))
    matches += [(m.start(), m.end(), _parse_number(m.group(0)), 0) for m in _NUMBER.finditer(text)]
    if language is not None and language in WORD_LANGUAGES:
        words = written if written is not None and len(written) == len(text) else text
        for start, end, spelled in _spelled(words, language):
            if _MASK not in text[start:end]:
                matches.append((start, end, frozenset({spelled}), 0))
    matches.sort(key=lambda m: m[0])
    for start, end, values, power in matches:
        if not values:
            continue
        glued, scaled_already = False, power > 0
        if power:
            pass  # scaled already: "mil 500 millones"
        elif g := _GLUED_SCALE.match(text, end):
            power, glued, end = _SCALES[g.group(1).lower()], True, g.end()
        elif w := _SCALE_WORD.match(text, end):
            power, end = _SCALES[w.group(1).lower()], w.end()
        elif o := _ORDINAL.match(text, end):
            end = o.end()
        elif end < len(text) and (text[end].isalpha() or text[end] == "_"):
            continue  # "5G", "3D": part of a name, not a figure
        if power and not scaled_already:
            scaled = frozenset(v.scaleb(power) for v in values)
            values = values | scaled if glued else scaled
        unit: str | None = None
        if p := _PERCENT_AFTER.match(text, end):
            unit, end = (POINTS if p.group(2) else PERCENT), p.end()
        elif c := _CURRENCY_AFTER.match(text, end):
            unit, end = _CURRENCIES[(c.group(1) or c.group(2)).lower()], c.end()
        if unit is None and (b := _CURRENCY_BEFORE.search(text, max(0, start - 8), start)):
            unit, start = _CURRENCIES[(b.group(1) or b.group(2)).lower().rstrip(".")], b.start()
        found.append(_Number(start, end, values, unit, power, glued))
    # A range takes the unit and the scale of its second number.
    for first, second in itertools.pairwise(found):
        if first.unit not in (None, second.unit) or (first.power and second.power):
            continue  # "7.1% to €210 million" is no range
        if not _RANGE_GAP.fullmatch(text[first.end : second.start]):
            continue
        first.unit = second.unit
        if second.power and not first.power:
            scaled = frozenset(v.scaleb(second.power) for v in first.values)
            first.values = first.values | scaled if second.glued else scaled
            first.power, first.glued = second.power, second.glued
    return found


# -- dates -----------------------------------------------------------------------------------

_MONTH_WORD = r"([^\W\d_]{3,10})\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|\.)?"
_YEAR = r"(\d{4})(?!\d)"
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\d.,'])(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"), "ymd"),
    (re.compile(r"(?<![\d.,'])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?![\d])"), "dmy"),
    (re.compile(r"(?<![\d/.,'])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\d])"), "either"),
    (re.compile(rf"(?<![\d.,']){_DAY} (?:of |de )?{_MONTH_WORD}(?:,? (?:de )?{_YEAR})?"), "dm"),
    (
        re.compile(
            rf"(?<![^\W\d_]){_MONTH_WORD} (\d{{1,2}})(?:st|nd|rd|th)?(?!\d|[.,']\d)"
            rf"(?:,? {_YEAR})?"
        ),
        "md",
    ),
    (re.compile(rf"(?<![^\W\d_]){_MONTH_WORD} {_YEAR}"), "my"),
)
_DIGIT = re.compile(r"\d")
_CALENDAR_WORD = re.compile(
    r"(?<![^\W_])("
    + "|".join(sorted([*_MONTHS, *_WEEKDAYS], key=len, reverse=True))
    + r")(?:'s)?(?![^\W_])",
    re.IGNORECASE,
)


def _month(word: str, *, bare: bool) -> int | None:
    key = _fold(word)
    if bare and key in _MONTH_ONLY_WITH_NUMBERS:
        return None
    return _MONTHS.get(key)


def _year(raw: str) -> int:
    y = int(raw)
    return y + (2000 if y < 70 else 1900) if len(raw) == 2 else y


def _date_key(y: int | None, m: int | None, d: int | None) -> DateKey | None:
    """The key of a date, None when it cannot be one (a 13th month, a 31 February)."""
    if (m is not None and not 1 <= m <= 12) or (d is not None and not 1 <= d <= 31):
        return None
    if y is not None and not 1000 <= y <= 2999:
        return None
    weekday = None
    if y is not None and m is not None and d is not None:
        try:
            weekday = datetime.date(y, m, d).weekday()
        except ValueError:
            return None
    return (y, m, d, weekday)


def _scan_dates(text: str, first_word_end: int) -> list[tuple[int, int, frozenset[DateKey]]]:
    """Dates as (start, end, candidate keys), longer forms first, none overlapping."""
    taken = bytearray(len(text))  # 1 where a date was found
    out: list[tuple[int, int, frozenset[DateKey]]] = []

    def free(a: int, b: int) -> bool:
        return 1 not in taken[a:b]

    def take(a: int, b: int, keys: frozenset[DateKey]) -> None:
        taken[a:b] = b"\x01" * (b - a)
        out.append((a, b, keys))

    calendar = list(_CALENDAR_WORD.finditer(text))
    digits = _DIGIT.search(text) is not None
    for pattern, form in _DATE_PATTERNS if digits else ():
        if form in ("dm", "md", "my") and not calendar:
            continue
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            g = m.groups()
            parts: list[tuple[int | None, int | None, int | None]] = []
            if form == "ymd":
                parts.append((int(g[0]), int(g[1]), int(g[2])))
            elif form == "dmy":
                parts.append((_year(g[2]), int(g[1]), int(g[0])))
            elif form == "either":
                y = _year(g[2])
                parts += [(y, int(g[1]), int(g[0])), (y, int(g[0]), int(g[1]))]
            else:
                word = g[1] if form == "dm" else g[0]
                if form != "dm" and not word[0].isupper():
                    continue  # "they march 5 miles"; French and Spanish put the day first
                month = _month(word, bare=False)
                if month is None:
                    continue
                if form == "dm":
                    day, year = int(g[0]), g[2]
                elif form == "md":
                    day, year = int(g[1]), g[2]
                else:
                    day, year = None, g[1]
                parts.append((_year(year) if year else None, month, day))
            keys = frozenset(k for k in (_date_key(*p) for p in parts) if k is not None)
            if keys:
                take(m.start(), m.end(), keys)
    # A month or a weekday named alone, not as the first word ("May I ...", "March on").
    for m in calendar:
        word = m.group(1)
        if not word[0].isupper() or m.start() < first_word_end or not free(m.start(), m.end()):
            continue
        key = _fold(word)
        if key in _WEEKDAYS:
            take(m.start(), m.end(), frozenset({(None, None, None, _WEEKDAYS[key])}))
        elif (month := _month(word, bare=True)) is not None:
            take(m.start(), m.end(), frozenset({(None, month, None, None)}))
    return out


# -- quotes ----------------------------------------------------------------------------------

# Quote marks of the scripts a digest meets, as `_prepare` leaves them (NFKD writes the double
# prime ″ as two primes, the full-width ＂ and ｢｣ as "" and 「」). A closing mark may double as
# an opening one (Swedish ”…”, German »…«, ›…‹); ASCII single quotes are apostrophes.
_QUOTES = re.compile(
    r"“([^“”]{1,800})[”“]"
    r"|„([^„“”]{1,800})[“”]"
    r"|[‟⹂]([^‟⹂“”]{1,800})[”“]"
    r"|”([^“”]{1,800})”"
    r"|«([^«»]{1,800})»"
    r"|»([^«»]{1,800})«"
    r"|‹([^‹›]{1,800})›"
    r"|›([^‹›]{1,800})‹"
    r'|"([^"]{1,800})"'
    r"|′′([^′]{1,800})′′"
    r"|〝([^〝〞〟]{1,800})[〞〟]"
    r"|❝([^❝❞]{1,800})❞"
    r"|``([^`]{1,800}?)''"
    r"|(?<![^\W_])[‘‛]([^‘‛’']{1,800})['’](?![^\W_])"
    r"|‚([^‚‘’]{1,800})[‘’]"
    r"|「([^「」]{1,800})」"
    r"|『([^『』]{1,800})』"
    r"|《([^《》]{1,800})》"
    r"|〈([^〈〉]{1,800})〉"
)
_ELLIPSIS = re.compile(r"\[ ?\.\.\. ?\]|\.\.\.")


def _scan_quotes(text: str) -> list[tuple[int, int, str, tuple[tuple[str, ...], ...]]]:
    out = []
    for m in _QUOTES.finditer(text):
        inner = next(g for g in m.groups() if g is not None)
        parts = tuple(w for w in (tuple(_words(p)) for p in _ELLIPSIS.split(inner)) if w)
        if parts:
            out.append((m.start(), m.end(), inner.strip(), parts))
    return out


# -- names -----------------------------------------------------------------------------------

_WORD_SPAN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_RUN_GAP = re.compile(r" ?-+ ?| | ?& ?")
_INITIAL_GAP = re.compile(r"\. ?")
_CLAUSE_START = re.compile(r"(?:^|[:(\[])[^\w\x00]*$")


def _capitalized(word: str) -> bool:
    first = word[0]
    if first.isupper():
        return True
    # "iPhone", "eBay": a lower-case letter, then a capital.
    return first.isalpha() and any(c.isupper() for c in word[1:3])


def _acronym(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _not_a_name(word: str) -> bool:
    key = _key(word)
    if _acronym(word) and key not in TITLES:
        return False
    return (
        len(key) < 2
        or key in FUNCTION_WORDS
        or key in TITLES
        or key in NATIONALITIES
        or key in _MONTHS
        or key in _WEEKDAYS
    )


def _name_words(written: str) -> tuple[str, ...]:
    """The words of a name to look up: folded, no possessive, no connectors or initials."""
    keys = (_name_key(w) for w in _words(written) if w not in CONNECTORS)
    return tuple(k for k in keys if len(k) > 1)


def _scan_names(
    text: str,
    known: frozenset[str],
    lowercase: frozenset[str],
    single_words: bool,
    caseless: bool = False,
) -> list[tuple[str, tuple[str, ...]]]:
    """Runs of capitalized words as (text as written, words to find). A name written in lower
    case counts too where case says nothing: after an honorific ("mr pryce"), and in a
    `caseless` sentence (one written without a capital letter), any word that the sources do
    not write in lower case."""
    spans = [(m.start(), m.end(), m.group(0)) for m in _WORD_SPAN.finditer(text)]
    names: list[tuple[str, tuple[str, ...]]] = []
    run: list[int] = []  # indexes into spans
    lower_names = 0  # how many more lower-case words may be a name (after an honorific)

    def close() -> None:
        while run and _fold(spans[run[-1]][2]) in CONNECTORS:
            run.pop()
        if run:
            written = text[spans[run[0]][0] : spans[run[-1]][1]]
            words = _name_words(written)
            if words and (single_words or len(words) > 1):
                names.append((written, words))
        run.clear()

    def joins(i: int) -> bool:
        """Whether span i continues the run (only spaces, a hyphen or & in between)."""
        _, prev_end, prev = spans[run[-1]]
        gap = text[prev_end : spans[i][0]]
        if _RUN_GAP.fullmatch(gap):
            return True
        return len(prev) == 1 and prev.isupper() and bool(_INITIAL_GAP.fullmatch(gap))

    for i, (start, end, word) in enumerate(spans):
        if run and not joins(i):
            close()
        if run and _fold(word) in CONNECTORS:
            run.append(i)
            continue
        lower_name = word.islower() and (
            lower_names > 0 or (caseless and _key(word) not in lowercase)
        )
        named = (_capitalized(word) or lower_name) and not _not_a_name(word)
        if _key(word) in HONORIFICS:
            lower_names = _MAX_LOWER_NAME
        else:
            lower_names = lower_names - 1 if named and lower_name else 0
        if not named:
            if run and len(word) == 1 and word.isupper():
                run.append(i)  # an initial: "George W. Bush"
            else:
                close()
            continue
        if not run and _CLAUSE_START.search(text, spans[i - 1][1] if i else 0, start):
            # The first word of a sentence or clause is a name when the sources know it as
            # one, or when it opens a run of names ("Jean Dupont said") and the sources never
            # write it in lower case.
            key = _key(word)
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            opens_run = (
                nxt is not None
                and _capitalized(nxt[2])
                and not _not_a_name(nxt[2])
                and bool(_RUN_GAP.fullmatch(text[end : nxt[0]]))
                and key not in lowercase
            )
            if key not in known and not opens_run:
                continue
        run.append(i)
    close()
    return names


# -- one sentence ----------------------------------------------------------------------------


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with the spans taken by one kind of claim overwritten, in one pass."""
    pieces: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:
            start = at
        pieces += [text[at:start], _MASK * (end - start)]
        at = max(at, end)
    return "".join([*pieces, text[at:]]) if pieces else text


def _claims(
    sentence: str,
    *,
    known: frozenset[str] = frozenset(),
    lowercase: frozenset[str] = frozenset(),
    names: bool = True,
    single_names: bool = True,
    language: str | None = None,
    whole: bool = False,
) -> list[Claim]:
    """The claims of one sentence: quotes first, then dates, figures and names in what is left
    (a claim's text is masked once taken, so "12 March 2025" is one date, not three numbers).
    In a `whole` sentence (not a fragment such as a quote) written without a capital, case
    tells nothing: its lower-case words are read as names too (see _scan_names). Numbers
    written as words are read in `language` (one of WORD_LANGUAGES; None: not read)."""
    written = " ".join(sentence.split())
    text = _prepare(written)
    mask = _masked
    claims: list[Claim] = []
    masked = mask(text, (m.span() for m in _CITATION.finditer(text)))
    quotes = _scan_quotes(masked)
    for _, _, inner, parts in quotes:
        claims.append(Claim("quote", inner, words=parts))
    masked = mask(masked, ((start, end) for start, end, _, _ in quotes))
    first = _WORD_SPAN.search(masked)
    dates = _scan_dates(masked, first.end() if first else 0)
    for start, end, keys in dates:
        claims.append(Claim("date", text[start:end].strip(" .,"), dates=keys))
    masked = mask(masked, ((start, end) for start, end, _ in dates))
    numbers = _scan_numbers(masked, language=language, written=written.replace(_HIDDEN, "'"))
    for n in numbers:
        kind: ClaimKind = (
            "percent" if n.unit in (PERCENT, POINTS) else "amount" if n.unit else "number"
        )
        claims.append(Claim(kind, text[n.start : n.end].strip(), values=n.values, unit=n.unit))
    masked = mask(masked, ((n.start, n.end) for n in numbers))
    if names:
        caseless = whole and not any(c.isupper() for c in masked)
        for written, words in _scan_names(masked, known, lowercase, single_names, caseless):
            claims.append(Claim("name", written, words=(words,)))
    unique: dict[tuple[object, ...], Claim] = {}
    for c in claims:
        unique.setdefault((c.kind, c.values, c.unit, c.dates, c.words), c)
    return list(unique.values())


@dataclass(frozen=True, slots=True)
class WrittenNumber:
    """A figure as the claim check reads it, at its place in the sentence it was read from:
    `sentence[start:end]` is the figure with its unit and scale ("$48 million", "7,1 Prozent")."""

    start: int
    end: int
    values: frozenset[Decimal]  # several when the writing is ambiguous ("1,200", "48m")
    unit: str | None  # a currency, PERCENT or POINTS; None for a plain number
    scaled: bool  # a scale word or letter multiplied it ("3.2 million", "48m")


def numbers_in(sentence: str, language: str | None = None) -> list[WrittenNumber]:
    """The figures of one sentence as written, read as claims are (dates taken out first, so
    that a day or a year of a date is no figure), numbers written as words in `language` (by
    default the sentence's own, see `number_language`); positions are in `sentence` itself,
    not in its normal form, for `digest.facts.figures`."""
    text = _HIDE.sub("'", sentence)  # "1 200" grouped by a narrow space is one number
    first = _WORD_SPAN.search(text)
    dates = _scan_dates(text, first.end() if first else 0)
    masked = _masked(text, ((start, end) for start, end, _ in dates))
    lang = language if language is not None else number_language(sentence)
    return [
        WrittenNumber(n.start, n.end, n.values, n.unit, n.power > 0)
        for n in _scan_numbers(masked, language=lang)
    ]


_LANGUAGE_SAMPLE = 3000  # characters a text's language is told from


def text_language(text: str) -> str | None:
    """The language of `text` (its first `_LANGUAGE_SAMPLE` characters): from its function
    words (`digest.stories.tokens.language`), else py3langid (`detect_language`); None when
    neither can tell (a fragment: "30 dead.")."""
    sample = text[:_LANGUAGE_SAMPLE]
    return tokens.language(sample) or detect_language(sample) or None


def number_language(text: str) -> str | None:
    """The language whose number words `text` is read with (`text_language`); None when it is
    not one of WORD_LANGUAGES (then number words are not read: never another language's)."""
    lang = text_language(text)
    return lang if lang in WORD_LANGUAGES else None


def sentences_of(text: str) -> list[str]:
    """The sentences of `text` as the claim check splits them, as written."""
    return [written for _, written in _sentences(text)]


def compatible_units(a: str | None, b: str | None) -> bool:
    """Whether two figures' units can name the same quantity (see `_compatible`)."""
    return _compatible(a, b) or _compatible(b, a)


def claims_of(text: str) -> list[list[Claim]]:
    """The claims of each sentence of `text`, with no sources to tell a name at the start of a
    sentence (for inspection and tests)."""
    lang = number_language(text)
    return [_claims(s, language=lang) for s, _ in _sentences(text)]


# -- the sources -----------------------------------------------------------------------------


def _compatible(claimed: str | None, seen: str | None) -> bool:
    """Whether a value written with unit `seen` in the sources backs one claimed with `claimed`."""
    if claimed is None or claimed == seen:
        return True
    if claimed in (PERCENT, POINTS) or seen in (PERCENT, POINTS):
        return False
    if seen is None:
        return True  # "$48 million" in the summary, "48m" in the article
    for generic, family in (("$", _DOLLARS), ("¥", _YEN_YUAN)):
        if (claimed == generic and seen in family) or (seen == generic and claimed in family):
            return True
    return False


class SourceIndex:
    """The sources in the form claims are looked up in; build it once to check several
    summaries (a summary and its brief) against the same texts."""

    def __init__(self, sources: Iterable[str]) -> None:
        self.numbers: dict[Decimal, set[str | None]] = {}
        self.dates: set[DateKey] = set()
        self.weekdays: set[int] = set()
        self._texts: list[str] = []  # each source's words, space-separated, spaces around
        self._positions: list[dict[str, list[int]]] = []
        self._words: list[list[str]] = []  # each source's words
        self._negation_counts: dict[int, list[int]] = {}
        known: set[str] = set()
        lowercase: set[str] = set()
        inside = capitals = 0
        for source in sources:
            words: list[str] = []
            lang = number_language(source)
            for sentence, _ in _sentences(source):
                prepared = _prepare(" ".join(sentence.split()))
                for j, m in enumerate(_WORD_SPAN.finditer(prepared)):
                    word = m.group(0)
                    if not word[0].isalpha():
                        continue
                    key = _key(word)
                    if word.islower():
                        lowercase.add(key)
                    elif j > 0 and _capitalized(word):
                        known.add(key)
                    if j > 0:
                        inside += 1
                        capitals += word[0].isupper()
                sentence_words = _words(prepared)
                for claim in _claims(sentence, names=False, language=lang):
                    self._add(claim)
                words.extend(sentence_words)
            self._texts.append(" " + " ".join(words) + " ")
            self._words.append(words)
            positions: dict[str, list[int]] = {}
            for i, w in enumerate(words):
                key = _name_key(w)
                positions.setdefault(key, []).append(i)
                if key.endswith("s") and len(key) > 3:  # genitive: "Merkels" is Merkel's
                    positions.setdefault(key[:-1], []).append(i)
            self._positions.append(positions)
        self.known_names = frozenset(known)
        self.lowercase = frozenset(lowercase - known)
        # German capitalizes every noun: there a single capitalized word says little.
        self.capitalizes_nouns = inside > 50 and capitals / inside > _CAPITALIZED_NOUNS

    def _add(self, claim: Claim) -> None:
        for v in claim.values:
            self.numbers.setdefault(v, set()).add(claim.unit)
        for d in claim.dates:
            self.dates.add(d)
            y, m, day, weekday = d
            if weekday is not None:
                self.weekdays.add(weekday)
            if y is not None:  # "in 2025" is backed by "12 March 2025"
                self.numbers.setdefault(Decimal(y), set()).add(None)
            if day is not None and m is not None:
                self.numbers.setdefault(Decimal(day), set()).add(None)

    # -- lookups -----------------------------------------------------------------------------

    def _has_number(self, claim: Claim) -> bool:
        return any(
            _compatible(claim.unit, seen) for v in claim.values for seen in self.numbers.get(v, ())
        )

    def _has_date(self, claim: Claim) -> bool:
        for y, m, d, weekday in claim.dates:
            if m is None and d is None:
                if weekday in self.weekdays:
                    return True
                continue
            for sy, sm, sd, _ in self.dates:
                if sm is None or sm != m or (d is not None and sd != d):
                    continue
                if y is not None and sy != y and not (sy is None and Decimal(y) in self.numbers):
                    continue
                return True
        return False

    def _has_phrase(self, words: Sequence[str]) -> bool:
        needle = " " + " ".join(words) + " "
        return any(needle in text for text in self._texts)

    def _has_quote(self, parts: tuple[tuple[str, ...], ...]) -> bool:
        """Whether one source has the parts of a quote in order, with no negation in what an
        ellipsis leaves out ("We will … raise prices" is not "We will not raise prices")."""
        if len(parts) == 1:
            return self._has_phrase(parts[0])
        for i in range(len(self._words)):
            negations = self._negations(i)
            ends = [p + len(parts[0]) for p in self._occurrences(i, parts[0])]
            for part in parts[1:]:
                reached: list[int] = []
                latest, j = -1, 0
                for p in self._occurrences(i, part):
                    while j < len(ends) and ends[j] <= p:
                        latest, j = ends[j], j + 1
                    if latest >= 0 and negations[p] == negations[latest]:
                        reached.append(p + len(part))
                ends = reached
                if not ends:
                    break
            if ends:
                return True
        return False

    def _occurrences(self, i: int, phrase: Sequence[str]) -> list[int]:
        """Where `phrase` starts in source i, in word positions, in order."""
        words = self._words[i]
        n, wanted = len(phrase), list(phrase)
        return [
            p
            for p in self._positions[i].get(_name_key(phrase[0]), ())
            if words[p : p + n] == wanted
        ]

    def _negations(self, i: int) -> list[int]:
        """For source i, how many negations precede each word position (and the end)."""
        if i not in self._negation_counts:
            counts = [0]
            for w in self._words[i]:
                counts.append(counts[-1] + _negation(w))
            self._negation_counts[i] = counts
        return self._negation_counts[i]

    def _has_name(self, words: tuple[str, ...]) -> bool:
        group = _ALIAS_OF.get(" ".join(words))
        if group and any(self._has_phrase(alias.split()) for alias in group):
            return True
        for positions in self._positions:
            if self.capitalizes_nouns:  # German word order moves names about: any order
                if all(any(self._lookup(positions, w)) for w in words):
                    return True
                continue
            for found in self._lookup(positions, words[0]):
                for start in found:
                    at = start
                    for w in words[1:]:
                        nxt = self._next(positions, w, at)
                        if nxt is None:
                            break
                        at = nxt
                    else:
                        return True
        return False

    @staticmethod
    def _lookup(positions: dict[str, list[int]], word: str) -> tuple[list[int], ...]:
        """The positions of a word, and of the word without a genitive `s` (each in order)."""
        found = positions.get(word, [])
        if word.endswith("s") and len(word) > 3:
            return found, positions.get(word[:-1], [])
        return (found,)

    @classmethod
    def _next(cls, positions: dict[str, list[int]], word: str, at: int) -> int | None:
        """The first position of `word` after `at`, at most _NAME_GAP other words between."""
        candidates = []
        for found in cls._lookup(positions, word):
            k = bisect.bisect_right(found, at)
            if k < len(found) and found[k] <= at + 1 + _NAME_GAP:
                candidates.append(found[k])
        return min(candidates, default=None)

    def found(self, claim: Claim) -> bool:
        """Whether the sources back `claim` (the rules are in the module docstring)."""
        if claim.kind in ("number", "amount", "percent"):
            return self._has_number(claim)
        if claim.kind == "date":
            return self._has_date(claim)
        if claim.kind == "quote":
            return self._has_quote(claim.words)
        return all(self._has_name(words) for words in claim.words)

    def claims(
        self, sentence: str, *, whole: bool = False, language: str | None = None
    ) -> list[Claim]:
        """The claims of one sentence of a summary (a `whole` one, not a fragment such as a
        quote's text), names told apart with what the sources know, numbers written as words
        read in `language` (see `number_language`)."""
        return _claims(
            sentence,
            language=language,
            known=self.known_names,
            lowercase=self.lowercase,
            single_names=not self.capitalizes_nouns,
            whole=whole,
        )

    def check(self, summary: str) -> ClaimCheck:
        """`summary` without the sentences that make a claim the sources do not back."""
        verdicts: list[SentenceVerdict] = []
        paragraphs: list[str] = []
        lang = number_language(summary)
        for paragraph in re.split(r"\n\s*\n", summary):
            kept: list[str] = []
            for hidden, sentence in _sentences(paragraph):
                claims = self.claims(hidden, whole=True, language=lang)
                unfound = tuple(c for c in claims if not self.found(c))
                verdicts.append(SentenceVerdict(sentence, tuple(claims), unfound))
                if not unfound:
                    kept.append(sentence)
            if kept:
                paragraphs.append(join_sentences(kept))
        total = sum(len(v.claims) for v in verdicts)
        missing = sum(len(v.unfound) for v in verdicts)
        return ClaimCheck(
            text="\n\n".join(paragraphs),
            sentences=tuple(verdicts),
            claims=total,
            found=total - missing,
            removed=sum(1 for v in verdicts if not v.kept),
        )


def check_summary(summary_text: str, sources: list[str]) -> ClaimCheck:
    """Check every claim of a summary against the texts it was written from: the summary
    without its sentences whose claims were not all found, with the verdicts and counts."""
    return SourceIndex(sources).check(summary_text)

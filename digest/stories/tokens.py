"""Words of a headline as clustering compares them: normalised, without stopwords.

Language-neutral on purpose (headlines arrive in several languages, mostly English and German):
Unicode case folding with accents stripped ("Stärke" -> "starke"), stopwords of both languages,
of newsroom boilerplate and of the calendar dropped, numbers kept whole ("7,1" = "7.1"). From
the words, clustering takes character n-grams (its similarity) and stems (blocking, identical
titles): one inflectional suffix stripped, the rest cut to `STEM_LENGTH` characters, a crude
stemmer that needs no tables and is good enough to find candidate pairs.

`language` guesses which language a report is written in from its function words, so that
clustering knows when two reports cannot share words at all (see `digest.stories.cluster`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Longer words are cut to this many characters: "presidential" and "president" meet, so do
# "earthquakes" and "earthquake"; "government" and "governor" stay apart.
STEM_LENGTH = 7
_MIN_STEM = 3
# One of these is removed from the end of a word (longest first) when at least _MIN_STEM
# characters remain: English plurals and verb forms, German plural and case endings.
_SUFFIXES = tuple(
    sorted(
        ["ungen", "ing", "ied", "ies", "ed", "es", "en", "er", "ern", "em", "e", "s"],
        key=len,
        reverse=True,
    )
)

_ENGLISH = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves says said say amid via per vs mr mrs ms dr
one two three first last year years day days week weeks today yesterday tomorrow
new news latest update updates live breaking report reports video watch photos photo opinion
analysis explainer exclusive know need things thing people get gets
"""
_GERMAN = """
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes auch
auf aus bei beim bin bis bist da damit dann das dass daß dem den denn der des dessen die dies
diese diesem diesen dieser dieses doch dort du durch ein eine einem einen einer eines einig einige
er es etwas euch euer für gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich ihm
ihn ihnen ihr ihre ihrem ihren ihrer im in ins ist jede jedem jeden jeder jedes jetzt kann kein
keine keinem keinen können könnte machen man manche mehr mein meine mit muss musste nach nicht
nichts noch nun nur ob oder ohne seid sein seine seinem seinen seiner sich sie sind so solche soll
sollte sondern sonst über um und uns unser unter viel vom von vor war waren warum was weil weiter
welche wenn werden wer wie wieder will wir wird wo wollen würde zu zum zur zwar zwischen
neu neue neuer neues neuen heute gestern morgen jahr jahre jahren tag tage woche
bericht berichte liveblog ticker nachrichten meldung aktuell eilmeldung
"""
# Days and months name when, not what: every story of a Thursday would share "thursday".
_CALENDAR = """
monday tuesday wednesday thursday friday saturday sunday january february march april may june
july august september october november december montag dienstag mittwoch donnerstag freitag
samstag sonntag januar februar märz mai juni juli oktober dezember
"""

# Letters and digits; an apostrophe inside a word ("bank's", "here's") is kept so the possessive
# can be dropped below.
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+(?:['’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")


def fold(text: str) -> str:
    """Compatibility-normalise, case-fold and strip accents: "Élysée" -> "elysee"."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# Folded like the text they are compared with ("für" -> "fur").
STOPWORDS = frozenset(fold(w) for w in (_ENGLISH + _GERMAN + _CALENDAR).split())


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Strip one inflectional suffix, then truncate to STEM_LENGTH characters (cached: a day's
    headlines repeat a few thousand words)."""
    if not word.isdigit():
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
                word = word[: -len(suffix)]
                break
    return word[:STEM_LENGTH]


def words(text: str) -> list[str]:
    """The content words of `text`, folded, in order: stopwords and one-letter words dropped.

    Numbers are kept whole ("7.1", "0.25", "2025"): in news they often name the event.
    """
    out: list[str] = []
    for match in _WORD.finditer(fold(text)):
        word = match.group()
        if word[0].isdigit():
            # "7,1" (German) and "7.1" are one number; so are "80,000" and "80.000".
            out.append(word.replace(",", "."))
            continue
        word = _POSSESSIVE.sub("", word).replace("'", "").replace("’", "")
        if word in STOPWORDS or len(word) < 2:
            continue
        out.append(word)
    return out


def every_word(text: str) -> list[str]:
    """Every word of `text`, folded as `words` folds them, in order, stopwords and one-letter
    words included: what a reader's keyword rule is matched on (`digest.stories.rules`)."""
    out: list[str] = []
    for match in _WORD.finditer(fold(text)):
        word = match.group()
        if word[0].isdigit():
            out.append(word.replace(",", "."))
            continue
        word = _POSSESSIVE.sub("", word).replace("'", "").replace("’", "")
        if word:
            out.append(word)
    return out


def terms(text: str) -> list[str]:
    """The stems of the content words of `text`, in order."""
    return [stem(w) for w in words(text)]


def grams(word: str, n: int) -> list[str]:
    """Character n-grams of `word` padded with "_": 3-grams of "quake" are "_qu" ... "ke_"."""
    padded = f"_{word}_"
    if len(padded) <= n:
        return [padded]
    return [padded[i : i + n] for i in range(len(padded) - n + 1)]


# The commonest function words of the languages news comes in, each found in one of them only
# (folded: "für" -> "fur"): "de", "la", "le", "en", "in", "die", "des", "del", "por", "do" and
# the like, function words of two of them, are left out. One stray word ("MIT", "al-Assad")
# does not name a language: see MIN_FUNCTION_WORDS.
_FUNCTION_WORDS = {
    "en": """the of and to for on with is are was at by from after over its has have will that
        this says said into be not but who how what why""",
    "de": """der das und mit fur von vor nach auf bei ist sind wird ein eine einen einem im zum
        zur den dem nicht auch sich uber gegen aus wie bis""",
    "fr": """les du une et est sont pour dans sur avec par au aux qui ne pas apres selon contre
        ses leur cette""",
    "es": """el los las y al como tras segun sobre pero sus muy""",
    "it": """il gli della delle dei degli nel nella sono che di alla alle anche dopo questo""",
    "pt": """os dos em na um uma com nao sao ao pelo pela""",
    "nl": """het een van op met voor niet zijn naar bij ook uit aan wordt heeft""",
}
_LANGUAGE_OF = {w: lang for lang, ws in _FUNCTION_WORDS.items() for w in ws.split()}
# A language is named only on this many distinct function words of its own, and more than any
# other language has: a headline of names and nouns ("Mt. Gox collapse") has none.
MIN_FUNCTION_WORDS = 2


def language(text: str) -> str | None:
    """The language `text` is most likely in ("en", "de", "fr", "es", "it", "pt", "nl"), from
    the function words it uses; None when it has too few to tell."""
    seen: dict[str, set[str]] = {}
    for match in _WORD.finditer(fold(text)):
        lang = _LANGUAGE_OF.get(match.group())
        if lang is not None:
            seen.setdefault(lang, set()).add(match.group())
    ranked = sorted((len(ws), lang) for lang, ws in seen.items())
    if not ranked or ranked[-1][0] < MIN_FUNCTION_WORDS:
        return None
    if len(ranked) > 1 and ranked[-2][0] == ranked[-1][0]:
        return None
    return ranked[-1][1]

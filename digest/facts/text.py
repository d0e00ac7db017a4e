"""Plain-text tools shared by the extractive summarizer and the extractive answer: sentence
splitting, word tokens, stopwords (English and German, with a few French and Spanish words)."""

from __future__ import annotations

import re
from functools import lru_cache

# Abbreviations after which a period does not end a sentence (compared lowercased, without the
# final period). English and German news usage; single letters (initials) are handled apart.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt vs etc e.g i.e al approx dept inc ltd co corp llc plc
    gov govt sen rep gen col lt sgt capt cmdr adm maj pres supt rev hon messrs mme mlle cf viz ca
    u.s u.k u.n e.u u.s.a d.c a.m p.m
    z.b bzw usw ggf evtl vgl d.h u.a o.ä s.o s.u inkl exkl zzgl hr fr frl str tel mio mrd
    bspw sog ehem dt gegr insb jh jhd
    """.split()
)
# Abbreviations only when a number follows: "No. 5", "Jan. 12", "S. 34", "est. 1990".
NUMERIC_ABBREVIATIONS = frozenset(
    """
    no nos nr vol vols pp p s art fig sec ch para op est abs
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)

MONTHS = frozenset(
    """
    january february march april may june july august september october november december
    januar februar märz mai juni juli oktober dezember jänner
    """.split()
)

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can cannot could couldn't did didn't do does doesn't
    doing don't down during each even ever few for from further get gets got had hadn't has hasn't
    have haven't having he he'd he'll he's her here here's hers herself him himself his how how's
    however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like made make
    many may me might more most much must mustn't my myself new no nor not now of off often on once
    one only or other ought our ours ourselves out over own per said same say says she she'd she'll
    she's should shouldn't since so some still such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those though
    through to too two under until up upon us very via was wasn't we we'd we'll we're we've were
    weren't what what's when when's where where's whether which while who who's whom why why's will
    with within without won't would wouldn't year years yet you you'd you'll you're you've your
    yours yourself yourselves mr mrs ms dr according told week weeks day days time three four five
    first last next well back around including across already another among although
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
    auch auf aus bei beim bin bis bist da damit dann das dass dem den denn der des dessen dich die
    dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines
    einig einige er es etwas euch euer eure für gegen gewesen hab habe haben hat hatte hatten hier
    hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in ins ist ja jede jedem jeden
    jeder jedes jener jetzt kann kein keine keinem keinen keiner können könnte machen man manche
    mehr mein meine mich mir mit muss musste nach nicht nichts noch nun nur ob oder ohne schon sehr
    sein seine seinem seinen seiner sich sie sind so solche soll sollte sondern sonst über um und
    uns unser unsere unter vom von vor wann war waren warum was weg weil weiter welche welchem
    welchen welcher wenn wer werde werden wie wieder will wir wird wirst wo wurde wurden zu zum zur
    zwar zwischen sagte sagt laut bereits sowie jahr jahre jahren seit heute gibt
    le la les un une des du de et est en que qui dans pour pas sur au aux avec ce ces son sa ses
    el los las del y es por con para una su al lo como más pero sus
    """.split()
)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_STOPS = "。！？"
_CJK_CLOSING = "\"'”’」』)）"

# A candidate boundary: terminal punctuation, optional closing quotes/brackets, then whitespace
# (or, after CJK full-width punctuation, nothing at all).
_BOUNDARY = re.compile(r"([.!?…]+|[。！？]+)([\"'”’»)\]]*)(\s+|(?<=[。！？])(?=\S))")
_TOKEN_BEFORE = re.compile(r"(\S+)$")
_FIRST_CHARACTER = re.compile("[\"'“‘„«(\\[¿¡\\-–—]*(.)")
_LOOKAHEAD = 40  # characters after a boundary that decide it (the next word: a month?)


def _starts_sentence(line: str, at: int) -> bool:
    """Whether a new sentence starts at `at`: with a capital, a digit or a letter of a script
    without case (after opening quotes, brackets and dashes)."""
    first = _FIRST_CHARACTER.match(line, at)
    return first is not None and first.group(1).isalnum() and not first.group(1).islower()


def _is_abbreviation(before: str, punct: str, closing: str, after: str) -> bool:
    """Whether the period ending `before` belongs to a word rather than ending the sentence."""
    if punct != "." or closing:
        return False
    match = _TOKEN_BEFORE.search(before)
    if not match:
        return False
    token = match.group(1).lstrip("\"'“‘„«([").lower()
    if not token:
        return False
    if token in ABBREVIATIONS:
        return True
    if token in NUMERIC_ABBREVIATIONS and after[:1].isdigit():
        return True
    # Initials: "J. K. Rowling", "George W. Bush" (a single letter before the period).
    if len(token) == 1 and token.isalpha():
        return True
    # Dotted acronyms not in the list: "U.S.A", "e.g", "z.B".
    if "." in token and all(len(part) <= 2 for part in token.split(".") if part):
        return True
    # German ordinals before a month: "am 3. Oktober", "vom 12. März".
    if token.isdigit() and len(token) <= 2:
        next_word = after.split(maxsplit=1)[0].lower().strip(".,") if after.split() else ""
        if next_word in MONTHS:
            return True
    return False


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; line breaks always end one (headings, list items, paragraphs)."""
    sentences: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if not line:
            continue
        start = 0
        for m in _BOUNDARY.finditer(line):
            end = m.end(2)
            if m.end() == len(line):
                continue
            # Only the word before the boundary and the start of what follows are read, never
            # the whole rest of the line: a line of many boundaries is split in linear time.
            rest = line[m.end() : m.end() + _LOOKAHEAD]
            if not _starts_sentence(line, m.end()):
                continue  # "e.g. the", "3.5 million", a lowercase continuation
            word_start = max(start, line.rfind(" ", start, m.start()) + 1)
            if _is_abbreviation(line[word_start : m.start()], m.group(1), m.group(2), rest):
                continue
            piece = line[start:end].strip()
            if piece:
                sentences.append(piece)
            start = m.end()
        tail = line[start:].strip()
        if tail:
            sentences.append(tail)
    return sentences


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def cjk_bigrams(token: str) -> list[str]:
    """Overlapping character pairs: the usual stand-in for words in Chinese and Japanese text."""
    if len(token) < 3:
        return [token]
    return [token[i : i + 2] for i in range(len(token) - 1)]


def join_sentences(sentences: list[str]) -> str:
    """Sentences joined with a space, except after CJK full stops (those scripts use none)."""
    out: list[str] = []
    empty = True
    cjk_end = False  # whether the text so far ends with a CJK full stop (and closing marks)
    for s in sentences:
        out += ["" if empty or cjk_end else " ", s]
        empty = empty and not s
        if tail := s.rstrip(_CJK_CLOSING):  # else the end is unchanged: only closing marks
            cjk_end = tail[-1] in _CJK_STOPS
    return "".join(out)


def words(text: str) -> list[str]:
    """Word tokens as written (letters and digits, inner apostrophes kept)."""
    return _WORD.findall(text)


def length(text: str) -> int:
    """Length in words; CJK text (no spaces) counts two characters as a word."""
    cjk = len(_CJK.findall(text))
    if cjk:
        return max(1, cjk // 2 + len(_WORD.findall(_CJK.sub(" ", text))))
    return len(text.split())


@lru_cache(maxsize=65536)
def normalize(token: str) -> str:
    """A lowercased token with a light, language-agnostic suffix fold for matching."""
    t = token.lower().replace("’", "'")
    if t.endswith("'s"):
        t = t[:-2]
    if len(t) > 4 and t.endswith("ies"):
        return t[:-3] + "y"
    if len(t) > 4 and t.endswith("s") and not t.endswith("ss"):
        return t[:-1]
    return t


def searchable(text: str) -> str:
    """The text casefolded with its whitespace collapsed: a phrase written in it, whatever its
    case or line breaks, is a substring of it (`searchable(phrase) in searchable(text)`)."""
    return " ".join(text.split()).casefold()


def content_terms(text: str) -> list[str]:
    """Normalized tokens without stopwords, numbers or single characters."""
    out = []
    for w in words(text):
        lw = w.lower()
        if lw in STOPWORDS or len(lw) < 2 or lw.isdigit():
            continue
        out.append(normalize(w))
    return out

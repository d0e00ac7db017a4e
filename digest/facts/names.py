"""The people, places and organisations a text names, found from how it is written: runs of
capitalized words and acronyms, without a trained model.

A run of capitalized words ("Jerome Powell", "European Central Bank", "Ursula von der Leyen",
"NASA") is a name where capitals tell something: not at a sentence's start (unless its first
word is also written capitalized mid-sentence elsewhere in the text) and not in a heading or a
title-case line. Leading articles, titles ("Mr", "President") and days and months are stripped;
a name's shorter mention ("Powell") counts for the full form it ends ("Jerome Powell"). Names are
ranked by how often they occur in the text and the title.

German capitalizes every noun, so there a single capitalized word is no evidence of a name: in
German text only runs of two or more words and acronyms are names (a single word still counts
for the full form it ends: "Scholz" for "Olaf Scholz").

Considered and not used: spaCy, flair and stanza (torch or hundreds of MB of models per language)
and NLTK's ne_chunk (an English-only MaxEnt chunker needing its tagger's data downloaded at run
time); this runs on small machines, in about a millisecond for a long article.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from digest.facts.text import MONTHS, STOPWORDS

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s?$")
# What may stand between two words of one name: a space, a hyphen ("Rolls-Royce"), an ampersand
# ("AT&T", "Procter & Gamble"); after an initial, its period ("George W. Bush").
_JOIN = re.compile(r" ?& ?| |-")
_AFTER_INITIAL = re.compile(r"\. ?")
# Lowercase words inside a name: "Bank of England", "Ursula von der Leyen", "Banco de España".
CONNECTORS = frozenset("of de du des da di del della van von der den la le bin ibn zu".split())
# French and Italian elision before a word: "l’Assemblée" names the Assemblée.
_ELISION = re.compile(r"^(?:[lLdDjJ]|[qQ]u|[nN]|[sS])['’](?=\w)")
# Words before a name that are not part of it.
TITLES = frozenset(
    """
    mr mrs ms miss mx dr prof sir dame lord lady st sen rep gov gen col capt lt sgt
    president vice prime minister chancellor senator governor mayor judge justice secretary
    chairman chairwoman chair ceo chief king queen prince princess pope father sister brother
    coach manager director spokesman spokeswoman spokesperson officer
    herr frau präsident präsidentin kanzler kanzlerin bundeskanzler bundeskanzlerin ministerin
    bürgermeister bürgermeisterin chef chefin trainer sprecher sprecherin
    monsieur madame mme mlle señor señora presidente ministre
    """.split()
)
DAYS = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday today yesterday tomorrow
    montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag heute gestern morgen
    lundi mardi mercredi jeudi vendredi samedi dimanche
    lunes martes miércoles jueves viernes sábado domingo
    jan feb mar apr jun jul aug sep sept oct nov dec am pm
    """.split()
)
# Company forms after a name: "Deutsche Bank AG" is Deutsche Bank.
_COMPANY_FORMS = frozenset("inc ltd llc plc corp co ag gmbh sa se nv bv kg".split())
# Articles before a name: "the European Central Bank". (Other function words before a capital
# start a sentence or a clause, and are not names unless written capitalized elsewhere.)
ARTICLES = frozenset("the a an der die das den dem des le la les el los las il lo gli".split())
_NOT_AT_START = ARTICLES | TITLES | DAYS | MONTHS | CONNECTORS
_NOT_ALONE = STOPWORDS | _NOT_AT_START
_NOT_AT_END = CONNECTORS | TITLES | _COMPANY_FORMS | ARTICLES
# A longer run of capitals is a heading or two names side by side, not one name.
_MAX_WORDS = 4
_MAX_TOKENS = 5  # with connectors: "Bank of England", "Ursula von der Leyen"
_MAX_ACRONYM = 8
# Punctuation before a word that makes it start a clause, where a capital tells nothing.
_OPENS_CLAUSE = re.compile(r"[:\"“”„«»‘'(\[—–]|^\s*[-•*]")


@dataclass(slots=True)
class _Word:
    text: str
    key: str  # casefolded, possessive removed
    start: int
    end: int
    initial: bool  # the first word of a sentence or of a quote, after a colon


def _capitalized(w: str) -> bool:
    return w[0].isupper() or (w[0].islower() and any(c.isupper() for c in w[1:]))


def _acronym(w: str) -> bool:
    return 2 <= len(w) <= _MAX_ACRONYM and w.isupper() and w[0].isalpha()


def _words(sentence: str) -> list[_Word]:
    out: list[_Word] = []
    prev_end = 0
    for m in _WORD.finditer(sentence):
        w, start = m.group(), m.start()
        if elided := _ELISION.match(w):
            w, start = w[elided.end() :], start + elided.end()
        gap = sentence[prev_end:start]
        initial = not out or _OPENS_CLAUSE.search(gap) is not None
        key = _POSSESSIVE.sub("", w).casefold().replace("’", "'")
        out.append(_Word(w, key, start, m.end(), initial))
        prev_end = m.end()
    return out


def _heading(words: Sequence[_Word]) -> bool:
    """A title-case or all-caps line (a heading, a caption, a headline): its capitals are style."""
    if len(words) < 3:
        return False
    caps = sum(1 for w in words if w.text[0].isupper())
    shout = sum(1 for w in words if len(w.text) > 1 and w.text.isupper())
    return caps > 0.7 * len(words) or shout > 0.5 * len(words)


def _runs(sentence: str, words: list[_Word]) -> list[list[_Word]]:
    """Maximal runs of capitalized words (lowercase connectors inside), each possibly a name."""
    runs: list[list[_Word]] = []
    run: list[_Word] = []
    pending: list[_Word] = []  # connectors seen since the run's last capitalized word
    for w in words:
        joined = False
        if run:
            last = pending[-1] if pending else run[-1]
            gap = sentence[last.end : w.start]
            joins = _AFTER_INITIAL if len(last.text) == 1 and last.text.isupper() else _JOIN
            joined = joins.fullmatch(gap) is not None and not _POSSESSIVE.search(last.text)
        if _capitalized(w.text) and not w.text[0].isdigit():
            if joined:
                run.extend(pending)
                run.append(w)
            else:
                if run:
                    runs.append(run)
                run = [w]
            pending = []
        elif joined and w.text in CONNECTORS and len(pending) < 2:
            pending.append(w)
        else:
            if run:
                runs.append(run)
            run, pending = [], []
    if run:
        runs.append(run)
    return runs


def _segments(run: list[_Word]) -> list[list[_Word]]:
    """The names in a run: a title inside it ends one and starts the next ("Federal Reserve Chair
    Jerome Powell" names the Federal Reserve and Jerome Powell; "Transport Secretary Grant
    Shapps" only Grant Shapps: one word before a title is the office's, not a name)."""
    out: list[list[_Word]] = []
    start = 0
    for i, w in enumerate(run[:-1]):
        if w.key in TITLES and i > 0:
            before = _trim(run[start:i])
            if len(before) > 1 or (before and _acronym(before[0].text)):
                out.append(before)
            start = i + 1
    out.append(_trim(run[start:]))
    return out


def _trim(run: list[_Word]) -> list[_Word]:
    """The run without the articles, titles, days and months before it and the connectors,
    titles and company forms after it. A capitalized article before one word is the name's
    ("El País", "Der Spiegel", "The Guardian"), before more a style ("The New York Times")."""
    while run and run[0].key in _NOT_AT_START and not _acronym(run[0].text):
        article = run[0].key in ARTICLES and run[0].text[0].isupper()
        if article and not run[0].initial and len(run) == 2:
            break
        run = run[1:]
    while run and (run[-1].key in _NOT_AT_END):
        run = run[:-1]
    return run


def _form(sentence: str, run: Sequence[_Word]) -> str:
    return _POSSESSIVE.sub("", sentence[run[0].start : run[-1].end])


def names(sentences: Sequence[str], title: str = "", *, single_words: bool = True) -> list[str]:
    """The names in `sentences` (a text split into sentences) and `title`, most frequent first,
    each as written most often. `single_words=False` (German) keeps only names of two or more
    words and acronyms."""
    parsed = [(s, _words(s)) for s in sentences]
    # Words written capitalized where a capital is not required: the evidence of a name.
    mid: set[str] = set()
    found: list[tuple[str, list[_Word]]] = []  # (sentence, run) where a capital tells something
    styled: list[tuple[str, list[_Word]]] = []  # runs in headings and at sentence starts
    lowercase = {w.key for _, words in parsed for w in words if not w.text.isupper()}
    for sentence, words in parsed:
        heading = _heading(words)
        for run in _runs(sentence, words):
            if heading:
                styled.append((sentence, run))
                continue
            found.append((sentence, run))
            mid.update(w.key for w in run if not w.initial)
    counts: Counter[tuple[str, ...]] = Counter()
    forms: dict[tuple[str, ...], Counter[str]] = {}
    first: dict[tuple[str, ...], int] = {}

    def add(sentence: str, run: list[_Word]) -> None:
        key = tuple(w.key for w in run)
        counts[key] += 1
        forms.setdefault(key, Counter())[_form(sentence, run)] += 1
        first.setdefault(key, len(first))

    def acronym(w: _Word) -> bool:  # not a word written in capitals for emphasis ("EUROS")
        return _acronym(w.text) and w.key not in lowercase

    for sentence, whole in found:
        while whole and whole[0].initial and not acronym(whole[0]):
            if whole[0].key in mid and whole[0].key not in ARTICLES:
                break
            whole = whole[1:]  # a capital because the sentence starts here, not for a name
        for run in _segments(whole) if whole else []:
            if not run or len(run) > _MAX_TOKENS:
                continue
            if sum(1 for w in run if w.key not in CONNECTORS) > _MAX_WORDS:
                continue
            if len(run) == 1 and run[0].text.isupper() and not acronym(run[0]):
                continue  # shouted ("EUROS" where the text also writes "euros")
            if len(run) > 1 and all(len(w.text) > 1 and w.text.isupper() for w in run):
                continue  # a shouted heading ("OBSERVER ONLINE"), not a name
            if len(run) == 1 and (run[0].key in _NOT_ALONE or len(run[0].key) < 2):
                continue
            add(sentence, run)
    # Headings and the title count the names found elsewhere; a name in the title is what the
    # story is about, and counts twice.
    known = set(counts)
    longest = max((len(k) for k in known), default=0)
    title_words = _words(" ".join(title.split()))
    for words in [*(w for _, w in styled), title_words, title_words]:
        keys = [w.key for w in words]
        i = 0
        while i < len(keys):
            for size in range(min(longest, len(keys) - i), 0, -1):
                key = tuple(keys[i : i + size])
                if key in known:
                    counts[key] += 1
                    i += size
                    break
            else:
                i += 1
    # A shorter mention counts for the full form it ends ("Powell" for "Jerome Powell").
    ending: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for key in counts:
        for i in range(1, len(key)):
            ending.setdefault(key[i:], []).append(key)
    for key in sorted(counts, key=len):
        if containers := ending.get(key, []):
            best = max(containers, key=lambda k: (counts[k], -first[k]))
            counts[best] += counts.pop(key)
    ranked = sorted(counts, key=lambda k: (-counts[k], first[k]))
    out: list[str] = []
    chosen: set[tuple[str, ...]] = set()
    beginnings: set[tuple[str, ...]] = set()  # the chosen names' first two or more words
    for key in ranked:
        form = max(forms[key].items(), key=lambda kv: kv[1])[0]
        if not single_words and len(key) == 1 and not _acronym(form):
            continue
        starts = {key[:i] for i in range(2, len(key))}  # one word in common is not enough
        if key in beginnings or starts & chosen:
            continue  # "Copa de Naciones" beside "Copa de Naciones de Glasgow": one is enough
        chosen.add(key)
        beginnings |= starts
        out.append(form)
    return out

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
from collections.abc import Mapping, Sequence
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
    found, styled, mid = _capitalized_runs(parsed)
    lowercase = {w.key for _, words in parsed for w in words if not w.text.isupper()}
    counts, forms, first = _counted(found, mid, lowercase)
    # Headings and the title count the names found elsewhere; a name in the title is what the
    # story is about, and counts twice.
    title_words = _words(" ".join(title.split()))
    _count_known(counts, [*(w for _, w in styled), title_words, title_words])
    _count_for_full_forms(counts, first)
    return _chosen(counts, forms, first, single_words=single_words)


_Key = tuple[str, ...]  # a name's words, casefolded
_Run = tuple[str, list[_Word]]  # a run of capitalized words, with the sentence it is in


def _capitalized_runs(
    parsed: Sequence[tuple[str, list[_Word]]],
) -> tuple[list[_Run], list[_Run], set[str]]:
    """The runs of capitalized words where a capital tells something, those in headings (where
    capitals are style), and the words written capitalized where a capital is not required:
    the evidence of a name."""
    mid: set[str] = set()
    found: list[_Run] = []
    styled: list[_Run] = []
    for sentence, words in parsed:
        heading = _heading(words)
        for run in _runs(sentence, words):
            if heading:
                styled.append((sentence, run))
                continue
            found.append((sentence, run))
            mid.update(w.key for w in run if not w.initial)
    return found, styled, mid


def _counted(
    found: Sequence[_Run], mid: set[str], lowercase: set[str]
) -> tuple[Counter[_Key], dict[_Key, Counter[str]], dict[_Key, int]]:
    """The names in the runs `found`: how often each occurs, the forms it is written in, and
    the order in which they first occur."""
    counts: Counter[_Key] = Counter()
    forms: dict[_Key, Counter[str]] = {}
    first: dict[_Key, int] = {}
    for sentence, whole in found:
        whole = _past_sentence_start(whole, mid, lowercase)
        for run in _segments(whole) if whole else []:
            if not _may_name(run, lowercase):
                continue
            key = tuple(w.key for w in run)
            counts[key] += 1
            forms.setdefault(key, Counter())[_form(sentence, run)] += 1
            first.setdefault(key, len(first))
    return counts, forms, first


def _written_acronym(w: _Word, lowercase: set[str]) -> bool:
    """An acronym, not a word written in capitals for emphasis ("EUROS") that the text also
    writes in lowercase."""
    return _acronym(w.text) and w.key not in lowercase


def _past_sentence_start(run: list[_Word], mid: set[str], lowercase: set[str]) -> list[_Word]:
    """The run without the words capitalized because a sentence starts with them, not for a
    name (unless the text writes them capitalized elsewhere too)."""
    while run and run[0].initial and not _written_acronym(run[0], lowercase):
        if run[0].key in mid and run[0].key not in ARTICLES:
            break
        run = run[1:]
    return run


def _may_name(run: list[_Word], lowercase: set[str]) -> bool:
    """Whether a run can be a name: not too long, not shouted, not a lone common word."""
    if not run or len(run) > _MAX_TOKENS:
        return False
    if sum(1 for w in run if w.key not in CONNECTORS) > _MAX_WORDS:
        return False
    if len(run) == 1 and run[0].text.isupper() and not _written_acronym(run[0], lowercase):
        return False  # shouted ("EUROS" where the text also writes "euros")
    if len(run) > 1 and all(len(w.text) > 1 and w.text.isupper() for w in run):
        return False  # a shouted heading ("OBSERVER ONLINE"), not a name
    return not (len(run) == 1 and (run[0].key in _NOT_ALONE or len(run[0].key) < 2))


def _count_known(counts: Counter[_Key], lines: Sequence[Sequence[_Word]]) -> None:
    """Count the names already in `counts` where `lines` mention them, longest first."""
    known = set(counts)
    longest = max((len(k) for k in known), default=0)
    for words in lines:
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


def _count_for_full_forms(counts: Counter[_Key], first: Mapping[_Key, int]) -> None:
    """A shorter mention counts for the full form it ends ("Powell" for "Jerome Powell"): the
    most frequent one, the first found among equals."""
    ending: dict[_Key, list[_Key]] = {}
    for key in counts:
        for i in range(1, len(key)):
            ending.setdefault(key[i:], []).append(key)
    for key in sorted(counts, key=len):
        if containers := ending.get(key, []):
            best = max(containers, key=lambda k: (counts[k], -first[k]))
            counts[best] += counts.pop(key)


def _chosen(
    counts: Counter[_Key],
    forms: Mapping[_Key, Counter[str]],
    first: Mapping[_Key, int],
    *,
    single_words: bool,
) -> list[str]:
    """The names, most frequent first, each as written most often, one of two that begin
    alike."""
    ranked = sorted(counts, key=lambda k: (-counts[k], first[k]))
    out: list[str] = []
    chosen: set[_Key] = set()
    beginnings: set[_Key] = set()  # the chosen names' first two or more words
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

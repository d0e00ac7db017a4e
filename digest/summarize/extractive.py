"""Extractive summaries: the article's own sentences, ranked; used when no LLM is configured or
the LLM failed.

Ranking is centrality in the TF-IDF sentence-similarity graph (sentences as documents; LexRank's
degree centrality), blended with a position prior (news puts the essentials first) and similarity
to the title; a greedy pick skips near-duplicates and fills ~150–250 words, shown in the article's
order. Pure, deterministic and fast (about 10 ms for a 2,000-word article).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from digest.facts.names import DAYS, names
from digest.facts.text import (
    MONTHS,
    STOPWORDS,
    cjk_bigrams,
    content_terms,
    has_cjk,
    join_sentences,
    length,
    normalize,
    searchable,
    split_sentences,
    words,
)
from digest.models import Summary
from digest.stories.language import detect_language
from digest.summarize.output import clean_control, is_link_like, one_line, strip_links
from digest.summarize.types import ArticleInput

SUMMARY_MIN_WORDS = 150
SUMMARY_MAX_WORDS = 250
BRIEF_MAX_WORDS = 75
KEYWORDS = 6

_MIN_SENTENCE_WORDS = 5
_MAX_SENTENCE_WORDS = 90
_REDUNDANT = 0.6  # cosine similarity above which a sentence repeats one already chosen
_DATES = DAYS | MONTHS  # never a story's keyword
_MAX_CHARS = 100_000  # ~15,000 words: a long report's opening is what a digest needs
_GERMAN_HINTS = frozenset("und der die das ist nicht mit für auf sich ein eine dem des".split())
_LANGUAGE_SAMPLE = 600  # characters of title and opening that tell the language (~100 µs)
_MAX_CANDIDATES = 300  # sentences ranked; later ones rarely matter in news, and cost grows fast

# Lines that are page furniture rather than article text.
_BOILERPLATE = re.compile(
    r"(?i)^(?:advertisement|anzeige|read more|mehr lesen|weiterlesen|sign up|subscribe|"
    r"share (?:this|on)|follow us|related:|see also|copyright|©|all rights reserved|"
    r"click here|photo:|foto:|image:|bild:)"
)
# Text addressed to a language model rather than a reader (an injection attempt in the page):
# never picked for a summary.
INSTRUCTION_LIKE = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override)\b(?:\W+\w+){0,3}?\W+(?:previous|prior|above|"
    r"earlier|preceding|your|all|any|the)\b(?:\W+\w+){0,2}?\W+(?:instructions?|prompts?|rules|"
    r"directions)\b|\bsystem prompt\b|\b(?:ai|llm|language model|assistant|chatbot)s?\W+(?:must|"
    r"should|will)\W+(?:now\W+)?(?:reply|respond|answer|output|say|write)\b|\b(?:reply|respond|answer)"
    r"\W+(?:only\W+)?with\W+(?:the following|exactly|only)\b"
)
_LINK_HINT = re.compile(r"[:/@]|(?i:www\.)")
_DIGIT = re.compile(r"\d")
_POSSESSIVE = re.compile(r"['’]s$")
_TERMINAL = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")


def without_instructions(text: str) -> str:
    """The text without paragraphs addressed to a language model (a planted instruction): they
    are never summary sentences, keyword sources or evidence that a summary is on topic."""
    if not INSTRUCTION_LIKE.search(text):
        return text
    return "\n".join(line for line in text.splitlines() if not INSTRUCTION_LIKE.search(line))


@dataclass(slots=True)
class _Sentence:
    index: int
    text: str
    words: int
    terms: Counter[str]
    vector: dict[str, float] = field(default_factory=dict)
    score: float = 0.0


@dataclass(slots=True)
class _Analysis:
    """One pass over the text: every sentence's (word, content term or None) pairs, and the
    candidate sentences."""

    tokens: list[list[tuple[str, str | None]]]
    sentences: list[_Sentence]
    lines: list[str]  # every sentence, candidate or not, as written


def _term(token: str) -> str | None:
    """The normalized content term for a token, or None for stopwords, numbers and scraps."""
    lw = token.lower()
    if lw in STOPWORDS or len(lw) < 2 or len(lw) > 40 or _DIGIT.search(lw):
        return None
    return normalize(token)


def _analyse(text: str) -> _Analysis:
    cache: dict[str, str | None] = {}
    seen: set[str] = set()
    all_tokens: list[list[tuple[str, str | None]]] = []
    out: list[_Sentence] = []
    text = text[:_MAX_CHARS]
    lines = split_sentences(without_instructions(clean_control(text)))
    for raw in lines:
        tokens = []
        extra: list[str] = []  # CJK runs are not words: their character pairs stand in
        for w in words(raw):
            term = cache[w] if w in cache else cache.setdefault(w, _term(w))
            if term is not None and has_cjk(w):
                extra.extend(cjk_bigrams(w))
                term = term if len(w) <= 6 else None
            tokens.append((w, term))
        all_tokens.append(tokens)
        if len(out) >= _MAX_CANDIDATES:
            continue
        n = length(raw)
        key = raw.casefold()
        if n < _MIN_SENTENCE_WORDS or n > _MAX_SENTENCE_WORDS or key in seen:
            continue
        if _BOILERPLATE.match(raw):
            continue
        seen.add(key)
        terms = Counter(t for _, t in tokens if t)
        terms.update(extra)
        out.append(_Sentence(len(out), raw, n, terms))
    # Headings, captions and datelines rarely end with terminal punctuation; keep them out
    # unless the text has (almost) nothing else.
    proper = [s for s in out if _TERMINAL.search(s.text)]
    if len(proper) >= 3 or len(proper) >= len(out) / 2:
        out = proper
    for i, s in enumerate(out):
        s.index = i
    return _Analysis(all_tokens, out, lines)


def _vectorize(sentences: Sequence[_Sentence]) -> None:
    df: Counter[str] = Counter()
    for s in sentences:
        df.update(s.terms.keys())
    n = len(sentences)
    for s in sentences:
        vec = {t: (1 + math.log(c)) * math.log((n + 1) / (df[t] + 0.5)) for t, c in s.terms.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        s.vector = {t: v / norm for t, v in vec.items() if v > 0}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def _centrality(sentences: Sequence[_Sentence]) -> list[float]:
    """Each sentence's summed similarity to all the others (LexRank's degree centrality).

    With unit vectors, sum_j v_i·v_j = v_i·(sum_j v_j) − 1, so one pass over the centroid does
    what a similarity graph would do in quadratic time.
    """
    total: defaultdict[str, float] = defaultdict(float)
    for s in sentences:
        for t, v in s.vector.items():
            total[t] += v
    return [
        max(0.0, sum(v * total[t] for t, v in s.vector.items()) - (1.0 if s.vector else 0.0))
        for s in sentences
    ]


def _rank(sentences: list[_Sentence], title: str) -> list[_Sentence]:
    if not sentences:
        return sentences
    _vectorize(sentences)
    centrality = _centrality(sentences)
    top = max(centrality) or 1.0
    title_terms = set(content_terms(title))
    for s, c in zip(sentences, centrality, strict=True):
        prior = 1.0 / math.sqrt(1 + s.index)
        overlap = len(title_terms & s.terms.keys()) / len(title_terms) if title_terms else 0.0
        score = 0.5 * (c / top) + 0.35 * prior + 0.15 * overlap
        if _LINK_HINT.search(s.text) and any(is_link_like(w) for w in s.text.split()):
            score *= 0.1
        s.score = score
    return sentences


def _pick(sentences: Sequence[_Sentence], min_words: int, max_words: int) -> list[_Sentence]:
    chosen: list[_Sentence] = []
    total = 0
    for s in sorted(sentences, key=lambda s: (-s.score, s.index)):
        if total >= min_words:
            break
        if total + s.words > max_words and chosen:
            continue
        if any(_cosine(s.vector, c.vector) > _REDUNDANT for c in chosen):
            continue
        chosen.append(s)
        total += s.words
    return sorted(chosen, key=lambda s: s.index)


def _brief(sentences: Sequence[_Sentence]) -> str:
    ranked = sorted(sentences, key=lambda s: (-s.score, s.index))
    picked: list[_Sentence] = []
    for s in ranked:
        if len(picked) == 3:
            break
        if picked and sum(p.words for p in picked) + s.words > BRIEF_MAX_WORDS:
            continue
        if any(_cosine(s.vector, p.vector) > _REDUNDANT for p in picked):
            continue
        picked.append(s)
    return join_sentences([s.text for s in sorted(picked, key=lambda s: s.index)])


def keywords(text: str, title: str = "", n: int = KEYWORDS) -> list[str]:
    """The people, places and organisations the article names, most mentioned first (see
    `digest.facts.names`); when it names fewer than `n`, its most telling other terms
    (`frequent_terms`) fill up the list."""
    return _keywords(_analyse(text), title, n)


def _german(text: str) -> bool:
    """Whether `text` is German. The language model (~80 MB, ~0.8 s to load) is asked only
    when German function words occur: a service reading no German never loads it for this."""
    sample = text[:_LANGUAGE_SAMPLE]
    if len(_GERMAN_HINTS.intersection(w.lower() for w in words(sample))) < 2:
        return False
    return detect_language(sample) == "de"


def frequent_terms(text: str, title: str = "", n: int = KEYWORDS) -> list[str]:
    """The article's most frequent content words and repeated two-word phrases, weighted up
    when they appear in the title or are capitalized mid-sentence."""
    return _frequent_terms(_analyse(text).tokens, title, n)


def _keywords(analysis: _Analysis, title: str, n: int) -> list[str]:
    if n <= 0:
        return []
    # German capitalizes every noun, and its runs of capitals are mostly noun phrases ("Ablauf
    # der Wahl", "Menge Nutzer"): there the frequent terms, names among them, are the keywords.
    found = [] if _german(" ".join([title, *analysis.lines[:8]])) else names(analysis.lines, title)
    written = searchable(" ".join(analysis.lines)) + "\n" + searchable(title)
    out: list[str] = []
    taken: set[str] = set()  # the words of the keywords so far, casefolded
    for name in found:
        if len(out) < n and searchable(name) in written and name.casefold() not in taken:
            out.append(name)
            taken |= {name.casefold(), *(w.casefold() for w in words(name))}
    if len(out) < n:  # few names: the other telling terms fill up, none a name's word again
        for term in _frequent_terms(analysis.tokens, title, 3 * n):
            parts = {w.casefold() for w in words(term)}
            if parts & _DATES or not parts or parts & taken:
                continue
            if len(out) < n and searchable(term) in written:
                out.append(term)
                taken |= parts
    return out


def _frequent_terms(sentences: list[list[tuple[str, str | None]]], title: str, n: int) -> list[str]:
    tf: Counter[str] = Counter()
    capitalized: Counter[str] = Counter()
    forms: dict[str, dict[str, int]] = {}
    pairs: Counter[str] = Counter()
    pair_forms: dict[str, str] = {}
    for tokens in sentences:
        prev: tuple[str, str] | None = None
        for pos, (w, term) in enumerate(tokens):
            if term is None or len(w) < 3:
                prev = None
                continue
            tf[term] += 1
            seen = forms.setdefault(term, {})
            seen[w] = seen.get(w, 0) + 1
            if pos > 0 and w[0].isupper():
                capitalized[term] += 1
            if prev is not None and prev[0] != term:
                pair = f"{prev[0]} {term}"
                pairs[pair] += 1
                pair_forms.setdefault(pair, f"{prev[1]} {w}")
            prev = (term, w)
    if not tf:
        return []
    title_terms = set(content_terms(title))

    def weight(term: str) -> float:
        boost = 1.0 + (1.0 if term in title_terms else 0.0)
        boost *= 1.0 + 0.5 * capitalized[term] / tf[term]
        return (1 + math.log(tf[term])) * boost

    scored: list[tuple[float, str, tuple[str, ...]]] = [(weight(t), t, (t,)) for t in tf]
    for pair, count in pairs.items():
        if count >= 2:
            first, second = pair.split(" ")
            score = 0.6 * (weight(first) + weight(second)) * min(1.0, count / 3 + 0.34)
            scored.append((score, pair, (first, second)))
    scored.sort(key=lambda x: (-x[0], x[1]))
    out: list[str] = []
    used: set[str] = set()
    for _, key, parts in scored:
        if len(out) == n:
            break
        if any(p in used for p in parts):
            continue
        if len(parts) == 2:
            form = pair_forms[key]
        else:  # the spelling used most often, the first of equals
            form = max(forms[key].items(), key=lambda kv: kv[1])[0]
        form = _POSSESSIVE.sub("", form)
        if len(parts) == 1 and not capitalized[key]:
            form = form.lower()
        used.update(parts)
        out.append(form)
    return out


def summarize(
    article: ArticleInput,
    *,
    min_words: int = SUMMARY_MIN_WORDS,
    max_words: int = SUMMARY_MAX_WORDS,
) -> Summary:
    """An extractive summary of the article; never fails (an empty text gives an empty summary)."""
    analysis = _analyse(article.text)
    sentences = _rank(analysis.sentences, article.title)
    allowed = [article.url]
    if sentences:
        summary = join_sentences([s.text for s in _pick(sentences, min_words, max_words)])
        brief = _brief(sentences)
    else:  # no proper sentences (a list, a table, a very short text): the text's opening words
        flat = " ".join(without_instructions(clean_control(article.text)).split())
        summary = one_line(flat, 1200)
        brief = one_line(flat, 300)
    return Summary(
        title=one_line(strip_links(article.title, allowed), 300),
        summary=strip_links(summary, allowed),
        brief_summary=strip_links(brief, allowed),
        keywords=tuple(_keywords(analysis, article.title, KEYWORDS)),
        summarizer="extractive",
    )

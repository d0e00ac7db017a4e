"""Reading a search box query: words, "quoted phrases", -excluded words, OR; pure, no I/O.

A user's query never reaches either database engine as syntax: `parse_query` reads it the way
web search boxes do, and each backend gets it rebuilt from quoted terms (`fts5_expression`) or
bound parameters (`pg_tsquery`), so any input is safe.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, bindparam, func, literal_column

from digest.errors import InvalidQueryError

# Words too common to search for: the Snowball English stop list, which PostgreSQL's `english`
# configuration drops too, so both backends read "the storm" and "-the" alike. SQLite would
# otherwise match nearly every article for "the" (440 ms at 100,000 articles, bench/search.py).
COMMON = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can did do does doing don down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own s same she should so some such t than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with you your yours yourself yourselves""".split()
)
# What questions add on top ("what is the latest news on ..."): left out of any_word questions.
QUESTION = COMMON | frozenset(
    """also could happen happened happening latest new news say said says today tell us
    would""".split()
)
MAX_QUERY_CHARS = 500
MAX_QUERY_CHARS = 500
MAX_TERMS = 32
_PG_CONFIG = "english"  # as in migration 0004
REGCONFIG: ColumnElement[Any] = literal_column(f"'{_PG_CONFIG}'::regconfig")


@dataclass(frozen=True, slots=True)
class Term:
    """One word or "quoted phrase" of a query (its words), possibly excluded with a minus."""

    words: tuple[str, ...]
    exclude: bool = False


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query: alternatives (OR) of terms that must all match (AND)."""

    groups: tuple[tuple[Term, ...], ...]

    def any_word(self) -> SearchQuery:
        """The same words as alternatives: for questions, where not every word is in the text
        ("what happened to the chip plant"). Exclusions still apply to every alternative."""
        excluded = tuple(dict.fromkeys(t for g in self.groups for t in g if t.exclude))
        wanted = list(dict.fromkeys(t for g in self.groups for t in g if not t.exclude))
        # "what", "the", "is" would match nearly every story: leave such words out of a
        # question (PostgreSQL's english configuration drops them anyway), unless that is all.
        meaningful = [t for t in wanted if len(t.words) > 1 or t.words[0].lower() not in QUESTION]
        return SearchQuery(tuple((t, *excluded) for t in meaningful or wanted))

    def __str__(self) -> str:
        def term(t: Term) -> str:
            text = " ".join(t.words)
            return ("-" if t.exclude else "") + (f'"{text}"' if len(t.words) > 1 else text)

        return " OR ".join(" ".join(term(t) for t in group) for group in self.groups)


_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')


def parse_query(text: str) -> SearchQuery:
    """Read a search box query: words must all match, "a phrase" matches in order, -word
    excludes, OR between words gives alternatives; words in COMMON are left out (inside a
    phrase they stay). Raises InvalidQueryError with a message a user can act on when nothing
    searchable is left."""
    cleaned = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    if not cleaned.strip():
        raise InvalidQueryError("the search is empty: give a word to look for")
    if len(cleaned) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"the search is longer than {MAX_QUERY_CHARS} characters")
    groups: list[list[Term]] = [[]]
    common: list[str] = []
    for match in _TOKEN.finditer(cleaned):
        minus, phrase, bare = match.groups()
        if bare is not None and bare.lower() == "or":
            groups.append([])
            continue
        if bare is not None:
            exclude = bare.startswith("-")
            words = _words(bare.lstrip("-"))
            if len(words) == 1 and words[0].lower() in COMMON:
                common.append(words[0])
                continue
        else:
            exclude = bool(minus)
            words = _words(phrase)
        if words:
            groups[-1].append(Term(words, exclude))
    kept = tuple(tuple(g) for g in groups if any(not t.exclude for t in g))
    if not kept and common:
        shown = ", ".join(f'"{w}"' for w in dict.fromkeys(common))
        raise InvalidQueryError(
            f"{shown}: too common to search for; add a more specific word, or quote a phrase"
        )
    if not kept:
        raise InvalidQueryError(
            "nothing to search for: give at least one word that is not excluded with '-'"
        )
    if sum(len(g) for g in kept) > MAX_TERMS:
        raise InvalidQueryError(f"the search has more than {MAX_TERMS} words")
    return SearchQuery(kept)


def _words(text: str) -> tuple[str, ...]:
    """Runs of letters and digits: what both engines index (punctuation only separates words)."""
    return tuple(w for w in re.split(r"[^\w]|_", text) if w)


def fts5_expression(query: SearchQuery) -> str:
    """The query as an FTS5 MATCH expression built only from quoted strings and operators."""

    def quoted(term: Term) -> str:
        return '"' + " ".join(term.words).replace('"', '""') + '"'

    alternatives = []
    for group in query.groups:
        wanted = " AND ".join(quoted(t) for t in group if not t.exclude)
        unwanted = "".join(f" NOT {quoted(t)}" for t in group if t.exclude)
        alternatives.append(f"({wanted}{unwanted})")
    return " OR ".join(alternatives)


# A tsquery's text as PostgreSQL prints it: 'quoted' lexemes ('' for a quote, \\ for a
# backslash), <-> or <N> between the words of a phrase, and & | ! ( ) otherwise.
_TSQUERY_TOKEN = re.compile(r"'((?:[^'\\]|''|\\.)*)'|<(-|\d+)>|(\S)")


def adjacent_pairs(tsquery_text: str) -> tuple[str, ...] | None:
    """The pairs of lexemes that a phrase tsquery (phraseto_tsquery's text) needs side by side,
    as "a b" (migration 0011's `articles_search_pairs`); None when the text is not a chain of
    lexemes joined by <N>, so that nothing can be said about adjacency."""
    lexemes: list[str] = []
    operators: list[str] = []
    for match in _TSQUERY_TOKEN.finditer(tsquery_text):
        lexeme, distance, other = match.groups()
        if other is not None or (lexeme is None) == (len(lexemes) == len(operators)):
            return None  # & | ! ( ), two lexemes or two operators in a row
        if lexeme is not None:
            lexemes.append(re.sub(r"''|\\(.)", lambda m: m.group(1) or "'", lexeme))
        else:
            operators.append(distance)
    if not lexemes or len(operators) == len(lexemes):
        return None
    adjacent = zip(lexemes[:-1], lexemes[1:], operators, strict=True)
    pairs = (f"{a} {b}" for a, b, d in adjacent if d in ("-", "1"))
    return tuple(dict.fromkeys(pairs))


def pg_tsquery(query: SearchQuery) -> ColumnElement[Any]:
    """The query as a PostgreSQL tsquery: every term a bound parameter of phraseto_tsquery,
    combined with tsquery_and/_or/_not (the functions behind &&, || and !!)."""
    alternatives = []
    for group in query.groups:
        expr: ColumnElement[Any] | None = None
        for term in group:
            part = func.phraseto_tsquery(REGCONFIG, bindparam(None, " ".join(term.words)))
            if term.exclude:
                part = func.tsquery_not(part)
            expr = part if expr is None else func.tsquery_and(expr, part)
        assert expr is not None  # parse_query keeps only groups with a wanted term
        alternatives.append(expr)
    result = alternatives[0]
    for expr in alternatives[1:]:
        result = func.tsquery_or(result, expr)
    return result

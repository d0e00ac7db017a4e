"""Bound the shape of untrusted HTML before a parser builds a tree from it.

HTML parsers pay for some shapes far more than for their size. lexbor (the fast path) and libxml2
(trafilatura, the deep path) scan the stack of open elements at every block start tag, and check
every attribute of a tag against the others: measured here, 40,000 nested `<div>` (195 KB) took
lexbor 1.26 s and trafilatura 4.6 s, 200,000 (977 KB) trafilatura 25 s; one tag with 100,000
attributes (868 KB) took lexbor 12.5 s and trafilatura 63 s. Any search result or feed item can
send such a page.

`bound_html` rewrites a page so that no element opens deeper than `MAX_DEPTH` levels (Chromium's
own parser stops nesting at 512 for the same reason) and no tag keeps more than `MAX_ATTRIBUTES`
attributes: tags past either limit are left out, their text is kept, so a lede or an article inside
the nesting is still found. It follows the tree builder closely enough to count depth (void
elements, raw-text elements such as `<script>`, comments, implied end tags of `<p>`, `<li>`,
table cells; self-closing tags only inside SVG and MathML) in one linear pass; a page within the
limits, as all 990 pages of `extraction-dev` are, is returned unchanged (the same object).
It costs about 12 µs a KB, under twice the lede finder's own time; a page made only of tags,
the worst case, about 0.3 s a MB. The parse still runs under a deadline (`digest.fetch.parsers`):
this bound is what lets it finish within it.
"""

from __future__ import annotations

import re

MAX_DEPTH = 128
MAX_ATTRIBUTES = 256
# Only a long tag can hold many attributes: shorter ones are not counted (the common case).
_LONG_TAG = 4096

_VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr keygen basefont "
    "bgsound frame image".split()
)
# Elements whose content is text up to their own end tag, not markup.
_RAW_TEXT = frozenset(
    "script style textarea title xmp iframe noembed noframes noscript plaintext".split()
)
# Start tags that close an open element of the same family (an implied end tag), when it is the
# current element or sits just below a few phrasing elements (`<li><a>text<li>` closes the `li`).
_FAMILY = {
    "li": "li",
    "dt": "dd",
    "dd": "dd",
    "option": "option",
    "optgroup": "optgroup",
    "tr": "tr",
    "td": "cell",
    "th": "cell",
    "rb": "ruby",
    "rt": "ruby",
    "rp": "ruby",
    "rtc": "ruby",
    "thead": "tbody",
    "tbody": "tbody",
    "tfoot": "tbody",
    "p": "p",
}
_FAMILY_REACH = 3
_PHRASING = frozenset(
    "a abbr b bdi bdo cite code data dfn em font i kbd mark q s samp small span strong sub sup "
    "time u var nobr big strike tt".split()
)
# Start tags that close an open `<p>`.
_CLOSES_P = frozenset(
    "address article aside blockquote details dialog div dl fieldset figcaption figure footer "
    "form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary table ul "
    "li dd dt".split()
)
# Elements left out with their content: they never hold article text, and lexbor rebuilds a
# select's option list at every `<option>` (100,000 options: 41 s).
_LEFT_OUT = frozenset(("select", "datalist"))
# Elements the tree builder inserts around a row or a cell that arrives without them.
_IMPLIED_PARENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "tr": {"table": ("tbody",)},
    "td": {"table": ("tbody", "tr"), "tbody": ("tr",), "thead": ("tr",), "tfoot": ("tr",)},
    "th": {"table": ("tbody", "tr"), "tbody": ("tr",), "thead": ("tr",), "tfoot": ("tr",)},
}
_FOREIGN = ("svg", "math")
# The elements an end tag cannot close past (the HTML standard's "has an element in scope").
_SCOPE = frozenset("applet caption html table td th marquee object template".split())
_TABLE_SCOPE = frozenset(("html", "table", "template"))
_SCOPE_BOUNDARIES = {
    "li": _SCOPE | {"ol", "ul"},
    "p": _SCOPE | {"button"},
    **dict.fromkeys(("table", "tbody", "thead", "tfoot", "tr", "td", "th"), _TABLE_SCOPE),
}

# One token: a comment, a doctype / processing instruction, or a start or end tag with its
# attributes (possessive quantifiers and an atomic group: no backtracking on hostile input).
_ATTRIBUTE = r"""[^\s"'>/=]++(?:\s*+=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s>]*+))?"""
_TOKEN = re.compile(
    r"<(?:!--.*?(?:-->|\Z)|[!?][^>]*+>?|(/?)([a-zA-Z][^\s/>]*+)"
    rf"(?>\s*+(?:{_ATTRIBUTE}|/(?!>)))*+\s*+(/?)>?)",
    re.DOTALL,
)
_ONE_ATTRIBUTE = re.compile(_ATTRIBUTE)
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}[\s/>]", re.IGNORECASE) for name in _RAW_TEXT | _LEFT_OUT
}


def bound_html(html: str) -> str:
    """`html` with no element deeper than `MAX_DEPTH` and no tag over `MAX_ATTRIBUTES`."""
    stack: list[str] = []
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    foreign = 0
    pos = 0
    search = _TOKEN.search
    family = _FAMILY.get
    while (token := search(html, pos)) is not None:
        start, pos = token.start(), token.end()
        name = token.group(2)
        if name is None:  # comment, doctype, processing instruction
            continue
        name = name.lower()
        if token.group(1):  # an end tag
            if name in stack:
                # It closes its element only when no scope boundary (a table, a cell...) sits
                # above it: the tree builder ignores `<table></div>` and keeps the table open.
                opened = len(stack) - 1 - stack[::-1].index(name)
                if not _SCOPE_BOUNDARIES.get(name, _SCOPE).isdisjoint(stack[opened + 1 :]):
                    continue
                del stack[opened:]
                if foreign and name in _FOREIGN:
                    foreign -= 1
            continue
        if pos - start > _LONG_TAG:
            spans = [m.span() for m in _ONE_ATTRIBUTE.finditer(html, start + 1 + len(name), pos)]
            if len(spans) > MAX_ATTRIBUTES:
                edits.append((spans[MAX_ATTRIBUTES - 1][1], spans[-1][1], ""))
        if not foreign and (name in _RAW_TEXT or name in _LEFT_OUT):
            end = _RAW_TEXT_END[name].search(html, pos)
            if name in _LEFT_OUT:
                close = len(html) if end is None else html.find(">", end.end() - 1) + 1
                edits.append((start, close or len(html), ""))
                pos = close or len(html)
            else:
                pos = len(html) if end is None else end.start()
            continue
        if name in _VOID or (foreign and token.group(3)):
            continue
        kin = family(name)
        if kin is not None:
            for i in range(len(stack) - 1, max(-1, len(stack) - 1 - _FAMILY_REACH), -1):
                if family(stack[i]) == kin:
                    del stack[i:]
                    break
                if stack[i] not in _PHRASING:
                    break
        if name in _CLOSES_P and "p" in stack[-_FAMILY_REACH:]:
            del stack[len(stack) - 1 - stack[::-1].index("p") :]
        if stack and name in _IMPLIED_PARENTS:  # a table's rows sit in an implied <tbody>
            implied = _IMPLIED_PARENTS[name].get(stack[-1], ())
            if len(stack) + len(implied) >= MAX_DEPTH and implied:
                # The elements the tree builder would insert around it open too deep as well
                # (closing one would only make it insert them again): the tag is left out.
                edits.append((start, pos, ""))
                continue
            stack.extend(implied)
        if len(stack) >= MAX_DEPTH:
            # As Chromium does: the element becomes a sibling of the deepest one, not its child.
            edits.append((start, start, f"</{stack.pop()}>"))
        if name in _FOREIGN:
            foreign += 1
        stack.append(name)
    return _apply(html, edits) if edits else html


def _apply(html: str, edits: list[tuple[int, int, str]]) -> str:
    parts = []
    last = 0
    for start, end, replacement in sorted(edits):
        if start >= last:
            parts.append(html[last:start])
            parts.append(replacement)
            last = end
    parts.append(html[last:])
    return "".join(parts)

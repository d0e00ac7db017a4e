"""Headlines as readers see them, and the one line a lead story gets. Pure, no I/O.

Feeds and aggregators hand on a headline as the publisher's page titled it: its outlet's name
after it ("... - The New York Times", "... | Reuters") and a section label before it
("Opinion | ..."). Both are noise in a list that already names the outlets, and the first
makes a subject line read like a browser tab. `clean_headline` removes them, carefully:

- a suffix only when it names one of the item's own outlets (compared without case, accents,
  punctuation or a leading "The"; "NYTimes.com" and "nytimes.com" name "The New York Times"),
  after a separator (" - ", " – ", " — ", " | ");
- a prefix only of the shapes sections take: one or two words before " | " ("Opinion | ",
  "Guest Essay | ") with a headline of three words or more after it, or a known label before
  a colon ("LIVE: ", "Analysis: "), never an ordinary "Ukraine: ..." headline;
- never all of it: what is left has a letter or a digit, else the headline stays as it was.

The result is never longer than the headline, never empty when it was not, and cleaning it
again changes nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from digest import messages

__all__ = ["OUTLETS_NAMED", "SECTION_LABELS", "clean_headline", "first_sentence", "outlets_line"]

# A headline, a separator and a suffix; the head is greedy, so the last separator is the one.
_SUFFIXED = re.compile(r"(.*\S)\s+[-\u2013\u2014|]\s+(\S.*)", re.S)
# One or two words (letters first) before a bar: "Opinion | ", "Guest Essay | ".
_LABEL_WORD = r"[^\W\d_][\w'\u2019.&-]*"
_BAR_PREFIX = re.compile(rf"\s*({_LABEL_WORD}(?: {_LABEL_WORD})?)\s+\|\s+(\S.*)", re.S)
# A label before a colon: only the labels below are taken off ("Ukraine: ..." stays).
_COLON_PREFIX = re.compile(r"\s*([^\W\d_]+(?: [^\W\d_]+)?)\s*:\s+(\S.*)", re.S)
# Labels publishers put before a headline, folded.
SECTION_LABELS = frozenset(
    {
        "analysis",
        "breaking",
        "breaking news",
        "commentary",
        "editorial",
        "exclusive",
        "explainer",
        "fact check",
        "factbox",
        "guest essay",
        "interview",
        "live",
        "live updates",
        "opinion",
        "podcast",
        "review",
        "update",
        "updated",
        "video",
        "watch",
    }
)
_BAR_LABEL_CHARS = 24
_MIN_HEADLINE_WORDS = 3  # after a bar label: fewer, and the "label" is the headline
_WORD = re.compile(r"[^\W_]")
_NOT_ALNUM = re.compile(r"[\W_]+")
_NAME_WORDS = re.compile(r"[^\W_]+")
# Where a sentence ends: ".", "!" or "?" (closing quotes after it), then a space and a capital,
# a digit or an opening quote; not after a title or an initial ("Mr. Smith", "J. Doe").
_SENTENCE_END = re.compile(r"([.!?][\"'\u201d\u2019)]*)\s+(?=[\"'\u201c\u2018(]?[A-Z0-9])")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr gen gov sen rep prof inc co corp ltd no vs mt ft lt col sgt".split()
)


def clean_headline(title: str, outlets: Iterable[str] = ()) -> str:
    """`title` without a section label before it and the name of one of `outlets` (the item's
    own) after it; as it was when neither is there (see the module docstring)."""
    names = _Names(outlets)
    while True:
        shorter = _strip_once(title, names)
        if shorter == title:
            return title
        title = shorter


OUTLETS_NAMED = 3  # outlets named on a "More headlines" line; the rest are counted


def outlets_line(
    names: Sequence[str], shown: int = OUTLETS_NAMED, *, language: str | None = "en"
) -> str:
    """Who told a headline's story, in one line: "BBC, Reuters and 2 more" (in `language`, a
    reader's: "BBC, Reuters und 2 weitere"); "" for none."""
    names = [n for n in dict.fromkeys(" ".join(n.split()) for n in names) if n]
    if len(names) <= shown:
        return ", ".join(names)
    more = messages.catalogue(language).gettext("%(names)s and %(n)s more")
    return more % {"names": ", ".join(names[:shown]), "n": len(names) - shown}


def first_sentence(text: str) -> str:
    """The first sentence of `text` (all of it when it has one sentence); whitespace collapsed."""
    text = " ".join(text.split())
    for match in _SENTENCE_END.finditer(text):
        before = text[: match.start()].rsplit(" ", 1)[-1]
        word = before.strip("\"'(\u201c\u2018").casefold()
        if len(word) == 1 or word in _ABBREVIATIONS:
            continue  # an initial or a title: the sentence goes on
        return text[: match.end(1)]
    return text


def _strip_once(title: str, names: _Names) -> str:
    # The outlet first: "Markets wrap | Reuters" is a headline and its outlet, not a section.
    split = _SUFFIXED.fullmatch(title)
    if split and _has_word(split.group(1)) and names.named(split.group(2)):
        return split.group(1).strip()
    bar = _BAR_PREFIX.fullmatch(title)
    if (
        bar
        and len(bar.group(1)) <= _BAR_LABEL_CHARS
        and len(_NAME_WORDS.findall(bar.group(2))) >= _MIN_HEADLINE_WORDS
    ):
        return bar.group(2).rstrip()
    colon = _COLON_PREFIX.fullmatch(title)
    if colon and _fold_words(colon.group(1)) in SECTION_LABELS and _has_word(colon.group(2)):
        return colon.group(2).rstrip()
    return title


def _has_word(text: str) -> bool:
    return bool(_WORD.search(text))


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _fold_words(text: str) -> str:
    return " ".join(_fold(text).split())


def _compact(name: str) -> str:
    """A name as outlets are compared: folded, without a leading "the", letters and digits."""
    return _NOT_ALNUM.sub("", _fold_words(name).removeprefix("the "))


def _abbreviation(name: str) -> str:
    """How a site shortens a name: "nytimes" (New York Times), "latimes" (Los Angeles Times)."""
    words = _NAME_WORDS.findall(_fold_words(name).removeprefix("the "))
    if len(words) < 2:
        return ""
    return "".join(w[0] for w in words[:-1]) + words[-1]


class _Names:
    """An item's outlet names, in the forms a headline's suffix may give them."""

    def __init__(self, outlets: Iterable[str]) -> None:
        forms: set[str] = set()
        for name in outlets:
            compact = _compact(name)
            forms.update((compact, _abbreviation(name)))
            # A host given as the outlet ("nytimes.com", "www.bbc.co.uk"): its first label.
            host = _fold(name.strip()).removeprefix("www.")
            if "." in host and " " not in host:
                forms.add(_NOT_ALNUM.sub("", host.split(".")[0]))
        forms.discard("")
        self.forms = frozenset(forms)

    def named(self, suffix: str) -> bool:
        if not self.forms or not _has_word(suffix):
            return False
        compact = _compact(suffix)
        host = _fold(suffix.strip()).removeprefix("www.")
        if "." in host and " " not in host:  # "Reuters.com"
            compact = _NOT_ALNUM.sub("", host.split(".")[0])
        return bool({compact, _abbreviation(suffix)} & self.forms)

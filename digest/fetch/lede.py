"""Find the opening of a page's article in its HTML, fast, for the fast extraction path.

The fast path reads a page in growing prefixes (64 KB, 128 KB, ...) and calls `find_lede` on each;
it stops reading once the lede is an article's. So the function copes with truncated HTML (a
paragraph still arriving is left out), costs about a millisecond beyond parsing, and only says
"article" when it is confident.

How: score every `<p>` by its text minus link text; discount paragraphs inside boilerplate
(cookie banners, comments, newsletter boxes, sidebars... recognised by tag, class and id, unless
the "boilerplate" holds most of the page: then it is layout); give each score to the paragraph's
parent and less to its ancestors further up, like Readability. The best-scoring element holds the
article. Its paragraphs, minus bylines, dates, captions, notices and boxes inside it, make the
lede, reaching back for first paragraphs kept in a sibling element but not into a standfirst.
`bench/lede_quality.py` measures it against the alternatives on real pages.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Literal

from selectolax.lexbor import LexborHTMLParser, LexborNode

from digest.fetch.shape import bound_html

LedeKind = Literal["article", "meta", ""]


@dataclass(frozen=True, slots=True)
class Lede:
    """The opening of a page's article (`kind` "article"), its description meta tag ("meta"), or
    nothing (""; `text` is then empty). `site`: the publisher the page names itself
    (`og:site_name`, else the JSON-LD `publisher`'s name), "" when none, and `title` its own
    headline (`og:title`, else `<title>`): a feed that relays several publishers' pages is
    shown naming each (`digest.fetch.aggregators.page_outlet`)."""

    text: str
    kind: LedeKind
    site: str = ""
    title: str = ""


NO_LEDE = Lede("", "")
_MAX_SITE_NAME = 80
_MAX_TITLE = 400
_MAX_JSON_LD = 8  # JSON-LD blocks (and objects in one) looked at for a publisher
_MAX_JSON_LD_CHARS = 200_000

# Removed before anything else: never visible text. `rt`/`rp` are ruby annotations (furigana),
# which would otherwise be read inline with the characters they annotate.
_INVISIBLE_TAGS = "script style noscript template svg rt rp".split()
# Elements that do not hold an article's running text. `header` only counts outside `article`
# and `main`: inside them it holds the title and often the standfirst.
_NOISE_TAGS = frozenset("nav footer aside figure figcaption button select textarea dialog".split())

# Class/id words that mark boilerplate, matched as whole words of a class or id token ("ad" in
# "ad-slot" but not in "header"; "newsletterBox" is "newsletter" + "box").
_WEAK_WORDS = frozenset(
    (
        "ad ads advert advertisement adslot sponsor sponsored promo banner share sharing sharebar "
        "social socials related recommended recommendations breadcrumb breadcrumbs byline author "
        "authors caption captions credit credits copyright menu sidebar widget popup modal flyout "
        "tooltip overlay tags meta dateline date toolbar "
        "paywall feedback carousel slider slides lightbox hidden hide print"
    ).split()
)
# Strong words win over signs of content ("comment-body" is still a comment), and over size.
_STRONG_WORDS = frozenset(
    (
        "cookie cookies consent gdpr newsletter comment comments disqus outbrain taboola "
        "subscribe subscription abonnement suscripcion references bibliography footnotes"
    ).split()
)
_BOILER_WORDS = _WEAK_WORDS | _STRONG_WORDS | {"pop"}  # "pop-up" is read as "popup"
# A weakly marked element is kept when another of its tokens says it holds content:
# "main-sidebar-wrap article-content" is a layout wrapper, "post-meta" is not content.
_CONTENT_WORDS = frozenset("article content entry main post story body text".split())
# Classes of standfirsts, teasers and summaries. Main-text extraction (trafilatura, and so our
# benchmark) mostly leaves them out, so the lede does not reach back into them.
_SUMMARY_WORDS = frozenset(
    (
        "teaser intro lead lede excerpt description desc summary standfirst chapo dek subtitle "
        "subline subheadline kicker abstract"
    ).split()
)
_WORD_RE = re.compile(r"[a-z]+|[A-Z][a-z]*")  # splits "cookie-banner", "newsletterBox", "ad_slot"
# Class tokens that describe the page rather than the element: WordPress puts the post's
# categories and tags on its <article> and <body> ("category-newsletter", "tag-social-media").
_TAXONOMY_PREFIXES = ("category-", "tag-", "tag_", "topic-", "postid", "has-", "with-", "no-")

_META_SELECTORS = (
    'meta[property="og:description"]',
    'meta[name="twitter:description"]',
    'meta[name="description"]',
    'meta[property="description"]',
)

# Paragraphs that open many articles without being part of them.
_BYLINE_RE = re.compile(
    r"^(?:by|von|par|di|por|door|av|af|updated|published|posted|aktualisiert|veröffentlicht|"
    r"stand|erstellt|geschrieben|foto|fotos|photo|bild|image|quelle|source|lesezeit|"
    r"reading time|\d+\s*min)\b",
    re.IGNORECASE,
)
_DATE_RE = re.compile(
    r"\b\d{1,2}[./]\s?\d{1,2}[./]\s?\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b"
    r"|\b\d{1,2}\.? (?:jan|feb|mär|mar|apr|mai|may|jun|jul|aug|sep|okt|oct|nov|dez|dec)",
    re.IGNORECASE,
)
# Photo credits and captions (in a short paragraph).
_CREDIT_MARKS = (
    "©",
    "foto:",
    "fotos:",
    "photo:",
    "photos:",
    "bild:",
    "bildquelle:",
    "image:",
    "credit:",
    "(foto",
    "(photo",
    "(bild",
    "istock",
    "getty images",
    "shutterstock",
    "picture alliance",
    "picture-alliance",
)
# Notices about the page rather than the story: consent, scripts, subscriptions, affiliate links.
# (Substring tests: a regex alternation costs ~50 µs a paragraph, these ~5 µs.)
_NOTICE_MARKS = (
    "cookie",
    "javascript",
    "browser",
    "einwilligung",
    "consent",
    "datenschutzerkl",
    "affiliate",
    "newsletter",
    "subscri",
    "suscri",
    "abonn",
    "passwor",
)
_P_OPEN_RE = re.compile(r"<p[\s>]", re.IGNORECASE)
_BLOCK_CLOSE_RE = re.compile(r"</(?:p|div|section|article|main|body|td|li)\b", re.IGNORECASE)
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_INVISIBLE_RE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\xad]")

_MIN_PARAGRAPH = 40  # characters; shorter ones are headings, dates, bylines, buttons
_MIN_CJK_PARAGRAPH = 14  # the same for Chinese, Japanese and Korean, denser per character
_CJK_WEIGHT = 3.0  # so that a short Chinese article clears the same bar as a Latin one
_MIN_ARTICLE_SCORE = 250  # less clean paragraph text than this is not trusted as an article
_BOILERPLATE_DISCOUNT = 0.1
_WRAPPER_SHARE = 0.5  # a weakly marked element holding this share of the text is a page wrapper
_LAYOUT_SHARE = 0.2  # below this share of clean text, weak markers describe the layout
_NOTICE_MAX = 500  # characters; a longer paragraph that mentions cookies is about cookies
# A paragraph's score goes to its parent, half to its grandparent and less further up (as in
# Readability), so that one paragraph per <div> still adds up to an article.
_DIVIDERS = (1, 2, 6, 9)
_SCOPE_LEVELS = 4  # how far above the article's body to look for its <article> element


# An article lede is made of <p> elements (`_article_paragraphs`).
_PARAGRAPH_TAG = re.compile(rb"<p[\s/>]", re.IGNORECASE)


def could_hold_article(html: bytes | bytearray) -> bool:
    """False when `find_lede` of this (ASCII-compatible) HTML cannot be of kind "article": it
    has no <p> tag. A reader of a page's prefixes skips parsing those. True says nothing."""
    return _PARAGRAPH_TAG.search(html) is not None


def find_lede(html: str, max_chars: int = 300) -> Lede:
    """The opening of the article in `html` (possibly truncated), at most `max_chars` long.

    Kind "article" means an article was found with confidence: a caller reading the page in
    prefixes can stop. Otherwise the page's description meta tags (kind "meta"), then nothing
    (kind "", empty text). The text is whitespace-normalised and, when cut, ends in "…".
    """
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    if not html or html.isspace():
        return NO_LEDE
    html = bound_html(html)
    tree = LexborHTMLParser(html)
    site, title = _site_name(tree), _page_title(tree)
    paragraphs = _article_paragraphs(tree, html, max_chars)
    if paragraphs:
        text = _cut(" ".join(paragraphs), max_chars)
        if text:
            return Lede(text, "article", site, title)
    head = tree.head
    if head is not None:
        for selector in _META_SELECTORS:
            node = head.css_first(selector)
            if node is not None:
                text = _cut(node.attributes.get("content") or "", max_chars)
                if text:
                    return Lede(text, "meta", site, title)
    return Lede("", "", site, title)


def _site_name(tree: LexborHTMLParser) -> str:
    """The page's `og:site_name`, else its JSON-LD `publisher`'s name, whitespace collapsed;
    "" when none or too long to be one."""
    head = tree.head
    node = head.css_first('meta[property="og:site_name"]') if head is not None else None
    name = " ".join((node.attributes.get("content") or "").split()) if node is not None else ""
    if not name:
        name = _publisher(tree)
    return name if len(name) <= _MAX_SITE_NAME else ""


def _publisher(tree: LexborHTMLParser) -> str:
    """The `publisher.name` of the page's first JSON-LD block that gives one ("" when none)."""
    for node in tree.css('script[type="application/ld+json"]')[:_MAX_JSON_LD]:
        try:
            data = json.loads(node.text(deep=True)[:_MAX_JSON_LD_CHARS])
        except (ValueError, RecursionError):
            continue
        blocks = data if isinstance(data, list) else [data]
        for block in blocks[:_MAX_JSON_LD]:
            if isinstance(block, dict) and isinstance(block.get("@graph"), list):
                blocks = [*blocks, *block["@graph"][:_MAX_JSON_LD]]
        for block in blocks:
            publisher = block.get("publisher") if isinstance(block, dict) else None
            if isinstance(publisher, list) and publisher:
                publisher = publisher[0]
            name = publisher.get("name") if isinstance(publisher, dict) else None
            if isinstance(name, str) and name.strip():
                return " ".join(name.split())
    return ""


def _page_title(tree: LexborHTMLParser) -> str:
    """The page's own headline: `og:title`, else its `<title>`; "" when none or too long."""
    head = tree.head
    if head is None:
        return ""
    node = head.css_first('meta[property="og:title"]')
    title = (node.attributes.get("content") or "") if node is not None else ""
    if not title.strip() and (node := head.css_first("title")) is not None:
        title = node.text(deep=True)
    title = " ".join(title.split())
    return title if len(title) <= _MAX_TITLE else ""


@dataclass(slots=True)
class _Paragraph:
    node: LexborNode
    text: str
    score: float
    flags: tuple[int, ...]  # mem_ids of the boilerplate elements it sits in


class _Boilerplate:
    """Which elements of one page are boilerplate, memoised per element."""

    def __init__(self) -> None:
        self.strong: dict[int, bool] = {}  # flagged element -> strongly marked?
        self._own: dict[int, bool | None] = {}  # element -> None, weak (False), strong (True)
        # element -> (flags of it and its ancestors, inside <article>/<main>?)
        self._chain: dict[int, tuple[tuple[int, ...], bool]] = {}

    def own(self, node: LexborNode, in_article: bool) -> bool | None:
        """None if `node` is not boilerplate, else whether it is strongly marked."""
        key = node.mem_id
        if key in self._own:
            return self._own[key]
        tag = node.tag
        verdict: bool | None
        if tag in _NOISE_TAGS or (tag == "header" and not in_article):
            verdict = False
        else:
            verdict = _marker(node)
            if verdict is False and tag in ("article", "main"):
                verdict = None  # only strong words count against these
        self._own[key] = verdict
        if verdict is not None:
            self.strong[key] = verdict
        return verdict

    def flags(self, node: LexborNode) -> tuple[int, ...]:
        """The boilerplate elements among `node` and its ancestors."""
        path = []
        current: LexborNode | None = node
        flags: tuple[int, ...] = ()
        in_article = False
        while current is not None and current.tag not in ("body", "html"):
            cached = self._chain.get(current.mem_id)
            if cached is not None:
                flags, in_article = cached
                break
            path.append(current)
            current = current.parent
        for element in reversed(path):
            if self.own(element, in_article) is not None:
                flags = (*flags, element.mem_id)
            in_article = in_article or element.tag in ("article", "main")
            self._chain[element.mem_id] = (flags, in_article)
        return flags


def _marker(node: LexborNode) -> bool | None:
    """None if `node`'s attributes do not mark it as boilerplate, else whether strongly."""
    attrs = node.attributes  # one dict: faster than several lookups through `node.attrs`
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return False
    classes, ident = attrs.get("class"), attrs.get("id")
    if not classes and not ident:
        return None
    return _marker_verdict(f"{classes or ''} {ident or ''}")


@functools.lru_cache(maxsize=4096)  # class strings repeat within a page and across a site's pages
def _marker_verdict(marker: str) -> bool | None:
    if _BOILER_WORDS.isdisjoint(w.lower() for w in _WORD_RE.findall(marker)):
        return None  # the common case, decided in one pass
    weak = content = False
    for token in marker.replace("pop-up", "popup").split():
        if token.lower().startswith(_TAXONOMY_PREFIXES):
            continue
        words = {w.lower() for w in _WORD_RE.findall(token)}
        if words & _STRONG_WORDS:
            return True
        if words & _WEAK_WORDS:
            weak = True
        elif words & _CONTENT_WORDS:
            content = True
    return False if weak and not content else None


def _in_summary(node: LexborNode, top: LexborNode | None) -> bool:
    """True if `node` sits in a header, standfirst or teaser (below `top`, if given)."""
    current: LexborNode | None = node
    stop = top.mem_id if top is not None else -1
    while current is not None and current.mem_id != stop and current.tag != "body":
        if current.tag == "header":
            return True
        attrs = current.attributes
        marker = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
        if any(w.lower() in _SUMMARY_WORDS for w in _WORD_RE.findall(marker)):
            return True
        current = current.parent
    return False


def _article_paragraphs(tree: LexborHTMLParser, html: str, max_chars: int) -> list[str]:
    """The article's first paragraphs, enough for `max_chars`; none if no article is found."""
    body = tree.body
    if body is None:
        return []
    boilerplate = _Boilerplate()
    paragraphs, total = _scored_paragraphs(_paragraph_nodes(tree, body, html), body, boilerplate)
    if not paragraphs:
        return []
    effective = _effective_boilerplate(paragraphs, total, boilerplate)
    best = _best_element(paragraphs, effective)
    if best is None:
        return []
    inside = {node.mem_id for node in best.css("p")}
    if sum(p.score for p in paragraphs if p.node.mem_id in inside) < _MIN_ARTICLE_SCORE:
        return []
    scope = _lede_scope(best)
    first = _reach_back(paragraphs, inside, best, scope, effective)
    outside = set(boilerplate.flags(scope))
    return _lede(paragraphs[first:], inside, effective, outside, max_chars)


def _paragraph_nodes(tree: LexborHTMLParser, body: LexborNode, html: str) -> list[LexborNode]:
    """The page's `<p>` elements, invisible text removed and line breaks made spaces; the last
    left out while it is still arriving (its text may stop mid-word)."""
    tree.strip_tags(_INVISIBLE_TAGS)
    for br in body.css("br"):  # "line<br>line" is two lines, not "lineline"
        br.replace_with(" ")
    nodes = body.css("p")
    if nodes and _last_paragraph_unfinished(html):
        nodes = nodes[:-1]
    return nodes


def _scored_paragraphs(
    nodes: list[LexborNode], body: LexborNode, boilerplate: _Boilerplate
) -> tuple[list[_Paragraph], float]:
    """The paragraphs long enough to count, each scored by its text minus its link text
    (Chinese, Japanese and Korean weighed up, notices down), and the sum of their scores."""
    link_chars: dict[int, int] = {}  # <p> -> characters of link text in it
    for a in body.css("p a"):
        holder = a.parent
        while holder is not None and holder.tag != "p":
            holder = holder.parent
        if holder is not None:
            link_chars[holder.mem_id] = link_chars.get(holder.mem_id, 0) + len(a.text(strip=True))

    paragraphs: list[_Paragraph] = []
    total = 0.0
    for node in nodes:
        raw = node.text()
        if len(raw) < _MIN_PARAGRAPH and not (
            len(raw) >= _MIN_CJK_PARAGRAPH and _CJK_RE.search(raw)
        ):
            continue
        text = raw.strip()  # normalised only if it makes the lede: split/join costs ~0.1 ms a page
        links = link_chars.get(node.mem_id, 0)
        if not text or links > len(text) / 2:
            continue
        score: float = len(text) - links
        if not text.isascii() and _CJK_RE.search(text):
            score *= _CJK_WEIGHT
        if score < _MIN_CJK_PARAGRAPH:
            continue
        if len(text) < _NOTICE_MAX and _mentions(text, _NOTICE_MARKS):
            score *= _BOILERPLATE_DISCOUNT
        paragraphs.append(_Paragraph(node, text, score, boilerplate.flags(node)))
        total += score
    return paragraphs, total


def _effective_boilerplate(
    paragraphs: list[_Paragraph], total: float, boilerplate: _Boilerplate
) -> set[int]:
    """The boilerplate elements that count as such on this page: not a weakly marked element
    holding most of its text, and only the strongly marked ones when the markers cover most
    of it (then they describe the page's layout)."""
    # A weakly marked element holding most of the page's text is a layout wrapper
    # ("has-sidebar", "o-section--has-ads"), not boilerplate.
    mass: dict[int, float] = {}
    for paragraph in paragraphs:
        for flag in paragraph.flags:
            mass[flag] = mass.get(flag, 0.0) + paragraph.score
    effective = {
        flag
        for flag, weight in mass.items()
        if boilerplate.strong[flag] or weight < _WRAPPER_SHARE * total
    }
    clean = sum(p.score for p in paragraphs if not any(f in effective for f in p.flags))
    if clean < _LAYOUT_SHARE * total:
        # Most of the page's text marked as boilerplate: the markers describe its layout
        # ("gallery--section", one <blockquote> per chapter). Trust only the strong ones.
        effective = {flag for flag in effective if boilerplate.strong[flag]}
    return effective


def _best_element(paragraphs: list[_Paragraph], effective: set[int]) -> LexborNode | None:
    """The element holding the article: the best scored once each paragraph's score (cut in
    boilerplate, from here on) goes to its parent and less to its ancestors further up."""
    scores: dict[int, float] = {}
    owners: dict[int, LexborNode] = {}
    for paragraph in paragraphs:
        if any(flag in effective for flag in paragraph.flags):
            paragraph.score *= _BOILERPLATE_DISCOUNT
        ancestor = paragraph.node.parent
        for divider in _DIVIDERS:
            if ancestor is None or ancestor.tag in ("body", "html"):
                break
            key = ancestor.mem_id
            scores[key] = scores.get(key, 0.0) + paragraph.score / divider
            owners[key] = ancestor
            ancestor = ancestor.parent
    if not scores:
        return None
    return owners[max(scores, key=scores.__getitem__)]


def _reach_back(
    paragraphs: list[_Paragraph],
    inside: set[int],
    best: LexborNode,
    scope: LexborNode,
    effective: set[int],
) -> int:
    """The index of the article's first paragraph, added to `inside` (the paragraphs of the
    article's element) with those before it that open the article.

    The article's first paragraphs often sit just before the element holding the rest: in a
    sibling element, or in a run of identical blocks ("section > div.col-md-8 > p", repeated).
    Reach back for them, but not into boilerplate or the standfirst."""
    first = next(i for i, p in enumerate(paragraphs) if p.node.mem_id in inside)
    around = {node.mem_id for node in scope.css("p")} if scope is not best else inside
    signature = _signature(paragraphs[first].node.parent)
    while first > 0:
        previous = paragraphs[first - 1]
        near = previous.node.mem_id in around
        if not near and _signature(previous.node.parent) != signature:
            break
        if any(f in effective for f in previous.flags) or _in_summary(
            previous.node, scope if near else None
        ):
            break
        inside.add(previous.node.mem_id)
        first -= 1
    return first


def _lede(
    paragraphs: list[_Paragraph],
    inside: set[int],
    effective: set[int],
    outside: set[int],
    max_chars: int,
) -> list[str]:
    """The texts of the article's `paragraphs`, from its first, enough for `max_chars`: those in
    its element, not in boilerplate inside it (`outside`: boilerplate around the whole article
    does not count), and not bylines, datelines, credits or notices."""
    lede: list[str] = []
    length = 0
    for paragraph in paragraphs:
        if paragraph.node.mem_id not in inside or any(
            f in effective and f not in outside for f in paragraph.flags
        ):
            continue
        text = " ".join(paragraph.text.split())
        if not _is_aside(text):
            lede.append(text)
            length += len(text) + 1
            if length > max_chars:
                break
    return lede


def _signature(node: LexborNode | None) -> str:
    if node is None:
        return ""
    return f"{node.tag}.{node.attributes.get('class') or ''}"


def _lede_scope(best: LexborNode) -> LexborNode:
    """The element around the article's body that may also hold its first paragraphs: the
    enclosing <article> if there is one close by, else the body's parent."""
    node: LexborNode | None = best
    for _ in range(_SCOPE_LEVELS):
        if node is None or node.tag in ("body", "html"):
            break
        if node.tag == "article":
            return node
        node = node.parent
    parent = best.parent
    if parent is None or parent.tag in ("body", "html"):
        return best
    return parent


def _last_paragraph_unfinished(html: str) -> bool:
    """True when the HTML ends inside its last <p>: a prefix of a page still being read."""
    tail = html[-16384:]
    starts = [m.end() for m in _P_OPEN_RE.finditer(tail)]
    return bool(starts) and _BLOCK_CLOSE_RE.search(tail, starts[-1]) is None


def _is_aside(text: str) -> bool:
    """A byline, dateline, photo credit or notice rather than the article's running text."""
    if len(text) < 120 and (_BYLINE_RE.match(text) or _DATE_RE.search(text)):
        return True
    if len(text) < 250 and _mentions(text, _CREDIT_MARKS):
        return True
    return len(text) < _NOTICE_MAX and _mentions(text, _NOTICE_MARKS)


def _mentions(text: str, marks: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(mark in lowered for mark in marks)


def _cut(text: str, max_chars: int) -> str:
    """`text` normalised and cut to at most `max_chars` at a word boundary, marked with "…"."""
    text = " ".join(_INVISIBLE_RE.sub("", text).split())
    if len(text) <= max_chars:
        return text
    budget = max_chars - 1  # room for the ellipsis
    head = text[: budget + 1]
    space = head.rfind(" ")
    if space >= budget // 2:
        head = head[:space]
    else:  # no spaces to cut at: a script written without them, or one enormous token
        head = head[:budget]
    head = head.rstrip(" ,;:-–—")
    return f"{head}…" if head else ""

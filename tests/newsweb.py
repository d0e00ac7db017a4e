"""A local "news web" for tests and benchmarks: an aiohttp server on 127.0.0.1, random ports.

It serves article pages wrapped in realistic boilerplate (navigation, a cookie notice and a
newsletter box before the article, over 64 KB of inline scripts before its first paragraph, related
links, footer), RSS and Atom feeds with conditional GET, PDFs, slow and hanging responses,
redirect chains, redirects to private addresses, a gzip bomb and pages in legacy encodings;
any number of distinct feeds (`/feeds/many/<n>.rss`), home pages that advertise feeds, and
aggregators' feeds (`render_google_news`, `render_bing_news`) that name whose articles they link.

In tests, use the fixtures (`pytest_plugins = ["tests.newsweb"]`):

    async def test_x(news_web, http_client): ...

From a script:

    async with NewsWeb(sites=8) as web:
        web.set_latency("/technology/chip-plant.html", 0.2, site=3)
        url = web.url("/technology/chip-plant.html", site=3)

Everything served is data: add a `Route` (or an `Article` to `ARTICLES`) to add a page. `sites`
starts that many listeners (one port each), which a client sees as different hosts; every route
is served on every site. `web.hits` counts requests per path, `web.hits_for(url)` per URL, and
`web.streamed` the body bytes written by streamed routes (chunked, stalling, endless).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import hashlib
import json
import random
import struct
import zlib
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from typing import Any
from urllib.parse import quote

import pytest
import pytest_asyncio
from aiohttp import web
from yarl import URL

from digest.config import FetchConfig
from digest.fetch.client import HttpClient
from digest.fetch.parsers import ParserPool

# ---------------------------------------------------------------------------------------------
# Content


@dataclass(frozen=True)
class Article:
    """A news article; `lede` is its real opening paragraph, which extraction should find."""

    slug: str
    category: str  # "technology" or "world"
    title: str
    lede: str
    paragraphs: tuple[str, ...]
    description: str  # the description meta tag: deliberately different from the lede
    published: datetime = datetime(2025, 5, 12, 6, 0, tzinfo=UTC)
    encoding: str = "utf-8"
    meta_charset: str = '<meta charset="utf-8">'  # how the page declares its encoding

    @property
    def path(self) -> str:
        return f"/{self.category}/{self.slug}.html"


ARTICLES: list[Article] = [
    Article(
        slug="chip-plant",
        category="technology",
        title="Chipmaker breaks ground on a plant that will run on river water",
        lede=(
            "The semiconductor maker Halvard Microsystems began building its third fabrication "
            "plant on Tuesday, a 4.2 billion euro project on the banks of the Elbe that the "
            "company says will recycle nine tenths of the water its production lines consume."
        ),
        paragraphs=(
            "Construction crews cleared the first of three sites at dawn, and the regional "
            "government said permits for the cooling system had been granted after a two-year "
            "review that drew more than four thousand public comments.",
            "Halvard's chief executive told reporters that the plant would make power-management "
            "chips for electric cars and wind turbines rather than the most advanced processors, "
            "a market in which the company competes on price and reliability.",
            "Environmental groups welcomed the recycling target but said they would watch the "
            "river's temperature closely during dry summers, when the Elbe has fallen to record "
            "lows in three of the past five years.",
            "The first wafers are expected in 2028. The company said it would hire about 1,800 "
            "people, half of them trained through a new apprenticeship programme run with the "
            "local technical university.",
        ),
        description="Halvard Microsystems starts work on its third fab. Read the full story.",
    ),
    Article(
        slug="open-model",
        category="technology",
        title="Research lab releases a small language model that runs on a laptop",
        lede=(
            "A university research lab on Monday released a compact language model that answers "
            "questions about scientific papers on an ordinary laptop, without sending any text to "
            "a remote server, and published the full recipe used to train it."
        ),
        paragraphs=(
            "The model has 1.3 billion parameters, a fraction of the size of commercial systems, "
            "and was trained for eleven days on a cluster the lab shares with the physics "
            "department, according to the accompanying technical report.",
            "Its authors said the point was not to beat larger models but to show what a group "
            "with a modest budget could build and audit end to end, from the choice of training "
            "data to the evaluation suite.",
            "Independent researchers who tried the release said it summarised abstracts well but "
            "struggled with tables and equations, a limitation the lab acknowledges in its notes.",
        ),
        description="A compact, open model for reading papers offline.",
    ),
    Article(
        slug="battery-recall",
        category="technology",
        title="E-bike maker recalls 60,000 batteries after a string of fires",
        lede=(
            "Velora, one of Europe's largest electric bicycle brands, is recalling about 60,000 "
            "battery packs after regulators linked a faulty cell supplier to eleven fires in "
            "apartment buildings over the winter, none of which caused serious injuries."
        ),
        paragraphs=(
            "Owners are being asked to stop charging the affected packs indoors and to book a free "
            "replacement through dealers; the company said new batteries would arrive within six "
            "weeks for most customers.",
            "The fires all involved packs produced during a four-month window in 2023, when a "
            "supplier changed the insulation between cells, investigators said in a summary "
            "published alongside the recall notice.",
            "Shares in Velora's parent company fell four percent in morning trading before "
            "recovering most of the loss after analysts estimated the cost of the recall.",
        ),
        description="Velora recall: what owners need to know.",
    ),
    Article(
        slug="satellite-broadband",
        category="technology",
        title="Alpine villages get broadband from low-orbit satellites",
        lede=(
            "Twelve mountain villages that never had a wired internet connection were switched "
            "to satellite broadband this week under a pilot run by the regional government, which "
            "is paying for the dishes and the first two years of service."
        ),
        paragraphs=(
            "Residents said download speeds were ten times what they had managed over mobile "
            "networks, although heavy snow on the dishes caused short outages during a storm on "
            "the pilot's second night.",
            "The regional minister for infrastructure said laying fibre to the villages would have "
            "cost more than 30 million euros and taken at least six years because of the terrain.",
            "Critics argue the subsidy ties the region to a single foreign provider and that the "
            "money would be better spent on shared fibre that could last for decades.",
        ),
        description="Satellite internet reaches remote valleys.",
    ),
    Article(
        slug="harbour-strike",
        category="world",
        title="Dock workers end a nine-day strike at the country's busiest port",
        lede=(
            "Dock workers at the port of Valmora voted on Sunday to end a nine-day strike that had "
            "left more than a hundred container ships waiting offshore, after the port authority "
            "agreed to limit night shifts and to hire four hundred additional crane operators."
        ),
        paragraphs=(
            "The union said 82 percent of members backed the agreement in a ballot that closed at "
            "noon; loading resumed within hours and the first ships were guided into berths "
            "before nightfall.",
            "Retailers had warned of empty shelves before the holidays, and the government had "
            "threatened to order workers back if talks failed a second time.",
            "Shipping analysts expect it to take about three weeks to clear the backlog, with "
            "knock-on delays at ports further along the coast.",
        ),
        description="The Valmora port strike is over.",
    ),
    Article(
        slug="election-recount",
        category="world",
        title="Court orders a recount in a province decided by 212 votes",
        lede=(
            "The constitutional court on Thursday ordered a full recount of ballots in the "
            "northern province of Kestria, where the governing party's candidate was declared the "
            "winner by 212 votes out of more than 900,000 cast in last month's regional election."
        ),
        paragraphs=(
            "Judges said irregularities in the handling of postal votes in three districts were "
            "serious enough to cast doubt on the result, although they found no evidence of "
            "deliberate fraud.",
            "The recount will be supervised by observers from all parties and is expected to take "
            "two weeks. The declared winner said he welcomed the decision and expected to be "
            "confirmed.",
            "Opposition leaders called the ruling a victory for transparency and urged the "
            "electoral commission to publish district-level results as they are counted.",
        ),
        description="Kestria recount ordered by the court.",
    ),
    Article(
        slug="cafe-culture",
        category="world",
        title="Zürich's oldest cafés fight for their terraces",
        lede=(
            "Les cafés historiques de Zürich, du Café Odéon à la Brasserie Süd, défendent leurs "
            "terrasses face à un projet municipal qui réduirait de moitié l'espace réservé aux "
            "tables en été, une mesure que les gérants jugent fatale à leur saison."
        ),
        paragraphs=(
            "La municipalité affirme que les trottoirs élargis sont nécessaires pour les piétons "
            "et les cyclistes, dont le nombre a doublé en dix ans dans le centre-ville.",
            "Plusieurs gérants ont lancé une pétition qui a recueilli plus de 14 000 signatures "
            "en une semaine, et réclament une exception pour les établissements centenaires.",
            "Le conseil municipal doit se prononcer en juin ; un compromis prévoyant des "
            "terrasses plus étroites mais ouvertes plus tard le soir est à l'étude.",
        ),
        description="Zürich café terraces at risk.",
        encoding="latin-1",
        meta_charset='<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
    ),
    Article(
        slug="tokyo-robots",
        category="world",
        title="東京で介護ロボットの実証実験が始まる",
        lede=(
            "東京都は月曜日、高齢者施設で介護ロボットを使う大規模な実証実験を始めたと発表した。"
            "都内の二十の施設で、入居者の移動や見守りを手伝うロボットが一年間にわたって導入される。"
        ),
        paragraphs=(
            "都の担当者によると、介護職員の不足は年々深刻になっており、ロボットの導入で夜間の"
            "見回りにかかる負担を三割ほど減らせると見込んでいる。実験の結果は来年の春に公表される予定だ。",
            "一方で、入居者の家族からはプライバシーへの配慮を求める声も上がっている。"
            "カメラの映像は施設の外に送られず、一定期間が過ぎると自動的に消去される仕組みだという。",
            "専門家は、ロボットはあくまで職員を助ける道具であり、人と人との触れ合いに代わる"
            "ものではないと指摘している。施設の側も、空いた時間を入居者との会話に使いたいと話している。",
        ),
        description="都が介護ロボットの実証実験を開始。",
        encoding="shift_jis",
        meta_charset='<meta charset="Shift_JIS">',
    ),
]

SITE_NAME = "The Local Ledger"
NAV_SECTIONS = [
    "Home",
    "World",
    "Politics",
    "Business",
    "Markets",
    "Technology",
    "Science",
    "Health",
    "Sport",
    "Football",
    "Tennis",
    "Culture",
    "Books",
    "Film",
    "Music",
    "Travel",
    "Food",
    "Opinion",
    "Letters",
    "Podcasts",
    "Video",
    "Puzzles",
    "Weather",
]


@functools.cache
def _script_blob(seed: int, size: int) -> str:
    """A deterministic inline script of about `size` characters, like a news site's state dump."""
    rng = random.Random(seed)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "slot",
        "unit",
        "bid",
        "floor",
        "consent",
        "vendor",
        "track",
        "pixel",
        "feed",
    ]
    items: list[dict[str, Any]] = []
    length = 0
    while length < size:
        item = {
            "id": rng.randrange(10**9),
            "slot": f"{rng.choice(words)}-{rng.randrange(1000)}",
            "targeting": {rng.choice(words): [rng.choice(words) for _ in range(4)]},
            "html": "<div class=\\u0022ad\\u0022>" + rng.choice(words) * 8 + "</div>",
        }
        text = json.dumps(item)
        items.append(item)
        length += len(text) + 1
    return "window.__APP_STATE__ = " + json.dumps({"ads": items}) + ";"


def render_article(article: Article, *, script_bytes: int = 72_000) -> bytes:
    """The article inside a realistic page: most of the bytes before the lede are boilerplate."""
    nav = "".join(f'<li><a href="/{s.lower()}/">{s}</a></li>' for s in NAV_SECTIONS)
    related = "".join(
        f'<li><a href="{other.path}">{escape(other.title)}</a></li>'
        for other in ARTICLES
        if other.slug != article.slug
    )
    body = "".join(f"<p>{escape(p)}</p>\n" for p in article.paragraphs)
    ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "NewsArticle",
            "headline": article.title,
            "datePublished": article.published.isoformat(),
        },
        ensure_ascii=False,
    )
    html = f"""<!DOCTYPE html>
<html lang="en">
<head>
{article.meta_charset}
<title>{escape(article.title)} | {SITE_NAME}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="{escape(article.description)}">
<meta property="og:description" content="{escape(article.description)}">
<link rel="stylesheet" href="/static/site.css">
<script>{_script_blob(1, script_bytes // 3)}</script>
</head>
<body>
<header class="site-header">
  <a class="logo" href="/">{SITE_NAME}</a>
  <nav class="main-nav"><ul>{nav}</ul></nav>
</header>
<div id="cookie-consent" class="cookie-banner">
  <p>We use cookies and similar technologies to remember your choices, measure our audience and
  show you personalised advertising. By clicking "Accept all" you agree to this; you can change
  your mind at any time in the privacy settings at the bottom of every page.</p>
  <button>Accept all</button> <button>Manage settings</button>
</div>
<div class="newsletter-box">
  <p>Sign up for our free morning newsletter and get the day's most important stories, hand-picked
  by our editors, delivered to your inbox before breakfast every weekday.</p>
  <form action="/subscribe"><input type="email" name="email"><button>Sign up</button></form>
</div>
<script>{_script_blob(2, script_bytes // 3)}</script>
<script>{_script_blob(3, script_bytes - 2 * (script_bytes // 3))}</script>
<script type="application/ld+json">{ld}</script>
<main>
<article class="article-body">
<h1>{escape(article.title)}</h1>
<p class="byline">By Maren Holt, {article.published:%d %B %Y}</p>
<p>{escape(article.lede)}</p>
{body}</article>
<aside class="related"><h2>Related stories</h2><ul>{related}</ul></aside>
</main>
<footer class="site-footer">
  <p>© 2025 {SITE_NAME}. All rights reserved. Registered office: 1 Quay Street. Our journalism is
  funded by readers and advertisers; read our editorial code and complaints procedure.</p>
  <ul><li><a href="/privacy">Privacy</a></li><li><a href="/terms">Terms</a></li></ul>
</footer>
</body>
</html>
"""
    return html.encode(article.encoding, errors="xmlcharrefreplace")


ENDLESS_LINE = b'<li><a href="/live/%d.html">Live ticker: update number %d of the day</a></li>\n'


def hostile_article_start(article: Article | None = None) -> bytes:
    """A whole article page cut after its article, and a list opened for a ticker to follow."""
    page = render_article(article or ARTICLES[0], script_bytes=8_000)
    cut = page.index(b"</main>")
    return page[:cut] + b'<ul class="ticker">\n'


@functools.cache
def one_line_page(size: int = 10 << 20) -> bytes:
    """The article, then filler words to `size` bytes, with no line break anywhere."""
    start = hostile_article_start().replace(b"\n", b" ") + b"<li>"
    filler = b"ticker update " * ((size - len(start)) // 14 + 1)
    return (start + filler)[:size]


def render_meta_only() -> bytes:
    """A teaser page: navigation and a description meta tag, no article paragraphs."""
    nav = "".join(f'<li><a href="/{s.lower()}/">{s}</a></li>' for s in NAV_SECTIONS)
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Live: markets</title>
<meta name="description" content="{escape(META_ONLY_DESCRIPTION)}">
</head><body><nav><ul>{nav}</ul></nav><div id="app"></div>
<script>{_script_blob(4, 2000)}</script></body></html>""".encode()


META_ONLY_DESCRIPTION = (
    "Live coverage of today's markets: prices, analysis and reactions as they happen, updated "
    "through the trading day by our business desk."
)


HOSTILE_LEDE = (
    "Harbour pilots in Skarvik voted on Tuesday to end their strike after the port authority "
    "agreed to hire twelve more pilots and to cap night shifts at four a week."
)


def hostile_page(shape: str, size: int = 1_000_000) -> bytes:
    """About `size` bytes of one of the shapes that parsers pay for far more than for their size
    (see digest/fetch/shape.py), with a real article paragraph after them."""
    article = f"<p>{HOSTILE_LEDE}</p><p>{HOSTILE_LEDE}</p>"
    unit = HOSTILE_SHAPES[shape]
    head = "<!DOCTYPE html><html><head><title>Hostile</title></head><body>"
    if shape == "attributes":
        attrs = " ".join(f"a{i}=x" for i in range(size // 8))
        return f"{head}<div {attrs}>{article}</div></body></html>".encode()
    if shape == "comment":
        return f"{head}<!--{'x' * size}-->{article}</body></html>".encode()
    if shape == "unclosed-comment":
        return f"{head}{article}<!--{'<div>' * (size // 5)}".encode()
    return (head + unit * (size // len(unit)) + article).encode()


# What each shape repeats (the nesting ones never close what they open).
HOSTILE_SHAPES = {
    "nested-div": "<div>",
    "nested-ul": "<ul>",
    "nested-list": "<ul><li>",
    "nested-table": "<table><tr><td>",
    "nested-mixed": "<div><span><b><i><a href=x>",
    "nested-dl": "<dl><dt>a<dd>",
    "unclosed-p-b": "<p><b>",
    "unclosed-font": "<font>",
    "select-options": "<select><option>x" + "<option>x" * 999,
    "attributes": "",
    "comment": "",
    "unclosed-comment": "",
}


def tiny_pdf(text: str = "Annual report 2024") -> bytes:
    """A small but valid one-page PDF, with a correct cross-reference table."""
    return pdf_document([text])


def pdf_document(
    lines: list[str], *, title: str | None = None, size: int = 24, leading: int = 28
) -> bytes:
    """A valid one-page PDF with `lines` of Helvetica text (and a /Title when given)."""
    shows = " ".join(f"({line}) Tj 0 -{leading} Td" for line in lines)
    stream = f"BT /F1 {size} Tf 72 720 Td {shows} ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    info = b""
    if title is not None:
        objects.append(b"<< /Title (%s) >>" % title.encode("latin-1"))
        info = b" /Info %d 0 R" % len(objects)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    return bytes(out)


@functools.cache
def gzip_bomb(megabytes: int = 200) -> bytes:
    """An HTML-looking gzip body: ~1 KB on the wire per MB once inflated (200 MB → ~200 KB).

    Built from identical deflate blocks (each ends with a full flush, so it repeats exactly), which
    takes milliseconds instead of compressing 200 MB.
    """
    block = b" " * (1 << 20)
    prefix = b"<html><head><title>Totally normal page</title></head><body><p>"
    comp = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = comp.compress(prefix + block) + comp.flush(zlib.Z_FULL_FLUSH)
    repeat = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(prefix + block)
    for _ in range(megabytes - 1):
        crc = zlib.crc32(block, crc)
    size = len(prefix) + megabytes * len(block)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return header + first + repeat * (megabytes - 1) + comp.flush() + trailer


def gzip_bomb_size(megabytes: int = 200) -> int:
    return len(b"<html><head><title>Totally normal page</title></head><body><p>") + (
        megabytes << 20
    )


FEED_LAST_MODIFIED = datetime(2025, 5, 12, 7, 0, tzinfo=UTC)


def render_rss(base: str, category: str, articles: Iterable[Article] = ARTICLES) -> bytes:
    items = "".join(
        f"""<item>
<title>{escape(a.title)}</title>
<link>{base}{a.path}</link>
<guid isPermaLink="true">{base}{a.path}</guid>
<pubDate>{email.utils.format_datetime(a.published)}</pubDate>
<category>{a.category}</category>
<description>{escape(a.description)}</description>
</item>
"""
        for a in articles
        if a.category == category
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel>
<title>{SITE_NAME}: {category}</title>
<link>{base}/{category}/</link>
<description>{category} news from {SITE_NAME}</description>
<lastBuildDate>{email.utils.format_datetime(FEED_LAST_MODIFIED)}</lastBuildDate>
{items}</channel></rss>
""".encode()


def render_atom(base: str, category: str) -> bytes:
    entries = "".join(
        f"""<entry>
<title>{escape(a.title)}</title>
<link rel="alternate" type="text/html" href="{base}{a.path}"/>
<id>{base}{a.path}</id>
<updated>{a.published.isoformat()}</updated>
<category term="{a.category}"/>
<summary>{escape(a.description)}</summary>
</entry>
"""
        for a in ARTICLES
        if a.category == category
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<title>{SITE_NAME}: {category}</title>
<link rel="alternate" href="{base}/{category}/"/>
<id>{base}/feeds/{category}.atom</id>
<updated>{FEED_LAST_MODIFIED.isoformat()}</updated>
{entries}</feed>
""".encode()


def render_google_news(
    base: str, told: Iterable[tuple[str, Article]], query: str = "news"
) -> bytes:
    """A Google News search feed of (publisher, article) pairs, shaped as Google serves one: each
    item titled "Headline - Publisher", linked through news.google.com, its publisher in
    `<source url>`, and (as some items do) the article's own URL in its description's link."""
    items = "".join(_google_news_item(base, publisher, a) for publisher, a in told)
    q = escape(query)
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>
<generator>NFE/5.0</generator>
<title>"{q}" - Google News</title>
<link>https://news.google.com/search?q={q}&amp;hl=en-US</link>
<language>en-US</language>
<description>Google News</description>
{items}</channel></rss>
""".encode()


def _google_news_item(base: str, publisher: str, a: Article) -> str:
    description = (
        f'<a href="{base}{a.path}" target="_blank">{escape(a.title)}</a>&nbsp;&nbsp;'
        f'<font color="#6f6f6f">{escape(publisher)}</font>'
    )
    return f"""<item>
<title>{escape(a.title)} - {escape(publisher)}</title>
<link>https://news.google.com/rss/articles/CBMi{a.slug}?oc=5</link>
<guid isPermaLink="false">CBMi{a.slug}</guid>
<pubDate>{email.utils.format_datetime(a.published)}</pubDate>
<description>{escape(description)}</description>
<source url="{base}">{escape(publisher)}</source>
</item>
"""


def render_bing_news(base: str, told: Iterable[tuple[str, Article]], query: str = "news") -> bytes:
    """A Bing News search feed of (publisher, article) pairs, shaped as Bing serves one: each
    item titled "Headline | Publisher", linked through bing.com's click counter with the
    article's URL in its `url=`, its publisher in `<News:Source>`."""
    items = "".join(_bing_news_item(base, publisher, a) for publisher, a in told)
    search = f"https://www.bing.com:443/news/search?q={escape(query)}&amp;format=rss"
    return f"""<?xml version="1.0" encoding="utf-8" ?>
<rss xmlns:News="{search}" version="2.0">
<channel>
<title>{escape(query)} - BingNews</title>
<link>{search}</link>
<description>Search results</description>
{items}</channel></rss>
""".encode()


def _bing_news_item(base: str, publisher: str, a: Article) -> str:
    target = quote(base + a.path, safe="")
    link = f"http://www.bing.com/news/apiclick.aspx?ref=FexRss&aid=&tid=T{a.slug}&url={target}&c=1"
    return f"""<item>
<title>{escape(a.title)} | {escape(publisher)}</title>
<link>{escape(link)}</link>
<description>{escape(a.description)}</description>
<pubDate>{email.utils.format_datetime(a.published)}</pubDate>
<News:Source>{escape(publisher)}</News:Source>
</item>
"""


# When the many feeds' entries were published: fixed while the process runs, so that an
# unchanged feed is the same document and a conditional GET gets its 304.
MANY_PUBLISHED = datetime.now(UTC).replace(microsecond=0)


def render_many_feed(base: str, n: int) -> bytes:
    """Feed number `n` of as many as a test wants (`/feeds/many/<n>.rss`): one entry of its own,
    whose link is a real article page told apart by its query, so any number of feeds costs
    nothing to serve and each gives a distinct headline."""
    a = ARTICLES[n % len(ARTICLES)]
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel>
<title>Local feed {n}</title>
<link>{base}/many/{n}/</link>
<description>Feed {n} of many</description>
<item>
<title>{escape(a.title)} (feed {n})</title>
<link>{base}{a.path}?feed={n}</link>
<guid isPermaLink="true">{base}{a.path}?feed={n}</guid>
<pubDate>{email.utils.format_datetime(MANY_PUBLISHED)}</pubDate>
<description>{escape(a.description)}</description>
</item>
</channel></rss>
""".encode()


def _many_feed(request: web.Request) -> bytes:
    number = request.path.removeprefix("/feeds/many/").removesuffix(".rss")
    if not number.isdigit():
        raise web.HTTPNotFound()
    return render_many_feed(f"http://{request.host}", int(number))


def site_page(*feeds: tuple[str, str], base: str | None = None) -> bytes:
    """A site's home page that advertises `feeds` ((type, href), in order) in its head, after
    more than a newsreader's first look of boilerplate, the way real home pages do."""
    links = "".join(
        f'<link rel="alternate" type="{kind}" title="Feed" href="{escape(href)}">\n'
        for kind, href in feeds
    )
    base_tag = f'<base href="{escape(base)}">\n' if base else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>{SITE_NAME}</title>
{base_tag}<link rel="stylesheet" href="/static/site.css">
<script>{_script_blob(7, 20_000)}</script>
<LINK REL="icon" href="/favicon.ico">
{links}</head>
<body><h1>{SITE_NAME}</h1><p>Today's news.</p>
<link rel="alternate" type="application/rss+xml" href="/feeds/in-the-body.rss">
</body></html>
""".encode()


MALFORMED_FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Broken & unescaped <b>feed</title>
<item><title>Half an item<link>http://127.0.0.1/nowhere</lin
\x00\x01 garbage that is not XML {{{ ]]> </channel
"""

# ---------------------------------------------------------------------------------------------
# Routes

Body = bytes | Callable[[web.Request], bytes]


# Other outlets telling stories of ARTICLES in their own words, with the same facts (no fact
# they state is missing from the original's telling): a story read from several outlets.
# Served at their paths; not in the feeds.
RETELLINGS: list[tuple[str, Article]] = [
    (
        "Wire Service",
        Article(
            slug="chip-plant-wire",
            category="technology",
            title="Halvard Microsystems breaks ground on river-water chip plant",
            lede=(
                "Halvard Microsystems has started construction of a 4.2 billion euro chip plant "
                "beside the Elbe, its third, which is meant to recycle nine tenths of the water "
                "it uses."
            ),
            paragraphs=(
                "The plant will build power-management chips for electric cars and wind "
                "turbines. About 1,800 people are to be hired, and the first wafers are due in "
                "2028.",
                "Environmental groups said they would watch the temperature of the river in dry "
                "summers.",
            ),
            description="Wire report on the Halvard plant.",
        ),
    ),
    (
        "Daily Ledger",
        Article(
            slug="chip-plant-ledger",
            category="technology",
            title="Chipmaker Halvard breaks ground on Elbe plant that will run on river water",
            lede=(
                "Construction crews began work at dawn on Tuesday on the Halvard Microsystems "
                "plant, after a two-year permit review that drew more than four thousand public "
                "comments."
            ),
            paragraphs=(
                "The regional government granted the permits for the cooling system. The company "
                "competes on price and reliability rather than with the most advanced "
                "processors, its chief executive said.",
                "Half of the 1,800 new staff will be trained through an apprenticeship "
                "programme with the local technical university.",
            ),
            description="Ledger: Halvard's third fab.",
        ),
    ),
    (
        "Metro Wire",
        Article(
            slug="battery-recall-metro",
            category="technology",
            title="Velora e-bike maker recalls 60,000 batteries after fires",
            lede=(
                "Velora is recalling about 60,000 e-bike battery packs after regulators linked a "
                "faulty cell supplier to eleven apartment fires over the winter."
            ),
            paragraphs=(
                "Owners should stop charging the packs indoors and book a free replacement "
                "through dealers, the company said. Shares in the parent company fell four "
                "percent before recovering most of the loss.",
            ),
            description="Metro: the Velora recall.",
        ),
    ),
]


@dataclass
class Route:
    """One path of the news web and how it answers."""

    path: str
    body: Body = b""
    content_type: str = "text/html"  # the whole header value; "" sends no Content-Type
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    latency: float = 0.0  # seconds before the answer starts
    hang: bool = False  # never answers
    gzip: bool = False  # `body` is gzip data, sent as Content-Encoding: gzip
    chunked: bool = False  # no Content-Length: streamed in 64 KB chunks
    stall_after: int | None = None  # send this many body bytes, then hang
    endless: bool = False  # after `body`, more lines for ever (chunked), until the client leaves
    conditional: bool = False  # ETag + Last-Modified, answering 304 when they match
    last_modified: datetime | None = None
    prefix: bool = False  # answers every path that starts with `path` (the longest prefix wins)


def default_routes() -> list[Route]:
    routes = [
        Route(a.path, render_article(a), content_type="text/html")  # charset only in <meta>
        for a in [*ARTICLES, *(r for _, r in RETELLINGS)]
    ]
    chip = ARTICLES[0]
    stalled = render_article(chip, script_bytes=8_000)
    lede_at = stalled.index(chip.paragraphs[0][:30].encode())
    routes += [
        Route("/slow.html", render_article(ARTICLES[1]), latency=0.25),
        Route("/hang.html", hang=True),
        Route("/missing.html", b"<h1>Not found</h1>", status=404),
        Route("/broken.html", b"<h1>Internal error</h1>", status=500),
        Route("/teaser.html", render_meta_only()),
        Route("/reports/annual.pdf", tiny_pdf(), content_type="application/pdf"),
        Route("/reports/mislabeled", tiny_pdf(), content_type="text/html"),
        Route("/image.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, content_type="image/png"),
        Route("/bomb.html", lambda _request: gzip_bomb(), gzip=True),
        Route("/huge.html", b"<html><body>" + b"x" * (3 << 20), content_type="text/html"),
        Route("/huge-chunked.html", b"<html><body>" + b"y" * (3 << 20), chunked=True),
        # The article, then a live ticker that never ends; and the article followed by 10 MB on
        # the same line (minified pages are one line; Chromium's layout of it is what costs).
        Route("/endless.html", hostile_article_start(), endless=True),
        Route("/one-line.html", lambda _request: one_line_page()),
        # The article arrives, then the connection stalls: a lede is in the partial page.
        Route("/stalls.html", stalled, stall_after=stalled.index(b"</p>", lede_at) + 4),
        Route("/redirect/3", status=302, headers={"Location": "/redirect/2"}),
        Route("/redirect/2", status=301, headers={"Location": "/redirect/1"}),
        Route("/redirect/1", status=307, headers={"Location": chip.path}),
        Route("/redirect/loop", status=302, headers={"Location": "/redirect/loop"}),
        Route(
            "/redirect/metadata",
            status=302,
            headers={"Location": "http://169.254.169.254/latest/meta-data/"},
        ),
        Route("/redirect/private", status=301, headers={"Location": "http://10.0.0.1/admin"}),
        Route("/redirect/ftp", status=302, headers={"Location": "ftp://127.0.0.1/file"}),
    ]
    routes += [
        Route(f"/hostile/{shape}.html", functools.partial(_hostile, shape))
        for shape in HOSTILE_SHAPES
    ]
    for category, fmt in (("technology", "rss"), ("world", "atom")):
        render = render_rss if fmt == "rss" else render_atom
        routes.append(
            Route(
                f"/feeds/{category}.{fmt}",
                functools.partial(_render_feed, render, category),
                content_type=f"application/{fmt}+xml; charset=utf-8",
                conditional=True,
                last_modified=FEED_LAST_MODIFIED,
            )
        )
    routes.append(Route("/feeds/broken.xml", MALFORMED_FEED, content_type="application/rss+xml"))
    routes.append(
        Route(
            "/feeds/many/",
            _many_feed,
            content_type="application/rss+xml; charset=utf-8",
            prefix=True,
            conditional=True,
        )
    )
    rss, atom = "application/rss+xml", "application/atom+xml"
    routes += [
        # Home pages for `digest feeds add`: one advertising a relative RSS and an Atom feed,
        # one whose first advertised feed is broken, one advertising none.
        Route("/site/", site_page((rss, "../feeds/technology.rss"), (atom, "/feeds/world.atom"))),
        Route(
            "/site/broken-first.html",
            site_page((rss, "/feeds/broken.xml"), (atom, "/feeds/world.atom")),
        ),
        Route(
            "/site/missing-first.html",
            site_page((rss, "/feeds/gone.rss"), (rss, "/feeds/technology.rss")),
        ),
        Route("/site/none.html", site_page()),
        Route("/site/based.html", site_page((atom, "world.atom"), base="/feeds/")),
    ]
    return routes


@functools.cache
def _hostile_body(shape: str) -> bytes:
    return hostile_page(shape)


def _hostile(shape: str, _request: web.Request) -> bytes:
    return _hostile_body(shape)


def _render_feed(render: Callable[[str, str], bytes], category: str, request: web.Request) -> bytes:
    return render(f"http://{request.host}", category)


class NewsWeb:
    """The local news web server (see the module docstring)."""

    def __init__(self, *, sites: int = 1, routes: Iterable[Route] | None = None) -> None:
        self.sites = sites
        self.routes: dict[str, Route] = {r.path: r for r in (routes or default_routes())}
        self.hits: Counter[str] = Counter()
        self.streamed: Counter[str] = Counter()  # body bytes written by streamed routes, per path
        self._hits_by_port: Counter[tuple[int, str]] = Counter()
        self._latency: dict[tuple[int | None, str], float] = {}
        self._ports: list[int] = []
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self._gates: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- set-up --------------------------------------------------------------------------------

    def add(self, route: Route) -> Route:
        self.routes[route.path] = route
        return route

    def set_latency(self, path: str, seconds: float, *, site: int | None = None) -> None:
        """Delay answers on `path` (on one site, or on all when `site` is None)."""
        port = None if site is None else self._ports[site]
        self._latency[(port, path)] = seconds

    def hold(self, path: str) -> Callable[[], None]:
        """Answers on `path` wait until the function returned is called (from any thread)."""
        gate = self._gates[path] = asyncio.Event()

        def release() -> None:
            assert self._loop is not None, "the news web is not serving"
            self._loop.call_soon_threadsafe(gate.set)

        return release

    def url(self, path: str, *, site: int = 0) -> str:
        return f"http://127.0.0.1:{self._ports[site]}{path}"

    def hits_for(self, url: str) -> int:
        parsed = URL(url)
        return self._hits_by_port[(parsed.port or 80, parsed.path)]

    @property
    def total_hits(self) -> int:
        return sum(self.hits.values())

    def article(self, slug: str) -> Article:
        return next(a for a in ARTICLES if a.slug == slug)

    async def __aenter__(self) -> NewsWeb:
        self._loop = asyncio.get_running_loop()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        for _ in range(self.sites):
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self._ports.append(self._runner.addresses[-1][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing.set()  # lets hanging handlers return
        for gate in self._gates.values():
            gate.set()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- serving -------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        self.hits[path] += 1
        self._hits_by_port[(port, path)] += 1
        route = self.routes.get(path) or self._prefixed(path)
        if route is None:
            return web.Response(status=404, text="no such page", content_type="text/html")
        delay = self._latency.get((port, path), self._latency.get((None, path), route.latency))
        if delay:
            await asyncio.sleep(delay)
        if (gate := self._gates.get(path)) is not None:
            await gate.wait()
        if route.hang:
            await self._closing.wait()
            return web.Response(status=503)
        try:
            body = route.body(request) if callable(route.body) else route.body
        except web.HTTPNotFound:
            return web.Response(status=404, text="no such page", content_type="text/html")
        headers = dict(route.headers)
        if route.content_type:
            headers["Content-Type"] = route.content_type
        if route.gzip:
            headers["Content-Encoding"] = "gzip"
        if route.conditional:
            not_modified = self._conditional(request, route, body, headers)
            if not_modified:
                return web.Response(status=304, headers=headers)
        if route.chunked or route.stall_after is not None or route.endless:
            return await self._stream(request, route, body, headers)
        return web.Response(status=route.status, body=body, headers=headers)

    def _prefixed(self, path: str) -> Route | None:
        matches = [r for r in self.routes.values() if r.prefix and path.startswith(r.path)]
        return max(matches, key=lambda r: len(r.path), default=None)

    def _conditional(
        self, request: web.Request, route: Route, body: bytes, headers: dict[str, str]
    ) -> bool:
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        headers["ETag"] = etag
        if route.last_modified is not None:
            headers["Last-Modified"] = email.utils.format_datetime(route.last_modified, usegmt=True)
        if_none_match = request.headers.get("If-None-Match")
        if if_none_match is not None:
            tags = {t.strip() for t in if_none_match.split(",")}
            return etag in tags or "*" in tags
        since = request.headers.get("If-Modified-Since")
        if since and route.last_modified is not None:
            try:
                return email.utils.parsedate_to_datetime(since) >= route.last_modified
            except (TypeError, ValueError):
                return False
        return False

    async def _stream(
        self, request: web.Request, route: Route, body: bytes, headers: dict[str, str]
    ) -> web.StreamResponse:
        headers.pop("Content-Length", None)
        resp = web.StreamResponse(status=route.status, headers=headers)
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        limit = len(body) if route.stall_after is None else route.stall_after
        for start in range(0, limit, 64 * 1024):
            chunk = body[start : min(start + 64 * 1024, limit)]
            await resp.write(chunk)
            self.streamed[request.path] += len(chunk)
        if route.stall_after is not None:
            await self._closing.wait()
            return resp
        n = 0
        while route.endless and not self._closing.is_set():
            block = b"".join(ENDLESS_LINE % (i, i) for i in range(n + 1, n + 801))  # ~64 KB
            n += 800
            try:
                await resp.write(block)
            except ConnectionError:  # the client has gone
                return resp
            self.streamed[request.path] += len(block)
            await asyncio.sleep(0)  # let the test's own tasks run
        await resp.write_eof()
        return resp


# ---------------------------------------------------------------------------------------------
# pytest fixtures


@pytest_asyncio.fixture
async def news_web() -> AsyncIterator[NewsWeb]:
    """A fresh news web for one test, with request counters at zero."""
    async with NewsWeb() as web_:
        yield web_


@pytest.fixture
def fetch_config() -> FetchConfig:
    """Fetch settings for tests: loopback 127.0.0.1 reachable, every other private address not."""
    return FetchConfig(allowed_networks=["127.0.0.1/32"])


@pytest_asyncio.fixture
async def http_client(fetch_config: FetchConfig) -> AsyncIterator[HttpClient]:
    async with HttpClient(fetch_config) as client:
        yield client


@pytest_asyncio.fixture
async def parsers() -> AsyncIterator[ParserPool]:
    """The lede parsers' child processes, as the service runs them."""
    async with ParserPool(preload=("lede",)) as pool:
        await pool.start(wait=True)  # tests time the fast path, not Python starting up
        yield pool

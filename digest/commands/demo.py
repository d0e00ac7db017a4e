"""`digest demo`: one full cycle over a few synthetic feeds served on 127.0.0.1, so that a
newcomer sees an edition in a minute without internet, a search engine or a browser.

Everything is made up (the outlets, the people, the places) and says so: the archive's title
is "digest demo (synthetic news)" and every article ends with a line saying it is synthetic.
The demo has its own folder (database, archive, outbox), never the user's configuration or
database, and nothing leaves the machine: the feeds and pages are served on loopback, DuckDuckGo
is off, pages are read over plain HTTP.
"""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digest.config import Config, parse_config

if TYPE_CHECKING:
    from digest.daemon import CycleReport
    from digest.runtime.progress import Progress

TITLE = "digest demo (synthetic news)"
SYNTHETIC = "This article is synthetic: it was written for digest's demo and reports nothing real."


@dataclass(frozen=True, slots=True)
class Article:
    outlet: str  # the feed's slug: "harbour-post"
    slug: str
    category: str
    title: str
    summary: str
    paragraphs: tuple[str, ...]


OUTLETS = {"harbour-post": "The Harbour Post (demo)", "valley-wire": "Valley Wire (demo)"}

# Six articles, four events: two are told by both outlets, each in its own words (the edition
# groups each into one story with two outlets).
ARTICLES = (
    Article(
        "harbour-post",
        "tidal-battery",
        "technology",
        "Port town switches on tidal battery to store night-time power",
        "A tidal battery in the port town of Saltmere now stores power made overnight.",
        (
            "The port town of Saltmere switched on a tidal battery on Monday that stores "
            "electricity made by its harbour turbines overnight and releases it at breakfast "
            "time, when the town uses the most power.",
            "The battery pumps seawater into a basin behind the old breakwater and lets it run "
            "back through the turbines later. Engineers said it holds enough energy to run the "
            "town's street lights and its school for a day.",
            "The council paid for the project with a regional grant. Its chair, Mira Tollan, "
            "said the town would publish the battery's output every month so residents could "
            "judge whether it was worth the money.",
        ),
    ),
    Article(
        "valley-wire",
        "saltmere-battery",
        "technology",
        "Saltmere switches on tidal battery for night-time power",
        "Saltmere's new tidal battery keeps the power its turbines make at night.",
        (
            "Saltmere switched on its tidal battery on Monday. The system keeps the electricity "
            "that the harbour turbines generate at night and gives it back in the morning peak.",
            "Seawater is pumped into a basin behind the breakwater and released through the "
            "turbines when power is needed. According to the engineers, a full basin runs the "
            "street lights and the school for about a day.",
            "Council chair Mira Tollan said monthly figures would show residents whether the "
            "regional grant that paid for the battery was well spent.",
        ),
    ),
    Article(
        "harbour-post",
        "library-robot",
        "technology",
        "City library lends out a robot that reads to children",
        "Northbridge library now lends a reading robot to families for a week at a time.",
        (
            "Northbridge's central library has started lending a small robot that reads picture "
            "books aloud to children, one family at a time, for a week.",
            "Librarian Jonas Ferrow said the robot turns the pages itself and asks the child "
            "questions about the story. The waiting list already runs to the end of spring.",
            "The library said it would lend a second robot if the first one comes back in one "
            "piece.",
        ),
    ),
    Article(
        "harbour-post",
        "bridge-reopens",
        "world",
        "Old river bridge reopens after three years of repairs",
        "The Calder river bridge carries traffic again after three years of repairs.",
        (
            "The old bridge over the Calder river reopened to traffic on Monday morning after "
            "three years of repairs that replaced its deck and strengthened its stone piers.",
            "Drivers had made a detour of forty minutes since the bridge closed. The first bus "
            "across was met by a brass band and a crowd of several hundred people.",
            "The regional roads office said the bridge would be inspected every year from now "
            "on, instead of every five years as before.",
        ),
    ),
    Article(
        "valley-wire",
        "calder-bridge",
        "world",
        "Calder river bridge reopens to traffic after three years",
        "Traffic crosses the Calder river bridge again after three years of repairs.",
        (
            "After three years of repairs, the Calder river bridge reopened on Monday. Workers "
            "replaced the deck and strengthened the stone piers of the old bridge.",
            "Since its closure drivers had faced a forty-minute detour. Several hundred people "
            "and a brass band greeted the first bus to cross.",
            "According to the regional roads office, yearly inspections will replace the "
            "five-yearly ones.",
        ),
    ),
    Article(
        "valley-wire",
        "orchard-harvest",
        "world",
        "Valley orchards expect their best apple harvest in a decade",
        "Growers in the Ambry valley expect the largest apple harvest in ten years.",
        (
            "Fruit growers in the Ambry valley expect their best apple harvest in a decade after "
            "a mild spring and a wet summer, their association said on Monday.",
            "The association's secretary, Lena Orvik, said pickers were hard to find and asked "
            "students to sign up for the autumn weeks.",
            "Cider makers in the valley said they would buy what the markets could not take.",
        ),
    ),
)


def article_page(article: Article) -> str:
    """The article's page: a headline, its paragraphs and the line saying it is synthetic."""
    body = "".join(f"<p>{html.escape(p)}</p>\n" for p in (*article.paragraphs, SYNTHETIC))
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(article.title)}</title></head><body>"
        f"<header><p>{html.escape(OUTLETS[article.outlet])}</p></header>"
        f"<article><h1>{html.escape(article.title)}</h1>\n{body}</article></body></html>"
    )


def feed(outlet: str, category: str, base: str, now: datetime) -> str:
    """The outlet's RSS feed of `category`, its items dated just before `now` (today's news
    whenever the demo runs)."""
    items = []
    chosen = (x for x in ARTICLES if x.outlet == outlet and x.category == category)
    for i, a in enumerate(chosen):
        when = format_datetime(now - timedelta(seconds=1 + i))
        url = f"{base}/{a.outlet}/{a.slug}.html"
        items.append(
            f"<item><title>{html.escape(a.title)}</title><link>{url}</link>"
            f"<guid>{url}</guid><pubDate>{when}</pubDate>"
            f"<category>{a.category}</category>"
            f"<description>{html.escape(a.summary)}</description></item>"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>{html.escape(OUTLETS[outlet])}</title><link>{base}/</link>"
        f"<description>Synthetic news for digest's demo</description>{''.join(items)}"
        "</channel></rss>"
    )


def feed_path(outlet: str, category: str) -> str:
    return f"/feeds/{outlet}/{category}.rss"


@asynccontextmanager
async def demo_web() -> AsyncIterator[str]:
    """The demo's outlets on 127.0.0.1 (a free port), while in the block; their base URL."""
    from aiohttp import web

    pages = {f"/{a.outlet}/{a.slug}.html": article_page(a) for a in ARTICLES}
    base = ""

    feeds = {feed_path(a.outlet, a.category): (a.outlet, a.category) for a in ARTICLES}

    async def answer(request: web.Request) -> web.Response:
        path = request.path
        if path in feeds:
            text = feed(*feeds[path], base, datetime.now(UTC))
            return web.Response(text=text, content_type="application/rss+xml")
        if path in pages:
            return web.Response(text=pages[path], content_type="text/html")
        return web.Response(status=404, text="not found")

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    base = f"http://127.0.0.1:{port}"
    try:
        yield base
    finally:
        await runner.cleanup()


def demo_config(folder: Path, base: str) -> Config:
    """The demo's configuration: its own folder, the demo feeds only, nothing off the machine."""
    data: dict[str, Any] = {
        "database": {"url": "sqlite:///digest.db"},
        "sources": {
            "categories": ["technology", "world"],
            "ddg": False,
            "feeds": [
                {"url": base + path, "category": category, "name": OUTLETS[outlet]}
                for outlet, category in dict.fromkeys((a.outlet, a.category) for a in ARTICLES)
                for path in [feed_path(outlet, category)]
            ],
        },
        "fetch": {"allowed_networks": ["127.0.0.1/32"]},
        "crawl": {"mode": "http", "respect_robots": False},
        "archive": {"dir": "site", "title": TITLE},
        "email": {"transport": "outbox", "outbox_dir": "outbox"},
    }
    return parse_config(data, origin="digest demo", path=folder.resolve() / "digest.toml")


async def run_demo(folder: Path, progress: Progress) -> CycleReport:
    """One cycle (collect, deepen, publish) of the demo in `folder`; its `CycleReport`."""
    from digest.daemon import CycleReport, run_daemon
    from digest.runtime.threads import off_loop

    await off_loop(folder.mkdir, parents=True, exist_ok=True)
    async with demo_web() as base:
        cycle = await run_daemon(demo_config(folder, base), once=True, progress=progress)
    # One cycle (`once`) ends in its report or raises: never stopped idle, never `Stopped`.
    assert isinstance(cycle, CycleReport)
    return cycle

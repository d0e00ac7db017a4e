"""Editions for the archive, digest and email tests: realistic, deterministic, optionally hostile.

`make_edition(day)` gives a day's edition with several categories, stories told by several
outlets and the day's other headlines. `hostile_edition(day)` adds the scraped text an attacker
would plant: script tags, `javascript:` links, tracking images, attribute-breaking quotes,
control characters. Everything is derived from the day and the arguments, so the same call
gives the same edition.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from digest.models import (
    Correction,
    Disagreement,
    Edition,
    EditionHeadline,
    EditionSection,
    EditionStory,
    NewFact,
    Outlet,
    Reported,
    StoryEvent,
    WhatsNew,
)

TIMEZONE = "Europe/Berlin"
CATEGORIES = ("technology", "world", "finance", "us politics")

OUTLETS = (
    ("Reuters", "https://www.reuters.com"),
    ("AP News", "https://apnews.com"),
    ("BBC News", "https://www.bbc.co.uk/news"),
    ("The Guardian", "https://www.theguardian.com"),
    ("Le Monde", "https://www.lemonde.fr"),
    ("Ars Technica", "https://arstechnica.com"),
    ("Financial Times", "https://www.ft.com"),
    ("Der Spiegel", "https://www.spiegel.de"),
)
LANGUAGE = {"Le Monde": "fr", "Der Spiegel": "de"}  # the others: English

TOPICS = {
    "technology": [
        ("Chipmaker unveils 2-nanometre processor for laptops", ["chips", "semiconductors"]),
        ("EU regulators open inquiry into app store fees", ["EU", "competition", "apps"]),
        ("Open-source database project changes its licence", ["open source", "licensing"]),
        ("Satellite broadband reaches rural schools in Kenya", ["satellites", "Kenya"]),
        ("Researchers report record efficiency for perovskite cells", ["solar", "research"]),
    ],
    "world": [
        ("Flood barrier holds as storm hits the lower valley", ["floods", "infrastructure"]),
        ("Ceasefire talks resume in Geneva after two-week pause", ["diplomacy", "Geneva"]),
        ("Election turnout hits a 30-year high in Portugal", ["elections", "Portugal"]),
        ("Drought cuts Panama Canal transits for a third month", ["shipping", "drought"]),
        ("Wildfire season starts early in southern Australia", ["wildfires", "Australia"]),
    ],
    "finance": [
        ("Central bank holds rates, signals cuts next spring", ["interest rates", "inflation"]),
        ("Oil prices slide as inventories rise", ["oil", "commodities"]),
        ("Retailers report stronger holiday sales than expected", ["retail", "consumers"]),
        ("Bond yields fall after weak manufacturing data", ["bonds", "manufacturing"]),
        ("Insurers raise premiums in flood-prone regions", ["insurance", "climate"]),
    ],
    "us politics": [
        ("Senate passes stopgap bill to avert shutdown", ["Congress", "budget"]),
        ("Governors meet on wildfire funding", ["states", "wildfires"]),
        ("Supreme Court hears arguments on agency powers", ["courts", "regulation"]),
        ("House committee releases report on rail safety", ["rail", "safety"]),
        ("Mayors call for federal help with housing costs", ["housing", "cities"]),
    ],
}


def _generic_topics(category: str) -> list[tuple[str, list[str]]]:
    return [
        (f"{category.capitalize()} report: {what}", [category, what.split()[0]])
        for what in (
            "new figures released",
            "officials respond to criticism",
            "a record year ends",
            "talks stall over funding",
            "a surprise appointment",
        )
    ]


SENTENCES = (
    "Officials said the decision followed months of consultation with experts and residents.",
    "Analysts expect the effects to be felt well into next year, though estimates vary widely.",
    "Critics argued that the plan leaves important questions unanswered.",
    "A spokesperson declined to comment on the timing beyond a short written statement.",
    "The announcement came a day after preliminary figures were published.",
    "Several outlets reported that negotiations had continued late into the night.",
)


FACTS = (
    "Talks continued overnight and a second round is set for Friday afternoon.",
    "Two more ministries confirmed the figures in statements issued after midnight.",
    "Shares of the companies involved rose almost 4% in early trading.",
)


def _summary(title: str, n: int, paragraphs: int = 3) -> tuple[str, str]:
    lead = f"{title}, according to reports from several outlets on the day."
    body = [
        " ".join(SENTENCES[(n + i + k) % len(SENTENCES)] for k in range(3))
        for i in range(paragraphs - 1)
    ]
    brief = f"{lead} {SENTENCES[n % len(SENTENCES)]}"
    return brief, "\n\n".join([lead, *body])


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def make_story(
    day: date,
    category: str,
    n: int,
    *,
    story_id: int,
    outlets: int = 3,
    updated: bool = False,
    topic: tuple[str, list[str]] | None = None,
) -> EditionStory:
    tz = ZoneInfo(TIMEZONE)
    topics = TOPICS.get(category) or _generic_topics(category)
    title, keywords = topic or topics[n % len(topics)]
    if topic is None and n >= len(topics):
        title = f"{title} (part {n // len(topics) + 1})"
    brief, summary = _summary(title, n)
    shown = tuple(
        Outlet(
            name=name,
            url=f"{site}/{day:%Y/%m/%d}/{_slug(title)}",
            title=title,
            language=LANGUAGE.get(name, "en"),
        )
        for name, site in [OUTLETS[(n + len(category) + k) % len(OUTLETS)] for k in range(outlets)]
    )
    # An updated story: its last outlet joined after the day before's edition, and says more.
    news = (
        WhatsNew(
            since=day - timedelta(days=1),
            outlets=shown[-1:],
            facts=(NewFact(shown[-1].name, FACTS[n % len(FACTS)], shown[-1].language),),
        )
        if updated
        else None
    )
    first_seen = datetime.combine(day, time(6, 0), tz) + timedelta(minutes=37 * n)
    if n == 1:  # one story per category was first seen the evening before
        first_seen = datetime.combine(day - timedelta(days=1), time(22, 10), tz)
    memory = story_memory(story_id, shown, first_seen, day) if updated else {}
    return EditionStory(
        id=story_id,
        category=category,
        title=title,
        brief_summary=brief,
        summary=summary,
        keywords=tuple(keywords),
        summarizer="llm:gpt-4o-mini" if n % 2 else "extractive",
        outlets=shown,
        first_seen=first_seen,
        updated=updated,
        whats_new=news,
        **memory,
    )


def story_memory(
    story_id: int, outlets: tuple[Outlet, ...], first_seen: datetime, day: date
) -> dict[str, tuple[object, ...]]:
    """An updated story's memory (issue 31): a timeline of each kind of entry, outlets that
    disagree on a toll, and a correction of what the day before's edition said."""
    first, last = outlets[0], outlets[-1]
    later = first_seen + timedelta(hours=3)

    def event(n: int, kind: str, at: datetime, **kw: object) -> StoryEvent:
        return StoryEvent(story_id * 10 + n, story_id, kind, at, at, **kw)  # type: ignore[arg-type]

    timeline = (
        event(1, "first", first_seen, outlet=first.name, url=first.url, text=first.title),
        event(2, "outlet", later, outlet=last.name, url=last.url, text=last.title),
        event(
            3,
            "fact",
            later,
            outlet=last.name,
            text="At least 30 people died.",
            subject="dead",
            value="at least 30",
        ),
        event(4, "revision", later, outlet=first.name, subject="dead", value="30", previous="12"),
        event(5, "disagreement", later, subject="dead", text="at least 30 (B); 45 (C)"),
    )
    disputes = (
        Disagreement(
            "dead", (Reported("at least 30", (first.name,)), Reported("45", (last.name,)))
        ),
    )
    fixes = (
        Correction(
            "dead",
            "12",
            "30",
            day - timedelta(days=1),
            "The quake killed 12 people.",
            (first.name,),
        ),
    )
    return {"timeline": timeline, "disagreements": disputes, "corrections": fixes}


def make_headlines(day: date, category: str, count: int = 3) -> tuple[EditionHeadline, ...]:
    tz = ZoneInfo(TIMEZONE)
    out = []
    for i in range(count):
        name, site = OUTLETS[(i * 3 + len(category)) % len(OUTLETS)]
        title = f"In brief: {category} roundup, item {i + 1}"
        out.append(
            EditionHeadline(
                title=title,
                url=f"{site}/{day:%Y/%m/%d}/{_slug(title)}",
                source=name,
                lede=SENTENCES[i % len(SENTENCES)] + " " + SENTENCES[(i + 2) % len(SENTENCES)],
                published=datetime.combine(day, time(8 + i, 15), tz),
            )
        )
    return tuple(out)


def make_edition(
    day: date,
    *,
    categories: tuple[str, ...] = CATEGORIES,
    stories: int = 3,
    headlines: int = 3,
    first_id: int | None = None,
) -> Edition:
    """A day's edition; story ids are unique per day (derived from the day unless given)."""
    next_id = first_id if first_id is not None else day.toordinal() % 100_000 * 1000
    sections = []
    for category in categories:
        items = []
        for n in range(stories):
            items.append(
                make_story(day, category, n, story_id=next_id, outlets=2 + n % 4, updated=n == 2)
            )
            next_id += 1
        sections.append(
            EditionSection(category, tuple(items), make_headlines(day, category, headlines))
        )
    generated = datetime.combine(day, time(7, 0), ZoneInfo(TIMEZONE)).astimezone(UTC)
    return Edition(day=day, timezone=TIMEZONE, sections=tuple(sections), generated_at=generated)


# -- hostile text -------------------------------------------------------------------------------

HOSTILE_TITLE = 'Breaking" onmouseover="alert(1)" x="<script>alert(\'title\')</script>'
HOSTILE_SUMMARY = (
    "Read more <a href=\"javascript:alert('summary')\">here</a>"
    '<img src="//tracker.example/pixel.gif?u=1" width=1 height=1>'
    '\n\n<iframe src=https://evil.example/></iframe> & an ampersand, a < sign and a "quote".'
    "\x00\x0b control characters and a lone surrogate \ud800 end here."
)
HOSTILE_URLS = (
    "javascript:alert(document.cookie)",
    " JaVaScRiPt:alert(1)",
    "java\tscript:alert(2)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "//tracker.example/x",
    "vbscript:msgbox(1)",
    "https://user:pass@evil.example/",
)
HOSTILE_KEYWORD = '<svg onload="alert(1)">'
HOSTILE_FACT = 'Officials said <script>alert("fact")</script> and <img src=x onerror=alert(2)>.'


def hostile_edition(day: date, **kwargs: object) -> Edition:
    """A normal edition whose first story and first headline carry an attacker's text."""
    edition = make_edition(day, **kwargs)  # type: ignore[arg-type]
    first = edition.sections[0]
    story = first.stories[0]
    bad_outlets = tuple(
        Outlet(name=f'</a><script>alert("outlet {i}")</script>', url=url, title=HOSTILE_TITLE)
        for i, url in enumerate(HOSTILE_URLS)
    )
    story = replace(
        story,
        title=HOSTILE_TITLE,
        brief_summary=HOSTILE_SUMMARY,
        summary=HOSTILE_SUMMARY,
        keywords=(HOSTILE_KEYWORD, "ok keyword"),
        outlets=story.outlets[:1] + bad_outlets,
        updated=True,
        whats_new=WhatsNew(
            since=day - timedelta(days=1),
            outlets=bad_outlets[:2],
            facts=(
                NewFact(bad_outlets[0].name, HOSTILE_FACT, 'xx" onload="alert(1)'),
                NewFact("\u202eevil\x1b]52;c;AAAA\x07", "A fact\x00 with\x0b controls.", "en"),
            ),
        ),
    )
    headline = replace(
        first.headlines[0],
        title="<script>alert('headline')</script>",
        url="javascript:alert('headline')",
        source='"><img src=x onerror=alert(1)>',
        lede='<img src="https://tracker.example/lede.gif">',
    )
    section = replace(
        first, stories=(story, *first.stories[1:]), headlines=(headline, *first.headlines[1:])
    )
    return replace(edition, sections=(section, *edition.sections[1:]))

"""Editions for the email tests and the email benchmark: realistic, huge, or hostile."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from digest.config import EmailConfig
from digest.models import (
    Edition,
    EditionHeadline,
    EditionSection,
    EditionStory,
    NewFact,
    Outlet,
    WhatsNew,
)

DAY = date(2025, 3, 4)
GENERATED = datetime(2025, 3, 4, 6, 30, tzinfo=UTC)
CONFIG = EmailConfig.model_validate({"from": "Morning Digest <digest@news.example.org>"})
ARCHIVE_URL = "https://news.example.org/digest/2025-03-04/"
UNSUBSCRIBE_URL = "https://news.example.org/digest/unsubscribe?token=abc123"

OUTLETS = [
    ("Reuters", "https://www.reuters.example"),
    ("The Guardian", "https://www.theguardian.example"),
    ("Associated Press", "https://apnews.example"),
    ("BBC News", "https://www.bbc.example"),
    ("Financial Times", "https://www.ft.example"),
    ("Le Monde", "https://www.lemonde.example"),
    ("Der Spiegel", "https://www.spiegel.example"),
    ("NPR", "https://www.npr.example"),
    ("Al Jazeera", "https://www.aljazeera.example"),
    ("Bloomberg", "https://www.bloomberg.example"),
]

STORIES = {
    "technology": [
        (
            "Chipmaker unveils a processor that halves data-centre power use",
            "The company said its new server chip does the same work on half the energy, "
            "a claim analysts called plausible but untested outside the lab.",
        ),
        (
            "Open-source database project changes its licence after a funding row",
            "Maintainers moved to a copyleft licence after cloud providers declined to fund "
            "development; users who only run the software are not affected.",
        ),
        (
            "Regulators open an inquiry into smartphone app store fees",
            "The competition authority will examine whether commissions of up to 30 per cent "
            "harm developers and raise prices for consumers.",
        ),
    ],
    "world": [
        (
            "Flood barrier holds as river reaches a record high",
            "About twelve thousand homes in the lower valley were protected; residents who had "
            "been evacuated began returning on Sunday evening.",
        ),
        (
            "Leaders agree a framework for cross-border rail links",
            "The agreement sets common signalling standards and a fund for new lines, with the "
            "first routes due to open by the end of the decade.",
        ),
    ],
    "finance": [
        (
            "Central bank holds rates and signals cuts later this year",
            "Policymakers voted seven to two to keep rates unchanged, citing inflation that has "
            "fallen faster than expected since the autumn.",
        ),
    ],
}

HEADLINES = [
    (
        "Startup raises funds to build cheaper battery storage",
        "A small firm says its iron-air "
        "cells could store wind power for days at a fraction of today's cost.",
    ),
    (
        "City council approves late-night bus network",
        "Night buses will run on eight routes from May, the council said, after a two-year trial.",
    ),
    (
        "Museum returns artefacts to their country of origin",
        "The collection of bronze plaques had been held in storage since the 1950s.",
    ),
    (
        "Researchers map the sea floor under an Antarctic ice shelf",
        "An autonomous submarine "
        "spent three weeks under the ice, sending back the first detailed images.",
    ),
]


def _story(story_id: int, category: str, title: str, brief: str, outlets: int) -> EditionStory:
    chosen = [OUTLETS[(story_id + i) % len(OUTLETS)] for i in range(outlets)]
    slug = "-".join(title.lower().split()[:5])
    shown = tuple(
        Outlet(name=name, url=f"{site}/{category}/{slug}-{story_id}", title=title)
        for name, site in chosen
    )
    updated = story_id % 3 == 0
    # An updated story says what its newest outlet added since the day before's edition.
    news = WhatsNew(
        since=DAY - timedelta(days=1),
        outlets=shown[-1:],
        facts=(NewFact(shown[-1].name, "Officials confirmed the figures late on Monday.", "en"),),
    )
    return EditionStory(
        id=story_id,
        category=category,
        title=title,
        brief_summary=brief,
        summary=brief + " " + brief,
        keywords=tuple(title.lower().split()[:3]),
        summarizer="extractive",
        outlets=shown,
        first_seen=GENERATED - timedelta(hours=story_id % 7),
        updated=updated,
        whats_new=news if updated else None,
    )


def _headline(n: int, category: str) -> EditionHeadline:
    title, lede = HEADLINES[n % len(HEADLINES)]
    name, site = OUTLETS[n % len(OUTLETS)]
    return EditionHeadline(
        title=title if n < len(HEADLINES) else f"{title} ({n})",
        url=f"{site}/{category}/headline-{n}",
        source=name,
        lede=lede,
        published=GENERATED - timedelta(minutes=17 * n),
    )


def edition(*, headlines: int = 3, categories: tuple[str, ...] | None = None) -> Edition:
    """A small realistic edition: three categories, 1-3 stories each, a few headlines."""
    sections = []
    story_id = 1
    for category, stories in STORIES.items():
        if categories and category not in categories:
            continue
        made = []
        for title, brief in stories:
            made.append(_story(story_id, category, title, brief, outlets=1 + story_id % 5))
            story_id += 1
        sections.append(
            EditionSection(
                category=category,
                stories=tuple(made),
                headlines=tuple(_headline(n, category) for n in range(headlines)),
            )
        )
    return Edition(
        day=DAY, timezone="Europe/Berlin", sections=tuple(sections), generated_at=GENERATED
    )


def huge_edition(
    *, categories: int = 6, stories: int = 40, headlines: int = 200, outlets: int = 12
) -> Edition:
    """An edition far too large for one email."""
    sections = []
    story_id = 1
    for c in range(categories):
        category = f"category{c}"
        made = []
        for s in range(stories):
            title, brief = STORIES["technology"][s % 3]
            made.append(
                _story(story_id, category, f"{title} (part {s})", brief * 3, outlets=outlets)
            )
            story_id += 1
        sections.append(
            EditionSection(
                category=category,
                stories=tuple(made),
                headlines=tuple(_headline(n, category) for n in range(headlines)),
            )
        )
    return Edition(day=DAY, timezone="UTC", sections=tuple(sections), generated_at=GENERATED)


TRACKER = "https://tracker.example/pixel.gif"
HOSTILE_TITLE = (
    '<script>alert("title")</script>Markets <b>rally</b> & "bonds" <img src=x onerror=alert(1)'
)
HOSTILE_BRIEF = (
    f'Shares rose. <img src="{TRACKER}" width="1" height="1"> '
    '<a href="javascript:alert(2)">click</a> <iframe src="https://evil.example/"></iframe>'
)


def hostile_edition() -> Edition:
    """Scraped text written to attack: scripts, event handlers, tracking pixels, bad links."""
    story = EditionStory(
        id=99,
        category="finance",
        title=HOSTILE_TITLE,
        brief_summary=HOSTILE_BRIEF,
        summary=HOSTILE_BRIEF,
        keywords=("<script>",),
        summarizer="extractive",
        outlets=(
            Outlet(name="<b>Evil</b> Wire", url="javascript:alert(3)", title="x"),
            Outlet(name="Data Daily", url="data:text/html,<script>alert(4)</script>", title="x"),
            Outlet(name='Safe "Times"', url="https://safe.example/markets?a=1&b=2", title="x"),
        ),
        first_seen=GENERATED,
        image=TRACKER,
    )
    headline = EditionHeadline(
        title="Headline\r\nBcc: victim@example.org <svg onload=alert(5)>",
        url="vbscript:msgbox(6)",
        source="<script>src</script>",
        lede=f'<img src="{TRACKER}">Lede with a pixel.',
    )
    section = EditionSection(category="finance", stories=(story,), headlines=(headline,))
    return Edition(day=DAY, timezone="UTC", sections=(section,), generated_at=GENERATED)


# A day's two busiest categories as a Google News-shaped feed gives them: five stories each,
# told by up to a dozen publishers, headlines that still carry their publisher's name, and ten
# more headlines a category. For the browser tests of the lead and the before/after screenshots
# (bench/email_shots.py).
PUBLISHERS = [
    ("Reuters", "https://www.reuters.com"),
    ("The New York Times", "https://www.nytimes.com"),
    ("The Verge", "https://www.theverge.com"),
    ("BBC News", "https://www.bbc.co.uk/news"),
    ("The Guardian", "https://www.theguardian.com"),
    ("Associated Press", "https://apnews.com"),
    ("Ars Technica", "https://arstechnica.com"),
    ("Bloomberg", "https://www.bloomberg.com"),
    ("CNN", "https://www.cnn.com"),
    ("Al Jazeera", "https://www.aljazeera.com"),
    ("The Washington Post", "https://www.washingtonpost.com"),
    ("Financial Times", "https://www.ft.com"),
    ("NPR", "https://www.npr.org"),
    ("Wired", "https://www.wired.com"),
]

FRONT_PAGE = {
    "technology": [
        (
            "Titanfall studio's new shooter launches to record crowds - The Verge",
            12,
            "Respawn's new multiplayer shooter drew more than two million players in its first "
            "day, the publisher said, as servers struggled under the load. Queues of over an hour "
            "were reported in Europe before extra capacity came online in the evening.",
        ),
        (
            "EU fines chipmaker over exclusive deals with laptop makers - Reuters",
            8,
            "The European Commission fined the company for paying manufacturers to favour its "
            "processors. The chipmaker said it would appeal the decision in court.",
        ),
        (
            "Analysis | Why phone upgrade cycles keep getting longer - The Washington Post",
            5,
            "Owners are keeping their phones for close to four years on average, carriers say. "
            "Repair programmes and slower hardware gains both play a part.",
        ),
        (
            "Open-source maintainers push back on a new licence for a database - Ars Technica",
            3,
            "Contributors objected to terms that would limit how cloud providers offer the "
            "software. The foundation behind it said the licence was still a draft.",
        ),
        (
            "Satellite broadband reaches rural schools in Kenya - BBC News",
            2,
            "More than two hundred schools were connected in the first phase of the programme. "
            "Teachers said lessons now include live video from other classrooms.",
        ),
    ],
    "world": [
        (
            "Opinion | Republicans Are Following Trump to Nowhere - The New York Times",
            14,
            "Party leaders have tied their agenda to the former president's grievances, the "
            "columnist argues. The result is a platform with few proposals voters can name.",
        ),
        (
            "Ceasefire talks resume in Geneva after a two-week pause - Al Jazeera",
            9,
            "Delegations returned to the table on Thursday with a draft on prisoner exchanges. "
            "Mediators said a first agreement could come before the end of the month.",
        ),
        (
            "Flood barrier holds as the river reaches a record high - The Guardian",
            6,
            "About twelve thousand homes in the lower valley were protected overnight. "
            "Residents who had been evacuated began returning on Sunday evening.",
        ),
        (
            "Drought cuts Panama Canal transits for a third month - Bloomberg",
            4,
            "The canal authority limited daily crossings again as lake levels kept falling. "
            "Shipping lines are routing more cargo around Cape Horn.",
        ),
        (
            "Election turnout hits a 30-year high in Portugal - Associated Press",
            1,
            "Nearly seventy per cent of voters cast a ballot, the electoral commission said. "
            "Results are expected early on Monday.",
        ),
    ],
}

FRONT_HEADLINES = [
    "Startup raises funds to build cheaper battery storage",
    "City council approves a late-night bus network",
    "Museum returns bronze plaques to their country of origin",
    "Researchers map the sea floor under an Antarctic ice shelf",
    "Airline orders forty long-range jets in a record deal",
    "Court delays ruling on a contested data-sharing law",
    "Rail operator restores services after a signalling fault",
    "Heatwave warnings issued for three southern regions",
    "Regulator approves a merger of two regional banks",
    "Scientists report a new species of deep-sea coral",
]


def front_page_edition() -> Edition:
    """Two categories, five stories each (by score, 1 to 14 outlets), ten headlines each."""
    sections = []
    story_id = 101
    for c, (category, stories) in enumerate(FRONT_PAGE.items()):
        made = []
        for rank, (title, count, brief) in enumerate(stories):
            suffix = title.rsplit(" - ", 1)[1]
            first = next(i for i, (name, _) in enumerate(PUBLISHERS) if name == suffix)
            chosen = [PUBLISHERS[(first + k) % len(PUBLISHERS)] for k in range(count)]
            slug = "-".join(title.lower().split()[:6])
            outlets = tuple(
                Outlet(name=name, url=f"{site}/{DAY:%Y/%m/%d}/{slug}", title=title, language="en")
                for name, site in chosen
            )
            made.append(
                EditionStory(
                    id=story_id,
                    category=category,
                    title=title,
                    brief_summary=brief,
                    summary=brief,
                    keywords=(),
                    summarizer="extractive",
                    outlets=outlets,
                    first_seen=GENERATED - timedelta(hours=rank + c),
                    score=float(count) + 0.5 * c,
                )
            )
            story_id += 1
        headlines = []
        for n, title in enumerate(FRONT_HEADLINES):
            name, site = PUBLISHERS[(n + 3 * c) % len(PUBLISHERS)]
            headlines.append(
                EditionHeadline(
                    title=f"{title} - {name}",
                    url=f"{site}/{category}/headline-{n}",
                    source=name,
                    lede=HEADLINES[n % len(HEADLINES)][1],
                    published=GENERATED - timedelta(minutes=23 * n),
                )
            )
        sections.append(EditionSection(category, tuple(made), tuple(headlines)))
    return Edition(
        day=DAY, timezone="Europe/Berlin", sections=tuple(sections), generated_at=GENERATED
    )

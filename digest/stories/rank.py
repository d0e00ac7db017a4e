"""Which stories of a category come first: pure ranking by how widely and how lately they are told.

    score = reach × languages × diversity × recency

    reach     = coverage + GROWTH_WEIGHT × min(G, coverage)
    coverage  = H' + SAME_HOST_WEIGHT × (O − H')     O = distinct outlets, H = distinct hosts,
                                                     H' = min(O, H)
    languages = 1 + LANGUAGE_BONUS × (L' − 1)        L' = min(L, H', MAX_LANGUAGES), L = distinct
                                                     languages its articles are told in
    diversity = 1 + ORIGIN_BONUS × (K − 1)           K = distinct discovery paths (ddg, feed)
    recency   = 0.5 ** (age / HALF_LIFE)             age = now − the story's newest article

Distinct outlets are the main signal: the same event told by three outlets is bigger news than a
story only one outlet carries. Outlets beyond the number of distinct publisher hosts count half:
several names behind one host (an aggregator such as msn.com, one publisher's several feeds) are
less independent than separate newsrooms; a link through Google News or Bing News names no
publisher's host, so its outlet stands for one. Hosts are registrable names by the Public Suffix
List ("news.bbc.co.uk" -> "bbc.co.uk", each "*.blogspot.com" blog its own). An outlet one feed
names without the service being able to check it is that feed ("Reuters (via Hostile Wire)" is
Hostile Wire: `relayed`, `digest.fetch.aggregators`): a feed cannot fake a story's coverage by
naming other outlets on its items.

Growth: G counts the outlets whose first report of the story the service saw in the last
`GROWTH_WINDOW` (6 h) before the clustering (articles' `first_seen`): a story that is gaining
outlets now counts up to half more than one whose outlets all came earlier; a story whose newest
report is fresh but whose outlets are yesterday's does not. (The store knows when each article
was first seen, not which edition showed a story: "since the last edition" is these recent hours.)

Languages: a story told in several languages reaches further than one told in one; each language
beyond the first adds a quarter, up to `MAX_LANGUAGES`, never more languages than independent
outlets. The language is `digest.stories.tokens.language` of title and lede (function words of
seven languages, microseconds an article, no model): py3langid (`digest.stories.language`) would
name more but costs 0.8 s and 80 MB to load in every clustering process, and the store does not
keep a language per article. A headline too short to tell counts for no language.

A story found both by search and in feeds gets a quarter more. Recency halves the score every
`HALF_LIFE` (24 h), measured from the newest article, so a story still being reported stays up:
three outlets a day ago still beat one outlet now (1.5 to 1; to 1.5 when that outlet is new in
the last 6 h, a tie that goes to more outlets), two days ago they no longer do.

Bounds: a story one outlet tells scores at most 1.5 × 1.25 = 1.875 (growing, found both ways,
now); thirty outlets, even behind one host (coverage 15.5) and two days old (the clustering
window), score at least 3.9: a one-outlet item never outranks a story carried by thirty within
the window (tests/test_rank.py checks it over all the other inputs). Every factor is at least
its value for one outlet, so no score is below coverage × recency, nor above coverage × 1.5 ×
1.75 × 1.25.
Ties: more outlets, then newer, then the lower story id (older story) first.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from digest.stories.tokens import fold

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

    from digest.models import StoryView

HALF_LIFE = timedelta(hours=24)
SAME_HOST_WEIGHT = 0.5
ORIGIN_BONUS = 0.25
GROWTH_WINDOW = timedelta(hours=6)
GROWTH_WEIGHT = 0.5
LANGUAGE_BONUS = 0.25
MAX_LANGUAGES = 4

_HOST_PREFIXES = ("www.", "m.", "mobile.", "amp.")


@dataclass(frozen=True, slots=True, kw_only=True)
class Coverage:
    """One article as ranking sees it."""

    source: str  # the outlet's name as the source gave it, may be ""
    url: str
    origin: str = ""  # "ddg:news", "feed:<url>", ...
    when: datetime  # published, else first seen
    seen: datetime | None = None  # when the service first saw it (None: `when`)
    language: str = ""  # ISO 639-1, "" when not told


@dataclass(frozen=True, slots=True)
class StoryStats:
    """What ranking knows about one story."""

    story_id: int
    outlets: int
    hosts: int
    origins: int
    newest: datetime
    languages: int = 0  # distinct languages told (0: none could be)
    gained: int = 0  # outlets first seen in the story within GROWTH_WINDOW

    @classmethod
    def of(
        cls, story_id: int, coverage: Iterable[Coverage], *, now: datetime | None = None
    ) -> StoryStats:
        """What ranking knows of the story's articles; `gained` counts from `now` (None: 0)."""
        items = list(coverage)
        if not items:
            raise ValueError(f"story {story_id} has no articles")
        first: dict[str, datetime] = {}
        for c in items:
            name, seen = outlet(c.source, c.url), c.seen or c.when
            first[name] = min(first.get(name, seen), seen)
        gained = 0 if now is None else sum(t >= now - GROWTH_WINDOW for t in first.values())
        return cls(
            story_id=story_id,
            outlets=len(first),
            hosts=len({_host_or_outlet(c) for c in items} - {""}),
            origins=len({origin_kind(c.origin) for c in items} - {""}),
            newest=max(c.when for c in items),
            languages=len({c.language for c in items} - {""}),
            gained=gained,
        )


@dataclass(frozen=True, slots=True)
class Ranked:
    stats: StoryStats
    score: float


def score(stats: StoryStats, *, now: datetime, half_life: timedelta = HALF_LIFE) -> float:
    """The story's score at `now` (see the module docstring)."""
    independent = min(stats.outlets, stats.hosts) if stats.hosts else stats.outlets
    coverage = independent + SAME_HOST_WEIGHT * (stats.outlets - independent)
    reach = coverage + GROWTH_WEIGHT * min(max(stats.gained, 0), coverage)
    told = min(stats.languages, independent, MAX_LANGUAGES)
    languages = 1 + LANGUAGE_BONUS * max(told - 1, 0)
    diversity = 1 + ORIGIN_BONUS * max(stats.origins - 1, 0)
    age = max(now - stats.newest, timedelta(0))
    # Rounded so that scores equal up to float noise tie exactly, and ties go to `order_key`.
    recency: float = 0.5 ** (age / half_life)
    return round(reach * languages * diversity * recency, 9)


def rank_stories(
    stories: Iterable[StoryStats],
    *,
    now: datetime,
    top: int | None = None,
    half_life: timedelta = HALF_LIFE,
) -> list[Ranked]:
    """The stories best first, the first `top` of them (all when None)."""
    ranked = [Ranked(s, score(s, now=now, half_life=half_life)) for s in stories]
    ranked.sort(key=lambda r: order_key(r.score, r.stats.outlets, r.stats.newest, r.stats.story_id))
    return ranked if top is None else ranked[:top]


def order_key(
    score: float, outlets: int, newest: datetime, story_id: int
) -> tuple[float, int, float, int]:
    """Sort key, best first: what `rank_stories` and `best_first` both order by."""
    return (-round(score, 9), -outlets, -newest.timestamp(), story_id)


def best_first(stories: Iterable[StoryView]) -> list[StoryView]:
    """Stored stories by the score of their last clustering, best first, ties as in
    `rank_stories`: the order every list of stories is shown in."""
    return sorted(stories, key=lambda s: order_key(s.score, s.outlet_count, s.newest, s.id))


def outlet(source: str, url: str) -> str:
    """Who published it: the source's name, normalised, else the registrable host of `url`.
    The one identity of an outlet: stories count, rank and compare editions' outlets by it.
    A relayed name ("Reuters (via Hostile Wire)", `relayed`) is its relay's: the feed that
    named Reuters is the only outlet the service can vouch for."""
    source = relayed_by(source) or source
    name = " ".join(fold(source).split())
    name = name.removeprefix("the ")
    if name and " " not in name and "." in name:  # a name like "Reuters.com" is a host
        name = registrable_host(f"http://{name}") or name
    return name or registrable_host(url)


_VIA = " (via "


def relayed(name: str, relay: str) -> str:
    """How an outlet's name is shown when only `relay` (a feed) says so: "Reuters (via Hostile
    Wire)". Its identity (`outlet`, `relayed_by`) is the relay's, whatever `name` says: the
    relay's own " (via " is dropped, and the last " (via " of the result is always this one."""
    relay = " ".join(relay.replace(_VIA, " (").split())
    return f"{' '.join(name.split())}{_VIA}{relay})"


def relayed_by(source: str) -> str:
    """The relay of a `relayed` name ("Hostile Wire"), "" for any other name."""
    at = source.rfind(_VIA)
    if at < 0 or not source.endswith(")"):
        return ""
    return source[at + len(_VIA) : -1].strip()


def credited(source: str) -> str:
    """Who an attribution names ("300, according to X", a new fact's outlet): a relayed name's
    relay, the only outlet that said it; any other name as it is."""
    return relayed_by(source) or source


def _host_or_outlet(c: Coverage) -> str:
    """The publisher's host; for a link through an aggregator, which names none, its outlet."""
    if through_aggregator(c.url):
        return f"outlet:{outlet(c.source, c.url)}"
    return registrable_host(c.url)


def through_aggregator(url: str) -> bool:
    """Whether `url` is Google News' or Bing News' (a feed of theirs, or a link through them):
    its host is the aggregator's, not the publisher's."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return False
    if host == "news.google.com":
        return True
    return registrable_host(url) == "bing.com" and parts.path.lower().startswith("/news")


def registrable_host(url: str) -> str:
    """The name a publisher registered, by the Public Suffix List (its private part too, so
    every "*.blogspot.com" blog is its own): "https://www.bbc.co.uk/x" -> "bbc.co.uk"; an IP
    address as it is; a host that is itself a public suffix as it is; "" if none."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return ""
    for prefix in _HOST_PREFIXES:
        host = host.removeprefix(prefix)
    if not host:
        return ""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    return _suffixes().privatesuffix(host) or host


@cache
def _suffixes() -> PublicSuffixList:
    """The list as the wheel bundles it (never fetched), parsed once, when first needed: it
    takes ~70 ms, which no command should pay at start."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def origin_kind(origin: str) -> str:
    """The discovery path of an article: "ddg:news" -> "ddg", "feed:https://..." -> "feed"."""
    return origin.partition(":")[0]

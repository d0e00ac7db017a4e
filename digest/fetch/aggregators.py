"""Who published an aggregator feed's item: its outlet, its headline without the publisher's
suffix, and the publisher's own link. Pure, no I/O: `digest.fetch.feed_parser` asks it.

Google News and Bing News searches, planets and Feedly or Inoreader bundles put many
publishers in one feed; the feed's name is not who told the story. An item's outlet is, first
found first:

1. its `<source>`: RSS 2.0 `<source url="...">Reuters</source>`, Atom `<source><title>`, Bing's
   `<News:Source>`;
2. the publisher suffix of its headline (" - Reuters", " | The Verge", " — BBC News"), which is
   also removed from the headline shown;
3. when the feed aggregates, the registrable host of the item's link ("theverge.com");
4. otherwise none: the item keeps the feed's name, as every item of an ordinary feed does.

Whose word that is matters: coverage ("Covered by N outlets"), ranking, the lead and "according
to X" count independent outlets, and any feed can name Reuters, AP and the BBC on its own items
(issue 38: one such feed outranked a story three real outlets told). So every item of a feed is
that one outlet, the feed, unless the feed is Google News' or Bing News' (`known_aggregator`)
and the item's article is on the named outlet's own site (`independent`: the host of its
`<source url>`, or a host the name names as below). Any other outlet named is shown relayed,
"Reuters (via Hostile Wire)", and counts as the feed (`digest.stories.rank.relayed`). A link
through Google that names no article is taken on Google's word only in a feed fetched from
Google itself; a planet or a bundle spanning many sites is one outlet too.

Once its page is read, a feed's item may still count as its publisher (`page_outlet`, issue
39): when the service itself read the publisher's own page, on the publisher's registrable
domain, that page names that domain as its site (`og:site_name` or JSON-LD publisher: "Reuters"
on reuters.com, "The Guardian" on theguardian.com), the item links there itself and the page's
own headline is the item's (`own_page`). That is the publisher's word, not the feed's: a feed of
several publishers' pages counts each, and a feed linking to many domains it controls gets at
most one outlet per registrable domain, each for a headline that domain published (subdomains
of one site naming other outlets are still the feed's). A name not the domain's own in one word
("BBC News" on bbc.co.uk: one label, two words, so a site could name itself several ways and
count as several) is shown relayed, as is any page that fails a test.

An item is from an aggregator when it has a `<source>`, when the feed or its links are Google
News' (`news.google.com`) or Bing News' (`bing.com/news`), or when the feed's links span many
sites: at least `MANY_HOSTS` registrable hosts, none holding more than half of the items (a
publisher's own feed links to its own site, now and then to a partner's).

The suffix is removed only from an aggregator's item: when it is the item's `<source>` name
(however long: "The Birmingham News - al.com"), or when it is short (`MAX_SUFFIX_WORDS`,
`MAX_SUFFIX_CHARS`) and names the publisher when that is known: the `<source>`'s name
(compared without case, accents, punctuation or a leading "The"), else the host of its
`<source url>` or of its link ("The Verge" names theverge.com, "BBC News" bbc.co.uk, "Economic
Times" economictimes.indiatimes.com, "Los Angeles Times" latimes.com, "Wall Street Journal"
wsj.com). " - " inside an ordinary publisher's own headline always stays.

An ordinary feed's headline is often its page's `<title>`, the site's name after it ("... -
WSJ", "... | Editorial | Opinion | The Guardian"): `split_site` takes that name off, with the
section labels between it and the headline, only when the suffix is short and names the feed
(its name) or the item's or the feed's site (its host, as above); any other " - " stays.

An item's description that only repeats its headline and its publisher's name (Google News'
`<a href="...">Headline</a>&nbsp;&nbsp;<font color="#6f6f6f">Publisher</font>`) tells the
reader nothing the headline does not: `echoes_headline` says so, and the item has no snippet.
A real description (Bing News' snippet of the article, a publisher's own summary) is kept.

Registrable hosts are `digest.stories.registrable_host`'s, by the Public Suffix List
(`publicsuffixlist`): "bbc.co.uk", "abc.net.au", and each "*.blogspot.com" blog its own.

A Google News or Bing News link leads to the aggregator, not to the article. Where the item
gives the publisher's article URL, that is the link instead: the `url=` of a redirect link
(`news.google.com/news/url?...&url=`, Bing's `apiclick.aspx?...&url=`), else the first link
of its description that leaves the aggregator (on the `<source url>`'s site when that is
known). Current Google News links (`/rss/articles/<id>`) name no article: they stay.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from digest.render.headlines import SECTION_LABELS
from digest.stories.rank import outlet, registrable_host, relayed, relayed_by, through_aggregator
from digest.stories.tokens import fold

__all__ = [
    "MANY_HOSTS",
    "MAX_SUFFIX_CHARS",
    "MAX_SUFFIX_WORDS",
    "Attribution",
    "Entry",
    "aggregates",
    "attribute",
    "echoes_headline",
    "independent",
    "known_aggregator",
    "own_page",
    "page_outlet",
    "split_publisher",
    "split_site",
    "through_aggregator",
]

MANY_HOSTS = 3
MAX_SUFFIX_WORDS = 5  # "The Times of India", "South China Morning Post"
MAX_SUFFIX_CHARS = 40
_MIN_PREFIX = 3  # the site's "bbc" (bbc.co.uk) begins "BBC News"; "ap" is too short to tell

# A headline, a separator aggregators put before the publisher (hyphen, en or em dash, bar)
# and the suffix; the head is greedy, so the last separator is the one.
_SUFFIXED = re.compile(r"(.*\S)\s+[-\u2013\u2014|]\s+(\S.*)", re.S)
_BEFORE_SUFFIX = re.compile(r"(.*\S)\s+[-\u2013\u2014|]\s+", re.S)
# A headline, a bar and a section label a site puts before its name ("Editorial", "Opinion").
_LABELS = "|".join(sorted((re.escape(label) for label in SECTION_LABELS), key=len, reverse=True))
_BAR_LABEL = re.compile(rf"(.*\S)\s+\|\s+(?i:{_LABELS})", re.S)
# Subdomains that name no publisher ("news.example.com" does not make "News" a publisher).
_GENERIC_LABELS = frozenset(
    {"www", "m", "mobile", "amp", "news", "blog", "blogs", "main", "feeds", "rss", "edition", "en"}
)
_WORD = re.compile(r"[^\W_]")  # a letter or a digit
_NOT_ALNUM = re.compile(r"[\W_]+")
_NAME_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Entry:
    """One feed item as attribution sees it."""

    title: str
    url: str  # absolute http(s)
    source_name: str = ""  # its <source>'s name, Bing's <News:Source>
    source_url: str = ""  # its <source url> or Atom <source><link>: the publisher's site or feed
    links: tuple[str, ...] = ()  # the absolute links of its description, in order


@dataclass(frozen=True, slots=True)
class Attribution:
    """What the reader is shown of an item: its headline, link and outlet ("" for the feed's).
    `vouched`: the outlet is the article's own publisher as far as the service can tell
    (`independent`); False: only the feed says so, and the item counts as the feed's."""

    title: str
    url: str
    outlet: str
    vouched: bool = False


def aggregates(feed_url: str, entries: Sequence[Entry]) -> bool:
    """Whether the feed as a whole aggregates: Google News' or Bing News', or links spanning
    many sites (see the module docstring). An item with a `<source>` is an aggregator's either way.
    """
    if through_aggregator(feed_url) or any(through_aggregator(e.url) for e in entries):
        return True
    hosts = Counter(h for e in entries if (h := registrable_host(e.url)))
    total = sum(hosts.values())
    return len(hosts) >= MANY_HOSTS and max(hosts.values()) * 2 <= total


def known_aggregator(feed_url: str, entries: Sequence[Entry]) -> bool:
    """Whether the feed is Google News' or Bing News': at their address, or every item of it
    linked through them. Only such a feed's items may each count as their own outlet."""
    if through_aggregator(feed_url):
        return True
    return bool(entries) and all(through_aggregator(e.url) for e in entries)


def attribute(
    entry: Entry, *, aggregated: bool, known: bool = False, feed_url: str = ""
) -> Attribution:
    """The item's headline, link and outlet; `aggregated`: the feed aggregates (`aggregates`);
    `known`: it is Google News' or Bing News' (`known_aggregator`), fetched from `feed_url`."""
    url = publisher_url(entry)
    if not (aggregated or entry.source_name or entry.source_url):
        return Attribution(entry.title, url, "")
    sites = [u for u in (entry.source_url, url) if u and not through_aggregator(u)]
    hosts = tuple(dict.fromkeys(h for u in sites if (h := _hostname(u))))
    title, suffix = split_publisher(
        entry.title, aggregated=True, publisher=entry.source_name, hosts=hosts
    )
    outlet = entry.source_name or suffix or (registrable_host(sites[-1]) if sites else "")
    vouched = known and bool(outlet) and independent(entry, url, outlet, feed_url=feed_url)
    return Attribution(title, url, outlet, vouched)


def independent(entry: Entry, url: str, outlet: str, *, feed_url: str) -> bool:
    """Whether a known aggregator's item is its named outlet's own: its article `url` is on
    the site of its `<source url>` or on a site `outlet` names ("The Verge", theverge.com).
    A link through the aggregator that names no article is taken on the aggregator's word only
    when the feed is fetched from the aggregator itself (`feed_url`): the service cannot see
    where it leads, and only Google or Bing wrote that document."""
    if through_aggregator(url):
        return through_aggregator(feed_url)
    host = _hostname(url)
    if not host:
        return False
    site = entry.source_url
    if site and not through_aggregator(site) and registrable_host(site) == registrable_host(url):
        return True
    return _names_host(outlet, host)


def echoes_headline(text: str, headlines: Sequence[str], publishers: Sequence[str] = ()) -> bool:
    """Whether a description's `text` is only one of the item's `headlines` (as given, or
    without its suffix), perhaps followed by one of its `publishers`' names: compared without
    case, accents, punctuation or spacing."""
    said = _compact(text)
    if not said:
        return False
    names = {"", *(_compact(p) for p in publishers)}
    return any(said == head + name for h in headlines if (head := _compact(h)) for name in names)


def split_publisher(
    title: str, *, aggregated: bool, publisher: str = "", hosts: Sequence[str] = ()
) -> tuple[str, str]:
    """`title` without its publisher suffix, and that suffix ("" when none is removed).

    Only an aggregator's item loses one (`aggregated`); the suffix must be short, leave a
    headline, and name `publisher` or one of `hosts` when either is known."""
    if not aggregated:
        return title, ""
    name = " ".join(publisher.split())
    end = title.rstrip()
    if name and end[-len(name) :].casefold() == name.casefold():
        # The item's own <source> name after a separator, however long.
        before = _BEFORE_SUFFIX.fullmatch(end[: -len(name)])
        if before and _WORD.search(before.group(1)):
            return before.group(1).strip(), end[-len(name) :]
    split = _SUFFIXED.fullmatch(title)
    if split is None:
        return title, ""
    head, suffix = split.group(1).strip(), split.group(2).strip()
    if not _WORD.search(head) or not _short(suffix):
        return title, ""
    if (publisher or hosts) and not (
        _same_name(suffix, publisher) or any(_names_host(suffix, h) for h in hosts)
    ):
        return title, ""
    return head, suffix


def split_site(title: str, *, names: Sequence[str] = (), hosts: Sequence[str] = ()) -> str:
    """An ordinary feed's headline without its site's name after it: a short suffix naming
    one of `names` (the feed's) or `hosts` (the item's and the feed's sites), and the section
    labels before it (" | Editorial | Opinion"); `title` as it is otherwise."""
    split = _SUFFIXED.fullmatch(title)
    if split is None:
        return title
    head, suffix = split.group(1).strip(), split.group(2).strip()
    if not _WORD.search(head) or not _short(suffix):
        return title
    if not (
        any(_same_name(suffix, n) for n in names) or any(_names_host(suffix, h) for h in hosts)
    ):
        return title
    while (label := _BAR_LABEL.fullmatch(head)) and _WORD.search(label.group(1)):
        head = label.group(1).strip()
    return head


def page_outlet(
    source: str,
    *,
    feed: str,
    feed_url: str,
    url: str,
    site_name: str,
    link: str = "",
    title: str = "",
    page_title: str = "",
) -> str:
    """The outlet a feed's item is shown as once its page (at `url`, after redirects; `link`
    is the item's own) is read, when the item shows its feed's name or a name only the feed
    gives (`source`), its page is not on the feed's site and the page names that site
    (`site_name`: its `og:site_name` or JSON-LD publisher): `source` otherwise.

    The publisher counts as itself (`own_page`: its name is its registrable domain's,
    "Reuters" on reuters.com, the item links there itself, and the page's own headline,
    `page_title`, is the item's `title`): the service read the publisher's page on the
    publisher's domain, so no feed's word is taken, and a feed linking to many domains it
    controls gets at most one outlet per registrable domain, each for a headline that domain
    published. Otherwise it is shown relayed by the feed ("Reuters (via Yahoo News)") and
    counts as the feed."""
    name = " ".join(site_name.split())
    if not (feed and name and _short(name)) or source not in (feed, *_relayed_by(source, feed)):
        return source
    host = _hostname(url)
    if not host or registrable_host(url) == registrable_host(feed_url):
        return source
    if _same_name(name, feed) or not _names_host(name, host):
        return source
    if own_page(name, url, link=link or url, title=title, page_title=page_title):
        return name
    return relayed(name, feed)


def own_page(name: str, url: str, *, link: str, title: str, page_title: str) -> bool:
    """Whether a page read at `url` is the publisher `name`'s own telling of the item headed
    `title`: `name` is its registrable domain's (its outlet is the domain's first label, less a
    leading "the": "The Guardian" on theguardian.com, never "BBC News" on bbc.co.uk nor a
    subdomain's "Reuters" on reuters.hostile.example), the item's `link` is on that domain too
    (no redirect from another site), and the page's own headline is the item's."""
    site = registrable_host(url)
    label = site.split(".")[0]
    if not _WORD.search(label) or label.isdigit() or registrable_host(link) != site:
        return False
    if outlet(name, "") != (label.removeprefix("the") if label.startswith("the") else label):
        return False
    return bool(_headline_forms(title) & _headline_forms(page_title))


def _headline_forms(title: str) -> set[str]:
    """A headline compared: compact, and compact without a suffix after its last separator."""
    forms = {_compact(title)}
    if split := _SUFFIXED.fullmatch(title):
        forms.add(_compact(split.group(1)))
    return forms - {""}


def _relayed_by(source: str, feed: str) -> tuple[str, ...]:
    """`source` when it is a name relayed by `feed` ("Reuters (via Feed)"), else nothing."""
    return (source,) if feed and relayed_by(source) == " ".join(feed.split()) else ()


def publisher_url(entry: Entry) -> str:
    """The publisher's article URL when an aggregator's link hides it and the item gives it."""
    if not through_aggregator(entry.url):
        return entry.url
    target = _query_url(entry.url)
    if target and not through_aggregator(target):
        return target
    site = registrable_host(entry.source_url) if entry.source_url else ""
    leaving = (u for u in entry.links if _is_http(u) and not through_aggregator(u))
    return next((u for u in leaving if not site or registrable_host(u) == site), entry.url)


def _short(suffix: str) -> bool:
    return (
        bool(_WORD.search(suffix))
        and len(suffix) <= MAX_SUFFIX_CHARS
        and len(suffix.split()) <= MAX_SUFFIX_WORDS
    )


def _compact(name: str) -> str:
    """A name as publishers are compared: folded, letters and digits only."""
    return _NOT_ALNUM.sub("", fold(name))


def _without_the(name: str) -> str:
    folded = " ".join(fold(name).split())
    return _compact(folded.removeprefix("the "))


def _same_name(suffix: str, publisher: str) -> bool:
    return (
        bool(publisher)
        and bool(_without_the(suffix))
        and (_without_the(suffix) == _without_the(publisher))
    )


def _names_host(suffix: str, host: str) -> bool:
    """Whether the suffix names the site: "Reuters.com", "The Verge" (theverge.com), "BBC News"
    (bbc.co.uk), "Ars Technica" (arstechnica.com), "Economic Times" (economictimes.indiatimes.com),
    "Los Angeles Times" (latimes.com), "Wall Street Journal" (wsj.com)."""
    full, bare = _compact(suffix), _without_the(suffix)
    if full == _compact(host):
        return True
    labels = set(host.split(".")[:-1]) - _GENERIC_LABELS
    if {full, bare, *_abbreviations(suffix)} & labels:
        return True
    label = registrable_host(f"http://{host}").split(".")[0]
    starts = {label, label.removeprefix("the")}
    return any(len(a) >= _MIN_PREFIX and b.startswith(a) for a in starts for b in (full, bare))


def _abbreviations(name: str) -> set[str]:
    """How a site shortens a name: "wsj" (Wall Street Journal), "latimes" (Los Angeles Times)."""
    words = _NAME_WORDS.findall(" ".join(fold(name).split()).removeprefix("the "))
    if len(words) < 2:
        return set()
    initials = "".join(w[0] for w in words)
    forms = {initials, initials[:-1] + words[-1]}
    return {f for f in forms if len(f) >= _MIN_PREFIX}


def _hostname(url: str) -> str:
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return ""
    return host.removeprefix("www.")


def _query_url(url: str) -> str:
    """The `url=` of a redirect link, when it is an absolute http(s) URL."""
    try:
        values = parse_qs(urlsplit(url).query).get("url") or []
    except ValueError:
        return ""
    return next((v for v in values if _is_http(v)), "")


def _is_http(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False

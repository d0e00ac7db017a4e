"""The things that flow through the pipeline, named for the domain.

`Headline` comes from a source (search result or feed entry); `Extract` is what the fast
extraction pass learned from the page behind it; `Page` is what the deep crawl read. The store
keeps them as articles (`ArticleView`) grouped into stories (`StoryView`); editions (`Edition`)
are what readers see. All are frozen: stages return new values. Sources, rendering and delivery
depend on these types, never on the store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import Field, asdict, dataclass, field, fields, replace
from datetime import date, datetime
from typing import Any, Literal, TypeVar

ExtractStatus = Literal[
    "ok",  # a lede from the article's own paragraphs
    "meta",  # no article paragraphs found; the lede is the page's description meta tag
    "empty",  # page fetched, nothing usable in it
    "timeout",  # the page did not answer within its deadline
    "error",  # HTTP error status, refused connection, bad redirect...
    "blocked",  # the SSRF guard refused the address
    "not_html",  # PDF, image, ... (not decoded as text)
    "skipped",  # not attempted (no budget left, or a cached failure)
]


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing a run could not do: which source, page or recipient, and why (one line)."""

    source: str  # "ddg:news:finance", "feed:https://...", a page's URL, "llm", "email:a@b.org"
    error: str

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "error": self.error}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Failure:
        return cls(str(data["source"]), str(data["error"]))


@dataclass(frozen=True, slots=True)
class Headline:
    """One item from a source: a news result, a web search result or a feed entry."""

    title: str
    url: str
    source: str = ""
    published: datetime | None = None
    snippet: str = ""
    image: str | None = None
    category: str | None = None
    origin: str = ""  # "ddg:news", "ddg:text" or "feed:<feed url>"
    feed: str = ""  # a feed's item: the feed's name (`source` is its outlet's, maybe another)

    def with_(self, **changes: Any) -> Headline:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """As JSON (a task's arguments, a parser process's answer)."""
        data = asdict(self)
        data["published"] = self.published.isoformat() if self.published else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Headline:
        """From `to_json`'s shape; unknown keys are ignored."""
        values = {k: v for k, v in data.items() if k in _HEADLINE_FIELDS}
        published = values.get("published")
        values["published"] = datetime.fromisoformat(published) if published else None
        return cls(**values)


_HEADLINE_FIELDS = frozenset(f.name for f in fields(Headline))


@dataclass(frozen=True, slots=True)
class Extract:
    """What the fast extraction pass found for one URL; `full_content` is "" when nothing was."""

    url: str
    full_content: str = ""
    status: ExtractStatus = "skipped"
    http_status: int | None = None
    final_url: str | None = None
    error: str | None = None
    bytes_read: int = 0
    elapsed: float = 0.0
    site_name: str = ""  # the publisher the page names itself (og:site_name), "" when none
    page_title: str = ""  # the page's own headline (og:title, else <title>), "" when none

    def to_json(self) -> dict[str, Any]:
        """The result as `digest extract --json` prints it."""
        return {
            "url": self.url,
            "full_content": self.full_content,
            "status": self.status,
            "http_status": self.http_status,
            "final_url": self.final_url,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class Item:
    """A headline enriched by fast extraction: what `news`, `query` and `collect` hand on."""

    headline: Headline
    extract: Extract

    def to_json(self) -> dict[str, Any]:
        h, e = self.headline, self.extract
        return {
            "title": h.title,
            "url": h.url,
            "source": h.source,
            "published": h.published.isoformat() if h.published else None,
            "category": h.category,
            "snippet": h.snippet,
            "image": h.image,
            "full_content": e.full_content,
            "extract_status": e.status,
        }


@dataclass(frozen=True, slots=True)
class MainText:
    """What a page says: its title and its article text ("" when none was found)."""

    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Page:
    """A page read in depth by the crawler: its main text, however it had to be fetched."""

    url: str
    final_url: str
    title: str = ""
    text: str = ""  # main text (trafilatura on the rendered HTML, or markitdown for PDFs)
    kind: Literal["html", "pdf"] = "html"
    fetched_by: Literal["browser", "http"] = "http"
    http_status: int | None = None
    error: str | None = None  # set when nothing usable was read
    note: str | None = None  # why the text is partial or not the browser's (a cut, a fallback)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.text)


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary of one article. `summarizer` is "extractive" or "llm:<model>"."""

    title: str
    summary: str
    brief_summary: str
    keywords: tuple[str, ...] = ()
    summarizer: str = "extractive"
    prompt_tokens: int = 0
    completion_tokens: int = 0


# -- Editions: what readers see (the archive, the HTML digest, the emails) ----------------------


@dataclass(frozen=True, slots=True)
class Outlet:
    """One outlet's telling of a story: a link a reader can follow."""

    name: str
    url: str
    title: str = ""
    # ISO 639-1 code of the language its article is in (title and lede), "" when not detected
    # (and in editions stored before languages were detected).
    language: str = ""


@dataclass(frozen=True, slots=True)
class StorySummary:
    """One summary of a story, written from several of its outlets' texts, which it cites as
    [1], [2], ... in the order of `sources`. Its claims were checked against those texts
    (`digest.summarize.claims`): `claims` counted, `claims_found` backed by them, and
    `sentences_removed` taken out because they were not. `summarizer` is "extractive" or
    "llm:<model>"; `note` says why an LLM summary became extractive (a failure, the claim check,
    the deepen's time budget), "" otherwise. Text fields are scraped: escape or sanitize them."""

    title: str
    summary: str
    brief_summary: str
    keywords: tuple[str, ...] = ()
    summarizer: str = "extractive"
    sources: tuple[Outlet, ...] = ()
    claims: int = 0
    claims_found: int = 0
    sentences_removed: int = 0
    note: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    created_at: datetime | None = None

    def claims_json(self) -> dict[str, int]:
        return {
            "total": self.claims,
            "found": self.claims_found,
            "sentences_removed": self.sentences_removed,
        }


@dataclass(frozen=True, slots=True)
class NewFact:
    """A sentence of a new outlet's lede that the story's earlier edition did not say."""

    outlet: str  # the outlet's name as the edition shows it
    text: str  # scraped: escape or sanitize it
    language: str = ""  # its outlet's language (ISO 639-1), "" when not detected


@dataclass(frozen=True, slots=True)
class WhatsNew:
    """What an updated story adds since it was last in an edition
    (decided by `digest.stories.novelty.whats_new`)."""

    since: date  # the day of the story's latest earlier edition
    outlets: tuple[Outlet, ...]  # the outlets that were not in that edition, in story order
    facts: tuple[NewFact, ...] = ()  # what their ledes add, at most a few
    # Only in one reader's copy (`digest.stories.novelty.for_reader`): told against the last
    # edition THAT reader received (`since`), so their copy shows it instead of the summary,
    # with the corrections of what they were sent.
    for_reader: bool = False
    corrections: tuple[Correction, ...] = ()


@dataclass(frozen=True, slots=True)
class StoryEvent:
    """One entry of a story's timeline (the `story_events` table; digest.stories.memory).
    `kind`: "first" (first report), "outlet" (a new outlet), "fact" (a new checked fact or
    figure, `subject`/`value` set for a figure), "revision" (an outlet changed its own figure:
    `previous` -> `value`), "disagreement" (outlets report different values for `subject`),
    "correction" (a figure sent in the edition of `edition_day` was contradicted: `previous`
    was said, `value` is now reported). Text fields are scraped: escape them."""

    id: int
    story_id: int
    kind: str
    at: datetime  # when it happened (its article's time)
    recorded_at: datetime  # when the service learned it
    outlet: str = ""
    url: str = ""
    text: str = ""  # the sentence or headline
    subject: str = ""  # a figure's subject ("dead", "toll", "price")
    value: str = ""  # as written ("at least 30")
    previous: str = ""
    edition_day: date | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry as a story's `timeline` in the API and the MCP tools: what happened, when,
        from which outlet and link (a figure's subject, value and earlier value when it is one)."""
        return {
            "kind": self.kind,
            "at": self.at.isoformat(),
            "recorded_at": self.recorded_at.isoformat(),
            "outlet": self.outlet,
            "url": self.url,
            "text": self.text,
            "subject": self.subject,
            "value": self.value,
            "previous": self.previous,
            "edition_day": self.edition_day.isoformat() if self.edition_day else None,
        }


@dataclass(frozen=True, slots=True)
class Reported:
    """One value outlets report for a disputed figure, and who reports it."""

    value: str  # as written ("at least 30")
    outlets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Outlets report different values for the same thing (a toll, an amount, a date)."""

    subject: str
    reported: tuple[Reported, ...]  # at least two, most outlets first


@dataclass(frozen=True, slots=True)
class Correction:
    """A figure sent in an earlier edition that later reports contradict."""

    subject: str
    said: str  # what the earlier edition said ("12")
    now: str  # what is reported now ("30")
    said_on: date  # the day of the edition that said it
    sentence: str  # the sentence as it was sent
    outlets: tuple[str, ...] = ()  # who reports the new value


@dataclass(frozen=True, slots=True)
class EditionStory:
    """A story as it appears in an edition. Text fields are scraped: escape or sanitize them."""

    id: int
    category: str
    title: str
    brief_summary: str
    summary: str
    keywords: tuple[str, ...]
    summarizer: str  # "extractive" or "llm:<model>"
    outlets: tuple[Outlet, ...]
    first_seen: datetime
    updated: bool = False  # gained outlets after it was first seen
    image: str | None = None
    whats_new: WhatsNew | None = None  # None: new today, or no outlet joined since last time
    # Only in one reader's copy of an edition (`digest.summarize.translate`), "" elsewhere: the
    # language (ISO 639-1) its text is in when that is not the reader's, and the language it was
    # translated from when it was translated for them.
    language: str = ""
    translated_from: str = ""
    # The claim check of the story's summary (None: a lede, or an edition stored before
    # summaries were checked), and what its citations [1], [2], ... point to.
    claims: int | None = None
    claims_found: int | None = None
    sentences_removed: int = 0
    summary_note: str = ""
    cited: tuple[Outlet, ...] = ()
    # The story's ranking score when the edition was built (`digest.stories.rank`): the lead
    # orders stories of several categories by it. 0.0 in editions stored before it was kept.
    score: float = 0.0
    # The other categories this event was also collected under; it is shown only here, its best
    # category, and mentioned in those (`EditionSection.mentions`).
    also_in: tuple[str, ...] = ()
    # Story memory (issue 31): the story's timeline up to this edition (oldest first, at most
    # a few dozen entries), where its outlets disagree, and corrections of what earlier
    # editions said.
    timeline: tuple[StoryEvent, ...] = ()
    disagreements: tuple[Disagreement, ...] = ()
    corrections: tuple[Correction, ...] = ()


@dataclass(frozen=True, slots=True)
class Translation:
    """A story's headline, brief and summary in another language, made once per original text
    (`source_hash`), language and translator ("llm:<model>"), and kept. `error` set: it was
    refused (a claim of the original did not survive it) and readers get the original."""

    source_hash: str
    language: str  # ISO 639-1, translated into
    translator: str
    source_language: str  # ISO 639-1, translated from
    title: str
    brief_summary: str
    summary: str
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class EditionHeadline:
    """One of the day's other headlines, with its lede: a story not shown above it (its title,
    its first outlet's link and lede, and every outlet's name), or an article no story holds."""

    title: str
    url: str
    source: str  # its (first) outlet's name
    lede: str
    published: datetime | None = None
    outlets: tuple[str, ...] = ()  # a story's outlets' names, in its order; () for an article

    @property
    def names(self) -> tuple[str, ...]:
        """Whose it is: the story's outlets, else the article's source (none when it has none)."""
        return self.outlets or ((self.source,) if self.source else ())


@dataclass(frozen=True, slots=True)
class EditionMention:
    """A story of this section's category that is shown in another section, its best one."""

    story_id: int
    title: str
    category: str  # the section it is shown in
    outlet_count: int


@dataclass(frozen=True, slots=True)
class EditionSection:
    category: str
    stories: tuple[EditionStory, ...]
    headlines: tuple[EditionHeadline, ...]
    mentions: tuple[EditionMention, ...] = ()


@dataclass(frozen=True, slots=True)
class Edition:
    """One day's digest in the configured time zone: per category, its top stories and ledes."""

    day: date
    timezone: str
    sections: tuple[EditionSection, ...]
    generated_at: datetime
    # Why an edition without stories has none, when that is known (a run whose every source
    # failed): its page says so rather than only "no stories".
    note: str = ""

    def only(self, categories: tuple[str, ...] | None) -> Edition:
        """The edition restricted to a subscriber's categories (None: all of them)."""
        if not categories:
            return self
        keep = tuple(s for s in self.sections if s.category in categories)
        return replace(self, sections=keep)


# -- What the store keeps -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FeedState:
    """What the next fetch of a feed needs (validators) and what backs off a failing one."""

    url: str
    category: str
    title: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    error_count: int = 0
    last_error: str | None = None
    last_ok_at: datetime | None = None
    last_checked_at: datetime | None = None


FeedOrigin = Literal["cli", "opml"]  # how a feed kept in the database was subscribed


@dataclass(frozen=True, slots=True)
class SubscribedFeed:
    """A feed subscribed with `digest feeds add` or `import`, kept in the database beside the
    config file's `[[sources.feeds]]` and collected like them. `name` None: the feed's own title
    is shown as the source."""

    url: str  # fetched as it is; its canonical_url is the key that keeps it from being added twice
    category: str
    name: str | None
    origin: FeedOrigin
    added_at: datetime
    site_url: str | None = None  # the page it was found on, or the OPML outline's htmlUrl


@dataclass(frozen=True, slots=True)
class ListedFeed:
    """One feed as `digest feeds list` shows it: from the config file or the database, with its
    health (None: never fetched)."""

    url: str
    category: str
    name: str | None
    source: Literal["config", "cli", "opml"]
    added_at: datetime | None = None  # database feeds only
    site_url: str | None = None
    state: FeedState | None = None

    @property
    def in_config(self) -> bool:
        return self.source == "config"

    @property
    def title(self) -> str | None:
        """The name shown for it: the configured one, else the feed's own title when fetched."""
        return self.name or (self.state.title if self.state else None)

    def to_json(self) -> dict[str, Any]:
        """The feed as `digest feeds list --json` prints it."""
        s = self.state
        return {
            "url": self.url,
            "category": self.category,
            "name": self.name,
            "title": self.title,
            "stored_in": "config" if self.in_config else "db",
            "source": self.source,
            "added_at": self.added_at.isoformat() if self.added_at else None,
            "site_url": self.site_url,
            "errors_in_a_row": s.error_count if s else 0,
            "last_error": s.last_error if s else None,
            "last_ok_at": s.last_ok_at.isoformat() if s and s.last_ok_at else None,
            "last_checked_at": s.last_checked_at.isoformat() if s and s.last_checked_at else None,
        }


def channel_key(url: str) -> str:
    """The ledger's name for the channel of Apprise URL `url`: its scheme and a hash of the URL
    as stored ("json:5d41402abc4b"), so that a secret in it never shows and the same URL is the
    same channel however often it is removed and added again."""
    scheme = url.partition("://")[0].strip().lower() or "apprise"
    return f"{scheme}:{hashlib.sha256(url.strip().encode()).hexdigest()[:12]}"


@dataclass(frozen=True, slots=True)
class Channel:
    """One place besides email where a subscriber gets the digest: an Apprise URL as it was
    given, `{env:NAME}` placeholders and all (they are resolved only when sending, never
    stored resolved). `key` names the channel in the delivery ledger (`channel_key`)."""

    url: str
    key: str


def _json(
    key: str = "",
    dump: Callable[[Any], Any] | None = None,
    load: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """A preference's JSON when it is not its own name and value: its key, how it is written
    and read back."""
    return {"json": key, "dump": dump, "load": load}


def _listed(value: Iterable[str] | None) -> list[str]:
    return list(value or [])


def _tuple_or_none(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return tuple(value or ()) or None


def _channels_json(urls: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"url": u, "key": channel_key(u)} for u in urls]


def _channels_from_json(listed: Iterable[Mapping[str, str]]) -> tuple[str, ...]:
    return tuple(c["url"] for c in listed)


_T = TypeVar("_T")


def _same(value: _T) -> _T:
    return value


@dataclass(frozen=True, slots=True)
class Preferences:
    """What a subscriber chooses: categories (None: all), time zone, send time ("HH:MM"; None:
    the schedule's `publish_at`), keyword rules (terms as `digest.stories.terms` reads them),
    stories per category (None: all), language (ISO 639-1; None: as written), whether the email
    comes at all, and Apprise URLs of further channels. How each is typed, shown, checked and
    stored: its `Field` in `digest.subscribers.preferences.FIELDS`."""

    categories: tuple[str, ...] | None = field(
        default=None, metadata=_json(dump=_listed, load=_tuple_or_none)
    )
    timezone: str = "UTC"
    send_at: str | None = None
    include: tuple[str, ...] = field(default=(), metadata=_json(dump=list, load=tuple))
    exclude: tuple[str, ...] = field(default=(), metadata=_json(dump=list, load=tuple))
    max_stories: int | None = None
    language: str | None = None
    send_email: bool = field(default=True, metadata=_json("email_digest", load=bool))
    channels: tuple[str, ...] = field(
        default=(), metadata=_json(dump=_channels_json, load=_channels_from_json)
    )

    def to_json(self) -> dict[str, Any]:
        """Every preference by its JSON key (channels with their ledger keys), as `digest
        subscribers list --json` prints them."""
        return {
            _key(f): (f.metadata.get("dump") or _same)(getattr(self, f.name)) for f in fields(self)
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Preferences:
        """The preferences `to_json` gave (a key left out: its default). Read as written, not
        checked: what is new goes through `digest.subscribers.preferences.apply_changes`."""
        return cls(
            **{
                f.name: (f.metadata.get("load") or _same)(data[_key(f)])
                for f in fields(cls)
                if _key(f) in data
            }
        )


def _key(declared: Field[Any]) -> str:
    return str(declared.metadata.get("json") or declared.name)


def json_key(name: str) -> str:
    """The JSON key of the preference `name` (`Preferences.to_json`)."""
    return next(_key(f) for f in fields(Preferences) if f.name == name)


@dataclass(frozen=True, slots=True)
class Subscriber:
    """Who gets the digest, and how (`preferences`; what each is and how it is checked:
    `digest.subscribers.preferences`). `token` is the secret of the subscriber's unsubscribe and
    preferences links; it stays the same for the life of the subscription."""

    email: str  # lower-cased
    token: str
    created_at: datetime
    preferences: Preferences

    @property
    def channels(self) -> tuple[Channel, ...]:
        """The channels besides email, each with its name in the delivery ledger."""
        return tuple(Channel(url, channel_key(url)) for url in self.preferences.channels)

    def to_json(self) -> dict[str, Any]:
        """The subscriber as `digest subscribers list --json` prints it: every preference
        (channel URLs as stored, placeholders unresolved), never the token."""
        return {"email": self.email, **self.preferences.to_json()}


# -- The delivery ledger: what was sent to whom (its transitions: `digest.deliver.ledger`) ------

DeliveryState = Literal["pending", "sending", "sent", "failed", "skipped"]
EMAIL_CHANNEL = "email"  # a ledger row's channel for the email digest; others: `channel_key`


@dataclass(frozen=True, slots=True)
class Delivery:
    """One row of the ledger: the message of one edition to one recipient on one channel.

    `(edition_day, recipient, channel)` is the key (UNIQUE in the database); `channel` is
    "email" or the key of one of the recipient's Apprise channels. `attempts` counts the times
    the row was claimed for sending since it was created or last explicitly re-sent.
    `last_reply` is the server's last reply (the mail server's, the service's HTTP status and
    answer, or what happened to the connection; for a skipped row, why).
    `message_id` is the Message-ID the row was (or is being) sent with.
    """

    edition_day: date
    recipient: str
    state: DeliveryState = "pending"
    attempts: int = 0
    next_attempt_at: datetime | None = None
    last_reply: str | None = None
    message_id: str | None = None
    updated_at: datetime | None = None
    channel: str = EMAIL_CHANNEL

    @property
    def key(self) -> tuple[date, str, str]:
        return (self.edition_day, self.recipient, self.channel)

    @property
    def addressee(self) -> str:
        """The recipient, and the channel when it is not email ("a@b.org (ntfy:1a2b3c4d5e6f)")."""
        if self.channel == EMAIL_CHANNEL:
            return self.recipient
        return f"{self.recipient} ({self.channel})"

    def to_json(self) -> dict[str, Any]:
        """The row as `digest deliveries --json` prints it."""
        return {
            "edition": self.edition_day.isoformat(),
            "recipient": self.recipient,
            "channel": self.channel,
            "state": self.state,
            "attempts": self.attempts,
            "next_attempt_at": self.next_attempt_at.isoformat() if self.next_attempt_at else None,
            "reply": self.last_reply,
            "message_id": self.message_id,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delivery:
        """The row back from its `to_json` (a worker's delivery outcome crosses the queue so)."""

        def moment(value: str | None) -> datetime | None:
            return datetime.fromisoformat(value) if value else None

        return cls(
            edition_day=date.fromisoformat(data["edition"]),
            recipient=data["recipient"],
            state=data["state"],
            attempts=int(data["attempts"]),
            next_attempt_at=moment(data["next_attempt_at"]),
            last_reply=data["reply"],
            message_id=data["message_id"],
            updated_at=moment(data["updated_at"]),
            channel=data["channel"],
        )

    def due(self, now: datetime) -> bool:
        """True when the row is pending and its retry time (if any) has come."""
        return self.state == "pending" and (
            self.next_attempt_at is None or self.next_attempt_at <= now
        )


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of a job (collect, deepen, publish, deliver) as the store recorded it."""

    id: int
    kind: str
    key: str | None
    status: str  # running, ok, partial, failed
    started_at: datetime
    finished_at: datetime | None
    counts: dict[str, Any] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)  # [{"source": ..., "error": ...}]


@dataclass(frozen=True, slots=True)
class ArticleView:
    """One article of a story, with what the deep path knows about it."""

    id: int
    url: str
    title: str
    source: str
    outlet: str  # the source's name, else the registrable host (digest.stories.rank.outlet)
    published: datetime | None
    first_seen: datetime
    lede: str
    origin: str
    has_text: bool  # the deep crawl stored a main text
    text_hash: str | None
    crawl_status: str | None  # ok, pdf, empty, error; None: never crawled
    summary: Summary | None  # the latest summary of this article (or of the same text)

    @property
    def when(self) -> datetime:
        """When the article counts as news: its publication time, else when it was first seen."""
        return self.published or self.first_seen


@dataclass(frozen=True, slots=True)
class StoryView:
    """A story and its articles: the representative first, then one per other outlet, newest
    first, then further articles of outlets already listed."""

    id: int
    category: str
    title: str
    first_seen: datetime
    last_seen: datetime
    updated: bool  # gained an outlet after it was first clustered
    updated_at: datetime | None
    article_count: int
    outlet_count: int
    score: float
    articles: tuple[ArticleView, ...]
    summary: StorySummary | None = None  # the latest summary of the story as a whole

    @property
    def outlets(self) -> tuple[str, ...]:
        """Distinct outlets in article order."""
        return tuple(dict.fromkeys(a.outlet for a in self.articles))

    @property
    def newest(self) -> datetime:
        """When its newest article counts as news (`first_seen` for a story with none)."""
        return max((a.when for a in self.articles), default=self.first_seen)

    def to_json(self) -> dict[str, Any]:
        """The story as `digest stories --json` prints it: its summary (the story's own, else
        its first article's), the claim check of that summary, and every outlet's link."""
        story = self.summary
        lead = story or next((a.summary for a in self.articles if a.summary), None)
        outlets: dict[str, dict[str, str]] = {}
        for a in self.articles:
            outlets.setdefault(
                a.outlet, {"outlet": a.source or a.outlet, "title": a.title, "url": a.url}
            )
        n = self.outlet_count
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "first_seen": self.first_seen.isoformat(),
            "last_seen": self.last_seen.isoformat(),
            "updated": self.updated,
            "outlet_count": n,
            "summary": lead.summary if lead else "",
            "brief_summary": lead.brief_summary if lead else "",
            "keywords": list(lead.keywords) if lead else [],
            "summarizer": lead.summarizer if lead else None,
            "summary_of": "story" if story else ("article" if lead else None),
            "claims": story.claims_json() if story else None,
            "summary_note": story.note if story else "",
            "cited": [{"outlet": o.name, "url": o.url} for o in story.sources] if story else [],
            "coverage": f"Covered by {n} outlet{'' if n == 1 else 's'}",
            "outlets": list(outlets.values()),
            "articles": [
                {"title": a.title, "url": a.url, "source": a.source, "outlet": a.outlet}
                for a in self.articles
            ],
        }


@dataclass(frozen=True, slots=True)
class ClusterResult:
    """What clustering one category did (`digest.jobs.clustering.cluster_category`)."""

    category: str
    articles: int  # articles looked at: the window's, and the other articles of their stories
    assigned: int  # articles put in a story by this call
    created: tuple[int, ...] = ()  # new stories
    grown: tuple[int, ...] = ()  # existing stories that gained articles
    updated: tuple[int, ...] = ()  # existing stories that gained an outlet (marked updated)
    stories: int = 0  # stories whose counts and scores were refreshed
    similarity: str = "lexical"  # "embeddings" when the articles' vectors were used
    embedded: int = 0  # vectors this call asked the embeddings endpoint for (and stored)
    embedding_error: str | None = None  # why this call fell back to words alone


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One story found: its best-matching article, the passage that matched, every outlet."""

    title: str
    url: str
    published: datetime  # the article's publication time, else when it was first seen
    category: str | None
    source: str
    snippet: str  # plain text
    highlights: tuple[tuple[int, int], ...]  # [start, end) offsets of matched words in snippet
    matched: str  # where the passage shown matched: "lede", "summary", "text", else "headline"
    score: float  # higher is better; comparable within one search only
    story_id: int | None
    outlets: tuple[Outlet, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "url": self.url,
            "published": self.published.isoformat(),
            "category": self.category,
            "source": self.source,
            "snippet": self.snippet,
            "highlights": [list(span) for span in self.highlights],
            "matched": self.matched,
            "score": round(self.score, 6),
            "story_id": self.story_id,
            "outlets": [{"name": o.name, "url": o.url} for o in self.outlets],
        }

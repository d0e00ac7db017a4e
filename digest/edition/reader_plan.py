"""Who gets what of one edition: pure decisions, no store, network or clock (`now` is given),
so they are tested like `digest.schedule` and the ledger, without a mail server.

`digest.jobs.sending.send_edition` reads the subscribers and the edition's ledger rows, asks
`plan_edition` which subscribers get a copy now and on which channels, translates the copies
and hands their messages to `digest.deliver.sender.deliver`. A subscriber's preferences are read
here and nowhere else on the way to the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time

from digest.edition.sections import tellings_of
from digest.models import (
    EMAIL_CHANNEL,
    Channel,
    Delivery,
    Edition,
    EditionStory,
    NewFact,
    StoryView,
    Subscriber,
)
from digest.schedule import parse_clock, subscriber_edition
from digest.stories.novelty import Telling, for_reader, last_seen
from digest.stories.rules import Rules, is_empty, tailor
from digest.stories.tokens import fold
from digest.summarize.output import linkless_line

Key = tuple[str, str]  # a ledger row's (recipient, channel) within one edition


@dataclass(frozen=True, slots=True)
class Send:
    """One message of a subscriber's copy: the email (`channel` None) or an Apprise channel."""

    recipient: str
    channel: Channel | None = None

    @property
    def key(self) -> Key:
        return (self.recipient, self.channel.key if self.channel else EMAIL_CHANNEL)


@dataclass(frozen=True, slots=True)
class Copy:
    """A subscriber's own copy of the edition (their categories, what their rules keep, before
    translation into `language`) and the messages it goes out as."""

    subscriber: Subscriber
    edition: Edition
    language: str | None
    sends: tuple[Send, ...]


@dataclass(frozen=True, slots=True)
class EditionPlan:
    """What one run sends of an edition: each copy's messages, and the rows skipped because a
    reader's rules kept nothing of it (their reply says so)."""

    copies: tuple[Copy, ...] = ()
    skipped: tuple[Key, ...] = ()
    # The rows of readers to whom nothing of the edition is new: every story of their copy
    # was in the last edition they received, unchanged (`news_for`), and it has no headline.
    unchanged: tuple[Key, ...] = ()

    @property
    def languages(self) -> bool:
        """Whether a copy is to be translated (the LLM's client is loaded only then)."""
        return any(c.language for c in self.copies)


@dataclass(frozen=True, slots=True)
class EditionRows:
    """What the ledger of an edition already holds, as a plan reads it."""

    settled: frozenset[Key] = frozenset()  # a row that is not pending: sent, sending, failed...
    retrying: frozenset[str] = frozenset()  # recipients with a pending row
    known: frozenset[Key] = frozenset()  # every row
    begun: frozenset[str] = frozenset()  # recipients with any row

    @classmethod
    def of(cls, rows: Iterable[Delivery]) -> EditionRows:
        rows = list(rows)
        return cls(
            settled=frozenset((r.recipient, r.channel) for r in rows if r.state != "pending"),
            retrying=frozenset(r.recipient for r in rows if r.state == "pending"),
            known=frozenset((r.recipient, r.channel) for r in rows),
            begun=frozenset(r.recipient for r in rows),
        )

    def still_open(self, sends: Iterable[Send]) -> tuple[Send, ...]:
        """Of a subscriber's messages, those this edition still owes them: not settled and,
        once their edition went out, only on the channels it went out on (a channel switched
        on later starts with the next edition)."""
        return tuple(
            s
            for s in sends
            if s.key not in self.settled and (s.recipient not in self.begun or s.key in self.known)
        )


def wanted(subscriber: Subscriber) -> tuple[Send, ...]:
    """Every message a subscriber asks for: the email (unless switched off), then each of
    their channels once."""
    channels = {c.key: c for c in subscriber.channels}
    email = (Send(subscriber.email),) if subscriber.preferences.send_email else ()
    return (*email, *(Send(subscriber.email, c) for c in channels.values()))


def due_edition(
    subscriber: Subscriber, days: Iterable[date], publish_at: time, now: datetime
) -> date | None:
    """Of the editions of `days`, the one due for the subscriber at `now`: at their own send
    time (else the schedule's `publish_at`) in their own zone (`schedule.subscriber_edition`)."""
    prefs = subscriber.preferences
    send_at = parse_clock(prefs.send_at) if prefs.send_at else publish_at
    return subscriber_edition(days, send_at, prefs.timezone, now)


@dataclass(frozen=True, slots=True)
class History:
    """What readers were sent before an edition, as their copies' "what is new" reads it: the
    stored editions of the last days, the days each reader received (sent on any of their
    channels), and the articles of the edition's stories now (`novelty.Telling`, by story)."""

    editions: Mapping[date, Edition] = field(default_factory=dict)
    received: Mapping[str, frozenset[date]] = field(default_factory=dict)
    tellings: Mapping[int, Sequence[Telling]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        editions: Mapping[date, Edition],
        received: Mapping[str, frozenset[date]],
        stories: Iterable[StoryView],
    ) -> History:
        """What was read for it: the earlier `editions` by day, who `received` which, and the
        edition's `stories` as the store holds them now (their articles)."""
        return cls(editions, received, {v.id: tuple(tellings_of(v)) for v in stories})


def news_for(edition: Edition, subscriber: Subscriber, history: History) -> Edition:
    """The edition as news to this subscriber (`novelty.for_reader`): a story they were never
    sent in full, an updated one as what is new since the last edition they received that
    carried it, an unchanged one left out. What they were sent is read as their copy of each
    earlier edition under their preferences of today."""
    days = sorted(
        (d for d in history.received.get(subscriber.email, ()) if d < edition.day),
        reverse=True,
    )
    # Their copies of the earlier editions, newest first, as far back as today's stories go.
    wanted = {s.id for s in _stories(edition)}
    received: list[tuple[date, datetime, list[EditionStory]]] = []
    for day in days:
        earlier = history.editions.get(day)
        if not wanted or earlier is None:
            continue
        stories = _stories(_tailored(earlier, subscriber))
        received.append((day, earlier.generated_at, stories))
        wanted -= {s.id for s in stories}
    sections = []
    for section in edition.sections:
        stories = []
        for story in section.stories:
            seen = last_seen(story.id, received)
            missed = (
                [
                    s
                    for d, e in history.editions.items()
                    if seen.day < d < edition.day and d not in days
                    for s in _stories(e)
                    if s.id == story.id
                ]
                if seen is not None
                else []
            )
            shown = for_reader(
                story, seen, tellings=history.tellings.get(story.id, ()), missed=missed
            )
            if shown is not None:
                stories.append(linkless_news(shown))
        if stories or section.headlines:
            sections.append(replace(section, stories=tuple(stories)))
    return replace(edition, sections=tuple(sections))


def linkless_news(story: EditionStory) -> EditionStory:
    """The story with what is new in it ("New:", "Since your last digest") told without links,
    as summaries are (`linkless_line`: each outlet's own article URL may stay), each fact once.
    Timelines and ledes are stripped before they are recorded; this is for the lines an older
    version stored, and a stored edition's facts."""
    news = story.whats_new
    if news is None:
        return story
    urls = {o.name: o.url for o in story.outlets}
    facts: list[NewFact] = []
    for fact in news.facts:
        own = urls.get(fact.outlet, "")
        text = linkless_line(fact.text, [own] if own else [])
        if text and all(fold(text) != fold(f.text) for f in facts):
            facts.append(replace(fact, text=text))
    return replace(story, whats_new=replace(news, facts=tuple(facts)))


def _tailored(edition: Edition, subscriber: Subscriber) -> Edition:
    prefs = subscriber.preferences
    return tailor(
        edition,
        categories=prefs.categories,
        rules=Rules(prefs.include, prefs.exclude),
        max_stories=prefs.max_stories,
    )


def _stories(edition: Edition) -> list[EditionStory]:
    return [s for section in edition.sections for s in section.stories]


def own_copy(
    edition: Edition, subscriber: Subscriber, history: History | None = None
) -> Edition | None:
    """The subscriber's copy: their categories, the stories their rules keep, at most their
    number a category; with their `history`, each story as news to them (`news_for`: an
    unchanged one left out before the number is counted, so another takes its place). None
    when their rules left nothing of an edition that had something in their categories: that
    copy is skipped, not sent."""
    if history is not None:
        edition = news_for(edition, subscriber, history)
    prefs = subscriber.preferences
    rules = Rules(prefs.include, prefs.exclude)
    copy = tailor(edition, categories=prefs.categories, rules=rules, max_stories=prefs.max_stories)
    if rules and is_empty(copy) and not is_empty(edition.only(prefs.categories)):
        return None
    return copy


def plan_edition(
    edition: Edition,
    subscribers: Iterable[Subscriber],
    rows: Iterable[Delivery],
    now: datetime,
    *,
    publish_at: time,
    due_only: bool = False,
    newer: Sequence[date] = (),
    history: History | None = None,
) -> EditionPlan:
    """Who gets `edition` at `now`, on which channels, in which copy.

    Every subscriber with a message still owed (`EditionRows.still_open`); with `due_only`,
    only those it is due for (`due_edition`, of this edition and the `newer` ones: a newer one
    due replaces it), and those with rows to retry in any case. `rows` are the edition's
    ledger rows; `publish_at` is the send time of a subscriber who chose none; with `history`,
    each copy tells its stories as news to its reader (`news_for`)."""
    seen = EditionRows.of(rows)
    days = (edition.day, *newer)
    copies: list[Copy] = []
    skipped: list[Key] = []
    unchanged: list[Key] = []
    for sub in subscribers:
        waits = due_only and sub.email not in seen.retrying  # retries go out in any case
        if waits and due_edition(sub, days, publish_at, now) != edition.day:
            continue
        sends = seen.still_open(wanted(sub))
        if not sends:
            continue
        copy = own_copy(edition, sub, history)
        if copy is None:
            skipped += (s.key for s in sends)
            continue
        if history is not None and is_empty(copy) and not is_empty(own_copy(edition, sub) or copy):
            unchanged += (s.key for s in sends)
            continue
        copies.append(Copy(sub, copy, sub.preferences.language, sends))
    return EditionPlan(tuple(copies), tuple(skipped), tuple(unchanged))

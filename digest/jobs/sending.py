"""Sending an edition: each subscriber's copy through the delivery ledger, and what the run
reports of it.

Who gets what of the edition (their categories and rules, their language, nothing twice, only
what is new to them) is decided in `digest.edition.reader_plan` (pure); here the store is read
for it (`reader_history`), the copies translated, the messages built and sent through the
ledger (`send_edition`), on the workers in batches of subscribers when `[queue]` is on
(`DeliveryUnit`, `deliver_batch`). `digest.jobs.publish` sends the edition it made this way
and records `delivery_counts` and `delivery_failures` on its run.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from digest.deliver.ledger import Delivery
from digest.deliver.sender import DeliveryReport
from digest.edition.reader_plan import History, plan_edition
from digest.edition.sections import LOOKBACK
from digest.errors import DigestError, StoreError
from digest.jobs.units import Lost, Outcome, Runner, Unit, step
from digest.models import Edition, Failure
from digest.runtime.progress import NO_PROGRESS, Progress
from digest.schedule import parse_clock

if TYPE_CHECKING:
    from digest.config import Config
    from digest.deliver.sender import LazyMessages
    from digest.edition.reader_plan import EditionPlan
    from digest.jobs.units import Parts
    from digest.store.face import StoreFace
    from digest.summarize.translate import Translator

log = logging.getLogger(__name__)


async def reader_history(
    store: StoreFace, edition: Edition, recipients: Collection[str] | None = None
) -> History:
    """What the per-reader "what is new" needs (`digest.edition.reader_plan.History`): the
    editions of the `LOOKBACK` days before this one, which of them each reader received, and
    the articles of this edition's stories. An earlier edition that cannot be read is left out."""
    days = [d for d in await store.edition_days() if d < edition.day][:LOOKBACK]
    received = await store.received(days, recipients)
    if not received:
        return History()
    editions: dict[date, Edition] = {}
    for day in days:
        try:
            earlier = await store.edition(day)
        except StoreError as err:
            log.warning("%s; readers' copies are compared with the other editions", err)
            continue
        if earlier is not None:
            editions[day] = earlier
    ids = [s.id for section in edition.sections for s in section.stories]
    views = await store.stories_by_id(ids)
    return History.of(editions, received, views)


def _with_token(template: str, token: str) -> str:
    """A subscriber's own link: `template` (unsubscribe, preferences, follow) with their token."""
    return template.replace("{token}", token)


# What a skipped row of the ledger says: a reader's rules kept nothing of the edition.
NOTHING_MATCHED = "not sent: no story matched your rules"
# ... and when nothing of it is new to them since the last digest they received.
NOTHING_NEW = "not sent: nothing new since your last digest"


async def send_edition(
    app: Parts,
    edition: Edition,
    *,
    now: datetime,
    due_only: bool = False,
    newer: Sequence[date] = (),
    translator: Translator | None = None,
    recipients: Collection[str] | None = None,
    progress: Progress = NO_PROGRESS,
) -> DeliveryReport:
    """Send the edition to every subscriber (or only those whose time has come, `due_only`)
    on each of their channels, email and Apprise alike, through the delivery ledger: nobody
    gets it twice on one channel.

    Each subscriber gets their own copy: their categories, the stories their keyword rules
    keep (at most their number a category), in their language (`App.translator`). A copy the
    rules leave empty is not sent: its rows are skipped, saying why (who gets what is decided
    by `digest.edition.reader_plan`, without I/O). With `due_only`, a subscriber gets it at their
    send time in their zone (`schedule.subscriber_edition`) unless one of the `newer`
    editions is due for them too; one with rows still to retry gets those
    in any case. Changes apply from the next edition: a channel switched on after the
    subscriber's edition went out gets the next one. A subscriber whose address the rule
    refuses (stored by an older version) fails their own email row; the others are sent.

    With `[queue]` on, the subscribers go to the workers in batches (`plan_deliveries`); a
    worker sends its batch, `recipients`, through this same function (`deliver_batch`).
    """
    from digest.deliver.ledger import RetryPolicy
    from digest.deliver.sender import deliver
    from digest.store import SqlLedger
    from digest.summarize.translate import Untranslated, translate_editions

    runner = await app.runner() if recipients is None else None
    if runner is not None and runner.remote:
        progress.step("sending messages on the workers")
        return await _deliver_in_batches(
            app, runner, edition, now=now, due_only=due_only, newer=newer
        )
    config = app.config
    store = await app.face()
    subscribers = await store.subscribers(recipients)
    rows = await store.load_deliveries(edition.day, recipients)
    history = await reader_history(store, edition, recipients)
    plan = plan_edition(
        edition,
        subscribers,
        rows,
        now,
        publish_at=parse_clock(config.schedule.publish_at),
        due_only=due_only,
        newer=newer,
        history=history,
    )
    # Every reader's copy in their language: each story translated once per language.
    if translator is None:  # the LLM's client is loaded only for a reader with a language
        translator = await app.translator() if plan.languages else Untranslated()
    copies = await translate_editions([(c.edition, c.language) for c in plan.copies], translator)
    stats = getattr(translator, "stats", None)
    if stats is not None and (stats.counts() or stats.last_error):
        log.info("edition %s: %s", edition.day, stats.describe())
    transport = app.channels()
    try:
        return await deliver(
            SqlLedger(store, recipients),
            edition.day,
            _messages(config, edition.day, plan, copies),
            transport,
            now,
            policy=RetryPolicy.from_config(config.email),
            progress=progress,
        )
    finally:
        await transport.aclose()


def _messages(
    config: Config, day: date, plan: EditionPlan, copies: Sequence[Edition]
) -> LazyMessages:
    """The plan's messages, each built when its turn to be sent comes (`LazyMessages`), not
    all up front; a skipped row gets the reason instead. Decided from what was read and
    translated: it is handed the configuration, not the app."""
    from digest.deliver.per_channel import ReaderLinks, edition_message
    from digest.deliver.sender import LazyMessages, Skip
    from digest.render.layout import absolute_url, edition_path

    archive_url = absolute_url(config.archive.base_url, edition_path(day))
    messages = LazyMessages()
    for key in plan.skipped:
        messages.add(key, partial(Skip, NOTHING_MATCHED), None)
    for key in plan.unchanged:
        messages.add(key, partial(Skip, NOTHING_NEW), None)
    for reader, copy in zip(plan.copies, copies, strict=True):
        sub = reader.subscriber
        links = ReaderLinks(
            archive=archive_url,
            preferences=_with_token(config.email.preferences_url, sub.token),
            unsubscribe=_with_token(config.email.unsubscribe_url, sub.token),
            follow=_with_token(config.memory.follow_url, sub.token),
        )
        for send in reader.sends:
            build, mid = edition_message(day, copy, sub, send.channel, config, links)
            messages.add(send.key, build, mid)
    return messages


# On the workers ([queue] on), a sending run is split into batches of subscribers.

_GROUPS = ("sent", "retrying", "failed", "stuck", "waiting", "deferred", "missing", "raced")


@dataclass(frozen=True, slots=True)
class DeliveryOutcome(Outcome):
    """What sending to one batch did, row by row."""

    report: DeliveryReport

    def to_json(self) -> dict[str, Any]:
        r = self.report
        rows = {k: [d.to_json() for d in getattr(r, k)] for k in (*_GROUPS, "skipped")}
        return {
            "edition_day": r.edition_day.isoformat(),
            **rows,
            "already_sent": r.already_sent,
            "already_failed": r.already_failed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeliveryOutcome:
        rows = {k: tuple(map(Delivery.from_json, data[k])) for k in (*_GROUPS, "skipped")}
        report = DeliveryReport(
            edition_day=date.fromisoformat(data["edition_day"]),
            **rows,
            already_sent=int(data["already_sent"]),
            already_failed=int(data["already_failed"]),
        )
        return cls(report)


@dataclass(frozen=True, slots=True)
class DeliveryUnit(Unit[DeliveryOutcome]):
    """The edition of `day` to a batch of subscribers (`send_edition` with `recipients`)."""

    kind: ClassVar[str] = "digest.deliver"
    day: date
    recipients: tuple[str, ...]
    now: datetime
    due_only: bool = False
    newer: tuple[date, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "recipients": list(self.recipients),
            "now": self.now.isoformat(),
            "due_only": self.due_only,
            "newer": [d.isoformat() for d in self.newer],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeliveryUnit:
        return cls(
            date.fromisoformat(data["day"]),
            tuple(data["recipients"]),
            datetime.fromisoformat(data["now"]),
            bool(data["due_only"]),
            tuple(date.fromisoformat(d) for d in data["newer"]),
        )


def plan_deliveries(
    day: date,
    emails: Sequence[str],
    *,
    now: datetime,
    due_only: bool,
    newer: Sequence[date],
    per_unit: int,
) -> tuple[list[DeliveryUnit], list[str]]:
    """The subscribers in batches of `per_unit` (`[queue] subscribers_per_task`), and a lock
    per batch: two runs' units of the same batch never run at once (the ledger's
    compare-and-set keeps any two sends of one message apart whatever the batches)."""
    units = [
        DeliveryUnit(day, tuple(emails[i : i + per_unit]), now, due_only, tuple(newer))
        for i in range(0, len(emails), per_unit)
    ]
    return units, [f"deliver:{day}:{u.recipients[0]}" for u in units]


@step(DeliveryUnit, DeliveryOutcome)
async def deliver_batch(app: Parts, unit: DeliveryUnit) -> DeliveryOutcome:
    """Send the stored edition of the unit's day to its batch of subscribers, through the
    ledger."""
    store = await app.face()
    edition = await store.edition(unit.day)
    if edition is None:
        raise DigestError(f"no edition of {unit.day} in the store")
    report = await send_edition(
        app,
        edition,
        now=unit.now,
        due_only=unit.due_only,
        newer=unit.newer,
        recipients=unit.recipients,
    )
    return DeliveryOutcome(report)


async def _deliver_in_batches(
    app: Parts,
    runner: Runner,
    edition: Edition,
    *,
    now: datetime,
    due_only: bool,
    newer: Sequence[date],
) -> DeliveryReport:
    """`send_edition` in batches of subscribers, one delivery unit each: one `DeliveryReport`."""
    store = await app.face()
    emails = await store.subscriber_emails()
    units, locks = plan_deliveries(
        edition.day,
        emails,
        now=now,
        due_only=due_only,
        newer=newer,
        per_unit=app.config.queue.subscribers_per_task,
    )
    reports = []
    for unit, outcome in zip(units, await runner.run(units, locks=locks), strict=True):
        if isinstance(outcome, Lost):
            # Nothing was recorded for these rows by this run: they stay as they were (pending
            # rows are sent by the next run, `sending` ones are reported as stuck).
            log.error(
                "delivery of %s to %d subscribers: %s",
                edition.day,
                len(unit.recipients),
                outcome.error,
            )
            continue
        reports.append(outcome.report)
    return merge_reports(edition.day, reports)


def merge_reports(day: date, reports: Sequence[DeliveryReport]) -> DeliveryReport:
    """The batches' reports as one run's."""
    rows = {k: tuple(d for r in reports for d in getattr(r, k)) for k in (*_GROUPS, "skipped")}
    return DeliveryReport(
        edition_day=day,
        **rows,
        already_sent=sum(r.already_sent for r in reports),
        already_failed=sum(r.already_failed for r in reports),
    )


def delivery_counts(report: DeliveryReport, waiting: Sequence[Delivery]) -> dict[str, int]:
    """What a publication's run record counts of its sending. `waiting` is every message of
    this edition or an earlier one still pending (as `digest status` counts them), not only
    those that failed in this run."""
    return {
        "sent": len(report.sent),
        "retrying": len(waiting),
        "retrying_now": len(report.retrying),
        "failed": len(report.failed),
        "stuck": len(report.stuck),
        "skipped": len(report.skipped),
        "already_sent": report.already_sent,
    }


def delivery_failures(report: DeliveryReport, waiting: Sequence[Delivery]) -> list[Failure]:
    """What a publication reports as not delivered: this run's failures and retries with the
    server's reply, the messages still `waiting` from earlier runs with when they are tried
    again, and those left in sending."""
    errors = [
        Failure(_source(row), row.last_reply or "") for row in (*report.failed, *report.retrying)
    ]
    tried = {d.key for d in report.retrying}
    errors += (
        Failure(_source(row), waiting_reason(row)) for row in waiting if row.key not in tried
    )
    errors += (
        Failure(
            _source(row),
            "left in 'sending' by an interrupted run: check the mailbox, "
            "then `digest deliveries --resend` to send it again",
        )
        for row in report.stuck
    )
    return errors


def waiting_reason(row: Any) -> str:
    """Why a pending message of an earlier run is not sent yet, and when it will be tried."""
    when = (
        f"at {row.next_attempt_at.isoformat(timespec='seconds')}"
        if row.next_attempt_at
        else "by the next run"
    )
    last = f" (last reply: {row.last_reply})" if row.last_reply else ""
    return f"edition {row.edition_day}: waiting to be sent again {when}{last}"


def _source(row: Any) -> str:
    """Which message of a ledger row failed: "email:a@b.org", "json:5d41402abc4b:a@b.org"."""
    return f"{row.channel}:{row.recipient}"

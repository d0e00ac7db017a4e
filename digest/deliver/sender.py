"""Sending one edition's messages through the delivery ledger, so that each is sent once.

One machine for every channel: a row is (edition, recipient, channel), the email or one of the
recipient's Apprise channels, and the transport (`digest.deliver.channels.Channels`) hands each
message to the email transport or to Apprise. For each row the plan says is due: claim it
(pending → sending, a compare-and-set persisted *before* the SMTP conversation or the HTTP
request), send, then record sent (with the server's reply) or the failure. A crash between
sending and recording leaves the row in ``sending``: the next run reports it and does not send
it again; only an explicit `resend` does. A row whose message is a `Skip` (the reader's rules
left nothing) goes pending → skipped with the reason, by the same compare-and-set.

What this gives, and what it cannot: SMTP has no exactly-once. When the connection drops after
the message data went out but before the server's reply, the server may have accepted it; the
row is retried (at-least-once, so nobody silently misses a digest) and the recipient may get a
second copy with the *same* Message-ID, which mail stores that deduplicate by Message-ID fold
into one. The same holds for a webhook whose reply is lost (a read timeout, a connection closed
after the request went out): the second request carries the same `X-Digest-Message-Id` header
(json:// and form://), by which a receiver can fold them. Every other path sends a message at
most once per row.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from email.message import EmailMessage
from typing import Any, Protocol

from digest import metrics
from digest.deliver import ledger
from digest.deliver.ledger import EMAIL, Delivery, RetryPolicy
from digest.deliver.transport import SendResult
from digest.errors import DeliveryError, InvalidTransition, PermanentDeliveryError
from digest.progress import NO_PROGRESS, Progress

__all__ = [
    "DeliveryReport",
    "LazyMessages",
    "LedgerStore",
    "MemoryLedgerStore",
    "Sends",
    "Skip",
    "deliver",
    "resend",
]


@dataclass(frozen=True, slots=True)
class Skip:
    """What a row gets instead of a message when nothing is to be sent; `reason` becomes its
    reply ("not sent: no story matched your rules")."""

    reason: str


class LazyMessages(Mapping[tuple[str, str], Any]):
    """Messages for `deliver` that are built only when it sends them, one at a time: an
    edition's thousand emails are never all in memory at once. Each is given by a function
    that builds it (and returns the error that kept it from being built, if one did) and the
    Message-ID it will have, which the ledger's row is created with."""

    def __init__(self) -> None:
        self._build: dict[tuple[str, str], Callable[[], Any]] = {}
        self._ids: dict[tuple[str, str], str | None] = {}

    def add(self, key: tuple[str, str], build: Callable[[], Any], message_id: str | None) -> None:
        self._build[key] = build
        self._ids[key] = message_id

    def message_id(self, key: tuple[str, str]) -> str | None:
        return self._ids[key]

    def __getitem__(self, key: tuple[str, str]) -> Any:
        return self._build[key]()

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._build)

    def __len__(self) -> int:
        return len(self._build)


class Sends(Protocol):
    """Where messages go: `send` answers with the server's reply or raises a DeliveryError.
    Optionally `scope(msg)`: which server a message goes to, so that one that is down (its
    error says `transport_down`) defers only the messages that would go to it."""

    async def send(self, msg: Any, /) -> SendResult: ...


log = logging.getLogger(__name__)

# Servers sent to at once by one `deliver` (each one message at a time).
CONCURRENT_SERVERS = 8


class LedgerStore(Protocol):
    """Where ledger rows live. One row per (edition_day, recipient, channel): UNIQUE in the
    database.

    On SQL: `add` is INSERT ... ON CONFLICT DO NOTHING; `claim` is
    ``UPDATE ... SET <new> WHERE edition_day=? AND recipient=? AND channel=?
    AND state=<expected.state> AND attempts=<expected.attempts>`` and returns whether one row
    changed; `save` is an UPDATE
    by key. Each call is its own short transaction: no network I/O runs inside one.
    """

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        """Insert the rows that do not exist yet; existing rows are left exactly as they are."""
        ...

    async def load(self, edition_day: date) -> list[Delivery]:
        """Every row of the edition of `edition_day`."""
        ...

    async def claim(
        self, expected: Delivery, new: Delivery, *, save: Delivery | None = None
    ) -> bool:
        """Compare-and-set: write `new` only if the stored row still has `expected.state` and
        `expected.attempts`. False when another run (or an operator) changed it first.

        Every change of ownership goes through here: pending → sending before a send, and an
        operator's resend of a stuck or failed row. `save`, when given, is another row's
        outcome, written by its key first and in the same transaction (as `save` would, then
        the claim): `deliver` records a message's outcome with the next message's claim."""
        ...

    async def save(self, delivery: Delivery) -> None:
        """Write the row by its key: the outcome recorded by the run that claimed it."""
        ...


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    """What one `deliver` run did, row by row (each row as it was left)."""

    edition_day: date
    sent: tuple[Delivery, ...] = ()  # accepted by the server in this run
    retrying: tuple[Delivery, ...] = ()  # temporary failure in this run; pending with a retry time
    failed: tuple[Delivery, ...] = ()  # failed for good in this run (5xx, or out of attempts)
    stuck: tuple[Delivery, ...] = ()  # found in `sending`: not touched; needs resend or abandon
    waiting: tuple[Delivery, ...] = ()  # pending, retry time not come yet
    deferred: tuple[Delivery, ...] = ()  # due, not tried: its server was down this run
    missing: tuple[Delivery, ...] = ()  # due, but no message was given for the recipient
    raced: tuple[Delivery, ...] = ()  # claimed by another run between load and claim
    skipped: tuple[Delivery, ...] = ()  # skipped in this run (the reader's rules left nothing)
    already_sent: int = 0
    already_failed: int = 0

    @property
    def ok(self) -> bool:
        """Nothing failed, got stuck or is left to retry."""
        return not (self.failed or self.stuck or self.retrying or self.deferred or self.missing)


async def deliver(
    store: LedgerStore,
    edition_day: date,
    messages: Mapping[str, Any] | Mapping[tuple[str, str], Any],
    transport: Sends,
    now: datetime,
    *,
    policy: RetryPolicy,
    concurrency: int = CONCURRENT_SERVERS,
    progress: Progress = NO_PROGRESS,
) -> DeliveryReport:
    """Send the edition of `edition_day` to every recipient in `messages` that still needs it.

    `messages` maps a row's key, (recipient, channel) or a recipient's address alone for
    the channel "email", to its message (an EmailMessage, a `Notification`), to a `Skip`, or to
    the error that kept it from being built (an address the rule refuses): that row fails with
    the error's reply, without the transport, and the others are sent as usual. Rows are created
    for new keys; rows already sent, failed, skipped, stuck in sending or waiting for their
    retry time are left alone. `now` is the time of the run: it decides what is due and stamps
    rows. When a server itself is unreachable (refused connection, failed login), the rest of
    the rows for that server (`Sends.scope`) are left pending for the next run; so are those
    of a server that was slow to answer (`SendResult.slow`).

    Messages to one server go one after another; up to `concurrency` servers are sent to at
    once, so that a slow subscriber's webhook does not hold everyone's digest. The emails are
    one lane, as before. `progress` hears of each due message as its lane is done with it.
    """
    # The row's key -> the key of its message in `messages` (which may build it only when
    # asked: `LazyMessages`).
    keyed: dict[tuple[str, str], Any] = {
        (key, EMAIL) if isinstance(key, str) else key: key for key in messages
    }
    ids = messages.message_id if isinstance(messages, LazyMessages) else None
    await store.add(
        [
            ledger.new(
                edition_day,
                recipient,
                now,
                message_id=ids(key) if ids else _mid(messages[key]),
                channel=channel,
            )
            for (recipient, channel), key in keyed.items()
        ]
    )
    rows = await store.load(edition_day)
    stuck = ledger.stuck(rows)
    due = ledger.plan(rows, now)
    due_keys = {d.key for d in due}
    waiting = tuple(d for d in rows if d.state == "pending" and d.key not in due_keys)
    for d in stuck:
        log.warning(
            "delivery of %s to %s is stuck in sending since %s (Message-ID %s): "
            "not re-sent; resend it explicitly if it never arrived",
            d.edition_day,
            d.addressee,
            d.updated_at,
            d.message_id,
        )

    # Each row's lane: the server its message goes to. Emails share one (built one at a time
    # as they are sent); a channel's message is small and built now to learn its server.
    lanes: dict[str, list[tuple[int, Delivery, Any]]] = {}
    missing: list[Delivery] = []
    for index, row in enumerate(due):
        key = keyed.get((row.recipient, row.channel))
        if key is None:
            missing.append(row)
        elif row.channel == EMAIL:
            lanes.setdefault(EMAIL, []).append((index, row, key))
        else:
            msg = messages[key]
            server = "" if isinstance(msg, Skip | DeliveryError) else _scope(transport, msg)
            lanes.setdefault(f"channel:{server}", []).append((index, row, _Built(msg)))
    run = _Run(store, messages, transport, now, policy, edition_day, progress)
    progress.step("sending messages", len(due))
    hosts = asyncio.Semaphore(max(1, concurrency))

    async def send_lane(rows: list[tuple[int, Delivery, Any]]) -> None:
        async with hosts:
            await run.lane(rows)

    tasks = [asyncio.create_task(send_lane(rows)) for rows in lanes.values()]
    try:
        await asyncio.gather(*tasks)
    finally:  # one lane's failure (the store's) stops the others, as it stopped the loop
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def ordered(found: list[tuple[int, Delivery]]) -> tuple[Delivery, ...]:
        return tuple(d for _, d in sorted(found, key=lambda pair: pair[0]))

    sent, retrying, failed = ordered(run.sent), ordered(run.retrying), ordered(run.failed)
    deferred, raced, skipped = ordered(run.deferred), ordered(run.raced), ordered(run.skipped)
    return DeliveryReport(
        edition_day=edition_day,
        sent=sent,
        retrying=retrying,
        failed=failed,
        stuck=stuck,
        waiting=waiting,
        deferred=deferred,
        missing=tuple(missing),
        raced=raced,
        skipped=skipped,
        already_sent=sum(1 for d in rows if d.state == "sent"),
        already_failed=sum(1 for d in rows if d.state == "failed"),
    )


@dataclass(frozen=True, slots=True)
class _Built:
    """A message built before its lane ran (a channel's), as opposed to a key to build by."""

    msg: Any


class _Run:
    """One `deliver` run's lanes and what became of their rows. Each lane sends its rows one
    after another; lanes run side by side (bounded by `deliver`'s `concurrency`). A lane's
    server that is down, or slow (`SendResult.slow`), defers the lane's remaining rows and
    those of any other lane with the same scope."""

    def __init__(
        self,
        store: LedgerStore,
        messages: Mapping[Any, Any],
        transport: Sends,
        now: datetime,
        policy: RetryPolicy,
        edition_day: date,
        progress: Progress = NO_PROGRESS,
    ) -> None:
        self.store, self.messages, self.transport = store, messages, transport
        self.now, self.policy, self.edition_day = now, policy, edition_day
        self.progress = progress
        self.sent: list[tuple[int, Delivery]] = []
        self.retrying: list[tuple[int, Delivery]] = []
        self.failed: list[tuple[int, Delivery]] = []
        self.deferred: list[tuple[int, Delivery]] = []
        self.raced: list[tuple[int, Delivery]] = []
        self.skipped: list[tuple[int, Delivery]] = []
        self.down: set[str] = set()  # scopes whose server is down (or slow) this run

    async def lane(self, rows: list[tuple[int, Delivery, Any]]) -> None:
        # The outcome of the lane's last message, written with its next claim (one commit a
        # message) or at the end; never later than it would have been on its own.
        unsaved: Delivery | None = None

        async def claim(row: Delivery, new: Delivery) -> bool:
            nonlocal unsaved
            save, unsaved = unsaved, None  # a failing write loses it, as a failing save would
            return await self.store.claim(row, new, save=save)

        now = self.now
        try:
            for index, row, source in self._told(rows):
                msg = source.msg if isinstance(source, _Built) else self.messages[source]
                if isinstance(msg, Skip):
                    left = ledger.skip(row, msg.reason, now)
                    (self.skipped if await claim(row, left) else self.raced).append((index, left))
                    continue
                scope = "" if isinstance(msg, DeliveryError) else _scope(self.transport, msg)
                if scope in self.down:
                    self.deferred.append((index, row))
                    continue
                claimed = ledger.claim(row, now, message_id=_mid(msg))
                if not await claim(row, claimed):
                    self.raced.append((index, row))
                    continue
                try:
                    if isinstance(msg, DeliveryError):
                        raise msg  # never built: nothing to hand to the transport
                    result = await self.transport.send(msg)
                except DeliveryError as err:
                    outcome = ledger.record_failure(
                        claimed,
                        err.reply,
                        now,
                        permanent=isinstance(err, PermanentDeliveryError),
                        policy=self.policy,
                    )
                    unsaved = outcome
                    final = outcome.state == "failed"
                    (self.failed if final else self.retrying).append((index, outcome))
                    kind = metrics.channel_kind(row.channel)
                    metrics.messages_failed.labels(kind, "failed" if final else "retrying").inc()
                    log.info("delivery of %s to %s: %s", self.edition_day, row.addressee, err)
                    if err.transport_down:
                        self.down.add(scope)
                    continue
                unsaved = ledger.record_sent(claimed, result.reply, now)
                self.sent.append((index, unsaved))
                metrics.messages_sent.labels(metrics.channel_kind(row.channel)).inc()
                if result.slow:
                    self.down.add(scope)
        finally:
            if unsaved is not None:
                last, unsaved = unsaved, None
                await self.store.save(last)

    def _told(self, rows: list[tuple[int, Delivery, Any]]) -> Iterator[tuple[int, Delivery, Any]]:
        """The lane's rows; each one told to `progress` once the lane is done with it (sent,
        failed, skipped or deferred), whichever way its turn of the loop ended."""
        for entry in rows:
            yield entry
            self.progress.advance(1, entry[1].addressee)


async def resend(
    store: LedgerStore,
    edition_day: date,
    now: datetime,
    recipients: Iterable[str] | None = None,
    *,
    include_sent: bool = False,
) -> list[Delivery]:
    """An operator's explicit request: make stuck (``sending``) and ``failed`` rows pending again.

    With `recipients`, only theirs, on every channel where a row can be re-sent (a named
    recipient none of whose rows can be raises InvalidTransition, and nothing changes);
    without, every stuck and failed row of the edition. `include_sent` also reopens sent rows.
    The next `deliver` sends them, with the same Message-ID. Returns the reopened rows.
    """
    rows = await store.load(edition_day)
    wanted = None if recipients is None else set(recipients)
    if wanted is not None:
        unknown = wanted - {d.recipient for d in rows}
        if unknown:
            raise InvalidTransition(
                f"no delivery of {edition_day} to {', '.join(sorted(unknown))} to re-send"
            )
    planned: list[tuple[Delivery, Delivery]] = []
    refused: dict[str, InvalidTransition] = {}
    for row in rows:
        if wanted is not None and row.recipient not in wanted:
            continue
        try:
            planned.append((row, ledger.resend(row, now, include_sent=include_sent)))
        except InvalidTransition as err:
            refused.setdefault(row.recipient, err)
    if wanted is not None:
        for recipient in sorted(wanted - {row.recipient for row, _ in planned}):
            raise refused[recipient]
    reopened: list[Delivery] = []
    for row, again in planned:
        if await store.claim(row, again):
            reopened.append(again)
    return reopened


def _mid(msg: Any) -> str | None:
    if isinstance(msg, EmailMessage):
        value = msg.get("Message-ID")
        return str(value).strip() if value else None
    value = getattr(msg, "message_id", None)
    return str(value) if isinstance(value, str) and value else None


def _scope(transport: Sends, msg: Any) -> str:
    scope = getattr(transport, "scope", None)
    return str(scope(msg)) if callable(scope) else ""


@dataclass
class MemoryLedgerStore:
    """A `LedgerStore` in a dict, for tests and benchmarks. `fail_save` simulates a crash."""

    rows: dict[tuple[date, str, str], Delivery] = field(default_factory=dict)
    fail_save: BaseException | None = None  # raised by the next `save` (then cleared)

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        for d in deliveries:
            self.rows.setdefault(d.key, d)

    async def load(self, edition_day: date) -> list[Delivery]:
        return [d for (day, _, _), d in sorted(self.rows.items()) if day == edition_day]

    async def claim(
        self, expected: Delivery, new: Delivery, *, save: Delivery | None = None
    ) -> bool:
        if save is not None:
            await self.save(save)
        current = self.rows.get(expected.key)
        if current is None or (current.state, current.attempts) != (
            expected.state,
            expected.attempts,
        ):
            return False
        self.rows[expected.key] = new
        return True

    async def save(self, delivery: Delivery) -> None:
        if self.fail_save is not None:
            err, self.fail_save = self.fail_save, None
            raise err
        self.rows[delivery.key] = delivery

"""Sending one edition's messages through the delivery ledger, so that each is sent once.

One machine for every channel: a row is (edition, recipient, channel), the email or one of the
recipient's push channels, and the transport (`digest.deliver.push_types.Channels`) hands each
message to the email transport or to its push type's. For each row the plan says is due: claim it
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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from email.message import EmailMessage
from typing import Any, Literal, Protocol

from digest.deliver import ledger
from digest.deliver.ledger import EMAIL, Delivery, RetryPolicy
from digest.deliver.transport import SendResult
from digest.errors import DeliveryError, InvalidTransition, PermanentDeliveryError
from digest.runtime import metrics
from digest.runtime.progress import NO_PROGRESS, Progress

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


class LazyMessages(Mapping[tuple[str, str], object]):
    """Messages for `deliver` that are built only when it sends them, one at a time: an
    edition's thousand emails are never all in memory at once. Each is given by a function
    that builds it (and returns the error that kept it from being built, if one did) and the
    Message-ID it will have, which the ledger's row is created with."""

    def __init__(self) -> None:
        self._build: dict[tuple[str, str], Callable[[], object]] = {}
        self._ids: dict[tuple[str, str], str | None] = {}

    def add(
        self, key: tuple[str, str], build: Callable[[], object], message_id: str | None
    ) -> None:
        self._build[key] = build
        self._ids[key] = message_id

    def message_id(self, key: tuple[str, str]) -> str | None:
        return self._ids[key]

    def __getitem__(self, key: tuple[str, str]) -> object:
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


# What became of a row a run tried (see `DeliveryReport`).
Outcome = Literal["sent", "retrying", "failed", "deferred", "raced", "skipped"]


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

    @classmethod
    def of(
        cls,
        edition_day: date,
        found: ledger.Survey,
        outcomes: Iterable[tuple[int, Outcome, Delivery]],
        *,
        missing: Sequence[Delivery] = (),
    ) -> DeliveryReport:
        """A run's report from what it found in the ledger and what became of each row it
        tried: (its place in the plan, its outcome, the row as left). Each group keeps the
        plan's order, whichever lane finished first."""
        ordered = sorted(outcomes, key=lambda outcome: outcome[0])

        def group(name: Outcome) -> tuple[Delivery, ...]:
            return tuple(row for _, outcome, row in ordered if outcome == name)

        return cls(
            edition_day=edition_day,
            sent=group("sent"),
            retrying=group("retrying"),
            failed=group("failed"),
            stuck=found.stuck,
            waiting=found.waiting,
            deferred=group("deferred"),
            missing=tuple(missing),
            raced=group("raced"),
            skipped=group("skipped"),
            already_sent=found.already_sent,
            already_failed=found.already_failed,
        )


def _warn_stuck(stuck: Iterable[Delivery]) -> None:
    """Rows stuck in sending are never re-sent by a run (it may have arrived): say so."""
    for d in stuck:
        log.warning(
            "delivery of %s to %s is stuck in sending since %s (Message-ID %s): "
            "not re-sent; resend it explicitly if it never arrived",
            d.edition_day,
            d.addressee,
            d.updated_at,
            d.message_id,
        )


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
    found = ledger.survey(await store.load(edition_day), now)
    _warn_stuck(found.stuck)
    # Emails are built one at a time as they are sent; a channel's message is small and built
    # now to learn its server, its lane.
    built = {
        row.key: messages[keyed[(row.recipient, row.channel)]]
        for row in found.due
        if row.channel != EMAIL and (row.recipient, row.channel) in keyed
    }
    routes = route(found.due, keyed, {k: _server(transport, m) for k, m in built.items()})

    def source(row: Delivery) -> _Built | str | tuple[str, str]:
        """A row's message as built, or its key in `messages` to build it by."""
        return _Built(built[row.key]) if row.key in built else keyed[(row.recipient, row.channel)]

    run = _Run(store, messages, transport, now, policy, edition_day, progress)
    progress.step("sending messages", len(found.due))
    hosts = asyncio.Semaphore(max(1, concurrency))

    async def send_lane(lane: Lane) -> None:
        async with hosts:
            await run.lane([(i, row, source(row)) for i, row in lane])

    tasks = [asyncio.create_task(send_lane(lane)) for lane in routes.lanes]
    try:
        await asyncio.gather(*tasks)
    finally:  # one lane's failure (the store's) stops the others, as it stopped the loop
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return DeliveryReport.of(edition_day, found, run.outcomes, missing=routes.missing)


Lane = tuple[tuple[int, Delivery], ...]  # rows sent one after another, with their place in the plan


@dataclass(frozen=True, slots=True)
class Routes:
    """How a run sends its due rows: in lanes, one a server, side by side; and the rows for
    which no message was given (reported as missing, never sent)."""

    lanes: tuple[Lane, ...] = ()
    missing: tuple[Delivery, ...] = ()


def route(
    due: Sequence[Delivery], given: Collection[tuple[str, str]], servers: Mapping[Any, str]
) -> Routes:
    """Each due row's lane: the emails share one; a channel's message goes in the lane of its
    server (`servers` by the row's key, as `Sends.scope` names it), so that messages to one
    server go one after another and a slow one holds up no one else. `given` are the (recipient,
    channel) keys that have a message."""
    lanes: dict[str, list[tuple[int, Delivery]]] = {}
    missing: list[Delivery] = []
    for index, row in enumerate(due):
        if (row.recipient, row.channel) not in given:
            missing.append(row)
            continue
        lane = EMAIL if row.channel == EMAIL else f"channel:{servers[row.key]}"
        lanes.setdefault(lane, []).append((index, row))
    return Routes(tuple(map(tuple, lanes.values())), tuple(missing))


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
        self.outcomes: list[tuple[int, Outcome, Delivery]] = []
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
                    done: Outcome = "skipped" if await claim(row, left) else "raced"
                    self.outcomes.append((index, done, left))
                    continue
                scope = "" if isinstance(msg, DeliveryError) else _scope(self.transport, msg)
                if scope in self.down:
                    self.outcomes.append((index, "deferred", row))
                    continue
                claimed = ledger.claim(row, now, message_id=_mid(msg))
                if not await claim(row, claimed):
                    self.outcomes.append((index, "raced", row))
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
                    self.outcomes.append((index, "failed" if final else "retrying", outcome))
                    kind = metrics.channel_kind(row.channel)
                    metrics.messages_failed.labels(kind, "failed" if final else "retrying").inc()
                    log.info("delivery of %s to %s: %s", self.edition_day, row.addressee, err)
                    if err.transport_down:
                        self.down.add(scope)
                    continue
                unsaved = ledger.record_sent(claimed, result.reply, now)
                self.outcomes.append((index, "sent", unsaved))
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


def _server(transport: Sends, msg: Any) -> str:
    """The server a built message goes to; none for one that is not sent (a `Skip`, an error)."""
    return "" if isinstance(msg, Skip | DeliveryError) else _scope(transport, msg)


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

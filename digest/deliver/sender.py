"""Sending one edition's emails through the delivery ledger, so that each is sent once.

For each row the plan says is due: claim it (pending → sending, a compare-and-set persisted
*before* the SMTP conversation), send, then record sent (with the server's reply) or the failure.
A crash between sending and recording leaves the row in ``sending``: the next run reports it and
does not send it again; only an explicit `resend` does.

What this gives, and what it cannot: SMTP has no exactly-once. When the connection drops after
the message data went out but before the server's reply, the server may have accepted it; the
row is retried (at-least-once, so nobody silently misses a digest) and the recipient may get a
second copy with the *same* Message-ID, which mail stores that deduplicate by Message-ID fold
into one. Every other path sends a message at most once per row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from email.message import EmailMessage
from typing import Protocol

from digest.deliver import ledger
from digest.deliver.ledger import Delivery, RetryPolicy
from digest.deliver.transport import Transport
from digest.errors import DeliveryError, InvalidTransition, PermanentDeliveryError

__all__ = ["DeliveryReport", "LedgerStore", "MemoryLedgerStore", "deliver", "resend"]

log = logging.getLogger(__name__)


class LedgerStore(Protocol):
    """Where ledger rows live. One row per (edition_day, recipient): UNIQUE in the database.

    On SQL: `add` is INSERT ... ON CONFLICT DO NOTHING; `claim` is
    ``UPDATE ... SET <new> WHERE edition_day=? AND recipient=? AND state=<expected.state>
    AND attempts=<expected.attempts>`` and returns whether one row changed; `save` is an UPDATE
    by key. Each call is its own short transaction: no network I/O runs inside one.
    """

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        """Insert the rows that do not exist yet; existing rows are left exactly as they are."""
        ...

    async def load(self, edition_day: date) -> list[Delivery]:
        """Every row of the edition of `edition_day`."""
        ...

    async def claim(self, expected: Delivery, new: Delivery) -> bool:
        """Compare-and-set: write `new` only if the stored row still has `expected.state` and
        `expected.attempts`. False when another run (or an operator) changed it first.

        Every change of ownership goes through here: pending → sending before a send, and an
        operator's resend of a stuck or failed row."""
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
    deferred: tuple[Delivery, ...] = ()  # due, not tried: the mail server was down this run
    missing: tuple[Delivery, ...] = ()  # due, but no message was given for the recipient
    raced: tuple[Delivery, ...] = ()  # claimed by another run between load and claim
    already_sent: int = 0
    already_failed: int = 0

    @property
    def ok(self) -> bool:
        """Nothing failed, got stuck or is left to retry."""
        return not (self.failed or self.stuck or self.retrying or self.deferred or self.missing)


async def deliver(
    store: LedgerStore,
    edition_day: date,
    messages: Mapping[str, EmailMessage | DeliveryError],
    transport: Transport,
    now: datetime,
    *,
    policy: RetryPolicy,
) -> DeliveryReport:
    """Send the edition of `edition_day` to every recipient in `messages` that still needs it.

    `messages` maps a recipient's address (the ledger's key) to its message, or to the error
    that kept it from being built (an address the rule refuses): that row fails with the error's
    reply, without the transport, and the others are sent as usual. Rows are created
    for new recipients; rows already sent, failed, stuck in sending or waiting for their retry
    time are left alone. `now` is the time of the run: it decides what is due and stamps rows.
    When the mail server itself is unreachable (refused connection, failed login), the run stops
    after that row and leaves the rest pending for the next run.
    """
    await store.add(
        [
            ledger.new(edition_day, recipient, now, message_id=_mid(msg))
            for recipient, msg in messages.items()
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
            d.recipient,
            d.updated_at,
            d.message_id,
        )

    sent: list[Delivery] = []
    retrying: list[Delivery] = []
    failed: list[Delivery] = []
    missing: list[Delivery] = []
    raced: list[Delivery] = []
    deferred: list[Delivery] = []
    for i, row in enumerate(due):
        msg = messages.get(row.recipient)
        if msg is None:
            missing.append(row)
            continue
        claimed = ledger.claim(row, now, message_id=_mid(msg))
        if not await store.claim(row, claimed):
            raced.append(row)
            continue
        try:
            if isinstance(msg, DeliveryError):
                raise msg  # never built: nothing to hand to the transport
            result = await transport.send(msg)
        except DeliveryError as err:
            outcome = ledger.record_failure(
                claimed,
                err.reply,
                now,
                permanent=isinstance(err, PermanentDeliveryError),
                policy=policy,
            )
            await store.save(outcome)
            (failed if outcome.state == "failed" else retrying).append(outcome)
            log.info("delivery of %s to %s: %s", edition_day, row.recipient, err)
            if err.transport_down:
                deferred.extend(d for d in due[i + 1 :] if d.recipient in messages)
                break
            continue
        outcome = ledger.record_sent(claimed, result.reply, now)
        await store.save(outcome)
        sent.append(outcome)

    return DeliveryReport(
        edition_day=edition_day,
        sent=tuple(sent),
        retrying=tuple(retrying),
        failed=tuple(failed),
        stuck=stuck,
        waiting=waiting,
        deferred=tuple(deferred),
        missing=tuple(missing),
        raced=tuple(raced),
        already_sent=sum(1 for d in rows if d.state == "sent"),
        already_failed=sum(1 for d in rows if d.state == "failed"),
    )


async def resend(
    store: LedgerStore,
    edition_day: date,
    now: datetime,
    recipients: Iterable[str] | None = None,
    *,
    include_sent: bool = False,
) -> list[Delivery]:
    """An operator's explicit request: make stuck (``sending``) and ``failed`` rows pending again.

    With `recipients`, only theirs (a named row that cannot be re-sent raises InvalidTransition);
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
    reopened: list[Delivery] = []
    for row in rows:
        if wanted is not None and row.recipient not in wanted:
            continue
        try:
            again = ledger.resend(row, now, include_sent=include_sent)
        except InvalidTransition:
            if wanted is not None:
                raise
            continue
        if await store.claim(row, again):
            reopened.append(again)
    return reopened


def _mid(msg: EmailMessage | DeliveryError) -> str | None:
    if isinstance(msg, DeliveryError):
        return None
    value = msg.get("Message-ID")
    return str(value).strip() if value else None


@dataclass
class MemoryLedgerStore:
    """A `LedgerStore` in a dict, for tests and benchmarks. `fail_save` simulates a crash."""

    rows: dict[tuple[date, str], Delivery] = field(default_factory=dict)
    fail_save: BaseException | None = None  # raised by the next `save` (then cleared)

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        for d in deliveries:
            self.rows.setdefault(d.key, d)

    async def load(self, edition_day: date) -> list[Delivery]:
        return [d for (day, _), d in sorted(self.rows.items()) if day == edition_day]

    async def claim(self, expected: Delivery, new: Delivery) -> bool:
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

"""The delivery ledger's state machine: pure decisions about one (edition, recipient, channel)
row. Every channel goes through it alike: the email, and each Apprise channel of a subscriber.

A row moves ``pending → sending → sent | failed``, or ``pending → skipped``. ``sending`` is
written *before* the SMTP conversation (or the webhook's request) starts, so a crash mid-send
leaves evidence instead of a silent re-send:

- ``pending``  waiting to be sent, not before ``next_attempt_at`` (None: at once);
- ``sending``  claimed by a run that is talking to the mail server right now, or that crashed
  while doing so. Nothing here moves it back to ``pending`` except an explicit `resend` (the
  operator accepts a possible duplicate) or `abandon` (the operator gives it up);
- ``sent``     the server accepted the message; terminal (only a forced `resend` reopens it);
- ``failed``   a permanent refusal (5xx) or too many temporary failures; terminal until `resend`;
- ``skipped``  nothing was sent, on purpose, decided before any send (the reader's keyword rules
  left their edition empty); terminal, `last_reply` says why. Never re-sent: a reader who
  changes their rules gets the next edition by them.

Every function returns a new `Delivery` (a domain type of `digest.models`, which the store reads
and writes) or raises `InvalidTransition`; none does I/O. The store
(`digest.deliver.sender.LedgerStore`) persists rows, the sender drives the transitions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from digest.config import EmailConfig
from digest.errors import InvalidTransition
from digest.models import EMAIL_CHANNEL, Delivery, DeliveryState

__all__ = [
    "EMAIL",
    "STATES",
    "Delivery",
    "RetryPolicy",
    "State",
    "Survey",
    "abandon",
    "claim",
    "give_up",
    "new",
    "plan",
    "record_failure",
    "record_sent",
    "reopen",
    "resend",
    "skip",
    "stuck",
    "survey",
]

State = DeliveryState
STATES: tuple[State, ...] = ("pending", "sending", "sent", "failed", "skipped")
EMAIL = EMAIL_CHANNEL  # the channel of the email digest; the others are named by `channel_key`

# The longest wait between two attempts, whatever the configured backoff and attempt count.
MAX_RETRY_DELAY = timedelta(hours=12)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How temporary failures are retried: `max_attempts` in all, waits doubling from `backoff`."""

    max_attempts: int = 5
    backoff: float = 60.0  # seconds before the second attempt

    @classmethod
    def from_config(cls, config: EmailConfig) -> RetryPolicy:
        return cls(max_attempts=config.max_attempts, backoff=config.retry_backoff)

    def delay(self, attempts: int) -> timedelta:
        """The wait after the `attempts`-th attempt failed temporarily: backoff, 2x, 4x..."""
        seconds = self.backoff * 2 ** max(0, min(attempts - 1, 30))
        return min(timedelta(seconds=seconds), MAX_RETRY_DELAY)


def new(
    edition_day: date,
    recipient: str,
    now: datetime,
    *,
    message_id: str | None = None,
    channel: str = EMAIL,
) -> Delivery:
    """A fresh pending row, to be sent at once."""
    return Delivery(
        edition_day=edition_day,
        recipient=recipient,
        message_id=message_id,
        updated_at=now,
        channel=channel,
    )


def _require(delivery: Delivery, action: str, *states: State) -> None:
    if delivery.state not in states:
        allowed = " or ".join(states)
        raise InvalidTransition(
            f"cannot {action} the delivery of {delivery.edition_day} to {delivery.addressee}: "
            f"it is {delivery.state}, not {allowed}"
        )


def claim(delivery: Delivery, now: datetime, *, message_id: str | None = None) -> Delivery:
    """pending → sending: this run is about to talk to the mail server about this row.

    Persist the result (compare-and-set) *before* sending. A row whose retry time has not come
    cannot be claimed. (Pending rows always have attempts left: `record_failure` fails a row on
    its last attempt.)
    """
    _require(delivery, "send", "pending")
    if not delivery.due(now):
        raise InvalidTransition(
            f"the delivery of {delivery.edition_day} to {delivery.addressee} is not due "
            f"before {delivery.next_attempt_at}"
        )
    return replace(
        delivery,
        state="sending",
        attempts=delivery.attempts + 1,
        next_attempt_at=None,
        message_id=message_id or delivery.message_id,
        updated_at=now,
    )


def record_sent(delivery: Delivery, reply: str, now: datetime) -> Delivery:
    """sending → sent: the server accepted the message; `reply` is what it said."""
    _require(delivery, "record as sent", "sending")
    return replace(delivery, state="sent", last_reply=reply, updated_at=now)


def record_failure(
    delivery: Delivery,
    reply: str,
    now: datetime,
    *,
    permanent: bool,
    policy: RetryPolicy,
) -> Delivery:
    """sending → pending (retry later) for a temporary failure, or → failed.

    A permanent failure (5xx), or a temporary one on the last allowed attempt, is final.
    """
    _require(delivery, "record a failure of", "sending")
    if permanent:
        return replace(
            delivery, state="failed", last_reply=reply, next_attempt_at=None, updated_at=now
        )
    if delivery.attempts >= policy.max_attempts:
        note = f"{reply} (gave up after {delivery.attempts} attempts)"
        return replace(
            delivery, state="failed", last_reply=note, next_attempt_at=None, updated_at=now
        )
    return replace(
        delivery,
        state="pending",
        last_reply=reply,
        next_attempt_at=now + policy.delay(delivery.attempts),
        updated_at=now,
    )


def skip(delivery: Delivery, reason: str, now: datetime) -> Delivery:
    """pending → skipped: this row is not to be sent, for `reason` (kept as its reply), decided
    before anything was sent. Like a claim, persist it by compare-and-set."""
    _require(delivery, "skip", "pending")
    return replace(
        delivery, state="skipped", last_reply=reason, next_attempt_at=None, updated_at=now
    )


def resend(delivery: Delivery, now: datetime, *, include_sent: bool = False) -> Delivery:
    """An operator's explicit request: send this row again, with a fresh attempt budget.

    For a row stuck in ``sending`` (a crash between sending and recording) or ``failed``. The
    recipient may get the message twice if the stuck attempt did reach the server; the
    Message-ID stays the same, so mail stores that deduplicate by it show one copy. A ``sent``
    row is only reopened with `include_sent` (the recipient asked for it again).
    """
    states: tuple[State, ...] = ("sending", "failed")
    _require(delivery, "re-send", *(*states, "sent") if include_sent else states)
    return replace(delivery, state="pending", attempts=0, next_attempt_at=None, updated_at=now)


def abandon(
    delivery: Delivery, now: datetime, reason: str = "abandoned by the operator"
) -> Delivery:
    """An operator's explicit decision about a stuck or pending row: do not send it (→ failed)."""
    _require(delivery, "abandon", "sending", "pending")
    reply = f"{reason} (last reply: {delivery.last_reply})" if delivery.last_reply else reason
    return replace(delivery, state="failed", last_reply=reply, next_attempt_at=None, updated_at=now)


def reopen(rows: Iterable[Delivery], now: datetime) -> tuple[Delivery, ...]:
    """An operator's request about one message (an alert's rows, one per channel): its stuck and
    failed rows sent again (`resend`); its pending, sent and skipped ones stay as they are."""
    return tuple(resend(d, now) for d in rows if d.state in ("sending", "failed"))


def give_up(rows: Iterable[Delivery], now: datetime) -> tuple[Delivery, ...]:
    """An operator's decision about one message: its stuck and pending rows are not sent
    (`abandon`); those already done stay as they are."""
    return tuple(abandon(d, now) for d in rows if d.state in ("sending", "pending"))


def plan(deliveries: Iterable[Delivery], now: datetime) -> tuple[Delivery, ...]:
    """The rows to send now: pending and due, oldest retry first, then by recipient.

    Rows in ``sending`` are never in the plan (see `stuck`), nor ``sent``, ``failed`` or
    ``skipped`` ones.
    """
    due = [d for d in deliveries if d.due(now)]
    floor = datetime.min.replace(tzinfo=now.tzinfo)
    due.sort(key=lambda d: (d.next_attempt_at or floor, d.edition_day, d.recipient, d.channel))
    return tuple(due)


def stuck(deliveries: Iterable[Delivery]) -> tuple[Delivery, ...]:
    """Rows left in ``sending``: a run crashed mid-send, or another run is sending right now.

    Report them; only `resend` or `abandon` moves them on.
    """
    return tuple(d for d in deliveries if d.state == "sending")


@dataclass(frozen=True, slots=True)
class Survey:
    """What a run finds in an edition's ledger before it sends: the rows to send now (`plan`),
    those left in sending (`stuck`), the pending ones whose retry time has not come, and how
    many were sent or failed before. Skipped rows are done and counted nowhere."""

    due: tuple[Delivery, ...] = ()
    stuck: tuple[Delivery, ...] = ()
    waiting: tuple[Delivery, ...] = ()
    already_sent: int = 0
    already_failed: int = 0


def survey(deliveries: Iterable[Delivery], now: datetime) -> Survey:
    """What the rows of an edition mean for a run at `now` (see `Survey`)."""
    rows = list(deliveries)
    due = plan(rows, now)
    due_keys = {d.key for d in due}
    return Survey(
        due=due,
        stuck=stuck(rows),
        waiting=tuple(d for d in rows if d.state == "pending" and d.key not in due_keys),
        already_sent=sum(1 for d in rows if d.state == "sent"),
        already_failed=sum(1 for d in rows if d.state == "failed"),
    )

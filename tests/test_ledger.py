"""The delivery ledger's state machine, and `deliver` over it, without any server.

Property tests drive random sequences of runs, transport outcomes, crashes and operator actions,
and check what a subscriber would notice: no digest twice without an explicit re-send, none lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from digest.deliver import ledger
from digest.deliver.ledger import Delivery, RetryPolicy
from digest.deliver.sender import MemoryLedgerStore, deliver, resend
from digest.deliver.transport import SendResult
from digest.errors import (
    InvalidTransition,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)

DAY = date(2025, 3, 4)
T0 = datetime(2025, 3, 4, 7, 0, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=4, backoff=60.0)


def row(**changes: object) -> Delivery:
    return Delivery(**{"edition_day": DAY, "recipient": "a@example.com", **changes})  # type: ignore[arg-type]


# -- transitions ---------------------------------------------------------------------------------


def test_a_row_goes_pending_sending_sent() -> None:
    claimed = ledger.claim(row(), T0, message_id="<m@x>")
    done = ledger.record_sent(claimed, "250 ok", T0)

    assert (claimed.state, claimed.attempts, claimed.message_id) == ("sending", 1, "<m@x>")
    assert (done.state, done.last_reply, done.updated_at) == ("sent", "250 ok", T0)


def test_temporary_failures_back_off_exponentially_then_fail() -> None:
    d = row()
    waits = []
    for _ in range(POLICY.max_attempts):
        now = d.next_attempt_at or T0
        d = ledger.record_failure(
            ledger.claim(d, now), "451 later", now, permanent=False, policy=POLICY
        )
        if d.state == "pending":
            assert d.next_attempt_at is not None
            waits.append(d.next_attempt_at - now)

    assert waits == [timedelta(seconds=s) for s in (60, 120, 240)]
    assert d.state == "failed" and d.attempts == POLICY.max_attempts
    assert d.last_reply == "451 later (gave up after 4 attempts)"


def test_a_permanent_failure_is_final_at_once() -> None:
    d = ledger.record_failure(
        ledger.claim(row(), T0), "550 no such user", T0, permanent=True, policy=POLICY
    )

    assert (d.state, d.attempts, d.last_reply) == ("failed", 1, "550 no such user")
    assert not ledger.plan([d], T0 + timedelta(days=365))


def test_a_row_waiting_for_its_retry_cannot_be_claimed_early() -> None:
    d = row(next_attempt_at=T0 + timedelta(minutes=1))

    assert not ledger.plan([d], T0)
    with pytest.raises(InvalidTransition, match="not due"):
        ledger.claim(d, T0)
    assert ledger.plan([d], T0 + timedelta(minutes=1)) == (d,)


@pytest.mark.parametrize("state", ["sending", "sent", "failed"])
def test_only_a_pending_row_can_be_claimed(state: str) -> None:
    with pytest.raises(InvalidTransition, match=f"it is {state}"):
        ledger.claim(row(state=state), T0)


@pytest.mark.parametrize("state", ["pending", "sent", "failed"])
def test_only_a_sending_row_records_an_outcome(state: str) -> None:
    with pytest.raises(InvalidTransition):
        ledger.record_sent(row(state=state), "250", T0)
    with pytest.raises(InvalidTransition):
        ledger.record_failure(row(state=state), "451", T0, permanent=False, policy=POLICY)


def test_a_stuck_row_is_reported_and_only_an_explicit_resend_reopens_it() -> None:
    stuck = ledger.claim(row(), T0)

    assert ledger.stuck([stuck]) == (stuck,)
    assert not ledger.plan([stuck], T0 + timedelta(days=1))
    again = ledger.resend(stuck, T0 + timedelta(hours=1))
    assert (again.state, again.attempts) == ("pending", 0)
    assert ledger.plan([again], T0 + timedelta(hours=1)) == (again,)


def test_a_sent_row_is_reopened_only_when_asked_to_include_sent() -> None:
    sent = ledger.record_sent(ledger.claim(row(), T0), "250", T0)

    with pytest.raises(InvalidTransition):
        ledger.resend(sent, T0)
    assert ledger.resend(sent, T0, include_sent=True).state == "pending"


def test_abandon_gives_up_a_stuck_row_and_keeps_the_last_reply() -> None:
    stuck = ledger.claim(row(last_reply="451 later"), T0)
    gone = ledger.abandon(stuck, T0, "checked the mailbox: it arrived")

    assert gone.state == "failed"
    assert gone.last_reply == "checked the mailbox: it arrived (last reply: 451 later)"


def test_an_operator_resends_stuck_and_failed_rows_and_gives_up_stuck_and_pending() -> None:
    later = T0 + timedelta(hours=1)
    rows = [
        row(channel=state, state=state, attempts=2, last_reply="451 busy")
        for state in ("pending", "sending", "sent", "failed", "skipped")
    ]
    again = ledger.reopen(rows, later)
    assert [(d.channel, d.state, d.attempts) for d in again] == [
        ("sending", "pending", 0),
        ("failed", "pending", 0),
    ]
    dropped = ledger.give_up(rows, later)
    assert [(d.channel, d.state) for d in dropped] == [("pending", "failed"), ("sending", "failed")]
    assert all("451 busy" in (d.last_reply or "") for d in dropped)  # the last reply is kept


def test_plan_sends_the_oldest_retries_first() -> None:
    fresh = row(recipient="b@example.com")
    retry = row(recipient="c@example.com", next_attempt_at=T0 - timedelta(minutes=5))
    later = row(recipient="d@example.com", next_attempt_at=T0 + timedelta(minutes=5))
    done = row(recipient="e@example.com", state="sent")

    assert ledger.plan([fresh, later, done, retry], T0) == (fresh, retry)


def test_retry_delay_is_capped() -> None:
    assert RetryPolicy(max_attempts=100, backoff=60).delay(60) == ledger.MAX_RETRY_DELAY


# -- the state machine, property-tested ----------------------------------------------------------


# What a run can do with a row it claimed; temporary failures are frequent so that runs of them
# reach the attempt limit.
OUTCOMES = ["temporary", "temporary", "temporary", "sent", "permanent", "crash"]
TRANSITIONS = ["claim", "record_sent", "record_temporary", "record_permanent", "resend", "abandon"]


class LedgerMachine(RuleBasedStateMachine):
    """Sending runs, operator actions and stray transitions, in any order, on one row.

    The model tracks what a subscriber would see: a row that was sent, or that a crash left in
    `sending` (the message may be out), is never claimed again unless the operator re-sends it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.row = ledger.new(DAY, "a@example.com", T0)
        self.now = T0
        self.claims_since_resend = 0
        self.maybe_out = False  # sent, or claimed and never recorded: sending again duplicates

    def apply(self, name: str, **kwargs: object) -> Delivery | None:
        """Try a transition; a refused one must leave the row as it was."""
        before = self.row
        try:
            after = {
                "claim": lambda: ledger.claim(before, self.now),
                "record_sent": lambda: ledger.record_sent(before, "250 ok", self.now),
                "record_temporary": lambda: ledger.record_failure(
                    before, "451 later", self.now, permanent=False, policy=POLICY
                ),
                "record_permanent": lambda: ledger.record_failure(
                    before, "550 no", self.now, permanent=True, policy=POLICY
                ),
                "resend": lambda: ledger.resend(before, self.now, **kwargs),  # type: ignore[arg-type]
                "abandon": lambda: ledger.abandon(before, self.now),
            }[name]()
        except InvalidTransition:
            return None
        assert after.key == before.key and after.updated_at == self.now
        self.row = after
        if name == "claim":
            assert before.state == "pending"
            assert not self.maybe_out, "claimed again while a copy may be out, without a resend"
            self.claims_since_resend += 1
            self.maybe_out = True
        elif name == "record_sent":
            assert before.state == "sending"
        elif name in ("record_temporary", "record_permanent"):
            assert before.state == "sending"
            self.maybe_out = False  # the server refused it (or the lost-reply edge, by design)
        elif name == "resend":
            assert before.state in ("sending", "failed") or kwargs.get("include_sent")
            self.claims_since_resend = 0
            self.maybe_out = False
        return after

    @rule(outcome=st.sampled_from(OUTCOMES), wait=st.booleans())
    def a_run_sends_the_row(self, outcome: str, wait: bool) -> None:
        if wait and self.row.next_attempt_at is not None:
            self.now = max(self.now, self.row.next_attempt_at)
        if self.apply("claim") is None:
            assert not self.row.due(self.now)
            return
        if outcome != "crash":
            assert self.apply(f"record_{outcome}") is not None

    @rule(minutes=st.integers(min_value=0, max_value=600))
    def time_passes(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)

    @rule(include_sent=st.booleans())
    def the_operator_resends(self, include_sent: bool) -> None:
        self.apply("resend", include_sent=include_sent)

    @rule()
    def the_operator_abandons(self) -> None:
        if self.apply("abandon") is not None:
            self.maybe_out = False

    @rule(name=st.sampled_from(TRANSITIONS))
    def any_transition_at_any_time(self, name: str) -> None:
        self.apply(name)

    @invariant()
    def attempts_never_exceed_the_maximum(self) -> None:
        assert 0 <= self.row.attempts <= POLICY.max_attempts
        assert self.row.attempts == self.claims_since_resend

    @invariant()
    def a_pending_row_has_attempts_left(self) -> None:
        if self.row.state == "pending":
            assert self.row.attempts < POLICY.max_attempts

    @invariant()
    def only_pending_rows_are_ever_planned(self) -> None:
        planned = ledger.plan([self.row], self.now + timedelta(days=365))
        assert bool(planned) == (self.row.state == "pending")
        assert bool(ledger.stuck([self.row])) == (self.row.state == "sending")


TestLedgerMachine = LedgerMachine.TestCase
TestLedgerMachine.settings = settings(max_examples=300, stateful_step_count=50, deadline=None)


# -- deliver over random faults, crashes and operator actions ------------------------------------


@dataclass
class ScriptedTransport:
    """Outcomes in order: "ok", "temp", "perm", "lost" (accepted, then the connection dropped
    before the reply), "down" (connection refused). "ok" once the script runs out."""

    script: list[str]
    delivered: Counter[str] = field(default_factory=Counter)
    lost: Counter[str] = field(default_factory=Counter)  # delivered, but reported as failed

    async def send(self, msg: EmailMessage) -> SendResult:
        to = str(msg["To"])
        outcome = self.script.pop(0) if self.script else "ok"
        if outcome == "ok":
            self.delivered[to] += 1
            return SendResult("250 ok")
        if outcome == "lost":
            self.delivered[to] += 1
            self.lost[to] += 1
            raise TemporaryDeliveryError("lost", reply="lost after DATA", maybe_delivered=True)
        if outcome == "perm":
            raise PermanentDeliveryError("refused", reply="550 no", code=550)
        if outcome == "down":
            raise TemporaryDeliveryError("down", reply="refused", transport_down=True)
        raise TemporaryDeliveryError("later", reply="451 later", code=451)


def messages_for(names: list[str]) -> dict[str, EmailMessage]:
    out = {}
    for name in names:
        msg = EmailMessage()
        msg["From"] = "digest@example.org"
        msg["To"] = name
        msg["Message-ID"] = f"<{name}>"
        msg.set_content("hello")
        out[name] = msg
    return out


step = st.one_of(
    st.tuples(st.just("run"), st.integers(0, 400)),  # minutes until this run
    st.tuples(st.just("crash"), st.integers(0, 400)),  # a run whose first record never lands
    st.tuples(st.just("resend"), st.integers(0, 2)),  # the operator re-sends recipient i
)


@settings(max_examples=200, deadline=None)
@given(
    script=st.lists(st.sampled_from(["ok", "temp", "perm", "lost", "down"]), max_size=30),
    steps=st.lists(step, min_size=1, max_size=12),
)
def test_no_digest_is_sent_twice_without_a_resend_or_a_lost_reply(
    script: list[str], steps: list[tuple[str, int]]
) -> None:
    names = ["a@x.example", "b@x.example", "c@x.example"]
    messages = messages_for(names)
    transport = ScriptedTransport(list(script))
    store = MemoryLedgerStore()
    resends: Counter[str] = Counter()
    now = T0

    async def scenario() -> None:
        nonlocal now
        for kind, arg in steps:
            if kind == "resend":
                # A named row that is not stuck or failed is refused, and nothing changes.
                with contextlib.suppress(InvalidTransition):
                    reopened = await resend(store, DAY, now, None if arg == 2 else [names[arg]])
                    resends.update(d.recipient for d in reopened)
                continue
            now += timedelta(minutes=arg)
            if kind == "crash":
                store.fail_save = RuntimeError("crash")
            with contextlib.suppress(RuntimeError):  # the crash
                await deliver(store, DAY, messages, transport, now, policy=POLICY)
            store.fail_save = None

    asyncio.run(scenario())

    rows = {d.recipient: d for d in asyncio.run(store.load(DAY))}
    for name in names:
        got = transport.delivered[name]
        # A second copy needs a cause: the operator asked, or the server's reply was lost after
        # it had the message (the at-least-once edge).
        assert got <= 1 + resends[name] + transport.lost[name]
        d = rows.get(name)
        if d is None:
            continue
        assert d.attempts <= POLICY.max_attempts
        if d.state == "sent":
            assert got >= 1  # recorded sent means the server accepted it


@settings(max_examples=200, deadline=None)
@given(
    script=st.lists(st.sampled_from(["ok", "temp", "perm", "down"]), max_size=30),
    gaps=st.lists(st.integers(0, 400), min_size=1, max_size=10),
    crash_at=st.one_of(st.none(), st.integers(0, 9)),
)
def test_without_lost_replies_or_resends_each_digest_arrives_at_most_once(
    script: list[str], gaps: list[int], crash_at: int | None
) -> None:
    names = ["a@x.example", "b@x.example", "c@x.example"]
    messages = messages_for(names)
    transport = ScriptedTransport(list(script))
    store = MemoryLedgerStore()

    async def scenario() -> None:
        now = T0
        for i, gap in enumerate(gaps):
            now += timedelta(minutes=gap)
            if i == crash_at:
                store.fail_save = RuntimeError("crash")
            with contextlib.suppress(RuntimeError):  # the crash
                await deliver(store, DAY, messages, transport, now, policy=POLICY)
            store.fail_save = None

    asyncio.run(scenario())
    rows = {d.recipient: d for d in asyncio.run(store.load(DAY))}

    for name in names:
        assert transport.delivered[name] <= 1
        d = rows[name]
        assert d.state in ("pending", "sending", "sent", "failed")
        assert (d.state == "sent") <= (transport.delivered[name] == 1)
        if transport.delivered[name] == 1:
            # Accepted: either recorded as sent, or left in sending by the crash, never pending.
            assert d.state in ("sent", "sending")

"""One ledger machine for every channel: rows per (edition, recipient, channel), skipped rows,
and a server that is down deferring only its own messages; without any server."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.deliver import ledger
from digest.deliver.channels import Notification
from digest.deliver.ledger import Delivery, RetryPolicy
from digest.deliver.sender import MemoryLedgerStore, Skip, deliver
from digest.deliver.transport import SendResult
from digest.errors import InvalidTransition, PermanentDeliveryError, TemporaryDeliveryError

DAY = date(2025, 3, 4)
T0 = datetime(2025, 3, 4, 7, 0, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=4, backoff=60.0)
NOTHING = "not sent: no story matched your rules"


def note(recipient: str, channel: str, host: str = "hooks.example.org") -> Notification:
    return Notification(
        recipient=recipient,
        channel=channel,
        url=f"json://{host}/{channel}",
        title="digest",
        markdown="**news**",
        text="news",
        message_id=f"<{recipient}-{channel}>",
    )


@dataclass
class Hosts:
    """Scripted outcomes per host: "ok", "temp", "perm", "lost", "down"; "ok" when run out."""

    scripts: dict[str, list[str]] = field(default_factory=dict)
    delivered: Counter[tuple[str, str]] = field(default_factory=Counter)
    tries: Counter[str] = field(default_factory=Counter)

    def scope(self, msg: Notification) -> str:
        return msg.url.split("/")[2]

    async def send(self, msg: Notification) -> SendResult:
        host = self.scope(msg)
        self.tries[host] += 1
        script = self.scripts.get(host, [])
        outcome = script.pop(0) if script else "ok"
        if outcome in ("ok", "lost"):
            self.delivered[msg.recipient, msg.channel] += 1
        if outcome == "ok":
            return SendResult(f"{host}: accepted")
        if outcome == "perm":
            raise PermanentDeliveryError("refused", reply="404 no such hook", code=404)
        if outcome == "down":
            raise TemporaryDeliveryError("down", reply="cannot connect", transport_down=True)
        if outcome == "lost":
            raise TemporaryDeliveryError("lost", reply="read timed out", maybe_delivered=True)
        raise TemporaryDeliveryError("later", reply="429 slow down", code=429)


def test_skipping_is_a_final_state_reached_from_pending_only() -> None:
    d = ledger.new(DAY, "a@x.org", T0, channel="ntfy:1")
    skipped = ledger.skip(d, NOTHING, T0)
    assert (skipped.state, skipped.last_reply, skipped.key) == ("skipped", NOTHING, d.key)
    for action in (
        lambda: ledger.claim(skipped, T0),
        lambda: ledger.skip(skipped, NOTHING, T0),
        lambda: ledger.resend(skipped, T0, include_sent=True),
        lambda: ledger.abandon(skipped, T0),
    ):
        with pytest.raises(InvalidTransition):
            action()
    with pytest.raises(InvalidTransition, match=r"a@x.org \(ntfy:1\)"):
        ledger.skip(ledger.claim(d, T0), NOTHING, T0)


async def test_a_skip_is_recorded_once_and_never_sent_later() -> None:
    store = MemoryLedgerStore()
    hosts = Hosts()
    first = await deliver(
        store, DAY, {("a@x.org", "email"): Skip(NOTHING)}, hosts, T0, policy=POLICY
    )
    # The reader changes their rules the same day: the skipped edition stays skipped.
    later = await deliver(
        store, DAY, {("a@x.org", "email"): note("a@x.org", "email")}, hosts, T0, policy=POLICY
    )
    assert [d.state for d in first.skipped] == ["skipped"]
    assert later.skipped == () and later.sent == () and hosts.tries == Counter()
    (row,) = await store.load(DAY)
    assert (row.state, row.last_reply) == ("skipped", NOTHING)


async def test_messages_keyed_by_address_alone_are_emails() -> None:
    store = MemoryLedgerStore()
    await deliver(store, DAY, {"a@x.org": Skip(NOTHING)}, Hosts(), T0, policy=POLICY)
    (row,) = await store.load(DAY)
    assert row.key == (DAY, "a@x.org", "email")


async def test_a_host_that_is_down_defers_only_its_own_messages() -> None:
    store = MemoryLedgerStore()
    hosts = Hosts(scripts={"down.example.org": ["down"]})
    messages = {
        ("a@x.org", "h1"): note("a@x.org", "h1", "down.example.org"),
        ("b@x.org", "h1"): note("b@x.org", "h1", "down.example.org"),
        ("c@x.org", "h1"): note("c@x.org", "h1", "down.example.org"),
        ("a@x.org", "h2"): note("a@x.org", "h2"),
        ("b@x.org", "h2"): note("b@x.org", "h2"),
    }
    report = await deliver(store, DAY, messages, hosts, T0, policy=POLICY)

    assert hosts.tries == Counter({"down.example.org": 1, "hooks.example.org": 2})
    assert {d.key[1:] for d in report.sent} == {("a@x.org", "h2"), ("b@x.org", "h2")}
    assert len(report.retrying) == 1 and len(report.deferred) == 2
    again = await deliver(store, DAY, messages, hosts, T0 + timedelta(minutes=2), policy=POLICY)
    assert len(again.sent) == 3 and all(n == 1 for n in hosts.delivered.values())


channels = ["email", "json:1", "ntfy:2"]
step = st.one_of(
    st.tuples(st.just("run"), st.integers(0, 400)), st.tuples(st.just("crash"), st.integers(0, 400))
)


@settings(max_examples=200, deadline=None)
@given(
    scripts=st.fixed_dictionaries(
        {
            h: st.lists(st.sampled_from(["ok", "temp", "perm", "down"]), max_size=10)
            for h in ("h0", "h1", "h2")
        }
    ),
    steps=st.lists(step, min_size=1, max_size=10),
    skipped=st.sets(st.sampled_from(["a@x.org", "b@x.org"])),
)
def test_every_channel_gets_each_digest_at_most_once_through_crashes_and_faults(
    scripts: dict[str, list[str]], steps: list[tuple[str, int]], skipped: set[str]
) -> None:
    names = ["a@x.org", "b@x.org"]
    messages: dict[tuple[str, str], object] = {}
    for name in names:
        for i, ch in enumerate(channels):
            messages[name, ch] = Skip(NOTHING) if name in skipped else note(name, ch, f"h{i}")
    hosts = Hosts(scripts={h: list(s) for h, s in scripts.items()})
    store = MemoryLedgerStore()

    async def scenario() -> None:
        now = T0
        for kind, gap in steps:
            now += timedelta(minutes=gap)
            if kind == "crash":
                store.fail_save = RuntimeError("crash")
            with contextlib.suppress(RuntimeError):
                await deliver(store, DAY, messages, hosts, now, policy=POLICY)
            store.fail_save = None

    asyncio.run(scenario())
    rows: dict[tuple[str, str], Delivery] = {
        (d.recipient, d.channel): d for d in asyncio.run(store.load(DAY))
    }
    for key, got in hosts.delivered.items():
        assert got <= 1, key
    for (name, ch), d in rows.items():
        assert d.attempts <= POLICY.max_attempts
        if name in skipped:  # skipped, or not reached yet by a run that crashed before
            assert d.state in ("skipped", "pending") and hosts.delivered[name, ch] == 0
        elif d.state == "sent":
            assert hosts.delivered[name, ch] == 1
        elif hosts.delivered[name, ch]:
            assert d.state == "sending"  # accepted, then the crash: reported, never re-sent


async def test_lazy_messages_are_built_one_at_a_time_when_sent_and_never_again() -> None:
    from digest.deliver.sender import LazyMessages

    built: list[str] = []

    def build(name: str) -> Notification:
        built.append(name)
        return note(name, "h1")

    messages = LazyMessages()
    for name in ("a@x.org", "b@x.org"):
        messages.add((name, "h1"), lambda name=name: build(name), f"<{name}-h1>")
    store, hosts = MemoryLedgerStore(), Hosts()
    report = await deliver(store, DAY, messages, hosts, T0, policy=POLICY)
    again = await deliver(store, DAY, messages, hosts, T0, policy=POLICY)

    assert built == ["a@x.org", "b@x.org"] and len(report.sent) == 2 and again.sent == ()
    assert [d.message_id for d in await store.load(DAY)] == ["<a@x.org-h1>", "<b@x.org-h1>"]

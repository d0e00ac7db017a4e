"""Publishing's storage: subscribers, editions, the delivery ledger; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from zoneinfo import ZoneInfo

import pytest
from alembic import command
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from digest.deliver import ledger
from digest.deliver.ledger import Delivery, RetryPolicy
from digest.deliver.sender import deliver, resend
from digest.deliver.transport import SendResult
from digest.errors import (
    InvalidSubscriberError,
    PermanentDeliveryError,
    StoreError,
    SubscriberExistsError,
)
from digest.models import Edition, EditionHeadline, EditionSection, EditionStory, Outlet
from digest.store import (
    SqlLedger,
    Store,
    make_engine,
    open_store,
    upgrade,
)
from digest.store.edition_codec import content_hash, decode_edition, encode_edition
from digest.store.engine import alembic_config
from digest.store.face import StoreFace
from digest.store.schema import DELIVERY_STATES, deliveries, editions, subscribers
from tests import storefixtures
from tests.editions import hostile_edition, make_edition
from tests.storefixtures import NOW, item

# Fixtures, found by pytest under these names.
db_url, store = storefixtures.db_url, storefixtures.store

DAY = date(2025, 3, 1)
BERLIN = ZoneInfo("Europe/Berlin")


def row_count(store: Store, table) -> int:
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


# Subscribers


def test_a_subscriber_is_stored_lower_cased_with_a_random_url_safe_token(store: Store) -> None:
    sub = store.add_subscriber(
        "  Alice@Example.ORG ", categories=("world", "technology"), timezone="Europe/Berlin"
    )
    assert (sub.email, sub.preferences.categories, sub.preferences.timezone) == (
        "alice@example.org",
        ("world", "technology"),
        "Europe/Berlin",
    )
    assert len(sub.token) >= 32
    assert set(sub.token) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
    assert sub.created_at.tzinfo is not None
    assert abs(sub.created_at - datetime.now(UTC)) < timedelta(minutes=1)
    other = store.add_subscriber("bob@example.org", categories=None, timezone="UTC")
    assert other.token != sub.token
    assert other.preferences.categories is None
    assert store.subscribers() == [sub, other]


def test_adding_an_existing_address_is_refused_and_changes_nothing(store: Store) -> None:
    first = store.add_subscriber("alice@example.org", categories=("world",), timezone="UTC")
    with pytest.raises(SubscriberExistsError, match=r"alice@example\.org is subscribed already"):
        store.add_subscriber(
            "ALICE@example.org", categories=("finance", "world"), timezone="Asia/Tokyo"
        )
    assert store.subscribers() == [first]
    assert row_count(store, subscribers) == 1


def test_no_categories_or_an_empty_list_of_them_is_every_category(store: Store) -> None:
    assert (
        store.add_subscriber(
            "bob@example.org", categories=(), timezone="UTC"
        ).preferences.categories
        is None
    )
    store.add_subscriber("carol@example.org", categories=None, timezone="UTC")
    with store.engine.connect() as conn:  # SQL NULL, not the JSON text 'null'
        query = select(func.count()).where(subscribers.c.categories.is_(None))
        assert conn.execute(query).scalar_one() == 2


def test_subscribers_are_found_by_token_and_removed_by_address(store: Store) -> None:
    alice = store.add_subscriber("alice@example.org", categories=None, timezone="UTC")
    bob = store.add_subscriber("bob@example.org", categories=("world",), timezone="UTC")
    assert store.subscriber_by_token(alice.token) == alice
    assert store.subscriber_by_token(bob.token) == bob
    assert store.subscriber_by_token("not-a-token") is None
    assert store.subscriber_by_token("") is None

    assert store.remove_subscriber("Alice@Example.org") is True
    assert store.remove_subscriber("alice@example.org") is False
    assert store.subscriber_by_token(alice.token) is None
    assert store.subscribers() == [bob]
    # Subscribing again is a new subscription: old unsubscribe links stay dead.
    assert store.add_subscriber("alice@example.org", categories=None, timezone="UTC").token not in (
        alice.token,
        bob.token,
    )


@pytest.mark.parametrize(
    "address",
    [
        "",
        "   ",
        "alice",
        "alice@",
        "@example.org",
        "alice@@example.org",
        "alice@example@org",
        "a@b.c\nBcc: x@y.z",
        "a@b.c\r\nBcc: x@y.z",
        "a@b.c\rBcc: x@y.z",
        "a@b.c\u2028Bcc: x@y.z",
        "alice smith@example.org",
        "alice@exa mple.org",
        "alice@example.org\x00",
        "alice\t@example.org",
        "Alice <alice@example.org>",
        "alice@example.org, mallory@example.org",
        "alice@example.org;mallory@example.org",
        '"alice"@example.org',
        "alice@[127.0.0.1]",
        "alice@.example.org",
        "alice@example.org.",
        "alice@example..org",
        "a" * 250 + "@example.org",
        # What the message builder used to refuse after `add` had taken it (issue 10).
        "a..b@example.org",
        ".a@example.org",
        "ü@example.org",
        "jörg@bücher.example",  # no SMTPUTF8: see digest.deliver.address
        "digest@localhost",  # a special-use domain
    ],
)
def test_malformed_addresses_are_refused_with_a_clear_error(store: Store, address: str) -> None:
    with pytest.raises(InvalidSubscriberError, match="not an email address") as caught:
        store.add_subscriber(address, categories=None, timezone="UTC")
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, StoreError)
    assert store.subscribers() == []


def test_an_unknown_time_zone_is_refused(store: Store) -> None:
    for zone in ("Europe/Berlln", "", "../../etc/passwd"):
        with pytest.raises(InvalidSubscriberError, match="time zone"):
            store.add_subscriber("alice@example.org", categories=None, timezone=zone)
    assert store.subscribers() == []


def test_plain_and_internationalized_domain_addresses_are_accepted_normalized(
    store: Store,
) -> None:
    def add(address: str) -> str:
        return store.add_subscriber(address, categories=None, timezone="UTC").email

    assert add("a.b+tag@sub.example.co.uk") == "a.b+tag@sub.example.co.uk"
    assert add("Jo@BÜCHER.example") == "jo@bücher.example"
    with pytest.raises(SubscriberExistsError, match=r"jo@bücher\.example"):  # the same subscriber
        add("jo@xn--bcher-kva.example")
    assert [s.email for s in store.subscribers()] == [
        "a.b+tag@sub.example.co.uk",
        "jo@bücher.example",
    ]


def test_a_stored_address_the_rule_refuses_can_still_be_removed(store: Store) -> None:
    with store.engine.begin() as conn:  # written by an older version, bypassing the rule
        conn.execute(
            subscribers.insert().values(
                email="a..b@example.org", timezone="UTC", token="t", created_at=NOW
            )
        )
    assert store.remove_subscriber("a..b@example.org") is True
    assert store.subscribers() == []


def test_concurrent_adds_of_one_address_make_one_subscriber(db_url: str) -> None:
    with open_store(db_url) as s:
        start = threading.Barrier(4)
        tokens: list[str] = []
        errors: list[BaseException] = []

        def add(zone: str) -> None:
            try:
                start.wait(10)
                tokens.append(
                    s.add_subscriber("x@example.org", categories=None, timezone=zone).token
                )
            except BaseException as err:
                errors.append(err)

        zones = ["UTC", "Europe/Berlin", "Asia/Tokyo", "America/New_York"]
        threads = [threading.Thread(target=add, args=(z,)) for z in zones]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        # One add wins; the others are told the address is subscribed already.
        assert len(tokens) == 1
        assert [type(e) for e in errors] == [SubscriberExistsError] * 3
        (only,) = s.subscribers()
        assert only.token == tokens[0]
        assert only.preferences.timezone in zones


# Editions


def tricky_edition(day: date) -> Edition:
    """Every kind of value an edition holds, including DST edge cases and empty parts."""
    ambiguous = datetime(2024, 10, 27, 2, 30, tzinfo=BERLIN, fold=1)  # the second 02:30
    missing = datetime(2025, 3, 30, 2, 30, tzinfo=BERLIN)  # a wall time that never happened
    story = EditionStory(
        id=7,
        category="world",
        title="Ünïcode “quotes” and <tags> & ampersands",
        brief_summary="",
        summary="Line one.\n\nLine two with a tab\tand emoji 🗞️.",
        keywords=(),
        summarizer="llm:model",
        outlets=(Outlet(name="A", url="https://a.example/x?q=1&r=2", title="T"),),
        first_seen=ambiguous,
        updated=True,
        image="https://a.example/img.png",
    )
    return Edition(
        day=day,
        timezone="Europe/Berlin",
        sections=(
            EditionSection(
                category="world",
                stories=(story, replace(story, id=8, first_seen=missing, image=None)),
                headlines=(
                    EditionHeadline(title="t", url="https://b.example/", source="B", lede=""),
                    EditionHeadline(
                        title="t2",
                        url="https://c.example/",
                        source="C",
                        lede="l",
                        published=datetime(2025, 3, 1, 5, 0, tzinfo=UTC),
                    ),
                    EditionHeadline(
                        title="t3",
                        url="https://d.example/",
                        source="D",
                        lede="l",
                        published=datetime(2025, 3, 1, 5, 0, tzinfo=ZoneInfo("Asia/Kolkata")),
                    ),
                ),
            ),
            EditionSection(category="empty", stories=(), headlines=()),
        ),
        generated_at=datetime(2025, 3, 1, 6, 0, 0, 123456, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    "build", [make_edition, hostile_edition, tricky_edition], ids=["normal", "hostile", "tricky"]
)
def test_an_edition_round_trips_exactly(store: Store, build) -> None:
    edition = build(DAY)
    assert store.save_edition(edition) == (True, True)
    loaded = store.edition(DAY)
    assert loaded == edition
    # Exactly: the same time zones (a ZoneInfo comes back as itself, UTC as UTC), folds, types.
    assert repr(loaded) == repr(edition)
    assert store.editions() == [edition]


def test_the_encoding_is_plain_deterministic_json(store: Store) -> None:
    edition = make_edition(DAY)
    payload = encode_edition(edition)
    assert json.dumps(payload) == json.dumps(encode_edition(make_edition(DAY)))
    assert payload["day"] == "2025-03-01"
    assert payload["generated_at"] == "2025-03-01T06:00:00+00:00"
    story = payload["sections"][0]["stories"][0]
    assert story["first_seen"].endswith("+01:00[Europe/Berlin]")
    assert isinstance(story["keywords"], list)
    assert decode_edition(json.loads(json.dumps(payload))) == edition
    # The content hash leaves out when the edition was built, and nothing else.
    later = replace(edition, generated_at=edition.generated_at + timedelta(hours=3))
    assert content_hash(encode_edition(later)) == content_hash(payload)
    other = replace(edition, timezone="UTC")
    assert content_hash(encode_edition(other)) != content_hash(payload)


def test_the_same_edition_twice_is_one_unchanged_row(store: Store) -> None:
    edition = make_edition(DAY)
    assert store.save_edition(edition, at=NOW) == (True, True)
    rebuilt = replace(edition, generated_at=edition.generated_at + timedelta(hours=2))
    assert store.save_edition(rebuilt, at=NOW + timedelta(hours=2)) == (False, False)
    # The stored edition, and when it was generated, stay as they were.
    assert store.edition(DAY) == edition
    assert row_count(store, editions) == 1
    with store.engine.connect() as conn:
        assert conn.execute(select(editions.c.updated_at)).scalar_one() == NOW


def test_an_edition_whose_stories_changed_replaces_the_stored_one(store: Store) -> None:
    edition = make_edition(DAY)
    store.save_edition(edition, at=NOW)
    section = edition.sections[0]
    story = replace(section.stories[0], title="A newer title", updated=True)
    changed = replace(
        edition,
        sections=(replace(section, stories=(story, *section.stories[1:])), *edition.sections[1:]),
        generated_at=edition.generated_at + timedelta(hours=5),
    )
    later = NOW + timedelta(hours=5)
    assert store.save_edition(changed, at=later) == (False, True)
    assert store.edition(DAY) == changed
    assert row_count(store, editions) == 1
    with store.engine.connect() as conn:
        stored = conn.execute(select(editions.c.generated_at, editions.c.updated_at)).one()
    assert tuple(stored) == (changed.generated_at, later)
    assert store.save_edition(changed, at=later) == (False, False)


def test_editions_are_listed_newest_day_first(store: Store) -> None:
    days = [DAY, DAY + timedelta(days=2), DAY - timedelta(days=3), DAY + timedelta(days=1)]
    for day in days:
        store.save_edition(make_edition(day, categories=("world",), stories=1, headlines=1))
    newest_first = sorted(days, reverse=True)
    assert store.edition_days() == newest_first
    assert [e.day for e in store.editions()] == newest_first
    assert [e.day for e in store.editions(limit=2)] == newest_first[:2]
    assert store.edition(DAY + timedelta(days=10)) is None
    assert store.edition(DAY) == make_edition(DAY, categories=("world",), stories=1, headlines=1)


def test_an_edition_with_naive_datetimes_is_refused(store: Store) -> None:
    edition = make_edition(DAY)
    with pytest.raises(ValueError, match="aware"):
        store.save_edition(replace(edition, generated_at=datetime(2025, 3, 1, 7)))
    section = edition.sections[0]
    naive = replace(section.stories[0], first_seen=datetime(2025, 3, 1, 7))
    bad = replace(edition, sections=(replace(section, stories=(naive,)),))
    with pytest.raises(ValueError, match="naive"):
        store.save_edition(bad)
    assert store.edition_days() == []


def test_an_unreadable_stored_edition_is_a_store_error(store: Store) -> None:
    store.save_edition(make_edition(DAY))
    with store.engine.begin() as conn:
        conn.execute(editions.update().values(payload={"day": "2025-03-01", "sections": 3}))
    with pytest.raises(StoreError, match="edition of 2025-03-01 cannot be read"):
        store.edition(DAY)


# Delivery ledger


def row(recipient: str, day: date = DAY, **changes) -> Delivery:
    return replace(ledger.new(day, recipient, NOW, message_id=f"<{recipient}@digest>"), **changes)


def test_the_ledger_states_are_the_state_machines() -> None:
    assert DELIVERY_STATES == ledger.STATES


def test_adding_a_row_twice_keeps_one_and_never_resets_a_sent_one(store: Store) -> None:
    assert store.add_deliveries([row("a@x.org"), row("b@x.org")]) == 2
    claimed = ledger.claim(row("a@x.org"), NOW)
    assert store.claim_delivery(row("a@x.org"), claimed)
    sent = ledger.record_sent(claimed, "250 2.0.0 Ok: queued as 1\nsecond line", NOW)
    store.save_delivery(sent)

    assert store.add_deliveries([row("a@x.org"), row("b@x.org"), row("c@x.org")]) == 1
    assert store.load_deliveries(DAY) == [sent, row("b@x.org"), row("c@x.org")]
    assert row_count(store, deliveries) == 3
    assert store.add_deliveries([]) == 0


def test_every_field_of_a_row_round_trips(store: Store) -> None:
    full = Delivery(
        edition_day=DAY,
        recipient="a@x.org",
        state="pending",
        attempts=3,
        next_attempt_at=datetime(2025, 3, 1, 13, 30, 15, 250000, tzinfo=BERLIN),
        last_reply="451 4.7.1 Try again later",
        message_id="<20250301.a@digest.example>",
        updated_at=NOW,
    )
    bare = Delivery(edition_day=DAY + timedelta(days=1), recipient="b@x.org")
    store.add_deliveries([full, bare])
    assert store.load_deliveries(DAY) == [full]
    assert store.load_deliveries(DAY + timedelta(days=1)) == [bare]
    assert store.load_deliveries(DAY - timedelta(days=1)) == []


def test_a_claim_succeeds_once_and_fails_with_a_stale_expected_row(store: Store) -> None:
    pending = row("a@x.org")
    store.add_deliveries([pending])
    claimed = ledger.claim(pending, NOW)
    assert store.claim_delivery(pending, claimed) is True
    assert store.claim_delivery(pending, claimed) is False  # a second claimer, same stale view
    assert store.load_deliveries(DAY) == [claimed]

    failed = ledger.record_failure(
        claimed, "451 later", NOW, permanent=False, policy=RetryPolicy(backoff=60)
    )
    store.save_delivery(failed)
    # Same state as the stale row, but not the same attempts: still refused.
    assert failed.state == pending.state and failed.attempts != pending.attempts
    assert store.claim_delivery(pending, claimed) is False
    assert store.load_deliveries(DAY) == [failed]


def test_a_claim_of_a_missing_row_fails_and_may_not_change_the_key(store: Store) -> None:
    assert store.claim_delivery(row("a@x.org"), ledger.claim(row("a@x.org"), NOW)) is False
    store.add_deliveries([row("a@x.org")])
    with pytest.raises(ValueError, match="key"):
        store.claim_delivery(row("a@x.org"), ledger.claim(row("b@x.org"), NOW))
    with pytest.raises(StoreError, match="no delivery"):
        store.save_delivery(row("b@x.org", state="sent"))


def test_the_outcome_written_with_the_next_claim_is_kept_and_never_without_it(
    store: Store,
) -> None:
    store.add_deliveries([row("a@x.org"), row("b@x.org")])
    claimed = ledger.claim(row("a@x.org"), NOW)
    assert store.claim_delivery(row("a@x.org"), claimed)
    sent = ledger.record_sent(claimed, "250 ok", NOW)
    # The next row was claimed by someone else meanwhile: the outcome is written all the same.
    store.claim_delivery(row("b@x.org"), ledger.claim(row("b@x.org"), NOW))
    assert store.claim_delivery(row("b@x.org"), ledger.claim(row("b@x.org"), NOW), after=sent) is (
        False
    )
    assert store.load_deliveries(DAY)[0] == sent

    # An outcome that cannot be written takes the claim with it: one transaction.
    store.add_deliveries([row("c@x.org")])
    with pytest.raises(StoreError, match="no delivery"):
        store.claim_delivery(
            row("c@x.org"), ledger.claim(row("c@x.org"), NOW), after=row("z@x.org", state="sent")
        )
    assert store.load_deliveries(DAY)[2] == row("c@x.org")


def test_two_threads_claiming_the_same_rows_get_each_row_once(db_url: str) -> None:
    recipients = [f"r{n:02}@x.org" for n in range(20)]
    with open_store(db_url) as s:
        s.add_deliveries([row(r) for r in recipients])
        start = threading.Barrier(2)
        won: dict[str, list[str]] = {"one": [], "two": []}
        errors: list[BaseException] = []

        def claimer(name: str) -> None:
            try:
                with open_store(db_url) as mine:
                    rows = mine.load_deliveries(DAY)  # both read before either claims
                    start.wait(10)
                    for current in rows:
                        new = ledger.claim(current, NOW, message_id=f"<{name}>")
                        if mine.claim_delivery(current, new):
                            won[name].append(current.recipient)
            except BaseException as err:
                errors.append(err)

        threads = [threading.Thread(target=claimer, args=(n,)) for n in won]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert sorted(won["one"] + won["two"]) == recipients
        stored = s.load_deliveries(DAY)
        assert all(d.state == "sending" and d.attempts == 1 for d in stored)
        owners = {d.recipient: d.message_id for d in stored}
        assert all(owners[r] == "<one>" for r in won["one"])
        assert all(owners[r] == "<two>" for r in won["two"])


def test_the_ledger_is_listed_newest_edition_first_and_counted_by_state(store: Store) -> None:
    older, newer = DAY - timedelta(days=1), DAY
    store.add_deliveries([row("b@x.org", older), row("a@x.org", older), row("c@x.org", newer)])
    claimed = ledger.claim(row("a@x.org", older), NOW)
    store.claim_delivery(row("a@x.org", older), claimed)
    store.save_delivery(
        ledger.record_failure(claimed, "550 no", NOW, permanent=True, policy=RetryPolicy())
    )

    listed = store.deliveries()
    assert [(d.edition_day, d.recipient) for d in listed] == [
        (newer, "c@x.org"),
        (older, "a@x.org"),
        (older, "b@x.org"),
    ]
    assert listed[1].last_reply == "550 no"
    assert [d.recipient for d in store.deliveries(limit=2)] == ["c@x.org", "a@x.org"]
    assert [d.recipient for d in store.deliveries(edition_day=older)] == ["a@x.org", "b@x.org"]
    assert [d.recipient for d in store.deliveries(states=["failed"])] == ["a@x.org"]
    assert store.ledger_counts() == {
        "pending": 2,
        "sending": 0,
        "sent": 0,
        "failed": 1,
        "skipped": 0,
    }
    assert store.ledger_counts(newer) == {
        "pending": 1,
        "sending": 0,
        "sent": 0,
        "failed": 0,
        "skipped": 0,
    }
    assert store.ledger_counts(DAY + timedelta(days=5)) == dict.fromkeys(DELIVERY_STATES, 0)


def test_the_database_refuses_an_unknown_state(store: Store) -> None:
    with pytest.raises(ValueError, match="state"):
        store.add_deliveries([row("a@x.org", state="bogus")])  # type: ignore[arg-type]
    with pytest.raises(IntegrityError, match=r"(?i)check"), store.engine.begin() as conn:
        conn.execute(
            deliveries.insert().values(
                edition_day=DAY, recipient="a@x.org", state="bogus", attempts=0
            )
        )


# The sender on the SQL ledger


@dataclass
class FakeTransport:
    """Accepts every message except to `refuse` (550); counts what it accepted per recipient."""

    refuse: set[str] = field(default_factory=set)
    delivered: Counter[str] = field(default_factory=Counter)

    async def send(self, msg: EmailMessage) -> SendResult:
        to = str(msg["To"])
        if to in self.refuse:
            raise PermanentDeliveryError("refused", reply="550 5.1.1 no such user", code=550)
        self.delivered[to] += 1
        return SendResult(f"250 2.0.0 Ok: queued {to}")


class ProcessDied(BaseException):
    """The process ending between a send and its record. Not KeyboardInterrupt: `deliver`
    sends in one task per server, and asyncio lets a KeyboardInterrupt raised in a task leave
    the event loop itself instead of reaching the code that awaits the task."""


@dataclass
class CrashingLedger:
    """SqlLedger whose first `save` dies: a crash between sending and recording."""

    inner: SqlLedger
    crashed: bool = False

    async def add(self, rows):
        await self.inner.add(rows)

    async def load(self, day):
        return await self.inner.load(day)

    async def claim(self, expected, new, *, save=None):
        if save is not None:  # the outcome of the message before: its save is the crash
            await self.save(save)
        return await self.inner.claim(expected, new)

    async def save(self, delivery):
        if not self.crashed:
            self.crashed = True
            raise ProcessDied("crash")
        await self.inner.save(delivery)


def message(to: str, day: date = DAY) -> EmailMessage:
    msg = EmailMessage()
    msg["To"] = to
    msg["From"] = "digest@localhost"
    msg["Subject"] = f"Digest of {day}"
    msg["Message-ID"] = f"<{day}.{to.replace('@', '.')}@digest.localhost>"
    msg.set_content("hello")
    return msg


async def test_the_sender_delivers_once_through_the_sql_ledger(store: Store) -> None:
    sql = SqlLedger(StoreFace(store))
    recipients = ["a@x.org", "b@x.org", "bad@x.org"]
    messages = {r: message(r) for r in recipients}
    transport = FakeTransport(refuse={"bad@x.org"})
    policy = RetryPolicy(max_attempts=3, backoff=1)

    report = await deliver(sql, DAY, messages, transport, NOW, policy=policy)
    assert sorted(d.recipient for d in report.sent) == ["a@x.org", "b@x.org"]
    assert [d.recipient for d in report.failed] == ["bad@x.org"]
    stored = {d.recipient: d for d in store.load_deliveries(DAY)}
    assert stored["a@x.org"].state == "sent"
    assert stored["a@x.org"].last_reply == "250 2.0.0 Ok: queued a@x.org"
    assert stored["a@x.org"].message_id == "<2025-03-01.a.x.org@digest.localhost>"
    assert stored["bad@x.org"].state == "failed"
    assert stored["bad@x.org"].last_reply == "550 5.1.1 no such user"

    # Publishing again sends nothing twice.
    again = await deliver(sql, DAY, messages, transport, NOW + timedelta(hours=1), policy=policy)
    assert (again.sent, again.failed, again.already_sent, again.already_failed) == ((), (), 2, 1)
    assert transport.delivered == Counter({"a@x.org": 1, "b@x.org": 1})
    assert store.ledger_counts() == {
        "pending": 0,
        "sending": 0,
        "sent": 2,
        "failed": 1,
        "skipped": 0,
    }


async def test_a_crash_between_sending_and_recording_is_reported_not_resent(store: Store) -> None:
    sql = SqlLedger(StoreFace(store))
    messages = {"a@x.org": message("a@x.org")}
    transport = FakeTransport()
    policy = RetryPolicy()
    with pytest.raises(ProcessDied):
        await deliver(CrashingLedger(sql), DAY, messages, transport, NOW, policy=policy)
    assert transport.delivered == Counter({"a@x.org": 1})
    assert [d.state for d in store.load_deliveries(DAY)] == ["sending"]

    later = NOW + timedelta(hours=1)
    report = await deliver(sql, DAY, messages, transport, later, policy=policy)
    assert [d.recipient for d in report.stuck] == ["a@x.org"]
    assert transport.delivered == Counter({"a@x.org": 1})

    # Only an operator's explicit resend sends it again (with the same Message-ID).
    assert [d.recipient for d in await resend(sql, DAY, later)] == ["a@x.org"]
    report = await deliver(sql, DAY, messages, transport, later, policy=policy)
    assert [d.recipient for d in report.sent] == ["a@x.org"]
    assert transport.delivered == Counter({"a@x.org": 2})
    (final,) = store.load_deliveries(DAY)
    assert (final.state, final.attempts) == ("sent", 1)


# Migration


def test_migrating_0002_to_0003_keeps_the_data_and_ends_at_the_models(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0002")
        with open_store_at(engine) as old:
            old.upsert_items([item("https://example.com/a", title="Kept")], seen_at=NOW)
        with engine.begin() as conn:  # as digest wrote runs at 0002 (no owner column yet)
            run_id = conn.execute(
                text(
                    "INSERT INTO runs (kind, key, started_at, status, counts, errors) VALUES "
                    "('collect', 'collect:2025-03-01', :t, 'running', '{}', '[]') RETURNING id"
                ),
                {"t": NOW},
            ).scalar_one()
        upgrade(engine)
        with engine.connect() as conn, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*expression.*|.*functional.*")
            assert storefixtures.schema_diff(conn) == []
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert version == storefixtures.head_revision()
    finally:
        engine.dispose()

    with open_store(db_url) as migrated:
        (kept,) = migrated.headlines("technology", since=NOW - timedelta(days=1), limit=5)
        assert kept.headline.title == "Kept"
        assert [r.id for r in migrated.recent_runs(5)] == [run_id]
        # The new tables work on the migrated database.
        sub = migrated.add_subscriber("a@x.org", categories=None, timezone="UTC")
        assert migrated.save_edition(make_edition(DAY)) == (True, True)
        assert migrated.add_deliveries([row(sub.email)]) == 1


def test_downgrading_0003_drops_only_the_publish_tables(db_url: str) -> None:
    with open_store(db_url) as s:
        s.upsert_items([item("https://example.com/a")], seen_at=NOW)
        s.add_subscriber("a@x.org", categories=None, timezone="UTC")
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0002")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM articles")).scalar() == 1
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert version == "0002"
        upgrade(engine)
    finally:
        engine.dispose()
    with open_store(db_url) as s:
        assert s.subscribers() == []
        assert s.edition_days() == []


def open_store_at(engine) -> Store:
    """A Store on an engine whose schema is deliberately not the newest (no upgrade)."""

    class _Borrowed(Store):
        def close(self) -> None:  # the test disposes of the engine
            pass

    return _Borrowed(engine)

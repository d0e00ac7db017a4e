"""Subscribers' preferences and channels, the service's secrets, and the ledger per channel, in
the store; on SQLite and PostgreSQL, and across migration 0008."""

from __future__ import annotations

import threading
import warnings
from datetime import date, timedelta

import pytest
from alembic import command
from sqlalchemy import func, select, text

from digest.deliver import ledger
from digest.deliver.ledger import Delivery
from digest.errors import InvalidSubscriberError, SubscriberExistsError
from digest.models import channel_key
from digest.store import Store, make_engine, open_store, upgrade
from digest.store.engine import alembic_config
from digest.store.schema import channels, deliveries
from digest.subscribers.preferences import Preferences
from tests import storefixtures
from tests.storefixtures import NOW

db_url, store = storefixtures.db_url, storefixtures.store

DAY = date(2025, 3, 1)
HOOK = "json://hooks.example.org/digest"
NTFY = "ntfy://{env:NTFY_TOKEN}@ntfy.example.org/news"


def count(store: Store, table) -> int:
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_every_preference_and_channel_round_trips(store: Store) -> None:
    store.add_subscriber("a@x.org", categories=None, timezone="UTC")
    prefs = Preferences(
        categories=("world", "technology"),
        timezone="Europe/Berlin",
        send_at="06:45",
        include=("interest rates", "Fed"),
        exclude=("crypto",),
        max_stories=3,
        language="de",
        send_email=False,
        channels=(NTFY, HOOK),
    )
    saved = store.save_preferences("A@X.org", prefs)

    assert saved is not None and saved.preferences == prefs
    assert [c.key for c in saved.channels] == [channel_key(NTFY), channel_key(HOOK)]
    assert store.subscriber("a@x.org") == saved
    assert store.subscriber_by_token(saved.token) == saved
    assert store.subscribers() == [saved]
    # Placeholders are stored as given, never resolved.
    with store.engine.connect() as conn:
        urls = conn.execute(select(channels.c.url).order_by(channels.c.position)).scalars().all()
    assert urls == [NTFY, HOOK]


def test_channel_keys_name_the_service_and_never_show_the_url() -> None:
    key = channel_key("tgram://123456789:AAHsecret/987")
    assert key.startswith("tgram:") and "secret" not in key and len(key) == len("tgram:") + 12
    assert channel_key(HOOK) == channel_key(f"  {HOOK} ")
    assert channel_key(HOOK) != channel_key(HOOK + "2")


def test_saving_again_replaces_the_channels_in_their_new_order(store: Store) -> None:
    store.add_subscriber("a@x.org", categories=None, timezone="UTC")
    store.save_preferences("a@x.org", Preferences(channels=(HOOK, NTFY)))
    again = store.save_preferences("a@x.org", Preferences(channels=(NTFY,)))

    assert again is not None and [c.url for c in again.channels] == [NTFY]
    assert count(store, channels) == 1


@pytest.mark.parametrize("timezone", ["America", "9" * 300])
def test_a_time_zone_naming_a_folder_or_too_long_is_refused(store: Store, timezone: str) -> None:
    with pytest.raises(InvalidSubscriberError, match="unknown time zone"):
        store.add_subscriber("a@example.org", categories=None, timezone=timezone)


def test_adding_an_existing_address_keeps_every_preference_and_channel(store: Store) -> None:
    store.add_subscriber("a@x.org", categories=None, timezone="UTC")
    saved = store.save_preferences(
        "a@x.org",
        Preferences(
            categories=("world",), timezone="Asia/Tokyo", include=("fed",), channels=(HOOK,)
        ),
    )
    with pytest.raises(SubscriberExistsError):
        store.add_subscriber("a@x.org", categories=None, timezone="UTC")

    assert store.subscribers() == [saved]


def test_new_subscribers_have_the_defaults(store: Store) -> None:
    sub = store.add_subscriber("a@x.org", categories=None, timezone="UTC")
    assert sub.preferences == Preferences(timezone="UTC")
    assert sub.to_json() == {
        "email": "a@x.org",
        "categories": [],
        "timezone": "UTC",
        "send_at": None,
        "include": [],
        "exclude": [],
        "max_stories": None,
        "language": None,
        "email_digest": True,
        "channels": [],
    }


def test_preferences_of_nobody_are_not_saved(store: Store) -> None:
    assert store.save_preferences("nobody@x.org", Preferences()) is None
    assert store.subscriber("nobody@x.org") is None


def test_unsubscribing_removes_the_channels_too(store: Store) -> None:
    store.add_subscriber("a@x.org", categories=None, timezone="UTC")
    store.save_preferences("a@x.org", Preferences(channels=(HOOK, NTFY)))
    assert store.remove_subscriber("a@x.org")
    assert count(store, channels) == 0


def test_a_secret_is_made_once_and_shared(store: Store) -> None:
    found: list[str] = []
    threads = [
        threading.Thread(target=lambda: found.append(store.secret("csrf"))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(found)) == 1 and len(found[0]) >= 40
    assert store.secret("csrf") == found[0] != store.secret("other")


# The ledger per channel


def row(recipient: str, channel: str = "email", **changes) -> Delivery:
    return Delivery(edition_day=DAY, recipient=recipient, channel=channel, **changes)


def test_each_channel_of_a_recipient_has_its_own_row(store: Store) -> None:
    hook = channel_key(HOOK)
    assert store.add_deliveries([row("a@x.org"), row("a@x.org", hook)]) == 2
    assert store.add_deliveries([row("a@x.org"), row("a@x.org", hook)]) == 0

    email, webhook = store.load_deliveries(DAY)
    assert (email.channel, webhook.channel) == ("email", hook)
    claimed = ledger.claim(webhook, NOW)
    assert store.claim_delivery(webhook, claimed)
    assert not store.claim_delivery(webhook, claimed)  # the same claim again: refused
    store.save_delivery(ledger.record_sent(claimed, "json: sent", NOW))
    assert [(d.channel, d.state) for d in store.load_deliveries(DAY)] == [
        ("email", "pending"),
        (hook, "sent"),
    ]


def test_a_skipped_row_is_stored_counted_and_final(store: Store) -> None:
    (pending,) = [row("a@x.org")]
    store.add_deliveries([pending])
    skipped = ledger.skip(pending, "not sent: no story matched your rules", NOW)
    assert store.claim_delivery(pending, skipped)

    (stored,) = store.load_deliveries(DAY)
    assert (stored.state, stored.last_reply) == ("skipped", "not sent: no story matched your rules")
    assert store.ledger_counts()["skipped"] == 1
    assert ledger.plan([stored], NOW + timedelta(days=1)) == ()


# Migration 0008


def test_migrating_to_0008_keeps_every_email_row_and_subscriber(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0007")
            conn.execute(
                text(
                    "INSERT INTO subscribers (email, categories, timezone, token, created_at) "
                    "VALUES ('a@x.org', NULL, 'UTC', 'tok', :t)"
                ),
                {"t": NOW},
            )
            conn.execute(
                text(
                    "INSERT INTO deliveries (edition_day, recipient, state, attempts, last_reply) "
                    "VALUES (:d, 'a@x.org', 'sent', 1, '250 ok')"
                ),
                {"d": DAY},
            )
        upgrade(engine)
        with engine.connect() as conn, warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*expression.*|.*functional.*")
            assert storefixtures.schema_diff(conn) == []
    finally:
        engine.dispose()

    with open_store(db_url) as migrated:
        (sub,) = migrated.subscribers()
        assert sub.preferences == Preferences(timezone="UTC") and sub.token == "tok"
        (sent,) = migrated.load_deliveries(DAY)
        assert (sent.channel, sent.state, sent.last_reply) == ("email", "sent", "250 ok")
        # The new key: a second channel of the same edition and recipient is a row of its own.
        assert migrated.add_deliveries([row("a@x.org", channel_key(HOOK))]) == 1
        migrated.save_preferences("a@x.org", Preferences(channels=(HOOK,)))


def test_downgrading_0008_keeps_the_email_rows(db_url: str) -> None:
    with open_store(db_url) as s:
        s.add_subscriber("a@x.org", categories=None, timezone="UTC")
        s.save_preferences("a@x.org", Preferences(channels=(HOOK,), include=("fed",)))
        s.add_deliveries([row("a@x.org"), row("a@x.org", channel_key(HOOK))])
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0007")
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT recipient, state FROM deliveries")).all()
            assert [tuple(r) for r in rows] == [("a@x.org", "pending")]
            assert conn.execute(text("SELECT count(*) FROM subscribers")).scalar() == 1
        upgrade(engine)
    finally:
        engine.dispose()
    with open_store(db_url) as s:
        (sub,) = s.subscribers()
        assert sub.channels == () and sub.preferences.include == ()
        assert [d.channel for d in s.load_deliveries(DAY)] == ["email"]


def test_the_database_takes_the_skipped_state_and_refuses_others(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            deliveries.insert().values(
                edition_day=DAY, recipient="a@x.org", channel="email", state="skipped", attempts=0
            )
        )
    with pytest.raises(Exception, match=r"(?i)check"), store.engine.begin() as conn:
        conn.execute(
            deliveries.insert().values(
                edition_day=DAY, recipient="b@x.org", channel="email", state="maybe", attempts=0
            )
        )

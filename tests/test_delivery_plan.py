"""Who gets what of an edition, decided without a store, a server or a clock
(`digest.edition.reader_plan`): each reader at their own time in their own zone, each message
once, a
copy their rules empty skipped, a channel switched on later waiting for the next edition. And
what a run of `deliver` makes of the ledger, its lanes and its report, without sending."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from digest.deliver.ledger import EMAIL, Delivery, State, Survey, survey
from digest.deliver.sender import DeliveryReport, Outcome, route
from digest.edition.reader_plan import EditionPlan, Send, due_edition, plan_edition, wanted
from digest.jobs.sending import delivery_counts, delivery_failures
from digest.models import Channel, Subscriber, channel_key
from digest.schedule import subscriber_edition
from digest.subscribers.preferences import Preferences
from tests.editions import make_edition

DAY = date(2026, 11, 29)
NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SEVEN = time(7, 0)  # the schedule's publish_at
EDITION = make_edition(DAY)
HOOKS = ("json://hooks.example.org/a", "ntfy://ntfy.example.org/b", "discord://1/2")


def channel(url: str) -> Channel:
    return Channel(url, channel_key(url))


def reader(email: str, *, channels: Sequence[str] = (), **prefs: Any) -> Subscriber:
    """A subscriber with `prefs` (the fields of `Preferences`, `channels` as URLs)."""
    return Subscriber(
        email=email,
        token=f"token-{email}",
        created_at=NOON - timedelta(days=30),
        preferences=Preferences(
            channels=tuple(channels), **{"timezone": "UTC", "categories": None, **prefs}
        ),
    )


def row(recipient: str, channel: str = EMAIL, state: State = "sent") -> Delivery:
    return Delivery(DAY, recipient, state, attempts=1, channel=channel, updated_at=NOON)


def keys(plan: EditionPlan) -> set[tuple[str, str]]:
    return {s.key for c in plan.copies for s in c.sends}


def recipients(plan: EditionPlan) -> list[str]:
    return [c.subscriber.email for c in plan.copies]


# -- which messages ---------------------------------------------------------------------------


def test_a_reader_gets_the_email_then_each_of_their_channels_once() -> None:
    sub = reader("a@example.org", channels=(HOOKS[0], HOOKS[1], HOOKS[0]))
    assert [s.key for s in wanted(sub)] == [
        ("a@example.org", EMAIL),
        ("a@example.org", channel_key(HOOKS[0])),
        ("a@example.org", channel_key(HOOKS[1])),
    ]
    no_email = wanted(replace(sub, preferences=replace(sub.preferences, send_email=False)))
    assert [s.key[1] for s in no_email] == [channel_key(HOOKS[0]), channel_key(HOOKS[1])]


def test_a_message_already_sent_failed_or_in_sending_is_not_planned_again() -> None:
    sub = reader("a@example.org", channels=HOOKS[:2])
    rows = [
        row("a@example.org", EMAIL, "sent"),
        row("a@example.org", channel_key(HOOKS[0]), "sending"),
        row("a@example.org", channel_key(HOOKS[1]), "pending"),
    ]
    plan = plan_edition(EDITION, [sub], rows, NOON, publish_at=SEVEN)
    assert keys(plan) == {("a@example.org", channel_key(HOOKS[1]))}
    rows[2] = replace(rows[2], state="failed")
    assert plan_edition(EDITION, [sub], rows, NOON, publish_at=SEVEN) == EditionPlan()


def test_a_channel_switched_on_after_the_edition_went_out_waits_for_the_next_one() -> None:
    sub = reader("a@example.org", channels=(HOOKS[0],))
    sent = [row("a@example.org")]
    assert plan_edition(EDITION, [sub], sent, NOON, publish_at=SEVEN) == EditionPlan()
    tomorrow = make_edition(DAY + timedelta(days=1))
    plan = plan_edition(tomorrow, [sub], [], NOON + timedelta(days=1), publish_at=SEVEN)
    assert keys(plan) == {("a@example.org", EMAIL), ("a@example.org", channel_key(HOOKS[0]))}


# -- which copy -------------------------------------------------------------------------------


def test_a_copy_the_rules_leave_empty_is_skipped_on_every_channel() -> None:
    picky = reader("picky@example.org", include=("zeppelin",), channels=(HOOKS[0],))
    plan = plan_edition(EDITION, [picky, reader("all@example.org")], [], NOON, publish_at=SEVEN)
    assert recipients(plan) == ["all@example.org"]
    assert plan.skipped == (
        ("picky@example.org", EMAIL),
        ("picky@example.org", channel_key(HOOKS[0])),
    )


def test_a_reader_whose_categories_had_no_news_gets_their_copy_not_a_skip() -> None:
    # Nothing to keep in the first place: the reader hears that there was no news for them.
    sub = reader("a@example.org", categories=("sports",), include=("zeppelin",))
    plan = plan_edition(EDITION, [sub], [], NOON, publish_at=SEVEN)
    assert recipients(plan) == ["a@example.org"] and plan.skipped == ()


def test_the_copy_has_the_readers_categories_stories_and_language() -> None:
    sub = reader("a@example.org", categories=("world",), max_stories=1, language="de")
    (copy,) = plan_edition(EDITION, [sub], [], NOON, publish_at=SEVEN).copies
    assert [s.category for s in copy.edition.sections] == ["world"]
    assert len(copy.edition.sections[0].stories) == 1
    assert copy.language == "de"


def test_the_translator_is_needed_only_for_a_copy_with_a_language() -> None:
    plain = plan_edition(EDITION, [reader("a@example.org")], [], NOON, publish_at=SEVEN)
    german = reader("b@example.org", language="de")
    assert not plain.languages
    assert plan_edition(EDITION, [german], [], NOON, publish_at=SEVEN).languages


# -- when -------------------------------------------------------------------------------------


def test_with_due_only_each_reader_gets_it_at_their_own_time_in_their_zone() -> None:
    early = reader("early@example.org", timezone="Asia/Tokyo", send_at="06:00")
    default = reader("default@example.org", timezone="Europe/Berlin")  # publish_at: 07:00
    subs = [early, default]
    tokyo = datetime(2026, 11, 28, 21, 0, tzinfo=UTC)  # 06:00 of the 29th in Tokyo
    berlin = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)  # 07:00 in Berlin

    def due(now: datetime) -> list[str]:
        plan = plan_edition(EDITION, subs, [], now, publish_at=SEVEN, due_only=True)
        return recipients(plan)

    assert due(tokyo - timedelta(minutes=1)) == []
    assert due(tokyo) == ["early@example.org"]
    assert due(berlin) == ["early@example.org", "default@example.org"]
    assert recipients(plan_edition(EDITION, subs, [], tokyo, publish_at=SEVEN)) == [
        "early@example.org",
        "default@example.org",
    ]


def test_a_newer_edition_due_for_a_reader_replaces_the_older_one() -> None:
    west = reader("west@example.org", timezone="Pacific/Honolulu", send_at="23:30")
    due = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)  # 23:30 of the 29th in Honolulu
    newer = [DAY + timedelta(days=1)]
    plan = plan_edition(EDITION, [west], [], due, publish_at=SEVEN, due_only=True, newer=newer)
    assert recipients(plan) == ["west@example.org"]
    later = due + timedelta(days=1)
    stale = plan_edition(EDITION, [west], [], later, publish_at=SEVEN, due_only=True, newer=newer)
    assert stale == EditionPlan()
    assert due_edition(west, [DAY, *newer], SEVEN, later) == newer[0]


def test_a_message_to_retry_goes_out_whatever_the_readers_time() -> None:
    sub = reader("a@example.org", send_at="23:00", channels=(HOOKS[0],))
    rows = [row("a@example.org", EMAIL, "pending"), row("a@example.org", channel_key(HOOKS[0]))]
    plan = plan_edition(EDITION, [sub], rows, NOON, publish_at=SEVEN, due_only=True)
    assert keys(plan) == {("a@example.org", EMAIL)}


# -- properties -------------------------------------------------------------------------------

ZONES = ("UTC", "Europe/Berlin", "Asia/Tokyo", "America/New_York", "Pacific/Honolulu")
STATES: tuple[State, ...] = ("pending", "sending", "sent", "failed", "skipped")
CHANNELS = (EMAIL, *(channel_key(u) for u in HOOKS))


@st.composite
def subscribers(draw: st.DrawFn) -> list[Subscriber]:
    emails = draw(st.lists(st.sampled_from("abcdef"), unique=True, max_size=5))
    return [
        reader(
            f"{e}@example.org",
            timezone=draw(st.sampled_from(ZONES)),
            send_at=draw(st.sampled_from((None, "00:00", "06:30", "18:00", "23:59"))),
            send_email=draw(st.booleans()),
            channels=tuple(draw(st.lists(st.sampled_from(HOOKS), max_size=3))),
            categories=draw(st.sampled_from((None, ("world",), ("world", "finance")))),
            include=draw(st.sampled_from(((), ("zeppelin",), ("flood",)))),
            max_stories=draw(st.sampled_from((None, 1))),
        )
        for e in emails
    ]


@st.composite
def ledgers(draw: st.DrawFn) -> list[Delivery]:
    cells = draw(
        st.dictionaries(
            st.tuples(st.sampled_from("abcdefg"), st.sampled_from(CHANNELS)),
            st.sampled_from(STATES),
            max_size=8,
        )
    )
    return [row(f"{e}@example.org", ch, state) for (e, ch), state in cells.items()]


times = st.datetimes(
    min_value=datetime(2026, 11, 28), max_value=datetime(2026, 12, 1), timezones=st.just(UTC)
)
NEWER = (DAY + timedelta(days=1),)


@settings(max_examples=150, deadline=None)
@given(subscribers(), ledgers(), times, st.booleans(), st.sampled_from(((), NEWER)))
def test_every_reader_and_every_message_is_planned_at_most_once(
    subs: list[Subscriber], rows: list[Delivery], now: datetime, due_only: bool, newer: tuple
) -> None:
    plan = plan_edition(EDITION, subs, rows, now, publish_at=SEVEN, due_only=due_only, newer=newer)
    planned = [s.key for c in plan.copies for s in c.sends] + list(plan.skipped)
    assert len(planned) == len(set(planned))
    copied, skipped = recipients(plan), {r for r, _ in plan.skipped}
    assert len(copied) == len(set(copied)) and not skipped & set(copied)
    by_email = {s.email: s for s in subs}
    settled = {(d.recipient, d.channel) for d in rows if d.state != "pending"}
    begun = {d.recipient for d in rows}
    known = {(d.recipient, d.channel) for d in rows}
    for key in planned:
        sub = by_email[key[0]]
        asked = {c.key for c in sub.channels} | ({EMAIL} if sub.preferences.send_email else set())
        assert key[1] in asked
        assert key not in settled
        assert key[0] not in begun or key in known  # a channel added later waits


@settings(max_examples=150, deadline=None)
@given(subscribers(), ledgers(), times, st.sampled_from(((), NEWER)))
def test_a_reader_not_due_and_with_nothing_to_retry_is_never_planned(
    subs: list[Subscriber], rows: list[Delivery], now: datetime, newer: tuple
) -> None:
    plan = plan_edition(EDITION, subs, rows, now, publish_at=SEVEN, due_only=True, newer=newer)
    retrying = {d.recipient for d in rows if d.state == "pending"}
    planned = {*recipients(plan), *(r for r, _ in plan.skipped)}
    for sub in subs:
        send_at = time.fromisoformat(sub.preferences.send_at) if sub.preferences.send_at else SEVEN
        due = subscriber_edition([DAY, *newer], send_at, sub.preferences.timezone, now) == DAY
        if sub.email in planned:
            assert due or sub.email in retrying


@settings(max_examples=150, deadline=None)
@given(subscribers(), ledgers(), times, st.booleans())
def test_once_what_was_planned_is_recorded_nothing_is_planned_again(
    subs: list[Subscriber], rows: list[Delivery], now: datetime, due_only: bool
) -> None:
    plan = plan_edition(EDITION, subs, rows, now, publish_at=SEVEN, due_only=due_only)
    done = {(d.recipient, d.channel): d for d in rows}
    for key in keys(plan):
        done[key] = row(*key, state="sent")
    for key in plan.skipped:
        done[key] = row(*key, state="skipped")
    again = plan_edition(EDITION, subs, done.values(), now, publish_at=SEVEN, due_only=due_only)
    assert again == EditionPlan()


@settings(max_examples=100, deadline=None)
@given(subscribers(), ledgers(), times, times)
def test_a_planned_message_has_the_same_key_whenever_and_in_whatever_order_it_is_planned(
    subs: list[Subscriber], rows: list[Delivery], now: datetime, later: datetime
) -> None:
    plan = plan_edition(EDITION, subs, rows, now, publish_at=SEVEN)
    other = plan_edition(EDITION, subs[::-1], rows[::-1], later, publish_at=SEVEN)
    assert keys(plan) == keys(other) and set(plan.skipped) == set(other.skipped)
    assert recipients(other) == recipients(plan)[::-1]
    for copy in plan.copies:
        for send in copy.sends:
            url = send.channel.url if send.channel else None
            assert send == Send(copy.subscriber.email, channel(url) if url else None)


# -- one run of `deliver`: what the ledger means, the lanes, the report -----------------------

LATER = NOON + timedelta(hours=1)


def test_a_run_sends_the_due_rows_and_leaves_the_others_as_they_are() -> None:
    retry = replace(row("b@example.org", state="pending"), next_attempt_at=LATER)
    rows = [
        row("a@example.org", state="pending"),
        retry,
        row("c@example.org", state="sending"),
        row("d@example.org", state="sent"),
        row("e@example.org", state="failed"),
        row("f@example.org", state="skipped"),
    ]
    found = survey(rows, NOON)
    assert found == Survey(
        due=(rows[0],), stuck=(rows[2],), waiting=(retry,), already_sent=1, already_failed=1
    )
    later = survey(rows, LATER)  # once its retry time has come, it is due too
    assert later.due == (rows[0], retry) and later.waiting == ()


def test_the_emails_share_a_lane_and_each_server_has_its_own() -> None:
    due = [
        row("a@example.org", EMAIL, "pending"),
        row("a@example.org", "json:1", "pending"),
        row("b@example.org", "json:2", "pending"),
        row("b@example.org", EMAIL, "pending"),
        row("c@example.org", "ntfy:3", "pending"),
        row("d@example.org", EMAIL, "pending"),
    ]
    servers = {due[1].key: "hooks:443", due[2].key: "hooks:443", due[4].key: "ntfy:443"}
    given = {(d.recipient, d.channel) for d in due[:5]}
    routes = route(due, given, servers)
    assert [[i for i, _ in lane] for lane in routes.lanes] == [[0, 3], [1, 2], [4]]
    assert routes.missing == (due[5],)


def test_the_report_keeps_the_plans_order_whichever_lane_finished_first() -> None:
    a, b, c, d = (row(f"{e}@example.org", state="pending") for e in "abcd")
    found = Survey(due=(a, b, c, d), already_sent=2)
    report = DeliveryReport.of(
        DAY,
        found,
        [(3, "sent", d), (1, "retrying", b), (0, "sent", a), (2, "deferred", c)],
    )
    assert report.sent == (a, d) and report.retrying == (b,) and report.deferred == (c,)
    assert report.already_sent == 2 and not report.ok


@settings(max_examples=150, deadline=None)
@given(ledgers(), times)
def test_every_row_of_the_ledger_means_one_thing_to_a_run(
    rows: list[Delivery], now: datetime
) -> None:
    found = survey(rows, now)
    done = [d for d in rows if d.state == "skipped"]
    groups = [found.due, found.waiting, found.stuck, done]
    assert sum(map(len, groups)) + found.already_sent + found.already_failed == len(rows)
    assert all(d.due(now) for d in found.due)
    assert all(d.state == "pending" and not d.due(now) for d in found.waiting)
    assert {d.key for d in found.stuck} == {d.key for d in rows if d.state == "sending"}


@settings(max_examples=150, deadline=None)
@given(ledgers(), st.data())
def test_every_due_row_has_one_lane_and_one_server_is_sent_to_in_order(
    rows: list[Delivery], data: st.DataObject
) -> None:
    due = [replace(d, state="pending") for d in rows]
    pairs = [(d.recipient, d.channel) for d in due] or [("", "")]
    given_ = data.draw(st.sets(st.sampled_from(pairs)))
    servers = {d.key: data.draw(st.sampled_from(("one", "two"))) for d in due if d.channel != EMAIL}
    routes = route(due, given_, servers)
    placed = [i for lane in routes.lanes for i, _ in lane]
    assert sorted(placed) == [i for i, d in enumerate(due) if (d.recipient, d.channel) in given_]
    assert {d.key for d in routes.missing} == {
        d.key for d in due if (d.recipient, d.channel) not in given_
    }
    for lane in routes.lanes:
        assert [i for i, _ in lane] == sorted(i for i, _ in lane)
        assert all(due[i] == d for i, d in lane)
        assert len({servers.get(d.key, EMAIL) for _, d in lane}) == 1
    assert len(routes.lanes) == len({servers.get(due[i].key, EMAIL) for i in placed})


OUTCOMES: tuple[Outcome, ...] = ("sent", "retrying", "failed", "deferred", "raced", "skipped")


@settings(max_examples=100, deadline=None)
@given(ledgers(), st.data())
def test_a_report_is_the_same_whatever_order_the_outcomes_come_in(
    rows: list[Delivery], data: st.DataObject
) -> None:
    outcomes = [(i, data.draw(st.sampled_from(OUTCOMES)), d) for i, d in enumerate(rows)]
    shuffled = data.draw(st.permutations(outcomes))
    found = survey(rows, NOON)
    report = DeliveryReport.of(DAY, found, shuffled)
    assert report == DeliveryReport.of(DAY, found, outcomes)
    for name in OUTCOMES:
        assert getattr(report, name) == tuple(d for _, o, d in outcomes if o == name)
    assert (report.stuck, report.waiting) == (found.stuck, found.waiting)


def test_a_publication_reports_each_undelivered_message_once_with_why() -> None:
    failed = replace(row("a@example.org", state="failed"), last_reply="550 no such user")
    retry = replace(
        row("b@example.org", "json:1", state="pending"), last_reply="503", next_attempt_at=LATER
    )
    earlier = replace(row("c@example.org", state="pending"), edition_day=DAY - timedelta(days=1))
    stuck = row("d@example.org", state="sending")
    report = DeliveryReport(DAY, failed=(failed,), retrying=(retry,), stuck=(stuck,))
    errors = delivery_failures(report, [retry, earlier])
    assert [(e.source, e.error) for e in errors[:2]] == [
        ("email:a@example.org", "550 no such user"),
        ("json:1:b@example.org", "503"),
    ]
    assert errors[2].source == "email:c@example.org" and "2026-11-28: waiting" in errors[2].error
    assert errors[3].source == "email:d@example.org" and "--resend" in errors[3].error
    assert len(errors) == 4
    counts = delivery_counts(report, [retry, earlier])
    assert (counts["retrying"], counts["retrying_now"], counts["failed"]) == (2, 1, 1)

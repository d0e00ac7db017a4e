"""Pure scheduling decisions: intervals, period keys, publish times across DST changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.app import App
from digest.config import parse_config
from digest.daemon import Daemon
from digest.errors import ConfigError
from digest.schedule import (
    collect_key,
    collect_period,
    delivery_due,
    latest_due_edition,
    parse_clock,
    parse_interval,
    publish_due_at,
    publish_key,
)


def test_intervals_and_clock_times_parse():
    assert parse_interval("90s") == timedelta(seconds=90)
    assert parse_interval("30m") == timedelta(minutes=30)
    assert parse_interval(" 2h ") == timedelta(hours=2)
    assert parse_clock("07:05") == time(7, 5)
    for bad in ("", "5", "1w", "-3m", "5s"):
        with pytest.raises(ValueError):
            parse_interval(bad)
    for bad in ("7", "25:00", "07:61", "seven"):
        with pytest.raises(ValueError):
            parse_clock(bad)


@pytest.mark.parametrize("bad", ["٠٧:٠٠", "0²:00", "07:0" + "0" * 5000, "07:00:00", "+7:00"])
def test_a_clock_time_is_ascii_digits_only(bad: str) -> None:
    with pytest.raises(ValueError, match="not a time of day"):
        parse_clock(bad)


def test_bad_schedule_values_name_the_key():
    with pytest.raises(ConfigError, match=r"schedule\.collect_every"):
        parse_config({"schedule": {"collect_every": "often"}})
    with pytest.raises(ConfigError, match=r"schedule\.publish_at"):
        parse_config({"schedule": {"publish_at": "7am"}})


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)),
    st.sampled_from(["45s", "10m", "60m", "2h", "1d"]),
)
def test_every_instant_of_a_period_gets_the_same_key(naive, every_text):
    now = naive.replace(tzinfo=UTC)
    every = parse_interval(every_text)
    start = collect_period(now, every)
    assert start <= now < start + every
    assert collect_key(collect_period(start + every - timedelta(microseconds=1), every)) == (
        collect_key(start)
    )
    assert collect_key(collect_period(start + every, every)) != collect_key(start)


def test_publish_time_follows_the_zone_across_dst():
    seven = time(7, 0)
    # Berlin: UTC+1 in winter, UTC+2 in summer (changed on 2026-03-29).
    assert publish_due_at(date(2026, 3, 28), seven, "Europe/Berlin") == datetime(
        2026, 3, 28, 6, 0, tzinfo=UTC
    )
    assert publish_due_at(date(2026, 3, 29), seven, "Europe/Berlin") == datetime(
        2026, 3, 29, 5, 0, tzinfo=UTC
    )
    # 02:30 does not exist in Berlin on 2026-03-29: it happens once, an hour later in UTC terms.
    skipped = publish_due_at(date(2026, 3, 29), time(2, 30), "Europe/Berlin")
    assert skipped == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


def test_each_subscriber_gets_the_edition_at_their_own_morning():
    day = date(2026, 11, 29)
    now = datetime(2026, 11, 29, 7, 30, tzinfo=UTC)
    assert delivery_due(day, time(7, 0), "UTC", now)
    assert delivery_due(day, time(7, 0), "Europe/Berlin", now)  # 08:30 there
    assert not delivery_due(day, time(7, 0), "America/New_York", now)  # 02:30 there


def test_the_latest_due_edition_is_yesterdays_before_publish_time():
    tz = "Europe/Berlin"
    assert latest_due_edition(datetime(2026, 11, 29, 5, 0, tzinfo=UTC), time(7, 0), tz) == date(
        2026, 11, 28
    )
    assert latest_due_edition(datetime(2026, 11, 29, 6, 0, tzinfo=UTC), time(7, 0), tz) == date(
        2026, 11, 29
    )


# The daemon's own scheduler across Europe/Berlin's changes of 2025: spring forward on 30 March
# (02:00 → 03:00, so 02:30 does not exist) and fall back on 26 October (03:00 → 02:00, so 02:30
# happens twice). No waiting: the real APScheduler jobs and triggers say when they would run, and
# the daemon's own decision says which edition each run publishes.

BERLIN = "Europe/Berlin"
SPRING = (datetime(2025, 3, 28, 12, tzinfo=UTC), datetime(2025, 4, 1, 12, tzinfo=UTC))
FALL = (datetime(2025, 10, 24, 12, tzinfo=UTC), datetime(2025, 10, 28, 12, tzinfo=UTC))


def berlin_daemon(publish_at: str = "07:00", collect_every: str = "60m") -> Daemon:
    schedule = {"timezone": BERLIN, "publish_at": publish_at, "collect_every": collect_every}
    return Daemon(App(parse_config({"schedule": schedule})))


def in_utc(when: datetime) -> datetime:
    """Compare instants in UTC: Python compares two datetimes of the same zone by wall clock
    (so 02:30 before and after a fall-back are equal), and never finds a time in a gap or fold
    equal to one in another zone."""
    return when.astimezone(UTC)


def run_times(job, until: datetime) -> list[datetime]:
    """When APScheduler runs `job` up to `until`, in UTC: its first run time, then after each
    run the next fire time its trigger gives (what the scheduler asks it after every run)."""
    times = [job.next_run_time]
    while (nxt := job.trigger.get_next_fire_time(times[-1], times[-1])) and nxt <= until:
        times.append(nxt)
    return [in_utc(when) for when in times]


def published(daemon: Daemon, times: list[datetime]) -> dict[date, datetime]:
    """The editions publish runs at `times` publish, each at the first run that claims its key
    (the runs table holds a key once: a later run with the same key publishes nothing)."""
    editions: dict[str, tuple[date, datetime]] = {}
    for when in times:
        day = daemon.due_edition(when)
        assert day is not None
        editions.setdefault(publish_key(day), (day, when))
    return dict(editions.values())


def utc(month: int, day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2025, month, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("window", "publish_at", "expected"),
    [
        (SPRING, "07:00", [utc(3, 29, 6), utc(3, 30, 5), utc(3, 31, 5), utc(4, 1, 5)]),
        # 02:30 does not exist on the 30th: the edition comes at 03:30 summer time, 01:30 UTC.
        (
            SPRING,
            "02:30",
            [utc(3, 29, 1, 30), utc(3, 30, 1, 30), utc(3, 31, 0, 30), utc(4, 1, 0, 30)],
        ),
        (FALL, "07:00", [utc(10, 25, 5), utc(10, 26, 6), utc(10, 27, 6), utc(10, 28, 6)]),
        # 02:30 happens twice on the 26th: the edition comes at the first (summer time).
        (
            FALL,
            "02:30",
            [utc(10, 25, 0, 30), utc(10, 26, 0, 30), utc(10, 27, 1, 30), utc(10, 28, 1, 30)],
        ),
    ],
)
def test_the_running_daemon_publishes_each_edition_once_across_dst(window, publish_at, expected):
    start, end = window
    daemon = berlin_daemon(publish_at)
    times = run_times(daemon.build_scheduler(start).get_job("publish"), end)
    editions = published(daemon, times)
    # At start the daemon catches up the edition due then; after that, one edition a day at its
    # local publish time: no day skipped, none published twice.
    first = start.date()
    assert editions == {
        first: start + timedelta(seconds=1),
        **{first + timedelta(days=n): when for n, when in enumerate(expected, start=1)},
    }
    for day, when in editions.items():
        assert when.astimezone(ZoneInfo(BERLIN)).date() == day
    # One run a day: a publish run that finds its edition published does nothing, but none is
    # even started twice (the 02:30 of a fall-back night happens twice).
    days = [daemon.due_edition(when) for when in times]
    assert len(days) == len(set(days))


def test_both_0230s_of_a_fall_back_night_are_the_same_publish_period():
    """Should a run start at each of them (a restart in between), the second finds the first's
    key in the runs table: the repeated hour cannot publish a second time."""
    daemon = berlin_daemon("02:30")
    first, second = utc(10, 26, 0, 30), utc(10, 26, 1, 30)
    zone = ZoneInfo(BERLIN)
    assert first.astimezone(zone).strftime("%H:%M %Z") == "02:30 CEST"
    assert second.astimezone(zone).strftime("%H:%M %Z") == "02:30 CET"
    keys = {publish_key(daemon.due_edition(when)) for when in (first, second)}
    assert keys == {"publish:2025-10-26"}
    # And on the way back in spring, the missing 02:30 is not a day without an edition.
    assert daemon.due_edition(utc(3, 30, 1, 29)) == date(2025, 3, 29)
    assert daemon.due_edition(utc(3, 30, 1, 30)) == date(2025, 3, 30)


@pytest.mark.parametrize("day", [date(2025, 3, 30), date(2025, 10, 26)])
def test_a_daemon_started_in_a_dst_night_collects_then_publishes_each_edition_once(day):
    """Started at any quarter hour of the night of a change, the repeated hour too: the catch-up
    collect runs at once, the catch-up publish one real second later, and from then on each
    edition is published once, at its time (a second 02:30 publishes nothing new)."""
    daemon = berlin_daemon("02:30")
    until = datetime.combine(day + timedelta(days=2), time(12), tzinfo=UTC)
    for quarter in range(4 * 5):
        start = datetime.combine(day, time(0), tzinfo=UTC) + timedelta(minutes=15 * quarter)
        scheduler = daemon.build_scheduler(start)
        collect, publish = scheduler.get_job("collect"), scheduler.get_job("publish")
        assert in_utc(collect.next_run_time) == start
        assert in_utc(publish.next_run_time) - start == timedelta(seconds=1), start
        caught_up = daemon.due_edition(start)
        assert caught_up is not None
        editions = published(daemon, run_times(publish, until))
        days = [caught_up + timedelta(days=n) for n in range((until.date() - caught_up).days + 1)]
        assert sorted(editions) == days, start
        assert editions[caught_up] == start + timedelta(seconds=1)
        for later in days[1:]:
            assert editions[later] == publish_due_at(later, time(2, 30), BERLIN), start


def test_collection_periods_stay_an_hour_long_across_dst():
    """The collect job runs every 60 real minutes through both changes, each run in a period
    of its own: the repeated wall-clock hour is two periods (two real hours of news)."""
    for start in (utc(3, 29, 22), utc(10, 25, 22)):
        daemon = berlin_daemon(collect_every="60m")
        job = daemon.build_scheduler(start).get_job("collect")
        times = run_times(job, start + timedelta(hours=6))
        assert [b - a for a, b in pairwise(times)] == [timedelta(hours=1)] * 6
        keys = [collect_key(collect_period(when, timedelta(hours=1))) for when in times]
        assert len(set(keys)) == len(keys) == 7

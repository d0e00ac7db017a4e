"""Pure scheduling decisions: intervals, period keys, publish times across DST changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.config import parse_config
from digest.errors import ConfigError
from digest.schedule import (
    collect_key,
    collect_period,
    delivery_due,
    latest_due_edition,
    parse_clock,
    parse_interval,
    publish_due_at,
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

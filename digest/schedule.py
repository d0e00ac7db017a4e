"""When jobs are due: pure decisions, no I/O, so they can be tested without a scheduler or clock.

Every scheduled run has a key naming its job and period ("collect:2026-11-29T14:00Z",
"publish:2026-11-29"). The runs table holds each key once, so a restart catches up a period it
missed and never runs one twice, also when a CLI command did the same work by hand meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_INTERVAL = re.compile(r"^\s*([0-9]{1,9})\s*(s|m|h|d)\s*$")  # ASCII digits: "٣m" is not 3m
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_LONGEST = timedelta(days=366)  # beyond, the scheduler's next run overflows a datetime
_CLOCK = re.compile(r"\s*([0-9]{1,2})\s*:\s*([0-9]{1,2})\s*")


def known_zone(name: str) -> ZoneInfo | None:
    """The time zone of an IANA name, None when the name is none: unknown, a path, or a folder
    of the database ("America") or too long for a file name, for which ZoneInfo raises an
    OSError (checks that caught only its other errors answered a form with a server error)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        return None


def parse_interval(text: str) -> timedelta:
    """ "90s", "30m", "2h", "1d" → timedelta (at least 10 seconds)."""
    match = _INTERVAL.match(text)
    if not match:
        raise ValueError(f"not an interval: {text!r} (use e.g. '90s', '30m', '2h')")
    delta = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    if delta < timedelta(seconds=10):
        raise ValueError(f"interval {text!r} is shorter than 10 seconds")
    if delta > _LONGEST:
        raise ValueError(f"interval {text!r} is longer than a year")
    return delta


def parse_clock(text: str) -> time:
    """ "07:00" → time(7, 0); ASCII digits only ("٠٧:٠٠" is refused, not read as 07:00)."""
    match = _CLOCK.fullmatch(text)
    hour, minute = (int(part) for part in match.groups()) if match else (-1, -1)
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise ValueError(f"not a time of day: {text!r} (use HH:MM)")
    return time(hour, minute)


def collect_period(now: datetime, every: timedelta) -> datetime:
    """Start of the collection period holding `now` (periods are aligned to the Unix epoch)."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    n = (now.astimezone(UTC) - epoch) // every
    return epoch + n * every


def next_collect(now: datetime, every: timedelta) -> datetime:
    """When the next collection period begins: the daemon's first run in it collects."""
    return collect_period(now, every) + every


def collect_key(period_start: datetime) -> str:
    return "collect:" + period_start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def edition_day(now: datetime, tz: str) -> date:
    """The day an edition published at `now` belongs to, in the schedule's time zone."""
    return now.astimezone(ZoneInfo(tz)).date()


def publish_key(day: date) -> str:
    return f"publish:{day.isoformat()}"


def publish_due_at(day: date, publish_at: time, tz: str) -> datetime:
    """The aware instant at which `day`'s edition is due in time zone `tz` (DST-safe: a clock
    time that does not exist that day moves forward with the shift)."""
    local = datetime.combine(day, publish_at, tzinfo=ZoneInfo(tz))
    # Round-trip through UTC normalises non-existent local times (spring forward).
    return local.astimezone(UTC)


def latest_due_edition(now: datetime, publish_at: time, tz: str) -> date:
    """The newest edition day whose publish time has passed at `now` (today or yesterday)."""
    today = edition_day(now, tz)
    if publish_due_at(today, publish_at, tz) <= now:
        return today
    return today - timedelta(days=1)


def next_publish_due(after: datetime, publish_at: time, tz: str) -> datetime:
    """The first instant after `after` at which an edition is due: one a local day, whatever
    the day's length (what the daemon's publish trigger fires on)."""
    after = after.astimezone(UTC)
    day = edition_day(after, tz) - timedelta(days=1)
    while (due := publish_due_at(day, publish_at, tz)) <= after:
        day += timedelta(days=1)
    return due


def delivery_due(day: date, publish_at: time, subscriber_tz: str, now: datetime) -> bool:
    """Is `day`'s edition due for a subscriber living in `subscriber_tz`?"""
    return publish_due_at(day, publish_at, subscriber_tz) <= now


def subscriber_edition(days: Iterable[date], send_at: time, tz: str, now: datetime) -> date | None:
    """Of the editions of `days`, the one a subscriber who wants theirs at `send_at` in zone
    `tz` is to get at `now`: the newest whose time has come for them (None: none yet). An
    older one they did not get is not sent once a newer one is due: a digest a day, the
    latest."""
    return max((d for d in days if delivery_due(d, send_at, tz, now)), default=None)

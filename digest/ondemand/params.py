"""What a reader types for "since" (`digest search --since`, the API's and the MCP tools'
`since`): one reading of it everywhere."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from digest.errors import InvalidQueryError

MAX_QUERY = 500  # characters of a search, from the API, /mcp or the MCP tools


def parse_since(text: str, timezone: str, *, now: datetime | None = None) -> datetime:
    """A date (YYYY-MM-DD: its midnight in `timezone`) or a number of days back ("30d");
    InvalidQueryError says what was expected."""
    value = text.strip()
    if m := re.fullmatch(r"([0-9]{1,5})d", value, re.ASCII):
        return (now or datetime.now(UTC)) - timedelta(days=int(m.group(1)))
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value, re.ASCII):
        try:
            return datetime.combine(date.fromisoformat(value), time(), ZoneInfo(timezone))
        except ValueError:
            pass
    raise InvalidQueryError(
        f"{text!r}: expected a date (YYYY-MM-DD) or a number of days (e.g. 30d)"
    )

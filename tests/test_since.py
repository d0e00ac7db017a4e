"""`since` as the CLI, the API and the MCP tools read it (digest/ondemand/params.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.errors import InvalidQueryError
from digest.ondemand.params import parse_since

NOW = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)


def test_a_date_is_its_midnight_in_the_configured_zone_and_days_count_back():
    assert parse_since("2026-12-01", "Europe/Berlin") == datetime(2026, 11, 30, 23, 0, tzinfo=UTC)
    assert parse_since(" 30d ", "UTC", now=NOW) == NOW - timedelta(days=30)
    for wrong in ("last week", "2026-13-01", "٣d", "2026-1-1", "", "-3d"):
        with pytest.raises(InvalidQueryError, match="YYYY-MM-DD"):
            parse_since(wrong, "UTC")


@given(st.text(max_size=30))
def test_any_text_is_a_moment_or_a_plain_error(text):
    try:
        when = parse_since(text, "America/New_York", now=NOW)
    except InvalidQueryError as err:
        assert "expected a date" in str(err)
    else:
        assert when.tzinfo is not None and when.utcoffset() is not None

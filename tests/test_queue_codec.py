"""What tasks carry as JSON comes back as it went: headlines and ledger rows."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

from hypothesis import given
from hypothesis import strategies as st

from digest.deliver.ledger import STATES, Delivery
from digest.deliver.sender import DeliveryReport
from digest.jobs.sending import DeliveryOutcome
from digest.models import Headline

times = st.none() | st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
text = st.text(max_size=40)


@given(
    st.builds(
        Headline,
        title=text,
        url=text,
        source=text,
        published=times,
        snippet=text,
        image=st.none() | text,
        category=st.none() | text,
        origin=text,
    )
)
def test_a_headline_survives_the_queue(headline: Headline) -> None:
    assert Headline.from_json(json.loads(json.dumps(headline.to_json()))) == headline


@given(
    st.builds(
        Delivery,
        edition_day=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1)),
        recipient=text,
        state=st.sampled_from(STATES),
        attempts=st.integers(0, 100),
        next_attempt_at=times,
        last_reply=st.none() | text,
        message_id=st.none() | text,
        updated_at=times,
        channel=text,
    )
)
def test_a_ledger_row_survives_the_queue(row: Delivery) -> None:
    sent = DeliveryOutcome(DeliveryReport(row.edition_day, sent=(row,)))
    assert DeliveryOutcome.from_json(json.loads(json.dumps(sent.to_json()))) == sent

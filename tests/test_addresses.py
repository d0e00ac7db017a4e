"""Subscriber addresses: one rule when a subscriber is added and when their email is built, so
that no address `digest subscribers add` takes can stop a publication later."""

from __future__ import annotations

from collections.abc import Iterator
from email import message_from_bytes
from email.policy import default as default_policy
from email.utils import getaddresses
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from digest.deliver import Recipient, build_message
from digest.deliver.address import check_address
from digest.errors import InvalidSubscriberError, SubscriberExistsError
from digest.store import Store, open_store
from tests.mailfixtures import CONFIG, UNSUBSCRIBE_URL, edition

# Characters that trip address parsers: specials, quotes, dots, spaces and line breaks,
# non-ASCII letters (one that lower-cases to two characters), invisible and control ones.
TRICKY = "aZ09.-_+'!#$%&*/=?^`{|}~\"()<>[]:;@\\, \t\r\nüßİ日\u200b\u2028\x00"
LOCAL = st.text(TRICKY, max_size=10)
LABEL = st.lists(st.sampled_from([*"abcXYZ09-_üß", "xn--"]), max_size=6).map("".join)
DOMAIN = st.one_of(
    st.sampled_from(["example.org", "EXAMPLE.ORG", "bücher.example", "xn--bcher-kva.de"]),
    st.sampled_from(["localhost", "a.local", "[127.0.0.1]", "x..org", "x.org.", "-x.org"]),
    st.lists(LABEL, min_size=1, max_size=4).map(".".join),
)
ADDRESSES = st.one_of(
    st.emails(),
    st.builds(lambda local, domain: f"{local}@{domain}", LOCAL, DOMAIN),
    st.text(max_size=30),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("addresses") / "digest.db"
    with open_store(f"sqlite:///{path}") as opened:
        yield opened


@given(ADDRESSES)
@example("a..b@example.org")
@example(".a@example.org")
@example("ü@example.org")
@example("Jo@BÜCHER.example")
@example("o'brien+news@example.co.uk")
def test_every_address_add_accepts_is_one_the_message_builder_sends_to(
    store: Store, text: str
) -> None:
    try:
        sub = store.add_subscriber(text, categories=None, timezone="UTC")
    except InvalidSubscriberError as err:
        reason = str(err)
        assert reason.startswith("not an email address: ") and reason.endswith(")")
        assert "\n" not in reason and "\r" not in reason  # one line for the terminal
        return

    # Stored normalized: adding it again, as stored, is the same subscriber (refused).
    with pytest.raises(SubscriberExistsError):
        store.add_subscriber(sub.email, categories=None, timezone="UTC")
    assert store.remove_subscriber(sub.email)  # the next example may draw it again
    msg = build_message(
        edition(headlines=1), Recipient(sub.email), CONFIG, archive_url=None,
        unsubscribe_url=UNSUBSCRIBE_URL,
    )  # fmt: skip
    # The recipient as a mail server and a client see it: the envelope address the SMTP
    # transport takes from To (getaddresses), and the header parsed back from the bytes.
    wire = check_address(sub.email).ascii
    assert wire.isascii()
    assert getaddresses([str(msg["To"])]) == [("", wire)]
    back = message_from_bytes(msg.as_bytes(), policy=default_policy)
    assert [a.addr_spec for a in back["To"].addresses] == [wire]
    assert back["Bcc"] is None and back["Cc"] is None

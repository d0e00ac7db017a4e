"""What a subscriber may choose (`digest.subscribers.preferences`) and the preferences form's
CSRF tokens, without a server or a browser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.config import Config, parse_config
from digest.errors import InvalidChannelError, InvalidPreferenceError, UnknownCategoryError
from digest.subscribers.preferences import (
    MAX_CHANNELS,
    PreferenceChanges,
    Preferences,
    apply_changes,
    defaults,
)
from digest.web.forms import csrf_token, csrf_valid

CONFIG = parse_config({"schedule": {"timezone": "Europe/Berlin"}})
HOOK = "json://hooks.example.org/x"
PUBLIC = "json://93.184.215.14/hook"  # a public address by number: no name resolves here
OPERATORS = "gotify://10.0.0.5/{env:GOTIFY_TOKEN}"


def test_nothing_given_changes_nothing() -> None:
    current = Preferences(timezone="UTC", include=("fed",), channels=(HOOK,))
    assert not PreferenceChanges()
    assert apply_changes(current, PreferenceChanges(), CONFIG) == current
    assert defaults(CONFIG) == Preferences(timezone="Europe/Berlin")


def test_values_are_normalized_and_empty_ones_reset() -> None:
    changed = apply_changes(
        Preferences(send_at="06:00", max_stories=3, language="de", include=("x",)),
        PreferenceChanges(
            categories=(" World ", "world", "finance"),
            send_at="7:5",
            include='  "Bank of England" , fed ',
            language=" FR ",
            max_stories=0,
        ),
        CONFIG,
    )
    assert changed.categories == ("world", "finance")
    assert (changed.send_at, changed.language, changed.max_stories) == ("07:05", "fr", None)
    assert changed.include == ("Bank of England", "fed")
    reset = apply_changes(
        changed, PreferenceChanges(categories=(), send_at="", language=""), CONFIG
    )
    assert (reset.categories, reset.send_at, reset.language) == (None, None, None)


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (PreferenceChanges(send_at="7 am"), InvalidPreferenceError, "not a time of day"),
        (
            PreferenceChanges(timezone="Europe/Atlantis"),
            InvalidPreferenceError,
            "unknown time zone",
        ),
        (PreferenceChanges(language="klingon"), InvalidPreferenceError, "unknown language"),
        (PreferenceChanges(max_stories=101), InvalidPreferenceError, "between 1 and 100"),
        (PreferenceChanges(categories=("gardening",)), UnknownCategoryError, "gardening"),
        (PreferenceChanges(add_channels=("nope",)), InvalidChannelError, "not an Apprise URL"),
    ],
)
def test_a_bad_value_says_what_is_wrong(
    changes: PreferenceChanges, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        apply_changes(Preferences(), changes, CONFIG)


def test_channels_from_the_page_are_checked_and_the_operators_are_kept() -> None:
    current = Preferences(channels=(OPERATORS,))
    # The operator's private, placeholder-holding channel stays when the page keeps it ...
    kept = apply_changes(
        current, PreferenceChanges(channels=(OPERATORS, PUBLIC)), CONFIG, from_page=True
    )
    assert kept.channels == (OPERATORS, PUBLIC)
    # ... but the page cannot add one like it.
    with pytest.raises(InvalidChannelError, match="operator"):
        apply_changes(
            Preferences(), PreferenceChanges(channels=(OPERATORS,)), CONFIG, from_page=True
        )
    private = "json://192.168.1.20/hook"
    with pytest.raises(InvalidChannelError, match="not a public address"):
        apply_changes(Preferences(), PreferenceChanges(channels=(private,)), CONFIG, from_page=True)
    allowing = Config.model_validate({"channels": {"allow_private_networks": True}})
    assert apply_changes(
        Preferences(), PreferenceChanges(channels=(private,)), allowing, from_page=True
    ).channels == (private,)


def test_a_subscriber_has_at_most_a_few_channels() -> None:
    many = tuple(f"json://hooks.example.org/{i}" for i in range(MAX_CHANNELS + 1))
    with pytest.raises(InvalidPreferenceError, match=f"at most {MAX_CHANNELS}"):
        apply_changes(Preferences(), PreferenceChanges(add_channels=many), CONFIG)
    twice = apply_changes(Preferences(), PreferenceChanges(add_channels=(HOOK, f" {HOOK}")), CONFIG)
    assert twice.channels == (HOOK,)


def test_a_csrf_token_is_for_one_subscriber_and_one_day() -> None:
    now = 1_800_000_000.0
    csrf = csrf_token("key", "alice", now)
    assert csrf_valid("key", "alice", csrf, now + 3600)
    assert not csrf_valid("key", "bob", csrf, now)
    assert not csrf_valid("other key", "alice", csrf, now)
    assert not csrf_valid("key", "alice", csrf, now + 2 * 86400)
    assert not csrf_valid("key", "alice", csrf, now - 3600)  # issued in the future
    for forged in (
        "",
        "x",
        "1800000000.",
        ".abc",
        csrf.replace(".", ".0"),
        f"{int(now) + 1}.{csrf.split('.')[1]}",
    ):
        assert not csrf_valid("key", "alice", forged, now)


def test_the_page_takes_a_service_only_when_the_list_or_the_operator_allows_it() -> None:
    zulip = f"zulip://bot@zulip.example.org/{'a' * 32}"
    syslog = "syslog://"
    for url in (zulip, syslog):
        with pytest.raises(InvalidChannelError, match="cannot be added on this page"):
            apply_changes(Preferences(), PreferenceChanges(channels=(url,)), CONFIG, from_page=True)
    allowing = parse_config({"channels": {"page_schemes": ["zulip"]}})
    changed = apply_changes(
        Preferences(), PreferenceChanges(channels=(zulip,)), allowing, from_page=True
    )
    assert changed.channels == (zulip,)
    with pytest.raises(InvalidChannelError, match="cannot set verify="):
        apply_changes(
            Preferences(), PreferenceChanges(channels=(zulip + "?verify=no",)), allowing,
            from_page=True,
        )  # fmt: skip


tokens = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda issued, mac: f"{issued}.{mac}",
        st.one_of(
            st.text(st.characters(categories=["Nd", "No"]), max_size=12), st.just("1" * 4300)
        ),
        st.one_of(st.text(max_size=70), st.text("0123456789abcdef", min_size=64, max_size=64)),
    ),
)


@given(csrf=tokens)
def test_reading_a_csrf_token_of_any_shape_never_raises(csrf: str) -> None:
    now = 1_800_000_000.0
    assert csrf_valid("key", "alice", csrf, now) is (csrf == csrf_token("key", "alice", now))

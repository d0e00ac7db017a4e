"""The table of preferences (`digest.subscribers.preferences.FIELDS`) drives every form a
preference takes: the options of `digest subscribers add/set`, the preferences page's fields,
the JSON, and one check whichever way a value came in. Without a server or a subprocess: the
real click commands parse the arguments, the real page is rendered, the form is read as aiohttp
gives it.
"""

from __future__ import annotations

import html
import re
from dataclasses import fields
from datetime import UTC, datetime

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st
from multidict import MultiDict

from digest.cli import cli
from digest.config import parse_config
from digest.errors import DigestError, InvalidPreferenceError
from digest.models import Subscriber
from digest.render.preferences_page import render_preferences
from digest.stories.language import LANGUAGES
from digest.stories.terms import parse_terms
from digest.subscribers.preferences import (
    FIELDS,
    MAX_STORIES,
    REMOVE_CHANNEL,
    PreferenceChanges,
    Preferences,
    apply_changes,
    channel_key,
    cli_changes,
    defaults,
    form_pairs,
    read_form,
)

CONFIG = parse_config({"schedule": {"timezone": "Europe/Berlin"}})
CATEGORIES = CONFIG.sources.categories
HOOK = "json://hooks.example.org/x"


def command(name: str) -> click.Command:
    group = cli.commands["subscribers"]
    assert isinstance(group, click.Group)
    found = group.commands[name]
    return found


def cli_given(name: str, *args: str) -> PreferenceChanges:
    """What `digest subscribers NAME EMAIL ARGS` asks to change, parsed by the real command."""
    ctx = command(name).make_context(name, ["r@example.org", *args])
    params = {k: v for k, v in ctx.params.items() if k != "email"}
    return cli_changes(params)


def page(prefs: Preferences) -> str:
    sub = Subscriber("r@example.org", "token", datetime.now(UTC), prefs)
    return render_preferences(
        sub,
        title="digest",
        categories=CATEGORIES,
        default_time="07:00",
        action="preferences?token=token",
        unsubscribe_action="unsubscribe?token=token",
        csrf="csrf",
        channels_shown={},
    )


def test_the_table_covers_every_preference_and_every_change() -> None:
    assert sorted(f.name for f in FIELDS) == sorted(f.name for f in fields(Preferences))
    assert {o.sets for f in FIELDS for o in f.options} == {
        f.name for f in fields(PreferenceChanges)
    }


@pytest.mark.parametrize("name", ["add", "set"])
def test_each_preference_has_its_options_on_the_command_line(name: str) -> None:
    params = {p.name: p for p in command(name).params}
    for field in FIELDS:
        assert field.options, field.name
        for option in field.options:
            assert option.dest in params, option.flags
            assert params[option.dest].help == option.help  # type: ignore[attr-defined]
            assert option.flags.split("/")[0] in params[option.dest].opts


def test_each_preference_has_its_field_on_the_page_and_its_key_in_the_json() -> None:
    shown = page(Preferences(channels=(HOOK,)))
    for field in FIELDS:
        control = field.control
        element = {
            "checkboxes": f'<input type="checkbox" name="{control.name}"',
            "checkbox": f'<input type="checkbox" name="{control.name}"',
            "select": f'<select id="{control.name}" name="{control.name}">',
            "channels": f'<input type="text" id="{control.name}" name="{control.name}"',
        }.get(
            control.kind, f'<input type="{control.kind}" id="{control.name}" name="{control.name}"'
        )
        assert element in shown, field.name
        assert control.label in shown, field.name
    assert f'<input type="checkbox" name="{REMOVE_CHANNEL}" value="{channel_key(HOOK)}">' in shown
    keys = {f.json for f in FIELDS}
    assert set(Preferences().to_json()) == keys
    sub = Subscriber("r@example.org", "token", datetime.now(UTC), Preferences())
    assert set(sub.to_json()) == {"email", *keys}


def test_the_form_as_shown_is_read_back_as_the_same_preferences() -> None:
    prefs = Preferences(
        categories=("world",),
        timezone="Asia/Tokyo",
        send_at="06:15",
        include=("flood", "central bank"),
        max_stories=2,
        language="fr",
        send_email=False,
        channels=(HOOK,),
    )
    shown = page(prefs)
    for name, value in form_pairs(prefs):
        assert f'name="{name}"' in shown
        if name in ("include", "send_at", "max_stories"):
            assert f'value="{html.escape(value)}"' in shown, name
    form = MultiDict(form_pairs(prefs))
    assert apply_changes(prefs, read_form(form, prefs), CONFIG, from_page=True) == prefs


def test_one_command_line_sets_every_preference() -> None:
    changes = cli_given(
        "add",
        "--categories", "world,technology",
        "--timezone", "America/New_York",
        "--send-at", "6:30",
        "--include", 'rates, "Bank of England"',
        "--exclude", "crypto",
        "--max-stories", "3",
        "--language", "DE",
        "--no-email",
        "--channel", HOOK,
    )  # fmt: skip
    assert apply_changes(defaults(CONFIG), changes, CONFIG) == Preferences(
        categories=("world", "technology"),
        timezone="America/New_York",
        send_at="06:30",
        include=("rates", "Bank of England"),
        exclude=("crypto",),
        max_stories=3,
        language="de",
        send_email=False,
        channels=(HOOK,),
    )
    assert cli_given("set") == PreferenceChanges()  # nothing given: nothing changes
    assert cli_given("set", "--no-channels") == PreferenceChanges(channels=())


@pytest.mark.parametrize(
    ("option", "control", "value", "message"),
    [
        ("--send-at", "send_at", "25:00", "not a time of day: '25:00'"),
        ("--timezone", "timezone", "Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
        ("--language", "language", "xx", "unknown language 'xx'"),
        ("--categories", "category", "gardening", "unknown category 'gardening'"),
        ("--channel", "new_channel", "nosuch://x", "Apprise knows no service nosuch://"),
    ],
)
def test_a_bad_value_is_refused_with_the_same_message_from_the_command_line_and_the_page(
    option: str, control: str, value: str, message: str
) -> None:
    current = defaults(CONFIG)
    with pytest.raises(DigestError) as from_cli:
        apply_changes(current, cli_given("set", option, value), CONFIG)
    form = MultiDict([*form_pairs(current), (control, value)])
    if control in ("send_at", "timezone", "language"):  # one value each: the new one
        form = MultiDict([(k, v) for k, v in form.items() if k != control] + [(control, value)])
    with pytest.raises(DigestError) as from_page:
        apply_changes(current, read_form(form, current), CONFIG, from_page=True)
    assert message in str(from_cli.value)
    assert str(from_page.value) == str(from_cli.value)


def test_letters_for_the_number_of_stories_are_refused_on_the_page() -> None:
    form = MultiDict([*form_pairs(Preferences()), ("max_stories", "٣")])
    form.popone("max_stories")  # the page's own "0"
    with pytest.raises(InvalidPreferenceError, match=re.escape("whole number (digits 0 to 9)")):
        read_form(form, Preferences())


# Round trips over any preferences digest could hold.

urls = st.builds(lambda path: f"json://hooks.example.org/{path}", st.text("abcxyz019", max_size=8))
stored = st.builds(
    Preferences,
    categories=st.none() | st.lists(st.text(max_size=12), min_size=1, max_size=3).map(tuple),
    timezone=st.text(max_size=30),
    send_at=st.none() | st.text(max_size=5),
    include=st.lists(st.text(max_size=20), max_size=3).map(tuple),
    exclude=st.lists(st.text(max_size=20), max_size=3).map(tuple),
    max_stories=st.none() | st.integers(1, MAX_STORIES),
    language=st.none() | st.text(max_size=3),
    send_email=st.booleans(),
    channels=st.lists(urls, max_size=3, unique=True).map(tuple),
)


@given(prefs=stored)
def test_the_json_gives_back_the_preferences(prefs: Preferences) -> None:
    data = prefs.to_json()
    assert Preferences.from_json(data) == prefs
    assert [c["key"] for c in data["channels"]] == [channel_key(u) for u in prefs.channels]


checked = st.builds(
    Preferences,
    categories=st.none()
    | st.lists(st.sampled_from(CATEGORIES), min_size=1, unique=True).map(tuple),
    timezone=st.sampled_from(["UTC", "Europe/Berlin", "Asia/Tokyo", "America/New_York"]),
    send_at=st.none() | st.builds("{:02d}:{:02d}".format, st.integers(0, 23), st.integers(0, 59)),
    include=st.text(max_size=40).map(parse_terms),
    exclude=st.text(max_size=40).map(parse_terms),
    max_stories=st.none() | st.integers(1, MAX_STORIES),
    language=st.none() | st.sampled_from(sorted(LANGUAGES)),
    send_email=st.booleans(),
    channels=st.lists(urls, max_size=3, unique=True).map(tuple),
)


@given(prefs=checked)
def test_the_form_posted_unchanged_keeps_the_preferences(prefs: Preferences) -> None:
    form = MultiDict(form_pairs(prefs))
    assert apply_changes(prefs, read_form(form, prefs), CONFIG, from_page=True) == prefs


@given(prefs=checked, gone=st.data())
def test_a_channel_ticked_on_the_page_goes_and_the_others_stay(
    prefs: Preferences, gone: st.DataObject
) -> None:
    if not prefs.channels:
        return
    url = gone.draw(st.sampled_from(prefs.channels))
    form = MultiDict([*form_pairs(prefs), ("remove", channel_key(url))])
    changed = apply_changes(prefs, read_form(form, prefs), CONFIG, from_page=True)
    assert changed.channels == tuple(u for u in prefs.channels if u != url)


def test_each_field_gives_what_the_generic_paths_need() -> None:
    """A preference is its attribute, its Field and its column: the schema's column, the
    store's row mapping and the page's control all come from the Field, so a Field missing
    one of them fails here rather than on a page or in a migration."""
    from typing import get_args

    from digest.store.schema import subscribers
    from digest.subscribers.preferences import CHOOSING, ControlKind

    names = [f.control.name for f in FIELDS]
    assert len(set(names)) == len(names)
    for field in FIELDS:
        control = field.control
        assert control.kind in get_args(ControlKind), field.name
        assert control.group or control.kind == "checkboxes", field.name  # a fieldset's legend
        assert control.kind != "number" or control.most is not None, field.name
        if field.stored is not None:
            column = subscribers.c[field.stored.column]
            assert column.nullable is not field.stored.required, field.name
    # The choices of a select or checkboxes are listed by the page (it raises for one it lacks).
    assert {f.control.kind for f in FIELDS} >= CHOOSING
    page(Preferences())

"""What a subscriber may choose, as one table: `FIELDS`, a `Field` per preference.

A field names its attribute (of `digest.models.Preferences`, which declares its type, default
and JSON, and of `PreferenceChanges`), its options of `digest subscribers add/set` (`digest.cli`
builds them from here), its control on the preferences page (`digest.render.preferences_page`
shows it, `read_form` reads it back) and the one check a new value passes, whichever of them it
came from: the CLI and the page refuse a bad value with the same message
(InvalidPreferenceError, UnknownCategoryError).

A change names only what it changes (`PreferenceChanges`, None: unchanged); `apply_changes`
checks it against the configuration and gives the subscriber's new `Preferences`. Channels
typed on the preferences page are checked more strictly than the operator's, by their push
type (the caller hands `apply_changes` `digest.deliver.push_types.check_url`; without it, as an
Apprise URL: `digest.subscribers.channel_urls.check_channel`); a channel kept from before is
not checked again.
Changes take effect from the next edition: one already sent or skipped stays as it was.

This module sits above the models (a `Subscriber` holds one `Preferences`, a domain type like
the others) and imports little when loaded: the CLI builds its options from the table before any
command runs. What a check needs (the language list, the rules' terms, Apprise) is imported
when it runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from digest.errors import InvalidPreferenceError
from digest.models import Preferences, channel_key, json_key
from digest.schedule import known_zone, parse_clock

if TYPE_CHECKING:
    from digest.config import ChannelsConfig, Config

__all__ = [
    "BY_NAME",
    "FIELDS",
    "MAX_CHANNELS",
    "MAX_STORIES",
    "REMOVE_CHANNEL",
    "ChannelCheck",
    "Checking",
    "Control",
    "Field",
    "Form",
    "Option",
    "PreferenceChanges",
    "Preferences",
    "Stored",
    "apply_changes",
    "channel_key",
    "cli_changes",
    "defaults",
    "form_pairs",
    "read_form",
]

MAX_CHANNELS = 10
MAX_STORIES = 100
# A form value longer than this is cut before it is checked (the page's inputs say 2000).
MAX_FORM_TEXT = 2000


@dataclass(frozen=True, slots=True)
class PreferenceChanges:
    """What to change; None leaves a preference as it is. An empty value resets one: `()`
    categories (all of them), "" send time (the schedule's), "" rules (none), 0 stories (all),
    "" language (as written). `channels` replaces the list, then `add_channels` appends."""

    categories: tuple[str, ...] | None = None
    timezone: str | None = None
    send_at: str | None = None
    include: str | None = None  # as typed: "word, a phrase"
    exclude: str | None = None
    max_stories: int | None = None
    language: str | None = None
    send_email: bool | None = None
    channels: tuple[str, ...] | None = None
    add_channels: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self != PreferenceChanges()


class ChannelCheck(Protocol):
    """How a new channel's URL is checked: by its push type
    (`digest.deliver.push_types.check_url`, which the subscribers package cannot import)."""

    def __call__(self, url: str, *, from_page: bool, config: ChannelsConfig) -> str: ...


class Form(Protocol):
    """A posted form as aiohttp (or multidict) gives it: a name may come more than once."""

    def get(self, key: str, default: object, /) -> object: ...

    def getall(self, key: str, default: list[object], /) -> Iterable[object]: ...


@dataclass(frozen=True, slots=True)
class Checking:
    """What a check may need besides the value: the configuration, the preferences before the
    change, whether the subscriber typed it on the page (stricter for channels) and how a new
    channel's URL is checked (`ChannelCheck`; None: as an Apprise URL)."""

    config: Config
    current: Preferences
    from_page: bool = False
    check_channel: ChannelCheck | None = None


@dataclass(frozen=True, slots=True)
class Option:
    """An option of `digest subscribers add/set`. `kind`: text (a string), count (a whole
    number from 0 to MAX_STORIES), repeat (may be given more than once), flag (on when given),
    switch (`--x/--no-x`, unchanged when neither). `read` turns what was given into the value
    of `PreferenceChanges.<sets>` (None: not given)."""

    flags: str
    dest: str
    help: str
    sets: str
    kind: Literal["text", "count", "repeat", "flag", "switch"] = "text"
    read: Callable[[Any], Any] = lambda given: given


ControlKind = Literal["checkboxes", "text", "number", "select", "time", "checkbox", "channels"]
# The kinds whose choices the page lists (`digest.render.preferences_page`, by preference).
CHOOSING: frozenset[str] = frozenset({"checkboxes", "select"})


@dataclass(frozen=True, slots=True)
class Control:
    """A preference's control on the preferences page, which shows every one the same way for
    its kind (templates/serve/preferences.html): the form field's name, its label, what kind
    of input it is (checkboxes: one per choice under one name; the choices of checkboxes and
    a select are the page's), the group it is shown in (its fieldset's legend; "": a fieldset
    of its own, its label the legend), a hint beside it ("{default_time}" and "{email}" filled
    in: the schedule's time, the subscriber's address; a checkbox's is in its label), a
    placeholder, and the highest number a number control takes. The page shows the groups in
    the order of their first control in `FIELDS`, each group's controls in that order."""

    name: str
    label: str
    kind: ControlKind
    group: str = ""
    hint: str = ""
    placeholder: str = ""
    most: int | None = None


_T = TypeVar("_T")


def _same(value: _T) -> _T:
    return value


@dataclass(frozen=True, slots=True)
class Stored:
    """Where the store keeps a preference: a column of the `subscribers` table
    (`digest.store.schema` declares it from here; a new one comes with its migration) of
    `type`, NOT NULL when `required` (`default`: what a row added without it holds; NULL
    otherwise), and the value a row holds for it (`save`) and gives back (`load`)."""

    column: str
    type: Literal["string", "integer", "boolean", "json"]
    required: bool = False
    default: Any = None
    save: Callable[[Any], Any] = _same
    load: Callable[[Any], Any] = _same


@dataclass(frozen=True, slots=True)
class Field:
    """One preference in every form it takes (its type, default and JSON are its attribute's,
    `digest.models.Preferences`). `check` turns a change into the new value or raises with a
    message a reader can act on; `post` is what the page's form sends for a value (each pair a
    field of the form), `read` what the change is that a posted form asks for (given the
    preferences before it); both by the control's name; `stored` where the store keeps it."""

    name: str
    options: tuple[Option, ...]
    control: Control
    check: Callable[[Any, Checking], Any]
    read: Callable[[Form, str, Preferences], Any]
    post: Callable[[str, Any], list[tuple[str, str]]]
    stored: Stored | None  # None: the store keeps it in a table of its own (the channels)

    @property
    def json(self) -> str:
        """Its key in the JSON (`Preferences.to_json`)."""
        return json_key(self.name)


# The checks, one per preference.


def check_categories(names: tuple[str, ...], checking: Checking) -> tuple[str, ...] | None:
    """Configured categories, each once; none: every category."""
    config = checking.config
    return tuple(dict.fromkeys(config.check_category(c) for c in names if c)) or None


def check_timezone(name: str, checking: Checking) -> str:
    name = name.strip()
    if known_zone(name) is None:
        raise InvalidPreferenceError(
            f"unknown time zone {name[:60]!r} (a name such as Europe/Berlin or America/New_York)"
        )
    return name


def check_send_at(text: str, checking: Checking) -> str | None:
    if not text.strip():
        return None
    try:
        moment = parse_clock(text)
    except ValueError:
        raise InvalidPreferenceError(
            f"not a time of day: {text!r} (use HH:MM, e.g. 07:30)"
        ) from None
    return f"{moment:%H:%M}"


def check_terms(text: str, checking: Checking) -> tuple[str, ...]:
    """A keyword rule as typed; never refused (see `digest.stories.terms.parse_terms`)."""
    from digest.stories.terms import parse_terms

    return parse_terms(text)


def check_max_stories(count: int, checking: Checking) -> int | None:
    if count < 0 or count > MAX_STORIES:
        raise InvalidPreferenceError(
            f"stories per category must be between 1 and {MAX_STORIES} (0: all of them)"
        )
    return count or None


def check_language(code: str, checking: Checking) -> str | None:
    from digest.stories.language import LANGUAGES

    code = code.strip().lower()
    if not code:
        return None
    if code not in LANGUAGES:
        known = ", ".join(sorted(LANGUAGES))
        raise InvalidPreferenceError(f"unknown language {code!r} (ISO 639-1: {known})")
    return code


def check_send_email(send: bool, checking: Checking) -> bool:
    return bool(send)


def check_channels(urls: tuple[str, ...], checking: Checking) -> tuple[str, ...]:
    """Apprise URLs, each once and at most MAX_CHANNELS; a new one checked as where it was
    typed requires (the page: only some services, public hosts, no placeholders)."""
    check = checking.check_channel or _apprise_check
    kept: list[str] = []
    for url in urls:
        url = url.strip()
        if not url or url in kept:
            continue
        if url not in checking.current.channels:
            url = check(url, from_page=checking.from_page, config=checking.config.channels)
        kept.append(url)
    if len(kept) > MAX_CHANNELS:
        raise InvalidPreferenceError(f"at most {MAX_CHANNELS} channels besides email")
    return tuple(kept)


def _apprise_check(url: str, *, from_page: bool, config: ChannelsConfig) -> str:
    from digest.subscribers.channel_urls import check_channel

    return check_channel(
        url,
        from_page=from_page,
        allow_private=config.allow_private_networks,
        page_schemes=config.page_schemes,
    )


# How the page's form is read: every preference comes with every post, as the page shows them
# all, under its control's name; a value is cut at MAX_FORM_TEXT characters before it is checked.
# A channel ticked to go comes as REMOVE_CHANNEL with the channel's ledger key.
REMOVE_CHANNEL = "remove"


def _read_text(form: Form, name: str, current: Preferences, default: str = "") -> str:
    return str(form.get(name, default))[:MAX_FORM_TEXT]


def _read_timezone(form: Form, name: str, current: Preferences) -> str:
    return _read_text(form, name, current, default=current.timezone)


def _read_categories(form: Form, name: str, current: Preferences) -> tuple[str, ...]:
    return tuple(str(c) for c in form.getall(name, []))


def _read_max_stories(form: Form, name: str, current: Preferences) -> int:
    raw = _read_text(form, name, current, default="0").strip() or "0"
    # str.isdigit() passes "²" (int() raises) and "٣" (int() reads 3), and int() raises past
    # 4,300 digits: the page's number is a few ASCII digits or nothing the reader meant.
    if not (len(raw) <= 6 and raw.isascii() and raw.isdigit()):
        shown = raw if len(raw) <= 20 else f"{raw[:20]}…"
        raise InvalidPreferenceError(
            f"stories per category must be a whole number (digits 0 to 9), not {shown!r}"
        )
    return int(raw)


def _read_checkbox(form: Form, name: str, current: Preferences) -> bool:
    return bool(form.get(name, None) == "yes")


def _read_channels(form: Form, name: str, current: Preferences) -> tuple[str, ...]:
    """The subscriber's own URLs (the page never shows them), less those ticked to go, plus a
    new one."""
    removed = {str(key) for key in form.getall(REMOVE_CHANNEL, [])}
    kept = tuple(url for url in current.channels if channel_key(url) not in removed)
    new = _read_text(form, name, current).strip()
    return (*kept, new) if new else kept


def _post_text(name: str, value: str | None) -> list[tuple[str, str]]:
    return [(name, value or "")]


def _post_terms(name: str, terms: tuple[str, ...]) -> list[tuple[str, str]]:
    from digest.stories.terms import format_terms

    return [(name, format_terms(terms))]


def _post_count(name: str, count: int | None) -> list[tuple[str, str]]:
    return [(name, str(count or 0))]


def _post_each(name: str, chosen: tuple[str, ...] | None) -> list[tuple[str, str]]:
    return [(name, c) for c in chosen or ()]


def _post_checkbox(name: str, on: bool) -> list[tuple[str, str]]:
    return [(name, "yes")] if on else []


def _post_nothing(name: str, value: Any) -> list[tuple[str, str]]:
    return []


def _terms(stored: list[str] | None) -> tuple[str, ...]:
    return tuple(stored or ())


def _split_categories(text: str | None) -> tuple[str, ...] | None:
    return tuple(c for c in text.split(",") if c.strip()) if text is not None else None


FIELDS: tuple[Field, ...] = (
    Field(
        "categories",
        options=(
            Option(
                "--categories",
                "categories",
                'Comma-separated categories (add: default all; set: "" = all).',
                sets="categories",
                read=_split_categories,
            ),
        ),
        control=Control(
            "category", "Categories", "checkboxes", hint="None ticked: every category."
        ),
        check=check_categories,
        read=_read_categories,
        post=_post_each,
        stored=Stored(
            "categories",  # NULL (not JSON null): every category
            "json",
            save=lambda chosen: list(chosen) if chosen is not None else None,
            load=lambda listed: tuple(listed) if listed is not None else None,
        ),
    ),
    Field(
        "include",
        options=(
            Option(
                "--include",
                "include",
                'Keep only stories matching one of these: "word, a phrase" ("" clears).',
                sets="include",
            ),
        ),
        control=Control(
            "include",
            "Only stories about",
            "text",
            group="Stories",
            hint="Words or phrases, separated by commas; empty: every story.",
        ),
        check=check_terms,
        read=_read_text,
        post=_post_terms,
        stored=Stored("include_terms", "json", required=True, default=list, save=list, load=_terms),
    ),
    Field(
        "exclude",
        options=(
            Option(
                "--exclude",
                "exclude",
                'Drop stories matching any of these: "word, a phrase".',
                sets="exclude",
            ),
        ),
        control=Control("exclude", "Never stories about", "text", group="Stories"),
        check=check_terms,
        read=_read_text,
        post=_post_terms,
        stored=Stored("exclude_terms", "json", required=True, default=list, save=list, load=_terms),
    ),
    Field(
        "max_stories",
        options=(
            Option(
                "--max-stories",
                "max_stories",
                "Stories per category (0: all).",
                sets="max_stories",
                kind="count",
            ),
        ),
        control=Control(
            "max_stories",
            "Stories per category",
            "number",
            group="Stories",
            hint="0: all of them.",
            most=MAX_STORIES,
        ),
        check=check_max_stories,
        read=_read_max_stories,
        post=_post_count,
        stored=Stored("max_stories", "integer"),  # NULL: every story
    ),
    Field(
        "language",
        options=(
            Option(
                "--language",
                "language",
                'ISO 639-1 code, e.g. de: stories in it ("": as written).',
                sets="language",
            ),
        ),
        control=Control("language", "Language", "select", group="Stories"),
        check=check_language,
        read=_read_text,
        post=_post_text,
        stored=Stored("language", "string"),  # NULL: each story as written
    ),
    Field(
        "send_at",
        options=(
            Option(
                "--send-at",
                "send_at",
                'HH:MM in their zone (default: schedule.publish_at; "" resets).',
                sets="send_at",
            ),
        ),
        control=Control(
            "send_at",
            "Send at",
            "time",
            group="When",
            hint="Empty: {default_time}. Never before the day's edition is out.",
        ),
        check=check_send_at,
        read=_read_text,
        post=_post_text,
        stored=Stored("send_at", "string"),  # NULL: schedule.publish_at
    ),
    Field(
        "timezone",
        options=(
            Option(
                "--timezone",
                "timezone",
                "e.g. Europe/Berlin (add: default the config's).",
                sets="timezone",
            ),
        ),
        control=Control("timezone", "Time zone", "select", group="When"),
        check=check_timezone,
        read=_read_timezone,
        post=_post_text,
        stored=Stored("timezone", "string", required=True),
    ),
    Field(
        "send_email",
        options=(
            Option(
                "--email/--no-email",
                "send_email",
                "Send the email digest too (the default), or only to the channels.",
                sets="send_email",
                kind="switch",
            ),
        ),
        control=Control("send_email", "Email to", "checkbox", group="Channels", hint="{email}"),
        check=check_send_email,
        read=_read_checkbox,
        post=_post_checkbox,
        stored=Stored("send_email", "boolean", required=True, default=True, load=bool),
    ),
    Field(
        "channels",
        options=(
            Option(
                "--channel",
                "channels",
                "An Apprise URL to send to as well (repeatable; secrets as {env:NAME}).",
                sets="add_channels",
                kind="repeat",
                read=tuple,
            ),
            Option(
                "--no-channels",
                "no_channels",
                "Remove every channel besides email.",
                sets="channels",
                kind="flag",
                read=lambda given: () if given else None,
            ),
        ),
        control=Control(
            "new_channel",
            "Add a channel",
            "channels",
            group="Channels",
            hint="An Apprise URL: Telegram, Slack, Discord, Matrix, ntfy, Gotify, a webhook…",
            placeholder="ntfy://ntfy.sh/my-topic",
        ),
        check=check_channels,
        read=_read_channels,
        post=_post_nothing,  # kept unless ticked to go; the page never shows them
        stored=None,  # one row each in the `channels` table, in the subscriber's order
    ),
)
BY_NAME = {f.name: f for f in FIELDS}


def defaults(config: Config) -> Preferences:
    """A new subscriber's preferences: every category, the schedule's zone and time, no rules,
    every story, as written, by email only."""
    return Preferences(timezone=config.schedule.timezone)


def apply_changes(
    current: Preferences,
    changes: PreferenceChanges,
    config: Config,
    *,
    from_page: bool = False,
    check_channel: ChannelCheck | None = None,
) -> Preferences:
    """`current` with `changes` made, each checked by its field's check. `from_page`: the
    subscriber made them on the preferences page (see `check_channel`); `check_channel`: how a
    new channel's URL is checked, by its push type (`digest.deliver.push_types.check_url`;
    None: as an Apprise URL). Resolves new channels' hosts from the page: run it in a thread
    there."""
    checking = Checking(config, current, from_page, check_channel)
    new: dict[str, Any] = {}
    for f in FIELDS:
        given = getattr(changes, f.name)
        if f.name == "channels" and changes.add_channels:
            given = (*(current.channels if given is None else given), *changes.add_channels)
        if given is not None:
            new[f.name] = f.check(given, checking)
    return replace(current, **new)


def cli_changes(given: Mapping[str, Any]) -> PreferenceChanges:
    """The changes the options of `digest subscribers add/set` ask for, by their `dest`."""
    changes: dict[str, Any] = {}
    for option in (o for f in FIELDS for o in f.options):
        value = option.read(given[option.dest]) if given.get(option.dest) is not None else None
        if value is not None:
            changes[option.sets] = value
    return PreferenceChanges(**changes)


def read_form(form: Form, current: Preferences) -> PreferenceChanges:
    """What the preferences form asks to change: every preference, as the page shows them
    all. InvalidPreferenceError for a value that is not even of its kind (letters for a
    number)."""
    return PreferenceChanges(**{f.name: f.read(form, f.control.name, current) for f in FIELDS})


def form_pairs(prefs: Preferences) -> list[tuple[str, str]]:
    """The fields the page's form posts for `prefs` when nothing is changed on it."""
    return [pair for f in FIELDS for pair in f.post(f.control.name, getattr(prefs, f.name))]

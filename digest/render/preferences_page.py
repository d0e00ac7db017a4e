"""The subscriber's preferences page (`digest serve`, /preferences): one form, its stylesheet,
and the page's policy. The page is rendered here from the subscriber and the configuration,
each control named, labelled, grouped and filled as its preference's `Field` says
(`digest.subscribers.preferences`, which reads the form back), the template showing every
control of a kind the same way; the choices of a select or checkboxes are listed here.
`digest.web` authenticates the request, checks the form's CSRF token and saves the changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from zoneinfo import available_timezones

from digest.models import Subscriber
from digest.render.templating import category_name, environment
from digest.stories.language import LANGUAGES
from digest.subscribers.preferences import CHOOSING, FIELDS, REMOVE_CHANNEL, Control, form_pairs

__all__ = ["PREFERENCES_CSP", "Followed", "preferences_css", "render_preferences"]

# Nothing loads but the page's own stylesheet; the form posts to this server only; no frames.
PREFERENCES_CSP = (
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


@dataclass(frozen=True, slots=True)
class _Choice:
    """One choice of a select or of checkboxes: the value posted, what is shown, its
    language (for a screen reader), whether it is chosen now."""

    value: str
    label: str
    lang: str = ""
    chosen: bool = False


@dataclass(frozen=True, slots=True)
class _Channel:
    key: str
    shown: str


@dataclass(frozen=True, slots=True)
class Followed:
    """A story the subscriber follows, and where its unfollow button posts."""

    title: str
    unfollow_action: str


@dataclass(frozen=True, slots=True)
class _Shown:
    """One preference's control as the page shows it: its `Control`, its value as its form
    field holds it ("" for none, "yes" for a ticked box), its hint filled in, its choices."""

    control: Control
    value: str
    hint: str
    choices: tuple[_Choice, ...] = ()


@dataclass(frozen=True, slots=True)
class _Group:
    legend: str  # "": a control with a fieldset of its own
    shown: tuple[_Shown, ...]


@dataclass(frozen=True, slots=True)
class _View:
    title: str
    email: str
    csp: str
    action: str
    unsubscribe_action: str
    csrf: str
    groups: tuple[_Group, ...]  # every preference's control, as FIELDS groups them
    remove: str  # the form field of the channels ticked to go
    channels: tuple[_Channel, ...]
    notice: str
    error: str
    follows: tuple[Followed, ...] = ()


def render_preferences(
    sub: Subscriber,
    *,
    title: str,
    categories: list[str],
    default_time: str,
    action: str,
    unsubscribe_action: str,
    csrf: str,
    channels_shown: dict[str, str],
    notice: str = "",
    error: str = "",
    follows: tuple[Followed, ...] = (),
) -> str:
    """The page for `sub` as stored: each preference's control as its `Field` says, in its
    group. `action` and `unsubscribe_action` are the forms' (relative) targets;
    `channels_shown` each channel's URL as the subscriber may see it, by key; `follows` the
    stories they follow, each with its unfollow form's target."""
    from digest.render.email import text_line

    prefs = sub.preferences
    # What the form sends back unchanged, as each preference's values in it
    # (`digest.subscribers.preferences`).
    posted = form_pairs(prefs)
    groups: dict[tuple[str, int], list[_Shown]] = {}
    for f in FIELDS:
        values = [v for n, v in posted if n == f.control.name]
        listed = _choices(f.name, categories, prefs.timezone) if f.control.kind in CHOOSING else ()
        shown = _Shown(
            f.control,
            values[0] if len(values) == 1 else "",
            f.control.hint.format(default_time=default_time, email=sub.email),
            tuple(replace(c, chosen=c.value in values) for c in listed),
        )
        # A named group gathers its controls where its first one is; "" is a group each.
        key = (f.control.group, 0 if f.control.group else len(groups))
        groups.setdefault(key, []).append(shown)
    view = _View(
        title=text_line(title, 80) or "digest",
        email=sub.email,
        csp=PREFERENCES_CSP,
        action=action,
        unsubscribe_action=unsubscribe_action,
        csrf=csrf,
        groups=tuple(_Group(legend, tuple(shown)) for (legend, _), shown in groups.items()),
        remove=REMOVE_CHANNEL,
        channels=tuple(_Channel(c.key, channels_shown.get(c.key, c.key)) for c in sub.channels),
        notice=notice,
        error=error,
        follows=tuple(Followed(text_line(f.title, 200), f.unfollow_action) for f in follows),
    )
    return environment().get_template("serve/preferences.html").render(v=view)


def _choices(name: str, categories: list[str], zone: str) -> tuple[_Choice, ...]:
    """The choices of the preference `name`'s select or checkboxes (a kind in `CHOOSING`):
    the configured categories, the languages, the time zones."""
    if name == "categories":
        return tuple(_Choice(c, category_name(c)) for c in categories)
    if name == "language":
        by_name = sorted(LANGUAGES.items(), key=lambda kv: kv[1].casefold())
        return (
            _Choice("", "As each story is written"),
            *(_Choice(code, label, lang=code) for code, label in by_name),
        )
    if name == "timezone":
        return tuple(_Choice(z, z) for z in _zones(zone))
    raise LookupError(f"the preferences page lists no choices of {name!r}")


def _zones(current: str) -> tuple[str, ...]:
    zones = _all_zones()
    return zones if current in zones else tuple(sorted((*zones, current)))


@cache
def _all_zones() -> tuple[str, ...]:
    # The canonical names only: the "posix/" and "right/" copies double the list for nothing.
    return tuple(sorted(z for z in available_timezones() if not z.startswith(("posix", "right"))))


@cache
def preferences_css() -> str:
    """The page's stylesheet (templates/serve/preferences.css)."""
    env = environment()
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, "serve/preferences.css")
    return source

"""The subscriber's preferences page (`digest serve`, /preferences): one form, its stylesheet,
and the page's policy. The page is rendered here from the subscriber and the configuration,
each control named, labelled and filled as its preference's `Field` says
(`digest.subscribers.preferences`, which reads the form back); `digest.web` authenticates
the request, checks the form's CSRF token and saves the changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from zoneinfo import available_timezones

from digest.models import Subscriber
from digest.render.templating import category_name, environment
from digest.stories.language import LANGUAGES
from digest.subscribers.preferences import FIELDS, REMOVE_CHANNEL, Control, form_pairs

__all__ = ["PREFERENCES_CSP", "Followed", "preferences_css", "render_preferences"]

# Nothing loads but the page's own stylesheet; the form posts to this server only; no frames.
PREFERENCES_CSP = (
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


@dataclass(frozen=True, slots=True)
class _Category:
    name: str
    label: str
    chosen: bool


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
class _View:
    title: str
    email: str
    csp: str
    action: str
    unsubscribe_action: str
    csrf: str
    controls: dict[str, Control]  # each preference's form field (name, label), by preference
    # Each preference's value as its form field holds it ("" for none, "yes" for a ticked box),
    # by preference; the categories ticked among those configured.
    value: dict[str, str]
    categories: tuple[_Category, ...]
    max_allowed: int
    languages: tuple[tuple[str, str], ...]
    default_time: str
    zones: tuple[str, ...]
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
    max_stories: int,
    notice: str = "",
    error: str = "",
    follows: tuple[Followed, ...] = (),
) -> str:
    """The page for `sub` as stored. `action` and `unsubscribe_action` are the forms' (relative)
    targets; `channels_shown` each channel's URL as the subscriber may see it, by key;
    `follows` the stories they follow, each with its unfollow form's target."""
    from digest.render.email import text_line

    prefs = sub.preferences
    # What the form sends back unchanged, as each preference's values in it
    # (`digest.subscribers.preferences`).
    posted = form_pairs(prefs)
    shown = {f.name: [v for n, v in posted if n == f.control.name] for f in FIELDS}
    view = _View(
        title=text_line(title, 80) or "digest",
        email=sub.email,
        csp=PREFERENCES_CSP,
        action=action,
        unsubscribe_action=unsubscribe_action,
        csrf=csrf,
        controls={f.name: f.control for f in FIELDS},
        value={name: values[0] if len(values) == 1 else "" for name, values in shown.items()},
        categories=tuple(
            _Category(c, category_name(c), c in shown["categories"]) for c in categories
        ),
        max_allowed=max_stories,
        languages=tuple(sorted(LANGUAGES.items(), key=lambda kv: kv[1].casefold())),
        default_time=default_time,
        zones=_zones(prefs.timezone),
        remove=REMOVE_CHANNEL,
        channels=tuple(_Channel(c.key, channels_shown.get(c.key, c.key)) for c in sub.channels),
        notice=notice,
        error=error,
        follows=tuple(Followed(text_line(f.title, 200), f.unfollow_action) for f in follows),
    )
    return environment().get_template("serve/preferences.html").render(v=view)


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

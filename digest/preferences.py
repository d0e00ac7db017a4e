"""What a subscriber may choose, and the one place that checks it: for `digest subscribers
add/set` and for the preferences page alike.

A change names only what it changes (`PreferenceChanges`, None: unchanged); `apply_changes`
checks it against the configuration and gives the subscriber's new `Preferences`, or raises
InvalidPreferenceError (or UnknownCategoryError) with a message a reader can act on. Channels
typed on the preferences page are checked more strictly than the operator's
(`digest.deliver.channels.check_channel`); a channel kept from before is not checked again.
Changes take effect from the next edition: one already sent or skipped stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from digest.config import Config
from digest.errors import InvalidPreferenceError
from digest.models import Preferences
from digest.schedule import parse_clock
from digest.stories.language import LANGUAGES
from digest.stories.rules import parse_terms

__all__ = ["MAX_CHANNELS", "MAX_STORIES", "PreferenceChanges", "apply_changes", "defaults"]

MAX_CHANNELS = 10
MAX_STORIES = 100


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
) -> Preferences:
    """`current` with `changes` made, each checked. `from_page`: the subscriber made them on
    the preferences page (see `check_channel`). Resolves new channels' hosts from the page:
    run it in a thread there."""
    new = current
    if changes.categories is not None:
        cats = tuple(dict.fromkeys(config.check_category(c) for c in changes.categories if c))
        new = replace(new, categories=cats or None)
    if changes.timezone is not None:
        new = replace(new, timezone=_zone(changes.timezone))
    if changes.send_at is not None:
        new = replace(new, send_at=_clock(changes.send_at))
    if changes.include is not None:
        new = replace(new, include=parse_terms(changes.include))
    if changes.exclude is not None:
        new = replace(new, exclude=parse_terms(changes.exclude))
    if changes.max_stories is not None:
        new = replace(new, max_stories=_stories(changes.max_stories))
    if changes.language is not None:
        new = replace(new, language=_language(changes.language))
    if changes.send_email is not None:
        new = replace(new, send_email=changes.send_email)
    if changes.channels is not None or changes.add_channels:
        urls = current.channels if changes.channels is None else changes.channels
        new = replace(
            new, channels=_channels(current, (*urls, *changes.add_channels), config, from_page)
        )
    return new


def _zone(name: str) -> str:
    name = name.strip()
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidPreferenceError(
            f"unknown time zone {name!r} (a name such as Europe/Berlin or America/New_York)"
        ) from None
    return name


def _clock(text: str) -> str | None:
    if not text.strip():
        return None
    try:
        moment = parse_clock(text)
    except ValueError:
        raise InvalidPreferenceError(
            f"not a time of day: {text!r} (use HH:MM, e.g. 07:30)"
        ) from None
    return f"{moment:%H:%M}"


def _stories(count: int) -> int | None:
    if count < 0 or count > MAX_STORIES:
        raise InvalidPreferenceError(
            f"stories per category must be between 1 and {MAX_STORIES} (0: all of them)"
        )
    return count or None


def _language(code: str) -> str | None:
    code = code.strip().lower()
    if not code:
        return None
    if code not in LANGUAGES:
        known = ", ".join(sorted(LANGUAGES))
        raise InvalidPreferenceError(f"unknown language {code!r} (ISO 639-1: {known})")
    return code


def _channels(
    current: Preferences, urls: tuple[str, ...], config: Config, from_page: bool
) -> tuple[str, ...]:
    from digest.deliver.channels import check_channel

    kept: list[str] = []
    for url in urls:
        url = url.strip()
        if not url or url in kept:
            continue
        if url not in current.channels:
            url = check_channel(
                url,
                from_page=from_page,
                allow_private=config.channels.allow_private_networks,
                page_schemes=config.channels.page_schemes,
            )
        kept.append(url)
    if len(kept) > MAX_CHANNELS:
        raise InvalidPreferenceError(f"at most {MAX_CHANNELS} channels besides email")
    return tuple(kept)

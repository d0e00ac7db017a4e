"""The compact digest that chat and push services get (Telegram, Slack, Discord, Matrix, ntfy,
Gotify, webhooks...): per category, each story's headline (linked to its page in the archive
when the archive has a URL, else to its first outlet), brief and outlet links; the day's other
headlines only when a category has no story; the reader's link to follow each story, as the
email has it; a link to the archive and to the reader's preferences page. Headlines are shown
as the email shows them: without their outlet's name after them or a section label before them
(`digest.render.headlines`).

Two forms of the same text: Markdown (`templates/notify/digest.md`), which Apprise hands to a
service as is where it understands Markdown and turns into HTML where the service wants that,
and plain text (`digest.txt`) for services that show text only. Either stays within `budget`
characters (the service's limit, and a compact digest's): stories are dropped from the end of
each category, then whole categories, and the message says how many are in the archive.
Scraped text is cleaned (`text_line`: tag-like `<!channel>` and `<@123>` go with the tags),
Markdown's special characters are escaped, and mentions are broken (`quiet_mentions`), so a
headline saying "@everyone" pings no one; links are http(s) only (`safe_url`). Its words and
its date are in the reader's language, as the email's are (`templating.reader_environment`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from urllib.parse import urlsplit

from digest import messages
from digest.models import Edition, EditionHeadline, EditionStory
from digest.render.email import (
    archive_page,
    headline_line,
    since_last,
    story_mark,
    text_line,
    untitled,
)
from digest.render.sanitize import safe_url
from digest.render.templating import md_url, reader_environment

__all__ = ["COMPACT_CHARS", "quiet_mentions", "render_notification"]

# However much a service takes, a compact digest stays about one phone screen or three.
COMPACT_CHARS = 4_000
TITLE_CHARS = 160
BRIEF_CHARS = 240
NAME_CHARS = 40
OUTLETS_SHOWN = 3
HEADLINES_SHOWN = 5  # of a category that has no story


# "@" before a word: a mention in Discord and Slack (@everyone, @here, @channel), Matrix
# (@room, @user:server), Mattermost and Rocket.Chat (@all), Telegram (@username). Inside an
# address too: Apprise's discord plugin takes any "@word" of the body for a mention to add.
_MENTION = re.compile(r"@(?=\w)")
# Slack's <!channel>, <!here>, <!everyone> and <@U123>, Discord's <@123>, <@&role>, <#channel>.
_ANGLE_MENTION = re.compile(r"<(?=[!@#])")
# After the "@", a zero-width space: shown the same, matched by no service's mention syntax
# (Discord's own escape for @everyone; Apprise's discord plugin would otherwise add the ping).
_NO_MENTION = "@\u200b"


def quiet_mentions(text: str) -> str:
    """Scraped text with every mention broken, for every service (see `_MENTION`)."""
    return _ANGLE_MENTION.sub("<\u200b", _MENTION.sub(_NO_MENTION, text))


def _line(value: str | None, limit: int) -> str:
    """A scraped line for the compact digest: `text_line`, and no mentions."""
    return quiet_mentions(text_line(value, limit))


def _headline_line(title: str, outlets: Iterable[str]) -> str:
    """A headline for the compact digest: `headline_line`, and no mentions."""
    return quiet_mentions(headline_line(title, outlets, TITLE_CHARS))


@dataclass(frozen=True, slots=True)
class _Link:
    text: str
    url: str


@dataclass(frozen=True, slots=True)
class _Story:
    title: str
    url: str | None
    brief: str
    mark: str
    outlets: tuple[_Link, ...]
    more_outlets: int
    # An updated story in a reader's copy: what is new since their last digest, not its brief.
    since_line: str = ""
    since_corrections: tuple[str, ...] = ()
    follow_url: str | None = None  # the reader's link to follow it (slots until filled)


@dataclass(frozen=True, slots=True)
class _Headline:
    title: str
    url: str | None


@dataclass(frozen=True, slots=True)
class _Mention:
    """A story of this category shown in another section: "Also in Technology: <title>"."""

    title: str
    category: str
    outlet_count: int
    url: str | None  # its archive page


@dataclass(frozen=True, slots=True)
class _Section:
    name: str
    stories: tuple[_Story, ...]
    headlines: tuple[_Headline, ...]
    mentions: tuple[_Mention, ...] = ()


@dataclass(frozen=True, slots=True)
class _View:
    sections: tuple[_Section, ...]
    archive_url: str | None
    preferences_url: str
    left_out: int = 0
    language: str = "en"  # the reader's: the words around the stories (`reader_environment`)


def render_notification(
    edition: Edition,
    *,
    title: str,
    archive: str | None,
    preferences: str,
    budget: int = COMPACT_CHARS,
    follow: str | None = None,
    language: str | None = None,
) -> tuple[str, str, str]:
    """(title, Markdown body, plain-text body) of the compact digest of `edition` (a reader's
    own copy), each body at most `budget` characters with `preferences` (the reader's page)
    and, with `follow` (the reader's follow link, "{story}" standing for a story's id), a link
    to follow each story, as the email has; its corrections in `language` (the reader's:
    `digest.messages.edition_language`)."""
    link = safe_url(preferences)
    if link is None:
        raise ValueError(f"the preferences URL is not an absolute http(s) URL: {preferences!r}")
    start, end = _follow_parts(follow)
    archive_url = safe_url(archive) if archive else None
    budget = min(budget, COMPACT_CHARS)
    # Rendered once for every reader of the same copy, with slots for their own links.
    growth = max(0, len(md_url(link)) - len(_PREFERENCES_SLOT)) + 16
    if follow:
        stories = sum(len(s.stories) for s in edition.sections)
        per_story = len(md_url(start)) + len(md_url(end)) - len(_FOLLOW_SLOT + _FOLLOW_END_SLOT)
        growth += stories * max(0, per_story)
    markdown, text = _fitted(
        edition,
        archive_url,
        max(200, budget - growth),
        bool(follow),
        messages.edition_language(language),
    )
    day = messages.long_day(edition.day, language)
    head = f"{text_line(title, 80) or 'digest'}, {day}"
    md_fills = {_PREFERENCES_SLOT: md_url(link), _FOLLOW_SLOT: md_url(start)}
    text_fills = {_PREFERENCES_SLOT: link, _FOLLOW_SLOT: start}
    md_fills[_FOLLOW_END_SLOT], text_fills[_FOLLOW_END_SLOT] = md_url(end), end
    for slot in md_fills:
        markdown = markdown.replace(slot, md_fills[slot])
        text = text.replace(slot, text_fills[slot])
    return head, markdown, text


_PREFERENCES_SLOT = "https://slot.invalid/preferences"
# A story's follow link: the start slot, the story's id, the end slot (as in the email).
_FOLLOW_SLOT = "https://slot.invalid/follow?story="
_FOLLOW_END_SLOT = "~follow-end~"


def _follow_parts(follow: str | None) -> tuple[str, str]:
    """A follow link's text before and after the story's id; checked as a whole."""
    if not follow:
        return "", ""
    start, found, end = follow.partition("{story}")
    if not found or safe_url(f"{start}1{end}") is None:
        raise ValueError(f"the follow URL is not an absolute http(s) URL: {follow!r}")
    return start, end


@lru_cache(maxsize=64)
def _fitted(
    edition: Edition, archive: str | None, budget: int, follow: bool = False, language: str = "en"
) -> tuple[str, str]:
    full = _view(edition, archive, follow, language)
    total = sum(len(s.stories) for s in full.sections)
    for view in _smaller(full):
        shown = sum(len(s.stories) for s in view.sections)
        view = replace(view, left_out=total - shown)
        markdown, text = _render(view)
        if len(markdown) <= budget and len(text) <= budget:
            return markdown, text
    # Not even one story fits: the links alone.
    return _render(replace(full, sections=(), left_out=total))


def _smaller(view: _View) -> Iterator[_View]:
    """The view, then ever smaller cuts of it: fewer stories in every category, then fewer
    categories."""
    yield view
    most = max((len(s.stories) for s in view.sections), default=0)
    for cap in range(most - 1, 0, -1):
        yield replace(
            view,
            sections=tuple(
                replace(
                    s,
                    stories=s.stories[:cap],
                    headlines=s.headlines[:cap],
                    mentions=s.mentions[:cap],
                )
                for s in view.sections
            ),
        )
    for count in range(len(view.sections) - 1, 0, -1):
        yield replace(
            view,
            sections=tuple(
                replace(s, stories=s.stories[:1], headlines=s.headlines[:1], mentions=())
                for s in view.sections[:count]
            ),
        )


def _view(
    edition: Edition, archive: str | None, follow: bool = False, language: str = "en"
) -> _View:
    sections = []
    for section in edition.sections:
        stories = tuple(
            _story(s, archive_page(archive, edition.day, s.id), follow, language)
            for s in section.stories
        )
        headlines = () if stories else tuple(_headline(h, language) for h in section.headlines)
        mentions = tuple(
            _Mention(
                quiet_mentions(headline_line(m.title, (), TITLE_CHARS)) or untitled(language),
                messages.category_name(text_line(m.category, NAME_CHARS), language),
                m.outlet_count,
                archive_page(archive, edition.day, m.story_id),
            )
            for m in section.mentions
        )
        if stories or headlines or mentions:
            name = messages.category_name(text_line(section.category, NAME_CHARS), language)
            sections.append(_Section(name, stories, headlines[:HEADLINES_SHOWN], mentions))
    return _View(tuple(sections), archive, _PREFERENCES_SLOT, language=language)


def _story(
    story: EditionStory, page: str | None = None, follow: bool = False, language: str = "en"
) -> _Story:
    links = []
    for outlet in story.outlets:
        url = safe_url(outlet.url)
        if url:
            # An outlet without a name is its link's host, as in the email (no English word).
            host = (urlsplit(url).hostname or "").removeprefix("www.")
            links.append(_Link(_line(outlet.name, NAME_CHARS) or host, url))
    since = since_last(story.whats_new, facts=1, language=language)
    return _Story(
        title=_headline_line(story.title, (o.name for o in story.outlets)) or untitled(language),
        url=page or (links[0].url if links else None),
        brief="" if since else _line(story.brief_summary or story.summary, BRIEF_CHARS),
        mark=story_mark(story, language),
        outlets=tuple(links[:OUTLETS_SHOWN]),
        more_outlets=len(story.outlets) - len(links[:OUTLETS_SHOWN]),
        since_line=quiet_mentions(since.line) if since else "",
        since_corrections=tuple(map(quiet_mentions, since.corrections)) if since else (),
        follow_url=f"{_FOLLOW_SLOT}{int(story.id)}{_FOLLOW_END_SLOT}" if follow else None,
    )


def _headline(headline: EditionHeadline, language: str = "en") -> _Headline:
    title = _headline_line(headline.title, headline.names)
    return _Headline(title or untitled(language), safe_url(headline.url))


def _render(view: _View) -> tuple[str, str]:
    env = reader_environment(view.language)
    markdown = env.get_template("notify/digest.md").render(v=view)
    text = env.get_template("notify/digest.txt").render(v=view)
    return _tidy(markdown), _tidy(text)


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"

"""One email per subscriber per edition: a readable plain-text part and an HTML part for clients.

The HTML part uses a table layout with its CSS inlined (css-inline), loads nothing remote (no
images, no tracking pixels) and stays under `HTML_BUDGET` bytes, the size above which Gmail clips
a message: a large edition loses headlines first, then stories, and says so with a link to the
full edition in the archive. Scraped text is cleaned here and escaped by the templates; links are
http(s) only (`digest.render.sanitize.safe_url`).
"""

from __future__ import annotations

import hashlib
import html
import re
import secrets
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, tzinfo
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime, parseaddr
from functools import cache, lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import css_inline
import jinja2
from markupsafe import escape

from digest.config import EmailConfig
from digest.deliver.address import check_address
from digest.errors import AddressError, InvalidRecipientError
from digest.models import Edition, EditionHeadline, EditionStory
from digest.render.sanitize import clean_text, safe_url

__all__ = ["HTML_BUDGET", "Recipient", "build_message", "message_id"]

# Gmail clips messages whose HTML is larger than 102 KB; stay clear of it.
HTML_BUDGET = 100_000

# An upper bound on the bytes inlining removes from a page: its <style> block (about 4 KB).
_STYLE_BLOCK_BYTES = 8_000

# Scraped text is cut to these lengths (characters), at a word boundary.
TITLE_CHARS = 200
BRIEF_CHARS = 500
LEDE_CHARS = 220
NAME_CHARS = 60
OUTLETS_SHOWN = 5  # links per story; the rest are counted ("and 3 more")
SUBJECT_CHARS = 150

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()

# Something that looks like an HTML tag. Titles and ledes sometimes carry markup from their
# feed; it is noise in both parts (the HTML part would show it escaped), so it goes.
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,500}>")
_SPACE = re.compile(r"\s+")
# Zero-width characters: invisible, and able to disguise a subject. Controls and bidi controls
# go by the rule every renderer shares (`clean_text`).
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060-\u2065\ufeff]")


@dataclass(frozen=True, slots=True)
class Recipient:
    """A subscriber as the email sees them: where to, which categories (None: all), which zone."""

    email: str
    categories: tuple[str, ...] | None = None
    timezone: str = "UTC"


def message_id(day: date, email: str, sender: str) -> str:
    """The Message-ID of the edition of `day` sent to `email`: the same every time it is built.

    A retry or an explicit re-send reuses it, so mail stores that deduplicate by Message-ID
    show one copy.
    """
    key = f"{day.isoformat()}\n{email.strip().lower()}".encode()
    token = hashlib.sha256(key).hexdigest()[:16]
    domain = _domain(sender)
    return f"<digest-{day.isoformat()}-{token}@{domain}>"


def build_message(
    edition: Edition,
    subscriber: Recipient,
    config: EmailConfig,
    *,
    archive_url: str | None,
    unsubscribe_url: str,
    title: str = "digest",
    dated: datetime | None = None,
    html_budget: int = HTML_BUDGET,
) -> EmailMessage:
    """The email of `edition` for `subscriber`, restricted to their categories.

    `archive_url` is the absolute URL of this edition in the archive (None when the archive has
    no base URL); `unsubscribe_url` an absolute http(s) URL that unsubscribes with one POST
    (RFC 8058) and shows a confirmation on GET. `dated` is the Date header (default: when the
    edition was generated, so the same edition builds the same message).
    Raises InvalidRecipientError (a PermanentDeliveryError) for an address that breaks the
    address rule (`digest.deliver.address`).
    """
    unsubscribe = safe_url(unsubscribe_url)
    if unsubscribe is None:
        raise ValueError(f"the unsubscribe URL is not an absolute http(s) URL: {unsubscribe_url!r}")
    archive = safe_url(archive_url) if archive_url else None
    to = _address(subscriber.email)
    sender = config.from_

    tz = _zone(subscriber.timezone, fallback=edition.timezone)
    mine = edition.only(subscriber.categories)
    # The parts are rendered once per edition, categories and zone, with slots for the two
    # per-recipient values; the budget is lowered by what filling them adds.
    email = subscriber.email.strip()
    address, link = str(escape(email)), str(escape(unsubscribe))
    growth = len(address) + len(link) - len(_ADDRESS_SLOT) - len(_UNSUBSCRIBE_SLOT)
    slack = -(-max(0, growth) // 256) * 256  # rounded up, so similar recipients share a render
    while True:
        template_html, template_text = _parts(
            mine, subscriber.categories, tz, title, archive, html_budget - slack
        )
        html_part = template_html.replace(_ADDRESS_SLOT, address)
        html_part = html_part.replace(_UNSUBSCRIBE_SLOT, link)
        if len(html_part.encode("utf-8")) <= html_budget or slack >= html_budget:
            break
        slack += 1024  # a slot filled more than once: leave more room
    text_part = template_text.replace(_ADDRESS_SLOT, email)
    text_part = text_part.replace(_UNSUBSCRIBE_SLOT, unsubscribe)

    msg = EmailMessage(policy=default_policy)
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = _subject(title, mine)
    msg["Date"] = format_datetime(_aware(dated or edition.generated_at).astimezone(tz))
    msg["Message-ID"] = mid = message_id(edition.day, subscriber.email, sender)
    msg["List-Id"] = f"{_header_text(title)} <digest.{_domain(sender)}>"
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to a digest
    # Quoted-printable keeps both parts readable in the raw message and safe over 7-bit links.
    msg.set_content(text_part, cte="quoted-printable")
    msg.add_alternative(html_part, subtype="html", cte="quoted-printable")
    # A boundary derived from the Message-ID (not random): the same edition builds the same bytes.
    msg.set_boundary("=_" + mid.strip("<>").partition("@")[0] + "_alt")
    return msg


# Stand-ins for the recipient's address and unsubscribe link while rendering; random, so that
# no scraped text can contain them.
_SLOT_TOKEN = secrets.token_hex(8)
_ADDRESS_SLOT = f"recipient-{_SLOT_TOKEN}@slot.invalid"
_UNSUBSCRIBE_SLOT = f"https://slot.invalid/unsubscribe-{_SLOT_TOKEN}"


def _parts(
    edition: Edition,
    categories: tuple[str, ...] | None,
    tz: tzinfo,
    title: str,
    archive: str | None,
    budget: int,
) -> tuple[str, str]:
    """The HTML and text parts of `edition` (already restricted to `categories`), with slots;
    rendered once for all the subscribers who share them."""
    try:
        return _cached_parts(edition, categories, tz, title, archive, budget)
    except TypeError:  # an edition built with a list somewhere cannot be a cache key
        return _render_parts(edition, categories, tz, title, archive, budget)


def _render_parts(
    edition: Edition,
    categories: tuple[str, ...] | None,
    tz: tzinfo,
    title: str,
    archive: str | None,
    budget: int,
) -> tuple[str, str]:
    view = _view(
        edition,
        Recipient(_ADDRESS_SLOT, categories),
        tz,
        title=title,
        archive=archive,
        unsubscribe=_UNSUBSCRIBE_SLOT,
    )
    view, html_part = _fit(view, budget)
    return html_part, _render_text(view)


_cached_parts = lru_cache(maxsize=64)(_render_parts)


# -- what the templates see ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Link:
    text: str
    url: str | None


@dataclass(frozen=True, slots=True)
class _StoryView:
    title: str
    url: str | None  # the first outlet's link
    brief: str
    outlet_count: int
    outlets: tuple[_Link, ...]  # at most OUTLETS_SHOWN, with a followable URL
    more_outlets: int
    updated: bool


@dataclass(frozen=True, slots=True)
class _HeadlineView:
    title: str
    url: str | None
    source: str
    lede: str


@dataclass(frozen=True, slots=True)
class _SectionView:
    name: str
    stories: tuple[_StoryView, ...]
    headlines: tuple[_HeadlineView, ...]


@dataclass(frozen=True, slots=True)
class _EmailView:
    title: str
    day: str  # "Tuesday 4 March 2025"
    compiled: str  # "07:00 CET"
    preheader: str
    categories: str  # "technology, world" or "" for all
    sections: tuple[_SectionView, ...]
    archive_url: str | None
    unsubscribe_url: str
    recipient: str
    total_stories: int = 0
    total_headlines: int = 0
    trimmed: bool = False
    shown_stories: int = 0
    shown_headlines: int = 0


def _view(
    edition: Edition,
    subscriber: Recipient,
    tz: tzinfo,
    *,
    title: str,
    archive: str | None,
    unsubscribe: str,
) -> _EmailView:
    sections = tuple(
        _SectionView(
            name=_category_name(s.category),
            stories=tuple(_story(st) for st in s.stories),
            headlines=tuple(_headline(h) for h in s.headlines),
        )
        for s in edition.sections
    )
    stories = sum(len(s.stories) for s in sections)
    headlines = sum(len(s.headlines) for s in sections)
    top = [st.title for s in sections for st in s.stories][:3]
    compiled = _aware(edition.generated_at).astimezone(tz)
    return _EmailView(
        title=_text(title, 80) or "digest",
        day=_long_date(edition.day),
        compiled=f"{compiled:%H:%M} {compiled.tzname() or ''}".rstrip(),
        preheader=_clip(" · ".join(top), 140),
        categories=", ".join(subscriber.categories or ()),
        sections=sections,
        archive_url=archive,
        unsubscribe_url=unsubscribe,
        recipient=subscriber.email,
        total_stories=stories,
        total_headlines=headlines,
        shown_stories=stories,
        shown_headlines=headlines,
    )


def _story(story: EditionStory) -> _StoryView:
    outlets = story.outlets
    links = [_Link(_text(o.name, NAME_CHARS) or _host(o.url), safe_url(o.url)) for o in outlets]
    followable = [link for link in links if link.url]
    return _StoryView(
        title=_text(story.title, TITLE_CHARS) or "(untitled)",
        url=followable[0].url if followable else None,
        brief=_text(story.brief_summary or story.summary, BRIEF_CHARS),
        outlet_count=len(story.outlets),
        outlets=tuple(followable[:OUTLETS_SHOWN]),
        more_outlets=max(0, len(followable) - OUTLETS_SHOWN),
        updated=story.updated,
    )


def _headline(headline: EditionHeadline) -> _HeadlineView:
    return _HeadlineView(
        title=_text(headline.title, TITLE_CHARS) or "(untitled)",
        url=safe_url(headline.url),
        source=_text(headline.source, NAME_CHARS),
        lede=_text(headline.lede, LEDE_CHARS),
    )


# -- staying under the size budget ---------------------------------------------------------------


def _cap(view: _EmailView, *, stories: int, headlines: int, sections: int) -> _EmailView:
    kept = tuple(
        replace(s, stories=s.stories[:stories], headlines=s.headlines[:headlines])
        for s in view.sections[:sections]
    )
    shown_s = sum(len(s.stories) for s in kept)
    shown_h = sum(len(s.headlines) for s in kept)
    return replace(
        view,
        sections=kept,
        shown_stories=shown_s,
        shown_headlines=shown_h,
        trimmed=(shown_s, shown_h) != (view.total_stories, view.total_headlines),
    )


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n in [low, high] with fits(n), assuming fits is monotone; None if none."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _fit(view: _EmailView, budget: int) -> tuple[_EmailView, str]:
    """The view trimmed until its HTML fits `budget` bytes: headlines go first, then stories,
    then whole sections from the end. Each cap applies per section, so every category keeps
    its top items."""
    rendered: dict[tuple[int, int, int], tuple[_EmailView, str]] = {}

    def attempt(stories: int, headlines: int, sections: int) -> tuple[_EmailView, str]:
        key = (stories, headlines, sections)
        if key not in rendered:
            capped = _cap(view, stories=stories, headlines=headlines, sections=sections)
            rendered[key] = (capped, _render_html(capped))
        return rendered[key]

    def fits(stories: int, headlines: int, sections: int) -> bool:
        capped = _cap(view, stories=stories, headlines=headlines, sections=sections)
        # Inlining only adds style attributes (and drops the <style> block): a page that is
        # already too large before it cannot fit after, and needs no costly inlining to know.
        if len(_render_page(capped).encode("utf-8")) - _STYLE_BLOCK_BYTES > budget:
            return False
        return len(attempt(stories, headlines, sections)[1].encode("utf-8")) <= budget

    most_s = max((len(s.stories) for s in view.sections), default=0)
    most_h = max((len(s.headlines) for s in view.sections), default=0)
    count = len(view.sections)
    if fits(most_s, most_h, count):
        return attempt(most_s, most_h, count)
    h = _largest(0, most_h, lambda n: fits(most_s, n, count))
    if h is not None:
        return attempt(most_s, h, count)
    s = _largest(1, most_s, lambda n: fits(n, 0, count)) if most_s else None
    if s is not None:
        return attempt(s, 0, count)
    kept = _largest(0, count, lambda n: fits(1, 0, n))
    if kept is None:
        raise ValueError(f"an empty digest does not fit in {budget} bytes")
    return attempt(1, 0, kept)


# -- rendering -----------------------------------------------------------------------------------


@cache
def _environment() -> jinja2.Environment:
    try:
        loader: jinja2.BaseLoader = jinja2.PackageLoader("digest.templates", "email")
    except (ModuleNotFoundError, ValueError):
        # An editable install made before pyproject.toml mapped digest.templates: the checkout.
        root = Path(__file__).resolve().parents[2] / "templates" / "email"
        loader = jinja2.FileSystemLoader(str(root))
    env = jinja2.Environment(
        loader=loader,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters.update(wrap=_wrap, plural=_plural)
    return env


@cache
def _inliner() -> css_inline.CSSInliner:
    # keep_at_rules leaves @media rules in a <style> (they cannot be inlined) for small screens.
    return css_inline.CSSInliner(keep_at_rules=True, minify_css=True, load_remote_stylesheets=False)


# The classes the @media rules of digest.html use; every other class has been inlined and only
# costs bytes (a full edition repeats them hundreds of times).
_KEPT_CLASSES = frozenset(
    {"frame", "masthead", "notice", "section", "story-title", "archive", "footer", "empty"}
)
_CLASS_ATTR = re.compile(r' class="([^"]*)"')


def _drop_inlined_classes(page: str) -> str:
    def keep(match: re.Match[str]) -> str:
        kept = [c for c in match.group(1).split() if c in _KEPT_CLASSES]
        return f' class="{" ".join(kept)}"' if kept else ""

    return _CLASS_ATTR.sub(keep, page)


def _render_page(view: _EmailView) -> str:
    return _environment().get_template("digest.html").render(v=view)


def _render_html(view: _EmailView) -> str:
    return _drop_inlined_classes(_inliner().inline(_render_page(view)))


def _render_text(view: _EmailView) -> str:
    text = _environment().get_template("digest.txt").render(v=view)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _wrap(text: str, indent: str = "", first: str | None = None, width: int = 72) -> str:
    """Plain text wrapped for the text part (`first` prefixes the first line, `indent` the
    others); URLs and long words are never broken."""
    return textwrap.fill(
        text,
        width=width,
        initial_indent=indent if first is None else first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


# -- small helpers -------------------------------------------------------------------------------


def _text(value: str | None, limit: int) -> str:
    """Scraped text as one clean line: entities decoded, tag-like markup and controls removed,
    whitespace collapsed, cut at a word boundary. Escaping is still the template's job."""
    if not value:
        return ""
    plain = _ZERO_WIDTH.sub("", clean_text(_TAG.sub(" ", html.unescape(value))))
    return _clip(_SPACE.sub(" ", plain).strip(), limit)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"


def _header_text(value: str) -> str:
    return _text(value, SUBJECT_CHARS).replace('"', "'").replace("<", "(").replace(">", ")")


def _subject(title: str, edition: Edition) -> str:
    head = f"{_header_text(title) or 'digest'}, {_long_date(edition.day)}"
    top = next((st for s in edition.sections for st in s.stories), None)
    if top is None:
        return head
    return _clip(f"{head}: {_text(top.title, SUBJECT_CHARS)}", SUBJECT_CHARS)


def _address(email: str) -> Address:
    """The To address under the same rule as `digest subscribers add`, in its ASCII form."""
    try:
        checked = check_address(email)
        # The email package parses it once more; should it ever disagree with the rule, that
        # still fails this recipient alone.
        return Address(addr_spec=checked.ascii)
    except (AddressError, ValueError, IndexError, HeaderParseError) as err:
        reason = err.reason if isinstance(err, AddressError) else str(err)
        raise InvalidRecipientError(
            f"cannot send to {email!r}: not an email address ({reason})",
            reply=f"not sent: not an email address ({reason})",
        ) from None


def _domain(sender: str) -> str:
    address = parseaddr(sender)[1]
    domain = address.rpartition("@")[2].strip().lower()
    return re.sub(r"[^a-z0-9.-]", "", domain) or "localhost"


def _host(url: str) -> str:
    match = re.match(r"^[a-z][a-z0-9+.-]*://([^/:?#]+)", url.strip(), re.IGNORECASE)
    return match.group(1).lower() if match else "link"


def _zone(name: str, *, fallback: str) -> tzinfo:
    for candidate in (name, fallback):
        try:
            return ZoneInfo(candidate)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    return UTC


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _long_date(day: date) -> str:
    return f"{_WEEKDAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


def _category_name(category: str) -> str:
    name = _text(category, NAME_CHARS)
    return name[:1].upper() + name[1:]

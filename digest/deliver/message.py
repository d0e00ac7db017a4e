"""One email per subscriber per edition: a readable plain-text part and an HTML part for clients.

The parts are rendered by `digest.render.email` (HTML under `HTML_BUDGET` bytes, the size above
which Gmail clips a message), once per edition, categories and time zone, with slots for the
recipient's address and unsubscribe link; this module fills the slots and builds the message:
headers (List-Unsubscribe for one-click unsubscribing, RFC 8058), a Message-ID derived from the
edition and the recipient, and the address checked by the one rule (`digest.deliver.address`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from functools import lru_cache

from markupsafe import escape

from digest.config import EmailConfig
from digest.deliver import mime
from digest.deliver.address import check_address
from digest.edition.front_page import lead
from digest.errors import AddressError, InvalidRecipientError
from digest.messages import edition_language, long_day
from digest.models import Edition
from digest.render.email import (
    HEADLINES_PER_CATEGORY,
    LEAD_STORIES,
    headline_line,
    render_email,
    text_line,
)
from digest.render.sanitize import safe_url
from digest.render.templating import clip
from digest.schedule import known_zone

__all__ = ["HTML_BUDGET", "Recipient", "build_message", "message_id", "sender_domain"]

# Gmail clips messages whose HTML is larger than 102 KB; stay clear of it.
HTML_BUDGET = 100_000

SUBJECT_CHARS = 150


@dataclass(frozen=True, slots=True)
class Recipient:
    """A subscriber as the email sees them: where to, which categories (None: all), which zone,
    which language the service's own lines are in (None: English; `digest.messages`)."""

    email: str
    categories: tuple[str, ...] | None = None
    timezone: str = "UTC"
    language: str | None = None


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
    preferences_url: str | None = None,
    lead: int = LEAD_STORIES,
    headlines: int = HEADLINES_PER_CATEGORY,
    follow_url: str | None = None,
) -> EmailMessage:
    """The email of `edition` for `subscriber`, restricted to their categories.

    `archive_url` is the absolute URL of this edition in the archive (None when the archive has
    no base URL); `unsubscribe_url` an absolute http(s) URL that unsubscribes with one POST
    (RFC 8058) and shows a confirmation on GET; `preferences_url`, when given, the subscriber's
    preferences page; `lead` and `headlines` are [publish] lead_stories and
    headlines_per_category; `follow_url`, when given, the subscriber's link to follow a story,
    "{story}" standing for its id (each story gets one). `dated` is the Date header
    (default: when the edition was generated, so the same edition builds the same message).
    Raises InvalidRecipientError (a PermanentDeliveryError) for an address that breaks the
    address rule (`digest.deliver.address`).
    """
    unsubscribe, archive, preferences = _checked_links(
        unsubscribe_url, archive_url, preferences_url
    )
    follow = _follow_parts(follow_url) if follow_url else None
    to = _address(subscriber.email)
    sender = config.from_

    tz = _zone(subscriber.timezone, fallback=edition.timezone)
    mine = edition.only(subscriber.categories)
    html_fills, text_fills = _slot_fills(subscriber.email.strip(), unsubscribe, preferences, follow)
    template_html, template_text = _fitted_parts(
        mine,
        subscriber,
        tz,
        title,
        archive,
        html_budget,
        html_fills,
        preferences=bool(preferences),
        lead=lead,
        headlines=headlines,
        follow=follow is not None,
    )
    mid = message_id(edition.day, subscriber.email, sender)
    msg = _headed(
        sender=sender,
        to=to,
        subject=_subject(title, mine, subscriber.language),
        date=_aware(dated or edition.generated_at).astimezone(tz),
        mid=mid,
        title=title,
        unsubscribe=unsubscribe,
    )
    # Quoted-printable keeps both parts readable in the raw message and safe over 7-bit links
    # (encoded in C: the email package's encoder was most of a message's cost).
    # The parts are encoded around the slots once per render; each message encodes its values.
    mime.alternative(
        msg, template_text, template_html, text_fills=text_fills, html_fills=html_fills
    )
    # A boundary derived from the Message-ID (not random): the same edition builds the same bytes.
    msg.set_boundary("=_" + mid.strip("<>").partition("@")[0] + "_alt")
    return msg


def _checked_links(
    unsubscribe_url: str, archive_url: str | None, preferences_url: str | None
) -> tuple[str, str | None, str | None]:
    """The unsubscribe, archive and preferences links made safe; a ValueError for an
    unsubscribe or preferences link that is not an absolute http(s) URL (an archive link that
    is not one is left out)."""
    unsubscribe = safe_url(unsubscribe_url)
    if unsubscribe is None:
        raise ValueError(f"the unsubscribe URL is not an absolute http(s) URL: {unsubscribe_url!r}")
    archive = safe_url(archive_url) if archive_url else None
    preferences = safe_url(preferences_url) if preferences_url else None
    if preferences_url and preferences is None:
        raise ValueError(f"the preferences URL is not an absolute http(s) URL: {preferences_url!r}")
    return unsubscribe, archive, preferences


def _slot_fills(
    email: str, unsubscribe: str, preferences: str | None, follow: tuple[str, str] | None
) -> tuple[dict[str, str], dict[str, str]]:
    """What one recipient's values put in the parts' slots: escaped in the HTML part, as they
    are in the text part."""
    html_fills = {
        _ADDRESS_SLOT: str(escape(email)),
        _UNSUBSCRIBE_SLOT: str(escape(unsubscribe)),
        _PREFERENCES_SLOT: str(escape(preferences)) if preferences else "",
    }
    text_fills = {_ADDRESS_SLOT: email, _UNSUBSCRIBE_SLOT: unsubscribe, _PREFERENCES_SLOT: ""}
    if preferences:
        text_fills[_PREFERENCES_SLOT] = preferences
    if follow is not None:
        follow_start, follow_end = follow
        html_fills[_FOLLOW_SLOT] = str(escape(follow_start))
        html_fills[_FOLLOW_END_SLOT] = str(escape(follow_end))
        text_fills[_FOLLOW_SLOT], text_fills[_FOLLOW_END_SLOT] = follow_start, follow_end
    return html_fills, text_fills


def _fitted_parts(
    mine: Edition,
    subscriber: Recipient,
    tz: tzinfo,
    title: str,
    archive: str | None,
    html_budget: int,
    html_fills: dict[str, str],
    *,
    preferences: bool,
    lead: int,
    headlines: int,
    follow: bool,
) -> tuple[str, str]:
    """The HTML and text parts of `mine` (the edition in the subscriber's categories) whose HTML
    stays under `html_budget` once `html_fills` fill its slots.

    The parts are rendered once per edition, categories and zone, with slots for the
    per-recipient values; the budget is lowered by what filling them adds, rounded up so that
    similar recipients share a render."""
    growth = (
        len(html_fills[_ADDRESS_SLOT])
        + len(html_fills[_UNSUBSCRIBE_SLOT])
        - len(_ADDRESS_SLOT)
        - len(_UNSUBSCRIBE_SLOT)
    )
    if preferences:
        growth += len(html_fills[_PREFERENCES_SLOT]) - len(_PREFERENCES_SLOT)
    slack = -(-max(0, growth) // 256) * 256
    while True:
        template_html, template_text = _parts(
            mine,
            subscriber.categories,
            tz,
            title,
            archive,
            html_budget - slack,
            preferences,
            lead,
            headlines,
            follow,
            edition_language(subscriber.language),
        )
        if _filled_size(template_html, html_fills) <= html_budget or slack >= html_budget:
            return template_html, template_text
        slack += 1024  # a slot filled more than once: leave more room


def _headed(
    *,
    sender: str,
    to: Address,
    subject: str,
    date: datetime,
    mid: str,
    title: str,
    unsubscribe: str,
) -> EmailMessage:
    """A message with the digest's headers and no body yet: one-click unsubscribing
    (RFC 8058), a list id, and no auto-replies (RFC 3834)."""
    msg = EmailMessage(policy=mime.POLICY)
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(date)
    msg["Message-ID"] = mid
    msg["List-Id"] = f"{_header_text(title)} <digest.{_domain(sender)}>"
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to a digest
    return msg


# Stand-ins for the recipient's address and unsubscribe link while rendering; random, so that
# no scraped text can contain them.
_SLOT_TOKEN = secrets.token_hex(8)
_ADDRESS_SLOT = f"recipient-{_SLOT_TOKEN}@slot.invalid"
_UNSUBSCRIBE_SLOT = f"https://slot.invalid/unsubscribe-{_SLOT_TOKEN}"
_PREFERENCES_SLOT = f"https://slot.invalid/preferences-{_SLOT_TOKEN}"
# A story's follow link is the start slot, the story's id, the end slot (usually empty).
_FOLLOW_SLOT = f"https://slot.invalid/follow-{_SLOT_TOKEN}?story="
_FOLLOW_END_SLOT = f"-follow-end-{_SLOT_TOKEN}"


def _follow_parts(follow_url: str | None) -> tuple[str, str]:
    """A follow link's text before and after the story's id; checked as a whole."""
    if not follow_url:
        return "", ""
    start, found, end = follow_url.partition("{story}")
    if not found or safe_url(f"{start}1{end}") is None:
        raise ValueError(f"the follow URL is not an absolute http(s) URL: {follow_url!r}")
    return start, end


def _parts(
    edition: Edition,
    categories: tuple[str, ...] | None,
    tz: tzinfo,
    title: str,
    archive: str | None,
    budget: int,
    preferences: bool = False,
    lead: int = LEAD_STORIES,
    headlines: int = HEADLINES_PER_CATEGORY,
    follow: bool = False,
    language: str = "en",
) -> tuple[str, str]:
    """The HTML and text parts of `edition` (already restricted to `categories`), with slots;
    rendered once for all the subscribers who share them."""
    args = (
        edition,
        categories,
        tz,
        title,
        archive,
        budget,
        preferences,
        lead,
        headlines,
        follow,
        language,
    )
    try:
        return _cached_parts(*args)
    except TypeError:  # an edition built with a list somewhere cannot be a cache key
        return _render_parts(*args)


def _render_parts(
    edition: Edition,
    categories: tuple[str, ...] | None,
    tz: tzinfo,
    title: str,
    archive: str | None,
    budget: int,
    preferences: bool = False,
    lead: int = LEAD_STORIES,
    headlines: int = HEADLINES_PER_CATEGORY,
    follow: bool = False,
    language: str = "en",
) -> tuple[str, str]:
    return render_email(
        edition,
        categories=categories,
        tz=tz,
        title=title,
        archive=archive,
        unsubscribe=_UNSUBSCRIBE_SLOT,
        recipient=_ADDRESS_SLOT,
        budget=budget,
        preferences=_PREFERENCES_SLOT if preferences else None,
        lead=lead,
        headlines=headlines,
        follow=f"{_FOLLOW_SLOT}{{story}}{_FOLLOW_END_SLOT}" if follow else None,
        language=language,
    )


_cached_parts = lru_cache(maxsize=64)(_render_parts)


def _filled_size(template: str, fills: dict[str, str]) -> int:
    """The UTF-8 size of `template` with its slots filled, without filling it."""
    size, counts = _slots_in(template)
    return size + sum(
        counts[slot] * (len(value.encode("utf-8")) - len(slot)) for slot, value in fills.items()
    )


@lru_cache(maxsize=64)
def _slots_in(template: str) -> tuple[int, dict[str, int]]:
    """A rendered part's UTF-8 size and how often each slot stands in it: once per render,
    not once per recipient."""
    slots = (_ADDRESS_SLOT, _UNSUBSCRIBE_SLOT, _PREFERENCES_SLOT, _FOLLOW_SLOT, _FOLLOW_END_SLOT)
    return len(template.encode("utf-8")), {slot: template.count(slot) for slot in slots}


# -- small helpers -------------------------------------------------------------------------------


def _header_text(value: str) -> str:
    return text_line(value, SUBJECT_CHARS).replace('"', "'").replace("<", "(").replace(">", ")")


def _subject(title: str, edition: Edition, language: str | None = "en") -> str:
    """ "digest, Friday 4 December 2026: <the top story's headline>", the headline clean (no
    outlet after it, no section label before it) like the email's own, the day in the
    reader's language ("Freitag, 4. Dezember 2026")."""
    head = f"{_header_text(title) or 'digest'}, {long_day(edition.day, language)}"
    top = lead(edition, 1)
    if not top:
        return head
    story = top[0]
    headline = headline_line(story.title, (o.name for o in story.outlets), SUBJECT_CHARS)
    return clip(f"{head}: {headline}", SUBJECT_CHARS)


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


def sender_domain(sender: str) -> str:
    """The domain of the sender's address, made safe for a Message-ID ("localhost" if none)."""
    return _domain(sender)


def _domain(sender: str) -> str:
    address = parseaddr(sender)[1]
    domain = address.rpartition("@")[2].strip().lower()
    return re.sub(r"[^a-z0-9.-]", "", domain) or "localhost"


def _zone(name: str, *, fallback: str) -> tzinfo:
    return known_zone(name) or known_zone(fallback) or UTC


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

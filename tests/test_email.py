"""Email digests as recipients get them: built, sent through a real local SMTP server with faults,
and parsed back with the `email` package."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from digest.config import EmailConfig
from digest.deliver import (
    MemoryLedgerStore,
    OutboxTransport,
    PermanentDeliveryError,
    Recipient,
    RetryPolicy,
    SmtpTransport,
    TemporaryDeliveryError,
    build_message,
    deliver,
    mime,
    resend,
)
from digest.deliver.message import HTML_BUDGET
from digest.edition import front_page
from digest.models import Edition, Outlet
from digest.render.headlines import first_sentence
from tests import axe
from tests.conftest import CHROMIUM_ARGS, chromium_path
from tests.mailfixtures import (
    ARCHIVE_URL,
    CONFIG,
    DAY,
    GENERATED,
    STORIES,
    TRACKER,
    UNSUBSCRIBE_URL,
    edition,
    front_page_edition,
    hostile_edition,
    huge_edition,
)
from tests.smtpserver import SmtpServer

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
READER = Recipient("reader@example.com", timezone="Europe/Berlin")
POLICY = RetryPolicy(max_attempts=3, backoff=60.0)
NOW = GENERATED + timedelta(minutes=30)
NOTICE = r"it shows (\d+) of (\d+) stories and (\d+) of (\d+) headlines"


def build(ed=None, who: Recipient = READER, **kwargs: object) -> EmailMessage:
    return build_message(
        ed if ed is not None else edition(),
        who,
        CONFIG,
        archive_url=kwargs.pop("archive_url", ARCHIVE_URL),  # type: ignore[arg-type]
        unsubscribe_url=UNSUBSCRIBE_URL,
        **kwargs,  # type: ignore[arg-type]
    )


def parse(msg: EmailMessage) -> EmailMessage:
    """The message as a recipient's client sees it: serialized, then parsed back."""
    parsed = message_from_bytes(msg.as_bytes(), policy=default_policy)
    assert isinstance(parsed, EmailMessage)
    return parsed


def parts(msg: EmailMessage) -> tuple[str, str]:
    """The text and HTML parts, with line endings as Python writes them (SMTP sends CRLF)."""
    text = msg.get_body(("plain",))
    html = msg.get_body(("html",))
    assert text is not None and html is not None
    return tuple(p.get_content().replace("\r\n", "\n") for p in (text, html))  # type: ignore[return-value]


def flat(text: str) -> str:
    """Text with its line wrapping undone, to look for a phrase that may span lines."""
    return " ".join(text.split())


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def named(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.tags if tag == name]


# -- the message ---------------------------------------------------------------------------------


def test_email_is_multipart_alternative_with_text_first_then_html() -> None:
    msg = parse(build())

    assert msg.get_content_type() == "multipart/alternative"
    kinds = [p.get_content_type() for p in msg.iter_parts()]
    assert kinds == ["text/plain", "text/html"]  # clients prefer the last one they can show
    assert not any(p.is_attachment() for p in msg.iter_parts())


def test_text_part_is_readable_with_titles_summaries_outlets_and_links() -> None:
    ed = edition()
    text, _ = parts(parse(build(ed)))

    assert "<" not in text and ">" not in text  # no tags, no <url> noise
    for section in ed.sections:
        assert section.category.upper() in text
        for story in section.stories:
            assert story.title in flat(text)
            assert flat(story.brief_summary) in flat(text)  # wrapped at 72 columns
            assert f"Covered by {len(story.outlets)} outlet" in text
            for outlet in story.outlets:
                assert f"{outlet.name}: {outlet.url}" in text
        for headline in section.headlines:
            assert headline.title in text and headline.url in text
    assert f"Unsubscribe: {UNSUBSCRIBE_URL}" in text
    assert ARCHIVE_URL in text
    assert max(len(line) for line in text.splitlines() if "://" not in line) <= 72


def test_html_part_has_inlined_styles_and_nothing_that_runs_or_loads() -> None:
    _, html = parts(parse(build()))
    tags = Tags(html)

    assert len(html.encode()) < HTML_BUDGET
    assert "<table" in html and 'role="presentation"' in html
    # Styles live on the elements: the story title's font size is inline.
    titles = [a for a in tags.named("h3") if "story-title" in (a.get("class") or "")]
    assert titles and all("font-size:20px" in (a.get("style") or "") for a in titles)
    # What stays in <style> is only what cannot be inlined (the phone layout).
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    assert style is not None and style.group(1).strip().startswith("@media")
    for forbidden in ("script", "img", "iframe", "link", "object", "embed", "form"):
        assert not tags.named(forbidden), forbidden
    # Fixture links are all https, but the contents', which lead to a heading of the mail.
    hrefs = [a.get("href") or "" for a in tags.named("a")]
    ids = {attrs.get("id") for _, attrs in tags.tags}
    assert all(h.startswith("https://") or h[1:] in ids for h in hrefs)
    assert not any(k.startswith("on") for _, attrs in tags.tags for k in attrs)


def test_html_part_shows_every_story_with_outlet_count_and_the_unsubscribe_link() -> None:
    ed = edition()
    _, html = parts(parse(build(ed)))
    hrefs = [a.get("href") for a in Tags(html).named("a")]

    for section in ed.sections:
        for story in section.stories:
            assert story.title in html
            assert story.outlets[0].url in hrefs
            n = len(story.outlets)
            assert f"Covered by {n} outlet{'s' if n != 1 else ''}" in html
    assert UNSUBSCRIBE_URL.replace("&", "&amp;") in html or UNSUBSCRIBE_URL in hrefs
    assert ARCHIVE_URL in hrefs


def test_headers_for_mail_clients_and_one_click_unsubscribe() -> None:
    msg = parse(build())

    assert msg["From"] == CONFIG.from_
    assert msg["To"] == READER.email
    # The subject names the edition's top story: the first of "Top stories".
    top = front_page.lead(edition(), 1)[0]
    assert msg["Subject"] == f"digest, Tuesday 4 March 2025: {top.title}"
    assert parsedate_to_datetime(msg["Date"]) == GENERATED
    assert msg["List-Unsubscribe"] == f"<{UNSUBSCRIBE_URL}>"
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert msg["Auto-Submitted"] == "auto-generated"
    assert re.fullmatch(r"<digest-2025-03-04-[0-9a-f]{16}@news\.example\.org>", msg["Message-ID"])


def test_message_id_is_the_same_for_the_same_edition_and_recipient_only() -> None:
    first = build()
    again = build(edition(headlines=1))  # the edition changed, the digest is the same one
    other = build(who=Recipient("someone@example.com"))
    shouted = build(who=Recipient("Reader@EXAMPLE.com"))

    assert first["Message-ID"] == again["Message-ID"] == shouted["Message-ID"]
    assert first["Message-ID"] != other["Message-ID"]


def test_the_same_edition_builds_the_same_bytes() -> None:
    assert build().as_bytes() == build().as_bytes()


def test_subscribers_sharing_categories_each_get_their_own_address_and_unsubscribe_link() -> None:
    # Their parts are rendered once and shared: nothing of one may end up in the other's email.
    ann = build_message(
        edition(),
        Recipient("ann@example.com"),
        CONFIG,
        archive_url=None,
        unsubscribe_url="https://news.example.org/u?t=ann&x=1",
    )
    bob = build_message(
        edition(),
        Recipient("bob@example.com"),
        CONFIG,
        archive_url=None,
        unsubscribe_url="https://news.example.org/u?t=bob&x=1",
    )

    for msg, mine, other in ((ann, "ann", "bob"), (bob, "bob", "ann")):
        text, html = parts(parse(msg))
        assert f"{mine}@example.com" in text and f"{mine}@example.com" in html
        assert f"Unsubscribe: https://news.example.org/u?t={mine}&x=1" in text
        assert f'href="https://news.example.org/u?t={mine}&amp;x=1"' in html
        assert other not in text and other not in html
        assert "slot.invalid" not in text and "slot.invalid" not in html


def test_an_unknown_time_zone_falls_back_to_the_editions() -> None:
    msg = parse(build(who=Recipient("z@example.com", timezone="Mars/Olympus_Mons")))

    assert msg["Date"].endswith("+0100")  # Europe/Berlin in March
    assert "compiled at 07:30 CET" in parts(msg)[0]


def test_subscriber_gets_only_their_categories() -> None:
    text, html = parts(parse(build(who=Recipient("w@example.com", categories=("world",)))))

    assert STORIES["world"][0][0] in text and STORIES["world"][0][0] in html
    assert STORIES["technology"][0][0] not in text
    assert STORIES["technology"][0][0] not in html
    assert "Top stories in world" in text


def test_subscriber_with_no_news_in_their_categories_gets_a_short_note() -> None:
    text, html = parts(parse(build(who=Recipient("s@example.com", categories=("sports",)))))

    assert "no news in your categories today" in text
    assert "no news in your categories today" in html
    assert UNSUBSCRIBE_URL in text


# -- an edition that leads -------------------------------------------------------------------------

LEAD = re.compile(r'<div class="lead-title"[^>]*>(?:<a href="([^"]*)"[^>]*>)?([^<]*)')
NYT_TITLE = "Opinion | Republicans Are Following Trump to Nowhere - The New York Times"
NYT = Outlet(name="The New York Times", url="https://www.nytimes.example/opinion/nowhere.html")


def story_page(story_id: int) -> str:
    """A story's page in the archive, beside the edition's page (ARCHIVE_URL)."""
    return f"{ARCHIVE_URL}stories/{story_id}.html"


def ranked(ed: Edition) -> Edition:
    """The edition with scores: the stories of the last category rank highest, the first's
    lowest, so the lead crosses categories in an order no section has."""
    n = len(ed.sections)
    return replace(
        ed,
        sections=tuple(
            replace(
                s,
                stories=tuple(
                    replace(st, score=float(10 * i + len(s.stories) - k))
                    for k, st in enumerate(s.stories)
                ),
            )
            for i, s in enumerate(ed.sections[:n])
        ),
    )


def test_the_email_opens_with_the_top_stories_across_the_readers_categories() -> None:
    ed = ranked(edition())
    text, html = parts(parse(build(ed)))

    top = front_page.lead(ed, 3)
    assert [s.category for s in top] == ["finance", "world", "world"]
    found = LEAD.findall(html)
    assert [title for _, title in found] == [s.title for s in top]
    # Each links to its page in the archive; its one line is its brief's first sentence.
    assert [url for url, _ in found] == [story_page(s.id) for s in top]
    assert html.index("Top stories") < html.index('id="c-technology"')
    assert flat(STORIES["finance"][0][1]) in flat(html)
    assert f"Finance · {len(top[0].outlets)} outlet" in html
    # The plain text leads the same way, with the links spelled out.
    lead = text[text.index("TOP STORIES") : text.index("TECHNOLOGY")]
    assert [ln.split(". ", 1)[1] for ln in lead.splitlines() if ln[:2] in ("1.", "2.", "3.")] == [
        s.title for s in top
    ]
    assert all(story_page(s.id) in lead for s in top)
    # A lead story keeps its whole entry in its category.
    assert html.count(f'href="{story_page(top[0].id)}"') == 2


def test_without_an_archive_address_the_top_stories_link_to_their_first_outlet() -> None:
    ed = ranked(edition())
    _, html = parts(parse(build(ed, archive_url=None)))

    assert [url for url, _ in LEAD.findall(html)] == [
        s.outlets[0].url for s in front_page.lead(ed, 3)
    ]


def test_the_number_of_top_stories_is_configured_and_one_category_needs_none() -> None:
    ed = ranked(edition())
    _, html = parts(parse(build(ed, lead=1)))
    assert len(LEAD.findall(html)) == 1
    _, html = parts(parse(build(ed, lead=0)))
    assert "Top stories" not in html
    # A reader of one category: the category opens with its top stories already.
    _, html = parts(parse(build(ed, who=Recipient("w@example.com", categories=("world",)))))
    assert "Top stories" not in html and not LEAD.findall(html)


def font_sizes(html: str, cls: str) -> list[int]:
    """The inlined font size (px) of each element of class `cls`, in order."""
    styles = re.findall(rf'class="{cls}"[^>]*style="([^"]*)"', html)
    return [int(re.findall(r"font-size:\s*(\d+)px", style)[-1]) for style in styles]


def size_before(html: str, text: str) -> int:
    """The font size of the element whose text begins with `text` (the last set before it)."""
    at = flat(html).index(flat(text))
    return int(re.findall(r"font-size:\s*(\d+)px", flat(html)[:at])[-1])


def test_the_top_story_weighs_most_with_a_larger_headline_and_brief() -> None:
    ed = ranked(edition())
    _, html = parts(parse(build(ed)))
    first, *others = font_sizes(html, "lead-title")
    assert others and all(first > size for size in others)
    assert first > max(font_sizes(html, "story-title"))  # above every category's stories too
    [line] = font_sizes(html, "top-text")
    second = front_page.lead(ed, 3)[1]
    assert line > size_before(html, first_sentence(second.brief_summary)[:40])
    # A reader of one category, without "Top stories": its first story weighs most.
    _, html = parts(parse(build(ed, who=Recipient("w@example.com", categories=("world",)))))
    first, *others = font_sizes(html, "story-title")
    assert others and all(first > size for size in others)
    [brief] = font_sizes(html, "top-text")
    world = next(s for s in ed.sections if s.category == "world")
    assert brief > size_before(html, world.stories[1].brief_summary[:40])


def test_the_contents_link_every_category_with_its_story_count_to_its_heading() -> None:
    text, html = parts(parse(build()))

    contents = re.search(r'<td class="contents"[^>]*>(.*?)</td>', html, re.S)
    assert contents is not None
    links = re.findall(r'<a href="#([^"]+)"[^>]*>([^<]+)</a>&nbsp;\((\d+)\)', contents.group(1))
    assert [(name, int(n)) for _, name, n in links] == [
        (c.capitalize(), len(stories)) for c, stories in STORIES.items()
    ]
    ids = {attrs.get("id") for _, attrs in Tags(html).tags}
    assert all(anchor in ids for anchor, _, _ in links)
    assert "In this email: Technology (3), World (2), Finance (1)." in text


def test_the_subject_names_the_top_story_as_a_clean_headline() -> None:
    ed = edition()
    first = ed.sections[0]
    story = replace(first.stories[1], title=NYT_TITLE, outlets=(NYT,), score=9.0)
    ed = replace(ed, sections=(replace(first, stories=(first.stories[0], story)), *ed.sections[1:]))
    msg = parse(build(ed))
    text, html = parts(msg)

    clean = "Republicans Are Following Trump to Nowhere"
    # (Folded after "Subject:" as it is long: unfolded, the value's leading space goes.)
    assert msg["Subject"].strip() == f"digest, Tuesday 4 March 2025: {clean}"
    # The same headline everywhere in the mail: in the lead and in its category.
    assert NYT_TITLE not in html and "New York Times</a>" in html
    assert html.count(f">{clean}</a>") == 2
    assert f"1. {clean}" in text and "Opinion |" not in flat(text)
    assert "Nowhere - The New York Times" not in flat(text)


def test_more_headlines_are_bounded_and_the_rest_are_counted_and_linked() -> None:
    ed = edition(headlines=8)
    text, html = parts(parse(build(ed)))

    for section in ed.sections:
        page = f"{ARCHIVE_URL}{section.category}.html"
        assert f'<a href="{page}"' in html
        assert f"3 more headlines in the archive: {page}" in text
    shown = [a.get("href") for a in Tags(html).named("a")]
    assert ed.sections[0].headlines[4].url in shown and ed.sections[0].headlines[5].url not in shown
    assert flat(html).count("3 more headlines in the archive") == 3
    # Configured, and without an archive address the rest are counted still.
    _, html = parts(parse(build(ed, headlines=2, archive_url=None)))
    assert flat(html).count("6 more headlines in the archive") == 3
    assert ed.sections[0].headlines[2].url not in html


def test_headlines_shown_lose_their_own_outlets_suffix_only() -> None:
    ed = edition(headlines=2)
    first = ed.sections[0]
    own = replace(first.headlines[0], title="Battery startup raises funds - Reuters")
    other = replace(first.headlines[1], title="Bus network approved - Reuters")  # The Guardian's
    ed = replace(ed, sections=(replace(first, headlines=(own, other)), *ed.sections[1:]))
    text, html = parts(parse(build(ed)))

    assert ">Battery startup raises funds</a>" in html and "funds - Reuters" not in text
    assert ">Bus network approved - Reuters</a>" in html


def test_every_story_headline_links_to_its_page_in_the_archive() -> None:
    ed = edition()
    _, html = parts(parse(build(ed)))

    titles = re.findall(r'<h3 class="story-title"[^>]*><a href="([^"]+)"', html)
    assert titles == [story_page(s.id) for section in ed.sections for s in section.stories]
    # The outlets are still each linked, and counted as the story has them.
    for story in (s for section in ed.sections for s in section.stories):
        assert all(o.url in html for o in story.outlets[:5])


def test_outlets_are_counted_alike_in_the_lead_and_the_story_even_without_a_link() -> None:
    ed = ranked(edition())
    top = front_page.lead(ed, 1)[0]
    named = (*top.outlets, Outlet(name="Unlinked Daily", url="javascript:alert(1)"))
    top_shown = replace(top, outlets=named)
    sections = tuple(
        replace(s, stories=tuple(top_shown if st.id == top.id else st for st in s.stories))
        for s in ed.sections
    )
    text, html = parts(parse(build(replace(ed, sections=sections))))

    n = len(named)
    assert f"Covered by {n} outlets" in text
    assert f"Finance · {n} outlets" in html and f"Covered by {n} outlets" in flat(html)
    # Every outlet is counted, linked or not: those not shown are "more".
    shown = min(5, n - 1)
    assert f"and {n - shown} more" in flat(html)


def test_huge_edition_is_trimmed_under_the_budget_with_a_link_to_the_full_edition() -> None:
    ed = huge_edition()
    msg = parse(build(ed, headlines=200))  # an operator who wants every headline in the mail
    text, html = parts(msg)
    size = len(html.encode())

    assert size <= HTML_BUDGET
    assert size > HTML_BUDGET * 0.8  # trimmed to fit, not gutted
    assert "This email is shortened" in html and "This email is shortened" in text
    notice = re.search(NOTICE, flat(text))
    assert notice is not None
    shown_stories, total_stories, shown_headlines, total_headlines = map(int, notice.groups())
    assert total_stories == 240 and total_headlines == 1200
    # Headlines go before stories: none is left while stories had to go.
    assert shown_headlines == 0 and 0 < shown_stories < total_stories
    assert f'<a href="{ARCHIVE_URL}"' in html and f"Read the full edition: {ARCHIVE_URL}" in text
    # Every category keeps its top story.
    for section in ed.sections:
        assert section.stories[0].title in flat(text)


def test_large_edition_loses_headlines_first_and_keeps_every_story() -> None:
    ed = huge_edition(categories=3, stories=5, headlines=150, outlets=3)
    text, html = parts(parse(build(ed, headlines=150)))

    assert len(html.encode()) <= HTML_BUDGET
    for section in ed.sections:
        for story in section.stories:
            assert story.title in html
        assert section.headlines[0].title in html  # each category keeps its first headlines
    notice = re.search(NOTICE, flat(text))
    assert notice is not None
    assert notice.group(1) == notice.group(2) == "15"
    assert 0 < int(notice.group(3)) < 450


def test_trimmed_email_without_an_archive_url_says_where_the_rest_is() -> None:
    _, html = parts(parse(build(huge_edition(), archive_url=None)))

    assert "The full edition is in the archive." in html
    assert len(html.encode()) <= HTML_BUDGET


def test_hostile_titles_summaries_and_links_are_inert_in_both_parts() -> None:
    msg = parse(build(hostile_edition()))
    text, html = parts(msg)
    tags = Tags(html)

    # HTML: nothing executes, loads or links anywhere but http(s).
    for forbidden in ("script", "img", "iframe", "svg", "object", "embed"):
        assert not tags.named(forbidden), forbidden
    assert not any(k.startswith("on") for _, attrs in tags.tags for k in attrs)
    hrefs = [a.get("href") or "" for a in tags.named("a")]
    assert hrefs and all(h.startswith(("https://", "http://")) for h in hrefs)
    assert "https://safe.example/markets?a=1&b=2" in hrefs
    for bad in ("javascript:", "data:text", "vbscript:", TRACKER):
        assert bad not in html and bad not in text
    # The half-open tag cannot become markup: it was escaped, so it is text on the page.
    assert "&lt;img src=x onerror=alert(1)" in html
    assert "Markets rally &amp; &#34;bonds&#34;" in html or 'Markets rally &amp; "bonds"' in html
    # Text: the words survive, the markup does not.
    assert 'Markets rally & "bonds"' in text
    # Complete tags are gone; the half-open one stays as the harmless text it is in text/plain.
    assert "<script" not in text and "<iframe" not in text and '<img src="' not in text
    assert "Shares rose." in text
    # A CR/LF in scraped text cannot add a header.
    assert msg["Bcc"] is None
    assert "\n" not in msg["Subject"]


def test_header_injection_through_the_recipient_is_refused() -> None:
    with pytest.raises(PermanentDeliveryError, match="not an email address"):
        build(who=Recipient("reader@example.com\r\nBcc: victim@example.org"))
    with pytest.raises(PermanentDeliveryError):
        build(who=Recipient("not an address"))


def test_unsubscribe_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="unsubscribe"):
        build_message(
            edition(),
            READER,
            CONFIG,
            archive_url=None,
            unsubscribe_url="javascript:alert(1)",
        )


def file_names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# -- the outbox ----------------------------------------------------------------------------------


async def test_outbox_writes_one_file_per_message_and_a_resend_overwrites_it(
    tmp_path: Path,
) -> None:
    outbox = OutboxTransport(tmp_path / "outbox")
    msg = build()

    first = await outbox.send(msg)
    second = await outbox.send(build())
    files = list((tmp_path / "outbox").iterdir())

    assert len(files) == 1 and files[0].suffix == ".eml"
    assert files[0].name.startswith("digest-2025-03-04-")
    assert str(files[0]) in first.reply and first.reply == second.reply
    back = message_from_bytes(files[0].read_bytes(), policy=default_policy)
    assert back["Message-ID"] == msg["Message-ID"]
    assert parts(back) == parts(parse(msg))  # type: ignore[arg-type]


async def test_outbox_delivery_twice_leaves_one_file_per_recipient(tmp_path: Path) -> None:
    store = MemoryLedgerStore()
    outbox = OutboxTransport(tmp_path)
    messages = {
        r: build(who=Recipient(r)) for r in ("a@example.com", "b@example.com", "c@example.com")
    }

    first = await deliver(store, DAY, messages, outbox, NOW, policy=POLICY)
    second = await deliver(store, DAY, messages, outbox, NOW, policy=POLICY)

    assert len(first.sent) == 3 and not second.sent and second.already_sent == 3
    names = file_names(tmp_path)
    assert len(names) == 3 and all(n.endswith(".eml") for n in names)  # no temp files left


# -- SMTP ----------------------------------------------------------------------------------------


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with SmtpServer(slow_seconds=2.0) as server:
        yield server


def smtp_config(server: SmtpServer, **changes: object) -> EmailConfig:
    base: dict[str, object] = {
        "transport": "smtp",
        "from": CONFIG.from_,
        "host": server.host,
        "port": server.port,
        "security": "none",
        "timeout": 0.5,
    }
    return EmailConfig.model_validate({**base, **changes})


async def test_smtp_delivers_the_message_intact(smtp: SmtpServer) -> None:
    msg = build()
    async with SmtpTransport(smtp_config(smtp)) as transport:
        result = await transport.send(msg)

    assert result.reply.startswith("250 ")
    [got] = smtp.received
    assert got.mail_from == "digest@news.example.org"
    assert got.rcpt_tos == (READER.email,)
    back = got.message()
    assert back["Message-ID"] == msg["Message-ID"]
    assert parts(back) == parts(parse(msg))


async def test_lines_that_begin_with_a_dot_arrive_as_written(smtp: SmtpServer) -> None:
    # A line of one "." would end the message early if it were not doubled on the wire.
    text = ".\n.. a leading pair\n.hidden\nthe end"
    msg = EmailMessage(policy=mime.POLICY)
    msg["From"] = CONFIG.from_
    msg["To"] = READER.email
    msg["Message-ID"] = "<dots@news.example.org>"
    mime.alternative(msg, text, f"<p>{text}</p>")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        await transport.send(msg)
        await transport.send(build())  # the connection is still in step after it

    first, second = smtp.received
    assert parts(first.message()) == (text + "\n", f"<p>{text}</p>\n")
    assert second.message_id == build()["Message-ID"]


async def test_smtp_reuses_one_connection_and_survives_an_idle_disconnect(
    smtp: SmtpServer,
) -> None:
    async with SmtpTransport(smtp_config(smtp)) as transport:
        await transport.send(build(who=Recipient("a@example.com")))
        smtp.kick()  # the server drops the idle connection
        await asyncio.sleep(0.05)
        await transport.send(build(who=Recipient("b@example.com")))

    assert [r.rcpt_tos for r in smtp.received] == [("a@example.com",), ("b@example.com",)]


@pytest.mark.parametrize(
    ("fault", "code"),
    [("451", 451), ("421", 421)],
)
async def test_smtp_4xx_is_a_temporary_failure_with_the_reply(
    smtp: SmtpServer, fault: str, code: int
) -> None:
    smtp.fail(fault)  # type: ignore[arg-type]
    async with SmtpTransport(smtp_config(smtp)) as transport:
        with pytest.raises(TemporaryDeliveryError) as caught:
            await transport.send(build())
        # The next message goes through on a fresh connection.
        await transport.send(build())

    assert caught.value.code == code and caught.value.reply.startswith(str(code))
    assert str(code) in str(caught.value)
    assert not caught.value.transport_down and not caught.value.maybe_delivered
    assert len(smtp.received) == 1


async def test_smtp_550_is_a_permanent_failure_with_the_reply(smtp: SmtpServer) -> None:
    smtp.fail("550")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        with pytest.raises(PermanentDeliveryError) as caught:
            await transport.send(build())

    assert caught.value.code == 550
    assert "User unknown" in caught.value.reply
    assert not smtp.received


async def test_smtp_drop_after_data_is_temporary_and_may_have_been_delivered(
    smtp: SmtpServer,
) -> None:
    smtp.fail("drop")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        with pytest.raises(TemporaryDeliveryError) as caught:
            await transport.send(build())

    assert caught.value.maybe_delivered
    assert "may have been delivered" in caught.value.reply
    assert len(smtp.dropped) == 1  # the server had the whole message


async def test_smtp_slow_server_times_out_as_a_temporary_failure(smtp: SmtpServer) -> None:
    smtp.fail("slow")
    async with SmtpTransport(smtp_config(smtp, timeout=0.3)) as transport:
        with pytest.raises(TemporaryDeliveryError) as caught:
            await transport.send(build())

    assert "timeout" in caught.value.reply and caught.value.maybe_delivered


async def test_smtp_refused_connection_means_the_server_is_down() -> None:
    with SmtpServer() as server:
        config = smtp_config(server)
    # Stopped: nothing listens on that port any more.
    async with SmtpTransport(config) as transport:
        with pytest.raises(TemporaryDeliveryError) as caught:
            await transport.send(build())

    assert caught.value.transport_down
    assert "cannot connect" in str(caught.value)


async def test_smtp_starttls_required_but_not_offered_never_sends_in_clear(
    smtp: SmtpServer,
) -> None:
    async with SmtpTransport(smtp_config(smtp, security="starttls")) as transport:
        with pytest.raises(TemporaryDeliveryError) as caught:
            await transport.send(build())

    assert caught.value.transport_down
    assert not smtp.received


async def test_smtp_logs_in_when_a_username_is_set() -> None:
    with SmtpServer(logins={"digest": "s3cret"}) as server:
        config = smtp_config(server, username="digest")
        async with SmtpTransport(config, "s3cret") as transport:
            await transport.send(build())
        async with SmtpTransport(config, "wrong") as transport:
            with pytest.raises(TemporaryDeliveryError) as caught:
                await transport.send(build())

    assert set(server.auth_attempts) == {"digest"}  # the client tries PLAIN, then LOGIN
    assert len(server.received) == 1
    assert caught.value.transport_down and caught.value.code == 535


# -- the ledger over SMTP: each digest once ------------------------------------------------------


def recipients(*names: str) -> dict[str, EmailMessage]:
    return {f"{n}@example.com": build(who=Recipient(f"{n}@example.com")) for n in names}


async def test_451_then_ok_is_sent_once_after_the_retry_delay(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    messages = recipients("ann")
    smtp.fail("451")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        first = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)
        early = await deliver(
            store, DAY, messages, transport, NOW + timedelta(seconds=59), policy=POLICY
        )
        later = await deliver(
            store, DAY, messages, transport, NOW + timedelta(seconds=60), policy=POLICY
        )
        after = await deliver(
            store, DAY, messages, transport, NOW + timedelta(hours=1), policy=POLICY
        )

    [retry] = first.retrying
    assert retry.state == "pending" and retry.attempts == 1
    assert retry.next_attempt_at == NOW + timedelta(seconds=60)
    assert retry.last_reply is not None and retry.last_reply.startswith("451")
    assert not early.sent and early.waiting
    [sent] = later.sent
    assert sent.state == "sent" and sent.attempts == 2 and sent.last_reply.startswith("250")
    assert not after.sent and after.already_sent == 1
    assert len(smtp.received) == 1


async def test_550_fails_permanently_and_keeps_the_reply(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    messages = recipients("bob", "cat")
    smtp.fail("550")  # the first in the plan: bob
    async with SmtpTransport(smtp_config(smtp)) as transport:
        report = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)
        again = await deliver(
            store, DAY, messages, transport, NOW + timedelta(days=1), policy=POLICY
        )

    [failed] = report.failed
    assert failed.recipient == "bob@example.com" and failed.state == "failed"
    assert failed.last_reply is not None and "550 5.1.1" in failed.last_reply
    assert [d.recipient for d in report.sent] == ["cat@example.com"]
    assert not again.sent and again.already_failed == 1
    assert [r.rcpt_tos for r in smtp.received] == [("cat@example.com",)]


async def test_temporary_failures_become_permanent_after_max_attempts(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    messages = recipients("dan")
    smtp.fail("451", "451", "451", "451")
    now = NOW
    async with SmtpTransport(smtp_config(smtp)) as transport:
        for _ in range(5):
            await deliver(store, DAY, messages, transport, now, policy=POLICY)
            now += timedelta(hours=1)

    [row] = await store.load(DAY)
    assert row.state == "failed" and row.attempts == POLICY.max_attempts
    assert row.last_reply is not None and "gave up after 3 attempts" in row.last_reply
    assert not smtp.received


async def test_drop_after_data_is_retried_and_the_digest_arrives(smtp: SmtpServer) -> None:
    """The at-least-once edge: the server had the message when the connection dropped, so the
    recipient may get it twice, both copies with the same Message-ID (one in a mail store that
    deduplicates by it). Not retrying would instead risk a digest lost without trace."""
    store = MemoryLedgerStore()
    messages = recipients("eve")
    smtp.fail("drop")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        first = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)
        second = await deliver(
            store, DAY, messages, transport, NOW + timedelta(minutes=5), policy=POLICY
        )

    [retry] = first.retrying
    assert retry.last_reply is not None and "may have been delivered" in retry.last_reply
    [sent] = second.sent
    assert sent.attempts == 2
    [got] = smtp.received
    [dropped] = smtp.dropped
    assert got.message_id == dropped.message_id == messages["eve@example.com"]["Message-ID"]


async def test_slow_server_is_retried_like_a_drop(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    messages = recipients("fay")
    smtp.fail("slow")
    async with SmtpTransport(smtp_config(smtp, timeout=0.3)) as transport:
        first = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)
        second = await deliver(
            store, DAY, messages, transport, NOW + timedelta(minutes=5), policy=POLICY
        )

    assert [d.recipient for d in first.retrying] == ["fay@example.com"]
    assert [d.recipient for d in second.sent] == ["fay@example.com"]


async def test_crash_between_sending_and_recording_is_reported_and_not_resent(
    smtp: SmtpServer,
) -> None:
    store = MemoryLedgerStore()
    messages = recipients("gus")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        store.fail_save = RuntimeError("killed")  # the process dies right after the send
        with pytest.raises(RuntimeError, match="killed"):
            await deliver(store, DAY, messages, transport, NOW, policy=POLICY)
        [row] = await store.load(DAY)
        assert (
            row.state == "sending" and row.message_id == messages["gus@example.com"]["Message-ID"]
        )

        second = await deliver(
            store, DAY, messages, transport, NOW + timedelta(hours=1), policy=POLICY
        )
        assert [d.recipient for d in second.stuck] == ["gus@example.com"]
        assert not second.sent and not second.ok
        assert len(smtp.received) == 1  # not sent again

        reopened = await resend(store, DAY, NOW + timedelta(hours=2), ["gus@example.com"])
        third = await deliver(
            store, DAY, messages, transport, NOW + timedelta(hours=2), policy=POLICY
        )

    assert [d.state for d in reopened] == ["pending"]
    assert [d.recipient for d in third.sent] == ["gus@example.com"]
    assert len(smtp.received) == 2  # the operator asked for it
    assert smtp.received[0].message_id == smtp.received[1].message_id


async def test_delivering_twice_sends_nothing_twice(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    messages = recipients("hal", "ida", "jon")
    async with SmtpTransport(smtp_config(smtp)) as transport:
        first = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)
        second = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)

    assert len(first.sent) == 3 and first.ok
    assert not second.sent and second.already_sent == 3 and second.ok
    assert sorted(r.rcpt_tos[0] for r in smtp.received) == sorted(messages)


async def test_two_runs_at_once_send_each_digest_once(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    messages = recipients(*(f"r{i}" for i in range(12)))
    async with SmtpTransport(smtp_config(smtp)) as one, SmtpTransport(smtp_config(smtp)) as two:
        a, b = await asyncio.gather(
            deliver(store, DAY, messages, one, NOW, policy=POLICY),
            deliver(store, DAY, messages, two, NOW, policy=POLICY),
        )

    assert len(a.sent) + len(b.sent) == 12
    assert len(smtp.received) == 12
    assert len({r.rcpt_tos for r in smtp.received}) == 12


async def test_server_down_tries_one_row_and_leaves_the_rest_pending() -> None:
    with SmtpServer() as server:
        config = smtp_config(server)
    store = MemoryLedgerStore()
    messages = recipients("kim", "lee", "max")
    async with SmtpTransport(config) as transport:
        report = await deliver(store, DAY, messages, transport, NOW, policy=POLICY)

    assert len(report.retrying) == 1 and len(report.deferred) == 2
    rows = {d.recipient: d for d in await store.load(DAY)}
    assert [d.attempts for d in rows.values()].count(0) == 2
    assert all(d.state == "pending" for d in rows.values())


async def test_a_recipient_without_a_message_is_reported_not_sent(smtp: SmtpServer) -> None:
    store = MemoryLedgerStore()
    async with SmtpTransport(smtp_config(smtp)) as transport:
        await deliver(store, DAY, recipients("ned", "ola"), transport, NOW, policy=POLICY)
        await resend(store, DAY, NOW, ["ola@example.com"], include_sent=True)
        # ola unsubscribed in between: no message for her any more.
        report = await deliver(store, DAY, recipients("ned"), transport, NOW, policy=POLICY)

    assert [d.recipient for d in report.missing] == ["ola@example.com"]
    assert len(smtp.received) == 2


# -- how it looks --------------------------------------------------------------------------------


@pytest.mark.slow
async def test_email_renders_in_chromium_and_is_kept_as_an_artifact() -> None:
    """test-artifacts/email.html and email.png: the HTML part as a mail client would show it."""
    executable = chromium_path()
    from playwright.async_api import async_playwright

    _, html = parts(parse(build(edition(headlines=3))))
    ARTIFACTS.mkdir(exist_ok=True)
    page_file = ARTIFACTS / "email.html"
    page_file.write_text(html, encoding="utf-8")

    requests: list[str] = []
    errors: list[str] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for width, name in ((760, "email.png"), (390, "email-phone.png")):
                page = await browser.new_page(viewport={"width": width, "height": 900})
                page.on("request", lambda r: requests.append(r.url))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                await page.goto(page_file.as_uri())
                await page.screenshot(path=str(ARTIFACTS / name), full_page=True)
                overflow = await page.evaluate(
                    "document.documentElement.scrollWidth > window.innerWidth + 1"
                )
                assert not overflow, f"the email scrolls sideways at {width}px"
                await page.close()
        finally:
            await browser.close()

    assert not errors
    assert all(url.startswith("file://") for url in requests)  # nothing remote loaded
    assert (ARTIFACTS / "email.png").stat().st_size > 10_000


# Rules about a web page's own landmarks: an email is shown inside the mail client's page, which
# has its main landmark already; one of the email's own would make it two.
EMAIL_SKIPS = ("landmark-one-main", "region")


@pytest.mark.slow
async def test_email_as_sent_passes_the_axe_accessibility_checks(tmp_path: Path) -> None:
    """WCAG 2 A and AA (every text in enough contrast, links told apart from the text around
    them without colour) and best practices, on the HTML part as the outbox writes it."""
    executable = chromium_path()
    from playwright.async_api import async_playwright

    emails = {
        # Several stories with summaries, 1 to 5 outlets each, an "Updated" badge with its
        # "New:" line, headlines.
        "full": build(edition(headlines=3)),
        # Top stories, the contents and "more headlines in the archive".
        "front page": build(front_page_edition()),
        "shortened": build(huge_edition()),  # the notice that it was cut, with its link
        "empty": build(who=Recipient("s@example.com", categories=("sports",))),
    }
    outbox = OutboxTransport(tmp_path / "outbox")
    pages = {}
    for name, msg in emails.items():
        await outbox.send(msg)
        sent = message_from_bytes(outbox.path_for(msg).read_bytes(), policy=default_policy)
        _, html = parts(sent)  # type: ignore[arg-type]
        pages[name] = tmp_path / f"{name.replace(' ', '-')}.html"
        pages[name].write_text(html, encoding="utf-8")
    full = pages["full"].read_text(encoding="utf-8")
    assert full.count("<h3") == 6 and full.count("Covered by") == 6 and 'style="' in full
    assert full.count("<strong>New:</strong>") == 2

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for name, page_file in pages.items():
                for width in (760, 390):
                    page = await browser.new_page(viewport={"width": width, "height": 900})
                    await page.goto(page_file.as_uri())
                    found = await axe.violations_async(page, skip=EMAIL_SKIPS)
                    assert found == [], f"the {name} email at {width}px: {found}"
                    await page.close()
        finally:
            await browser.close()


# Realistic first screens: a phone (390 x 844) and a laptop (1280 x 800).
SCREENS = ((390, 844), (1280, 800))


@pytest.mark.slow
async def test_the_top_stories_are_in_the_first_screen_and_nothing_scrolls_sideways(
    tmp_path: Path,
) -> None:
    """The two-category edition of a Google News-shaped day (5 stories, 10 headlines each):
    the first "Top stories" headline is seen on opening the mail, on a phone and a laptop; the
    contents lead to their category; at 390 px the page is no wider than the screen."""
    executable = chromium_path()
    from playwright.async_api import async_playwright

    _, html = parts(parse(build(front_page_edition())))
    page_file = tmp_path / "email.html"
    page_file.write_text(html, encoding="utf-8")

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for width, height in SCREENS:
                page = await browser.new_page(viewport={"width": width, "height": height})
                await page.goto(page_file.as_uri())
                first = page.locator(".lead-title a").first
                assert await first.inner_text() == "Republicans Are Following Trump to Nowhere"
                box = await first.bounding_box()
                assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, (
                    f"the first top story is not in the first screen at {width}x{height}: {box}"
                )
                wide = await page.evaluate("document.documentElement.scrollWidth")
                assert wide <= width, f"the email is {wide}px wide at {width}px"
                # A category of the contents scrolls its heading into view.
                await page.locator(".contents a", has_text="World").click()
                await page.wait_for_function("location.hash === '#c-world'")
                heading = await page.locator("#c-world").bounding_box()
                assert heading is not None and 0 <= heading["y"] < height / 2
                await page.close()
        finally:
            await browser.close()

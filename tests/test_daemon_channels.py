"""The issue's "done when", with the real daemon: a subscriber with a keyword rule, their own
time, zone and language, and an email plus a webhook channel gets, at their time, one digest
per channel holding only the stories their rule keeps, translated into their language by the
model (the local fake LLM), each exactly once across a clean restart before their time and a
kill -9 after.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.configs import write_config
from tests.conftest import run_cli, serve_in_thread, start_daemon, wait_for
from tests.fake_ddgs import news_rows, write_script
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES
from tests.receivers import Receivers
from tests.smtpserver import SmtpServer

pytestmark = pytest.mark.slow

KEPT = ("Alpine villages get broadband", "E-bike maker recalls")
DROPPED = ("Chipmaker breaks ground", "Research lab releases", "Dock workers end", "Court orders")
ZONES = ("Asia/Tokyo", "America/New_York", "Europe/Berlin", "Pacific/Honolulu", "UTC")


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    yield from serve_in_thread(Receivers())


def their_zone(now: datetime, ahead: timedelta) -> str:
    """A zone in which it is still the schedule's (UTC) day `ahead` from now."""
    for name in ZONES:
        local = now.astimezone(ZoneInfo(name))
        if local.date() == now.date() == (local + ahead).date():
            return name
    pytest.skip("too close to midnight UTC for this test")


def query(folder: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(folder / "digest.db", timeout=5) as conn:
        try:
            return conn.execute(sql).fetchall()
        except sqlite3.OperationalError:
            return []


def stop(daemon, sig: int = signal.SIGTERM) -> None:
    daemon.send_signal(sig)
    daemon.wait(timeout=30)


@pytest.mark.timeout(600)
def test_their_digest_on_every_channel_at_their_time_once_across_restarts(
    tmp_path: Path, threaded_news_web, threaded_llm_server: LLMServer, receivers: Receivers,
    monkeypatch,
) -> None:  # fmt: skip
    llm = threaded_llm_server
    web = threaded_news_web
    now = datetime.now(UTC)
    zone = their_zone(now, timedelta(minutes=4))
    local = now.astimezone(ZoneInfo(zone))
    due_local = (local + timedelta(seconds=150)).replace(second=0, microsecond=0)
    due = due_local.astimezone(UTC)
    monkeypatch.setenv("DONE_WHEN_HOOK", "done-when-hook")  # the webhook's secret part

    with SmtpServer() as smtp:
        write_config(
            tmp_path,
            sources={"categories": ["technology", "world"]},
            email={
                "transport": "smtp",
                "host": "127.0.0.1",
                "port": smtp.port,
                "security": "none",
                "from": "digest@news.example.org",
            },
            schedule={"collect_every": "1d", "publish_at": "00:00", "deliver_every": "10s"},
            llm={"base_url": llm.url, "model": llm.model, "timeout": 10.0, "max_retries": 0},
        )
        script = write_script(
            tmp_path / "ddgs.json",
            news={
                f"{c} news": news_rows(web, [a for a in ARTICLES if a.category == c])
                for c in ("technology", "world")
            },
        )
        hook = f"json://127.0.0.1:{receivers.port}/hooks/{{env:DONE_WHEN_HOOK}}"
        added = run_cli(
            "subscribers", "add", "reader@example.org",
            "--timezone", zone, "--send-at", f"{due_local:%H:%M}",
            "--include", "broadband, e-bike", "--language", "fr", "--channel", hook,
            cwd=tmp_path,
        )  # fmt: skip
        assert added.code == 0, added.stderr

        # A first daemon publishes the day's edition; the reader's time has not come.
        daemon = start_daemon(tmp_path, script)
        try:
            published = "select status from runs where kind = 'publish'"
            assert wait_for(lambda: query(tmp_path, published) == [("ok",)], 90), (
                tmp_path / "daemon.log"
            ).read_text()[-3000:]
            time.sleep(12)  # at least one deliver run
            assert datetime.now(UTC) < due, "the edition took too long for this test"
            assert smtp.received == [] and receivers.of("done-when-hook") == []
            assert query(tmp_path, "select count(*) from deliveries") == [(0,)]
        finally:
            stop(daemon)  # a clean restart before their time

        daemon = start_daemon(tmp_path, script)
        try:
            assert wait_for(lambda: smtp.received and receivers.of("done-when-hook"), 240)
            arrived = datetime.now(UTC)
            assert arrived >= due
            # Recorded as sent (the server's reply comes before the ledger's write): a kill
            # between the two is the at-least-once edge, not what this test is about.
            states = "select state from deliveries"
            assert wait_for(lambda: query(tmp_path, states) == [("sent",), ("sent",)], 30)
        finally:
            stop(daemon, signal.SIGKILL)  # and a kill -9 after it was sent

        daemon = start_daemon(tmp_path, script)
        try:
            time.sleep(25)  # two deliver runs of the restarted daemon
        finally:
            stop(daemon)

    (email,) = smtp.received
    (webhook,) = receivers.of("done-when-hook")
    text = email.message().get_body(("plain",)).get_content()
    for body in (text, webhook.message):
        for title in KEPT:
            assert title in body
        for title in DROPPED:
            assert title not in body
        assert "(traduit par le modèle, original en anglais)" in body  # into French, once
        assert "[fr]" in body.replace("\\[", "[").replace("\\]", "]")  # Markdown escapes it
        assert "preferences?token=" in body
    rows = query(tmp_path, "select channel, state, attempts from deliveries order by channel")
    assert [(c.split(":")[0], s, n) for c, s, n in rows] == [
        ("email", "sent", 1),
        ("json", "sent", 1),
    ]
    assert "done-when-hook" not in str(query(tmp_path, "select url from channels"))
    # One translation per story and language, whichever channel and run sent it.
    asked = llm.translations()
    assert asked and len(asked) == len(set(asked)) and {lang for lang, _ in asked} == {"fr"}

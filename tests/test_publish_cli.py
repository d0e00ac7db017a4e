"""`digest collect && digest deepen && digest publish` as a user runs them: an archive with
feeds, one email per subscriber, and nothing sent twice — via the outbox and via real SMTP."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path

import feedparser
import pytest

from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, NewsWeb
from tests.smtpserver import SmtpServer

pytestmark = pytest.mark.slow

TECH = [a for a in ARTICLES if a.category == "technology"]
WORLD = [a for a in ARTICLES if a.category == "world"]


def smtp_config(port: int) -> dict:
    """The [email] section for the local SMTP server."""
    return {
        "transport": "smtp",
        "host": "127.0.0.1",
        "port": port,
        "security": "none",
        "from": "digest@example.org",
    }


def setup(tmp_path: Path, web: NewsWeb, email: dict | None = None) -> Path:
    write_config(tmp_path, archive={"base_url": "https://news.example.org/digest/"}, email=email)

    script = write_script(
        tmp_path / "ddgs.json",
        news={"technology news": news_rows(web, TECH), "world news": news_rows(web, WORLD)},
    )
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    assert run_cli("deepen", "--top", "2", cwd=tmp_path).code == 0
    for args in (
        ["alice@example.org"],
        ["bob@example.org", "--categories", "world", "--timezone", "Europe/Berlin"],
    ):
        assert run_cli("subscribers", "add", *args, cwd=tmp_path).code == 0
    return tmp_path


def ledger(tmp_path: Path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        return conn.execute("select recipient, state from deliveries order by recipient").fetchall()


def test_publish_writes_the_archive_and_one_email_per_subscriber_once(tmp_path, threaded_news_web):
    setup(tmp_path, threaded_news_web)
    first = run_cli("publish", cwd=tmp_path)
    assert first.code == 0, first.stderr + first.stdout
    site = tmp_path / "site"
    assert (site / "index.html").exists() and (site / "feed.xml").exists()
    feed = feedparser.parse((site / "feed.xml").read_bytes())
    assert len(feed.entries) == 1 and not feed.bozo

    eml = sorted((tmp_path / "outbox").glob("*.eml"))
    assert len(eml) == 2
    messages = {
        m["To"]: m for m in (message_from_bytes(p.read_bytes(), policy=default_policy) for p in eml)
    }
    alice, bob = messages["alice@example.org"], messages["bob@example.org"]
    assert alice.get_content_type() == "multipart/alternative"
    text = alice.get_body(("plain",)).get_content()
    assert TECH[0].title in text and WORLD[0].title in text
    bob_text = bob.get_body(("plain",)).get_content()
    assert WORLD[0].title in bob_text and TECH[0].title not in bob_text  # his categories only
    assert alice["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "unsubscribe?token=" in alice["List-Unsubscribe"]
    assert ledger(tmp_path) == [("alice@example.org", "sent"), ("bob@example.org", "sent")]

    mtimes = {p: p.stat().st_mtime_ns for p in eml}
    again = run_cli("publish", cwd=tmp_path)
    assert again.code == 0, again.stderr
    assert "0 sent, 2 already sent" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in eml} == mtimes  # nothing re-sent
    assert sorted((tmp_path / "outbox").glob("*.eml")) == eml

    listed = json.loads(run_cli("deliveries", "--json", cwd=tmp_path).stdout)
    assert {d["state"] for d in listed} == {"sent"}


def test_publish_over_smtp_retries_a_temporary_failure_and_keeps_a_permanent_one(
    tmp_path, threaded_news_web
):
    with SmtpServer() as smtp:
        email = smtp_config(smtp.port) | {"retry_backoff": 1.0}
        setup(tmp_path, threaded_news_web, email)
        smtp.fail("451", "550")  # alice: try again later; bob: no such user
        first = run_cli("publish", cwd=tmp_path)
        assert first.code == 0, first.stderr + first.stdout
        assert dict(ledger(tmp_path)) == {
            "alice@example.org": "pending",
            "bob@example.org": "failed",
        }
        assert "550" in run_cli("deliveries", cwd=tmp_path).stdout

        import time

        time.sleep(1.2)  # the retry time
        second = run_cli("publish", cwd=tmp_path)
        assert second.code == 0, second.stderr
        assert dict(ledger(tmp_path))["alice@example.org"] == "sent"
        assert [r.rcpt_tos for r in smtp.received] == [("alice@example.org",)]
        third = run_cli("publish", cwd=tmp_path)
        assert third.code == 0
        assert len(smtp.received) == 1  # never twice


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("not-an-email", "must have an @-sign"),
        ("a@b.c\nBcc: x@y.z", "invalid characters"),
        ("a..b@example.org", "two periods in a row"),
        (".a@example.org", "cannot start with a period"),
        ("ü@example.org", "Internationalized characters before the @-sign are not supported"),
    ],
)
def test_bad_subscriber_addresses_are_refused(tmp_path, bad, reason):
    result = run_cli("subscribers", "add", bad, cwd=tmp_path)
    assert result.code == 1 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"digest: error: not an email address: {bad!r} (")
    assert reason in line
    assert run_cli("subscribers", "list", "--json", cwd=tmp_path).stdout.strip() == "[]"


def test_a_stored_address_the_rule_refuses_fails_its_own_row_and_the_others_are_sent(
    tmp_path, threaded_news_web
):
    with SmtpServer() as smtp:
        setup(tmp_path, threaded_news_web, smtp_config(smtp.port))
        # Subscribed by an older version, whose rule let these in.
        with sqlite3.connect(tmp_path / "digest.db") as conn:
            conn.executemany(
                "insert into subscribers (email, timezone, token, created_at) "
                "values (?, 'UTC', ?, '2025-01-01 00:00:00')",
                [("a..b@example.org", "t1"), ("ü@example.org", "t2")],
            )

        first = run_cli("publish", cwd=tmp_path)
        assert first.code == 0, first.stderr + first.stdout
        out = " ".join(first.stdout.split())  # rich wraps long lines
        assert "2 sent" in out and "2 failed" in out
        assert "failed email:a..b@example.org: not sent: not an email address" in out
        assert "two periods in a row" in out
        assert sorted(r.rcpt_tos for r in smtp.received) == [
            ("alice@example.org",),
            ("bob@example.org",),
        ]
        assert dict(ledger(tmp_path)) == {
            "a..b@example.org": "failed",
            "alice@example.org": "sent",
            "bob@example.org": "sent",
            "ü@example.org": "failed",
        }
        rows = json.loads(run_cli("deliveries", "--json", cwd=tmp_path).stdout)
        replies = {d["recipient"]: d["reply"] for d in rows if d["state"] == "failed"}
        assert "two periods in a row" in replies["a..b@example.org"]
        assert "Internationalized characters" in replies["ü@example.org"]
        status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
        assert status["last_runs"]["publish"]["status"] == "partial"
        assert {f["recipient"]: f["reply"] for f in status["failed_deliveries"]} == replies
        shown = " ".join(run_cli("status", cwd=tmp_path).stdout.split())
        assert "failed email" in shown and "two periods in a row" in shown

        again = run_cli("publish", cwd=tmp_path)  # the next run sends nothing twice
        assert again.code == 0, again.stderr
        assert len(smtp.received) == 2
        assert dict(ledger(tmp_path))["a..b@example.org"] == "failed"


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 64 KiB file system (tmpfs) for the archive: the disk fills up while writing it."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_for_the_archive_still_sends_the_emails_and_recovers(
    tmp_path, threaded_news_web, tiny_disk
):
    setup(tmp_path, threaded_news_web)
    config = tmp_path / "digest.toml"
    config.write_text(
        config.read_text().replace("[archive]\n", f'[archive]\ndir = "{tiny_disk / "site"}"\n')
    )
    full = run_cli("publish", cwd=tmp_path)
    assert full.code == 0, full.stderr
    assert "cannot write the archive" in full.stdout and "No space left" in full.stdout
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 2  # the emails still went out
    status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
    assert status["last_runs"]["publish"]["status"] == "partial"

    # The disk grows (the fault clears): the next publish completes the archive.
    subprocess.run(["mount", "-o", "remount,size=16m", str(tiny_disk)], check=True)
    again = run_cli("publish", cwd=tmp_path)
    assert again.code == 0 and ": ok ·" in again.stdout, again.stdout
    assert (tiny_disk / "site" / "index.html").exists()
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 2  # nothing sent twice

"""`digest publish --date` and `digest editions list|remove` as an operator meets them: an
edition of a day in the future or of a day with nothing collected is refused with nothing
written, and an edition made by mistake can be taken back, the archive written again without
it and the ledger keeping what was sent."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from digest.render.layout import edition_path
from tests.configs import write_config
from tests.conftest import run_cli
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, NewsWeb

pytestmark = pytest.mark.slow

TECH = [a for a in ARTICLES if a.category == "technology"]
WORLD = [a for a in ARTICLES if a.category == "world"]


def collected(tmp_path: Path, web: NewsWeb, *readers: str) -> Path:
    """A deployment in UTC with today's headlines collected and `readers` subscribed."""
    write_config(tmp_path, schedule={"timezone": "UTC"})
    script = write_script(
        tmp_path / "ddgs.json",
        news={"technology news": news_rows(web, TECH), "world news": news_rows(web, WORLD)},
    )
    done = run_cli("collect", cwd=tmp_path, ddgs_script=script)
    assert done.code == 0, done.stderr
    for reader in readers:
        assert run_cli("subscribers", "add", reader, cwd=tmp_path).code == 0
    return script


def editions(tmp_path: Path) -> list[dict]:
    listed = run_cli("editions", "list", "--json", cwd=tmp_path)
    assert listed.code == 0, listed.stderr
    return json.loads(listed.stdout)


def today() -> str:
    return datetime.now(UTC).date().isoformat()


@pytest.mark.parametrize(
    ("day", "why"),
    [
        ((datetime.now(UTC) + timedelta(days=1)).date().isoformat(), "is in the future"),
        ("2027-06-01", "is in the future"),
        ("2025-01-01", "no articles were collected on 2025-01-01"),
    ],
)
def test_publish_refuses_a_future_day_and_a_past_day_without_articles_writing_nothing(
    day, why, tmp_path, threaded_news_web
):
    collected(tmp_path, threaded_news_web, "reader@example.org")

    refused = run_cli("publish", "--date", day, cwd=tmp_path)

    assert refused.code == 1
    assert refused.stderr.startswith(f"digest: error: cannot publish {day}: ")
    assert why in refused.stderr
    assert editions(tmp_path) == []
    assert not (tmp_path / "site").exists()  # no archive, no latest.html
    assert not list(tmp_path.glob("outbox/*.eml"))
    assert run_cli("deliveries", "--json", cwd=tmp_path).stdout.strip() == "[]"


def test_a_past_day_with_articles_collected_on_it_can_be_published(tmp_path, threaded_news_web):
    collected(tmp_path, threaded_news_web)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    backdate(tmp_path)

    published = run_cli("publish", "--date", yesterday, "--no-send", cwd=tmp_path)

    assert published.code == 0, published.stderr
    assert [e["day"] for e in editions(tmp_path)] == [yesterday]


def backdate(tmp_path: Path) -> None:
    """The articles collected as if a day earlier (the next collect sees them today again)."""
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        conn.execute(
            "update articles set first_seen = datetime(first_seen, '-1 day'), "
            "last_seen = datetime(last_seen, '-1 day')"
        )


def test_editions_remove_takes_an_edition_out_of_the_archive_and_keeps_the_ledger(
    tmp_path, threaded_news_web
):
    script = collected(tmp_path, threaded_news_web, "reader@example.org")
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date()
    backdate(tmp_path)
    assert run_cli("publish", "--date", yesterday.isoformat(), cwd=tmp_path).code == 0
    assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
    assert run_cli("publish", cwd=tmp_path).code == 0
    listed = editions(tmp_path)
    assert [e["day"] for e in listed] == [today(), yesterday.isoformat()]
    assert listed[0]["deliveries"] == {"sent": 1} and listed[0]["headlines"] >= 1
    site = tmp_path / "site"
    assert (site / edition_path(datetime.now(UTC).date())).exists()

    removed = run_cli("editions", "remove", today(), cwd=tmp_path)

    assert removed.code == 0, removed.stderr
    assert f"removed the edition of {today()}" in removed.stdout
    assert "1 message(s) of it were sent already: they stay in the ledger" in removed.stderr
    assert [e["day"] for e in editions(tmp_path)] == [yesterday.isoformat()]
    assert not (site / edition_path(datetime.now(UTC).date())).exists()
    assert (site / edition_path(yesterday)).exists()
    # The front pages and the feed are the archive without it: yesterday's is the latest.
    now = datetime.now(UTC).date()
    for page in ("index.html", "feed.xml"):
        text = (site / page).read_text()
        assert edition_path(yesterday).removesuffix("index.html") in text, page
        assert edition_path(now).removesuffix("index.html") not in text, page
    title = f"<title>{yesterday:%A} {yesterday.day} {yesterday:%B %Y}"
    assert title in (site / "latest.html").read_text()
    ledger = json.loads(run_cli("deliveries", "--json", cwd=tmp_path).stdout)
    assert {(r["edition"], r["state"]) for r in ledger} == {
        (today(), "sent"),
        (yesterday.isoformat(), "sent"),
    }

    again = run_cli("editions", "remove", today(), cwd=tmp_path)
    assert again.code == 1
    assert f"there is no edition of {today()}" in again.stderr


def smtp_email(port: int) -> dict:
    return {"transport": "smtp", "host": "127.0.0.1", "port": port, "security": "none"}


def test_publish_counts_the_emails_still_waiting_for_a_retry_as_status_does(
    tmp_path, threaded_news_web
):
    """An email that failed for now (451, as after a full disk) waits for its retry
    time; the next publish, before that time, says it waits, as `digest status` does."""
    from tests.smtpserver import SmtpServer

    with SmtpServer() as smtp:
        collected(tmp_path, threaded_news_web, "reader@example.org")
        write_config(
            tmp_path,
            schedule={"timezone": "UTC"},
            email=smtp_email(smtp.port) | {"retry_backoff": 3600.0},
        )
        smtp.fail("451")
        first = run_cli("publish", cwd=tmp_path)
        assert first.code == 0, first.stderr
        assert "1 to retry" in first.stdout

        again = run_cli("publish", cwd=tmp_path)

        assert again.code == 0, again.stderr
        assert "0 sent" in again.stdout and "1 to retry" in again.stdout, again.stdout
        assert "waiting to be sent again at" in again.stdout
        status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
        assert status["deliveries"]["pending"] == 1
        assert status["last_runs"]["publish"]["status"] == "partial"
        assert status["last_runs"]["publish"]["counts"]["retrying"] == 1
        assert smtp.received == []


def test_publish_counts_an_earlier_editions_email_still_waiting(tmp_path, threaded_news_web):
    from tests.smtpserver import SmtpServer

    with SmtpServer() as smtp:
        script = collected(tmp_path, threaded_news_web, "reader@example.org")
        write_config(
            tmp_path,
            schedule={"timezone": "UTC"},
            email=smtp_email(smtp.port) | {"retry_backoff": 3600.0},
        )
        yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
        backdate(tmp_path)
        smtp.fail("451")
        assert run_cli("publish", "--date", yesterday, cwd=tmp_path).code == 0
        assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0

        today_ = run_cli("publish", cwd=tmp_path)

        assert today_.code == 0, today_.stderr
        assert "1 sent" in today_.stdout and "1 to retry" in today_.stdout, today_.stdout
        assert f"edition {yesterday}: waiting to be sent again" in today_.stdout
        status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
        assert status["deliveries"]["pending"] == 1


def test_an_edition_of_a_past_day_holds_no_story_that_began_after_it(tmp_path, threaded_news_web):
    web = threaded_news_web
    write_config(tmp_path, schedule={"timezone": "UTC"})
    tech = write_script(tmp_path / "tech.json", news={"technology news": news_rows(web, TECH)})
    world = write_script(tmp_path / "world.json", news={"world news": news_rows(web, WORLD)})
    assert run_cli("collect", "--category", "technology", cwd=tmp_path, ddgs_script=tech).code == 0
    backdate(tmp_path)  # technology was collected yesterday, world today
    assert run_cli("collect", "--category", "world", cwd=tmp_path, ddgs_script=world).code == 0
    assert run_cli("deepen", "--top", "2", cwd=tmp_path).code == 0
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date()

    published = run_cli("publish", "--date", yesterday.isoformat(), "--no-send", cwd=tmp_path)

    assert published.code == 0, published.stderr
    page = (tmp_path / "site" / edition_path(yesterday)).read_text()
    assert any(a.title in page for a in TECH)
    assert not any(a.title in page for a in WORLD)


def test_removing_an_edition_skips_its_messages_not_sent_yet(tmp_path, threaded_news_web):
    from digest.commands.editions_manage import EDITION_REMOVED
    from tests.smtpserver import SmtpServer

    with SmtpServer() as smtp:
        collected(tmp_path, threaded_news_web, "reader@example.org")
        write_config(
            tmp_path,
            schedule={"timezone": "UTC"},
            email=smtp_email(smtp.port) | {"retry_backoff": 1.0},
        )
        smtp.fail("451")
        assert run_cli("publish", cwd=tmp_path).code == 0

        removed = run_cli("editions", "remove", today(), cwd=tmp_path)

        assert removed.code == 0, removed.stderr
        assert "1 message(s) of it not sent yet are skipped" in removed.stdout
        (row,) = json.loads(run_cli("deliveries", "--json", cwd=tmp_path).stdout)
        assert (row["state"], row["reply"]) == ("skipped", EDITION_REMOVED)
        assert run_cli("publish", "--no-send", cwd=tmp_path).code == 0  # the day again
        assert smtp.received == []

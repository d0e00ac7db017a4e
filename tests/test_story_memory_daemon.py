"""Issue 31's two days through the daemon (`digest run` as a real process), with kill -9 and
restarts: day 1 A reports 12 dead; day 2 B and C report "at least 30" and A updates its article
to 30. A reader and a follower see the correction, the update and the alerts once each, however
often the daemon dies on the way.

The daemon takes the wall clock, and no setting moves it. So day 1 is the real yesterday, run
in this process as tests/test_story_memory.py runs it (deepen's clock set to yesterday evening,
what collect and deepen stored dated back to it, the edition of yesterday published by name);
day 2 is today, and the daemon does all of it: collect, deepen, publish, deliver, alerts. It is
killed -9 three times on day 2 (while the model writes the summary; between the timeline's new
entries and the follower's alert of them; with the day done) and started again each time.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from datetime import time as clock
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path

import pytest

from digest.app import App
from digest.config import load_config
from digest.jobs.collect import collect
from digest.jobs.deepen import deepen
from digest.jobs.publish import publish
from digest.render import story_path
from tests import test_story_memory as memory
from tests.configs import write_config
from tests.conftest import run_cli, start_cli, wait_for
from tests.newsweb import Route
from tests.test_daemon import daemon_up, freeze_when, idle, query, running
from tests.test_whats_new import email_parts, plain

pytestmark = pytest.mark.slow

FOLLOWER = "follower@example.org"
COUNTED = {
    "events": "select count(*) from story_events",
    "deliveries": "select count(*) from deliveries",
    "sent": "select count(*) from deliveries where state = 'sent'",
    "alerts": "select count(*) from follow_alerts",
    "alerts sent": "select count(*) from follow_alerts where state = 'sent'",
}


def counts(folder: Path) -> dict[str, int]:
    """The rows a lost or doubled run would change, and the messages in the outbox."""
    found = {name: query(folder, sql)[0][0] for name, sql in COUNTED.items()}
    found["eml"] = len(list((folder / "outbox").glob("*.eml")))
    return found


def outbox(folder: Path) -> dict[str, int]:
    """Each message file and when it was written: a re-send rewrites the file of its Message-ID
    (the outbox never holds two), so a doubled send shows as a newer time."""
    return {p.name: p.stat().st_mtime_ns for p in (folder / "outbox").glob("*.eml")}


def alerts_to(folder: Path, email: str) -> list[str]:
    """The plain text of the follow alerts `email` got, oldest first."""
    found = []
    for path in sorted((folder / "outbox").glob("*.eml"), key=lambda p: p.stat().st_mtime_ns):
        msg = message_from_bytes(path.read_bytes(), policy=default_policy)
        if str(msg["Message-ID"]).startswith("<follow-") and str(msg["To"]) == email:
            body = msg.get_body(("plain",))
            assert body is not None
            found.append(body.get_content())
    return found


def start(folder: Path, *, wait: bool = True) -> subprocess.Popen[str]:
    """`digest run` in `folder`, JSON logs appended to daemon.log; `wait`: until it holds its
    lock (asking `digest status`, which takes a second or so)."""
    with (folder / "daemon.log").open("a") as log:
        daemon = start_cli(
            "--log-format", "json", "--log-level", "info", "run",
            cwd=folder, stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
    if wait:
        assert wait_for(lambda: daemon_up(folder) or daemon.poll() is not None, 60)
        assert daemon.poll() is None, (folder / "daemon.log").read_text()[-3000:]
    return daemon


def kill_9(daemon: subprocess.Popen[str]) -> None:
    daemon.send_signal(signal.SIGKILL)
    assert daemon.wait(timeout=20) == -signal.SIGKILL


def day_done(folder: Path, day: str) -> bool:
    """Today's edition is published and every email and alert is sent, nothing running."""
    published = query(folder, "select status from runs where key = ?", f"publish:{day}")
    waiting = query(
        folder,
        "select (select count(*) from deliveries where state != 'sent')"
        " + (select count(*) from follow_alerts where state != 'sent')",
    )[0][0]
    return bool(published) and published[-1][0] != "running" and not waiting and idle(folder)


def test_two_days_through_the_daemon_killed_and_restarted_lose_and_double_nothing(
    tmp_path, monkeypatch, threaded_news_web, threaded_llm_server
) -> None:
    web, llm = threaded_news_web, threaded_llm_server
    monkeypatch.setenv("TEST_LLM_KEY", "k")
    days = memory.Days(monkeypatch)
    site, db = tmp_path / "site", tmp_path / "digest.db"
    write_config(
        tmp_path,
        database={"url": f"sqlite:///{db}"},
        sources={
            "categories": ["world"],
            "ddg": False,
            "feeds": [
                {"url": web.url(f"/feeds/{k}.rss"), "category": "world", "name": k.upper()}
                for k in "abc"
            ],
        },
        # Collected once a day (a restart catches up, never repeats the day); alerts and
        # emails owed after a kill are looked for every 10 s.
        schedule={
            "timezone": "UTC",
            "collect_every": "1d",
            "deliver_every": "10s",
            "publish_at": "00:00",
        },
        archive={"dir": str(site), "title": "Morning digest"},
        email={"outbox_dir": str(tmp_path / "outbox")},
        # An alert after each run that taught the story something: what a kill does to them,
        # not how they are spaced (tests/test_alert_flood.py).
        memory={"alert_every": "0"},
        llm={
            "base_url": llm.url,
            "model": llm.model,
            "api_key_env": "TEST_LLM_KEY",
            "timeout": 10.0,
            "max_retries": 0,
        },
    )
    config = load_config(tmp_path / "digest.toml")

    def report(key: str, lede: str, when: datetime, title: str) -> None:
        page = f"/world/quake-{key}.html"
        web.add(Route(page, memory.quake_page(key, title, lede)))
        feed = memory.outlet_feed(web.url(page), title, when)
        web.add(Route(f"/feeds/{key}.rss", feed, memory.RSS))

    for key in "abc":  # empty feeds until their outlet reports
        web.add(Route(f"/feeds/{key}.rss", memory.outlet_feed(None, "", days.real), memory.RSS))

    # Day 1 (yesterday, in this process): A reports 12 dead; both readers get the edition, and
    # the follower follows the story from it.
    days.on_day1()
    day1_at = datetime.combine(days.day1, clock(20), UTC)
    report("a", memory.A_DAY1, day1_at, memory.QUAKE_TITLE.format(12))
    story_id, said = _day1(config, db, days, day1_at)
    assert "12" in said
    days.on_day2()
    day1_events = 2  # A's first report, and its 12 dead
    assert counts(tmp_path) == {
        "events": day1_events,
        "deliveries": 2,
        "sent": 2,
        "alerts": 0,
        "alerts sent": 0,
        "eml": 2,
    }

    # Day 2 (today, the daemon): B and C report "at least 30", A updated its article to 30. The
    # model is slow (each summary takes a while) and invents a figure in every summary.
    day2_at = min(datetime.combine(days.day2, clock(0, 30), UTC), days.real)
    report("a", memory.A_DAY2, day1_at, memory.QUAKE_TITLE.format(30))
    report("b", memory.B_LEDE, day2_at, memory.QUAKE_TITLE.format("at least 30"))
    report("c", memory.C_LEDE, day2_at, memory.QUAKE_TITLE.format("at least 30"))
    llm.delay = 2.0
    llm.always("invent_number")
    today = days.day2.isoformat()

    # The first daemon is killed -9 while deepen waits for the model's summary: day 2 is
    # collected, and nothing of it is in the timeline yet, nor sent.
    daemon = start(tmp_path, wait=False)
    try:
        assert wait_for(lambda: llm.in_flight > 0 and running(tmp_path, "deepen"), 60)
    finally:
        kill_9(daemon)
    assert query(tmp_path, "select status from runs where key = ?", f"collect:{today}T00:00:00Z")
    assert counts(tmp_path)["events"] == day1_events and counts(tmp_path)["eml"] == 2

    # The second finds the run interrupted and deepens again; it is killed -9 the moment day 2's
    # events are in the timeline and before the follower's alert of them is written (held in
    # slices of a few milliseconds until then, as tests/test_daemon.py catches publish).
    daemon = start(tmp_path, wait=False)
    try:
        assert freeze_when(
            daemon,
            lambda: counts(tmp_path)["events"] > day1_events and counts(tmp_path)["alerts"] == 0,
            90,
        )
    finally:
        kill_9(daemon)
    assert counts(tmp_path)["alerts"] == 0 and counts(tmp_path)["eml"] == 2

    # The third sends the alert it owes, publishes, sends; then is killed -9 with the day done.
    daemon = start(tmp_path)
    try:
        assert wait_for(lambda: day_done(tmp_path, today), 80), query(
            tmp_path, "select kind, status, key from runs"
        )
    finally:
        kill_9(daemon)
    done, written = counts(tmp_path), outbox(tmp_path)
    # The second kill landed just before deepen closed its run (it is run again, and its alert
    # of the new fact goes before publish makes the correction: two alerts) or just after (no
    # deepen again: publish's alert tells the new fact and the correction together, once).
    killed = query(tmp_path, "select kind, status from runs where status = 'interrupted'")
    assert killed in ([("deepen", "interrupted")], [("deepen", "interrupted")] * 2)
    alerts = len(killed)
    assert done == {
        "events": day1_events + 6,  # B, C; their "at least 30"; A's revision; the correction
        "deliveries": 4,  # reader and follower, day 1 and day 2
        "sent": 4,
        "alerts": alerts,
        "alerts sent": alerts,
        "eml": 4 + alerts,
    }

    # The fourth (started again after the kill) finds nothing owed: nothing lost, nothing doubled.
    daemon = start(tmp_path)
    try:
        assert wait_for(lambda: idle(tmp_path), 30)
        time.sleep(11)  # past a deliver tick (every 10 s, the shortest allowed)
        assert counts(tmp_path) == done and outbox(tmp_path) == written
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0
    # Day 2 was collected and published once, whatever the kills interrupted.
    collected = query(
        tmp_path, "select count(*) from runs where key = ?", f"collect:{today}T00:00:00Z"
    )
    assert collected == [(1,)]
    assert query(tmp_path, "select count(*) from runs where key = ?", f"publish:{today}") == [(1,)]

    # The story's timeline: every entry of the two days, once.
    timeline = query(
        tmp_path, "select kind, outlet from story_events where story_id = ? order by id", story_id
    )
    assert timeline == [
        ("first", "A"),
        ("fact", "A"),  # 12 dead
        ("outlet", "B"),
        ("outlet", "C"),
        ("fact", "B"),  # at least 30
        ("fact", "C"),
        ("revision", "A"),  # 12 -> 30
        ("correction", ""),  # of day 1's "12"
    ]

    # What the reader notices in day 2's email: what is new since day 1's, and the correction.
    text, html = email_parts(tmp_path / "outbox", days.day2)
    since = f"Since your last digest ({days.day1.day} {days.day1:%B})"
    assert since in text and since in plain(html)
    assert "Update: the death toll is now 30, up from 12" in text
    assert "Update: the death toll is now 30, up from 12" in plain(html)
    # An updated story can still be followed from the email that tells the update.
    assert "Follow this story: http://localhost:8000/follow?token=" in text
    assert f"&story={story_id}" in text and "Follow this story" in plain(html)
    # The figure the model made up ("The plan also covers 7,319 more households.") is checked
    # against the sources and dropped: not in the email, not a fact of the timeline.
    assert "more households" not in text and "more households" not in plain(html)
    # The archive's page of day 1 marks the sentence that said 12 and links the correction.
    page1 = (site / story_path(days.day1, story_id)).read_text()
    assert '<mark class="corrected">' in page1 and "#corrections" in page1
    # The follower is told the new fact once and the correction once; C repeating B's "at least
    # 30" is no news, and the made-up figure is no fact.
    told = alerts_to(tmp_path, FOLLOWER)
    assert len(told) == alerts
    assert sum(a.count("At least 30 people were killed") for a in told) == 1
    assert sum(a.count("Update: the death toll is now 30, up from 12") for a in told) == 1
    assert not any("rescuers said" in a or "more households" in a for a in told)
    if alerts == 2:
        assert "Update: " not in told[0] and "Update: " in told[1]
    assert alerts_to(tmp_path, memory.READER) == []  # the reader follows nothing
    status = run_cli("status", cwd=tmp_path)
    assert f"alerts: 0 pending, 0 sending, {alerts} sent, 0 failed, 0 skipped" in status.stdout


def _day1(config, db: Path, days: memory.Days, day1_at: datetime) -> tuple[int, str]:
    """Day 1's collect, deepen and publish (yesterday's edition), as tests/test_story_memory.py
    runs them; the follower follows the story. (story id, what day 1's edition said)."""

    async def run() -> tuple[int, str]:
        async with App(config) as app:
            store = await app.store()
            store.add_subscriber(memory.READER, categories=None, timezone="UTC")
            follower = store.add_subscriber(FOLLOWER, categories=None, timezone="UTC")
            assert (await collect(app)).status == "ok"
            memory.collected_on(db, day1_at + timedelta(minutes=30))
            await deepen(app)
            memory.a_day_later(db, days.day1)
            assert (await publish(app, days.day1)).status == "ok"
            edition = store.edition(days.day1)
            assert edition is not None
            [story] = [s for sec in edition.sections for s in sec.stories]
            assert store.follow(follower.email, story.id, datetime.now(UTC))
            return story.id, story.summary

    return asyncio.run(run())

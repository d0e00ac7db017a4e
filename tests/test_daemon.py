"""The daemon as a real process: `run --once`, a scheduled collection, one daemon per database,
and a clean stop on SIGTERM."""

from __future__ import annotations

import email.utils
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import ROOT, run_cli
from tests.fake_ddgs import ENV, write_script
from tests.newsweb import ARTICLES, NewsWeb, Route

TECH = [a for a in ARTICLES if a.category == "technology"]


def setup(tmp_path: Path, web: NewsWeb, every: str = "60m") -> Path:
    (tmp_path / "digest.toml").write_text(
        f"""
[sources]
categories = ["technology"]
ddg_retries = 0
[fetch]
allowed_networks = ["127.0.0.1/32"]
[crawl]
mode = "http"
respect_robots = false
[schedule]
collect_every = "{every}"
"""
    )
    now = datetime.now(UTC).isoformat()
    rows = [
        {
            "date": now,
            "title": a.title,
            "body": a.description,
            "url": web.url(a.path),
            "image": None,
            "source": "Example News",
        }
        for a in TECH
    ]
    return write_script(tmp_path / "ddgs.json", news={"technology news": rows})


def start_daemon(tmp_path: Path, script: Path) -> subprocess.Popen:
    """The daemon with JSON logs appended to daemon.log (a file: a pipe nobody reads would fill
    up and block it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update({"PYTHONPATH": str(ROOT), ENV: str(script)})
    args = ["--log-format", "json", "--log-level", "info", "run"]
    with (tmp_path / "daemon.log").open("a") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.fake_ddgs", *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def daemon_up(tmp_path: Path) -> bool:
    """The daemon holds its lock (its signal handlers are installed by then)."""
    out = run_cli("status", "--json", cwd=tmp_path)
    return out.code == 0 and json.loads(out.stdout)["daemon_running"]


def runs(tmp_path: Path) -> list[tuple]:
    db = tmp_path / "digest.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("select kind, status, key from runs order by id").fetchall()
        except sqlite3.OperationalError:
            return []


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_run_once_collects_deepens_and_publishes(tmp_path, threaded_news_web):
    script = setup(tmp_path, threaded_news_web)
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=script)
    assert result.code == 0, result.stderr
    kinds = [k for k, _, _ in runs(tmp_path)]
    assert kinds == ["collect", "deepen", "publish"]
    assert (tmp_path / "site" / "index.html").exists()
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 1


def test_daemon_collects_on_schedule_is_alone_and_stops_cleanly(tmp_path, threaded_news_web):
    script = setup(tmp_path, threaded_news_web, every="10s")
    daemon = start_daemon(tmp_path, script)
    try:
        assert wait_for(lambda: daemon_up(tmp_path), 60)
        assert wait_for(
            lambda: any(k == "collect" and s != "running" for k, s, _ in runs(tmp_path)), 60
        ), (tmp_path / "daemon.log").read_text()
        second = run_cli("run", cwd=tmp_path, ddgs_script=script, timeout=30)
        assert second.code == 1
        assert "another digest daemon is running" in second.stderr

        status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
        assert status["daemon_running"] is True
        assert status["last_runs"]["collect"]["counts"]["headlines"] == len(TECH)
        # Collection periods are keyed: each period is collected once.
        keys = [key for kind, _, key in runs(tmp_path) if kind == "collect"]
        assert len(keys) == len(set(keys))

        started = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0
        assert time.monotonic() - started < 20
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    lines = (tmp_path / "daemon.log").read_text().splitlines()
    logs = [json.loads(line) for line in lines if line.startswith("{")]
    assert any("daemon started" in e["message"] for e in logs)
    assert any(e["message"] == "stopping" for e in logs)
    assert not any(s == "running" for _, s, _ in runs(tmp_path))  # nothing left half-done
    assert json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)["daemon_running"] is False


def integrity(tmp_path: Path) -> str:
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        return conn.execute("pragma integrity_check").fetchone()[0]


def test_kill_9_at_any_point_then_restart_sends_todays_edition_exactly_once(
    tmp_path, threaded_news_web
):
    script = setup(tmp_path, threaded_news_web)
    config = tmp_path / "digest.toml"  # today's edition is due at once
    config.write_text(config.read_text().replace("[schedule]", '[schedule]\npublish_at = "00:00"'))
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    for delay in (0.8, 1.6, 2.4, 3.2):  # somewhere in start-up, collect, deepen or publish
        daemon = start_daemon(tmp_path, script)
        time.sleep(delay)
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        assert integrity(tmp_path) == "ok"

    daemon = start_daemon(tmp_path, script)
    try:
        assert wait_for(lambda: daemon_up(tmp_path), 60)
        assert wait_for(
            lambda: (
                any(k == "publish" and s != "running" for k, s, _ in runs(tmp_path))
                and len(list((tmp_path / "outbox").glob("*.eml"))) == 1
            ),
            60,
        )
        time.sleep(1)
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 1
    assert integrity(tmp_path) == "ok"
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        urls = [u for (u,) in conn.execute("select url from articles")]
        states = conn.execute("select state from deliveries").fetchall()
        running = conn.execute("select count(*) from runs where status = 'running'").fetchone()
    assert len(urls) == len(set(urls)) == len(TECH)
    assert states == [("sent",)]
    assert running == (0,)


def test_daemon_survives_a_rate_limited_search_llm_down_and_smtp_down_then_recovers(
    tmp_path, threaded_news_web
):
    from tests.smtpserver import SmtpServer
    from tests.test_serve import free_port

    web = threaded_news_web
    smtp_port, llm_port = free_port(), free_port()  # nothing listens there yet
    fresh = "/feeds/fresh-technology.rss"  # today's items, so that there are stories to deepen
    items = "".join(
        f"<item><title>{a.title}</title><link>{web.url(a.path)}</link>"
        f"<pubDate>{email.utils.format_datetime(datetime.now(UTC))}</pubDate></item>"
        for a in TECH
    )
    web.add(
        Route(
            fresh,
            f"<rss version='2.0'><channel><title>Fresh</title>{items}</channel></rss>".encode(),
            content_type="application/rss+xml",
        )
    )
    (tmp_path / "digest.toml").write_text(
        f"""
[sources]
categories = ["technology"]
ddg_retries = 0
[[sources.feeds]]
url = "{web.url(fresh)}"
category = "technology"
[fetch]
allowed_networks = ["127.0.0.1/32"]
[crawl]
mode = "http"
respect_robots = false
[llm]
base_url = "http://127.0.0.1:{llm_port}/v1"
model = "down"
timeout = 2.0
max_retries = 0
[email]
transport = "smtp"
host = "127.0.0.1"
port = {smtp_port}
security = "none"
retry_backoff = 1.0
[schedule]
collect_every = "10s"
deliver_every = "10s"
publish_at = "00:00"
"""
    )
    script = write_script(tmp_path / "ddgs.json", fail="ratelimit")
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    daemon = start_daemon(tmp_path, script)

    def status() -> dict:
        return json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)

    try:
        assert wait_for(lambda: daemon_up(tmp_path), 60)
        assert wait_for(lambda: "publish" in status()["last_runs"], 90), "no publish run"
        now = status()
        assert any("rate limited" in s["error"] for s in now["failing_sources"])
        deepen_errors = now["last_runs"]["deepen"]["errors"]
        assert any(e["source"] == "llm" for e in deepen_errors)
        assert now["deliveries"]["pending"] == 1 and now["deliveries"]["sent"] == 0
        assert daemon.poll() is None  # still running

        # The faults clear: the mail server comes up, the search answers again.
        with SmtpServer(port=smtp_port) as smtp:
            now_iso = datetime.now(UTC).isoformat()
            write_script(
                script,
                news={
                    "technology news": [
                        {
                            "date": now_iso,
                            "title": TECH[0].title,
                            "body": "",
                            "image": None,
                            "url": web.url(TECH[0].path),
                            "source": "Example News",
                        }
                    ]
                },
            )
            assert wait_for(lambda: len(smtp.received) == 1, 90), status()["deliveries"]
            assert wait_for(lambda: not status()["failing_sources"], 60)
            assert status()["deliveries"]["sent"] == 1
            time.sleep(2)
            assert len(smtp.received) == 1  # and only once
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0

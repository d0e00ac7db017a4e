"""The daemon as a real process: `run --once`, a scheduled collection, one daemon per database,
and a clean stop on SIGTERM."""

from __future__ import annotations

import contextlib
import email.policy
import email.utils
import hashlib
import json
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.configs import feed, write_config
from tests.conftest import run_cli, start_daemon, wait_for
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, Article, NewsWeb, Route, render_article

pytestmark = pytest.mark.slow

TECH = [a for a in ARTICLES if a.category == "technology"]


def setup(tmp_path: Path, web: NewsWeb, every: str = "60m") -> Path:
    write_config(
        tmp_path, sources={"categories": ["technology"]}, schedule={"collect_every": every}
    )
    return write_script(tmp_path / "ddgs.json", news={"technology news": news_rows(web, TECH)})


def daemon_up(tmp_path: Path) -> bool:
    """The daemon holds its lock (its signal handlers are installed by then)."""
    out = run_cli("status", "--json", cwd=tmp_path)
    return out.code == 0 and json.loads(out.stdout)["daemon_running"]


def idle(tmp_path: Path) -> bool:
    """No run of the daemon's is going on, seen twice half a second apart: a job's next step
    (deepen after collect, publish after deepen) starts just after the one before ends."""
    for _ in range(2):
        if any(status == "running" for _, status, _ in runs(tmp_path)):
            return False
        time.sleep(0.5)
    return True


def runs(tmp_path: Path) -> list[tuple]:
    db = tmp_path / "digest.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("select kind, status, key from runs order by id").fetchall()
        except sqlite3.OperationalError:
            return []


def test_run_once_collects_deepens_and_publishes(tmp_path, threaded_news_web):
    script = setup(tmp_path, threaded_news_web)
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=script)
    assert result.code == 0, result.stderr
    kinds = [k for k, _, _ in runs(tmp_path)]
    assert kinds == ["collect", "deepen", "publish"]
    assert (tmp_path / "site" / "index.html").exists()
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 1


def error_line(result) -> str:
    """The one error line of a failed command (logs come before it on stderr)."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("digest: error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_run_once_with_every_source_failing_exits_1_naming_the_step(tmp_path, threaded_news_web):
    setup(tmp_path, threaded_news_web)
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    offline = write_script(tmp_path / "offline.json", fail="offline")
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=offline)
    assert result.code == 1, result.stdout + result.stderr
    line = error_line(result)
    assert line == "digest: error: collect failed: every source failed (1 source)"
    # Why is in the collect report, once.
    assert "ddg:news:technology: news search for 'technology' (ddgs: " in result.stdout
    assert result.stderr.count("DNS lookup failed") == 0
    # Nothing new to send: no email of stale news; the archive says why (test_first_run.py).
    assert [(k, s) for k, s, _ in runs(tmp_path)] == [("collect", "failed"), ("publish", "ok")]
    assert not list(tmp_path.glob("outbox/*.eml"))


def test_run_once_with_no_source_at_all_fails_and_says_so(tmp_path, threaded_news_web):
    setup(tmp_path, threaded_news_web)
    config = tmp_path / "digest.toml"
    config.write_text(config.read_text().replace("ddg_retries = 0", "ddg = false"))
    result = run_cli("run", "--once", cwd=tmp_path)
    assert result.code == 1
    assert "collect failed: no sources configured" in error_line(result)


def test_run_once_with_one_source_failing_succeeds_and_reports_it(tmp_path, threaded_news_web):
    script = setup(tmp_path, threaded_news_web)
    broken = threaded_news_web.url("/feeds/broken.xml")
    config = tmp_path / "digest.toml"
    config.write_text(
        config.read_text().replace(
            "[fetch]", f'[[sources.feeds]]\nurl = "{broken}"\ncategory = "technology"\n[fetch]'
        )
    )
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=script)
    assert result.code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "digest: warning:" in line]
    assert warnings == ["digest: warning: collect partial: 1 source failed"]
    lines = (result.stdout + result.stderr).splitlines()
    assert len([line for line in lines if "broken.xml" in line]) == 1  # the collect report's
    assert "collect run" in result.stdout and "publish run" in result.stdout  # each step's report
    assert len(list(tmp_path.glob("outbox/*.eml"))) == 1


def test_run_once_that_sends_no_email_exits_1_naming_publish(tmp_path, threaded_news_web):
    from tests.smtpserver import SmtpServer

    script = setup(tmp_path, threaded_news_web)
    with SmtpServer() as smtp:
        config = tmp_path / "digest.toml"
        config.write_text(
            config.read_text()
            + f'[email]\ntransport = "smtp"\nhost = "127.0.0.1"\nport = {smtp.port}\n'
            'security = "none"\n'
        )
        for who in ("alice@example.org", "bob@example.org"):
            assert run_cli("subscribers", "add", who, cwd=tmp_path).code == 0
        smtp.fail("550", "451")
        result = run_cli("run", "--once", cwd=tmp_path, ddgs_script=script)
    assert result.code == 1, result.stdout + result.stderr
    line = error_line(result)
    assert line == "digest: error: publish failed: no email could be sent (2 messages not sent)"
    assert "550" in result.stdout  # the server's reply, in the publish report
    assert [k for k, _, _ in runs(tmp_path)] == ["collect", "deepen", "publish"]


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

        # Stopped while idle (its catch-up publish done too), it exits 0 (during a step too:
        # test_interrupt.py).
        assert wait_for(lambda: idle(tmp_path), 60), (tmp_path / "daemon.log").read_text()
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
    # the stop said once, as a stop: the process's last word, no error
    assert [line for line in lines if not line.startswith("{")][-1:] == [
        "digest: stopped (SIGTERM)"
    ]
    assert not any(s == "running" for _, s, _ in runs(tmp_path))  # nothing left half-done
    assert json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)["daemon_running"] is False


def test_the_daemon_answers_its_unsubscribe_links_when_serve_daemon_is_on(
    tmp_path, threaded_news_web
):
    from tests.test_mcp import archive_answers, hold_event_stream, listening
    from tests.test_serve import free_port, get

    script = setup(tmp_path, threaded_news_web)
    port = free_port()
    # Today's edition is due at once (the first publish emails it), whatever the time of day.
    with (tmp_path / "digest.toml").open("a") as config:
        config.write('publish_at = "00:00"\n')  # the [schedule] section is the last one
        config.write(f"[serve]\ndaemon = true\nmcp = true\nport = {port}\n")
        config.write(
            f'[email]\nunsubscribe_url = "http://127.0.0.1:{port}/unsubscribe?token={{token}}"\n'
        )
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!doctype html><title>digest</title>")
    daemon = start_daemon(tmp_path, script)
    try:
        assert wait_for(lambda: daemon_up(tmp_path) and listening(port), 60)
        # An MCP client's event stream, held and left (it once froze the daemon for good): the
        # archive answers on, and the daemon goes on to its collection and first publish.
        assert hold_event_stream(port).split()[1] == "405"
        assert archive_answers(port) == [200] * 5
        # The daemon's first publish emails the edition: its unsubscribe link is the one to follow.
        assert wait_for(lambda: list(tmp_path.glob("outbox/*.eml")), 60), (
            tmp_path / "daemon.log"
        ).read_text()
        (eml,) = tmp_path.glob("outbox/*.eml")
        message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
        (link,) = re.findall(r"<(http[^>]+)>", message["List-Unsubscribe"])
        assert link.startswith(f"http://127.0.0.1:{port}/unsubscribe?token=")

        status, page = get(link)
        assert status == 200 and "reader@example.org" in page  # GET only asks
        status, page = get(link, data=b"List-Unsubscribe=One-Click")
        assert status == 200 and "is unsubscribed" in page
        assert "reader@example.org" not in run_cli("subscribers", "list", cwd=tmp_path).stdout
        status, index = get(f"http://127.0.0.1:{port}/")  # and the archive, like `digest serve`
        assert status == 200 and "<html" in index.lower()

        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    with pytest.raises(OSError):
        get(link)  # the server stopped with the daemon


def test_the_daemon_serves_nothing_unless_configured(tmp_path, threaded_news_web):
    from tests.test_serve import free_port

    script = setup(tmp_path, threaded_news_web)
    port = free_port()
    with (tmp_path / "digest.toml").open("a") as config:
        config.write(f"[serve]\nport = {port}\n")
    daemon = start_daemon(tmp_path, script)
    try:
        assert wait_for(lambda: logged(tmp_path, "daemon started"), 60)  # after it would serve
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)


def test_the_container_config_serves_on_every_interface_from_the_daemon(tmp_path):
    """The Dockerfile's first start (`digest init` and its edits), run here without Docker."""
    from digest.config import load_config
    from tests.conftest import ROOT

    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = json.loads(next(line for line in dockerfile.splitlines() if line.startswith("CMD "))[4:])
    assert cmd[:2] == ["sh", "-c"]
    first_start, run = cmd[2].split("; exec ")
    assert run.split()[-1] == "run"  # the daemon, which then serves
    assert "EXPOSE 8000" in dockerfile
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    subprocess.run(["sh", "-c", first_start], cwd=tmp_path, env=env, check=True)
    config = load_config(tmp_path / "digest.toml")
    assert config.serve.daemon is True
    assert (config.serve.host, config.serve.port) == ("0.0.0.0", 8000)
    assert config.crawl.executable_path == "/usr/bin/chromium"


def integrity(tmp_path: Path) -> str:
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        return conn.execute("pragma integrity_check").fetchone()[0]


# kill -9 inside each step. The daemon logs when a step starts (`--log-format json`); the test
# waits for that event, then for the state that shows the step is under way, holding the daemon
# there with a peer that does not answer (a news page, the mail server) or by freezing it, and
# only then sends SIGKILL. So each case checks where its kill landed, and then that a restart
# runs the interrupted period again without doing anything twice.

KILL_STEPS = (
    "collect",  # collect started, held fetching its first category: nothing written yet
    "collect-written",  # the first category written, the second held: half a collection
    "deepen",  # collect done, deepen held crawling a page
    "publish",  # publish wrote the edition, no email claimed yet
    "delivery",  # the email is in `sending` and the mail server has all of it, no reply yet
)
WORLD = [a for a in ARTICLES if a.category == "world"][:2]


def gate_article(tmp_path: Path, category: str) -> Article:
    """An article of this test's own: its page hangs while the test holds the gate closed."""
    token = hashlib.sha1(str(tmp_path).encode()).hexdigest()[:10]
    return Article(
        slug=f"lighthouse-{token}",
        category=category,
        title="Lighthouse keepers hand the last staffed tower over to an automatic lamp",
        lede=(
            "The coastguard switched the lamp of the Skarven lighthouse to automatic operation on "
            "Friday, ending two centuries in which keepers lived on the rock and climbed its "
            "hundred and forty steps every evening to light the beam by hand."
        ),
        paragraphs=(
            "The last two keepers, a married couple who have tended the light since 1994, will "
            "stay on as caretakers of the museum that is to open in the keepers' cottage next "
            "spring, the coastguard said in a statement.",
            "Fishermen in the harbour below said they had mixed feelings: the automatic lamp is "
            "brighter and never late, but the lit kitchen window beside it had for years been the "
            "first sign of home on winter nights.",
            "The authority plans to automate its remaining buoys and beacons by the end of the "
            "decade, which it says will save about two million euros a year in staff and boats.",
        ),
        description="Skarven lighthouse goes automatic.",
    )


def kill_setup(tmp_path: Path, web: NewsWeb, smtp_port: int, step: str) -> tuple[Path, Route]:
    """Two categories, a real SMTP server, and the gate page among the search results of one
    category: the second for `collect-written`, else the first. While collect is the step to
    catch, the fast path waits for the gate; otherwise it gives up on it at its usual budget and
    deepen, which crawls pages the fast path got no text from, waits for it instead."""
    gated = "world" if step == "collect-written" else "technology"
    article = gate_article(tmp_path, gated)
    held = step in ("collect", "collect-written", "deepen")
    gate = web.add(Route(article.path, render_article(article), hang=held))
    patient = step in ("collect", "collect-written")
    budgets = ("connect_timeout", "read_timeout", "request_timeout", "pages_budget", "call_budget")
    fast = dict.fromkeys(budgets, 60) if patient else {}
    email = {"transport": "smtp", "host": "127.0.0.1", "port": smtp_port, "security": "none"}
    write_config(
        tmp_path,
        fetch={"allowed_networks": ["127.0.0.1/32"], **fast},
        crawl={"page_timeout": 60},
        email={**email, "timeout": 60},
        schedule={"collect_every": "1d", "publish_at": "00:00"},
    )

    gated_rows = {"technology": TECH, "world": WORLD}
    gated_rows[gated] = [*gated_rows[gated], article]
    news = {
        f"{category} news": news_rows(web, articles) for category, articles in gated_rows.items()
    }
    return write_script(tmp_path / "ddgs.json", news=news), gate


def logged(tmp_path: Path, text: str) -> bool:
    """Has a daemon logged an event whose message holds `text`?"""
    for line in (tmp_path / "daemon.log").read_text().splitlines():
        with contextlib.suppress(ValueError):  # not JSON, or a line still being written
            if text in json.loads(line)["message"]:
                return True
    return False


def query(tmp_path: Path, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(tmp_path / "digest.db", timeout=5)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def running(tmp_path: Path, kind: str) -> list[str | None]:
    """The keys of the runs of `kind` that are `running`."""
    sql = "select key from runs where kind = ? and status = 'running'"
    return [key for (key,) in query(tmp_path, sql, kind)]


def _stopped(pid: int) -> bool:
    """Every thread of `pid` has stopped (SIGSTOP reaches the threads one by one)."""
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        with contextlib.suppress(FileNotFoundError):
            if stat.read_text().rsplit(")", 1)[1].split()[0] not in ("T", "t", "Z", "X"):
                return False
    return True


def freeze_when(proc: subprocess.Popen, condition, timeout: float) -> bool:
    """Let `proc` run a few milliseconds at a time, stopped (SIGSTOP) in between, until
    `condition()` holds while it is stopped: a SIGKILL then lands in exactly that state.
    Stopped while it holds SQLite's WAL-index lock, the database cannot be read ("locking
    protocol"): that moment is not the one looked for, the process runs on."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        proc.send_signal(signal.SIGSTOP)
        while not _stopped(proc.pid):
            time.sleep(0.0005)
        try:
            if condition():
                return True
        except sqlite3.OperationalError as err:
            if "locking protocol" not in str(err) and "locked" not in str(err):
                raise
        proc.send_signal(signal.SIGCONT)
        time.sleep(0.003)
    return False


def kill_in(step: str, daemon: subprocess.Popen, tmp_path: Path, web, gate, arrived: list) -> None:
    """Wait until the daemon is inside `step`, then SIGKILL it."""
    today = datetime.now(UTC).date()
    if step == "collect":
        assert wait_for(lambda: logged(tmp_path, "collect: starting period"), 60)
        assert wait_for(lambda: running(tmp_path, "collect"), 30)
        assert wait_for(lambda: web.hits[gate.path] >= 1, 30)  # held fetching the gate page
    elif step == "collect-written":
        assert wait_for(lambda: logged(tmp_path, "collected technology"), 60)
        assert wait_for(lambda: web.hits[gate.path] >= 1, 30)  # world: held at the gate
    elif step == "deepen":
        assert wait_for(lambda: logged(tmp_path, "deepen: starting"), 60)
        assert wait_for(lambda: running(tmp_path, "deepen"), 30)
        # The fast path tried the page once during collect; now the deep crawl waits for it.
        assert wait_for(lambda: web.hits[gate.path] >= 2, 30)
    elif step == "publish":
        # Publish can be over in less time than a poll of the log takes: the daemon is held in
        # short slices from deepen on, so that the kill lands between its two writes.
        assert wait_for(lambda: logged(tmp_path, "deepen: starting"), 60)
        edition_saved = "select count(*) from editions where day = ?"
        assert freeze_when(
            daemon,
            lambda: (
                running(tmp_path, "publish")
                and query(tmp_path, edition_saved, today.isoformat()) == [(1,)]
            ),
            90,
        )
    else:
        assert wait_for(lambda: arrived, 60)  # the mail server holds the whole message
    daemon.send_signal(signal.SIGKILL)
    daemon.wait(timeout=20)


@pytest.mark.skipif(sys.platform != "linux", reason="freezes the daemon through /proc")
@pytest.mark.parametrize("step", KILL_STEPS)
def test_kill_9_in_a_step_then_restart_runs_it_again_and_sends_the_edition_once(
    step, tmp_path, threaded_news_web
):
    from digest.store import open_store
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    today = datetime.now(UTC).date().isoformat()
    with SmtpServer(slow_seconds=5) as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, step)
        # Every message whose data reached the server, answered or not: "sent" counts these.
        arrived: list[bytes] = []
        handler = smtp.controller.handler
        handle_data = handler.handle_DATA

        async def handle_data_and_count(server, session, envelope):
            arrived.append(envelope.original_content)
            return await handle_data(server, session, envelope)

        handler.handle_DATA = handle_data_and_count
        if step == "delivery":
            smtp.fail("slow")  # the server holds back its answer to the data for 5 s
        with open_store(f"sqlite:///{tmp_path / 'digest.db'}") as store:
            store.add_subscriber("reader@example.org", categories=None, timezone="UTC")

        daemon = start_daemon(tmp_path, script)
        try:
            kill_in(step, daemon, tmp_path, web, gate, arrived)
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()

        # Where the kill landed: the step's run is left `running`, the step half done.
        assert integrity(tmp_path) == "ok"
        articles = len(query(tmp_path, "select url from articles"))
        deliveries = query(tmp_path, "select state from deliveries")
        done = query(tmp_path, "select kind, status from runs where status != 'running'")
        kind = step.split("-")[0] if step != "delivery" else "publish"
        killed = running(tmp_path, kind)
        assert len(killed) == 1, query(tmp_path, "select kind, status, key from runs")
        if step == "collect":
            assert articles == 0 and done == []
        elif step == "collect-written":
            assert articles == len(TECH) and done == []
        elif step == "deepen":
            assert killed == [None] and done == [("collect", "ok")]
        elif step == "publish":
            assert killed == [f"publish:{today}"]
            assert deliveries in ([], [("pending",)])  # the email not claimed yet
        else:
            assert killed == [f"publish:{today}"]
            assert deliveries == [("sending",)]
        assert smtp.received == [] and len(arrived) == (step == "delivery")

        # The restart: the interrupted run is failed and its period run again, to its end.
        gate.hang = False
        daemon = start_daemon(tmp_path, script)
        publish_run = "select status from runs where key = ?"
        try:
            assert wait_for(
                lambda: (
                    query(tmp_path, publish_run, f"publish:{today}") in ([("ok",)], [("partial",)])
                    and query(tmp_path, "select state from deliveries")
                    == [("sending" if step == "delivery" else "sent",)]
                ),
                60,
            ), (tmp_path / "daemon.log").read_text()[-3000:]
            time.sleep(1)
        finally:
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=20) == 0

    assert integrity(tmp_path) == "ok"
    urls = [u for (u,) in query(tmp_path, "select url from articles")]
    assert len(urls) == len(set(urls)) == len(TECH) + len(WORLD) + 1  # no duplicates, all there
    assert query(tmp_path, "select count(*) from runs where status = 'running'") == [(0,)]
    assert logged(tmp_path, "interrupted run found")
    runs_of = query(
        tmp_path, "select status, key, errors from runs where kind = ? order by id", kind
    )
    interrupted, *again = runs_of
    assert interrupted[0] == "interrupted" and "interrupted" in interrupted[2]
    assert again, f"the interrupted {kind} was not run again"
    if kind == "collect":
        assert again[-1][:2] == ("ok", killed[0])  # the same period, collected in full
    elif kind == "deepen":
        assert again[-1][0] == "ok"
    else:
        assert again[-1][1] == f"publish:{today}"
    # One copy reached the mail server, never a second. A message left in `sending` by the kill
    # may have arrived (here all of it did, unanswered): it is reported, not re-sent by itself.
    assert len(arrived) == 1
    assert len(smtp.received) == (step != "delivery")
    if step == "delivery":
        stuck = json.loads(again[-1][2])
        assert again[-1][0] == "partial"
        assert any("left in 'sending'" in e["error"] for e in stuck)


def test_a_period_whose_deepen_did_not_finish_is_deepened_at_restart():
    """The collect job finds its period collected; deepen runs have no period key, so the
    runs say whether the newest collection got its deepen pass (newest first)."""
    from digest.daemon import deepen_owed
    from digest.models import RunRecord

    def run(kind: str, status: str) -> RunRecord:
        return RunRecord(0, kind, None, status, datetime.now(UTC), None)

    assert not deepen_owed([run("deepen", "ok"), run("collect", "ok")])
    assert not deepen_owed([run("publish", "ok"), run("deepen", "partial"), run("collect", "ok")])
    assert deepen_owed([run("deepen", "interrupted"), run("collect", "ok")])  # killed during it
    assert deepen_owed([run("deepen", "failed"), run("collect", "ok")])
    assert deepen_owed([run("collect", "ok"), run("deepen", "ok")])  # killed before deepen
    assert not deepen_owed([run("collect", "running")])  # a collection by hand, still going
    assert not deepen_owed([])


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
    write_config(
        tmp_path,
        sources={"categories": ["technology"], "feeds": [feed(web.url(fresh))]},
        llm={
            "base_url": f"http://127.0.0.1:{llm_port}/v1",
            "model": "down",
            "timeout": 2.0,
            "max_retries": 0,
        },
        email={
            "transport": "smtp",
            "host": "127.0.0.1",
            "port": smtp_port,
            "security": "none",
            "retry_backoff": 1.0,
        },
        schedule={"collect_every": "10s", "deliver_every": "10s", "publish_at": "00:00"},
    )
    script = write_script(tmp_path / "ddgs.json", fail="ratelimit")
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    daemon = start_daemon(tmp_path, script)

    def status() -> dict:
        return json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)

    try:
        assert wait_for(lambda: daemon_up(tmp_path), 60)
        assert wait_for(
            lambda: status()["last_runs"].get("publish", {}).get("status") not in (None, "running"),
            90,
        ), "no publish run"
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

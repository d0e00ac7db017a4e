"""Workers on the task queue, as real processes on PostgreSQL: `run --once` and three
`digest worker` processes run a full cycle on the local news web and a real SMTP server; one
worker is killed with SIGKILL in the middle of a task, and nothing is lost or doubled.

The workers are separate processes on this machine (not network namespaces): they share
nothing but the database, as workers on other hosts would. Skipped when nothing answers at
127.0.0.1:5432; each test has its own PostgreSQL schema.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import configs
from tests.conftest import run_cli, serve_in_thread, start_cli, wait_for
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, NewsWeb
from tests.smtpserver import SmtpServer
from tests.test_postgres_cli import schema as schema  # the fixture: a schema of the test's own
from tests.test_postgres_cli import schema_url, sql

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

TECH = [a for a in ARTICLES if a.category == "technology"]
WORLD = [a for a in ARTICLES if a.category == "world"]
FEEDS = 12
SUBSCRIBERS = [f"reader{i:02d}@example.org" for i in range(12)]


@pytest.fixture
def slow_web() -> Iterator[NewsWeb]:
    """A news web of this test's own whose article pages take 3 s: a story task runs long
    enough to be killed in the middle (fast extraction gives up on them, the crawl waits)."""
    with contextlib.ExitStack() as stack:
        web = stack.enter_context(contextlib.contextmanager(serve_in_thread)(NewsWeb()))
        for a in ARTICLES:
            web.set_latency(a.path, 3.0)
        yield web


def setup(folder: Path, schema: str, web: NewsWeb, smtp: SmtpServer) -> Path:
    configs.write_config(
        folder,
        database={"url": schema_url(schema)},
        queue={
            "enabled": True,
            "stalled_after": 8.0,  # a loaded 2-core CI machine delays heartbeats by seconds
            "sources_per_task": 4,
            "headlines_per_task": 4,
            "subscribers_per_task": 3,
        },
        sources={
            "feeds": [configs.feed(web.url(f"/feeds/many/{n}.rss")) for n in range(FEEDS)],
            "ddg_retries": 0,
        },
        stories={"top": 3},
        email={
            "transport": "smtp",
            "host": smtp.host,
            "port": smtp.port,
            "security": "none",
        },
    )
    from digest.store import open_store

    with open_store(schema_url(schema)) as store:  # one CLI start per reader would take long
        for who in SUBSCRIBERS:
            store.add_subscriber(who, categories=None, timezone="UTC")
    news = {"technology news": news_rows(web, TECH), "world news": news_rows(web, WORLD)}
    return write_script(folder / "ddgs.json", news=news)


def start_worker(folder: Path, name: str, *extra: str) -> subprocess.Popen[str]:
    """A worker, DuckDuckGo scripted at the DDGS class (the workers run the searches)."""
    args = ["--log-format", "json", "--log-level", "info", "worker", "--concurrency", "2", *extra]
    with (folder / f"{name}.log").open("a") as log:
        return start_cli(
            *args,
            cwd=folder,
            ddgs_script=folder / "ddgs.json",
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def logged(path: Path) -> list[str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["message"] for line in lines if line.startswith("{")]


def running_story(path: Path) -> bool:
    """Whether the worker of this log is in the middle of a story task."""
    messages = logged(path)
    started = {m.split()[1] for m in messages if m.endswith("started: digest.story")}
    done = {m.split()[1] for m in messages if m.endswith("done: digest.story")}
    return bool(started - done)


@contextlib.contextmanager
def workers(folder: Path, count: int) -> Iterator[list[subprocess.Popen]]:
    procs = [start_worker(folder, f"worker{i}") for i in range(count)]
    try:
        assert wait_for(lambda: all(live_started(folder, i) for i in range(count)), 60), [
            (folder / f"worker{i}.log").read_text() for i in range(count)
        ]
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def live_started(folder: Path, i: int) -> bool:
    return any(
        "started:" in m and "task(s) at once" in m for m in logged(folder / f"worker{i}.log")
    )


def test_a_worker_killed_mid_task_loses_and_doubles_nothing(tmp_path, schema, slow_web):
    with SmtpServer() as smtp:
        script = setup(tmp_path, schema, slow_web, smtp)
        with workers(tmp_path, 3) as procs:
            cycle = start_cli(
                "--log-level", "info", "run", "--once", cwd=tmp_path, ddgs_script=script
            )
            logs = [tmp_path / f"worker{i}.log" for i in range(3)]
            busy = None
            assert wait_for(lambda: any(running_story(p) for p in logs), 120), [
                p.read_text() for p in logs
            ]
            busy = next(i for i, p in enumerate(logs) if running_story(p))
            procs[busy].send_signal(signal.SIGKILL)  # in the middle of a crawl
            procs[busy].wait()
            out, err = cycle.communicate(timeout=180)
            assert cycle.returncode == 0, out + err
            status = json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)
        received = list(smtp.received)
    # The killed worker's task went to another: the cycle's waiter or a live worker's rescuer,
    # whichever looked first, put it back in the queue.
    rescuers = [err, *(p.read_text() for i, p in enumerate(logs) if i != busy)]
    assert any("retrying it" in text for text in rescuers), rescuers
    # Every article once: the search results and one headline per feed.
    expected = {slow_web.url(a.path) for a in TECH + WORLD} | {
        f"{slow_web.url(ARTICLES[n % len(ARTICLES)].path)}?feed={n}" for n in range(FEEDS)
    }
    assert sorted(u for (u,) in sql(schema, "select url from articles")) == sorted(expected)
    # Every story the edition shows has its summary, every text was summarized once.
    stories = json.loads(run_cli("stories", "--json", cwd=tmp_path).stdout)
    assert stories and all(s["summary"] for s in stories[:3])
    assert (
        sql(
            schema,
            "select article_id, content_hash, summarizer from summaries"
            " group by 1, 2, 3 having count(*) > 1",
        )
        == []
    )
    # Every reader got the edition once, at the real SMTP server.
    assert sorted(r for m in received for r in m.rcpt_tos) == SUBSCRIBERS
    assert len({m.message_id for m in received}) == len(SUBSCRIBERS)
    assert sql(schema, "select state, count(*) from deliveries group by state") == [
        ("sent", len(SUBSCRIBERS))
    ]
    # The queue is empty again; the killed worker no longer counts as live.
    assert status["queue"]["enabled"] is True
    assert all(
        s["waiting"] == s["running"] == s["failed"] == 0 for s in status["queue"]["tasks"].values()
    )
    assert len(status["queue"]["workers"]) == 2


def test_two_workers_never_run_the_same_delivery(tmp_path, schema, threaded_news_web):
    with SmtpServer() as smtp:
        setup(tmp_path, schema, threaded_news_web, smtp)
        with workers(tmp_path, 2):
            assert run_cli("collect", cwd=tmp_path, ddgs_script=tmp_path / "ddgs.json").code == 0
            # Two publications of one edition at once: each enqueues every batch of readers.
            commands = [start_cli("publish", cwd=tmp_path) for _ in range(2)]
            results = [c.communicate(timeout=120) for c in commands]
            assert [c.returncode for c in commands] == [0, 0], results
        received = list(smtp.received)
    assert sorted(r for m in received for r in m.rcpt_tos) == SUBSCRIBERS
    # Between them, the two runs sent each email once and said so.
    sent = [re.search(r"emails: (\d+) sent", out) for out, _ in results]
    assert sum(int(m.group(1)) for m in sent if m) == len(SUBSCRIBERS), results


def test_a_category_is_extracted_while_another_category_s_feeds_are_still_read(tmp_path, schema):
    """Headlines merge within a category, so a category's fast extraction need not wait for
    the other categories' sources: technology's articles are stored while world's only feed
    has not answered yet, and world's follow once it has."""
    held = "/feeds/many/99.rss"
    with contextlib.contextmanager(serve_in_thread)(NewsWeb()) as web:
        release = web.hold(held)
        configs.write_config(
            tmp_path,
            database={"url": schema_url(schema)},
            queue={
                "enabled": True,
                "stalled_after": 8.0,
                "sources_per_task": 2,
                "headlines_per_task": 2,
            },
            sources={
                "feeds": [
                    *(configs.feed(web.url(f"/feeds/many/{n}.rss")) for n in range(4)),
                    configs.feed(web.url(held), "world"),
                ],
                "ddg": False,
                "feed_timeout": 120.0,  # world's feed is slow, not failing
            },
        )
        from digest.store import open_store

        with open_store(schema_url(schema)):  # its tables, to look at while collect runs
            pass
        by_category = "SELECT category, count(*) FROM articles GROUP BY category ORDER BY 1"
        with workers(tmp_path, 1):
            collect = start_cli("collect", cwd=tmp_path)
            try:
                stored = wait_for(lambda: sql(schema, by_category) == [("technology", 4)], 45)
                asked = web.hits_for(web.url(held))
                running = collect.poll() is None
            finally:
                release()
            _, err = collect.communicate(timeout=120)
    assert stored, (sql(schema, by_category), err)
    assert (asked, running) == (1, True)  # world's feed was asked and had not answered
    assert collect.returncode == 0, err
    assert sql(schema, by_category) == [("technology", 4), ("world", 1)]


def test_status_shows_the_queue_and_a_worker_refuses_a_queue_that_is_off(tmp_path, schema):
    configs.write_config(tmp_path, database={"url": schema_url(schema)})
    off = run_cli("worker", cwd=tmp_path)
    assert off.code == 1
    assert "set [queue] enabled = true" in off.stderr
    assert run_cli("db", "upgrade", cwd=tmp_path).code == 0  # status reads; it makes no tables
    assert json.loads(run_cli("status", "--json", cwd=tmp_path).stdout)["queue"] == {
        "enabled": False
    }
    configs.write_config(tmp_path, database={"url": schema_url(schema)}, queue={"enabled": True})
    shown = run_cli("status", cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    assert "queue: 0 live worker(s)" in shown.stdout


def test_a_worker_serves_its_metrics_with_the_queue_gauges(tmp_path, schema):
    import socket
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    configs.write_config(tmp_path, database={"url": schema_url(schema)}, queue={"enabled": True})
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    worker = start_worker(tmp_path, "worker0", "--metrics-port", str(port))
    try:

        def live() -> float | None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
            except OSError:
                return None
            for family in text_string_to_metric_families(text):
                if family.name == "digest_workers_live":
                    return family.samples[0].value
            return None

        assert wait_for(lambda: live() == 1, 60), (tmp_path / "worker0.log").read_text()
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)


def test_the_queue_on_sqlite_is_a_config_error(tmp_path):
    configs.write_config(tmp_path, queue={"enabled": True})
    result = run_cli("status", cwd=tmp_path)
    assert result.code != 0
    assert "queue.enabled = true needs PostgreSQL" in result.stderr

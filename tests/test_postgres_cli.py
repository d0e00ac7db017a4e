"""The `digest` command and the daemon end to end on PostgreSQL: real subprocesses, the local news
web, outbox email, and `database.url` naming a fresh PostgreSQL schema per test.

Skipped when nothing answers at 127.0.0.1:5432 (tests/storefixtures.py runs the storage tests on
both backends; this file checks that every command and the daemon work there too).
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests import configs
from tests.conftest import CliResult, run_cli, start_daemon, wait_for
from tests.fake_ddgs import news_rows, write_script
from tests.newsweb import ARTICLES, NewsWeb
from tests.storefixtures import PG_HOST, PG_PORT, PG_URL, postgres_reachable

pytestmark = pytest.mark.slow

TECH = [a for a in ARTICLES if a.category == "technology"]
WORLD = [a for a in ARTICLES if a.category == "world"]


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A new, empty schema in the `test` database (dropped afterwards): its name."""
    psycopg = pytest.importorskip("psycopg")
    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def schema_url(schema: str) -> str:
    # As in storefixtures: libpq options from the URL put every connection inside the schema.
    return f"{PG_URL}?options=-csearch_path%3D{schema}"


@pytest.fixture
def schema() -> Iterator[str]:
    if not postgres_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}")
    with postgres_schema() as name:
        yield name


def sql(schema: str, query: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(
        host=PG_HOST,
        port=PG_PORT,
        user="postgres",
        dbname="test",
        options=f"-csearch_path={schema}",
    ) as conn:
        return conn.execute(query).fetchall()


def write_config(folder: Path, schema: str) -> None:
    configs.write_config(folder, database={"url": schema_url(schema)})


def ddgs_script(folder: Path, web: NewsWeb) -> Path:
    news = {"technology news": news_rows(web, TECH), "world news": news_rows(web, WORLD)}
    return write_script(folder / "ddgs.json", news=news)


def ok(result) -> str:
    assert result.code == 0, result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    return result.stdout


def outbox(folder: Path) -> list[Path]:
    return sorted((folder / "outbox").glob("*.eml"))


def together(folder: Path, *commands: list[str], **kwargs: Any) -> list[CliResult]:
    """Independent commands at the same time (each CLI start costs a second or two)."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: run_cli(*args, cwd=folder, **kwargs), commands))


def recipients(emails: list[Path]) -> list[str]:
    return sorted(
        line.split(":", 1)[1].strip()
        for p in emails
        for line in p.read_text().splitlines()
        if line.startswith("To:")
    )


def test_every_command_works_on_postgresql(tmp_path, schema, threaded_news_web):
    # The starter config from `init`, pointed at PostgreSQL, creates the schema's tables.
    ok(run_cli("init", cwd=tmp_path))
    starter = (tmp_path / "digest.toml").read_text()
    assert 'url = "sqlite:///digest.db"' in starter
    (tmp_path / "digest.toml").write_text(
        starter.replace('url = "sqlite:///digest.db"', f'url = "{schema_url(schema)}"')
    )
    upgraded = ok(run_cli("db", "upgrade", cwd=tmp_path))
    assert "database is up to date: postgresql+psycopg://postgres@" in upgraded
    assert len(sql(schema, "select version_num from alembic_version")) == 1

    write_config(tmp_path, schema)
    script = ddgs_script(tmp_path, threaded_news_web)
    bob = ["--categories", "world", "--timezone", "Europe/Berlin"]
    for done in together(
        tmp_path,
        ["collect"],
        ["subscribers", "add", "alice@example.org"],
        ["subscribers", "add", "bob@example.org", *bob],
        ddgs_script=script,
    ):
        ok(done)
    assert sql(schema, "select count(*) from articles") == [(len(TECH) + len(WORLD),)]

    ok(run_cli("deepen", "--top", "2", cwd=tmp_path))  # clusters stories, crawls the top ones
    (read,) = sql(schema, "select count(*) from articles where text is not null")[0]
    assert read >= 2

    ok(run_cli("publish", cwd=tmp_path))
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "feed.xml").exists()
    sent = outbox(tmp_path)
    assert recipients(sent) == ["alice@example.org", "bob@example.org"]  # one email each

    again, ledger, stories, summary = (
        ok(done)
        for done in together(
            tmp_path, ["publish"], ["deliveries", "--json"], ["stories", "--json"], ["status"]
        )
    )
    assert "0 sent, 2 already sent" in again
    assert outbox(tmp_path) == sent
    assert sorted((d["recipient"], d["state"]) for d in json.loads(ledger)) == [
        ("alice@example.org", "sent"),
        ("bob@example.org", "sent"),
    ]
    stories = json.loads(stories)
    assert {s["category"] for s in stories} == {"technology", "world"}
    assert sum(1 for s in stories if s["summary"]) >= 2
    assert "daemon: not running" in summary and "database:" in summary

    # The daemon's cycle sends the edition to the new subscriber only.
    ok(run_cli("subscribers", "add", "carol@example.org", cwd=tmp_path))
    ok(run_cli("run", "--once", cwd=tmp_path, ddgs_script=script))
    assert recipients(outbox(tmp_path)) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    assert sql(schema, "select count(*) from runs where status = 'running'") == [(0,)]

    listed, status, news = (
        json.loads(ok(done))
        for done in together(
            tmp_path,
            ["subscribers", "list", "--json"],
            ["status", "--json"],
            ["news", "technology", "--json"],
        )
    )
    assert [s["email"] for s in listed] == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    assert listed[1] == {
        "email": "bob@example.org",
        "categories": ["world"],
        "timezone": "Europe/Berlin",
        "send_at": None,
        "include": [],
        "exclude": [],
        "max_stories": None,
        "language": None,
        "email_digest": True,
        "channels": [],
    }
    assert status["daemon_running"] is False
    assert status["database_bytes"] > 100_000
    kinds = [r["kind"] for r in status["recent_runs"]]
    assert kinds[:3] == ["publish", "deepen", "collect"]  # run --once, newest first
    assert kinds.count("collect") == 2 and kinds.count("publish") == 3
    assert all(r["status"] in ("ok", "partial") for r in status["last_runs"].values())
    assert status["last_runs"]["collect"]["counts"]["headlines"] == len(TECH) + len(WORLD)
    assert status["articles"]["articles"] == len(TECH) + len(WORLD)
    assert status["deliveries"]["sent"] == 3
    assert {n["title"] for n in news} == {a.title for a in TECH}  # the stored headlines

    removed = ok(run_cli("subscribers", "remove", "carol@example.org", cwd=tmp_path))
    assert "removed carol@example.org" in removed
    assert sql(schema, "select email from subscribers order by email") == [
        ("alice@example.org",),
        ("bob@example.org",),
    ]


def daemon_running(folder: Path) -> bool:
    out = run_cli("status", "--json", cwd=folder)
    if out.code == 1 and "holds no digest tables yet" in out.stderr:
        return False  # a daemon just started has not made them yet (`status` starts faster)
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)["daemon_running"]


def stop(daemon: subprocess.Popen) -> int:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
    try:
        return daemon.wait(timeout=20)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
        raise


def test_one_daemon_per_postgresql_schema_even_after_kill_9(tmp_path, schema):
    # Three folders, as if on three machines: no lock file can be shared between them.
    here, there, neighbour_dir = (tmp_path / name for name in ("here", "there", "neighbour"))
    for folder in (here, there):
        folder.mkdir()
        write_config(folder, schema)
    neighbour_dir.mkdir()
    script = write_script(tmp_path / "ddgs.json")  # no results: collections fail at once
    first = start_daemon(here, script)
    daemons = [first]
    try:
        with postgres_schema() as elsewhere:
            # Another schema in the same PostgreSQL database is another deployment.
            write_config(neighbour_dir, elsewhere)
            assert wait_for(lambda: daemon_running(here), 60), (here / "daemon.log").read_text()
            neighbour = start_daemon(neighbour_dir, script)
            try:
                second = run_cli("run", cwd=there, ddgs_script=script, timeout=30)
                assert second.code == 1
                assert "another digest daemon is running on this database" in second.stderr
                assert schema in second.stderr  # which one
                assert "Traceback" not in second.stderr

                assert wait_for(lambda: daemon_running(neighbour_dir), 60), (
                    neighbour_dir / "daemon.log"
                ).read_text()
            finally:
                stopped = stop(neighbour)  # before its schema is dropped
            assert stopped == 0  # also when the stop lands in its first jobs (interrupted)
            with ThreadPoolExecutor(2) as pool:
                # `status` looks at its own schema's lock only.
                assert list(pool.map(daemon_running, [here, neighbour_dir])) == [True, False]

        # kill -9: the server drops the dead session's lock, a new daemon starts at once (were
        # the lock still held, it would exit at once with the message above).
        first.send_signal(signal.SIGKILL)
        first.wait()
        third = start_daemon(there, script)
        daemons.append(third)
        assert wait_for(lambda: third.poll() is not None or daemon_running(here), 60)
        assert third.poll() is None, (there / "daemon.log").read_text()
        assert stop(third) == 0
        assert daemon_running(here) is False
    finally:
        for daemon in daemons:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
    logs = [
        json.loads(line)
        for line in (there / "daemon.log").read_text().splitlines()
        if line.startswith("{")
    ]
    assert any("daemon started" in e["message"] for e in logs)
    assert any(e["message"] == "stopping" for e in logs)


def test_a_daemon_whose_lock_session_is_cut_stops_and_says_why(tmp_path, schema):
    write_config(tmp_path, schema)
    script = write_script(tmp_path / "ddgs.json")
    daemon = start_daemon(tmp_path, script)
    try:
        assert wait_for(lambda: daemon_running(tmp_path), 60), (tmp_path / "daemon.log").read_text()
        # What a PostgreSQL restart or a network break does to the lock's session.
        cut = sql(
            schema,
            "select pg_terminate_backend(pid) from pg_stat_activity"
            " where application_name = 'digest daemon' and pid in (select pid from pg_locks"
            " where locktype = 'advisory' and database = (select oid from pg_database"
            " where datname = current_database()))",
        )
        assert cut and all(ok for (ok,) in cut)
        code = daemon.wait(timeout=60)  # the lock is checked every LOCK_CHECK_SECONDS (10 s)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    log = (tmp_path / "daemon.log").read_text()
    assert code == 1, log
    assert "lost the daemon lock" in log
    assert "Traceback" not in log

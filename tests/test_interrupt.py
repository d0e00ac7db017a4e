"""Ctrl+C (SIGINT) or SIGTERM in the middle of a job, as an operator meets it: the real
`digest` process says which step it stopped, exits 130 or 143 (0 for the daemon, whose stop is
asked for), and `digest status` shows the step's run as interrupted, not failed."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import free_port, run_cli, start_cli, wait_for
from tests.test_daemon import freeze_when, kill_setup, logged, query, running

pytestmark = pytest.mark.slow


def start(folder: Path, script: Path, *args: str) -> subprocess.Popen[str]:
    """`digest ARGS` in the background, its stderr (JSON logs and the last word) to err.log."""
    with (folder / "err.log").open("a") as err, (folder / "daemon.log").open("a") as log:
        daemon = args[-1] == "run"
        return start_cli(
            *("--log-format", "json", "--log-level", "info", *args),
            cwd=folder,
            ddgs_script=script,
            stdout=subprocess.DEVNULL,
            stderr=log if daemon or "--once" in args else err,
        )


def last_word(folder: Path) -> str:
    """The line the CLI ends with on stderr (after any JSON log lines)."""
    lines = []
    for name in ("daemon.log", "err.log"):
        if (folder / name).exists():
            lines += (folder / name).read_text().splitlines()
    return "\n".join(line for line in lines if line.startswith("digest:"))


def status(folder: Path) -> tuple[dict, str]:
    as_json = run_cli("status", "--json", cwd=folder)
    text = run_cli("status", cwd=folder)
    assert as_json.code == text.code == 0, as_json.stderr + text.stderr
    return json.loads(as_json.stdout), text.stdout


def wait_in_deepen(folder: Path, web, gate) -> None:
    assert wait_for(lambda: logged(folder, "deepen: starting"), 90), last_word(folder)
    assert wait_for(lambda: running(folder, "deepen"), 30)
    # The fast path tried the gate page once during collect; now the deep crawl waits for it
    # (after the other pages: on a loaded machine, 60 s was not always enough to get there).
    assert wait_for(lambda: web.hits[gate.path] >= 2, 150)


def running_now(folder: Path, kind: str) -> bool:
    """A run of `kind` is `running` (False while the database is still being created)."""
    if not (folder / "digest.db").exists():
        return False
    try:
        return bool(running(folder, kind))
    except sqlite3.OperationalError:
        return False


def stop(proc: subprocess.Popen, sig: int) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("sig", "code", "name"), [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_a_signal_during_run_once_names_the_step_and_status_shows_it_interrupted(
    sig, code, name, tmp_path, threaded_news_web
):
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    with SmtpServer() as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, "deepen")
        proc = start(tmp_path, script, "run", "--once")
        try:
            wait_in_deepen(tmp_path, web, gate)
        finally:
            exit_code = stop(proc, sig)

    assert exit_code == code, last_word(tmp_path)
    assert f"digest: error: interrupted during deepen ({name})" in last_word(tmp_path)
    found, text = status(tmp_path)
    assert found["last_runs"]["deepen"]["status"] == "interrupted"
    assert found["last_runs"]["collect"]["status"] == "ok"
    assert "publish" not in found["last_runs"]  # the cycle stopped where it was
    (row,) = [line for line in text.splitlines() if " deepen " in line]  # the runs table
    assert "interrupted" in row and "failed" not in row
    assert running(tmp_path, "deepen") == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_requested_stop_of_the_daemon_mid_job_exits_0_and_records_the_run_interrupted(
    sig, tmp_path, threaded_news_web
):
    """`systemctl stop`, `docker stop`, Ctrl+C: what the operator asked for, not a failure."""
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    with SmtpServer() as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, "deepen")
        proc = start(tmp_path, script, "run")
        try:
            wait_in_deepen(tmp_path, web, gate)
        finally:
            exit_code = stop(proc, sig)

    log = (tmp_path / "daemon.log").read_text()
    assert exit_code == 0, log[-2000:]
    # said once, as a stop: no "digest: error:" line, not a job that "failed" with a
    # CancelledError traceback
    said = f"digest: stopped during deepen ({sig.name}): its run is recorded as interrupted"
    assert last_word(tmp_path) == said
    assert log.count("stopped during") == 1, log[-2000:]
    assert "CancelledError" not in log and '"level": "error"' not in log, log[-2000:]
    found, text = status(tmp_path)
    assert found["last_runs"]["deepen"]["status"] == "interrupted"
    (row,) = [line for line in text.splitlines() if " deepen " in line]  # the runs table
    assert "interrupted" in row and "failed" not in row
    assert found["daemon_running"] is False


def test_a_period_the_daemons_stop_cut_short_is_run_again_at_its_next_start(
    tmp_path, threaded_news_web
):
    """`systemctl restart` in the middle of a collection: the period is collected in full after
    it, as after kill -9, not taken as done."""
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    with SmtpServer() as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, "collect")
        proc = start(tmp_path, script, "run")
        try:
            assert wait_for(lambda: running_now(tmp_path, "collect"), 60), last_word(tmp_path)
            assert wait_for(lambda: web.hits[gate.path] >= 1, 60)  # held fetching the gate
            (key,) = running(tmp_path, "collect")
        finally:
            assert stop(proc, signal.SIGTERM) == 0, last_word(tmp_path)

        gate.hang = False
        proc = start(tmp_path, script, "run")
        try:
            published = "select status from runs where kind = 'publish' and status != 'running'"
            assert wait_for(lambda: query(tmp_path, published), 90), last_word(tmp_path)
        finally:
            assert stop(proc, signal.SIGTERM) == 0, last_word(tmp_path)

    collects = "select status, key from runs where kind = 'collect' order by id"
    assert query(tmp_path, collects) == [("interrupted", None), ("ok", key)]


@pytest.mark.skipif(sys.platform != "linux", reason="freezes the daemon through /proc")
def test_a_second_signal_while_the_daemon_stops_ends_it_at_once(tmp_path, threaded_news_web):
    """Ctrl+C then SIGTERM before the stop is done: both reach the daemon together (it is
    frozen while they are sent), so the second lands while it stops, before any cleanup."""
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    with SmtpServer() as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, "deepen")
        proc = start(tmp_path, script, "run")
        try:
            wait_in_deepen(tmp_path, web, gate)
            assert freeze_when(proc, lambda: True, 30)
            proc.send_signal(signal.SIGINT)
            proc.send_signal(signal.SIGTERM)
            proc.send_signal(signal.SIGCONT)
            exit_code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    log = (tmp_path / "daemon.log").read_text()
    assert exit_code in (130, 143), log[-2000:]  # 128 + the second signal: not a clean stop
    assert log.count("while stopping: stopped at once") == 1, log[-2000:]
    assert "stopped during" not in log  # it did not wait for the step to end
    assert running(tmp_path, "deepen")  # left as kill -9 leaves it: a daemon's start recovers it


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_collect_run_alone_is_reported_and_recorded(
    sig, code, tmp_path, threaded_news_web
):
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    with SmtpServer() as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, "collect")
        proc = start(tmp_path, script, "collect")
        try:
            assert wait_for(lambda: running_now(tmp_path, "collect"), 60), last_word(tmp_path)
            assert wait_for(lambda: web.hits[gate.path] >= 1, 60)  # held fetching the gate
        finally:
            exit_code = stop(proc, sig)

    assert exit_code == code, last_word(tmp_path)
    assert "digest: error: interrupted during collect (SIG" in last_word(tmp_path)
    found, _ = status(tmp_path)
    assert found["last_runs"]["collect"]["status"] == "interrupted"


def test_ctrl_c_during_deepen_run_alone_is_reported_and_recorded(tmp_path, threaded_news_web):
    from tests.smtpserver import SmtpServer

    web = threaded_news_web
    with SmtpServer() as smtp:
        script, gate = kill_setup(tmp_path, web, smtp.port, "deepen")
        assert run_cli("collect", cwd=tmp_path, ddgs_script=script).code == 0
        proc = start(tmp_path, script, "deepen")
        try:
            assert wait_for(lambda: running_now(tmp_path, "deepen"), 60), last_word(tmp_path)
            assert wait_for(lambda: web.hits[gate.path] >= 2, 60)  # the crawl waits for it
        finally:
            exit_code = stop(proc, signal.SIGINT)

    assert exit_code == 130, last_word(tmp_path)
    assert "digest: error: interrupted during deepen (SIGINT)" in last_word(tmp_path)
    found, _ = status(tmp_path)
    assert found["last_runs"]["deepen"]["status"] == "interrupted"


def catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler of its own for SIGTERM (Linux's /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) & (1 << (signal.SIGTERM - 1)))


def stopped(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[int, str]:
    """`sig` to `proc`: its exit status and stderr."""
    try:
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stderr


def stopped_while_importing(folder: Path, *args: str, after: float = 0.0) -> tuple[int, str]:
    """`digest ARGS` sent SIGTERM `after` seconds from its start, and not before it catches the
    signal (the interpreter's own start-up comes first, and cannot): its exit status and
    stderr."""
    started = time.monotonic()
    proc = start_cli(*args, cwd=folder)
    while proc.poll() is None and not catches_sigterm(proc.pid):
        assert time.monotonic() < started + 20
        time.sleep(0.002)
    assert proc.poll() is None, proc.communicate()
    time.sleep(max(0.0, started + after - time.monotonic()))
    return stopped(proc)


def waiting_to_read(proc: subprocess.Popen[str]) -> None:
    """Until `proc` sleeps in its read of the pipe (Linux's /proc): a signal sent as it wakes
    from opening it, before the read starts, is handled only once the read returns, which a
    pipe nobody writes to never does."""
    wchan = Path(f"/proc/{proc.pid}/wchan")
    deadline = time.monotonic() + 20
    while wchan.exists() and "pipe_read" not in wchan.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.005)


def stopped_while_reading_config(
    folder: Path, *args: str, sig: int = signal.SIGTERM
) -> tuple[int, str]:
    """`digest --config FIFO ARGS` sent `sig` while it waits to read its configuration (a
    file on a slow disk): its exit status and stderr."""
    fifo = folder / f"slow-{len(list(folder.glob('slow-*')))}.toml"
    os.mkfifo(fifo)
    proc = start_cli("--config", str(fifo), *args, cwd=folder)
    writer = None
    try:
        while writer is None:  # opens once the command opened it to read
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.01)
        waiting_to_read(proc)
        return stopped(proc, sig)
    finally:
        if writer is not None:
            os.close(writer)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("after", [0.0, 0.2], ids=["at-once", "after-0.2s"])
@pytest.mark.parametrize("command", ["serve", "run"])
def test_a_server_stopped_while_it_starts_says_stopped_once_and_exits_0(tmp_path, command, after):
    """`systemctl stop` just after `start`: importing, reading its configuration or opening
    its store, the server was asked to stop, as later (not killed: exit status 143, nothing
    said)."""
    port = free_port()
    args = ("serve", "--port", str(port)) if command == "serve" else ("run",)
    code, stderr = stopped_while_importing(tmp_path, *args, after=after)
    assert code == 0, stderr
    assert stderr.splitlines() == ["digest: stopped (SIGTERM)"]
    if command == "serve":
        with pytest.raises(OSError):  # it never served
            socket.create_connection(("127.0.0.1", port), timeout=1).close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl+C"])
@pytest.mark.parametrize("command", ["serve", "run"])
def test_a_server_stopped_while_it_reads_its_configuration_says_stopped_once(
    tmp_path, command, sig
):
    """`systemctl stop` or Ctrl+C while the server reads its configuration: a stop, said once."""
    code, stderr = stopped_while_reading_config(tmp_path, command, sig=sig)
    assert code == 0, stderr
    assert stderr.splitlines() == [f"digest: stopped ({signal.Signals(sig).name})"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_one_shot_command_stopped_while_it_starts_ends_as_ever(tmp_path):
    """A command that is no server (`run --once` neither) ends at SIGTERM as it always did
    while it starts (the default action: exit status 143 as a shell tells it, nothing said),
    whether the signal came while it imported (held until the command was known) or read its
    configuration."""
    code, stderr = stopped_while_importing(tmp_path, "status")
    assert (code, stderr) == (-signal.SIGTERM, "")
    code, stderr = stopped_while_reading_config(tmp_path, "status")
    assert (code, stderr) == (-signal.SIGTERM, "")
    code, stderr = stopped_while_reading_config(tmp_path, "run", "--once")
    assert (code, stderr) == (-signal.SIGTERM, "")


def test_a_one_shot_command_interrupted_while_it_reads_its_configuration_says_interrupted(
    tmp_path,
):
    """Ctrl+C while a command that is no server reads its configuration: "interrupted", 130,
    as ever (not a stop, and no traceback)."""
    code, stderr = stopped_while_reading_config(tmp_path, "status", sig=signal.SIGINT)
    assert code == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted" in stderr


def test_a_ctrl_c_ignored_by_whoever_started_digest_stays_ignored():
    """A server started as a script's background job (SIGINT ignored, as shells do) keeps
    ignoring Ctrl+C while it starts: the early hold takes only signals that would act."""
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "from digest.runtime import stops\n"
        "stops.catch_early(); stops.server()\n"
        "print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN,"
        " signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN))\n"
    )
    said = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert said.stdout.split() == ["True", "True"]

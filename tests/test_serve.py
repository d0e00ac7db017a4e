"""`digest serve`: the archive on localhost and one-click unsubscribe links (RFC 8058), and
connections that cannot hold the server (slow headers, idle, too many)."""

from __future__ import annotations

import asyncio
import math
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from digest.store import open_store
from tests.conftest import free_port, run_cli, start_cli

pytestmark = pytest.mark.slow

READER = "reader@example.org"
TOKEN: list[str] = []  # the `limited` server's subscriber


def get(url: str, data: bytes | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_serve_shows_the_archive_and_unsubscribes_with_one_post(tmp_path: Path):
    assert run_cli("subscribers", "add", "reader@example.org", cwd=tmp_path).code == 0
    assert run_cli("publish", "--no-send", cwd=tmp_path).code == 0
    with sqlite3.connect(tmp_path / "digest.db") as conn:
        (token,) = conn.execute("select token from subscribers").fetchone()
    port = free_port()
    server = start_cli("serve", "--port", str(port), cwd=tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                status, body = get(base + "/")
                break
            except OSError:
                time.sleep(0.2)
        assert status == 200 and "<html" in body.lower()
        assert get(base + "/unsubscribe?token=nope")[0] == 404
        status, page = get(f"{base}/unsubscribe?token={token}")
        assert status == 200 and "reader@example.org" in page  # GET only asks
        assert "reader@example.org" in run_cli("subscribers", "list", cwd=tmp_path).stdout
        status, _ = get(f"{base}/unsubscribe?token={token}", data=b"List-Unsubscribe=One-Click")
        assert status == 200
        assert "reader@example.org" not in run_cli("subscribers", "list", cwd=tmp_path).stdout
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_serve_says_stopped_once_and_exits_0(tmp_path: Path, sig: signal.Signals):
    """`systemctl stop`, `docker stop`, Ctrl+C: what the operator asked for, not an error."""
    port = free_port()
    server = start_cli("serve", "--port", str(port), cwd=tmp_path)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                get(f"http://127.0.0.1:{port}/")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        server.send_signal(sig)
        _, stderr = server.communicate(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 0, stderr
    assert "error" not in stderr.lower()
    assert stderr.splitlines() == [f"digest: stopped ({sig.name})"]


# -- slow and idle clients ----------------------------------------------------------------------

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 2.0
MAX_CONNECTIONS = 60
MARGIN = 1.5


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """`digest serve` with short header and body timeouts and a connection limit, over a store
    with one subscriber (their token in `TOKEN[0]`); its port."""
    root = tmp_path_factory.mktemp("serve")
    (root / "site").mkdir()
    (root / "site" / "index.html").write_text("<!doctype html><title>digest</title><p>archive")
    (root / "digest.toml").write_text(
        f"[serve]\nheader_timeout = {HEADER_TIMEOUT}\nidle_timeout = 3.0\n"
        f"body_timeout = {BODY_TIMEOUT}\nmax_connections = {MAX_CONNECTIONS}\n"
    )
    with open_store(f"sqlite:///{root / 'digest.db'}") as store:
        TOKEN[:] = [store.add_subscriber(READER, categories=None, timezone="UTC").token]
    port = free_port()
    quiet = subprocess.DEVNULL
    server = start_cli("serve", "--port", str(port), cwd=root, stdout=quiet, stderr=quiet)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                assert get(f"http://127.0.0.1:{port}/index.html")[0] == 200
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield port
    finally:
        server.terminate()
        server.wait(10)


async def slowloris(port: int, *, drip: bool = True) -> float:
    """Seconds until the server closed a connection that sends its request head a byte every
    0.1 s (or, with drip=False, nothing at all); inf if it never did (in 60 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    head = b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 600
    try:
        for byte in head:
            if drip:
                writer.write(bytes([byte]))
                await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(1024), 0.1)
            except TimeoutError:
                continue
            assert data == b"", f"answered before the request was complete: {data[:40]!r}"
            return time.monotonic() - started
    except ConnectionError:
        return time.monotonic() - started
    finally:
        writer.close()
    return math.inf


async def test_slow_and_idle_clients_are_cut_off_while_others_are_answered(limited):
    clients = [asyncio.create_task(slowloris(limited)) for _ in range(50)]
    clients.append(asyncio.create_task(slowloris(limited, drip=False)))
    await asyncio.sleep(0.3)
    status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{limited}/index.html")
    assert status == 200 and "archive" in body
    async with asyncio.timeout(HEADER_TIMEOUT + 2 * MARGIN):
        closed_after = await asyncio.gather(*clients)
    assert max(closed_after) < HEADER_TIMEOUT + MARGIN, sorted(closed_after)[-5:]


async def test_connections_over_the_limit_get_503_until_slots_free_up(limited):
    held = [await asyncio.open_connection("127.0.0.1", limited) for _ in range(MAX_CONNECTIONS)]
    await asyncio.sleep(0.3)
    reader, writer = await asyncio.open_connection("127.0.0.1", limited)
    try:
        answer = await asyncio.wait_for(reader.read(100), HEADER_TIMEOUT / 2)
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable")
    finally:
        writer.close()
    async with asyncio.timeout(HEADER_TIMEOUT + MARGIN):
        for held_reader, held_writer in held:  # cut after header_timeout: they asked nothing
            assert await held_reader.read(100) == b""
            held_writer.close()
    status, _ = await asyncio.to_thread(get, f"http://127.0.0.1:{limited}/index.html")
    assert status == 200


async def slow_post(port: int, path: str, *, size: int = 100_000) -> bytes:
    """What the server answers a form of `size` bytes sent a byte every 0.2 s (b"" if it
    closed the connection without a word; the client gives up after 60 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {size}\r\n\r\n"
    )
    writer.write(head.encode() + b"csrf=")
    try:
        async with asyncio.timeout(60):
            while True:
                try:
                    return await asyncio.wait_for(reader.read(200), 0.2)
                except TimeoutError:
                    writer.write(b"x")
                    await writer.drain()
    except ConnectionError:
        return b""
    finally:
        writer.close()


async def test_slow_posts_get_408_while_new_readers_are_answered(limited):
    """With any valid token, connections trickling a form once held every slot (new readers
    got 503): a body now has body_timeout to arrive in full, and only half the connections may
    be receiving one at a time."""
    path = f"/preferences?token={TOKEN[0]}"
    # An answer that never reads the body (a bad token, a method not allowed) does not let
    # the body linger either. These go first, to be among the slots for bodies: a request
    # answered after them was read after them.
    posts = [asyncio.create_task(slow_post(limited, p)) for p in ("/unsubscribe?token=x", "/")]
    await asyncio.sleep(0.1)
    assert (await asyncio.to_thread(get, f"http://127.0.0.1:{limited}/index.html"))[0] == 200
    posts += [asyncio.create_task(slow_post(limited, path)) for _ in range(MAX_CONNECTIONS - 2)]
    # Half the connections may be receiving a body; the others are turned away (503) at once.
    trickling = set(posts)
    async with asyncio.timeout(BODY_TIMEOUT / 2):
        while len(trickling) > MAX_CONNECTIONS // 2:
            _, trickling = await asyncio.wait(trickling, return_when=asyncio.FIRST_COMPLETED)
    assert not all(p.done() for p in posts)  # some are still trickling
    for url in ("/index.html", f"/unsubscribe?token={TOKEN[0]}"):
        status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{limited}{url}")
        assert status == 200 and ("archive" in body or READER in body)
    # A form sent whole is read at once (this one has no valid CSRF token).
    status, body = await asyncio.to_thread(get, f"http://127.0.0.1:{limited}{path}", b"csrf=x")
    assert status == 403 and "expired" in body
    answers = await asyncio.gather(*posts)
    assert [a.split(b"\r\n", 1)[0] for a in answers[:2]] == [b"HTTP/1.1 408 Request Timeout"] * 2
    firsts = sorted({a.split(b"\r\n", 1)[0].decode() for a in answers})
    assert set(firsts) <= {"HTTP/1.1 408 Request Timeout", "HTTP/1.1 503 Service Unavailable"}
    assert "HTTP/1.1 408 Request Timeout" in firsts
    # Every slot for bodies is free again: the next slow post is received (and cut), not 503.
    assert (await slow_post(limited, path)).startswith(b"HTTP/1.1 408 Request Timeout")

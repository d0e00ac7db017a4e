"""`digest serve`: the archive on localhost and one-click unsubscribe links (RFC 8058)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import ROOT, run_cli


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env["PYTHONPATH"] = str(ROOT)
    server = subprocess.Popen(
        [sys.executable, "-m", "digest", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
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

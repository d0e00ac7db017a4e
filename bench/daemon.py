"""The daemon's footprint: one full cycle (`digest run --once`: collect, deepen, publish) against
the local news web, in HTTP and browser crawl modes — wall time and peak memory of the process
tree — and the daemon's resident memory when idle between runs.

    .venv/bin/python bench/daemon.py [--repeat 3]

DuckDuckGo is scripted at the DDGS class (tests/fake_ddgs.py); everything else is real.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fake_ddgs import ENV, news_rows, write_script  # noqa: E402
from tests.newsweb import ARTICLES, NewsWeb  # noqa: E402


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants (KiB), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
        todo.extend(children.get(p, []))
    return total


def config(workdir: Path, web: NewsWeb, crawl: str) -> Path:
    (workdir / "digest.toml").write_text(
        f"""
[sources]
categories = ["technology", "world"]
ddg_retries = 0
[fetch]
allowed_networks = ["127.0.0.1/32"]
[crawl]
{crawl}
respect_robots = false
[schedule]
collect_every = "60m"
"""
    )
    news = {
        f"{cat} news": news_rows(web, [a for a in ARTICLES if a.category == cat])
        for cat in ("technology", "world")
    }
    return write_script(workdir / "ddgs.json", news=news)


def launch(workdir: Path, script: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update({"PYTHONPATH": str(ROOT), ENV: str(script)})
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fake_ddgs", *args],
        cwd=workdir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def sample_until_exit(proc: subprocess.Popen) -> tuple[float, int]:
    started, peak = time.monotonic(), 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_kib(proc.pid))
        time.sleep(0.05)
    return time.monotonic() - started, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    web = NewsWeb()
    asyncio.run_coroutine_threadsafe(web.__aenter__(), loop).result(10)
    chromium = shutil.which("chromium")
    modes = {"http": 'mode = "http"'}
    if chromium:
        modes["browser"] = f'mode = "browser"\nexecutable_path = "{chromium}"'
    print(f"one full cycle (digest run --once), {len(ARTICLES)} articles, {args.repeat} runs")
    for name, crawl in modes.items():
        walls, peaks = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                workdir = Path(tmp)
                script = config(workdir, web, crawl)
                wall, peak = sample_until_exit(launch(workdir, script, "run", "--once"))
                walls.append(wall)
                peaks.append(peak)
        print(
            f"  {name:8s} wall median {statistics.median(walls):6.2f} s   "
            f"peak RSS of the process tree median {statistics.median(peaks) / 1024:7.1f} MiB"
        )
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        script = config(workdir, web, 'mode = "http"')
        daemon = launch(workdir, script, "run")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait for the first cycle to finish
            out = subprocess.run(
                [sys.executable, "-m", "digest", "status", "--json"],
                cwd=workdir,
                capture_output=True,
                text=True,
                check=False,
            )
            last = json.loads(out.stdout or "{}").get("last_runs", {})
            if last.get("deepen", {}).get("status") not in (None, "running"):
                break
            time.sleep(0.5)
        time.sleep(2)
        idle = [tree_rss_kib(daemon.pid) for _ in range(10) if not time.sleep(0.2)]
        daemon.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        code = daemon.wait(30)
        took = time.monotonic() - stopped
        idle_mib = statistics.median(idle) / 1024
        print(f"  daemon idle after its first cycle: RSS median {idle_mib:.1f} MiB")
        print(f"  SIGTERM → exit {code} in {took:.2f} s")
    asyncio.run_coroutine_threadsafe(web.__aexit__(None, None, None), loop).result(10)


if __name__ == "__main__":
    main()

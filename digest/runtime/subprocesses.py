"""What digest's Python child processes share: an environment in which they import this very
`digest` package, and an address-space cap set before they touch untrusted input.

The PDF converter (`digest.crawl._pdf_worker`) and the HTML parsers (`digest.fetch._parse_worker`)
run that way: a hostile file costs the child, which its parent kills when it is late.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds digest/
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def child_env() -> dict[str, str]:
    """The environment for a Python child of ours: it must import this very `digest` package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    return env


def process_cpu(pid: int) -> float | None:
    """The user and system CPU seconds process `pid` (all its threads) has had so far, from
    /proc; None when it is gone or not on Linux."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime


def usable_cores() -> int:
    """The cores this process may run on (a container's or `taskset`'s, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space (never above a hard limit already set)."""
    limit = megabytes << 20
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

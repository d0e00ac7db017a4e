"""Which process a run belongs to, and whether that process is still alive.

A run row records its owner as "host/boot/pid/start": the machine's name, its boot id (Linux),
the process id and the process's start time in clock ticks since boot (Linux). A restarting
daemon fails only runs whose owner is gone, so a `digest collect` still working in a terminal is
not taken for a crashed one. A pid alone would not do: after a reboot, or once pids wrap, the
same number names another process; the boot id and start time tell them apart.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta

# A run owned by another machine cannot be checked: it counts as dead once it has been running
# this long (far beyond any collect, deepen or publish).
OTHER_HOST_STALE_AFTER = timedelta(hours=6)


def current_owner() -> str:
    """The owner string of this process."""
    return _owner(os.getpid())


def owner_alive(owner: str | None, started_at: datetime, now: datetime) -> bool:
    """Whether the process that started a run at `started_at` may still be running it."""
    if not owner:
        return False  # written before owners were recorded: only a dead process leaves those
    host, boot, pid, start = [*owner.split("/"), "", "", "", ""][:4]
    if host != socket.gethostname():
        return now - started_at < OTHER_HOST_STALE_AFTER
    if boot != _boot_id():
        return False  # this machine has rebooted since
    try:
        pid_number = int(pid)
    except ValueError:
        return False
    if not _pid_exists(pid_number):
        return False
    return not start or start == _start_ticks(pid_number)


def _owner(pid: int) -> str:
    return f"{socket.gethostname()}/{_boot_id()}/{pid}/{_start_ticks(pid)}"


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> str:
    """Field 22 of /proc/PID/stat; "" where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True

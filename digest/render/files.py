"""Writing the archive's files so that a reader or a crash never sees half a page.

Each file is written to a temporary file in its own directory, flushed and fsynced, then moved
over the old one with `os.replace` (atomic on POSIX). Temporary files carry TEMP_PREFIX so a
build can sweep up what a killed process left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "TEMP_PREFIX",
    "exclusive_lock",
    "fsync_directories",
    "remove_temp_files",
    "same_content",
    "write_atomic",
]

TEMP_PREFIX = ".digest-tmp-"
FILE_MODE = 0o644  # mkstemp creates 0600 files; a web server running as another user must read them


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step: readers see the old bytes or the new, never a mix."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), FILE_MODE)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def same_content(path: Path, data: bytes) -> bool:
    """True when `path` is a file holding exactly `data` (the size is checked before reading)."""
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return False


def remove_temp_files(root: Path) -> list[Path]:
    """Delete temporary files left by a build that was killed mid-write (under the lock only)."""
    removed = []
    for tmp in root.rglob(f"{TEMP_PREFIX}*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
            removed.append(tmp)
    return removed


def fsync_directories(directories: Iterable[Path]) -> None:
    """Make the renames in these directories durable."""
    for directory in directories:
        try:
            fd = os.open(directory, os.O_RDONLY)
        except FileNotFoundError:  # pruned empty
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def exclusive_lock(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock_file`: one build writes a directory at a time."""
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock

"""Progress of a long command on a terminal: what step it is in and how far (rich).

The jobs only call `step` and `advance` (`digest.runtime.progress`); this fills them with a live
display on stderr, one line per step, gone when the command ends, so that its report is all
that stays.
Nothing is shown when stdout or stderr is not a terminal (piped, redirected, a supervisor), with
`--log-format json`, or with chatty logs (info, debug), whose lines would tear the display.
Rich is imported only when there is a terminal to draw on.
"""

from __future__ import annotations

import sys
from typing import Any

# How much of a step's last unit (a URL, a category, an address) is shown.
DETAIL_CHARS = 60


def wanted(log_format: str, log_level: str) -> bool:
    """Whether a command shows its progress: on a terminal, with plain and quiet logs."""
    if log_format != "text" or log_level not in ("warning", "error"):
        return False
    return _is_tty(sys.stdout) and _is_tty(sys.stderr)


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced by something without a file, or closed
        return False


class TerminalProgress:
    """A `digest.runtime.progress.Progress` drawn with rich; does nothing when not `enabled`."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> TerminalProgress:
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(stderr=True)
        if not console.is_terminal or console.is_dumb_terminal:
            self.enabled = False
            return self
        self._bar = Progress(
            SpinnerColumn(finished_text="✓"),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("[dim]{task.fields[detail]}"),
            console=console,
            transient=True,
        )
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def step(self, name: str, total: int | None = None) -> None:
        if self._bar is None:
            return
        self._finish_step()
        self._task = self._bar.add_task(_shown(name), total=total, detail="")

    def advance(self, n: int = 1, detail: str = "") -> None:
        if self._bar is None or self._task is None:
            return
        self._bar.update(self._task, advance=n, detail=_shown(detail[-DETAIL_CHARS:]))

    def _finish_step(self) -> None:
        """The step before stays on its line, marked done, its detail cleared."""
        if self._task is None:
            return
        task = next(t for t in self._bar.tasks if t.id == self._task)
        done = task.total if task.total is not None else max(task.completed, 1)
        self._bar.update(self._task, total=done, completed=done, detail="")
        self._bar.stop_task(self._task)


def _shown(text: str) -> str:
    """Text from outside (a page's URL, a feed's file name) as a line of the display: no
    terminal controls (`clean_text`), no rich markup."""
    from rich.markup import escape

    from digest.render.sanitize import clean_text

    return escape(clean_text(text))

"""SIGTERM or Ctrl+C while a server starts (`digest serve`, the daemon of `digest run`): before
the event loop's own handlers are in place (the imports, the configuration), SIGTERM's default
action would end the process at once, silently, with exit status 143, and Ctrl+C would raise in
the middle of an import, as if it had failed. A server stopped so was asked to stop, as later:
"digest: stopped (SIGTERM)" (or SIGINT) once, exit status 0.

The program's first import catches both (`catch_early`), before the command is known, and only
holds them; once the command is known it is a server (`server`: a held or later signal is the
stop) or not (`one_shot`: the signals as ever, a held one acted on now: SIGTERM ends the process
with 143, Ctrl+C raises KeyboardInterrupt, "interrupted", 130). Imported first of the program's
own modules: only the standard library here."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Any


class _Early:
    """The early handler's state: installed (over `previous`), the command a server, a SIGTERM
    held, the stop said."""

    installed = False
    previous: dict[int, Any] = {}  # noqa: RUF012 (one state per process)
    serving = False
    held: int | None = None
    said = False


_early = _Early()


SIGNALS = (signal.SIGTERM, signal.SIGINT)


def catch_early() -> None:
    """Hold a SIGTERM or SIGINT until the command is known (no-op when caught already, or outside
    the main thread, where no handler can be set)."""
    if _early.installed:
        return
    try:
        for signum in SIGNALS:
            if signal.getsignal(signum) == signal.SIG_IGN:
                continue  # ignored by whoever started us (a script's background job): it stays so
            previous = signal.signal(signum, _on_signal)
            # None: a handler not set from Python; SIG_DFL is what it does
            _early.previous[signum] = signal.SIG_DFL if previous is None else previous
    except ValueError:
        return
    _early.installed = True


def server() -> None:
    """The command is a server: a SIGTERM or SIGINT held, or coming before the event loop's
    handlers take over, stops it as asked."""
    if _early.installed:
        _early.serving = True
        held, _early.held = _early.held, None
        if held is not None:
            _stop(held)


def one_shot() -> None:
    """The command is not a server (or none runs): the signals do what they did before, and one
    held meanwhile does it now (SIGTERM's default: the process ends, exit status 143; Ctrl+C:
    KeyboardInterrupt)."""
    if not _early.installed:
        return
    _early.installed = False
    for signum, previous in _early.previous.items():
        signal.signal(signum, previous)
    if _early.held is not None:
        signal.raise_signal(_early.held)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _early.serving:
        _stop(signum)
    elif _early.held is None:
        _early.held = signum


def _stop(signum: int) -> None:
    if _early.said:  # a second SIGTERM while the first unwinds: said once
        return
    _early.said = True
    sys.stderr.write(f"digest: stopped ({signal.Signals(signum).name})\n")
    sys.stderr.flush()
    raise SystemExit(0)

"""How a long job tells what step it is in and how far it got, without knowing who listens.

The jobs (`collect`, `deepen`, `publish`, `feeds import`) call `step` and `advance` on the
`Progress` they are given; by default nobody listens (`NO_PROGRESS`). The CLI gives them a bar
on a terminal (`digest.commands.progress_bar`), so that the jobs stay free of terminal concerns.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def step(self, name: str, total: int | None = None) -> None:
        """A new step begins: `name`, with `total` units of work (None: not known)."""

    def advance(self, n: int = 1, detail: str = "") -> None:
        """`n` more units of the current step are done; `detail` names the last one."""


class NoProgress:
    """Nobody listens: the daemon, the workers, a piped command."""

    def step(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1, detail: str = "") -> None:
        pass


NO_PROGRESS: Progress = NoProgress()


class Within:
    """The steps of a job that is itself one step of a larger run (`run --once`): each step's
    name starts with the run's step, e.g. "2/3 deepen · summarizing stories"."""

    def __init__(self, outer: Progress, prefix: str) -> None:
        self.outer, self.prefix = outer, prefix

    def step(self, name: str, total: int | None = None) -> None:
        self.outer.step(f"{self.prefix} · {name}", total)

    def advance(self, n: int = 1, detail: str = "") -> None:
        self.outer.advance(n, detail)

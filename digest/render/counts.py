"""A count with its noun in English ("1 story", "2 stories"): the archive's pages and the
terminal's run reports say counts alike. Standard library only: the commands import it at
start-up (a reader's copy in another language counts through `digest.messages`)."""

from __future__ import annotations


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"

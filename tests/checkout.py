"""The `digest` a test runs is this checkout's, templates included.

With a venv whose editable install is another checkout (a git worktree run with the shared
venv), `digest.templates` would be that one's: PYTHONPATH finds this checkout's `digest`, but
its templates live beside it, where only the editable install's mapping points. `python -m
tests.checkout ARGS` is `digest ARGS` with this checkout's templates.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def own_templates() -> None:
    """Render this checkout's templates, whichever checkout the venv installed."""
    import digest.templates

    if Path(digest.templates.__path__[0]).resolve() != ROOT / "templates":
        digest.templates.__path__[:] = [str(ROOT / "templates")]


if __name__ == "__main__":
    from digest.runtime import stops

    stops.catch_early()  # as `python -m digest` does first
    own_templates()
    from digest.cli import main

    main()

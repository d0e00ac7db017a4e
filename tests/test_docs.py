"""Documentation that cannot drift: every command and option has help text and is in the README.

As sqlite-utils does it: the test walks the real click command tree, so a new command or option
fails here until it is documented.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from digest.cli import cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        found.append(path)
        if isinstance(command, click.Group):
            found += commands(command, path)
    return found


def command(path: tuple[str, ...]) -> click.Command:
    current: click.Command = cli
    for name in path:
        assert isinstance(current, click.Group)
        current = current.commands[name]
    return current


def options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


def readme_row(top: str) -> str:
    """The README's table row of a top-level command (all of its subcommands share it)."""
    rows = [line for line in README.splitlines() if line.startswith(f"| `digest {top}")]
    assert rows, f"`digest {top}` has no row in the README's command table"
    return " ".join(rows)


@pytest.mark.parametrize("path", commands(), ids=" ".join)
def test_every_command_has_help_and_a_readme_row(path: tuple[str, ...]) -> None:
    cmd = command(path)
    assert (cmd.help or "").strip(), f"`digest {' '.join(path)}` has no help text"
    row = readme_row(path[0])
    if len(path) > 1:
        assert f"`{path[-1]}" in row or f"{' '.join(path)}" in row, (
            f"`digest {' '.join(path)}` is not in the README's row for `digest {path[0]}`"
        )


@pytest.mark.parametrize("path", commands(), ids=" ".join)
def test_every_option_has_help_and_is_in_the_readme(path: tuple[str, ...]) -> None:
    cmd = command(path)
    row = readme_row(path[0])
    for option in options(cmd):
        flag = max(option.opts, key=len)
        assert (option.help or "").strip(), f"`digest {' '.join(path)} {flag}` has no help text"
        if option.hidden or flag == "--help":
            continue
        assert flag in row, f"`digest {' '.join(path)} {flag}` is not in the README"


def test_global_options_are_in_the_readme() -> None:
    for option in options(cli):
        flag = max(option.opts, key=len)
        assert (option.help or "").strip(), f"`digest {flag}` has no help text"
        if flag not in ("--help", "--version"):
            assert f"`{flag}" in README, f"the global option {flag} is not in the README"


def test_the_readme_lists_no_command_that_does_not_exist() -> None:
    tops = {path[0] for path in commands()}
    for line in README.splitlines():
        if line.startswith("| `digest "):
            name = line.split("`digest ", 1)[1].split()[0].rstrip("`")
            assert name in tops, f"the README documents `digest {name}`, which does not exist"

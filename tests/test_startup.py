"""Start-up: `digest.cli.main` turns the garbage collector off while a command imports what it
uses (nothing there is garbage) and a command's work runs with it on again."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from click.testing import CliRunner

from digest import cli
from digest.app import App
from digest.commands import manage
from digest.models import Subscriber


def test_a_commands_work_runs_with_the_collector_on_though_start_up_turned_it_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[bool] = []

    async def subscribers(app: App) -> list[Subscriber]:
        seen.append(gc.isenabled())
        return []

    monkeypatch.setattr(manage, "subscribers", subscribers)
    monkeypatch.chdir(tmp_path)  # no digest.toml: the built-in defaults
    gc.disable()  # as main() does before the command's imports
    try:
        result = CliRunner().invoke(cli.cli, ["subscribers", "list"])
    finally:
        gc.unfreeze()
        gc.enable()
    assert result.exit_code == 0, result.output
    assert seen == [True]

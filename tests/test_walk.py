"""bench/walk.py: the walk of a job through the floors, on a package of three files, and its
floors against the package imports of digest/ (a package imports from its floor and below)."""

from __future__ import annotations

from pathlib import Path

from bench.walk import FLOOR, Index, figures, walk
from tests.test_structure import package_imports

FILES = {
    "app.py": """
from pkg.store.store import Store

class App:
    async def store(self) -> Store:
        return Store()
""",
    "store/store.py": """
class Store:
    def rows(self) -> list[int]:
        return self._read()

    def _read(self) -> list[int]:
        return []

    def save(self, rows: list[int]) -> None:
        self._read()
""",
    "jobs/run.py": """
from pkg.app import App

async def run(app: App) -> None:
    store = await app.store()
    rows = store.rows()
    decide(rows)
    store.save(rows)

def decide(rows: list[int]) -> list[int]:
    return sorted(rows, key=_key)

def _key(row: int) -> int:
    return row
""",
}


def package(tmp_path: Path) -> Index:
    for name, text in {"__init__.py": "", "store/__init__.py": "", **FILES}.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    return Index(tmp_path / "pkg")


def test_every_call_is_walked_once_in_the_order_of_the_source(tmp_path: Path) -> None:
    index = package(tmp_path)
    every = walk(index, "pkg.jobs.run.run")
    assert [f for _, f in every.order] == [
        "pkg.jobs.run.run",
        "pkg.app.App.store",
        "pkg.store.store.Store.rows",
        "pkg.store.store.Store._read",
        "pkg.jobs.run.decide",
        "pkg.jobs.run._key",
        "pkg.store.store.Store.save",
    ]
    entered, back, up = figures(index, every)
    assert entered == {"pkg/jobs/run.py": 1, "pkg/app.py": 1, "pkg/store/store.py": 2}
    # Back up from the app's floor is no step; from the store's to the job's decide() is one.
    assert back == [
        ("pkg.jobs.run.run", "pkg.app.App.store"),
        ("pkg.store.store.Store._read", "pkg.jobs.run.decide"),
    ]
    assert [(c.caller, c.callee) for c in up] == [("pkg.jobs.run.run", "pkg.app.App.store")]


def test_following_the_app_leaves_out_what_is_handed_no_handle(tmp_path: Path) -> None:
    index = package(tmp_path)
    followed = walk(index, "pkg.jobs.run.run", app_only=True)
    assert [f for _, f in followed.order] == [
        "pkg.jobs.run.run",
        "pkg.app.App.store",
        "pkg.store.store.Store.rows",
        "pkg.store.store.Store._read",
        "pkg.store.store.Store.save",
    ]
    entered, back, _ = figures(index, followed)
    assert sum(entered.values()) == 4
    assert len(back) == 1


def test_a_package_imports_only_from_its_floor_and_below() -> None:
    def floor(package: str) -> int:
        return FLOOR[package.removeprefix("digest").removeprefix(".")]

    above = [
        f"{package} imports {other} ({why})"
        for package, imports in package_imports().items()
        for other, why in imports.items()
        if floor(other) > floor(package)
    ]
    assert above == []

"""The shape of the code, checked: what keeps it findable for the next person.

No import cycle anywhere in `digest/` (imports inside functions count; those under
`if TYPE_CHECKING:` do not, they never run), no part of the store over about 400 lines, a CLI that
never reaches into the store, and nothing outside the store that touches its private parts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "digest"
STORE_MODULE_LINES = 420


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imported(name: str) -> set[str]:
    """The digest modules `name` imports when it runs (`from pkg import module` counts as the
    module, `from pkg import name` as the package)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in MODULES else base)
    return {m for m in found if m in MODULES and m != name}


def cycle() -> list[str] | None:
    """One import cycle among digest's modules, or None."""
    graph = {name: imported(name) for name in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_import_cycle_in_digest() -> None:
    found = cycle()
    assert found is None, "import cycle: " + " -> ".join(found or [])


def test_the_cycle_check_sees_cycles() -> None:
    # The check itself: imported() sees function-level imports (digest.cli imports the store's
    # users lazily), and relative or submodule imports resolve to modules.
    assert "digest.manage" in imported("digest.cli")
    assert "digest.store.base" in imported("digest.store.articles")


@pytest.mark.parametrize(
    "name", sorted(n for n in MODULES if n.startswith("digest.store.")), ids=str
)
def test_no_part_of_the_store_is_over_about_400_lines(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= STORE_MODULE_LINES, f"{name} has {lines} lines: split it by domain"


def test_the_cli_imports_nothing_from_the_store() -> None:
    reached = {
        m for m in imported("digest.cli") if m == "digest.store" or m.startswith("digest.store.")
    }
    assert reached == set()


def test_nothing_outside_the_store_touches_its_private_parts() -> None:
    store_private = {
        attr
        for path in (PACKAGE / "store").glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
        and (attr := node.name).startswith("_")
        and not attr.startswith("__")
    }
    outside = [p for n, p in MODULES.items() if not n.startswith("digest.store")]
    root = PACKAGE.parent
    for path in [*outside, *(root / "tests").glob("*.py"), *(root / "bench").glob("*.py")]:
        name = str(path.relative_to(root))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in store_private
                and isinstance(node.value, ast.Name)
                and node.value.id in ("store", "other")
            ):
                raise AssertionError(f"{name} calls the store's private {node.attr}()")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("digest.store"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{name} imports the store's private {private}"

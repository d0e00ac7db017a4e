"""The walk of a job through the floors (issue 40): which files following its calls enters,
and how often it climbs back up the layout.

Run from the repository root:

    .venv/bin/python bench/walk.py [--entry digest.jobs.deepen.read_story ...]
                                   [--follow app|calls|both] [--show]

Without --entry it walks publish (`digest.jobs.publish.publish`) and deepen's `read_story`.
The walk is static (ast; digest is not imported): from the entry function, depth-first in the
order of the calls in its source, into each function or method of `digest/` it calls, each
once. "every call" follows them all; "following the app" only a call on a handle or handing
one on (as an argument, or `to_thread(f, store)`): a handle is the app, the store, a port (a
Protocol of jobs/ or queue/), a part the app hands out (`await app.channels()`, a property
of a handle) or an object made with one (`SqlLedger(store)`); a parameter handed one is one.
A call is resolved through its module's imports (those inside functions too), re-exports,
`module.func`, `Class.method` and `self.method` (through the bases, in order), a class called
(its `__init__` or `__post_init__`), and a method of a receiver whose class it knows: for a
parameter, the class of what the call site handed it, else its annotation if not a Protocol,
else by name (`app`, `self.app`: `App`; `store`, `self.store`: `Store`, its mixins), else
the Protocol; for a variable, its value's (an instance, or a result by its function's return
annotation). A method of a Protocol is that of the one class of `digest/` (not a Protocol)
with a method of that name. A function passed (`key=_rank`) and a property read count as
calls; a nested function's calls count as its enclosing function's; each function is walked
with what its first call site handed it.
It cannot follow dynamic dispatch (a function in a dict, a variable or an attribute, the
runner's and the queue's units, `getattr`), a receiver whose class it cannot tell (a loop
variable, an unannotated parameter, an element of a list, an attribute of self typed by a
Protocol), a method name two classes share behind a Protocol (the translator, the runner),
nor what templates and libraries call back.

Figures: the files entered (the entry's, and each a call goes to from another file), how
often each was entered; steps back up along the path (a function visited right after one on
a lower floor: the reader climbs back after a descent; following the app, the count that
matches issue 40's, docs/benchmarks.md) and calls up (a call from a lower floor to a higher
one). The floors (FLOORS) are the layout of docs/how-it-works.md in the order of the
package imports, which tests/test_structure.py keeps free of loops: a package imports only
from its floor and below (tests/test_walk.py checks it), so a call up is never an import but
a call through a handle (`app.store()` in a job) or a port (deliver's `LedgerStore`).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "digest"
ENTRIES = ("digest.jobs.publish.publish", "digest.jobs.deepen.read_story")
# Lowest first; a package is a folder of digest/ or a module of its root ("" is digest itself).
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("domain", ("", "config", "models", "errors", "schedule", "messages", "runtime")),
    ("reading", ("stories", "facts", "subscribers")),
    ("model and memory", ("summarize", "memory")),
    ("edition", ("edition",)),
    ("stages", ("sources", "fetch", "crawl", "render", "deliver")),
    ("store", ("store",)),
    ("jobs", ("jobs", "queue")),
    ("app", ("app",)),
    ("faces", ("ondemand", "mcp", "web")),
    ("shells", ("daemon", "worker", "commands", "cli", "__main__")),
)
RECEIVERS = {"app": "app.App", "store": "store.store.Store"}  # by name, under the package
PORTS_IN = ("jobs", "queue")  # where the Protocols that stand for the app's parts live
WRAPPERS = {"Optional", "Awaitable", "Iterator", "AsyncIterator", "Generator", "AsyncGenerator"}
Function = ast.FunctionDef | ast.AsyncFunctionDef
Given = frozenset[tuple[str, str]]  # a parameter, the class of what it was handed


@dataclass
class Scope:
    module: str
    cls: str | None = None
    types: dict[str, str | None] = field(default_factory=dict)  # a variable's class
    handles: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Call:
    caller: str
    callee: str
    line: int
    handed: frozenset[str]  # the callee's parameters handed a handle (its self: called on one)
    given: Given = frozenset()


def imports(name: str, is_package: bool, tree: ast.Module) -> Iterator[tuple[str, str]]:
    package = (name if is_package else name.rpartition(".")[0]).split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield (a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2
        elif isinstance(node, ast.ImportFrom):
            up = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*up, node.module] if node.module else up)
            yield from ((a.asname or a.name, f"{base}.{a.name}") for a in node.names)


def decorators(function: Function) -> str:
    return " ".join(ast.unparse(d) for d in function.decorator_list)


class Index:
    """Every module, function and class of a package, and what the names in them name."""

    def __init__(self, package: Path) -> None:
        self.root, self.base = package.name, package.parent
        self.paths: dict[str, Path] = {}
        self.names: dict[str, dict[str, str]] = {}  # per module: a name imported, what it is
        self.functions: dict[str, tuple[str, Function, str | None]] = {}  # module, node, class
        self.classes: dict[str, tuple[str, ast.ClassDef]] = {}
        self._calls: dict[tuple[str, frozenset[str], Given], list[Call]] = {}
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(self.base).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            self.paths[name], self.names[name] = path, {}
            for local, what in imports(name, path.stem == "__init__", tree):
                if what.split(".")[0] == self.root:
                    self.names[name].setdefault(local, what)
            for node in tree.body:
                if isinstance(node, Function):
                    self.functions[f"{name}.{node.name}"] = (name, node, None)
                elif isinstance(node, ast.ClassDef):
                    self.classes[cls := f"{name}.{node.name}"] = (name, node)
                    for item in node.body:
                        if isinstance(item, Function):
                            self.functions[f"{cls}.{item.name}"] = (name, item, cls)
        self.app, self.store = (self.resolve(f"{self.root}.{c}") for c in RECEIVERS.values())

    def resolve(self, qual: str, hops: int = 0) -> str | None:
        """The function, class or module `qual` names, through re-exports."""
        if qual in self.functions or qual in self.classes or qual in self.paths:
            return qual
        where, _, attr = qual.rpartition(".")
        if where in self.classes:
            return self.method(where, attr)
        if attr not in self.names.get(where, {}) or hops > 10:
            return None
        return self.resolve(self.names[where][attr], hops + 1)

    def is_protocol(self, cls: str) -> bool:
        bases = [ast.unparse(b).partition("[")[0] for b in self.classes[cls][1].bases]
        return "Protocol" in bases or "typing.Protocol" in bases

    def is_handle(self, cls: str | None) -> bool:
        if cls is None or cls not in self.classes:
            return False
        return cls in (self.app, self.store) or (
            self.is_protocol(cls) and cls.split(".")[1] in PORTS_IN
        )

    def method(self, cls: str, name: str) -> str | None:
        if self.is_protocol(cls):
            some = [f for f, (_, _, c) in self.functions.items() if c and not self.is_protocol(c)
                    and f.rpartition(".")[2] == name]  # fmt: skip
            return some[0] if len(some) == 1 else None
        if f"{cls}.{name}" in self.functions:
            return f"{cls}.{name}"
        bases = (self.target(b, Scope(self.classes[cls][0])) for b in self.classes[cls][1].bases)
        found = (self.method(b, name) for b in bases if b in self.classes)
        return next(filter(None, found), None)

    def annotation(self, node: ast.expr | None, module: str) -> str | None:
        """The class of the package an annotation names (`X | None`, `AsyncIterator[X]`)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return self.annotation(ast.parse(node.value, mode="eval").body, module)
        if isinstance(node, ast.BinOp):
            return self.annotation(node.left, module) or self.annotation(node.right, module)
        if isinstance(node, ast.Subscript):
            inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
            wraps = ast.unparse(node.value).rpartition(".")[2] in WRAPPERS
            return self.annotation(inner, module) if wraps else None
        found = self.target(node, Scope(module)) if node is not None else None
        return found if found in self.classes else None

    def class_of(self, node: ast.expr, scope: Scope) -> str | None:
        """The class of the package `node`'s value is an instance of, when it can tell."""
        if isinstance(node, ast.Await):
            return self.class_of(node.value, scope)
        if isinstance(node, ast.Name):
            if node.id in ("self", "cls"):
                return scope.types.get(node.id) or scope.cls
            return scope.types.get(node.id, {"app": self.app, "store": self.store}.get(node.id))
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "self" and scope.cls:
            if by_name := RECEIVERS.get(node.attr.lstrip("_")):
                return self.resolve(f"{self.root}.{by_name}")
            for item in ast.walk(self.classes[scope.cls][1]):
                if isinstance(item, ast.AnnAssign) and ast.unparse(item.target) in (
                    node.attr, f"self.{node.attr}"
                ):  # fmt: skip
                    return self.annotation(item.annotation, scope.module)
        if isinstance(node, ast.Call) and (called := self.target(node.func, scope)):
            if called in self.functions:
                module, function, _ = self.functions[called]
                return self.annotation(function.returns, module)
            return called if called in self.classes else None
        return None

    def target(self, node: ast.expr, scope: Scope) -> str | None:
        """The function, class or module of the package an expression names."""
        if isinstance(node, ast.Name):
            if node.id in scope.types or node.id in ("self", "cls"):
                return None
            own = f"{scope.module}.{node.id}"
            if own in self.functions or own in self.classes:
                return own
            imported = self.names[scope.module].get(node.id)
            return self.resolve(imported) if imported else None
        if not isinstance(node, ast.Attribute):
            return None
        if cls := self.class_of(node.value, scope):
            return self.method(cls, node.attr)
        base = self.target(node.value, scope)
        return self.resolve(f"{base}.{node.attr}") if base else None

    def hands(self, node: ast.expr, scope: Scope) -> bool:
        """Whether a value is a handle (see the module's docstring)."""
        if isinstance(node, ast.Await):
            return self.hands(node.value, scope)
        if isinstance(node, ast.Name) and node.id in scope.handles:
            return True
        if self.is_handle(self.class_of(node, scope)):
            return True
        if isinstance(node, ast.Attribute) and self.hands(node.value, scope):
            read = self.functions.get(self.target(node, scope) or "")
            return read is not None and "property" in decorators(read[1])
        if not isinstance(node, ast.Call):
            return False
        if (
            isinstance(node.func, ast.Attribute)
            and self.class_of(node.func.value, scope) == self.app
        ):
            return True  # a part the app hands out
        given = [*node.args, *(k.value for k in node.keywords)]
        made = self.target(node.func, scope) in self.classes
        return made and any(self.hands(g, scope) for g in given)

    def scope(self, function: str, handed: frozenset[str], given: Given) -> Scope:
        module, node, cls = self.functions[function]
        scope, got = Scope(module, cls), dict(given)
        by_name = {"app": self.app, "store": self.store}
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            note = self.annotation(arg.annotation, module)
            concrete = note if note and not self.is_protocol(note) else None
            scope.types[arg.arg] = got.get(arg.arg) or concrete or by_name.get(arg.arg) or note
            if arg.arg in handed or self.is_handle(scope.types[arg.arg]):
                scope.handles.add(arg.arg)
        bound: list[tuple[ast.expr, ast.expr]] = []
        for item in ast.walk(node):
            if isinstance(item, ast.Assign) and len(item.targets) == 1:
                bound.append((item.targets[0], item.value))
            elif isinstance(item, ast.AnnAssign) and item.value is not None:
                bound.append((item.target, item.value))
            elif isinstance(item, ast.withitem) and item.optional_vars is not None:
                bound.append((item.optional_vars, item.context_expr))
        for name, value in sorted(bound, key=lambda b: (b[0].lineno, b[0].col_offset)):
            if isinstance(name, ast.Name):
                found = self.class_of(value, scope) or by_name.get(name.id)
                known = scope.types.get(name.id, found)
                scope.types[name.id] = found if known == found else None
                if self.hands(value, scope):
                    scope.handles.add(name.id)
        return scope

    def calls(self, function: str, handed: frozenset[str], given: Given) -> list[Call]:
        """What `function` calls of the package, in the order of its source; `handed`: its
        parameters that were handed a handle, `given`: the class each parameter got."""
        if (function, handed, given) not in self._calls:
            visitor = Calls(self, function, self.scope(function, handed, given))
            for statement in self.functions[function][1].body:
                visitor.visit(statement)
            self._calls[function, handed, given] = visitor.found
        return self._calls[function, handed, given]

    def floor(self, function: str) -> int:
        package = self.functions[function][0].split(".")[1:2]
        return FLOOR[package[0] if package else ""]


FLOOR = {package: n for n, (_, packages) in enumerate(FLOORS) for package in packages}


class Calls(ast.NodeVisitor):
    def __init__(self, index: Index, function: str, scope: Scope) -> None:
        self.index, self.function, self.scope = index, function, scope
        self.found: list[Call] = []

    def record(self, node: ast.expr, call: ast.Call | None = None) -> None:
        index, target = self.index, self.index.target(node, self.scope)
        if call is not None and target in index.classes:
            made = (index.method(target, n) for n in ("__init__", "__post_init__"))
            target = next(filter(None, made), None)
        if target not in index.functions:
            return
        _, function, cls = index.functions[target]
        params = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        on = node.value if isinstance(node, ast.Attribute) else None
        bound = cls is not None and "staticmethod" not in decorators(function)
        bound = bound and (on is None or index.target(on, self.scope) not in index.classes)
        pairs = [(params[0], on)] if bound and on else []
        pairs += [(p, v) for p, v in zip(params[bound:], call.args if call else [], strict=False)]
        pairs += [(k.arg, k.value) for k in (call.keywords if call else []) if k.arg]
        handed = {p for p, v in pairs if index.hands(v, self.scope)}
        got = {(p, c) for p, v in pairs if (c := index.class_of(v, self.scope))}
        given = {(p, c) for p, c in got if not index.is_protocol(c)}
        self.found.append(
            Call(self.function, target, node.lineno, frozenset(handed), frozenset(given))
        )

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            self.visit(node.func.value if isinstance(node.func, ast.Attribute) else node.func)
        for i, given in enumerate(node.args):  # to_thread(f, store), partial(f, app): f(store)
            named = isinstance(given, ast.Name | ast.Attribute)
            if named and self.index.target(given, self.scope) in self.index.functions:
                self.visit(given.value) if isinstance(given, ast.Attribute) else None
                self.record(given, ast.Call(given, node.args[i + 1 :], []))
            else:
                self.visit(given)
        for keyword in node.keywords:
            self.visit(keyword)
        self.record(node.func, node)

    def visit_Name(self, node: ast.Name) -> None:
        self.record(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.visit(node.value)
        self.record(node)


@dataclass
class Walk:
    order: list[tuple[int, str]] = field(default_factory=list)  # (depth, function), visited
    calls: list[Call] = field(default_factory=list)  # those followed


def walk(index: Index, entry: str, *, app_only: bool = False) -> Walk:
    if entry not in index.functions:
        raise SystemExit(f"no function {entry} in {index.root}/")
    result, seen = Walk(), set[str]()

    def visit(function: str, depth: int, handed: frozenset[str], given: Given) -> None:
        seen.add(function)
        result.order.append((depth, function))
        for call in index.calls(function, handed, given):
            if call.callee not in seen and (call.handed or not app_only):
                result.calls.append(call)
                visit(call.callee, depth + 1, call.handed, call.given)

    visit(entry, 0, frozenset(), frozenset())
    return result


def figures(index: Index, walk: Walk) -> tuple[Counter[str], list[tuple[str, str]], list[Call]]:
    """How often each file was entered, the steps back up along the path, the calls up."""
    file = {
        f: str(index.paths[index.functions[f][0]].relative_to(index.base)) for _, f in walk.order
    }
    entered = Counter([file[walk.order[0][1]]])
    entered.update(file[c.callee] for c in walk.calls if file[c.callee] != file[c.caller])
    path = [f for _, f in walk.order]
    back = [(a, b) for a, b in itertools.pairwise(path) if index.floor(b) > index.floor(a)]
    up = [c for c in walk.calls if index.floor(c.callee) > index.floor(c.caller)]
    return entered, back, up


def report(index: Index, walk: Walk, how: str, show: bool) -> None:
    entered, back, up = figures(index, walk)
    caller = {c.callee: c.caller for c in walk.calls}

    def at(function: str) -> str:
        return FLOORS[index.floor(function)][0]

    def where(function: str) -> str:
        return f"{function.removeprefix(index.root + '.')} ({at(function)})"

    counts = f"{len(back)} steps back up, {len(up)} calls up"
    print(f"{walk.order[0][1]}, {how}: {len(walk.order)} functions, {len(entered)} files "
          f"entered {sum(entered.values())} times, {counts}")  # fmt: skip
    print("  files (times entered):", ", ".join(f"{f} {n}" for f, n in entered.most_common()))
    climbs = Counter(f"{at(a)} -> {at(b)}" for a, b in back)
    print("  steps back up:", ", ".join(f"{k} {n}" for k, n in climbs.most_common()))
    for c in up:
        print(f"  call up: {where(c.caller)} line {c.line} -> {where(c.callee)}")
    for a, b in back if show else ():
        print(f"  back up: after {where(a)}, {where(caller[b])} calls {where(b)}")
    for depth, function in walk.order if show else ():
        print(f"  {'  ' * depth}{function}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entry", action="append", help="e.g. digest.jobs.deepen.read_story")
    parser.add_argument("--follow", choices=("app", "calls", "both"), default="both")
    parser.add_argument("--show", action="store_true", help="print the walk's path")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(10_000)
    index = Index(PACKAGE)
    for entry in args.entry or ENTRIES:
        if args.follow != "calls":
            report(index, walk(index, entry, app_only=True), "following the app", args.show)
        if args.follow != "app":
            report(index, walk(index, entry), "every call", args.show)


if __name__ == "__main__":
    main()

"""The store's async face (`digest.store.face.StoreFace`) keeps step with `Store`: one awaited
method for each public method of the store, with the same parameters, defaults and types, which
runs the store's method in a thread and gives back what it returns."""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
import threading
from pathlib import Path

import pytest

from digest.models import FeedState
from digest.store import Store, open_store
from digest.store.face import StoreFace


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def stub(name: str) -> str:
    """The face's method for the store's method `name`, as face.py writes it: its parameters and
    return type as the store's source spells them, the call passing them on."""
    method = getattr(Store, name)
    source = textwrap.dedent(inspect.getsource(method))
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    parameters = ast.unparse(node.args)
    returns = ast.unparse(node.returns) if node.returns else "None"
    passed = []
    for p in list(inspect.signature(method).parameters.values())[1:]:
        if p.kind is p.KEYWORD_ONLY:
            passed.append(f"{p.name}={p.name}")
        elif p.kind is p.VAR_POSITIONAL:
            passed.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            passed.append(f"**{p.name}")
        else:
            passed.append(p.name)
    call = ", ".join([f"self.sync.{name}", *passed])
    return (
        f"    async def {name}({parameters}) -> {returns}:\n"
        f"        return await self._hop({call})\n"
    )


def test_the_face_has_every_public_method_of_the_store_with_its_signature() -> None:
    store, face = public_methods(Store), public_methods(StoreFace)
    missing = sorted(set(store) - set(face))
    assert missing == [], "StoreFace lacks (paste into digest/store/face.py):\n\n" + "\n".join(
        stub(name) for name in missing
    )
    differ = sorted(name for name in store if face[name] != store[name])
    assert differ == [], "StoreFace's signatures differ from Store's (as face.py has them):\n\n" + (
        "\n".join(stub(name) for name in differ)
    )


# The face's own: several store calls in one hop, and opening the database.
OWN = {"call", "open"}


def test_the_face_has_no_method_the_store_lacks() -> None:
    extra = set(public_methods(StoreFace)) - set(public_methods(Store)) - OWN
    assert extra == set()


def test_every_method_of_the_face_is_awaited_and_hops_once() -> None:
    """Each is a coroutine function whose body is the one hop (`self._hop(self.sync.name, ...)`):
    nothing is decided in the face."""
    tree = ast.parse(Path(inspect.getfile(StoreFace)).read_text(encoding="utf-8"))
    (face,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "StoreFace"]
    for node in face.body:
        if not isinstance(node, ast.AsyncFunctionDef) or node.name.startswith("_"):
            continue
        if node.name in OWN:
            continue
        body = [n for n in node.body if not isinstance(n, ast.Expr)]  # a docstring aside
        assert len(body) == 1, node.name
        (ret,) = body
        assert isinstance(ret, ast.Return)
        assert isinstance(ret.value, ast.Await)
        call = ret.value.value
        assert isinstance(call, ast.Call)
        assert ast.unparse(call.func) == "self._hop", node.name
        assert ast.unparse(call.args[0]) == f"self.sync.{node.name}", node.name


@pytest.fixture
def face(tmp_path: Path) -> StoreFace:
    return StoreFace(open_store(f"sqlite:///{tmp_path / 'digest.db'}"))


def test_a_method_runs_in_a_thread_and_gives_back_the_stores_answer(face: StoreFace) -> None:
    threads: list[int] = []

    def feed_state(url: str) -> FeedState | None:
        threads.append(threading.get_ident())
        return Store.feed_state(face.sync, url)

    async def main() -> tuple[FeedState | None, list[FeedState]]:
        face.sync.feed_state = feed_state  # type: ignore[method-assign]
        state = FeedState(url="https://example.org/feed", category="world", etag='"1"')
        await face.save_feed_states([state])
        return await face.feed_state(state.url), await face.feed_states()

    try:
        found, every = asyncio.run(main())
    finally:
        face.sync.close()
    assert found is not None and found.etag == '"1"'
    assert [s.url for s in every] == ["https://example.org/feed"]
    assert threads and threads[0] != threading.get_ident()


def test_call_runs_work_with_the_store_in_one_hop(face: StoreFace) -> None:
    def both(store: Store, url: str) -> tuple[int, bool]:
        store.save_feed_state(FeedState(url=url, category="world"))
        return threading.get_ident(), store.feed_state(url) is not None

    try:
        ident, found = asyncio.run(face.call(both, "https://example.org/feed"))
    finally:
        face.sync.close()
    assert found and ident != threading.get_ident()

"""/api/v1/ on the real server (`digest.serve.make_app`, as `digest serve` mounts it) over a
store with today's clustered stories and three past editions: each endpoint answers what the
commands' --json print and what its OpenAPI description says, ETag round trips, pagination,
the rate limit, hostile query strings (never a 500), JSON 404s, and the token rule off
localhost. Answers are checked against the description with `jsonschema`."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.api.limits import RateLimit, bearer_ok, is_loopback
from digest.api.openapi import SPEC
from digest.api.routes import etag_matches
from digest.app import App
from digest.config import StoriesConfig, load_config
from digest.jobs.clustering import cluster_category
from digest.serve import make_app
from digest.store import open_store
from digest.store.edition_codec import encode_edition
from tests.configs import write_config
from tests.conftest import free_port, start_cli
from tests.editions import make_edition
from tests.storefixtures import item

PAST = [date(2026, 11, 27), date(2026, 11, 28), date(2026, 11, 29)]
TOKEN_ENV = "DIGEST_TEST_API_TOKEN"

Client = Callable[..., Any]


def fill(folder: Path) -> None:
    """Today's articles of two categories, clustered into stories, and three past editions."""
    now = datetime.now(UTC)
    items = [
        item(
            f"https://{outlet}.example/{n}",
            title=f"Harbour {title} as storm hits the coast",
            category="world",
            source=outlet,
            published=now - timedelta(minutes=n),
            lede=f"The harbour {title} overnight, {outlet} reports.",
        )
        for n, (outlet, title) in enumerate(
            [("reuters", "floods"), ("apnews", "floods"), ("bbc", "wall breaks")]
        )
    ] + [
        item(
            "https://ars.example/chip",
            title="Chipmaker unveils a 2-nanometre processor",
            category="technology",
            source="Ars",
            published=now,
            lede="A chipmaker showed a processor.",
        )
    ]
    with open_store(f"sqlite:///{folder / 'digest.db'}") as store:
        store.upsert_items(items, seen_at=now)
        for category in ("world", "technology"):
            cluster_category(store, category, now=now, config=StoriesConfig())
        for day in PAST:
            store.save_edition(make_edition(day, categories=("technology", "world")))


async def serve(folder: Path, *, host: str = "127.0.0.1") -> AsyncIterator[Client]:
    (folder / "site").mkdir(exist_ok=True)
    async with App(load_config(folder / "digest.toml")) as app:
        server = TestServer(make_app(app, folder / "site", host=host), host="127.0.0.1")
        async with TestClient(server) as client:
            yield client


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_config(tmp_path, serve={"api_rate": 1000.0, "api_burst": 1000})
    fill(tmp_path)
    return tmp_path


@pytest.fixture
async def client(folder: Path) -> AsyncIterator[Client]:
    async for c in serve(folder):
        yield c


def valid(path: str, status: int, body: Any) -> None:
    """`body` as the OpenAPI description says `path` answers with `status`."""
    response = SPEC["paths"][path]["get"]["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    validator = jsonschema.Draft202012Validator({**schema, "components": SPEC["components"]})
    validator.validate(body)


async def get_json(client: Client, url: str, status: int = 200, **kw: Any) -> Any:
    response = await client.get(url, **kw)
    assert response.status == status, await response.text()
    assert response.content_type == "application/json"
    return await response.json()


async def test_editions_list_and_one_edition_as_stored(client, folder):
    listed = await get_json(client, "/api/v1/editions")
    valid("/editions", 200, listed)
    assert [e["day"] for e in listed["editions"]] == [d.isoformat() for d in reversed(PAST)]
    assert listed["next"] is None
    assert listed["editions"][0]["counts"]["stories"] > 0
    one = await get_json(client, "/api/v1/editions/2026-11-28")
    valid("/editions/{day}", 200, one)
    with open_store(f"sqlite:///{folder / 'digest.db'}") as store:
        stored = store.edition(date(2026, 11, 28))
    assert stored is not None and one == json.loads(json.dumps(encode_edition(stored)))
    missing = await get_json(client, "/api/v1/editions/2026-01-01", 404)
    valid("/editions/{day}", 404, missing)
    assert "2026-01-01" in missing["error"]
    bad = await get_json(client, "/api/v1/editions/yesterday", 400)
    assert "YYYY-MM-DD" in bad["error"]


async def test_editions_page_by_cursor_and_by_page_number(client):
    first = await get_json(client, "/api/v1/editions?limit=2")
    assert [e["day"] for e in first["editions"]] == ["2026-11-29", "2026-11-28"]
    assert first["next"] == "/api/v1/editions?limit=2&cursor=2026-11-28"
    rest = await get_json(client, first["next"])
    assert [e["day"] for e in rest["editions"]] == ["2026-11-27"] and rest["next"] is None
    second = await get_json(client, "/api/v1/editions?limit=2&page=2")
    assert second["editions"] == rest["editions"]
    both = await get_json(client, "/api/v1/editions?cursor=2026-11-28&page=2", 400)
    assert "either" in both["error"]
    too_many = await get_json(client, "/api/v1/editions?limit=1000", 400)
    assert "limit" in too_many["error"]


async def test_todays_stories_are_what_digest_stories_json_prints(client, folder):
    from digest.ondemand.quick import todays_stories_json

    found = await get_json(client, "/api/v1/stories")
    valid("/stories", 200, found)
    async with App(load_config(folder / "digest.toml")) as app:
        assert found == json.loads(json.dumps(await todays_stories_json(app)))
    world = await get_json(client, "/api/v1/stories?category=world")
    assert world and {s["category"] for s in world} == {"world"}
    harbour = next(s for s in world if "Harbour" in s["title"])
    assert harbour["outlet_count"] == 3
    one = await get_json(client, f"/api/v1/stories/{harbour['id']}")
    valid("/stories/{story_id}", 200, one)
    assert one["id"] == harbour["id"] and len(one["outlets"]) == 3
    unknown = await get_json(client, "/api/v1/stories?category=sport", 400)
    assert "unknown category" in unknown["error"]


async def test_a_past_days_stories_are_its_editions(client):
    found = await get_json(client, "/api/v1/stories?date=2026-11-29&category=technology")
    valid("/stories", 200, found)
    edition = await get_json(client, "/api/v1/editions/2026-11-29")
    tech = next(s for s in edition["sections"] if s["category"] == "technology")
    assert found == tech["stories"]
    none = await get_json(client, "/api/v1/stories?date=2020-01-01", 404)
    assert "2020-01-01" in none["error"]


async def test_a_missing_story_is_a_json_404(client):
    missing = await get_json(client, "/api/v1/stories/999999", 404)
    valid("/stories/{story_id}", 404, missing)
    assert missing == {"error": "there is no story 999999"}


async def test_search_is_digest_search_json(client, folder):
    from digest.ondemand.quick import search_archive

    hits = await get_json(client, "/api/v1/search?q=harbour&category=world&since=1d&limit=5")
    valid("/search", 200, hits)
    assert hits and "harbour" in hits[0]["title"].lower()
    async with App(load_config(folder / "digest.toml")) as app:
        direct = await search_archive(app, "harbour", category="world", limit=5)
    assert [h["url"] for h in hits] == [h.to_json()["url"] for h in direct]
    assert await get_json(client, "/api/v1/search?q=harbour&since=2099-01-01") == []
    empty = await get_json(client, "/api/v1/search?q=", 400)
    valid("/search", 400, empty)
    assert "q" in empty["error"]


async def test_an_etag_round_trip_answers_304_until_the_answer_changes(client):
    first = await client.get("/api/v1/editions")
    etag = first.headers["ETag"]
    again = await client.get("/api/v1/editions", headers={"If-None-Match": etag})
    assert again.status == 304 and await again.read() == b""
    other = await client.get("/api/v1/editions?limit=1", headers={"If-None-Match": etag})
    assert other.status == 200 and other.headers["ETag"] != etag


async def test_a_client_over_the_rate_gets_429_with_retry_after(tmp_path: Path):
    write_config(tmp_path, serve={"api_rate": 0.5, "api_burst": 3})
    fill(tmp_path)
    async for client in serve(tmp_path):
        statuses = [(await client.get("/api/v1/editions")).status for _ in range(3)]
        assert statuses == [200, 200, 200]
        over = await client.get("/api/v1/editions")
        assert over.status == 429 and int(over.headers["Retry-After"]) >= 1
        valid("/editions", 429, await over.json())
        assert "too many" in (await over.json())["error"]


async def test_the_api_wants_the_configured_bearer_token_and_one_off_localhost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    write_config(tmp_path, serve={"api_token_env": TOKEN_ENV})
    fill(tmp_path)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    async for client in serve(tmp_path, host="0.0.0.0"):
        refused = await get_json(client, "/api/v1/editions", 403)
        valid("/editions", 403, refused)
        assert "api_token_env" in refused["error"]
    monkeypatch.setenv(TOKEN_ENV, "s3cret-token")
    async for client in serve(tmp_path, host="0.0.0.0"):
        valid("/editions", 401, await get_json(client, "/api/v1/editions", 401))
        wrong = {"Authorization": "Bearer nope"}
        assert (await client.get("/api/v1/editions", headers=wrong)).status == 401
        right = {"Authorization": "Bearer s3cret-token"}
        assert (await client.get("/api/v1/editions", headers=right)).status == 200
    async for client in serve(tmp_path, host="127.0.0.1"):
        # a configured token is wanted on localhost too: a proxy may forward the internet there
        assert (await client.get("/api/v1/editions")).status == 401
        assert (await client.get("/api/v1/editions", headers=right)).status == 200
    monkeypatch.delenv(TOKEN_ENV)
    async for client in serve(tmp_path, host="127.0.0.1"):
        assert (await client.get("/api/v1/editions")).status == 200  # localhost, no token set


async def test_the_openapi_description_and_the_routes_agree(client):
    spec = await get_json(client, "/api/v1/openapi.json")
    assert spec == json.loads(json.dumps(SPEC)) and spec["openapi"].startswith("3.1")
    app: web.Application = client.server.app
    routed = {
        r.resource.canonical.removeprefix("/api/v1")
        for r in app.router.routes()
        if r.resource is not None
        and r.resource.canonical.startswith("/api/v1/")
        and r.method == "GET"
    }
    assert routed == set(SPEC["paths"])
    jsonschema.Draft202012Validator.check_schema(SPEC["components"]["schemas"]["Story"])


QUERY = st.text(st.characters(codec="utf-8"), max_size=40)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(["/api/v1/search", "/api/v1/stories", "/api/v1/editions"]),
    params=st.dictionaries(
        st.sampled_from(["q", "category", "since", "limit", "date", "cursor", "page"]), QUERY
    ),
    tail=QUERY,
)
async def test_hostile_query_strings_never_get_a_500(client, path, params, tail):
    response = await client.get(path, params=params)
    assert response.status in (200, 400, 404), await response.text()
    if response.status != 200:
        assert set(await response.json()) == {"error"}
    one = await client.get("/api/v1/stories/" + tail.replace("/", "%2F").replace("?", "%3F"))
    assert one.status < 500


@pytest.mark.slow
def test_the_real_digest_serve_answers_the_api(folder: Path):
    """`digest serve` as a reader starts it mounts /api/v1 beside the archive."""
    port = free_port()
    server = start_cli("serve", "--port", str(port), cwd=folder)
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(base + "/editions", timeout=10) as r:
                    listed = json.loads(r.read())
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        valid("/editions", 200, listed)
        assert len(listed["editions"]) == len(PAST)
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(base + "/stories/123456", timeout=10)
        assert missing.value.code == 404
        assert json.loads(missing.value.read()) == {"error": "there is no story 123456"}
    finally:
        server.terminate()
        server.wait(10)


@given(
    rate=st.floats(0.1, 100),
    burst=st.integers(1, 50),
    gaps=st.lists(st.floats(0, 5), max_size=200),
)
def test_the_rate_limit_never_lets_through_more_than_burst_and_rate(rate, burst, gaps):
    limit = RateLimit(rate=rate, burst=burst)
    now, allowed = 0.0, 0
    for gap in gaps:
        now += gap
        wait = limit.take("client", now)
        allowed += wait == 0
        assert wait >= 0
    assert allowed <= burst + rate * now + 1e-6
    other = limit.take("other", now)
    assert other == 0  # one client's requests never spend another's


def test_the_token_rule_and_etags():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")
    assert bearer_ok("Bearer abc", "abc") and bearer_ok("bearer  abc ", "abc")
    assert not bearer_ok("Bearer abd", "abc") and not bearer_ok("Basic abc", "abc")
    assert not bearer_ok("Bearer ", "") and not bearer_ok(None, "abc")
    assert not bearer_ok("Bearer é", "abc")
    assert etag_matches('"x", W/"y"', '"y"') and etag_matches("*", '"z"')
    assert not etag_matches('"x"', '"y"') and not etag_matches("", '"y"')


async def test_a_new_install_lists_no_editions(tmp_path: Path):
    write_config(tmp_path)
    async for client in serve(tmp_path):
        assert await get_json(client, "/api/v1/editions") == {"editions": [], "next": None}
        missing = await get_json(client, "/api/v1/stories/1", 404)
        assert "no archive yet" in missing["error"]

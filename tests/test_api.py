"""/api/v1/ on the real server (`digest.web.server.make_app`, as `digest serve` mounts it) over a
store with today's clustered stories and three past editions: each endpoint answers what the
commands' --json print and what its OpenAPI description says, ETag round trips, pagination,
the rate limit, hostile query strings and paths (never a 500), JSON 404s and 500s, a story's
timeline, and the token rule off localhost. Every request a test makes, and its answer, is
checked against the description by openapi-core (status, content type, headers, body; a request
that breaks the description must get 400), and the description itself by
openapi-spec-validator."""

from __future__ import annotations

import json
import logging
import socket
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_core.exceptions import OpenAPIError
from openapi_core.templating.paths.exceptions import PathError
from openapi_core.validation.request.exceptions import RequestValidationError
from openapi_spec_validator import validate as validate_openapi
from werkzeug.datastructures import Headers, ImmutableMultiDict
from yarl import URL

from digest.app import App, usable_token
from digest.config import StoriesConfig, load_config
from digest.errors import TokenError
from digest.jobs.clustering import cluster_category
from digest.memory.events import NewEvent
from digest.store import Store, open_store
from digest.store.edition_codec import encode_edition
from digest.web.api import PREFIX, etag_matches
from digest.web.limits import Gate, RateLimit, bearer_ok, is_loopback
from digest.web.openapi import SPEC
from digest.web.server import make_app
from tests.configs import write_config
from tests.conftest import free_port, run_cli, start_cli
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


async def serve(
    folder: Path, *, host: str = "127.0.0.1", environ: Mapping[str, str] | None = None
) -> AsyncIterator[Client]:
    (folder / "site").mkdir(exist_ok=True)
    async with App(load_config(folder / "digest.toml"), environ=environ) as app:
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


# The description as a client reads it from /api/v1/openapi.json; OpenAPI() checks it is one.
DESCRIPTION = OpenAPI.from_dict(json.loads(json.dumps(SPEC)))


class Sent:
    """A GET a client sent, as openapi-core reads a request."""

    method = "get"
    body = None
    content_type = ""

    def __init__(self, url: URL, headers: Mapping[str, str]) -> None:
        self.url = url
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(list(url.query.items())), header=Headers(dict(headers))
        )

    @property
    def host_url(self) -> str:
        return f"{self.url.scheme}://{self.url.raw_authority}"

    @property
    def path(self) -> str:
        return self.url.path_safe  # as aiohttp routes it: an escaped / stays in its segment


@dataclass
class Answer:
    """An answer as the client got it, as openapi-core reads a response."""

    status_code: int
    data: bytes
    headers: Headers

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "")

    def json(self) -> Any:
        return json.loads(self.data)


def check(sent: Sent, answer: Answer) -> None:
    """What a client of the description relies on: every answer is one it describes (status,
    content type, headers, body), a request that breaks it is told so (400, unless refused
    before it is read), and a path under /api/v1/ that is no endpoint gets a JSON 404."""
    try:
        DESCRIPTION.validate_response(sent, answer)
    except PathError:  # no path of the description
        assert sent.url.path.startswith(PREFIX + "/") and answer.status_code == 404, answer
        assert set(answer.json()) == {"error"}
        return
    try:
        DESCRIPTION.validate_request(sent)
    except RequestValidationError as err:
        assert answer.status_code in (400, 401, 403, 429), (
            f"{sent.url} breaks the description ({err}) yet got {answer.status_code}"
        )


async def call(client: Client, url: str | URL, **kw: Any) -> Answer:
    """GET `url` from the running server, the request and its answer checked."""
    response = await client.get(url, **kw)
    answer = Answer(response.status, await response.read(), Headers(list(response.headers.items())))
    check(Sent(response.request_info.url, response.request_info.headers), answer)
    return answer


def fetch(url: str) -> Answer:
    """GET `url` as any HTTP client would (urllib), the request and its answer checked."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            answer = Answer(r.status, r.read(), Headers(list(r.headers.items())))
    except urllib.error.HTTPError as err:
        answer = Answer(err.code, err.read(), Headers(list(err.headers.items())))
    check(Sent(URL(url), {}), answer)
    return answer


async def get_json(client: Client, url: str, status: int = 200, **kw: Any) -> Any:
    answer = await call(client, url, **kw)
    assert answer.status_code == status, answer.data
    assert answer.content_type.split(";")[0] == "application/json"
    return answer.json()


async def test_editions_list_and_one_edition_as_stored(client, folder):
    listed = await get_json(client, "/api/v1/editions")
    assert [e["day"] for e in listed["editions"]] == [d.isoformat() for d in reversed(PAST)]
    assert listed["next"] is None
    assert listed["editions"][0]["counts"]["stories"] > 0
    one = await get_json(client, "/api/v1/editions/2026-11-28")
    with open_store(f"sqlite:///{folder / 'digest.db'}") as store:
        stored = store.edition(date(2026, 11, 28))
    assert stored is not None and one == json.loads(json.dumps(encode_edition(stored)))
    missing = await get_json(client, "/api/v1/editions/2026-01-01", 404)
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
    async with App(load_config(folder / "digest.toml")) as app:
        assert found == json.loads(json.dumps(await todays_stories_json(app)))
    world = await get_json(client, "/api/v1/stories?category=world")
    assert world and {s["category"] for s in world} == {"world"}
    harbour = next(s for s in world if "Harbour" in s["title"])
    assert harbour["outlet_count"] == 3
    one = await get_json(client, f"/api/v1/stories/{harbour['id']}")
    assert one["id"] == harbour["id"] and len(one["outlets"]) == 3
    unknown = await get_json(client, "/api/v1/stories?category=sport", 400)
    assert "unknown category" in unknown["error"]


async def test_a_past_days_stories_are_its_editions(client):
    found = await get_json(client, "/api/v1/stories?date=2026-11-29&category=technology")
    edition = await get_json(client, "/api/v1/editions/2026-11-29")
    tech = next(s for s in edition["sections"] if s["category"] == "technology")
    assert found == tech["stories"]
    none = await get_json(client, "/api/v1/stories?date=2020-01-01", 404)
    assert "2020-01-01" in none["error"]


async def test_a_missing_story_is_a_json_404(client):
    missing = await get_json(client, "/api/v1/stories/999999", 404)
    assert missing == {"error": "there is no story 999999"}
    for text in ("", "abc", "-1", "1.0", "1234567890123"):
        bad = await get_json(client, f"/api/v1/stories/{text}", 400)
        assert "not a story id" in bad["error"]


async def test_search_is_digest_search_json(client, folder):
    from digest.ondemand.quick import search_archive

    hits = await get_json(client, "/api/v1/search?q=harbour&category=world&since=1d&limit=5")
    assert hits and "harbour" in hits[0]["title"].lower()
    async with App(load_config(folder / "digest.toml")) as app:
        direct = await search_archive(app, "harbour", category="world", limit=5)
    assert [h["url"] for h in hits] == [h.to_json()["url"] for h in direct]
    assert await get_json(client, "/api/v1/search?q=harbour&since=2099-01-01") == []
    empty = await get_json(client, "/api/v1/search?q=", 400)
    assert "q" in empty["error"]


async def test_an_etag_round_trip_answers_304_until_the_answer_changes(client):
    first = await call(client, "/api/v1/editions")
    etag = first.headers["ETag"]
    again = await call(client, "/api/v1/editions", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    other = await call(client, "/api/v1/editions?limit=1", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["ETag"] != etag


async def test_a_client_over_the_rate_gets_429_with_retry_after(tmp_path: Path):
    write_config(tmp_path, serve={"api_rate": 0.5, "api_burst": 3})
    fill(tmp_path)
    async for client in serve(tmp_path):
        statuses = [(await call(client, "/api/v1/editions")).status_code for _ in range(3)]
        assert statuses == [200, 200, 200]
        over = await call(client, "/api/v1/search?q=harbour")
        assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1
        assert "too many" in over.json()["error"]


async def test_the_api_wants_the_configured_bearer_token_and_one_off_localhost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    write_config(tmp_path)
    fill(tmp_path)
    async for client in serve(tmp_path, host="0.0.0.0"):
        refused = await get_json(client, "/api/v1/editions", 403)
        assert "api_token_env" in refused["error"]
        assert "error" in await get_json(client, "/api/v1/openapi.json", 403)
    write_config(tmp_path, serve={"api_token_env": TOKEN_ENV})
    monkeypatch.setenv(TOKEN_ENV, "s3cret-token")
    async for client in serve(tmp_path, host="0.0.0.0"):
        assert "Bearer" in (await get_json(client, "/api/v1/editions", 401))["error"]
        wrong = {"Authorization": "Bearer nope"}
        unauthorized = await call(client, "/api/v1/stories", headers=wrong)
        assert (
            unauthorized.status_code == 401 and "Bearer" in unauthorized.headers["WWW-Authenticate"]
        )
        right = {"Authorization": "Bearer s3cret-token"}
        assert (await call(client, "/api/v1/editions", headers=right)).status_code == 200
    async for client in serve(tmp_path, host="127.0.0.1"):
        # a configured token is wanted on localhost too: a proxy may forward the internet there
        assert (await call(client, "/api/v1/editions")).status_code == 401
        assert (await call(client, "/api/v1/editions", headers=right)).status_code == 200
    write_config(tmp_path)
    async for client in serve(tmp_path, host="127.0.0.1"):
        assert (await call(client, "/api/v1/editions")).status_code == 200  # no token named


@pytest.mark.parametrize(
    ("setting", "serve_config"),
    [("api_token_env", {}), ("mcp_token_env", {"mcp": True})],
)
@pytest.mark.parametrize(
    ("value", "why"),
    [
        (None, "which is not set"),
        ("", "which is empty"),
        (" \n", "which is empty"),
        ("s3cret\x00token", "control character"),
        ("s3crét-token", "not ASCII"),
    ],
)
def test_a_token_variable_named_but_unset_empty_or_unusable_stops_the_server(
    tmp_path: Path, setting: str, serve_config: dict[str, Any], value: str | None, why: str
):
    """The proxy-to-localhost case the token exists for: a variable missing from a unit file
    once left /api/v1 and /mcp open to anyone, with no word said."""
    write_config(tmp_path, serve={**serve_config, setting: TOKEN_ENV})
    environ = {} if value is None else {TOKEN_ENV: value}
    app = App(load_config(tmp_path / "digest.toml"), environ=environ)
    (tmp_path / "site").mkdir()
    with pytest.raises(TokenError) as refused:
        make_app(app, tmp_path / "site")
    said = str(refused.value)
    assert f"[serve] {setting} names the environment variable {TOKEN_ENV}" in said
    assert why in said and "\n" not in said


async def test_a_token_read_from_a_secrets_file_with_its_newline_is_the_token(tmp_path: Path):
    write_config(tmp_path, serve={"api_token_env": TOKEN_ENV})
    fill(tmp_path)
    async for client in serve(tmp_path, environ={TOKEN_ENV: "  s3cret-token\n"}):
        right = {"Authorization": "Bearer s3cret-token"}
        assert (await call(client, "/api/v1/editions", headers=right)).status_code == 200
        assert (await call(client, "/api/v1/editions")).status_code == 401
        longer = {"Authorization": "Bearer s3cret-tokenX"}
        assert (await call(client, "/api/v1/editions", headers=longer)).status_code == 401


@given(
    token=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1).filter(
        str.strip
    ),
    before=st.text(" \t\r\n", max_size=3),
    after=st.text(" \t\r\n", max_size=3),
)
def test_whitespace_around_a_token_is_dropped_and_what_is_left_can_be_sent(token, before, after):
    read = usable_token(before + token + after, variable=TOKEN_ENV, setting="api_token_env")
    assert read == token.strip()
    assert bearer_ok(f"Bearer {read}", read)


async def test_an_anonymous_flood_never_spends_what_the_token_holder_is_allowed(tmp_path: Path):
    """Behind a proxy every client has the proxy's address: a client without the token at 40
    requests a second kept the token's holder at 429 for 17 of 20 requests."""
    write_config(tmp_path, serve={"api_token_env": TOKEN_ENV, "api_rate": 0.01, "api_burst": 3})
    fill(tmp_path)
    right = {"Authorization": "Bearer s3cret-token"}
    async for client in serve(tmp_path, environ={TOKEN_ENV: "s3cret-token"}):
        anonymous: list[int] = []
        holder: list[int] = []

        for _ in range(3):
            for headers in ({}, {"Authorization": "Bearer s3cret-tokem"}) * 5:
                anonymous.append(
                    (await call(client, PREFIX + "/editions", headers=headers)).status_code
                )
            holder.append((await call(client, PREFIX + "/editions", headers=right)).status_code)
        assert holder == [200, 200, 200]  # the whole burst, the flood notwithstanding
        assert anonymous[:3] == [401, 401, 401] and set(anonymous[3:]) == {429}
        over = await call(client, "/api/v1/stories", headers=right)
        assert over.status_code == 429  # and the holder is limited at its own rate
        assert "without the token" not in over.json()["error"]


async def test_the_openapi_description_is_valid_and_the_routes_agree(client):
    spec = await get_json(client, "/api/v1/openapi.json")
    assert spec == json.loads(json.dumps(SPEC)) and spec["openapi"].startswith("3.1")
    validate_openapi(spec)  # against the OpenAPI 3.1 meta-schema, $refs resolved
    app: web.Application = client.server.app
    routed = {
        r.resource.canonical.removeprefix(PREFIX)
        for r in app.router.routes()
        if r.resource is not None
        and r.resource.canonical.startswith(PREFIX + "/")
        and r.method == "GET"
    }
    assert routed == set(SPEC["paths"]) | {"/{tail}"}  # and the JSON 404 of other paths


def test_the_check_refuses_answers_the_description_does_not_describe():
    """The checks above are not vacuous: a wrong body, status or content type fails them."""
    sent = Sent(URL("http://127.0.0.1:1/api/v1/editions?limit=2"), {})
    ok = Headers({"Content-Type": "application/json; charset=utf-8"})
    check(sent, Answer(200, b'{"editions": [], "next": null}', ok))
    with pytest.raises(OpenAPIError):
        check(sent, Answer(200, b'{"editions": "none"}', ok))
    with pytest.raises(OpenAPIError):
        check(
            sent,
            Answer(200, b'{"editions": [], "next": null}', Headers({"Content-Type": "text/plain"})),
        )
    with pytest.raises(OpenAPIError):
        check(sent, Answer(404, b'{"error": "no"}', ok))  # /editions never answers 404
    with pytest.raises(AssertionError):  # a request that breaks the description answered 200
        check(
            Sent(URL("http://127.0.0.1:1/api/v1/editions?limit=0"), {}),
            Answer(200, b'{"editions": [], "next": null}', ok),
        )


async def test_a_path_that_is_no_endpoint_is_a_json_404(client):
    for path in ("/api/v1/", "/api/v1/edition", "/api/v1/stories/1/timeline"):
        missing = await get_json(client, path, 404)
        assert "openapi.json" in missing["error"]


async def test_another_method_than_get_is_a_json_405_naming_get(client):
    for method, path in [("POST", "/api/v1/editions"), ("DELETE", "/api/v1/stories/1")]:
        refused = await client.request(method, path, json={"title": "x"})
        assert refused.status == 405 and refused.content_type == "application/json"
        assert "read-only" in (await refused.json())["error"]
        assert "GET" in refused.headers["Allow"]
    preferences = await client.request("PUT", "/preferences")  # outside the API: as before
    assert preferences.status == 405 and preferences.content_type != "application/json"


async def test_a_story_comes_with_its_timeline(client, folder):
    world = await get_json(client, "/api/v1/stories?category=world")
    harbour = next(s for s in world if "Harbour" in s["title"])
    chip = (await get_json(client, "/api/v1/stories?category=technology"))[0]
    url = f"/api/v1/stories/{harbour['id']}"
    assert (await get_json(client, url))["timeline"] == []
    etag = (await call(client, url)).headers["ETag"]
    at = datetime.now(UTC) - timedelta(hours=2)
    with open_store(f"sqlite:///{folder / 'digest.db'}") as store:
        store.record_events(
            harbour["id"],
            [
                NewEvent(
                    "first",
                    "first",
                    at,
                    outlet="reuters",
                    url="https://reuters.example/2",
                    text="Harbour floods as storm hits the coast",
                ),
                NewEvent(
                    "outlet:apnews",
                    "outlet",
                    at + timedelta(minutes=5),
                    outlet="apnews",
                    url="https://apnews.example/1",
                ),
                NewEvent(
                    "fact:bbc:dead",
                    "fact",
                    at + timedelta(minutes=9),
                    outlet="bbc",
                    url="https://bbc.example/0",
                    text="At least 3 died.",
                    subject="dead",
                    value="at least 3",
                ),
                NewEvent(
                    "correction:dead",
                    "correction",
                    at + timedelta(minutes=30),
                    outlet="reuters",
                    url="https://reuters.example/2",
                    subject="dead",
                    value="5",
                    previous="3",
                    edition_day=PAST[-1],
                ),
            ],
        )
    changed = await call(client, url, headers={"If-None-Match": etag})
    assert changed.status_code == 200  # an app polling with its ETag sees the timeline grow
    story = changed.json()
    assert story["id"] == harbour["id"] and len(story["outlets"]) == 3
    assert [(e["kind"], e["outlet"], e["url"]) for e in story["timeline"]] == [
        ("first", "reuters", "https://reuters.example/2"),
        ("outlet", "apnews", "https://apnews.example/1"),
        ("fact", "bbc", "https://bbc.example/0"),
        ("correction", "reuters", "https://reuters.example/2"),
    ]
    fact, correction = story["timeline"][2:]
    assert (fact["subject"], fact["value"], fact["text"]) == (
        "dead",
        "at least 3",
        "At least 3 died.",
    )
    assert (correction["previous"], correction["value"]) == ("3", "5")
    assert correction["edition_day"] == PAST[-1].isoformat()
    assert datetime.fromisoformat(story["timeline"][0]["at"]) == at
    assert (await get_json(client, f"/api/v1/stories/{chip['id']}"))["timeline"] == []


async def test_a_bug_in_a_handler_is_a_json_500_with_the_traceback_in_the_log_only(
    client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    def broken(self: Store) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed (/srv/digest/digest.db)")

    monkeypatch.setattr(Store, "edition_days", broken)
    with caplog.at_level(logging.ERROR, logger="digest.web.api"):
        failed = await call(client, "/api/v1/editions")
    assert failed.status_code == 500
    assert failed.content_type.startswith("application/json")
    assert list(failed.json()) == ["error"] and "log" in failed.json()["error"]
    assert b"Traceback" not in failed.data and b"malformed" not in failed.data
    assert b"/srv/digest" not in failed.data
    [logged] = [r for r in caplog.records if r.exc_info]
    assert "/api/v1/editions" in logged.getMessage() and "malformed" in caplog.text
    assert (await call(client, "/api/v1/editions/2026-11-28")).status_code == 200  # still serving


TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
# Values a reader would send, beside hostile ones, so that answers other than 400 come too.
VALUE = TEXT | st.sampled_from(["world", "harbour", "2026-11-28", "2", "1d", "*", "0", ""])
NAME = st.sampled_from(["q", "category", "since", "limit", "date", "cursor", "page"]) | TEXT


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    endpoint=st.sampled_from(
        ["/openapi.json", "/editions", "/stories", "/search", "/editions/", "/stories/", "/"]
    ),
    tail=TEXT | st.sampled_from(["2026-11-28", "1", "0001", "../editions", "%2e%2e/", "%ZZ"]),
    params=st.lists(st.tuples(NAME, VALUE), max_size=4),
)
async def test_hostile_requests_never_get_a_500_and_every_answer_is_described(
    client, endpoint, tail, params
):
    """Any query string, and any path under an endpoint that takes one (escapes, bad escapes,
    slashes, dot segments as sent): never a 500, always an answer the description describes
    (or a JSON 404 off its paths), and 400 for what breaks it. `check` asserts all but the 500."""
    path = endpoint + (quote(tail, safe="/%") if endpoint.endswith("/") else "")
    query = "&".join(f"{quote(k, safe='%')}={quote(v, safe='%+')}" for k, v in params)
    url = URL(f"{PREFIX}{path}?{query}", encoded=True)
    assume(client.make_url(url).path.startswith(PREFIX + "/"))  # no ".." out of the API
    answer = await call(client, url)
    assert answer.status_code != 500, answer.data
    event(f"{endpoint} {answer.status_code}")  # pytest --hypothesis-show-statistics


@pytest.mark.slow
def test_the_real_digest_serve_answers_the_api(folder: Path):
    """`digest serve` as a reader starts it mounts /api/v1 beside the archive, and any HTTP
    client gets the answers the description promises."""
    port = free_port()
    server = start_cli("serve", "--port", str(port), cwd=folder)
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                listed = fetch(base + "/editions")
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert listed.status_code == 200 and len(listed.json()["editions"]) == len(PAST)
        missing = fetch(base + "/stories/123456")
        assert missing.status_code == 404
        assert missing.json() == {"error": "there is no story 123456"}
        stories = fetch(base + "/stories?category=world").json()
        one = fetch(f"{base}/stories/{stories[0]['id']}").json()
        assert one["id"] == stories[0]["id"] and one["timeline"] == []
        assert fetch(base + "/editions/2026-11-28").status_code == 200
        assert fetch(base + "/search?q=harbour").json()
        assert fetch(base + "/search?q=harbour&limit=nine").status_code == 400
        assert fetch(base + "/openapi.json").json()["openapi"].startswith("3.1")
        assert fetch(base + "/no-such-thing").status_code == 404
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.slow
def test_serve_and_the_daemon_refuse_to_start_without_the_token_their_config_names(
    tmp_path: Path,
):
    """As an operator meets it: `digest serve` and `digest run` (serving) with the token's
    variable missing or empty say which, in one line, and exit 1; nothing listens."""
    port = free_port()
    write_config(
        tmp_path,
        serve={"port": port, "daemon": True, "mcp": True, "mcp_token_env": "NEWS_MCP_TOKEN"},
    )
    for args, env, why in [
        (["serve"], {}, "which is not set"),
        (["serve"], {"NEWS_MCP_TOKEN": ""}, "which is empty"),
        (["run"], {"NEWS_MCP_TOKEN": " \n"}, "which is empty"),
    ]:
        result = run_cli(*args, cwd=tmp_path, env=env, timeout=60)
        assert result.code == 1, (args, result.stdout, result.stderr)
        said = result.stderr.strip().splitlines()[-1]
        assert said == (
            "digest: error: [serve] mcp_token_env names the environment variable "
            f"NEWS_MCP_TOKEN, {why}: set it to the token, or remove mcp_token_env from the config"
        )
        assert "Traceback" not in result.stderr and not _listening(port)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


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


HEADERS = {
    "holder": "Bearer s3cret-token",
    "none": None,
    "wrong": "Bearer s3cret-tokem",
    "basic": "Basic s3cret-token",
}


@given(
    rate=st.floats(0.1, 50),
    burst=st.integers(1, 20),
    requests=st.lists(st.tuples(st.floats(0, 3), st.sampled_from(sorted(HEADERS))), max_size=80),
)
def test_no_requests_without_the_token_change_what_its_holder_is_answered(rate, burst, requests):
    """Any interleaving of anonymous and wrong-token requests from the holder's own address:
    the holder is answered exactly as if it were alone, so never refused below its rate."""

    def gate() -> Gate:
        bucket = RateLimit(rate=rate, burst=burst)
        return Gate("the API", "api_token_env", "s3cret-token", local=True, bucket=bucket)

    mixed, alone = gate(), gate()
    now, last_answered = 0.0, None
    for gap, who in requests:
        now += gap
        refused = mixed.refusal("127.0.0.1", HEADERS[who], now)
        if who != "holder":
            assert refused is not None and refused.status in (401, 429)
            continue
        assert refused == alone.refusal("127.0.0.1", HEADERS[who], now)
        if last_answered is None or now - last_answered >= 1.01 / rate:
            assert refused is None  # at its own rate it is never refused
        if refused is None:
            last_answered = now


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
        for path in ("/stories/1", "/stories", "/search?q=harbour"):
            missing = await get_json(client, PREFIX + path, 404)
            assert "no archive yet" in missing["error"]

"""/api/v1/: editions, stories and search, read-only, as JSON.

Each answer is what the matching command prints with `--json` (`digest stories`, `digest
search`), or the edition as stored (`store.edition_codec`): one encoder per type, here none.
Answers carry an ETag (a hash of the body) and a matching If-None-Match gets 304, so an app
that polls pays for a change only. With a token configured (`[serve] api_token_env`; a variable
named there but unset or empty stops the server from starting) every request must bear it, and
the token is checked first: requests bearing it get `[serve] api_rate` requests a second between
them, `api_burst` at once, then 429 with Retry-After; those without it get 401 (and 429 past the
same rate per address), never spending the token's. Without a token, each client (remote
address) has that rate on localhost, and off localhost the API is refused (403): it must never
be open to the internet by accident. Errors are JSON:
{"error": "..."}, a path under /api/v1/ that is no endpoint too (404), and a bug in a handler
(500: the traceback goes to the log, never to the client).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from digest.app import App
from digest.errors import DigestError, InvalidQueryError, NoDatabaseError
from digest.models import Edition
from digest.store.edition_codec import encode_edition
from digest.web.keys import APP
from digest.web.limits import Gate, RateLimit, is_loopback
from digest.web.openapi import MAX_LIMIT, MAX_PAGE, MAX_QUERY, SPEC

if TYPE_CHECKING:
    from digest.store import Store

PREFIX = "/api/v1"
DEFAULT_LIMIT = 20

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class BadParameter(ValueError):
    """A query or path parameter that cannot be read: 400, with this message."""


class NotFound(LookupError):
    """No such edition or story: 404, with this message."""


def gate(app: App, *, host: str) -> Gate:
    """Who may call the API of a server listening on `host` (the token rule, the rate)."""
    limits = app.config.serve
    return Gate(
        name="the API",
        setting="api_token_env",
        token=app.bearer_token(limits.api_token_env, setting="api_token_env"),
        local=is_loopback(host),
        bucket=RateLimit(rate=limits.api_rate, burst=limits.api_burst),
    )


GATE = web.AppKey("api_gate", Gate)


def guarded(handler: Handler) -> Handler:
    """`handler` behind the gate, its errors answered in JSON."""

    async def answer(request: web.Request) -> web.StreamResponse:
        authorization = request.headers.get("Authorization")
        refused = request.app[GATE].refusal(request.remote or "", authorization, time.monotonic())
        if refused is not None:
            return error(refused.status, refused.why, refused.headers)
        try:
            return await handler(request)
        except BadParameter as err:
            return error(400, str(err))
        except NotFound as err:
            return error(404, str(err))
        except NoDatabaseError:
            return error(404, "there is no archive yet: nothing has been collected")
        except DigestError as err:
            return error(400, str(err))
        except web.HTTPException:
            raise
        except Exception:
            log.exception("the API failed to answer GET %s", request.raw_path)
            return error(500, "the server failed to answer this request (see its log)")

    return answer


@guarded
async def openapi(request: web.Request) -> web.StreamResponse:
    return answer_json(request, SPEC)


@guarded
async def editions_list(request: web.Request) -> web.StreamResponse:
    query = request.query
    limit = number(query, "limit", DEFAULT_LIMIT, MAX_LIMIT)
    if "cursor" in query and "page" in query:
        raise BadParameter("give either cursor or page, not both")
    try:
        store = await request.app[APP].face(create=False)
    except NoDatabaseError:  # a new install: no editions yet, not an error
        return answer_json(request, {"editions": [], "next": None})
    days = await store.edition_days()
    page = None
    if "page" in query:
        page = number(query, "page", 1, MAX_PAGE)
        days = days[(page - 1) * limit :]
    elif "cursor" in query:
        after = day_param(query["cursor"], "cursor")
        days = [d for d in days if d < after]
    shown = days[:limit]
    found = await store.call(editions_of, shown)
    listed = [edition_summary(e) for e in found if e is not None]
    after_page = None
    if len(days) > limit:
        nxt = f"page={page + 1}" if page is not None else f"cursor={shown[-1].isoformat()}"
        after_page = f"{PREFIX}/editions?limit={limit}&{nxt}"
    return answer_json(request, {"editions": listed, "next": after_page})


@guarded
async def edition_one(request: web.Request) -> web.StreamResponse:
    day = day_param(request.match_info["day"], "day")
    store = await request.app[APP].face(create=False)
    edition = await store.edition(day)
    if edition is None:
        raise NotFound(f"there is no edition of {day.isoformat()}")
    return answer_json(request, encode_edition(edition))


@guarded
async def stories_list(request: web.Request) -> web.StreamResponse:
    from digest.ondemand.quick import todays_stories_json

    app = request.app[APP]
    query = request.query
    category = query.get("category")
    cat = app.config.check_category(category) if category is not None else None
    today = app.config.today_start().date()
    day = day_param(query["date"], "date") if "date" in query else today
    if day == today:
        return answer_json(request, await todays_stories_json(app, cat))
    store = await app.face(create=False)
    edition = await store.edition(day)
    if edition is None:
        raise NotFound(f"there is no edition of {day.isoformat()} (and it is not today)")
    sections = encode_edition(edition)["sections"]
    found = [s for sec in sections for s in sec["stories"] if cat in (None, s["category"])]
    return answer_json(request, found)


@guarded
async def story_one(request: web.Request) -> web.StreamResponse:
    text = request.match_info["story_id"]
    if not re.fullmatch(r"[0-9]{1,12}", text, re.ASCII):
        raise BadParameter(f"{text!r} is not a story id (a whole number)")
    from digest.ondemand.quick import story_json

    found = await story_json(request.app[APP], int(text))
    if found is None:
        raise NotFound(f"there is no story {int(text)}")
    return answer_json(request, found)


@guarded
async def search(request: web.Request) -> web.StreamResponse:
    from digest.ondemand.quick import search_archive

    app = request.app[APP]
    query = request.query
    text = query.get("q", "")
    if not text.strip():
        raise BadParameter("q (what to search for) is missing")
    if len(text) > MAX_QUERY:
        raise BadParameter(f"q is longer than {MAX_QUERY} characters")
    since = since_param(query["since"], app) if "since" in query else None
    limit = number(query, "limit", 10, MAX_LIMIT)
    hits = await search_archive(app, text, category=query.get("category"), since=since, limit=limit)
    return answer_json(request, [h.to_json() for h in hits])


@guarded
async def no_endpoint(request: web.Request) -> web.StreamResponse:
    """A path under /api/v1/ that is no endpoint: a JSON error, as from every endpoint (the
    route table lists it after them)."""
    raise NotFound(f"there is no endpoint {request.path}: see {PREFIX}/openapi.json")


@web.middleware
async def read_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Another method than GET under /api/v1/ is refused in JSON too (aiohttp's 405 is
    text, raised before any handler of ours runs)."""
    try:
        return await handler(request)
    except web.HTTPMethodNotAllowed as err:
        if not request.path.startswith(PREFIX + "/"):
            raise
        allowed = ", ".join(sorted(err.allowed_methods))
        why = f"{request.method} is not allowed: the API is read-only ({allowed})"
        return error(405, why, {"Allow": allowed})


def editions_of(store: Store, days: Sequence[date]) -> list[Edition | None]:
    """The editions of `days` (None where there is none), read in one hop to the store."""
    return [store.edition(d) for d in days]


def edition_summary(edition: Edition) -> dict[str, Any]:
    """An edition in the list: its day, when it was made, how much it holds."""
    return {
        "day": edition.day.isoformat(),
        "generated_at": edition.generated_at.isoformat(),
        "timezone": edition.timezone,
        "counts": {
            "sections": len(edition.sections),
            "stories": sum(len(s.stories) for s in edition.sections),
            "headlines": sum(len(s.headlines) for s in edition.sections),
        },
    }


def answer_json(request: web.Request, data: Any) -> web.Response:
    """`data` as JSON with an ETag of its bytes; 304 when the client has them already."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if etag_matches(request.headers.get("If-None-Match", ""), etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=body, content_type="application/json", headers=headers)


def etag_matches(header: str, etag: str) -> bool:
    """Whether an If-None-Match header names `etag` (weakly, as RFC 9110 compares), or is *."""
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


def error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(
        {"error": message}, status=status, headers={"Cache-Control": "no-store", **(headers or {})}
    )


def number(query: Any, name: str, default: int, most: int) -> int:
    """A whole-number parameter from 1 to `most` (ASCII digits only: int() reads "٣")."""
    text = query.get(name)
    if text is None:
        return default
    if not re.fullmatch(r"[0-9]{1,7}", text, re.ASCII) or not 1 <= int(text) <= most:
        raise BadParameter(f"{name} must be a whole number from 1 to {most}, not {text!r}")
    return int(text)


def day_param(text: str, name: str) -> date:
    """A YYYY-MM-DD parameter."""
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text, re.ASCII):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise BadParameter(f"{name} must be a date, YYYY-MM-DD, not {text!r}")


def since_param(text: str, app: App) -> datetime:
    """`since` as `digest search --since` takes it (`ondemand.params.parse_since`)."""
    from digest.ondemand.params import parse_since

    try:
        return parse_since(text, app.config.schedule.timezone)
    except InvalidQueryError:
        raise BadParameter(
            f"since must be a date (YYYY-MM-DD) or a number of days (30d), not {text!r}"
        ) from None

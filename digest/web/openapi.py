"""The OpenAPI 3.1 description of /api/v1/, served at /api/v1/openapi.json. Data, not
generated: tests/test_api.py keeps it true (every route in it, every answer valid against it)."""

from __future__ import annotations

from typing import Any

from digest.ondemand.params import MAX_QUERY  # characters of a search

MAX_LIMIT = 100  # results a page
MAX_PAGE = 1_000_000
MAX_STORY_ID = 10**12 - 1  # twelve digits

_ETAG = {"ETag": {"schema": {"type": "string"}, "description": "Send as If-None-Match"}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _ok(schema: dict[str, Any], what: str) -> dict[str, Any]:
    return {
        "description": what,
        "headers": _ETAG,
        "content": {"application/json": {"schema": schema}},
    }


def _err(what: str) -> dict[str, Any]:
    return {"description": what, "content": {"application/json": {"schema": _ref("Error")}}}


_COMMON = {
    "304": {"description": "Not modified: the If-None-Match ETag is current", "headers": _ETAG},
    "400": _err("A parameter cannot be read (which one, and why, in `error`)"),
    "401": _err("A token is configured and this request lacks it or bears another"),
    "403": _err("Off localhost without a token configured: the API is refused"),
    "429": {
        "description": (
            "Too many requests: with a token configured, bearing it (the token's rate) or "
            "without it from this address; else from this address"
        ),
        "headers": {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}},
        "content": {"application/json": {"schema": _ref("Error")}},
    },
    "500": _err("A bug: the server's log has the details, the answer never does"),
}


def _param(name: str, where: str, schema: dict[str, Any], what: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path",
        "schema": schema,
        "description": what,
    }


_DATE = {"type": "string", "format": "date"}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
_CATEGORY = _param("category", "query", {"type": "string"}, "A configured category")
_NULLABLE_STR = {"type": ["string", "null"]}

_OUTLET = {
    "type": "object",
    "required": ["outlet", "title", "url"],
    "properties": {
        "outlet": {"type": "string"},
        "title": {"type": "string"},
        "url": {"type": "string"},
    },
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {"error": {"type": "string"}},
    },
    "EditionSummary": {
        "type": "object",
        "required": ["day", "generated_at", "timezone", "counts"],
        "properties": {
            "day": _DATE,
            "generated_at": {"type": "string", "format": "date-time"},
            "timezone": {"type": "string"},
            "counts": {
                "type": "object",
                "required": ["sections", "stories", "headlines"],
                "properties": {
                    k: {"type": "integer", "minimum": 0}
                    for k in ("sections", "stories", "headlines")
                },
            },
        },
    },
    "EditionList": {
        "type": "object",
        "required": ["editions", "next"],
        "properties": {
            "editions": {"type": "array", "items": _ref("EditionSummary")},
            "next": {
                "type": ["string", "null"],
                "description": "The path of the next page (null: this is the last)",
            },
        },
    },
    "Edition": {
        "description": "An edition as stored (digest.store.edition_codec)",
        "type": "object",
        "required": ["day", "timezone", "sections", "generated_at"],
        "properties": {
            "day": _DATE,
            "timezone": {"type": "string"},
            "generated_at": {"type": "string"},
            "sections": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["category", "stories", "headlines"],
                    "properties": {
                        "category": {"type": "string"},
                        "stories": {"type": "array", "items": _ref("EditionStory")},
                        "headlines": {"type": "array"},
                    },
                },
            },
        },
    },
    "EditionStory": {
        "description": "A story as an edition stored it",
        "type": "object",
        "required": ["id", "category", "title", "summary", "brief_summary", "outlets"],
        "properties": {
            "id": {"type": "integer"},
            "category": {"type": "string"},
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "brief_summary": {"type": "string"},
            "outlets": {"type": "array", "items": {"type": "object"}},
        },
    },
    "Story": {
        "description": "A story as `digest stories --json` prints it",
        "type": "object",
        "required": [
            "id",
            "category",
            "title",
            "first_seen",
            "last_seen",
            "updated",
            "outlet_count",
            "summary",
            "brief_summary",
            "keywords",
            "summary_of",
            "coverage",
            "outlets",
            "articles",
        ],
        "properties": {
            "id": {"type": "integer"},
            "category": {"type": "string"},
            "title": {"type": "string"},
            "first_seen": {"type": "string"},
            "last_seen": {"type": "string"},
            "updated": {"type": "boolean"},
            "outlet_count": {"type": "integer", "minimum": 0},
            "summary": {"type": "string"},
            "brief_summary": {"type": "string"},
            "keywords": {"type": "array", "items": {"type": "string"}},
            "summarizer": _NULLABLE_STR,
            "summary_of": {"enum": ["story", "article", None]},
            "claims": {"type": ["object", "array", "null"]},
            "summary_note": {"type": "string"},
            "cited": {"type": "array"},
            "coverage": {"type": "string"},
            "outlets": {"type": "array", "items": _OUTLET},
            "articles": {"type": "array", "items": {"type": "object"}},
            "top": {"type": "boolean", "description": "Today's stories: shown in the edition"},
        },
    },
    "TimelineEntry": {
        "description": "One entry of a story's timeline: what happened, when, from which outlet",
        "type": "object",
        "required": ["kind", "at", "recorded_at", "outlet", "url", "text"],
        "properties": {
            "kind": {"enum": ["first", "outlet", "fact", "revision", "disagreement", "correction"]},
            "at": {"type": "string"},
            "recorded_at": {"type": "string"},
            "outlet": {"type": "string"},
            "url": {"type": "string"},
            "text": {"type": "string"},
            "subject": {"type": "string"},
            "value": {"type": "string"},
            "previous": {"type": "string"},
            "edition_day": _NULLABLE_STR,
        },
    },
    "StoryWithTimeline": {
        "description": "One story, with its timeline (oldest first; empty before it has one)",
        "allOf": [
            _ref("Story"),
            {
                "type": "object",
                "required": ["timeline"],
                "properties": {
                    "timeline": {"type": "array", "items": _ref("TimelineEntry")},
                },
            },
        ],
    },
    "SearchHit": {
        "description": "A story found, as `digest search --json` prints it",
        "type": "object",
        "required": ["title", "url", "published", "snippet", "highlights", "score", "outlets"],
        "properties": {
            "title": {"type": "string"},
            "url": {"type": "string"},
            "published": {"type": "string"},
            "category": _NULLABLE_STR,
            "source": {"type": "string"},
            "snippet": {"type": "string"},
            "highlights": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer"}},
            },
            "matched": {"type": "string"},
            "score": {"type": "number"},
            "story_id": {"type": ["integer", "null"]},
            "outlets": {"type": "array", "items": {"type": "object"}},
        },
    },
}

SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "digest",
        "version": "1",
        "description": "Read-only: the archive's editions, stories and search.",
    },
    "servers": [{"url": "/api/v1"}],
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    },
    "security": [{}, {"bearer": []}],
    "paths": {
        "/openapi.json": {
            "get": {
                "summary": "This description",
                "responses": {
                    "200": _ok({"type": "object"}, "OpenAPI 3.1"),
                    **{k: v for k, v in _COMMON.items() if k != "400"},
                },
            }
        },
        "/editions": {
            "get": {
                "summary": "Editions, newest first",
                "parameters": [
                    _param("limit", "query", _LIMIT, "Editions a page (default 20)"),
                    _param("cursor", "query", _DATE, "Editions before this day"),
                    _param(
                        "page",
                        "query",
                        {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                        "Page number (instead of cursor)",
                    ),
                ],
                "responses": {"200": _ok(_ref("EditionList"), "A page of editions"), **_COMMON},
            }
        },
        "/editions/{day}": {
            "get": {
                "summary": "One day's edition as stored",
                "parameters": [_param("day", "path", _DATE, "The edition's day")],
                "responses": {
                    "200": _ok(_ref("Edition"), "The edition"),
                    "404": _err("No edition that day"),
                    **_COMMON,
                },
            }
        },
        "/stories": {
            "get": {
                "summary": "A day's stories: today's as they stand, a past day's as its edition",
                "parameters": [
                    _param("date", "query", _DATE, "The day (default today)"),
                    _CATEGORY,
                ],
                "responses": {
                    "200": _ok(
                        {
                            "type": "array",
                            "items": {"anyOf": [_ref("Story"), _ref("EditionStory")]},
                        },
                        "The stories, by category, best first",
                    ),
                    "404": _err("No edition that day (not today), or no archive yet"),
                    **_COMMON,
                },
            }
        },
        "/stories/{story_id}": {
            "get": {
                "summary": "One story",
                "parameters": [
                    _param(
                        "story_id",
                        "path",
                        {"type": "integer", "minimum": 0, "maximum": MAX_STORY_ID},
                        "Its id",
                    )
                ],
                "responses": {
                    "200": _ok(_ref("StoryWithTimeline"), "The story and its timeline"),
                    "404": _err("No such story, or no archive yet"),
                    **_COMMON,
                },
            }
        },
        "/search": {
            "get": {
                "summary": "Search the archive, as `digest search`",
                "parameters": [
                    {
                        **_param(
                            "q",
                            "query",
                            {"type": "string", "minLength": 1, "maxLength": MAX_QUERY},
                            "What to find",
                        ),
                        "required": True,
                    },
                    _CATEGORY,
                    _param(
                        "since",
                        "query",
                        {"type": "string", "pattern": "^([0-9]{1,5}d|[0-9]{4}-[0-9]{2}-[0-9]{2})$"},
                        "A day (YYYY-MM-DD), or days back (30d)",
                    ),
                    _param("limit", "query", _LIMIT, "Results (default 10)"),
                ],
                "responses": {
                    "200": _ok({"type": "array", "items": _ref("SearchHit")}, "Best first"),
                    "404": _err("No archive yet"),
                    **_COMMON,
                },
            }
        },
    },
}

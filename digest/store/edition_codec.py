"""Editions as JSON: a deterministic encoding of `digest.models.Edition` and its exact inverse.

The encoding follows the dataclasses' fields, so a field added to a model is stored without a
change here (and a stored payload without it decodes to the field's default). Values:

- dates as ISO strings (``2025-03-01``);
- datetimes as ISO strings with their UTC offset; a datetime in a named zone (`ZoneInfo`) gets
  the zone's key appended as in RFC 9557 (``2025-03-01T07:00:00+01:00[Europe/Berlin]``) and
  comes back in that zone, with the same wall clock and fold. Fixed offsets and UTC come back
  as `datetime.timezone` values;
- tuples as lists, dataclasses as objects in field order, None as null.

`content_hash` is the sha256 of the canonical JSON of everything but `generated_at`: building the
same edition again at another time gives the same hash.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import types
import typing
from datetime import date, datetime
from typing import Any, TypeAlias, TypeVar
from zoneinfo import ZoneInfo

from digest.models import Edition
from digest.schedule import known_zone

__all__ = ["content_hash", "decode_edition", "encode_edition"]

# Left out of the content hash: when the edition was built, not what it says.
_VOLATILE = ("generated_at",)

# What `_encode` gives back: a value of JSON.
Json: TypeAlias = str | bool | int | float | list["Json"] | dict[str, "Json"] | None
_T = TypeVar("_T")


def encode_edition(edition: Edition) -> dict[str, Any]:
    """The edition as a JSON-ready dict (field order kept, so its JSON text is deterministic)."""
    if not isinstance(edition, Edition):
        raise TypeError(f"expected an Edition, not {type(edition).__name__}")
    encoded = _encode(edition)
    assert isinstance(encoded, dict)
    return encoded


def decode_edition(payload: Any) -> Edition:
    """The Edition that `encode_edition` turned into `payload`; ValueError if it is not one."""
    edition = _decode(Edition, payload, "edition")
    assert isinstance(edition, Edition)
    return edition


def content_hash(payload: dict[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of an encoded edition, without `generated_at`."""
    content = {key: value for key, value in payload.items() if key not in _VOLATILE}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _encode(value: object) -> Json:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, datetime):  # before date: a datetime is a date
        return _encode_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise TypeError(f"cannot store a {type(value).__name__} in an edition")


def _encode_datetime(value: datetime) -> str:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value.isoformat()} in an edition: use aware ones")
    text = value.isoformat()
    key = getattr(value.tzinfo, "key", None) if isinstance(value.tzinfo, ZoneInfo) else None
    return f"{text}[{key}]" if key else text


def _decode_datetime(text: str) -> datetime:
    key = None
    if text.endswith("]") and "[" in text:
        text, _, key = text[:-1].partition("[")
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        raise ValueError(f"datetime {text!r} has no UTC offset")
    if not key:
        return parsed
    zone = known_zone(key)
    if zone is None:
        return parsed  # the zone is gone from this machine's tzdata: keep the instant
    offset = parsed.utcoffset()
    wall = parsed.replace(tzinfo=None)
    for fold in (0, 1):
        candidate = wall.replace(tzinfo=zone, fold=fold)
        if candidate.utcoffset() == offset:
            return candidate
    # The zone's rules changed since the edition was stored: keep the instant.
    return parsed.astimezone(zone)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(kind: Any, value: Any, where: str) -> object:
    origin = typing.get_origin(kind)
    if origin is types.UnionType or origin is typing.Union:
        if value is None:
            if type(None) in typing.get_args(kind):
                return None
            raise ValueError(f"{where}: null where a value is required")
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(options) != 1:
            raise TypeError(f"{where}: cannot decode the union {kind}")
        return _decode(options[0], value, where)
    if origin is typing.Literal:
        if value not in typing.get_args(kind):
            raise ValueError(f"{where}: {value!r} is not one of {typing.get_args(kind)}")
        return value
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"{where}: cannot decode {kind}")
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
        return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if value is None:
        raise ValueError(f"{where}: null where a value is required")
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _decode_dataclass(kind, value, where)
    if kind is datetime:
        return _decode_datetime(_expect(str, value, where))
    if kind is date:
        return date.fromisoformat(_expect(str, value, where))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind in (str, int, float, bool):
        return _expect(kind, value, where)
    raise TypeError(f"{where}: cannot decode {kind}")


def _decode_dataclass(cls: type, value: Any, where: str) -> object:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
    hints = _hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name in value:
            kwargs[f.name] = _decode(hints[f.name], value[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{where}: {f.name} is missing")
    return cls(**kwargs)


def _expect(kind: type[_T], value: object, where: str) -> _T:
    # bool is an int in Python, not in JSON: keep them apart.
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise ValueError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")
    return value

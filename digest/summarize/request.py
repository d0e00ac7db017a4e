"""What is asked of a model and what comes back: a request for one JSON object, the ways a server
may be asked for structured output, and a reply read back and validated.

The reply is untrusted: `parse_reply` takes the first JSON object it finds and validates it, and any
reason it cannot be used is an `InvalidOutput` of a few words (which the client may show the
model once, to ask again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import ValidationError

from digest.errors import SummarizeError
from digest.summarize.output import one_line, parse_json_object

if TYPE_CHECKING:  # openai is imported where a reply is asked for
    from openai.types.chat import ChatCompletion

Mode = Literal["json_schema", "json_object_schema", "json_object", "plain"]
STRUCTURED_MODES: tuple[Mode, ...] = ("json_schema", "json_object_schema", "json_object")
MAX_OUTPUT_TOKENS = 1200
MAX_KEYWORDS = 8  # of a summary
# Under llama.cpp's grammar a small model can list keywords until max_tokens cuts the JSON off
# (SmolLM2-135M: 2 of 4 replies); a bound on each array ends the list (10 of 10 valid). Strings
# stay unbounded: a maxLength expands into a grammar llama-cpp-python 0.3.36 cannot parse, and
# its server then dies.
MAX_ARRAY_ITEMS = MAX_KEYWORDS

T = TypeVar("T")
# A JSON schema, or a part of one.
Schema = dict[str, Any] | list[Any] | str | int | float | bool | None


class InvalidOutput(ValueError):
    """The model's reply cannot be used; the message says why, in a few words. `repairable`:
    whether asking once more, with that message, may help (a wrong shape: yes)."""

    repairable = True


@dataclass(frozen=True, slots=True)
class JSONRequest(Generic[T]):
    """A chat asking for one JSON object: the schema, how to validate the reply, and what to
    say when a reply is unusable."""

    messages: list[dict[str, str]]
    schema_name: str
    schema: dict[str, Any]
    validate: Callable[[dict[str, Any]], T]  # raises InvalidOutput or pydantic's ValidationError
    repair_hint: str
    max_tokens: int = 0  # of the reply; 0: MAX_OUTPUT_TOKENS
    # Makes the same request with its sources cut to this many characters in all, to fit a
    # small context window (None: it cannot be made shorter); `chars` is what it has now.
    resize: Callable[[int], JSONRequest[T]] | None = None
    chars: int = 0

    @property
    def reply_tokens(self) -> int:
        return self.max_tokens or MAX_OUTPUT_TOKENS


@dataclass(frozen=True, slots=True)
class Sized(Generic[T]):
    """A request fitted to the window, and its prompt's tokens (by the server's tokenizer when
    `exact`, else a safe estimate)."""

    request: JSONRequest[T]
    tokens: int
    exact: bool


class ContextExceeded(SummarizeError):
    """The server could not read the whole request: it said so (HTTP 400 and the like), closed
    the reply without a word, or read only part of the prompt. `window`: the one it named."""

    def __init__(self, message: str, window: int | None = None, **counts: int) -> None:
        super().__init__(message, **counts)
        self.window = window


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class Message:
    content: str
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    message: Message


@dataclass(frozen=True, slots=True)
class Streamed:
    """A streamed reply put back together in the shape of a ChatCompletion (the fields read
    here). When the server sent no usage (llama-cpp-python does not), completion tokens are the
    content chunks (one token each there) and prompt tokens are estimated at 4 characters each."""

    choices: list[Choice]
    usage: Usage
    reported: bool = True  # whether the server sent the usage (else it is estimated)


if TYPE_CHECKING:
    from typing import TypeAlias

    # A reply as the server sent it, whole or streamed.
    Reply: TypeAlias = ChatCompletion | Streamed


@dataclass(frozen=True, slots=True)
class Completion(Generic[T]):
    value: T
    mode: Mode
    prompt_tokens: int
    completion_tokens: int


def first_line(text: str, limit: int = 200) -> str:
    return one_line(text.strip().splitlines()[0] if text.strip() else "", limit)


def response_format(mode: Mode, request: JSONRequest[Any]) -> dict[str, Any]:
    """What a request in `mode` sends as `response_format` ({}: nothing)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "strict": True, "schema": request.schema},
        }
    if mode == "json_object_schema":
        # llama.cpp's extension: the schema beside json_object constrains the shape.
        return {"type": "json_object", "schema": bounded_arrays(request.schema, MAX_ARRAY_ITEMS)}
    if mode == "json_object":
        return {"type": "json_object"}
    return {}


def bounded_arrays(schema: Schema, limit: int) -> Schema:
    """A copy of a JSON schema in which every array without a `maxItems` has `limit`."""
    if isinstance(schema, list):
        return [bounded_arrays(item, limit) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: bounded_arrays(value, limit) for key, value in schema.items()}
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = limit
    return out


def reply_text(reply: object) -> str:
    """The text of a reply's first choice ("(refused: ...)" for a refusal), "" for none."""
    choices = getattr(reply, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    if not text and getattr(message, "refusal", None):
        return f"(refused: {message.refusal})"  # type: ignore[union-attr]
    return text if isinstance(text, str) else ""


def parse_reply(text: str, validate: Callable[[dict[str, Any]], T]) -> T:
    """The reply's JSON object, validated; InvalidOutput saying why it cannot be used."""
    if not text.strip():
        raise InvalidOutput("the reply was empty")
    data = parse_json_object(text)
    if data is None:
        raise InvalidOutput("the reply holds no JSON object")
    try:
        return validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise InvalidOutput(f"{where}: {first['msg']}") from None

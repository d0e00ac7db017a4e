"""Ollama's native API (/api/...), for what its OpenAI-compatible /v1 cannot do.

/v1/chat/completions takes no context window per request: Ollama runs it at its default window
(2048 or 4096 tokens unless the Modelfile sets `num_ctx`) and silently cuts a longer prompt from
the front, system prompt first. /api/chat takes `options.num_ctx`, and /api/show says how long a
window the model supports, so a client can ask for the window its prompt needs.

The caller owns the `httpx.AsyncClient` and handles httpx's own errors (connection refused,
timeouts); everything Ollama itself says is wrong (an error status, an `{"error": ...}` body or
line, a reply that is not what the API documents) is an `OllamaError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

MAX_LINE = 1 << 20  # bytes; one NDJSON line of a chat stream is a few hundred
MAX_COUNT = 1 << 31  # no window or token count is larger; a server saying so says nothing


class OllamaError(Exception):
    """Ollama refused or failed: `status` is the HTTP status when one said so (None when the
    error came in a 200 reply, e.g. an `{"error": ...}` line mid-stream, or the reply was
    malformed); `message` is the first line of what it said, at most 200 characters."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        self.message = _first_line(message) or "no message"
        where = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"Ollama: {self.message}{where}")


@dataclass(frozen=True, slots=True)
class OllamaModel:
    """What /api/show says about a model's window."""

    context_length: int | None  # the model's own limit (model_info "<arch>.context_length")
    num_ctx: int | None  # the window its Modelfile sets ("num_ctx" in "parameters"), if any
    architecture: str | None = None  # model_info "general.architecture", e.g. "llama"
    capabilities: tuple[str, ...] = ()  # e.g. ("completion", "tools", "thinking")


@dataclass(frozen=True, slots=True)
class OllamaChunk:
    """One line of an /api/chat stream."""

    content: str  # text of this piece ("" for the last)
    done: bool
    prompt_tokens: int = 0  # on the last chunk: prompt_eval_count
    completion_tokens: int = 0  # eval_count
    prompt_seconds: float | None = None  # prompt_eval_duration / 1e9
    write_seconds: float | None = None  # eval_duration / 1e9
    done_reason: str = ""  # "stop", "length", ...
    thinking: str = ""  # a thinking model's reasoning, streamed before its content


def _first_line(text: str, limit: int = 200) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line[:limit]


def _error_text(raw: bytes, status: int) -> str:
    """The message of an error reply: its JSON "error" when it has one, else its text."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and "error" in data:
        return _message_of(data["error"])
    text = raw.decode("utf-8", "replace").strip()
    return text or f"HTTP {status}"


def _message_of(error: Any) -> str:
    """Ollama's "error" is a string; an OpenAI-style object's "message" is taken too."""
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    try:
        return json.dumps(error)[:200]
    except (ValueError, RecursionError):
        return "an error Ollama did not put in words"


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise OllamaError(None, f"{what} is not JSON: {err}") from err
    if not isinstance(data, dict):
        raise OllamaError(None, f"{what} is not a JSON object")
    if "error" in data:
        raise OllamaError(None, _message_of(data["error"]))
    return data


def _count(value: Any) -> int | None:
    """A whole number from 0 to MAX_COUNT as JSON carries it (4096 or 4096.0), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_COUNT:
        return value
    return None


def _seconds(nanoseconds: Any) -> float | None:
    if isinstance(nanoseconds, bool) or not isinstance(nanoseconds, int | float):
        return None
    seconds = float(nanoseconds) / 1e9
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


async def version(
    http: httpx.AsyncClient,
    root: str,
    timeout: float,  # noqa: ASYNC109  (httpx's timeout for each wait, not a deadline)
) -> str | None:
    """GET {root}/api/version: Ollama's version, or None when the server is not Ollama (a 4xx
    such as 404, a body that is not JSON or has no "version"). A 5xx (a proxy whose Ollama is
    down) is an OllamaError; httpx's errors (connection refused, timeout) propagate."""
    resp = await http.get(f"{root.rstrip('/')}/api/version", timeout=timeout)
    if resp.status_code >= 500:
        raise OllamaError(resp.status_code, _error_text(resp.content, resp.status_code))
    if resp.status_code != 200:
        return None
    try:
        data = json.loads(resp.content)
    except (ValueError, RecursionError):
        return None
    found = data.get("version") if isinstance(data, dict) else None
    return found if isinstance(found, str) and found else None


def parse_parameters(text: str) -> dict[str, list[str]]:
    """/api/show's "parameters" block ("num_ctx                        4096\\nstop ..."): each
    name with its values in order (a name such as "stop" can repeat)."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(" ")
        if name:
            found.setdefault(name, []).append(value.strip())
    return found


def _num_ctx(parameters: Any) -> int | None:
    if not isinstance(parameters, str):
        return None
    for value in parse_parameters(parameters).get("num_ctx", []):
        try:
            n = _count(float(value))  # Go prints a float option as 4096 or 1.048576e+06
        except ValueError:
            continue
        if n:
            return n
    return None


def _context_length(info: Mapping[str, Any]) -> int | None:
    """The architecture's own key first ("llama.context_length"), else any "*.context_length"."""
    arch = info.get("general.architecture")
    if isinstance(arch, str) and (n := _count(info.get(f"{arch}.context_length"))):
        return n
    for key, value in info.items():
        if key.endswith(".context_length") and (n := _count(value)):
            return n
    return None


async def show(
    http: httpx.AsyncClient,
    root: str,
    model: str,
    timeout: float,  # noqa: ASYNC109  (httpx's timeout for each wait, not a deadline)
) -> OllamaModel:
    """POST {root}/api/show: the model's limit and its Modelfile's window. A model Ollama does
    not have is OllamaError(404, "model 'x' not found"), Ollama's own words."""
    resp = await http.post(f"{root.rstrip('/')}/api/show", json={"model": model}, timeout=timeout)
    if resp.status_code != 200:
        raise OllamaError(resp.status_code, _error_text(resp.content, resp.status_code))
    data = _json_object(resp.content, "/api/show's reply")
    info = data.get("model_info")
    info = info if isinstance(info, dict) else {}
    arch = info.get("general.architecture")
    caps = data.get("capabilities")
    return OllamaModel(
        context_length=_context_length(info),
        num_ctx=_num_ctx(data.get("parameters")),
        architecture=arch if isinstance(arch, str) else None,
        capabilities=tuple(c for c in caps if isinstance(c, str)) if isinstance(caps, list) else (),
    )


def parse_line(line: bytes) -> OllamaChunk:
    """One NDJSON line of /api/chat as a chunk; OllamaError for an {"error": ...} line or one
    that is not a chunk (and never any other exception, whatever the bytes)."""
    data = _json_object(line, "a line of the chat stream")
    message = data.get("message", {})
    if message is None:
        message = {}
    if not isinstance(message, dict):
        raise OllamaError(None, "a chunk's message is not an object")
    content = message.get("content") or ""
    thinking = message.get("thinking") or ""
    if not isinstance(content, str) or not isinstance(thinking, str):
        raise OllamaError(None, "a chunk's content is not text")
    done = data.get("done", False)
    if not isinstance(done, bool):
        raise OllamaError(None, 'a chunk\'s "done" is not true or false')
    reason = data.get("done_reason")
    return OllamaChunk(
        content=content,
        done=done,
        prompt_tokens=_count(data.get("prompt_eval_count")) or 0,
        completion_tokens=_count(data.get("eval_count")) or 0,
        prompt_seconds=_seconds(data.get("prompt_eval_duration")),
        write_seconds=_seconds(data.get("eval_duration")),
        done_reason=reason if isinstance(reason, str) else "",
        thinking=thinking,
    )


async def _lines(resp: httpx.Response) -> AsyncIterator[bytes]:
    """The response's non-blank lines, each at most MAX_LINE bytes."""
    pending = b""
    async for data in resp.aiter_bytes():
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.strip():
                yield line
        if len(pending) > MAX_LINE:
            raise OllamaError(None, f"a line of the chat stream is over {MAX_LINE} bytes")
    if pending.strip():
        yield pending


async def chat_stream(
    http: httpx.AsyncClient,
    root: str,
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    format: dict[str, Any] | str | None,
    num_ctx: int | None,
    num_predict: int | None,
    temperature: float,
    timeout: float,  # noqa: ASYNC109  (httpx's timeout for each wait; the caller bounds the whole)
    think: bool | None = None,
) -> AsyncIterator[OllamaChunk]:
    """POST {root}/api/chat, streamed: each NDJSON line as a chunk, the last with `done` and
    the counts. `format` is a JSON schema, "json", or None (free text); `num_ctx` None leaves
    the window to Ollama (its default or the Modelfile's), `num_predict` None leaves the length
    unbounded; `think` None leaves a thinking model to its default. `timeout` bounds each wait
    for bytes (connect, read); the caller bounds the whole. An error status, an {"error": ...}
    line, or a stream that ends before its done line is an OllamaError.

    Iterate inside `contextlib.aclosing(...)` when stopping early, so the connection is
    released at once rather than when the generator is collected."""
    options: dict[str, Any] = {"temperature": temperature}
    if num_ctx is not None:
        options["num_ctx"] = num_ctx
    if num_predict is not None:
        options["num_predict"] = num_predict
    body: dict[str, Any] = {
        "model": model,
        "messages": [dict(m) for m in messages],
        "stream": True,
        "options": options,
    }
    if format is not None:
        body["format"] = format
    if think is not None:
        body["think"] = think
    url = f"{root.rstrip('/')}/api/chat"
    async with http.stream("POST", url, json=body, timeout=timeout) as resp:
        if resp.status_code != 200:
            raw = await resp.aread()
            raise OllamaError(resp.status_code, _error_text(raw, resp.status_code))
        async for line in _lines(resp):
            chunk = parse_line(line)
            yield chunk
            if chunk.done:
                return
    raise OllamaError(None, "the chat stream ended before its last chunk")

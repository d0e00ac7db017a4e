"""A local fake Ollama for tests (aiohttp on 127.0.0.1, random port).

It speaks the native API the client uses (GET /api/version, POST /api/show, GET /api/tags,
POST /api/chat as NDJSON or with `"stream": false`) and the OpenAI-compatible part
(GET /v1/models, POST /v1/chat/completions, SSE when streamed, `usage` when
`stream_options.include_usage`), with Ollama's windows:

- a request's window is its `options.num_ctx` (native API only), else the Modelfile's `num_ctx`
  (`modelfile_ctx`), else `default_ctx` (2048), and never more than the model's own limit
  (`model_limit`, /api/show's "llama.context_length"); /v1 cannot ask for a window;
- a prompt longer than its window is cut from the FRONT, as Ollama does, system prompt first;
  `prompt_eval_count` (and /v1's `usage.prompt_tokens`) count what was kept;
- a token is 4 bytes of UTF-8: a message is ceil(len(content.encode()) / 4) + 4 tokens.

Its "model" answers from what it still sees, with tests/llmserver.py's helpers: a story's
numbered sources give a summary (fake_story), an article a fake_summary, a question an answer;
only complete source blocks are seen. While it sees all of every system message it answers the
JSON object the prompt asks for (with or without `format`); once any of the system prompt was
cut away it writes prose about what is left. `options.num_predict` caps the reply (done_reason
"length"). Each chat request is recorded in `chats` with its window, counts and format.

Faults for the next chat requests, in order (`script(...)`): "error_midstream" (a few pieces,
then an {"error": ...} line, as Ollama does when the runner fails mid-reply), "error500", and
"cut_stream" (the connection ends before the done line).

    async with OllamaServer(model_limit=8192) as srv:
        await ollama.show(http, srv.root, srv.model, 5.0)
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest_asyncio
from aiohttp import web

from tests.llmserver import (
    _ARTICLE,
    _SOURCE,
    fake_answer,
    fake_story,
    fake_summary,
    parse_block,
    sentences,
)

Fault = Literal["error_midstream", "error500", "cut_stream"]
MIDSTREAM_ERROR = b'{"error":"an error was encountered while running the model"}\n'
MODELFILE_STOPS = ('"<|start_header_id|>"', '"<|end_header_id|>"', '"<|eot_id|>"')


def tokens(content: str) -> int:
    """The fake's token count of one message."""
    return math.ceil(len(content.encode()) / 4) + 4


def prompt_tokens(messages: Sequence[dict[str, Any]]) -> int:
    return sum(tokens(str(m.get("content") or "")) for m in messages)


def cut_front(messages: Sequence[dict[str, Any]], window: int) -> tuple[list[dict[str, Any]], bool]:
    """What a model with this window sees of `messages`: whole messages dropped from the front,
    then the front of the first one kept trimmed, until the rest fits. Also: whether every
    system message is still whole."""
    kept = [dict(m, content=str(m.get("content") or "")) for m in messages]
    excess = prompt_tokens(kept) - window
    system_whole = True
    while excess > 0 and kept:
        first = kept[0]
        system_whole = system_whole and first.get("role") != "system"
        body = first["content"].encode()
        text_tokens = math.ceil(len(body) / 4)
        if excess > text_tokens and len(kept) > 1:
            kept.pop(0)
            excess -= text_tokens + 4
        else:  # the last message always stays, however little of it
            first["content"] = body[min(excess * 4, len(body)) :].decode("utf-8", "ignore")
            excess = 0
    return kept, system_whole


@dataclass
class Chat:
    """One chat request as the server saw it."""

    path: str  # "/api/chat" or "/v1/chat/completions"
    body: dict[str, Any]
    num_ctx: int | None  # options.num_ctx as asked (None: not asked, or /v1)
    window: int  # the window it ran with
    prompt_tokens: int  # the whole prompt
    kept_tokens: int  # what fit the window (prompt_eval_count)
    format: Any  # "format" (native) or "response_format" (/v1), None when absent
    stream: bool
    reply: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)  # the messages after the cut

    @property
    def cut(self) -> bool:
        return self.kept_tokens < self.prompt_tokens


class OllamaServer:
    """See the module docstring. `root` is the server root (no /v1); `url` is /v1's."""

    def __init__(
        self,
        *,
        model: str = "fake-llama:latest",
        model_limit: int = 8192,
        default_ctx: int = 2048,
        modelfile_ctx: int | None = None,
        version: str = "0.12.3",
        port: int = 0,
    ) -> None:
        self.model = model
        self.model_limit = model_limit
        self.default_ctx = default_ctx
        self.modelfile_ctx = modelfile_ctx
        self.version = version
        # how /api/version answers: as Ollama, as a server that is not Ollama but says 200 to
        # everything, or as a proxy in front of an Ollama that is down
        self.version_reply: Literal["ok", "no_version", "bad_gateway"] = "ok"
        self.port = port
        self.chats: list[Chat] = []
        self.paths: list[str] = []  # every request's path, in order
        self.cache_prompts = False  # count only what the request before did not share
        self._script: deque[Fault] = deque()
        self._runner: web.AppRunner | None = None

    def script(self, *faults: Fault) -> None:
        """Faults for the next chat requests (either API), one each, in order."""
        self._script.extend(faults)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def window(self, asked: int | None) -> int:
        return min(asked or self.modelfile_ctx or self.default_ctx, self.model_limit)

    def has(self, name: object) -> bool:
        """Ollama's names: "fake-llama" is "fake-llama:latest"."""
        if not isinstance(name, str):
            return False
        full = name if ":" in name else f"{name}:latest"
        return full == self.model

    # -- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> OllamaServer:
        app = web.Application(middlewares=[self._record_path])
        app.router.add_get("/api/version", self._version)
        app.router.add_post("/api/show", self._show)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_post("/api/chat", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._openai_chat)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[-1][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _record_path(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.paths.append(request.path)
        response: web.StreamResponse = await handler(request)
        return response

    # -- the native API ------------------------------------------------------------------------

    async def _version(self, request: web.Request) -> web.Response:
        if self.version_reply == "no_version":  # a server that says 200 to any path
            return web.json_response({"error": f"Unexpected endpoint ({request.path})"})
        if self.version_reply == "bad_gateway":  # a proxy whose Ollama is down
            return web.Response(status=502, text="502 Bad Gateway\n\nupstream refused")
        return web.json_response({"version": self.version})

    def _not_found(self, name: object) -> web.Response:
        return web.json_response({"error": f"model '{name}' not found"}, status=404)

    async def _body(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": "invalid character in request body"}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": "request body is not an object"}, status=400)
        return body

    async def _show(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        name = body.get("model") or body.get("name")
        if not self.has(name):
            return self._not_found(name)
        params = []
        if self.modelfile_ctx is not None:
            params.append(f"{'num_ctx':<30} {self.modelfile_ctx}")
        params += [f"{'stop':<30} {s}" for s in MODELFILE_STOPS]
        modelfile = "\n".join(
            ["FROM /models/blobs/sha256-fake", 'TEMPLATE """{{ .Prompt }}"""']
            + [f"PARAMETER {p.split()[0]} {p.split()[1]}" for p in params]
        )
        return web.json_response(
            {
                "modelfile": modelfile,
                "parameters": "\n".join(params),
                "template": "{{ .Prompt }}",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "llama",
                    "families": ["llama"],
                    "parameter_size": "1.2B",
                    "quantization_level": "Q4_K_M",
                },
                "model_info": {
                    "general.architecture": "llama",
                    "general.parameter_count": 1235814432,
                    "llama.block_count": 16,
                    "llama.context_length": self.model_limit,
                    "llama.embedding_length": 2048,
                    "tokenizer.ggml.model": "gpt2",
                },
                "capabilities": ["completion", "tools"],
                "modified_at": "2026-11-30T09:00:00.000000000Z",
            }
        )

    async def _tags(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "models": [
                    {
                        "name": self.model,
                        "model": self.model,
                        "modified_at": "2026-11-30T09:00:00.000000000Z",
                        "size": 807694464,
                        "digest": "f" * 64,
                        "details": {"format": "gguf", "family": "llama"},
                    }
                ]
            }
        )

    def _take(self, request: web.Request, body: dict[str, Any], asked: Any) -> Chat:
        """Record a chat: its window, what of its prompt fits, and the reply to what is left."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        num_ctx = asked if isinstance(asked, int) and asked > 0 else None
        window = self.window(num_ctx)
        seen, instructed = cut_front(messages, window)
        fmt = body.get("format") if request.path.startswith("/api/") else None
        if request.path.startswith("/v1/"):
            fmt = body.get("response_format")
        chat = Chat(
            path=request.path,
            body=body,
            num_ctx=num_ctx,
            window=window,
            prompt_tokens=prompt_tokens(messages),
            kept_tokens=prompt_tokens(seen),
            format=fmt,
            stream=body.get("stream", request.path.startswith("/api/")) is not False,
            seen=seen,
        )
        chat.reply = reply(seen, instructed=instructed)
        self.chats.append(chat)
        return chat

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        if not self.has(body.get("model")):
            return self._not_found(body.get("model"))
        options = body.get("options")
        options = options if isinstance(options, dict) else {}
        chat = self._take(request, body, options.get("num_ctx"))
        fault = self._script.popleft() if self._script else None
        if fault == "error500":
            return web.json_response({"error": "llama runner process has terminated"}, status=500)
        content, reason = capped(chat.reply, options.get("num_predict"))
        # With `cache_prompts`, as Ollama does, the messages a prompt shares with the one
        # before, from the start, are not counted again (at least one token always is).
        cached = 0
        seen = [c for c in self.chats if c.path == "/api/chat"]
        if self.cache_prompts and len(seen) > 1:
            now, before = chat.body.get("messages") or [], seen[-2].body.get("messages") or []
            for mine, theirs in zip(now, before, strict=False):
                if mine != theirs:
                    break
                cached += tokens(str(mine.get("content", "")))
            cached = min(cached, chat.kept_tokens - 1)
        stamp = {"model": self.model, "created_at": "2026-12-04T12:00:00.000000Z"}
        last = {
            **stamp,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": reason,
            "total_duration": 1_000_000 * chat.kept_tokens + 20_000_000 * tokens(content),
            "load_duration": 1_000_000,
            "prompt_eval_count": chat.kept_tokens - cached,
            "prompt_eval_duration": 1_000_000 * (chat.kept_tokens - cached),  # 1 ms a token
            "eval_count": tokens(content) - 4,
            "eval_duration": 20_000_000 * (tokens(content) - 4),  # 20 ms a token written
        }
        if not chat.stream:
            return web.json_response({**last, "message": {"role": "assistant", "content": content}})
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await resp.prepare(request)
        for i, piece in enumerate(pieces(content)):
            if fault in ("error_midstream", "cut_stream") and i == 2:
                if fault == "error_midstream":
                    await resp.write(MIDSTREAM_ERROR)
                await resp.write_eof()
                return resp
            line = {**stamp, "message": {"role": "assistant", "content": piece}, "done": False}
            await resp.write(json.dumps(line).encode() + b"\n")
            await asyncio.sleep(0)
        await resp.write(json.dumps(last).encode() + b"\n")
        await resp.write_eof()
        return resp

    # -- the OpenAI-compatible API -------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": self.model, "object": "model", "created": 0, "owned_by": "library"}
                ],
            }
        )

    @staticmethod
    def _openai_error(status: int, message: str) -> web.Response:
        return web.json_response(
            {"error": {"message": message, "type": "api_error", "param": None, "code": None}},
            status=status,
        )

    async def _openai_chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return self._openai_error(400, "invalid request body")
        if not self.has(body.get("model")):
            name = body.get("model")
            return self._openai_error(404, f'model "{name}" not found, try pulling it first')
        chat = self._take(request, body, None)  # /v1 has no way to ask for a window
        fault = self._script.popleft() if self._script else None
        if fault == "error500":
            return self._openai_error(500, "llama runner process has terminated")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        content, reason = capped(chat.reply, limit)
        usage = {
            "prompt_tokens": chat.kept_tokens,
            "completion_tokens": tokens(content) - 4,
            "total_tokens": chat.kept_tokens + tokens(content) - 4,
        }
        base = {"id": f"chatcmpl-{len(self.chats)}", "created": int(time.time())}
        base["model"] = self.model
        if not chat.stream:
            return web.json_response(
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": reason,
                        }
                    ],
                    "usage": usage,
                }
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        base["object"] = "chat.completion.chunk"
        for i, piece in enumerate(pieces(content)):
            if fault in ("error_midstream", "cut_stream") and i == 2:
                if fault == "error_midstream":
                    error = {"error": {"message": "an error was encountered while running"}}
                    await resp.write(f"data: {json.dumps(error)}\n\n".encode())
                await resp.write_eof()
                return resp
            delta = {"role": "assistant", "content": piece}
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        final = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
        await resp.write(f"data: {json.dumps(final)}\n\n".encode())
        if (body.get("stream_options") or {}).get("include_usage"):
            tail = {**base, "choices": [], "usage": usage}
            await resp.write(f"data: {json.dumps(tail)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


def reply(seen: Sequence[dict[str, Any]], *, instructed: bool) -> str:
    """The fake model's answer to the messages it sees: the JSON object the prompt asks for
    while it sees the whole system prompt, prose about what it sees once it does not."""
    user = "\n".join(m["content"] for m in seen if m.get("role") == "user")
    sources = [parse_block(m.group(3), m.group(2)) for m in _SOURCE.finditer(user)]
    article = _ARTICLE.search(user)
    if sources and (user.startswith("Story:") or not instructed):
        data = fake_story(sources, None)
    elif article:
        data = fake_summary(parse_block(article.group(2), article.group(1)))
    elif sources:
        data = fake_answer("", sources, None)
    else:
        said = " ".join(sentences(user)[:2])
        data = {"answer": said or "There is nothing to answer."}
    if instructed:
        return json.dumps(data, ensure_ascii=False)
    told = " ".join(str(v) for k, v in data.items() if k != "keywords")
    return f"It looks like a text about several things. {told}".strip()


def capped(content: str, limit: Any) -> tuple[str, str]:
    """The reply cut to `limit` tokens (num_predict, max_tokens), and why it ended."""
    if isinstance(limit, int) and limit > 0 and tokens(content) - 4 > limit:
        return content.encode()[: limit * 4].decode("utf-8", "ignore"), "length"
    return content, "stop"


def pieces(content: str) -> list[str]:
    step = max(1, len(content) // 6)
    return [content[i : i + step] for i in range(0, len(content), step)]


@pytest_asyncio.fixture
async def ollama_server() -> AsyncIterator[OllamaServer]:
    """A fresh fake Ollama for one test: an 8192-token model, 2048 tokens unless asked."""
    async with OllamaServer() as srv:
        yield srv


async def _serve(port: int) -> None:  # pragma: no cover - manual use
    async with OllamaServer(port=port) as srv:
        print(f"fake Ollama at {srv.root}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    import sys

    asyncio.run(_serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))

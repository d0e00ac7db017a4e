"""Summaries from any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).

Servers differ in structured output: OpenAI and vLLM honour `response_format={"type":
"json_schema"}`, llama-cpp-python's server answers it with HTTP 500 but constrains the reply to a
schema given beside `json_object` (an extension llama.cpp's own server shares), some only know
`json_object`, which gives JSON of any shape, and a small model asked for nothing writes prose. So
the first call to a (base_url, model) negotiates: json_schema, then json_object with the schema
beside it, then json_object alone, then plain prompting, each reply parsed tolerantly and
validated; the first mode the server accepts is remembered (a server that ignores the extension
keeps json_object with the schema, which costs it nothing). A probe is sent without the client's
retries, and a 400/422/500/501 to a probe means "this mode is unsupported", not "the server is
down" (a server that is down fails the plain call too, after its retries, and that is reported).
Negotiation happens once per client: concurrent first calls wait for it.

Local servers answer one request at a time, so at most `[llm] concurrency` requests are in
flight; the others wait in line here, and a request's time limits start when it is sent (a
request timed out for the time it queued behind others is what made a llama.cpp server give no
summary at all). Replies are streamed: no token within `first_token_timeout` means the server
is not answering; tokens that keep coming are a slow server, given `timeout` in all.

Output is untrusted like its input: it must validate, links other than the article's are removed,
and a summary that shares no key term with the article is refused (a model that obeyed an
instruction planted in the page usually writes about something else).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from digest.config import LLMConfig
from digest.errors import SummarizeError
from digest.models import Summary
from digest.runtime import metrics
from digest.summarize import extractive, prompts, window
from digest.summarize.output import (
    RESTATES_HEADLINE,
    one_line,
    parse_json_object,
    restates_headline,
    strip_links,
)
from digest.summarize.text import content_terms, length, searchable, split_sentences
from digest.summarize.types import ArticleInput
from digest.summarize.window import ServerFacts

if TYPE_CHECKING:  # imported where they are used: a command that writes no summary starts without
    import httpx
    import openai

log = logging.getLogger(__name__)

Mode = Literal["json_schema", "json_object_schema", "json_object", "plain"]
STRUCTURED_MODES: tuple[Mode, ...] = ("json_schema", "json_object_schema", "json_object")
# Status codes with which servers refuse a response_format they do not support (llama.cpp: 500,
# vLLM and others: 400 or 422).
UNSUPPORTED_STATUS = frozenset({400, 422, 500, 501})
MAX_OUTPUT_TOKENS = 1200
# A small window may leave a reply less room than asked, down to this share of it.
REPLY_FLOOR = 0.7
# The tokens of text a request's sources keep, in all, before room to ask once more after an
# unusable reply is given up (about an English lede from each of three outlets).
TEXT_FLOOR = 150
SUMMARY_TOKENS = 800  # room for an article's summary: 300 words, a brief, keywords, in JSON
MAX_SUMMARY_WORDS = 450
MAX_KEYWORDS = 8
# Under llama.cpp's grammar a small model can list keywords until max_tokens cuts the JSON off
# (SmolLM2-135M: 2 of 4 replies); a bound on each array ends the list (10 of 10 valid). Strings
# stay unbounded: a maxLength expands into a grammar llama-cpp-python 0.3.36 cannot parse, and
# its server then dies.
MAX_ARRAY_ITEMS = MAX_KEYWORDS

T = TypeVar("T")


# The chat completions sent for one piece of work (a `deepen` run, a queue's story task): the
# tasks it starts inherit its tally; other work on the same client, at the same time, has its own.
_work_calls: ContextVar[list[int] | None] = ContextVar("llm_work_calls", default=None)


@contextmanager
def counted_calls() -> Iterator[list[int]]:
    """`[n]`: the chat completions sent inside the block, by this task and the tasks it starts
    (probes, repairs and retries by the openai client aside)."""
    tally = [0]
    token = _work_calls.set(tally)
    try:
        yield tally
    finally:
        _work_calls.reset(token)


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
class _Sized(Generic[T]):
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
class _Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class _Message:
    content: str
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class _Choice:
    message: _Message


@dataclass(frozen=True, slots=True)
class _Streamed:
    """A streamed reply put back together in the shape of a ChatCompletion (the fields read
    here). When the server sent no usage (llama-cpp-python does not), completion tokens are the
    content chunks (one token each there) and prompt tokens are estimated at 4 characters each."""

    choices: list[_Choice]
    usage: _Usage
    reported: bool = True  # whether the server sent the usage (else it is estimated)


@dataclass(frozen=True, slots=True)
class Completion(Generic[T]):
    value: T
    mode: Mode
    prompt_tokens: int
    completion_tokens: int


def _first_line(text: str, limit: int = 200) -> str:
    return one_line(text.strip().splitlines()[0] if text.strip() else "", limit)


class LLMClient:
    """One OpenAI-compatible endpoint and model: negotiated JSON replies fitted to the model's
    context window, errors as one line."""

    def __init__(
        self,
        config: LLMConfig,
        api_key: str | None,
        *,
        client: openai.AsyncOpenAI | None = None,
        negotiated: MutableMapping[tuple[str, str], Mode] | None = None,
    ) -> None:
        """`negotiated` remembers, per (base_url, model), the mode that worked; pass one
        mapping to several clients to share what they learn."""
        import httpx
        import openai

        from digest.summarize import reply_limit

        self.config = config
        self._has_key = bool(api_key)
        # Local servers need no key, but the client insists on one (and would otherwise read
        # OPENAI_API_KEY from the environment itself). Its HTTP client reads no reply past the
        # cap of what was asked (`reply_limit`), and follows redirects as its own would.
        self._client = client or openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=api_key or "no-key",
            timeout=config.timeout,
            max_retries=config.max_retries,
            # openai 3 is typed for httpx2's client and takes httpx's as well (as openai 1 did)
            http_client=httpx.AsyncClient(  # type: ignore[arg-type]
                event_hooks=reply_limit.EVENT_HOOKS, follow_redirects=True
            ),
        )
        self._api_key = api_key
        self._modes = {} if negotiated is None else negotiated
        # Made on first use, inside the running loop.
        self._gate: asyncio.Semaphore | None = None
        self._negotiating: asyncio.Lock | None = None
        self._learning: asyncio.Lock | None = None
        self._http: httpx.AsyncClient | None = None
        self._facts: ServerFacts | None = None

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    @property
    def _key(self) -> tuple[str, str]:
        return (self.config.base_url.rstrip("/"), self.config.model)

    @property
    def api(self) -> openai.AsyncOpenAI:
        """The OpenAI client this one wraps (for calls other than chat: the models list)."""
        return self._client

    @property
    def mode(self) -> Mode | None:
        """The structured-output mode this server accepted, once known."""
        return self._modes.get(self._key)

    async def aclose(self) -> None:
        await self._client.close()
        if self._http is not None:
            await self._http.aclose()

    def _http_client(self) -> httpx.AsyncClient:
        """For what the OpenAI API has no call for: the server's window, its tokenizer, Ollama."""
        import httpx

        from digest.summarize import reply_limit

        if self._http is None:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._http = httpx.AsyncClient(
                headers=headers, timeout=window.PROBE_TIMEOUT, event_hooks=reply_limit.EVENT_HOOKS
            )
        return self._http

    @property
    def known_facts(self) -> ServerFacts | None:
        """What was learned of the server so far (None before the first request): its speeds
        as measured, without asking it anything."""
        return self._facts

    async def facts(self) -> ServerFacts:
        """What the server is and how much it reads, learned once (and again when stale)."""
        if self._facts is None or self._facts.stale:
            if self._learning is None:
                self._learning = asyncio.Lock()
            async with self._learning:
                if self._facts is None or self._facts.stale:
                    self._facts = await window.discover(
                        self._http_client(),
                        self.config.base_url,
                        self.config.model,
                        self.config.context_tokens,
                    )
        return self._facts

    async def count(self, messages: list[dict[str, str]]) -> tuple[int, bool]:
        """The prompt's tokens, by the server's tokenizer where it has one (then True)."""
        facts = await self.facts()
        return await window.count_messages(
            self._http_client(), facts, self.config.base_url, self.config.model, messages
        )

    async def complete_json(self, request: JSONRequest[T]) -> Completion[T]:
        """Ask for a JSON object and return it validated, negotiating the mode on first use.

        The request is fitted to the model's context window first (its sources cut shorter
        when it has `resize`); a server that still could not read it all makes the request
        smaller once more, and the window learned lower. Raises SummarizeError when the server
        fails after its retries, when the request cannot be made to fit, or when the reply
        stays invalid after one request to repair it.
        """
        facts = await self.facts()
        sized = await self._fit(request, facts)
        try:
            return await self._complete(sized, facts)
        except ContextExceeded as err:
            named = err.window if err.window and err.window < facts.window else None
            facts.lower(named or int(facts.window * 0.75), str(err))
            smaller = await self._fit(sized.request, facts, below=sized.tokens)
            log.info(
                "%s: the request of about %d tokens did not fit; sending %d",
                self.name,
                sized.tokens,
                smaller.tokens,
            )
            try:
                return await self._complete(smaller, facts)
            except ContextExceeded as again:
                raise SummarizeError(
                    f"LLM at {self.config.base_url} could not read the request even made "
                    f"smaller ({smaller.tokens} tokens): {again}",
                    prompt_tokens=again.prompt_tokens,
                    completion_tokens=again.completion_tokens,
                ) from None

    async def ask(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        """A short plain-text reply (no JSON asked for), under the same limits and gate as a
        summary: a yes/no question about two sentences (`digest.jobs.figure_check`).
        SummarizeError when the server fails or cannot read it all; a refusal comes back as
        "(refused: ...)"."""
        facts = await self.facts()
        tokens, exact = await self.count(messages)
        if tokens + max_tokens + window.MARGIN > facts.window:
            raise SummarizeError(
                f"the request does not fit the model's context window: about {tokens} tokens"
            )

        def unused(_: dict[str, Any]) -> None:
            return None

        request: JSONRequest[None] = JSONRequest(
            messages, "answer", {}, unused, "", max_tokens=max_tokens
        )
        reply = await self._call("plain", messages, _Sized(request, tokens, exact))
        return _content(reply)

    async def _fit(
        self, request: JSONRequest[T], facts: ServerFacts, *, below: int | None = None
    ) -> _Sized[T]:
        """The request cut to fit the window with room for its reply (and, after the server
        refused it, to under `below` tokens as well), counted in tokens, not characters (an
        outlet's text in Hangul takes several times the tokens of one in English): its sources
        shorter first, leaving room for a repair request too while they keep `TEXT_FLOOR`
        tokens; then without that room; then with a reply down to `REPLY_FLOOR` of what was
        asked and the sources down to their headlines if need be."""
        asked = request.reply_tokens

        def room(reply: int, repair: int) -> int:
            limit = facts.window - reply - window.MARGIN - repair
            return limit if below is None else min(limit, int(below * 0.8))

        tokens, exact = await self.count(request.messages)
        fixed: int | None = None  # the tokens of everything but the sources' texts

        async def shrink(target: int, floor: int) -> bool:
            """Cut the sources until the request takes `target` tokens at most, its texts
            keeping `floor` tokens (or what they have, if less): whether it fits."""
            nonlocal request, tokens, exact, fixed
            for _ in range(6):
                if tokens <= target:
                    return True
                if request.resize is None or target <= 0:
                    return False
                if fixed is None:
                    fixed = (await self.count(request.resize(0).messages))[0]
                texts = max(1, tokens - fixed)
                # The texts' share shrinks; the instructions and headlines stay.
                share = max(target - fixed, min(floor, texts)) / texts
                chars = max(0, int(request.chars * min(share, 1.0) * 0.95))
                smaller = request.resize(chars)
                if smaller.chars >= request.chars:
                    return False  # cut as far as the floor allows
                request = smaller
                tokens, exact = await self.count(request.messages)
            return tokens <= target

        if await shrink(room(asked, window.REPAIR_ROOM), TEXT_FLOOR):
            return _Sized(request, tokens, exact)
        if await shrink(room(asked, 0), TEXT_FLOOR):
            return _Sized(request, tokens, exact)  # no room to ask again after a bad reply
        least = int(asked * REPLY_FLOOR)
        if await shrink(room(least, 0), 0):
            reply = min(asked, facts.window - window.MARGIN - tokens)
            return _Sized(replace(request, max_tokens=reply), tokens, exact)
        raise SummarizeError(
            f"the request does not fit the model's context window: about {tokens} tokens, and "
            f"{self.config.model} reads {facts.window} ({facts.window_source}) with "
            f"{least} at least kept for its reply"
        )

    async def _complete(self, sized: _Sized[T], facts: ServerFacts) -> Completion[T]:
        if facts.kind == "ollama":
            # Its native API takes a schema as `format` (Ollama 0.5 and later): no negotiation.
            self._remember("json_schema")
        mode = self.mode
        if mode is None:
            if self._negotiating is None:
                self._negotiating = asyncio.Lock()
            async with self._negotiating:
                mode = self.mode
                if mode is None:
                    mode, reply = await self._negotiate(sized)
                    return await self._validated(reply, mode, sized)
        reply = await self._call(mode, sized.request.messages, sized)
        return await self._validated(reply, mode, sized)

    async def _negotiate(self, sized: _Sized[Any]) -> tuple[Mode, Any]:
        import openai

        messages = sized.request.messages
        for mode in STRUCTURED_MODES:
            try:
                reply = await self._call(mode, messages, sized, retries=0, probe=True)
            except openai.APIStatusError as err:
                self._raise_if_exceeded(err)
                if err.status_code in UNSUPPORTED_STATUS:
                    log.info(
                        "%s at %s: response_format %s refused with HTTP %s; trying the next",
                        self.config.model,
                        self.config.base_url,
                        mode,
                        err.status_code,
                    )
                    continue
                reply = await self._after_failed_probe(err, mode, sized)
            except openai.APIConnectionError as err:  # refused, reset, timed out
                reply = await self._after_failed_probe(err, mode, sized)
            self._remember(mode)
            return mode, reply
        reply = await self._call("plain", messages, sized)
        self._remember("plain")
        return "plain", reply

    async def _after_failed_probe(
        self,
        err: openai.APIStatusError | openai.APIConnectionError,
        mode: Mode,
        sized: _Sized[Any],
    ) -> Any:
        """A probe that failed for another reason than its mode (429, timeout, refused): the probe
        was the first attempt, the client's remaining retries follow."""
        import openai

        retries = self.config.max_retries
        fatal = isinstance(err, openai.APIStatusError) and err.status_code in (401, 403, 404)
        if retries == 0 or fatal:
            raise self._error(err, retries=0) from None
        try:
            return await self._call(
                mode, sized.request.messages, sized, retries=retries - 1, probe=True
            )
        except (openai.APIStatusError, openai.APIConnectionError) as again:
            self._raise_if_exceeded(again)
            raise self._error(again) from None

    def _raise_if_exceeded(self, err: openai.APIStatusError | openai.APIConnectionError) -> None:
        import openai

        if not isinstance(err, openai.APIStatusError):
            return
        message = _api_message(err)
        body = err.body.get("error", err.body) if isinstance(err.body, dict) else None
        exceeded, named = window.context_exceeded(message, body)
        if exceeded:
            raise ContextExceeded(
                f"answered HTTP {err.status_code}: {_first_line(message) or 'context exceeded'}",
                named,
            ) from None

    def _remember(self, mode: Mode) -> None:
        if self._modes.get(self._key) != mode:
            log.info("%s at %s: structured output via %s", *self._key[::-1], mode)
        self._modes[self._key] = mode

    def _response_format(self, mode: Mode, request: JSONRequest[Any]) -> dict[str, Any]:
        if mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "strict": True,
                    "schema": request.schema,
                },
            }
        if mode == "json_object_schema":
            # llama.cpp's extension: the schema beside json_object constrains the shape.
            schema = _bounded_arrays(request.schema, MAX_ARRAY_ITEMS)
            return {"type": "json_object", "schema": schema}
        if mode == "json_object":
            return {"type": "json_object"}
        return {}

    async def _call(
        self,
        mode: Mode,
        messages: list[dict[str, str]],
        sized: _Sized[Any],
        *,
        retries: int | None = None,
        probe: bool = False,
    ) -> Any:
        """One chat completion (the client retries `retries` times, default the configured
        number). A probe raises the client's own errors; any other call raises SummarizeError
        (ContextExceeded when the server could not read it all)."""
        import httpx
        import openai

        from digest.summarize import reply_limit

        request = sized.request
        facts = await self.facts()
        kwargs: dict[str, Any] = {}
        if response_format := self._response_format(mode, request):
            kwargs["response_format"] = response_format
        client = self._client
        if retries is not None and retries != self.config.max_retries:
            client = client.with_options(max_retries=retries)
        tokens = sized.tokens
        if messages is not request.messages:  # a repair: the reply and a word more
            tokens += window.estimate_tokens(messages[-2]["content"] + messages[-1]["content"])
        first_token = facts.first_token_allowance(tokens, self.config.first_token_timeout)
        total = first_token + facts.writing_allowance(request.reply_tokens, self.config.timeout)
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.config.concurrency)
        async with self._gate:  # waiting here is not timed: the limits start when it is sent
            if (tally := _work_calls.get()) is not None:
                tally[0] += 1
            started = time.monotonic()
            try:
                kwargs["max_tokens"] = request.reply_tokens
                with reply_limit.replying(request.reply_tokens):
                    if facts.kind == "ollama":
                        reply: Any = await self._ollama(
                            messages, request, facts, tokens, first_token, total
                        )
                    elif self.config.stream:
                        reply = await self._streamed(
                            client, messages, kwargs, facts, tokens, first_token, total
                        )
                    else:
                        reply = await self._unstreamed(client, messages, kwargs, facts, total)
            except (openai.APIStatusError, openai.APIConnectionError) as err:
                if isinstance(err, openai.APIConnectionError) and not _broke_off(err):
                    self._facts = None  # learned from a server that was not there: ask again
                refused = probe and getattr(err, "status_code", None) in UNSUPPORTED_STATUS
                outcome = "unsupported" if refused else "error"
                metrics.llm_called(outcome, time.monotonic() - started)
                if not probe:
                    self._raise_if_exceeded(err)
                if probe:
                    raise
                raise self._error(err, retries=retries) from None
            except openai.OpenAIError as err:
                metrics.llm_called("error", time.monotonic() - started)
                raise self._error(err, retries=retries) from None
            except SummarizeError:
                metrics.llm_called("error", time.monotonic() - started)
                raise
            except (ValueError, httpx.HTTPError) as err:  # ValueError: JSONDecodeError
                # What the client could not read (openai's own parsing raises these as they are).
                metrics.llm_called("error", time.monotonic() - started)
                raise self._unreadable(err) from None
            metrics.llm_called("ok", time.monotonic() - started, *_usage(reply))
            self._check_read_whole(reply, messages, sized, facts)
            return reply

    def _unreadable(self, err: ValueError | httpx.HTTPError) -> SummarizeError:
        """The one line for a reply that could not be read: not JSON, cut short, broken off."""
        import httpx

        from digest.summarize.reply_limit import ReplyTooLong

        where = f"LLM at {self.config.base_url}"
        if isinstance(err, ReplyTooLong):
            return SummarizeError(f"{where} sent {err}")
        if isinstance(err, httpx.HTTPError):
            detail = _first_line(str(err)) or type(err).__name__
            return SummarizeError(f"{where} broke off its reply: {detail}")
        return SummarizeError(
            f"{where} sent a reply that could not be read, not JSON or cut short: "
            f"{_first_line(str(err), 120)}"
        )

    async def _unstreamed(
        self,
        client: openai.AsyncOpenAI,
        messages: list[dict[str, str]],
        kwargs: dict[str, Any],
        facts: ServerFacts,
        total: float,
    ) -> Any:
        """One chat completion read whole; SummarizeError when it is not one (another shape,
        or not JSON, which the openai client hands back as text)."""
        started = time.monotonic()
        reply = await client.chat.completions.create(
            model=self.config.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=self.config.temperature,
            timeout=total,
            **kwargs,
        )
        if (wrong := _wrong_shape(reply)) is not None:
            raise SummarizeError(f"LLM at {self.config.base_url} sent {wrong}")
        # No first token to time: the whole reply stands for both (slower, so the next request
        # is allowed more, not less).
        took = time.monotonic() - started
        facts.speeds.record(*_usage(reply), took, took * 2)
        return reply

    def _check_read_whole(
        self, reply: Any, messages: list[dict[str, str]], sized: _Sized[Any], facts: ServerFacts
    ) -> None:
        """ContextExceeded when the server says it read fewer tokens than the prompt has: it
        cut the prompt (Ollama's OpenAI-compatible endpoint does, from the front, silently).
        Not for Ollama's native API: it is asked for the window, and counts only the tokens it
        did not have cached from the request before."""
        if getattr(reply, "reported", True) is False or messages is not sized.request.messages:
            return
        if facts.kind == "ollama":
            return
        reported = _usage(reply)[0]
        if reported <= 0:
            return
        text = "\n".join(m.get("content", "") for m in messages)
        expected = int(sized.tokens * 0.9) - 16 if sized.exact else window.least_tokens(text)
        if reported < expected:
            raise ContextExceeded(
                f"read only {reported} tokens of a prompt of about "
                f"{sized.tokens if sized.exact else expected} (it cut the rest, so the reply "
                "is not used)",
                reported,
                prompt_tokens=reported,
                completion_tokens=_usage(reply)[1],
            )

    async def _streamed(
        self,
        client: openai.AsyncOpenAI,
        messages: list[dict[str, str]],
        kwargs: dict[str, Any],
        facts: ServerFacts,
        prompt_tokens: int,
        first_token: float,
        total: float,
    ) -> _Streamed:
        """One streamed completion through the OpenAI API."""
        config = self.config

        async def pieces() -> AsyncIterator[tuple[str | None, _Usage | None]]:
            stream = await client.chat.completions.create(  # type: ignore[call-overload]
                model=config.model,
                messages=messages,
                temperature=config.temperature,
                stream=True,
                stream_options={"include_usage": True},
                timeout=total,
                **kwargs,
            )
            async with stream:
                async for chunk in stream:
                    text = _delta_text(chunk)
                    if text is None:
                        raise SummarizeError(
                            f"LLM at {config.base_url} sent a stream event of the wrong shape "
                            "(no list of choices with text)"
                        )
                    usage = None
                    if getattr(chunk, "usage", None) is not None:
                        usage = _Usage(*_usage(chunk))
                    yield text, usage

        return await self._timed(pieces(), facts, prompt_tokens, first_token, total)

    async def _ollama(
        self,
        messages: list[dict[str, str]],
        request: JSONRequest[Any],
        facts: ServerFacts,
        prompt_tokens: int,
        first_token: float,
        total: float,
    ) -> _Streamed:
        """One streamed completion through Ollama's native API, asking for the window the
        request was fitted to (its OpenAI-compatible endpoint cannot, and cuts the prompt)."""
        import httpx

        from digest.summarize import ollama

        async def pieces() -> AsyncIterator[tuple[str | None, _Usage | None]]:
            try:
                async for chunk in ollama.chat_stream(
                    self._http_client(),
                    window.root_of(self.config.base_url),
                    self.config.model,
                    messages,
                    format=request.schema or None,  # {}: free text (`ask`)
                    num_ctx=facts.ollama_num_ctx or facts.window,
                    num_predict=request.reply_tokens,
                    temperature=self.config.temperature,
                    timeout=total,
                ):
                    usage = None
                    if chunk.done:
                        usage = _Usage(chunk.prompt_tokens, chunk.completion_tokens)
                    yield chunk.content, usage
            except ollama.OllamaError as err:
                exceeded, named = window.context_exceeded(err.message)
                where = f"LLM at {self.config.base_url}"
                if exceeded:
                    raise ContextExceeded(f"answered: {err.message}", named) from None
                raise SummarizeError(f"{where} answered HTTP {err.status}: {err.message}") from None
            except httpx.TransportError as err:
                self._facts = None
                detail = _first_line(str(err)) or type(err).__name__
                raise SummarizeError(
                    f"LLM at {self.config.base_url} unreachable: {detail}"
                ) from None
            except httpx.HTTPError as err:  # a reply that could not be read
                raise self._unreadable(err) from None

        return await self._timed(pieces(), facts, prompt_tokens, first_token, total)

    async def _timed(
        self,
        pieces: AsyncIterator[tuple[str | None, _Usage | None]],
        facts: ServerFacts,
        prompt_tokens: int,
        first_token: float,
        total: float,
    ) -> _Streamed:
        """A streamed reply put together: SummarizeError when no token came within
        `first_token` seconds (counted from sending: the time the prompt needs at the server's
        measured speed, and `[llm] first_token_timeout` more) or the whole reply took over
        `total`; ContextExceeded when the server closed it without a word."""
        config = self.config
        started = time.monotonic()
        parts: list[str] = []
        usage: _Usage | None = None
        chunks = events = 0
        first_at: float | None = None
        try:
            async with asyncio.timeout(total) as whole:
                iterator = pieces.__aiter__()
                while True:
                    try:
                        if first_at is None:
                            left = first_token - (time.monotonic() - started)
                            piece, said = await asyncio.wait_for(anext(iterator), max(left, 0.001))
                        else:
                            piece, said = await anext(iterator)
                    except StopAsyncIteration:
                        break
                    events += 1
                    if first_at is None:  # any event, even a role alone: the model is writing
                        first_at = time.monotonic()
                    if said is not None:
                        usage = said
                    if piece:
                        parts.append(piece)
                        chunks += 1
        except TimeoutError:
            waited = time.monotonic() - started
            if first_at is None and whole.expired():
                raise SummarizeError(
                    f"LLM at {config.base_url} did not answer within {total:.0f} s"
                ) from None
            if first_at is None:
                speed = facts.speeds.prompt_speed
                reading = (
                    f"at the {speed:.0f} tokens/s it was measured reading"
                    if speed
                    else f"at an assumed {window.PRIOR_PROMPT_SPEED:g} tokens/s"
                )
                raise SummarizeError(
                    f"LLM at {config.base_url} sent no token within {first_token:.0f} s of the "
                    f"request (the prompt's reading time {reading}, and [llm] "
                    f"first_token_timeout {config.first_token_timeout:g} s more): it is not "
                    "answering"
                ) from None
            # What it wrote so far measures its pace: the next request is given that.
            assert first_at is not None
            facts.speeds.record(0, chunks, first_at - started, time.monotonic() - started)
            raise SummarizeError(
                f"LLM at {config.base_url} was still writing after {waited:.0f} s "
                f"({chunks} tokens; its measured writing speed and [llm] timeout "
                f"{config.timeout:g} s allowed {total:.0f} s): a slow server"
            ) from None
        finally:
            aclose = getattr(pieces, "aclose", None)
            if aclose is not None:
                await aclose()
        if events == 0:
            raise ContextExceeded(
                "closed the reply without a word (llama-cpp-python's server does this when the "
                "prompt exceeds its context window)"
            )
        reported = usage is not None and bool(usage.prompt_tokens or usage.completion_tokens)
        finished = time.monotonic()
        if not reported or usage is None:
            # No usage sent (llama-cpp-python): the prompt as counted here, a token a chunk.
            usage = _Usage(0, chunks)
            measured = _Usage(prompt_tokens, chunks)
        else:
            measured = usage
        if first_at is not None:
            facts.speeds.record(
                measured.prompt_tokens,
                measured.completion_tokens,
                first_at - started,
                finished - started,
            )
        return _Streamed([_Choice(_Message("".join(parts)))], usage, reported)

    async def _validated(self, reply: Any, mode: Mode, sized: _Sized[T]) -> Completion[T]:
        request = sized.request
        prompt_tokens, completion_tokens = _usage(reply)
        if not prompt_tokens:
            prompt_tokens = sized.tokens
        content = _content(reply)
        try:
            value = _parse(content, request.validate)
        except InvalidOutput as first:
            if not first.repairable:
                raise SummarizeError(
                    f"{self.name} output refused: {first}",
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                ) from None
            facts = await self.facts()
            ask = f"That reply was not usable: {first}. {request.repair_hint}"
            # The reply is shown back as far as the window has room for it.
            room = facts.window - sized.tokens - request.reply_tokens - window.MARGIN
            room -= window.estimate_tokens(ask) + 2 * window.PER_MESSAGE
            shown = window.cut_to_tokens(content[:4000], max(60, room))
            retry = [
                *request.messages,
                {"role": "assistant", "content": shown},
                {"role": "user", "content": ask},
            ]
            extra = window.estimate_tokens(shown + ask) + 2 * window.PER_MESSAGE
            if sized.tokens + extra + request.reply_tokens + window.MARGIN > facts.window:
                raise SummarizeError(
                    f"{self.name} output invalid: {first} (no room in the model's context "
                    "window to ask once more)",
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                ) from None
            log.info("%s: unusable reply (%s); asking once more", self.name, first)
            reply = await self._call(mode, retry, sized)
            more_prompt, more_completion = _usage(reply)
            prompt_tokens += more_prompt or sized.tokens + extra
            completion_tokens += more_completion
            try:
                value = _parse(_content(reply), request.validate)
            except InvalidOutput as second:
                raise SummarizeError(
                    f"{self.name} output stayed invalid after a second request: {second}",
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                ) from None
        return Completion(value, mode, prompt_tokens, completion_tokens)

    def _error(self, err: openai.OpenAIError, *, retries: int | None = None) -> SummarizeError:
        import openai

        where = self.config.base_url
        retries = self.config.max_retries if retries is None else retries
        after = f" (after {retries} retr{'y' if retries == 1 else 'ies'})" if retries else ""
        if isinstance(err, openai.APITimeoutError):
            return SummarizeError(
                f"LLM at {where} did not answer within {self.config.timeout:g} s{after}"
            )
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__ or err.__context__
            detail = _first_line(str(cause)) if cause else ""
            if _broke_off(err):
                from digest.summarize.reply_limit import ReplyTooLong

                if isinstance(cause, ReplyTooLong):
                    return SummarizeError(f"LLM at {where} sent {cause}{after}")
                return SummarizeError(f"LLM at {where} broke off its reply{after}: {detail}")
            return SummarizeError(
                f"LLM at {where} unreachable{after}: {detail or 'connection failed'}"
            )
        if isinstance(err, openai.APIStatusError):
            status = err.status_code
            message = _first_line(_api_message(err)) or "no message"
            if status == 429:
                return SummarizeError(
                    f"LLM at {where} is rate limiting (HTTP 429){after}: {message}"
                )
            hint = ""
            if status == 401 and not self._has_key:
                hint = f" (no API key: set the environment variable {self.config.api_key_env})"
            return SummarizeError(f"LLM at {where} answered HTTP {status}{after}: {message}{hint}")
        return SummarizeError(f"LLM client error: {_first_line(str(err)) or type(err).__name__}")


def _bounded_arrays(schema: Any, limit: int) -> Any:
    """A copy of a JSON schema in which every array without a `maxItems` has `limit`."""
    if isinstance(schema, list):
        return [_bounded_arrays(item, limit) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded_arrays(value, limit) for key, value in schema.items()}
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = limit
    return out


def _broke_off(err: openai.APIConnectionError) -> bool:
    """Whether the server answered but its reply could not be read to its end (the openai
    client takes that for a connection error; openai 1 takes ReplyTooLong for one too)."""
    import httpx

    from digest.summarize.reply_limit import ReplyTooLong

    cause = err.__cause__ or err.__context__
    return isinstance(cause, httpx.RemoteProtocolError | httpx.DecodingError | ReplyTooLong)


def _api_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return err.message or ""


def _usage(reply: Any) -> tuple[int, int]:
    """The reply's (prompt, completion) tokens as the server counted them: 0 for a count that is
    missing or no count (Infinity, "many")."""
    usage = getattr(reply, "usage", None)
    if usage is None:
        return 0, 0
    prompt = window.count(getattr(usage, "prompt_tokens", 0), least=0)
    completion = window.count(getattr(usage, "completion_tokens", 0), least=0)
    return prompt or 0, completion or 0


def _wrong_shape(reply: Any) -> str | None:
    """What is wrong with a chat completion's shape, said as what the server sent, or None."""
    if isinstance(reply, str):  # the openai client's answer to a reply that is not JSON
        return f"a reply that is not JSON: {_first_line(reply, 80) or 'nothing'}"
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "a reply of the wrong shape (no list of choices)"
    message = getattr(choices[0], "message", None)
    if message is None or isinstance(message, _PLAIN) or not _text_or_none(message):
        return "a reply of the wrong shape (its first choice has no message text)"
    return None


# What JSON decodes to, where an object was expected.
_PLAIN = (str, int, float, bool, list, dict)


def _text_or_none(part: Any) -> bool:
    return isinstance(getattr(part, "content", None), str | None)


def _delta_text(chunk: Any) -> str | None:
    """The text a stream event adds ("" for none: a role, the finish, the usage), or None when
    the event is not shaped as one."""
    choices = getattr(chunk, "choices", None)
    if choices is None:
        choices = []
    if not isinstance(choices, list):
        return None
    parts = []
    for choice in choices:
        delta = getattr(choice, "delta", None)
        if delta is None:
            continue
        content = getattr(delta, "content", None)
        if isinstance(delta, str | int | float | list | dict) or not isinstance(
            content, str | None
        ):
            return None
        parts.append(content or "")
    return "".join(parts)


def _content(reply: Any) -> str:
    choices = getattr(reply, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not content and getattr(message, "refusal", None):
        return f"(refused: {message.refusal})"  # type: ignore[union-attr]
    return content if isinstance(content, str) else ""


def _parse(content: str, validate: Callable[[dict[str, Any]], T]) -> T:
    if not content.strip():
        raise InvalidOutput("the reply was empty")
    data = parse_json_object(content)
    if data is None:
        raise InvalidOutput("the reply holds no JSON object")
    try:
        return validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise InvalidOutput(f"{where}: {first['msg']}") from None


# -- summaries -----------------------------------------------------------------------------------


def _text_value(value: Any) -> Any:
    """Models sometimes give a list of bullet strings where a string was asked for."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return value


class SummaryReply(BaseModel):
    """The JSON the model must return. Only `summary` is essential: a missing title, brief or
    keywords is filled from the article rather than failing the whole summary."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    title: str = ""
    summary: str = Field(min_length=1)
    brief_summary: str = Field(
        default="", validation_alias=AliasChoices("brief_summary", "briefSummary", "brief")
    )
    keywords: list[str] = Field(default_factory=list)

    _text = field_validator("title", "summary", "brief_summary", mode="before")(_text_value)

    @field_validator("keywords", mode="before")
    @classmethod
    def _keywords(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [k for k in value.replace(";", ",").split(",")]
        if isinstance(value, list):
            return [str(v) for v in value if isinstance(v, str | int | float)]
        return value


def _cap_words(text: str, limit: int) -> str:
    if length(text) <= limit:
        return text
    out: list[str] = []
    total = 0
    for sentence in split_sentences(text):
        n = length(sentence)
        if out and total + n > limit:
            break
        out.append(sentence)
        total += n
    return " ".join(out)


def _on_topic(summary: str, article: ArticleInput) -> bool:
    """Whether the summary shares at least one key term with the article (a heuristic against
    output that an instruction planted in the page replaced wholesale)."""
    if length(article.text) < 80:
        return True
    key_terms = set()
    for phrase in extractive.frequent_terms(article.text, article.title, n=10):
        key_terms.update(content_terms(phrase))
    key_terms.update(content_terms(article.title))
    if not key_terms:
        return True
    return bool(key_terms & set(content_terms(summary)))


def written_keywords(replied: Sequence[str], sources: Sequence[str]) -> list[str]:
    """The model's keywords that the sources write (whatever the case): cleaned of links and
    markup, without repeats. A name the model made up or misspelt is no keyword to search by."""
    written = "\n".join(searchable(s) for s in sources)
    out: list[str] = []
    for k in replied:
        k = one_line(strip_links(k, ()), 60).strip(" .,;:#\"'")
        if k and k.casefold() not in {o.casefold() for o in out} and searchable(k) in written:
            out.append(k)
    return out


def build_summary(data: dict[str, Any], article: ArticleInput, model_name: str) -> Summary:
    """Validate a model's JSON into a Summary: links stripped, lengths capped, gaps filled."""
    reply = SummaryReply.model_validate(data)
    allowed = [article.url]
    summary = _cap_words(strip_links(reply.summary, allowed), MAX_SUMMARY_WORDS)
    if length(summary) < 3:
        raise InvalidOutput("the summary is empty once links and markup are removed")
    if restates_headline(summary, [article.title], [article.source]):
        raise InvalidOutput(RESTATES_HEADLINE)
    if not _on_topic(summary, article):
        raise InvalidOutput("the summary does not describe the article between the markers")
    title = one_line(strip_links(reply.title, allowed), 200) or one_line(article.title, 200)
    brief = one_line(strip_links(reply.brief_summary, allowed), 600)
    if not brief:
        brief = " ".join(split_sentences(summary)[:2])
    keywords = written_keywords(reply.keywords, [article.text, article.title])
    if not keywords:
        keywords = extractive.keywords(article.text, article.title)
    return Summary(
        title=title,
        summary=summary,
        brief_summary=brief,
        keywords=tuple(keywords[:MAX_KEYWORDS]),
        summarizer=model_name,
    )


class LLMSummarizer:
    """One article per call, wrapped as untrusted data; raises SummarizeError on any failure."""

    def __init__(
        self,
        config: LLMConfig,
        api_key: str | None,
        *,
        client: openai.AsyncOpenAI | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        self.config = config
        self.llm = llm or LLMClient(config, api_key, client=client)

    @property
    def name(self) -> str:
        return self.llm.name

    async def aclose(self) -> None:
        await self.llm.aclose()

    async def summarize(self, article: ArticleInput) -> Summary:
        if not article.text.strip():
            raise SummarizeError(f"nothing to summarize: {article.url} has no text")

        def request(max_chars: int) -> JSONRequest[Summary]:
            """The call with the article cut to `max_chars` (what the model sees, and what
            its summary is checked against)."""
            sent = replace(article, text=prompts.cut(article.text, max_chars))
            nonce = prompts.nonce_for(sent.url, sent.title, sent.source or "", sent.text)
            return JSONRequest(
                messages=prompts.summary_messages(sent, nonce),
                schema_name="article_summary",
                schema=prompts.SUMMARY_SCHEMA,
                validate=lambda data: build_summary(data, sent, self.name),
                repair_hint=(
                    "Reply with only the JSON object with the keys title, summary, brief_summary "
                    "and keywords, summarizing the article between the markers."
                ),
                max_tokens=SUMMARY_TOKENS,
                resize=request,
                chars=len(sent.text),
            )

        done = await self.llm.complete_json(request(self.config.max_input_chars))
        s = done.value
        return Summary(
            title=s.title,
            summary=s.summary,
            brief_summary=s.brief_summary,
            keywords=s.keywords,
            summarizer=s.summarizer,
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
        )

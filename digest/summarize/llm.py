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

The client composes the parts: what the server reads (`window`), a request fitted to it
(`fitting`), the request sent and read (`llm_transport`) under the time limits and the gate of
`timing`, and the reply validated (`request`), asked for once more when it is unusable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, TypeVar

from digest.config import LLMConfig
from digest.errors import SummarizeError
from digest.runtime import metrics
from digest.summarize import window
from digest.summarize.fitting import fit
from digest.summarize.llm_transport import UNSUPPORTED_STATUS, Transport, broke_off, usage
from digest.summarize.request import (
    STRUCTURED_MODES,
    Completion,
    ContextExceeded,
    InvalidOutput,
    JSONRequest,
    Mode,
    Sized,
    parse_reply,
    reply_text,
)
from digest.summarize.timing import Gate
from digest.summarize.window import ServerFacts

if TYPE_CHECKING:  # imported where they are used: a command that writes no summary starts without
    import openai

    from digest.summarize.request import Reply

log = logging.getLogger(__name__)

T = TypeVar("T")


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
        self.config = config
        self._transport = Transport(config, api_key, client, self._forget)
        self._modes = {} if negotiated is None else negotiated
        self._gate = Gate(config.concurrency)
        # Made on first use, inside the running loop.
        self._negotiating: asyncio.Lock | None = None
        self._learning: asyncio.Lock | None = None
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
        return self._transport.api

    @property
    def mode(self) -> Mode | None:
        """The structured-output mode this server accepted, once known."""
        return self._modes.get(self._key)

    async def aclose(self) -> None:
        await self._transport.aclose()

    def _forget(self) -> None:
        """The server was not there: what was learned of it is asked again."""
        self._facts = None

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
                        self._transport.http(),
                        self.config.base_url,
                        self.config.model,
                        self.config.context_tokens,
                    )
        return self._facts

    async def count(self, messages: list[dict[str, str]]) -> tuple[int, bool]:
        """The prompt's tokens, by the server's tokenizer where it has one (then True)."""
        facts = await self.facts()
        return await window.count_messages(
            self._transport.http(), facts, self.config.base_url, self.config.model, messages
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
        sized = await fit(request, facts, self.count, self.config.model)
        try:
            return await self._complete(sized, facts)
        except ContextExceeded as err:
            named = err.window if err.window and err.window < facts.window else None
            facts.lower(named or int(facts.window * 0.75), str(err))
            smaller = await fit(
                sized.request, facts, self.count, self.config.model, below=sized.tokens
            )
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
        reply = await self._call("plain", messages, Sized(request, tokens, exact))
        return reply_text(reply)

    async def _complete(self, sized: Sized[T], facts: ServerFacts) -> Completion[T]:
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

    async def _negotiate(self, sized: Sized[Any]) -> tuple[Mode, Reply]:
        import openai

        messages = sized.request.messages
        for mode in STRUCTURED_MODES:
            try:
                reply = await self._call(mode, messages, sized, retries=0, probe=True)
            except openai.APIStatusError as err:
                self._transport.raise_if_exceeded(err)
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
        sized: Sized[Any],
    ) -> Reply:
        """A probe that failed for another reason than its mode (429, timeout, refused): the probe
        was the first attempt, the client's remaining retries follow."""
        import openai

        retries = self.config.max_retries
        fatal = isinstance(err, openai.APIStatusError) and err.status_code in (401, 403, 404)
        if retries == 0 or fatal:
            raise self._transport.error(err, retries=0) from None
        try:
            return await self._call(
                mode, sized.request.messages, sized, retries=retries - 1, probe=True
            )
        except (openai.APIStatusError, openai.APIConnectionError) as again:
            self._transport.raise_if_exceeded(again)
            raise self._transport.error(again) from None

    def _remember(self, mode: Mode) -> None:
        if self._modes.get(self._key) != mode:
            log.info("%s at %s: structured output via %s", *self._key[::-1], mode)
        self._modes[self._key] = mode

    async def _call(
        self,
        mode: Mode,
        messages: list[dict[str, str]],
        sized: Sized[Any],
        *,
        retries: int | None = None,
        probe: bool = False,
    ) -> Reply:
        """One chat completion (the client retries `retries` times, default the configured
        number). A probe raises the client's own errors; any other call raises SummarizeError
        (ContextExceeded when the server could not read it all)."""
        import httpx
        import openai

        request = sized.request
        facts = await self.facts()
        tokens = sized.tokens
        if messages is not request.messages:  # a repair: the reply and a word more
            tokens += window.estimate_tokens(messages[-2]["content"] + messages[-1]["content"])
        speeds = facts.speeds
        first_token = speeds.first_token_allowance(tokens, self.config.first_token_timeout)
        total = first_token + speeds.writing_allowance(request.reply_tokens, self.config.timeout)
        transport = self._transport
        async with self._gate.sending():  # waiting is not timed: the limits start when it is sent
            started = time.monotonic()
            try:
                reply = await transport.send(
                    mode,
                    messages,
                    request,
                    facts,
                    retries=retries,
                    prompt_tokens=tokens,
                    first_token=first_token,
                    total=total,
                )
            except (openai.APIStatusError, openai.APIConnectionError) as err:
                if isinstance(err, openai.APIConnectionError) and not broke_off(err):
                    self._facts = None  # learned from a server that was not there: ask again
                refused = probe and getattr(err, "status_code", None) in UNSUPPORTED_STATUS
                outcome = "unsupported" if refused else "error"
                metrics.llm_called(outcome, time.monotonic() - started)
                if probe:
                    raise
                transport.raise_if_exceeded(err)
                raise transport.error(err, retries=retries) from None
            except openai.OpenAIError as err:
                metrics.llm_called("error", time.monotonic() - started)
                raise transport.error(err, retries=retries) from None
            except SummarizeError:
                metrics.llm_called("error", time.monotonic() - started)
                raise
            except (ValueError, httpx.HTTPError) as err:  # ValueError: JSONDecodeError
                # What the client could not read (openai's own parsing raises these as they are).
                metrics.llm_called("error", time.monotonic() - started)
                raise transport.unreadable(err) from None
            metrics.llm_called("ok", time.monotonic() - started, *usage(reply))
            transport.check_read_whole(reply, messages, sized, facts)
            return reply

    async def _validated(self, reply: Reply, mode: Mode, sized: Sized[T]) -> Completion[T]:
        request = sized.request
        prompt_tokens, completion_tokens = usage(reply)
        if not prompt_tokens:
            prompt_tokens = sized.tokens
        content = reply_text(reply)
        try:
            value = parse_reply(content, request.validate)
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
            more_prompt, more_completion = usage(reply)
            prompt_tokens += more_prompt or sized.tokens + extra
            completion_tokens += more_completion
            try:
                value = parse_reply(reply_text(reply), request.validate)
            except InvalidOutput as second:
                raise SummarizeError(
                    f"{self.name} output stayed invalid after a second request: {second}",
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                ) from None
        return Completion(value, mode, prompt_tokens, completion_tokens)

"""One request to an OpenAI-compatible server, sent and read: whole, streamed, or through
Ollama's native API; and what went wrong, said in one line.

Replies are streamed (`[llm] stream`), and put together under the time limits of `timing`. The
HTTP client reads no reply past the cap of what was asked (`reply_limit`). A reply is checked for
its shape before anything reads it, and a server that says it read fewer tokens than the prompt
has cut it (`ContextExceeded`): a summary of part of a prompt is not used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from digest.config import LLMConfig
from digest.errors import SummarizeError
from digest.summarize import timing, window
from digest.summarize.request import (
    ContextExceeded,
    JSONRequest,
    Mode,
    Sized,
    Streamed,
    Usage,
    first_line,
    response_format,
)
from digest.summarize.window import ServerFacts

if TYPE_CHECKING:  # imported where they are used: a command that writes no summary starts without
    import httpx
    import openai
    from openai.types.chat import ChatCompletion

    from digest.summarize.request import Reply

# Status codes with which servers refuse a response_format they do not support (llama.cpp: 500,
# vLLM and others: 400 or 422).
UNSUPPORTED_STATUS = frozenset({400, 422, 500, 501})


class Transport:
    """One endpoint's clients: the OpenAI client for chat, an HTTP client for the rest (the
    server's window, its tokenizer, Ollama). `unreachable` is called when the server was not
    there, so that what was learned of it is asked again."""

    def __init__(
        self,
        config: LLMConfig,
        api_key: str | None,
        client: openai.AsyncOpenAI | None,
        unreachable: Callable[[], None],
    ) -> None:
        import httpx
        import openai

        from digest.summarize import reply_limit

        self.config = config
        self._api_key = api_key
        self._unreachable = unreachable
        # Local servers need no key, but the client insists on one (and would otherwise read
        # OPENAI_API_KEY from the environment itself). Its HTTP client reads no reply past the
        # cap of what was asked (`reply_limit`), and follows redirects as its own would.
        self.api = client or openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=api_key or "no-key",
            timeout=config.timeout,
            max_retries=config.max_retries,
            # openai 3 is typed for httpx2's client and takes httpx's as well (as openai 1 did)
            http_client=httpx.AsyncClient(  # type: ignore[arg-type]
                event_hooks=reply_limit.EVENT_HOOKS, follow_redirects=True
            ),
        )
        self._http: httpx.AsyncClient | None = None

    async def aclose(self) -> None:
        await self.api.close()
        if self._http is not None:
            await self._http.aclose()

    def http(self) -> httpx.AsyncClient:
        """For what the OpenAI API has no call for: the server's window, its tokenizer, Ollama."""
        import httpx

        from digest.summarize import reply_limit

        if self._http is None:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._http = httpx.AsyncClient(
                headers=headers, timeout=window.PROBE_TIMEOUT, event_hooks=reply_limit.EVENT_HOOKS
            )
        return self._http

    async def send(
        self,
        mode: Mode,
        messages: list[dict[str, str]],
        request: JSONRequest[Any],
        facts: ServerFacts,
        *,
        retries: int | None,
        prompt_tokens: int,
        first_token: float,
        total: float,
    ) -> Reply:
        """One chat completion, read whole or streamed as configured (the client retries
        `retries` times, default the configured number); raises the client's own errors."""
        from digest.summarize import reply_limit

        kwargs: dict[str, Any] = {}
        if asked := response_format(mode, request):
            kwargs["response_format"] = asked
        client = self.api
        if retries is not None and retries != self.config.max_retries:
            client = client.with_options(max_retries=retries)
        kwargs["max_tokens"] = request.reply_tokens
        with reply_limit.replying(request.reply_tokens):
            if facts.kind == "ollama":
                return await self._ollama(
                    messages, request, facts, prompt_tokens, first_token, total
                )
            if self.config.stream:
                return await self._streamed(
                    client, messages, kwargs, facts, prompt_tokens, first_token, total
                )
            return await self._unstreamed(client, messages, kwargs, facts, total)

    async def _unstreamed(
        self,
        client: openai.AsyncOpenAI,
        messages: list[dict[str, str]],
        kwargs: dict[str, Any],
        facts: ServerFacts,
        total: float,
    ) -> ChatCompletion:
        """One chat completion read whole; SummarizeError when it is not one (another shape,
        or not JSON, which the openai client hands back as text)."""
        import time

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
        facts.speeds.record(*usage(reply), took, took * 2)
        return reply

    async def _streamed(
        self,
        client: openai.AsyncOpenAI,
        messages: list[dict[str, str]],
        kwargs: dict[str, Any],
        facts: ServerFacts,
        prompt_tokens: int,
        first_token: float,
        total: float,
    ) -> Streamed:
        """One streamed completion through the OpenAI API."""
        config = self.config

        async def pieces() -> timing.Pieces:
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
                    said = None
                    if getattr(chunk, "usage", None) is not None:
                        said = Usage(*usage(chunk))
                    yield text, said

        return await timing.timed(pieces(), facts.speeds, config, prompt_tokens, first_token, total)

    async def _ollama(
        self,
        messages: list[dict[str, str]],
        request: JSONRequest[Any],
        facts: ServerFacts,
        prompt_tokens: int,
        first_token: float,
        total: float,
    ) -> Streamed:
        """One streamed completion through Ollama's native API, asking for the window the
        request was fitted to (its OpenAI-compatible endpoint cannot, and cuts the prompt)."""
        import httpx

        from digest.summarize import ollama

        config = self.config

        async def pieces() -> timing.Pieces:
            try:
                async for chunk in ollama.chat_stream(
                    self.http(),
                    window.root_of(config.base_url),
                    config.model,
                    messages,
                    format=request.schema or None,  # {}: free text (`ask`)
                    num_ctx=facts.ollama_num_ctx or facts.window,
                    num_predict=request.reply_tokens,
                    temperature=config.temperature,
                    timeout=total,
                ):
                    said = None
                    if chunk.done:
                        said = Usage(chunk.prompt_tokens, chunk.completion_tokens)
                    yield chunk.content, said
            except ollama.OllamaError as err:
                exceeded, named = window.context_exceeded(err.message)
                where = f"LLM at {config.base_url}"
                if exceeded:
                    raise ContextExceeded(f"answered: {err.message}", named) from None
                raise SummarizeError(f"{where} answered HTTP {err.status}: {err.message}") from None
            except httpx.TransportError as err:
                self._unreachable()
                detail = first_line(str(err)) or type(err).__name__
                raise SummarizeError(f"LLM at {config.base_url} unreachable: {detail}") from None
            except httpx.HTTPError as err:  # a reply that could not be read
                raise self.unreadable(err) from None

        return await timing.timed(pieces(), facts.speeds, config, prompt_tokens, first_token, total)

    def check_read_whole(
        self, reply: Reply, messages: list[dict[str, str]], sized: Sized[Any], facts: ServerFacts
    ) -> None:
        """ContextExceeded when the server says it read fewer tokens than the prompt has: it
        cut the prompt (Ollama's OpenAI-compatible endpoint does, from the front, silently).
        Not for Ollama's native API: it is asked for the window, and counts only the tokens it
        did not have cached from the request before."""
        if getattr(reply, "reported", True) is False or messages is not sized.request.messages:
            return
        if facts.kind == "ollama":
            return
        reported = usage(reply)[0]
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
                completion_tokens=usage(reply)[1],
            )

    def raise_if_exceeded(self, err: openai.APIStatusError | openai.APIConnectionError) -> None:
        """ContextExceeded when the error says the request did not fit the context."""
        import openai

        if not isinstance(err, openai.APIStatusError):
            return
        message = _api_message(err)
        body = err.body.get("error", err.body) if isinstance(err.body, dict) else None
        exceeded, named = window.context_exceeded(message, body)
        if exceeded:
            raise ContextExceeded(
                f"answered HTTP {err.status_code}: {first_line(message) or 'context exceeded'}",
                named,
            ) from None

    def unreadable(self, err: ValueError | httpx.HTTPError) -> SummarizeError:
        """The one line for a reply that could not be read: not JSON, cut short, broken off."""
        import httpx

        from digest.summarize.reply_limit import ReplyTooLong

        where = f"LLM at {self.config.base_url}"
        if isinstance(err, ReplyTooLong):
            return SummarizeError(f"{where} sent {err}")
        if isinstance(err, httpx.HTTPError):
            detail = first_line(str(err)) or type(err).__name__
            return SummarizeError(f"{where} broke off its reply: {detail}")
        return SummarizeError(
            f"{where} sent a reply that could not be read, not JSON or cut short: "
            f"{first_line(str(err), 120)}"
        )

    def error(self, err: openai.OpenAIError, *, retries: int | None = None) -> SummarizeError:
        """The one line for what the openai client raised, after `retries` retries (default
        the configured number)."""
        import openai

        where = self.config.base_url
        retries = self.config.max_retries if retries is None else retries
        after = f" (after {retries} retr{'y' if retries == 1 else 'ies'})" if retries else ""
        if isinstance(err, openai.APITimeoutError):
            return SummarizeError(
                f"LLM at {where} did not answer within {self.config.timeout:g} s{after}"
            )
        if isinstance(err, openai.APIConnectionError):
            return _connection_error(err, where, after)
        if isinstance(err, openai.APIStatusError):
            status = err.status_code
            message = first_line(_api_message(err)) or "no message"
            if status == 429:
                return SummarizeError(
                    f"LLM at {where} is rate limiting (HTTP 429){after}: {message}"
                )
            hint = ""
            if status == 401 and not self._api_key:
                hint = f" (no API key: set the environment variable {self.config.api_key_env})"
            return SummarizeError(f"LLM at {where} answered HTTP {status}{after}: {message}{hint}")
        return SummarizeError(f"LLM client error: {first_line(str(err)) or type(err).__name__}")


def _connection_error(err: openai.APIConnectionError, where: str, after: str) -> SummarizeError:
    cause = err.__cause__ or err.__context__
    detail = first_line(str(cause)) if cause else ""
    if broke_off(err):
        from digest.summarize.reply_limit import ReplyTooLong

        if isinstance(cause, ReplyTooLong):
            return SummarizeError(f"LLM at {where} sent {cause}{after}")
        return SummarizeError(f"LLM at {where} broke off its reply{after}: {detail}")
    return SummarizeError(f"LLM at {where} unreachable{after}: {detail or 'connection failed'}")


def broke_off(err: openai.APIConnectionError) -> bool:
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


def usage(reply: object) -> tuple[int, int]:
    """The reply's (prompt, completion) tokens as the server counted them: 0 for a count that is
    missing or no count (Infinity, "many")."""
    said = getattr(reply, "usage", None)
    if said is None:
        return 0, 0
    prompt = window.count(getattr(said, "prompt_tokens", 0), least=0)
    completion = window.count(getattr(said, "completion_tokens", 0), least=0)
    return prompt or 0, completion or 0


def _wrong_shape(reply: object) -> str | None:
    """What is wrong with a chat completion's shape, said as what the server sent, or None."""
    if isinstance(reply, str):  # the openai client's answer to a reply that is not JSON
        return f"a reply that is not JSON: {first_line(reply, 80) or 'nothing'}"
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "a reply of the wrong shape (no list of choices)"
    message = getattr(choices[0], "message", None)
    if message is None or isinstance(message, _PLAIN) or not _text_or_none(message):
        return "a reply of the wrong shape (its first choice has no message text)"
    return None


# What JSON decodes to, where an object was expected.
_PLAIN = (str, int, float, bool, list, dict)


def _text_or_none(part: object) -> bool:
    return isinstance(getattr(part, "content", None), str | None)


def _delta_text(chunk: object) -> str | None:
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

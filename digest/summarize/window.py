"""What an LLM server can read: its context window, its tokenizer, and how fast it reads and writes.

A request longer than the server's window is refused (llama.cpp, vLLM: HTTP 400), ends in an
empty stream (llama-cpp-python 0.3.36 when streaming) or, worst, is cut from the front without a
word (Ollama's OpenAI-compatible endpoint keeps 2,048 or 4,096 tokens whatever the model could
take): a summary written from a cut prompt is worse than none. So the window is learned before
the first request, from where each server says it:

- llama.cpp's server: `GET /props`, `default_generation_settings.n_ctx`;
- Ollama: `POST /api/show`, the model's own `*.context_length` (and `num_ctx` when its Modelfile
  sets one); requests then go through its native API, which asks for that window (`ollama.py`);
- vLLM (`max_model_len`), OpenRouter and others (`context_length`, `context_window`,
  `max_context_length`) in `/v1/models`; LM Studio in `/api/v0/models`;
- llama-cpp-python's server names its window only when it refuses a prompt longer than it:
  one such prompt (65,536 words, refused once tokenized) is sent to learn it;
- else `[llm] context_tokens`, else an assumed `DEFAULT_WINDOW` (old Ollama keeps 2,048 by
  default, and does not say).

What a server says is untrusted like what it writes: a window or a count is a whole number in
a sane range (`count`), and anything else (Infinity, NaN, 1e309 read as infinity, 0, -1, 0.5,
"4096") is taken as saying nothing. A server that names a window it cannot have is told so in
the window's source, and `DEFAULT_WINDOW` is assumed.

Tokens are counted by the server's tokenizer where it has one (llama-cpp-python's
`/extras/tokenize/count`, llama.cpp's and vLLM's `/tokenize`), else estimated on the safe side
(`estimate_tokens`). The server's reading and writing speeds, measured from each reply, are kept
with what it is (`timing.Speeds`).
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from digest.summarize.timing import Speeds

if TYPE_CHECKING:  # imported when a server is asked: a command that asks none starts without it
    import httpx

log = logging.getLogger(__name__)

# What a server that does not say is assumed to read: llama-cpp-python's server and Ollama before
# 0.6 keep 2,048 tokens unless told otherwise.
DEFAULT_WINDOW = 2048
# A window outside these bounds is none: fewer tokens than `[llm] context_tokens` allows leave no
# room for the instructions and a reply, and no model reads more than 10 million (Llama 4 Scout,
# the longest in 2025).
MIN_WINDOW = 256
MAX_WINDOW = 1 << 24
# The most tokens a server could count or spend on one request: anything more is nonsense.
MAX_COUNT = 1 << 31
# The window asked of Ollama (up to the model's own limit): enough for the longest request
# (`[llm] max_input_chars` of sources, the instructions and the reply), and constant, because
# Ollama reloads a model whose num_ctx changes.
OLLAMA_WINDOW = 8192
# Hosted APIs whose models list says nothing of the window; all their current chat models read
# at least this much.
KNOWN_HOSTS = {"api.openai.com": 128_000}
# Tokens a chat template adds around each message (role markers), and a margin on top.
PER_MESSAGE = 8
MARGIN = 32
# Kept free in a fitted request for asking once more after an unusable reply (the reply's
# start shown back, and a sentence).
REPAIR_ROOM = 160
PROBE_TIMEOUT = 5.0
# Words of the prompt that makes llama-cpp-python's server name its window (`_refused_window`):
# more tokens than any window it is likely started with, tokenized in a fraction of a second.
WINDOW_PROBE_WORDS = 65_536
# Facts are learned again after this long: a server may be restarted with another window.
FACTS_TTL = 900.0


def estimate_tokens(text: str) -> int:
    """An estimate that errs on the safe side for common tokenizers, small ones too (measured
    with SmolLM2-135M's, a 49k vocabulary: tokens a character were English 0.23, German 0.38,
    Russian 0.69, Arabic 0.97, Hebrew 1.06, Hindi 1.10, Thai 1.85, Japanese 1.84, Chinese 1.91,
    Korean 2.12): a digit is a token (several tokenizers split numbers into digits), other ASCII
    2.9 characters a token, a character of two bytes in UTF-8 (accented Latin, Greek, Cyrillic,
    Arabic, Hebrew) 1.3 tokens, a Hangul syllable 3 (one a byte), another character of three
    bytes (Han, kana, Thai, Devanagari) 2.2 and one of four (emoji) 4. Where the server counts,
    its count is used instead (`count_messages`)."""
    total = 0.0
    for ch in text:
        if ch.isascii():
            total += 1.0 if ch.isdigit() else 0.35
        elif ch <= "\u07ff":
            total += 1.3
        elif "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f":
            total += 3.0
        else:
            total += 2.2 if ch <= "\uffff" else 4.0
    return math.ceil(total)


def cut_to_tokens(text: str, tokens: int) -> str:
    """The start of `text` that `estimate_tokens` puts at `tokens` or fewer."""
    while text and (n := estimate_tokens(text)) > tokens:
        text = text[: max(0, len(text) * tokens // n - 1)]
    return text


def least_tokens(text: str) -> int:
    """A lower bound on the tokens of `text` for common tokenizers (about seven bytes a token at
    most, in long words of Latin script): a server that reports fewer read only part of it."""
    return len(text.encode("utf-8", "surrogatepass")) // 7


def root_of(base_url: str) -> str:
    """The server's root: the base URL without its trailing /v1."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


@dataclass
class ServerFacts:
    """One (server, model): what it is, the window it reads and where that came from."""

    kind: str  # "llama.cpp", "llama-cpp-python", "ollama", "vllm", "lm-studio", "openai-compatible"
    window: int
    window_source: str
    tokenizer: str | None = None  # "llama-cpp-python", "llama.cpp", "vllm"
    ollama_num_ctx: int | None = None  # the window asked of Ollama per request
    speeds: Speeds = field(default_factory=Speeds)
    learned_at: float = field(default_factory=time.monotonic)

    def lower(self, window: int, why: str) -> None:
        """The server refused or cut a request: it reads less than was thought."""
        if window < self.window:
            log.warning(
                "LLM context window lowered from %d to %d tokens: %s", self.window, window, why
            )
            self.window = window
            self.window_source = f"lowered after the server {why}"
            if self.ollama_num_ctx is not None:
                self.ollama_num_ctx = min(self.ollama_num_ctx, window)

    @property
    def stale(self) -> bool:
        return time.monotonic() - self.learned_at > FACTS_TTL


async def discover(
    http: httpx.AsyncClient, base_url: str, model: str, context_tokens: int | None
) -> ServerFacts:
    """Ask the server what it is and how much it reads (each probe is quick and may fail: a
    server that answers none of them is an OpenAI-compatible one that does not say)."""
    root = root_of(base_url)
    facts = await _llama_cpp(http, root)
    if facts is None:
        facts = await _ollama(http, root, model)
    if facts is None:
        facts = await _listed(http, base_url, root, model)
    unnamed = facts.tokenizer is None and facts.kind == "openai-compatible"
    if unnamed and await _counts(http, root, "llama-cpp-python", model) is not None:
        facts.kind, facts.tokenizer = "llama-cpp-python", "llama-cpp-python"
        if facts.window_source.startswith("assumed") and context_tokens is None:
            learned = await _refused_window(http, base_url, model)
            if learned is not None:
                facts.window, facts.window_source = learned
    assumed = facts.window_source.startswith("assumed")
    if context_tokens is not None and (assumed or context_tokens < facts.window):
        # The operator's figure stands where the server says nothing, and may only lower what
        # it says (a server reads no more than it reads).
        said = "" if assumed else f"; the server says {facts.window}"
        facts.window = context_tokens
        facts.window_source = f"[llm] context_tokens{said}"
    if facts.ollama_num_ctx is not None:
        facts.ollama_num_ctx = min(facts.ollama_num_ctx, facts.window)
    log.info(
        "%s at %s (%s): context window %d tokens (%s), tokens counted %s",
        model,
        base_url,
        facts.kind,
        facts.window,
        facts.window_source,
        f"by its {facts.tokenizer} tokenizer" if facts.tokenizer else "by estimate",
    )
    return facts


async def _get_json(http: httpx.AsyncClient, url: str, **kwargs: Any) -> object:
    """The JSON a GET (or, with `json=`, a POST) answers with 200, else None."""
    import httpx

    try:
        if "json" in kwargs:
            response = await http.post(url, timeout=PROBE_TIMEOUT, **kwargs)
        else:
            response = await http.get(url, timeout=PROBE_TIMEOUT, **kwargs)
        if response.status_code != 200:
            return None
        return response.json()
    except (httpx.HTTPError, ValueError):
        return None


def count(value: Any, least: int = 1, most: int = MAX_COUNT) -> int | None:
    """A whole number from a server's JSON (4096, or 4096.0) from `least` to `most`, else None:
    never an error, whatever the value (Infinity, NaN, a string, a list)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            return None
        value = int(value)
    if isinstance(value, int) and least <= value <= most:
        return value
    return None


def window_size(value: Any) -> int | None:
    """A context window as a server tells it, if it is one (`MIN_WINDOW` to `MAX_WINDOW`)."""
    return count(value, MIN_WINDOW, MAX_WINDOW)


def shown(value: Any) -> str:
    """A value a server sent, as it sent it, in a few characters (for saying what was wrong)."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        text = json.dumps(value)  # Infinity, NaN, as JSON writes them
    elif isinstance(value, str):
        text = json.dumps(value[:40])
    else:
        text = {dict: "an object", list: "a list", type(None): "null"}.get(type(value), "?")
    return text if len(text) <= 40 else text[:39] + "…"


def untrusted(said: str) -> str:
    """The source of the window assumed when the server `said` one it cannot have."""
    return f"assumed: {said}, which is no context window; set [llm] context_tokens"


async def _llama_cpp(http: httpx.AsyncClient, root: str) -> ServerFacts | None:
    props = await _get_json(http, f"{root}/props")
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    said = settings.get("n_ctx") if isinstance(settings, dict) else None
    if said is None:
        said = props.get("n_ctx")
    if said is None:
        return None
    # llama.cpp's server splits its context among its slots (`--parallel`).
    n_ctx = count(said, MIN_WINDOW, MAX_COUNT)
    slots = count(props.get("total_slots")) or 1
    window = window_size(n_ctx // slots) if n_ctx is not None else None
    if n_ctx is None or window is None:
        told = shown(said) if n_ctx is None or slots == 1 else f"{n_ctx} over {slots} slots"
        source = untrusted(f"llama.cpp /props says n_ctx {told}")
        return ServerFacts("llama.cpp", DEFAULT_WINDOW, source, tokenizer="llama.cpp")
    source = "llama.cpp /props" + (f" ({n_ctx} over {slots} slots)" if slots > 1 else "")
    return ServerFacts("llama.cpp", window, source, tokenizer="llama.cpp")


async def _ollama(http: httpx.AsyncClient, root: str, model: str) -> ServerFacts | None:
    import httpx

    from digest.summarize import ollama

    try:
        version = await ollama.version(http, root, PROBE_TIMEOUT)
    except httpx.HTTPError:
        return None
    if version is None:
        return None
    try:
        shown = await ollama.show(http, root, model, PROBE_TIMEOUT)
    except (ollama.OllamaError, httpx.HTTPError) as err:
        log.info("Ollama %s at %s: /api/show failed (%s)", version, root, err)
        return ServerFacts("ollama", DEFAULT_WINDOW, "assumed: Ollama's /api/show failed")
    limit = shown.context_length
    if limit is not None and window_size(limit) is None:
        log.info("Ollama at %s: the model's context_length %d is no window; ignored", root, limit)
        limit = None
    window = min(limit, OLLAMA_WINDOW) if limit else OLLAMA_WINDOW
    source = f"Ollama /api/show: the model reads {limit}" if limit else "Ollama, asked for"
    if limit and limit > OLLAMA_WINDOW:
        source += f", asked for {OLLAMA_WINDOW}"
    return ServerFacts("ollama", window, source, ollama_num_ctx=window)


_WINDOW_KEYS = (
    ("max_model_len", "vllm"),
    ("loaded_context_length", "lm-studio"),
    ("context_length", "openai-compatible"),
    ("context_window", "openai-compatible"),
    ("max_context_length", "openai-compatible"),
)


async def _listed(http: httpx.AsyncClient, base_url: str, root: str, model: str) -> ServerFacts:
    """From the models list (vLLM, OpenRouter, Groq, ...) or LM Studio's own; else assumed."""
    for url in (f"{base_url.rstrip('/')}/models", f"{root}/api/v0/models"):
        listed = await _get_json(http, url)
        entries = listed.get("data") if isinstance(listed, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or entry.get("id") != model:
                continue
            for key, kind in _WINDOW_KEYS:
                if entry.get(key) is None:
                    continue
                if url.endswith("/api/v0/models"):
                    kind = "lm-studio"
                tokenizer = "vllm" if kind == "vllm" else None
                where = f"{key} in {urlsplit(url).path}"
                if (window := window_size(entry[key])) is None:
                    source = untrusted(f"{where} says {shown(entry[key])}")
                    return ServerFacts(kind, DEFAULT_WINDOW, source, tokenizer=tokenizer)
                return ServerFacts(kind, window, where, tokenizer=tokenizer)
    host = (urlsplit(base_url).hostname or "").lower()
    if host in KNOWN_HOSTS:
        return ServerFacts("openai-compatible", KNOWN_HOSTS[host], f"known for {host}")
    return ServerFacts(
        "openai-compatible",
        DEFAULT_WINDOW,
        f"assumed: the server does not say (set [llm] context_tokens), {DEFAULT_WINDOW}",
    )


# Servers (base URL, model) that read the window probe rather than refuse it, or took longer
# than `PROBE_TIMEOUT` over it: a window that large costs a long read, so it is not asked again.
_READS_LONG: dict[tuple[str, str], tuple[int, str] | None] = {}


async def _refused_window(
    http: httpx.AsyncClient, base_url: str, model: str
) -> tuple[int, str] | None:
    """llama-cpp-python's window, which its server names only in refusing a longer prompt
    ("Requested tokens (N) exceed context window of 4096", sent as "maximum context length is
    4096 tokens"): one prompt of `WINDOW_PROBE_WORDS` words, refused as soon as it is tokenized
    (0.6 s for SmolLM2 on two busy cores). A server started with a larger window reads it (once:
    see `_READS_LONG`) and reads at least what it read; None when it says neither. Not asked
    where `[llm] context_tokens` is set: the operator's figure stands."""
    import httpx

    if (base_url, model) in _READS_LONG:
        return _READS_LONG[(base_url, model)]
    body = {
        "model": model,
        "messages": [{"role": "user", "content": " x" * WINDOW_PROBE_WORDS}],
        "max_tokens": 1,
        "stream": False,
    }
    try:
        response = await http.post(
            f"{base_url.rstrip('/')}/chat/completions", json=body, timeout=PROBE_TIMEOUT
        )
        data = response.json()
    except httpx.TimeoutException:
        _READS_LONG[(base_url, model)] = None  # reading it, most likely: not asked twice
        return None
    except (httpx.HTTPError, ValueError):
        return None
    if response.status_code == 200:
        usage = data.get("usage") if isinstance(data, dict) else None
        read = window_size(usage.get("prompt_tokens")) if isinstance(usage, dict) else None
        said = (read, f"at least {read}: it read a prompt that long") if read else None
        _READS_LONG[(base_url, model)] = said
        return said
    inner = data.get("error", data) if isinstance(data, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else inner
    exceeded, named = context_exceeded(message if isinstance(message, str) else "", inner)
    if exceeded and named is not None:
        return named, "named by its refusal of a longer prompt"
    return None


async def _counts(http: httpx.AsyncClient, root: str, tokenizer: str, model: str) -> int | None:
    """How many tokens the server's tokenizer makes of a probe text, or None."""
    return await _count(http, root, tokenizer, model, "How many tokens is this?")


async def _count(
    http: httpx.AsyncClient, root: str, tokenizer: str, model: str, text: str
) -> int | None:
    if tokenizer == "llama-cpp-python":
        data = await _get_json(
            http, f"{root}/extras/tokenize/count", json={"input": text, "model": model}
        )
        return count(data.get("count")) if isinstance(data, dict) else None
    if tokenizer == "llama.cpp":
        data = await _get_json(http, f"{root}/tokenize", json={"content": text})
        tokens = data.get("tokens") if isinstance(data, dict) else None
        return len(tokens) if isinstance(tokens, list) and tokens else None
    if tokenizer == "vllm":
        data = await _get_json(http, f"{root}/tokenize", json={"model": model, "prompt": text})
        return count(data.get("count")) if isinstance(data, dict) else None
    return None


async def count_messages(
    http: httpx.AsyncClient,
    facts: ServerFacts,
    base_url: str,
    model: str,
    messages: list[dict[str, str]],
) -> tuple[int, bool]:
    """Tokens the messages take, with the chat template's share: (count, by the server's own
    tokenizer). A tokenizer that fails is not asked again; the estimate stands in."""
    text = "\n".join(m.get("content", "") for m in messages)
    overhead = PER_MESSAGE * len(messages)
    if facts.tokenizer is not None:
        counted = await _count(http, root_of(base_url), facts.tokenizer, model, text)
        if counted is not None:
            return counted + overhead, True
        log.info("%s's tokenizer did not answer; estimating tokens instead", facts.kind)
        facts.tokenizer = None
    return estimate_tokens(text) + overhead, False


# -- a server saying the context was exceeded ---------------------------------------------------

_EXCEEDED = re.compile(
    r"context (?:length|window|size)|maximum context|n_ctx|too many tokens|prompt is too long"
    r"|input (?:is )?too long|exceeds? (?:the )?(?:available )?context|reduce the length",
    re.IGNORECASE,
)
_WINDOW_SAID = (
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"context window of (\d+)", re.IGNORECASE),
    re.compile(r"n_ctx[\"'=: ]+(\d+)", re.IGNORECASE),
    re.compile(r"context (?:length|size|window)(?: of| is|:)? (\d+)", re.IGNORECASE),
    re.compile(r"limit=(\d+)", re.IGNORECASE),
)


def context_exceeded(message: str, body: Any = None) -> tuple[bool, int | None]:
    """Whether an error says the request did not fit the context, and the window it names."""
    if not _EXCEEDED.search(message or "") and not (
        isinstance(body, dict) and body.get("type") == "exceed_context_size_error"
    ):
        return False, None
    if isinstance(body, dict) and (n := window_size(body.get("n_ctx"))) is not None:
        return True, n
    for pattern in _WINDOW_SAID:
        if found := pattern.search(message or ""):
            digits = found.group(1)  # a thousand digits would be no window, and slow to read
            return True, window_size(int(digits)) if len(digits) <= 9 else None
    return True, None

"""`digest llm check`: what the configured server is, how much it reads and how fast, before a
run finds out the hard way.

One short request (a ~300-token text, a reply of a few JSON tokens) negotiates the output
mode and measures the server's reading and writing speeds; the context window comes from where
the server says it (`window.discover`). From those, the time a story's summary will take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from digest.errors import SummarizeError
from digest.summarize import timing, window
from digest.summarize.llm import LLMClient
from digest.summarize.request import JSONRequest
from digest.summarize.story import MAX_OUTPUT_TOKENS as STORY_REPLY_TOKENS

# A story's instructions take about this many tokens, without its sources.
INSTRUCTIONS = 600
# A story's reply is about this long (a 100-200-word summary, a brief, keywords, in JSON).
STORY_REPLY_TYPICAL = 450
PROBE_TEXT = (
    "The city council voted on Tuesday to extend the tram line by four kilometres to the new "
    "hospital, at a cost of 180 million euros, with work to start next spring. Supporters said "
    "the line would take 9,000 cars off the road every day; opponents warned that the budget "
    "had doubled since the plan was first presented in 2021 and that shops along the route "
    "would lose trade during two years of construction. The regional government will pay 60 "
    "percent of the cost, and the council expects a decision on the remaining funds from the "
    "national transport fund before the end of the year. "
) * 3


class CheckFailed(SummarizeError):
    """The server cannot be used as configured (unreachable, the model is not there)."""


PROBE_TOPICS = ("transport", "health", "sport", "science")


class _Probe(BaseModel):
    model_config = ConfigDict(extra="ignore")
    topic: str = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class ServerCheck:
    base_url: str
    model: str
    kind: str
    window: int
    window_source: str
    tokenizer: str | None
    mode: str
    prompt_speed: float | None  # tokens read per second
    write_speed: float | None  # tokens written per second
    story_prompt_tokens: int  # a story's request at most, fitted to the window (0: none fits)
    story_seconds: float | None  # estimated time of one story's summary (None: none fits)
    reply_error: str | None = None  # what was wrong with the probe's reply, if anything

    @property
    def constrained(self) -> bool:
        """Whether the server holds the reply to the JSON schema (else it is parsed loosely)."""
        return self.mode in ("json_schema", "json_object_schema")

    def to_json(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "server": self.kind,
            "context_window": self.window,
            "context_window_source": self.window_source,
            "tokenizer": self.tokenizer,
            "output_mode": self.mode,
            "json_constrained": self.constrained,
            "prompt_tokens_per_second": _round(self.prompt_speed),
            "write_tokens_per_second": _round(self.write_speed),
            "story_prompt_tokens": self.story_prompt_tokens,
            "story_summary_seconds": _round(self.story_seconds),
            "reply_error": self.reply_error,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


async def check(llm: LLMClient) -> ServerCheck:
    """Probe the server behind `llm`; CheckFailed when it cannot be reached or lacks the model,
    SummarizeError when its one request fails."""
    config = llm.config
    await _model_is_there(llm)
    facts = await llm.facts()
    # A reply bounded by its schema (a choice and a number), so that a small model cannot
    # ramble until max_tokens: what is measured is the server, not the model's style.
    request = JSONRequest(
        messages=[
            {
                "role": "system",
                "content": 'Reply with one JSON object with the keys "topic" (one of: '
                + ", ".join(PROBE_TOPICS)
                + ') and "kilometres" (the length of the extension, a number).',
            },
            {"role": "user", "content": PROBE_TEXT},
        ],
        schema_name="probe",
        schema={
            "type": "object",
            "properties": {
                "topic": {"type": "string", "enum": list(PROBE_TOPICS)},
                "kilometres": {"type": "number"},
            },
            "required": ["topic", "kilometres"],
            "additionalProperties": False,
        },
        validate=lambda data: _Probe.model_validate(data).topic,
        repair_hint='Reply with only {"topic": "...", "kilometres": ...}.',
        max_tokens=64,
    )
    reply_error = None
    try:
        await llm.complete_json(request)
    except SummarizeError as err:  # the speeds were measured all the same
        reply_error = str(err)
    story_prompt, seconds = story_estimate(facts, config.max_input_chars)
    prompt_speed, write_speed = facts.speeds.prompt_speed, facts.speeds.write_speed
    return ServerCheck(
        base_url=config.base_url,
        model=config.model,
        kind=facts.kind,
        window=facts.window,
        window_source=facts.window_source,
        tokenizer=facts.tokenizer,
        mode=llm.mode or "unknown",
        reply_error=reply_error,
        prompt_speed=prompt_speed,
        write_speed=write_speed,
        story_prompt_tokens=story_prompt,
        story_seconds=seconds,
    )


def story_estimate(facts: window.ServerFacts, max_input_chars: int) -> tuple[int, float | None]:
    """A story's request at most (the sources `max_input_chars` allows and the instructions,
    within the window, its reply kept free) and the seconds it takes at the server's speeds
    (those not measured taken at the speeds assumed of a CPU); (0, None) when no story's
    sources fit."""
    room = facts.window - STORY_REPLY_TOKENS - window.MARGIN - window.REPAIR_ROOM
    story_prompt = min(room, window.estimate_tokens("x" * max_input_chars) + INSTRUCTIONS)
    if story_prompt < INSTRUCTIONS:
        return 0, None
    prompt_speed, write_speed = facts.speeds.prompt_speed, facts.speeds.write_speed
    seconds = story_prompt / (prompt_speed or timing.PRIOR_PROMPT_SPEED) + (
        STORY_REPLY_TYPICAL / (write_speed or timing.PRIOR_WRITE_SPEED)
    )
    return story_prompt, seconds


async def _model_is_there(llm: LLMClient) -> None:
    """CheckFailed unless the server answers its models list and names the model (a server
    whose list is refused or empty is given the benefit of the doubt)."""
    import httpx
    import openai

    where = llm.config.base_url
    try:
        listed = [m.id async for m in llm.api.models.list() if isinstance(getattr(m, "id", 0), str)]
    except (ValueError, httpx.HTTPError):  # a list that could not be read: as if refused
        return
    except openai.APIConnectionError as err:
        cause = err.__cause__ or err.__context__
        raise CheckFailed(
            f"cannot reach the LLM server at {where}: {cause or 'connection failed'}"
        ) from None
    except openai.APIStatusError as err:
        if err.status_code in (401, 403):
            raise CheckFailed(
                f"the LLM server at {where} refused the API key (HTTP {err.status_code}): set "
                f"the environment variable {llm.config.api_key_env}"
            ) from None
        return
    model = llm.config.model
    if listed and model not in listed and f"{model}:latest" not in listed:  # Ollama's tags
        shown = ", ".join(listed[:10]) + (", …" if len(listed) > 10 else "")
        raise CheckFailed(
            f"the LLM server at {where} has no model {llm.config.model!r} ([llm] model); it "
            f"has: {shown}"
        )


def describe(found: ServerCheck) -> list[str]:
    """What `digest llm check` prints."""

    def speed(value: float | None, assumed: float) -> str:
        if value:
            return f"{value:.0f} tokens/s"
        return f"not measured (the reply was too short); {assumed:g} tokens/s assumed"

    mode = {
        "json_schema": "constrained to the schema (response_format json_schema)",
        "json_object_schema": "constrained to the schema (json_object with the schema beside it)",
        "json_object": "JSON, its shape not constrained (validated and repaired here)",
        "plain": "not constrained: JSON asked for in the prompt and parsed loosely",
    }.get(found.mode, found.mode)
    lines = [
        f"server:          {found.base_url} ({found.kind})",
        f"model:           {found.model}",
        f"context window:  {found.window} tokens ({found.window_source})",
        "tokens counted:  "
        + (f"by the server's tokenizer ({found.tokenizer})" if found.tokenizer else "estimated"),
        f"JSON output:     {mode}",
        f"reads prompts:   {speed(found.prompt_speed, timing.PRIOR_PROMPT_SPEED)}",
        f"writes:          {speed(found.write_speed, timing.PRIOR_WRITE_SPEED)}",
    ]
    if found.reply_error:
        lines.append(f"the probe reply: {found.reply_error}")
    if found.story_seconds is None:
        lines.append(
            f"a story summary: does not fit a window of {found.window} tokens (its instructions "
            f"take about {INSTRUCTIONS}, and up to {STORY_REPLY_TOKENS} are kept for its reply)"
        )
    else:
        lines.append(
            f"a story summary: about {found.story_seconds:.0f} s ({found.story_prompt_tokens} "
            f"tokens read, about {STORY_REPLY_TYPICAL} written)"
        )
    return lines

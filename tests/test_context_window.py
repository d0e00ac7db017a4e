"""Every request fits the server's context window, as each kind of server tells it or refuses
it: learned before the first request, a story's outlets each read in part (never one left out),
a refusal or a cut prompt made smaller once with the window lowered, and a CPU server that reads
slowly waited for. Real HTTP fakes: tests/llmserver.py and tests/ollamaserver.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from digest.config import LLMConfig
from digest.summarize import window
from digest.summarize.llm import LLMClient
from digest.summarize.story import summarize_story
from digest.summarize.types import StoryInput, StorySource
from tests import llmserver, ollamaserver
from tests.configs import write_config
from tests.conftest import run_cli
from tests.llmserver import LLMServer
from tests.newsweb import ARTICLES
from tests.ollamaserver import OllamaServer

llm_server = llmserver.llm_server
ollama_server = ollamaserver.ollama_server

OUTLETS = ("Example News", "Wire Service", "Daily Ledger")


def long_story() -> StoryInput:
    """One story told at length by three outlets: more than a 2k window holds."""
    a = ARTICLES[0]
    background = [p for b in ARTICLES[1:] for p in (b.lede, *b.paragraphs)]
    text = "\n\n".join([a.lede, *a.paragraphs, *background])
    sources = tuple(
        StorySource(
            url=f"https://{name.lower().replace(' ', '')}.example{a.path}",
            outlet=name,
            title=a.title,
            text=text,
        )
        for name in OUTLETS
    )
    return StoryInput(a.title, sources, datetime.now(UTC).date())


async def summarize(config: LLMConfig) -> tuple[str, str | None, LLMClient]:
    client = LLMClient(config, "k")
    try:
        outcome = await summarize_story(client, long_story())
    finally:
        await client.aclose()
    return outcome.summary.summarizer, outcome.fallback_reason, client


def cites_every_outlet(server: LLMServer) -> bool:
    user = server.completions[-1].body["messages"][1]["content"]
    return all(f"Outlet: {name}" in user for name in OUTLETS)


@pytest.mark.parametrize("style", ["llama-cpp-python", "llama.cpp", "vllm"])
async def test_a_refusal_naming_the_window_makes_the_request_fit_and_is_not_repeated(
    llm_server: LLMServer, style: str
) -> None:
    """A server that says nothing of its window is assumed to read 2,048 tokens; this one reads
    1,400 and refuses more, in its own words: the window is learned from the refusal."""
    llm_server.context_limit, llm_server.context_error_style = 1400, style  # type: ignore[assignment]
    who, why, client = await summarize(llm_server.config())
    assert (who, why) == ("llm:fake-model", None)
    refused = [r for r in llm_server.completions if r.status == 400]
    assert len(refused) == 1  # the first, fitted to the 2k assumed
    last = llm_server.completions[-1]
    assert last.status == 200 and last.prompt_tokens + (last.max_tokens or 0) <= 1400
    assert client._facts is not None and client._facts.window <= 1400
    assert cites_every_outlet(llm_server)


async def test_an_empty_stream_from_an_overflowing_server_is_retried_smaller(
    llm_server: LLMServer,
) -> None:
    """llama-cpp-python streaming a prompt over its window answers 200 and closes the stream
    without a word: that is taken for an overflow, not for an empty reply."""
    llm_server.context_limit, llm_server.context_error_style = 700, "stream-empty"
    who, why, _ = await summarize(llm_server.config())
    assert (who, why) == ("llm:fake-model", None)
    first, *_, last = llm_server.completions
    assert first.prompt_tokens >= 700 > last.prompt_tokens


@pytest.mark.parametrize("advertise", ["llama.cpp", "vllm", "lmstudio", "openrouter"])
async def test_a_window_the_server_tells_is_never_exceeded(
    llm_server: LLMServer, advertise: str
) -> None:
    llm_server.context_limit, llm_server.advertise = 1500, advertise  # type: ignore[assignment]
    who, why, client = await summarize(llm_server.config())
    assert (who, why) == ("llm:fake-model", None)
    assert all(r.status == 200 for r in llm_server.completions)
    assert all(r.prompt_tokens + (r.max_tokens or 0) <= 1500 for r in llm_server.completions)
    assert client._facts is not None and client._facts.window == 1500
    assert cites_every_outlet(llm_server)


async def test_the_servers_tokenizer_lets_a_request_use_its_whole_window(
    llm_server: LLMServer,
) -> None:
    """Counted by the server's own tokenizer, a request reads more of each outlet than the safe
    estimate allows, and still fits."""
    llm_server.context_limit, llm_server.advertise = 2048, "llama.cpp"
    await summarize(llm_server.config())
    estimated = llm_server.completions[-1].prompt_tokens
    llm_server.received.clear()
    llm_server.tokenizer = "llama.cpp"
    who, _, _ = await summarize(llm_server.config())
    counted = llm_server.completions[-1]
    assert who == "llm:fake-model"
    assert estimated < counted.prompt_tokens <= 2048 - (counted.max_tokens or 0)


async def test_a_prompt_cut_from_the_front_is_noticed_and_sent_again_smaller(
    llm_server: LLMServer,
) -> None:
    """Ollama's OpenAI-compatible endpoint cuts a long prompt from the front and says so only
    in its usage: a reply written without the instructions is not used."""
    llm_server.cut_front_to = 1600
    # The operator says 8,192: more than this server reads.
    who, why, client = await summarize(llm_server.config(context_tokens=8192))
    first, *rest = llm_server.completions
    assert first.prompt_tokens > 1600  # the first was cut ...
    assert rest and rest[-1].prompt_tokens <= 1600  # ... the second fitted
    assert (who, why) == ("llm:fake-model", None)
    assert client._facts is not None and client._facts.window <= 1600


async def test_ollama_is_asked_for_the_window_the_request_needs(
    ollama_server: OllamaServer,
) -> None:
    """Through its native API, with num_ctx up to the model's limit: the long story is read
    whole, not cut at Ollama's default of 2,048."""
    config = LLMConfig(base_url=ollama_server.url, model=ollama_server.model, api_key_env="X")
    who, why, client = await summarize(config)
    assert (who, why) == ("llm:fake-llama:latest", None)
    (chat,) = ollama_server.chats
    assert chat.path == "/api/chat" and chat.num_ctx == 8192 and not chat.cut
    assert chat.prompt_tokens > 2048  # more than Ollama's default would have kept
    assert client._facts is not None and client._facts.kind == "ollama"


async def test_ollama_with_a_small_model_is_asked_for_its_limit_only(
    ollama_server: OllamaServer,
) -> None:
    ollama_server.model_limit = 2048
    config = LLMConfig(base_url=ollama_server.url, model=ollama_server.model, api_key_env="X")
    who, why, _ = await summarize(config)
    assert (who, why) == ("llm:fake-llama:latest", None)
    (chat,) = ollama_server.chats
    assert chat.num_ctx == 2048 and not chat.cut


async def test_ollamas_cached_prompt_is_not_taken_for_a_cut_one(
    ollama_server: OllamaServer,
) -> None:
    """Ollama counts only the tokens it did not have cached from the request before: the same
    story asked again reads a token or two, which is not a prompt cut short."""
    ollama_server.cache_prompts = True
    config = LLMConfig(base_url=ollama_server.url, model=ollama_server.model, api_key_env="X")
    client = LLMClient(config, "k")
    try:
        first = await summarize_story(client, long_story())
        second = await summarize_story(client, long_story())
    finally:
        await client.aclose()
    assert first.fallback_reason is None and second.fallback_reason is None
    assert len(ollama_server.chats) == 2  # no request sent again smaller
    assert client._facts is not None and client._facts.window == 8192


@pytest.mark.slow
async def test_a_server_reading_slowly_is_waited_for(llm_server: LLMServer) -> None:
    """50 tokens a second, as a 7B model on a laptop CPU: the first token of a story's request
    comes after some 15 s, far past `first_token_timeout`, and is waited for."""
    llm_server.prompt_speed = 50.0
    who, why, client = await summarize(llm_server.config(first_token_timeout=2.0, timeout=10.0))
    assert (who, why) == ("llm:fake-model", None)
    assert client._facts is not None and client._facts.speeds.prompt_speed is not None
    assert client._facts.speeds.prompt_speed < 100


# -- numbers a server says ----------------------------------------------------------------------

# What a hostile or broken server has been seen to tell as its window (JSON text, verbatim).
NONSENSE = ["Infinity", "NaN", "1e309", "-Infinity", "0", "-1", "0.5", "1", '"4096"', "null"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(JSON_VALUES)
@example(float("inf"))
@example(float("nan"))
@example(10**400)
@example(4096.0)
def test_a_number_from_a_server_is_a_sane_whole_count_or_nothing(value: object) -> None:
    n = window.count(value)
    assert n is None or (type(n) is int and 1 <= n <= window.MAX_COUNT)
    w = window.window_size(value)
    assert w is None or (type(w) is int and window.MIN_WINDOW <= w <= window.MAX_WINDOW)
    whole = isinstance(value, int | float) and not isinstance(value, bool)
    if whole and value == value and abs(value) != float("inf") and int(value) == value:  # type: ignore[arg-type]
        in_range = window.MIN_WINDOW <= value <= window.MAX_WINDOW  # type: ignore[operator]
        assert (w == value) if in_range else w is None
    assert len(window.shown(value)) <= 40


@given(st.text(max_size=300), JSON_VALUES)
@example("This model's maximum context length is " + "9" * 5000 + " tokens", None)
@example("context window of 1e309", {"type": "exceed_context_size_error", "n_ctx": 1e309})
def test_a_refusal_naming_any_window_is_read_without_error(message: str, body: object) -> None:
    exceeded, named = window.context_exceeded(message, body)
    assert named is None or window.MIN_WINDOW <= named <= window.MAX_WINDOW
    assert exceeded or named is None


@pytest.mark.parametrize("advertise", ["llama.cpp", "vllm", "lmstudio"])
@pytest.mark.parametrize("said", NONSENSE)
async def test_a_window_that_is_no_number_is_not_believed_and_summaries_go_on(
    llm_server: LLMServer, advertise: str, said: str
) -> None:
    """`n_ctx: Infinity` stopped every summary with an OverflowError; 0.5 or 1 made a window
    nothing fits in. Such a window is said to be none, and the default assumed."""
    llm_server.advertise, llm_server.window_said = advertise, said  # type: ignore[assignment]
    who, why, client = await summarize(llm_server.config())
    assert (who, why) == ("llm:fake-model", None)
    assert client._facts is not None
    if said != "null":  # not said at all (LM Studio then tells what the model could take)
        assert client._facts.window == window.DEFAULT_WINDOW
        assert client._facts.window_source.startswith("assumed: ")
        assert "which is no context window; set [llm] context_tokens" in client._facts.window_source


async def test_a_window_too_large_to_be_true_is_not_believed(llm_server: LLMServer) -> None:
    llm_server.advertise, llm_server.window_said = "llama.cpp", str(10**30)
    _, _, client = await summarize(llm_server.config(context_tokens=4096))
    assert client._facts is not None and client._facts.window == 4096
    assert client._facts.window_source == "[llm] context_tokens"


async def test_an_ollama_model_reading_more_than_any_model_is_asked_for_the_usual_window(
    ollama_server: OllamaServer,
) -> None:
    ollama_server.model_limit = 10**30
    config = LLMConfig(base_url=ollama_server.url, model=ollama_server.model, api_key_env="X")
    who, why, client = await summarize(config)
    assert (who, why) == ("llm:fake-llama:latest", None)
    assert client._facts is not None and client._facts.window == window.OLLAMA_WINDOW
    assert client._facts.window_source == "Ollama, asked for"


# -- digest llm check ----------------------------------------------------------------------------


def check(tmp_path: Path, url: str, model: str = "fake-model", *args: str) -> tuple[int, str]:
    write_config(tmp_path, llm={"base_url": url, "model": model, "api_key_env": "X"})
    result = run_cli("llm", "check", *args, cwd=tmp_path)
    return result.code, result.stdout + result.stderr


@pytest.mark.slow
def test_llm_check_reports_the_window_where_it_came_from_and_the_speeds(
    tmp_path: Path, threaded_llm_server: LLMServer
) -> None:
    threaded_llm_server.context_limit, threaded_llm_server.advertise = 3000, "vllm"
    code, out = check(tmp_path, threaded_llm_server.url, "fake-model", "--json")
    assert code == 0, out
    found = json.loads(out)
    assert found["context_window"] == 3000
    assert found["context_window_source"] == "max_model_len in /v1/models"
    assert found["server"] == "vllm" and found["json_constrained"] is True
    assert found["story_prompt_tokens"] <= 3000


@pytest.mark.slow
def test_llm_check_names_a_server_that_cannot_be_reached_or_lacks_the_model(
    tmp_path: Path, threaded_llm_server: LLMServer
) -> None:
    code, out = check(tmp_path, "http://127.0.0.1:9/v1")
    assert code == 1 and "cannot reach the LLM server at http://127.0.0.1:9/v1" in out
    code, out = check(tmp_path, threaded_llm_server.url, "no-such-model")
    assert code == 1
    assert "has no model 'no-such-model' ([llm] model); it has: fake-model" in out


@pytest.mark.slow
def test_llm_check_measures_a_slow_reader_and_a_server_that_refuses_long_prompts(
    tmp_path: Path, threaded_llm_server: LLMServer
) -> None:
    """50 tokens a second, refusing more than 1,400 tokens, saying neither: the check's short
    request fits, its reading speed is measured, and the window is the one assumed."""
    threaded_llm_server.prompt_speed, threaded_llm_server.context_limit = 50.0, 1400
    code, out = check(tmp_path, threaded_llm_server.url, "fake-model", "--json")
    assert code == 0, out
    found = json.loads(out)
    assert found["context_window"] == 2048 and found["context_window_source"].startswith("assumed")
    assert found["prompt_tokens_per_second"] is not None
    assert found["prompt_tokens_per_second"] <= 50
    # A story's request at that speed takes its time: the estimate says so.
    assert found["story_summary_seconds"] > found["story_prompt_tokens"] / 50


@pytest.mark.slow
def test_llm_check_says_plainly_that_a_window_is_no_number_and_assumes_the_default(
    tmp_path: Path, threaded_llm_server: LLMServer
) -> None:
    """It exited 1 with "internal error: OverflowError" on Infinity and printed "-892 tokens
    read" for a window of 0."""
    threaded_llm_server.advertise = "llama.cpp"
    for said, told in [("Infinity", "Infinity"), ("0", "0"), ('"4096"', '"4096"')]:
        threaded_llm_server.window_said = said
        code, out = check(tmp_path, threaded_llm_server.url)
        assert code == 0, out
        assert (
            f"context window:  2048 tokens (assumed: llama.cpp /props says n_ctx {told}, which "
            "is no context window; set [llm] context_tokens)"
        ) in out
        assert "a story summary: about" in out and "-" not in out.split("a story summary")[1]
    # A window that is one, but too small for a story: said so, with no negative count.
    threaded_llm_server.window_said = "512"
    code, out = check(tmp_path, threaded_llm_server.url, "fake-model")
    assert code == 0, out
    assert "context window:  512 tokens (llama.cpp /props)" in out
    assert "a story summary: does not fit a window of 512 tokens" in out
    code, out = check(tmp_path, threaded_llm_server.url, "fake-model", "--json")
    found = json.loads(out)
    assert found["story_prompt_tokens"] == 0 and found["story_summary_seconds"] is None


@pytest.mark.slow
def test_llm_check_says_plainly_what_was_wrong_with_a_reply_it_could_not_read(
    tmp_path: Path, threaded_llm_server: LLMServer
) -> None:
    """A truncated reply made `llm check` exit 1 with "internal error: JSONDecodeError"; a 50 MB
    one was read whole."""
    url = threaded_llm_server.url
    threaded_llm_server.script("truncated_json")
    code, out = check(tmp_path, url)
    assert code == 0, out
    assert f"the probe reply: LLM at {url} sent a reply that could not be read, not JSON" in out
    threaded_llm_server.script("huge")
    code, out = check(tmp_path, url)
    assert code == 0, out
    assert (
        f"the probe reply: LLM at {url} sent a reply past 320 KiB, far more than 64 tokens "
        "take: stopped reading it"
    ) in out
    assert threaded_llm_server.huge_sent < threaded_llm_server.huge_bytes / 2


@pytest.mark.slow
def test_llm_check_finds_ollama_and_the_window_of_its_model(tmp_path: Path) -> None:
    from tests.conftest import serve_in_thread

    for ollama in serve_in_thread(OllamaServer(model_limit=32768)):
        code, out = check(tmp_path, ollama.url, ollama.model, "--json")
        assert code == 0, out
        found = json.loads(out)
        assert found["server"] == "ollama" and found["context_window"] == 8192
        assert "Ollama /api/show: the model reads 32768" in found["context_window_source"]
        assert found["json_constrained"] is True
        assert ollama.chats
        assert all(c.path == "/api/chat" and c.num_ctx == 8192 for c in ollama.chats)


@pytest.mark.parametrize("n_ctx", [1400, 4096])
async def test_llama_cpp_pythons_window_is_learned_from_its_refusal_not_assumed(
    llm_server: LLMServer, n_ctx: int
) -> None:
    """llama-cpp-python's server says its window only in refusing a longer prompt: it was read
    as 2,048 tokens whatever it was started with, and a 4,096-token server was sent half of
    what it reads."""
    from digest.summarize import check

    llm_server.tokenizer, llm_server.context_limit = "llama-cpp-python", n_ctx  # type: ignore[assignment]
    client = LLMClient(llm_server.config(), "k")
    try:
        found = await check.check(client)
        outcome = await summarize_story(client, long_story())
    finally:
        await client.aclose()
    assert (found.kind, found.window) == ("llama-cpp-python", n_ctx)
    assert f"context window:  {n_ctx} tokens (named by its refusal" in "\n".join(
        check.describe(found)
    )
    assert outcome.fallback_reason is None
    story = llm_server.completions[-1]
    assert story.status == 200 and story.prompt_tokens + (story.max_tokens or 0) <= n_ctx
    if n_ctx > 2048:
        assert story.prompt_tokens > 2048 - (story.max_tokens or 0)  # more than 2k allowed


async def test_a_llama_cpp_python_server_reading_the_probe_whole_is_taken_at_that(
    llm_server: LLMServer,
) -> None:
    llm_server.tokenizer = "llama-cpp-python"  # type: ignore[assignment]
    client = LLMClient(llm_server.config(), "k")
    try:
        facts = await client.facts()
    finally:
        await client.aclose()
    probe = llm_server.completions[0].prompt_tokens
    assert facts.window == probe > 16_000
    assert facts.window_source == f"at least {probe}: it read a prompt that long"


# Tokens SmolLM2-135M's tokenizer (llama-cpp-python 0.3.36) makes of these sentences, measured:
# the estimate must never be below a small model's count, in any script.
MEASURED = [
    ("The city council voted on Tuesday to extend the tram line by four kilometres.", 15),
    (
        "Городской совет во вторник проголосовал за продление трамвайной линии на четыре "
        "километра до новой больницы стоимостью 180 миллионов евро.",
        95,
    ),
    (
        "صوت مجلس المدينة يوم الثلاثاء على تمديد خط الترام أربعة كيلومترات إلى المستشفى الجديد "
        "بتكلفة 180 مليون يورو.",
        105,
    ),
    (
        "מועצת העיר הצביעה ביום שלישי על הארכת קו הרכבת הקלה בארבעה קילומטרים עד בית החולים החדש.",
        93,
    ),
    ("สภาเมืองลงมติเมื่อวันอังคารให้ขยายเส้นทางรถรางออกไปสี่กิโลเมตรถึงโรงพยาบาลแห่งใหม่", 152),
    ("市议会周二投票决定将有轨电车线路延长四公里至新医院，耗资1.8亿欧元。", 67),
    (
        "市議会は火曜日、路面電車の路線を新しい病院まで4キロ延長することを決めた。費用は1億8000万ユーロ。",
        94,
    ),
    (
        "시의회는 화요일 노면전차 노선을 새 병원까지 4킬로미터 연장하기로 "
        "의결했다. 비용은 1억 8천만 유로다.",
        123,
    ),
]


@pytest.mark.parametrize(("text", "tokens"), MEASURED)
def test_the_estimate_is_never_below_a_small_models_count_in_any_script(
    text: str, tokens: int
) -> None:
    assert window.estimate_tokens(text) >= tokens


async def test_the_operators_window_stands_and_llama_cpp_python_is_not_probed(
    llm_server: LLMServer,
) -> None:
    llm_server.tokenizer, llm_server.context_limit = "llama-cpp-python", 4096  # type: ignore[assignment]
    client = LLMClient(llm_server.config(context_tokens=3000), "k")
    try:
        facts = await client.facts()
    finally:
        await client.aclose()
    assert (facts.window, facts.window_source) == (3000, "[llm] context_tokens")
    assert llm_server.completions == []

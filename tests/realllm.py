"""A real OpenAI-compatible server for the slow tests: llama-cpp-python's, with SmolLM2-135M.

`.ci/llm-peer.sh` builds it once per machine and prints the two variables this reads:
DIGEST_TEST_LLAMA_PYTHON (the python of its virtualenv) and DIGEST_TEST_LLAMA_MODEL (the .gguf
file). Without them the tests that need the server are skipped, except in CI, where they fail.

The server answers one request at a time and invents facts: test the protocol with it (what it
accepts, the shape of what it returns, how long it takes), never the content.

    real_llm = realllm.real_llm   # in a test module, then:
    async def test_x(real_llm: RealLLM) -> None: config = real_llm.config()
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from digest.config import LLMConfig

MODEL_ALIAS = "smollm2"
START_TIMEOUT = 120.0  # seconds for the server to load the model and answer /v1/models


def llama_peer() -> tuple[str, str]:
    """The server's python and the model file: skipped where they are missing, failed in CI."""
    python = os.environ.get("DIGEST_TEST_LLAMA_PYTHON", "")
    model = os.environ.get("DIGEST_TEST_LLAMA_MODEL", "")
    if python and model and os.access(python, os.X_OK) and os.path.isfile(model):
        return python, model
    reason = (
        "the real LLM server is not set up: run `bash .ci/llm-peer.sh` and export the "
        "DIGEST_TEST_LLAMA_PYTHON and DIGEST_TEST_LLAMA_MODEL it prints"
    )
    if python or model:
        reason += f" (given: {python or '-'}, {model or '-'})"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the real-LLM tests", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class RealLLM:
    """A running llama-cpp-python server on 127.0.0.1 and where its log goes."""

    url: str  # the base URL, ending in /v1
    log: Path
    process: subprocess.Popen[bytes]

    def config(self, **overrides: Any) -> LLMConfig:
        """An LLMConfig for this server: temperature 0 and no retries, the time limits as a
        user leaves them (the client waits as long as the server's measured speed needs)."""
        values: dict[str, Any] = {
            "base_url": self.url,
            "model": MODEL_ALIAS,
            "api_key_env": "DIGEST_TEST_LLM_KEY",
            "max_retries": 0,
            "temperature": 0.0,
        }
        values.update(overrides)
        return LLMConfig(**values)

    def defaults(self) -> LLMConfig:
        """The `[llm]` section a new user writes: where the server is and which model, and
        nothing else."""
        return LLMConfig(base_url=self.url, model=MODEL_ALIAS, api_key_env="DIGEST_TEST_LLM_KEY")

    def log_tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def real_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealLLM]:
    """llama-cpp-python's server with SmolLM2 and a 4,096-token context, started once for the
    session on a free port."""
    yield from start(tmp_path_factory, n_ctx=4096)


@pytest.fixture(scope="session")
def real_llm_2048(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealLLM]:
    """The same server with llama-cpp-python's default context of 2,048 tokens."""
    yield from start(tmp_path_factory, n_ctx=2048)


def start(tmp_path_factory: pytest.TempPathFactory, *, n_ctx: int) -> Iterator[RealLLM]:
    python, model = llama_peer()
    port = _free_port()
    log = tmp_path_factory.mktemp(f"real-llm-{n_ctx}") / "server.log"
    cmd = [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        model,
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_threads",
        "2",
        "--n_ctx",
        str(n_ctx),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    server = RealLLM(f"http://127.0.0.1:{port}/v1", log, process)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers(server.url):
            if process.poll() is not None:
                pytest.fail(
                    f"llama-cpp-python's server exited with {process.returncode}:\n"
                    f"{server.log_tail()}",
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"llama-cpp-python's server did not answer within {START_TIMEOUT:g} s:\n"
                    f"{server.log_tail()}",
                    pytrace=False,
                )
            time.sleep(0.25)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

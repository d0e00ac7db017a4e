"""Sentence vectors of articles from any OpenAI-compatible `/v1/embeddings` endpoint.

The caller looks up the API key (the variable `EmbeddingsConfig.api_key_env` names) and passes it
in. `Embedder.embed` sends one batch and checks what comes back: one finite vector per text, all
of one length; anything else, and any failure after the client's own retries, is an
`EmbeddingError` whose message is one line. Clustering (`digest.jobs.clustering`) asks only for the
articles that have no stored vector yet and falls back to words alone when this fails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from digest.config import EmbeddingsConfig
from digest.errors import EmbeddingError
from digest.runtime.closing import AsyncClosing

if TYPE_CHECKING:  # openai is imported when an Embedder is made: commands start without it
    import openai

Vector = tuple[float, ...]


class Embedder(AsyncClosing):
    """One endpoint and model; use as `async with Embedder(config, api_key=...) as e:`."""

    def __init__(
        self,
        config: EmbeddingsConfig,
        api_key: str | None = None,
        *,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        import openai

        self.config = config
        # Local servers need no key, but the client insists on one (and would otherwise read
        # OPENAI_API_KEY from the environment itself).
        self._client = client or openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=api_key or "no-key",
            timeout=config.timeout,
            max_retries=config.max_retries,
        )

    @property
    def space(self) -> str:
        return self.space_of(self.config)

    @staticmethod
    def space_of(config: EmbeddingsConfig) -> str:
        """What stored vectors are kept under: the model, and the prefix when there is one
        (vectors of one model with another prefix are not comparable)."""
        prefix = config.input_prefix
        return f"{config.model}|{prefix}" if prefix else config.model

    @property
    def batch_size(self) -> int:
        return self.config.batch_size

    def text_of(self, title: str, text: str) -> str:
        """What is embedded for an article: its title, then its lede (or snippet), cut."""
        body = " ".join(title.split())
        if text.strip():
            body += "\n" + " ".join(text.split())
        return (self.config.input_prefix + body)[: self.config.max_input_chars]

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order (send at most `batch_size` at once)."""
        import openai

        if not texts:
            return []
        try:
            response = await self._client.embeddings.create(
                model=self.config.model, input=list(texts), encoding_format="float"
            )
        except openai.APIStatusError as err:
            raise EmbeddingError(
                f"embeddings endpoint {self.config.base_url}: HTTP {err.status_code}"
            ) from None
        except openai.APITimeoutError:
            raise EmbeddingError(
                f"embeddings endpoint {self.config.base_url}: no answer within "
                f"{self.config.timeout:g} s"
            ) from None
        except openai.APIConnectionError as err:
            raise EmbeddingError(
                f"embeddings endpoint {self.config.base_url}: {_cause(err)}"
            ) from None
        except openai.OpenAIError as err:  # an answer the client could not read
            raise EmbeddingError(
                f"embeddings endpoint {self.config.base_url}: {_one_line(str(err))}"
            ) from None
        return self._checked(response, len(texts))

    def _checked(self, response: object, count: int) -> list[Vector]:
        where = f"embeddings endpoint {self.config.base_url}"
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise EmbeddingError(f"{where}: an answer without a list of vectors")
        if len(data) != count:
            raise EmbeddingError(f"{where}: {len(data)} vectors for {count} texts")
        by_index: dict[int, Vector] = {}
        for item in data:
            index, values = getattr(item, "index", None), getattr(item, "embedding", None)
            if not isinstance(index, int) or not 0 <= index < count or index in by_index:
                raise EmbeddingError(f"{where}: vectors not numbered 0 to {count - 1}")
            if not isinstance(values, list) or not values:
                raise EmbeddingError(f"{where}: a vector that is not a list of numbers")
            try:
                vector = tuple(float(x) for x in values)
            except (TypeError, ValueError):
                raise EmbeddingError(f"{where}: a vector that is not a list of numbers") from None
            if not all(math.isfinite(x) for x in vector) or not any(vector):
                raise EmbeddingError(f"{where}: a vector of zeros or non-finite numbers")
            by_index[index] = vector
        lengths = {len(v) for v in by_index.values()}
        if len(lengths) != 1:
            raise EmbeddingError(f"{where}: vectors of different lengths {sorted(lengths)}")
        return [by_index[i] for i in range(count)]

    async def aclose(self) -> None:
        await self._client.close()


def _cause(err: BaseException) -> str:
    """The innermost reason of a connection error ("Connection refused"), on one line."""
    reason: BaseException = err
    while reason.__cause__ is not None:
        reason = reason.__cause__
    return _one_line(str(reason) or type(reason).__name__)


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"

"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama,
text-embeddings-inference, ...): ``--model openai:MODEL --base-url URL``.

:class:`EndpointEncoder` has the interface of the local :class:`~indexer.embed.Encoder` (``spec``,
``dims``, ``stats``, ``encode``), so :class:`~indexer.embed.CachedEmbedder`, the embedding cache, the
index builder and the runner use it unchanged. Batches are sorted by length and sent with bounded
concurrency; 429/5xx, timeouts and lost connections are retried with backoff that honours
``Retry-After``; the dimension comes from the endpoint's first answer (and is remembered in the
cache, so a second run makes no call at all).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np

from base import (
    ConfigError,
    EmbeddingError,
    Endpoint,
    EndpointFailure,
    RetryCounter,
    create_embeddings,
    explain,
    is_fatal,
    with_retries,
)
from indexer.embed._backend import DEFAULT_EMBED_BACKEND
from indexer.embed._cache import EmbeddingCache, spec_key
from indexer.embed._encoder import EncoderStats, batch_order, l2_normalize
from indexer.embed._models import ModelSpec, field_name_for
from indexer.embed._protocol import TextEncoder

PREFIX = "openai:"
DEFAULT_REVISION = "endpoint"
DEFAULT_ENDPOINT_BATCH = 32  # text-embeddings-inference accepts 32 inputs per request by default
#: embedded once to learn the dimension; cached like any other text
PROBE_TEXT = "r2med-harness dimension probe"


def is_endpoint_model(name: str) -> bool:
    return name.strip().lower().startswith(PREFIX)


def endpoint_spec(name: str) -> ModelSpec:
    """``openai:MODEL`` or ``openai:MODEL@REVISION`` -> a spec whose dims come from the first answer.

    The revision is a label the user may pin (an endpoint does not say which weights it serves);
    it keys the cache and the index metadata like a hub revision does.
    """
    rest = name.strip()[len(PREFIX) :]
    model, _, revision = rest.partition("@")
    model = model.strip()
    if not model:
        raise EmbeddingError(f"expected openai:MODEL (a model the endpoint serves), found {name!r}")
    model_id = f"{PREFIX}{model}"
    field = "vec_openai_" + field_name_for(model.replace("/", "_")).removeprefix("vec_")
    return ModelSpec(
        model_id=model_id,
        path_or_name=model,
        revision=revision.strip() or DEFAULT_REVISION,
        field_name=field,
    )


@dataclass
class EndpointStats(EncoderStats):
    """:class:`EncoderStats` plus what an endpoint costs: requests, retries and tokens."""

    requests: int = 0
    retries: int = 0
    tokens: int = 0


class EndpointEncoder:
    """Encodes through ``endpoint``'s embeddings API; one request per batch."""

    def __init__(
        self,
        spec: ModelSpec,
        endpoint: Endpoint,
        *,
        batch_size: int = DEFAULT_ENDPOINT_BATCH,
        probe_cache: EmbeddingCache | None = None,
    ) -> None:
        if batch_size <= 0:
            raise EmbeddingError(f"batch size must be positive, found {batch_size}")
        self.spec = spec
        self.endpoint = endpoint
        self.batch_size = batch_size
        self.probe_cache = probe_cache
        self.stats: EndpointStats = EndpointStats()
        self._client: Any = None
        self._dims: int | None = spec.dims

    @property
    def device(self) -> str:
        return self.endpoint.url()

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self.endpoint.client()
        return self._client

    @property
    def dims(self) -> int:
        """The vector size, from the endpoint's first answer (a cached probe when there is one)."""
        if self._dims is None:
            key = spec_key(self.spec, "", PROBE_TEXT)
            cached = self.probe_cache.get_many([key]).get(key) if self.probe_cache is not None else None
            if cached is None:
                cached = self._request([PROBE_TEXT])[0]
                if self.probe_cache is not None:
                    stored = l2_normalize(cached[None, :])[0] if self.spec.normalize else cached
                    self.probe_cache.put_many([(key, stored)])
            self._dims = int(cached.shape[0])
        return self._dims

    def _request(self, texts: list[str]) -> np.ndarray:
        counter = RetryCounter()
        model = self.spec.path_or_name
        try:
            vectors, tokens = with_retries(
                self.endpoint, lambda: create_embeddings(self.client, model, texts), counter
            )
        except EndpointFailure as exc:
            why = explain(exc, self.endpoint, model)
            if is_fatal(exc):  # nothing another request could fare better at: the URL, the key, the model
                raise EmbeddingError(f"no embeddings for model {model!r}: {why}") from None
            raise EmbeddingError(
                f"the embeddings endpoint {self.endpoint.url()} failed a batch of {len(texts)} texts "
                f"(model {model!r}) after {exc.retries} retries: {why}"
            ) from None
        out = np.asarray(vectors, dtype=np.float32)
        if out.ndim != 2 or out.shape[0] != len(texts) or out.shape[1] == 0:
            raise EmbeddingError(
                f"the embeddings endpoint {self.endpoint.url()} answered shape {out.shape} for {len(texts)} texts"
            )
        if self._dims is not None and out.shape[1] != self._dims:
            raise EmbeddingError(
                f"the embeddings endpoint {self.endpoint.url()} answered {out.shape[1]}-dimensional vectors "
                f"for model {model!r}, expected {self._dims} (its first answer)"
            )
        self.stats.requests += 1
        self.stats.retries += counter.count
        self.stats.tokens += tokens
        return out

    def encode(
        self,
        texts: Sequence[str],
        *,
        prompt: str = "",
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Vectors for ``prompt + text``, shape ``(len(texts), dims)``, float32, in input order."""
        size = batch_size or self.batch_size
        if size <= 0:
            raise EmbeddingError(f"batch size must be positive, found {size}")
        dims = self.dims
        out = np.empty((len(texts), dims), dtype=np.float32)
        order = batch_order([len(t) for t in texts], sort_by_length=True)
        batches = [order[i : i + size] for i in range(0, len(texts), size)]
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=self.endpoint.concurrency) as pool:
            futures: dict[Future[np.ndarray], np.ndarray] = {
                pool.submit(self._request, [prompt + texts[i] for i in index]): index for index in batches
            }
            try:
                for future in as_completed(futures):
                    index = futures[future]
                    out[index] = future.result()
                    self.stats.model_calls += 1
                    self.stats.texts_encoded += len(index)
                    if on_batch is not None:
                        on_batch(len(index))
            except BaseException:
                for pending in futures:
                    pending.cancel()
                raise
        self.stats.seconds += time.perf_counter() - started
        return l2_normalize(out) if self.spec.normalize else out

    def encode_documents(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        return self.encode(texts, prompt=self.spec.document_prompt, batch_size=batch_size)

    def encode_queries(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        return self.encode(texts, prompt=self.spec.query_prompt, batch_size=batch_size)


def build_encoder(
    spec: ModelSpec,
    *,
    endpoint: Endpoint | None = None,
    cache: EmbeddingCache | None = None,
    backend: str = DEFAULT_EMBED_BACKEND,
    progress: bool = False,
) -> TextEncoder:
    """The encoder for ``spec``: an :class:`EndpointEncoder` for ``openai:`` models, else the local one
    on ``backend`` (``--embed-backend``; ``progress``: show auto's once-per-machine check).

    ``endpoint`` is required for (and only accepted with) ``openai:`` models, which compute their vectors
    remotely, so a local backend other than the default is refused for them.
    """
    if is_endpoint_model(spec.model_id):
        if backend != DEFAULT_EMBED_BACKEND:
            raise ConfigError(
                f"--embed-backend {backend} runs local models; {spec.model_id!r} is computed by its endpoint"
            )
        return EndpointEncoder(spec, endpoint or Endpoint(), probe_cache=cache)
    if endpoint is not None and endpoint.base_url is not None:
        raise EmbeddingError(
            f"--embed-url (embedding.url) is for endpoint models (openai:MODEL); {spec.model_id!r} runs locally"
        )
    from indexer.embed._encoder import Encoder

    return Encoder(spec, backend=backend, progress=progress)


def endpoint_for(models: Sequence[str], base_url: str | None, api_key_env: str | None) -> Endpoint | None:
    """The endpoint embedding ``models`` needs: only when one is ``openai:MODEL`` or a URL or key was given."""
    if base_url is None and api_key_env is None and not any(is_endpoint_model(m) for m in models):
        return None
    return Endpoint.resolve(base_url, api_key_env)

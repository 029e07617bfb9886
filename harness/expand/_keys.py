"""``harness expand``'s keys (``expand.*``): the generation method, the LLM and its endpoint, sampling, the
LameR first stage. Each is one declaration (:func:`harness.keys.key`), set by a flag, ``--set expand.KEY=VALUE``
or an ``[expand]`` table alike; :meth:`ExpandKeys.config` gives the typed :class:`ExpandConfig`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError, Endpoint
from harness._errors import SettingError
from harness.expand._expand import GENERATION_METHODS, ExpandConfig, llm_folder_name
from harness.expand._generate import GenerationSettings
from harness.expand._reasoning import AUTO, NONE, REASONING_FORMATS
from harness.keys import OUTPUT, PERFORMANCE, RESULTS, between, key
from harness.llm import EndpointKeys
from indexer import BM25_FIELDS

_SETTINGS = GenerationSettings()
_RETRY = Endpoint().retry


def _folder(value: Any) -> str | None:
    """letters, digits, '.', '_' and '-'"""
    if value != llm_folder_name(value):
        return f"expected letters, digits, '.', '_' and '-', found {value!r}"
    return None


def _method(value: Any) -> str | None:
    """one of hyde, query2doc, lamer"""
    if value in GENERATION_METHODS:
        return None
    return (
        f"expected one of {', '.join(GENERATION_METHODS)}, found {value!r} (search-o1 and search-r1 sets come "
        "from their agents; harness run reads them)"
    )


@dataclass(frozen=True, slots=True)
class ExpandKeys(EndpointKeys):
    """How ``harness expand`` generates: the method, the LLM, sampling, requests and LameR's first stage."""

    method: str | None = key(
        affects=RESULTS, check=_method, doc="the generation method: hyde | query2doc | lamer"
    )
    llm: str | None = key(affects=RESULTS, doc="the LLM: the model name its endpoint serves")
    prompt: Path | None = key(
        affects=RESULTS, doc="TOML prompt file: system, and user with {query} (LameR: also {passages})"
    )
    reasoning_format: str = key(
        AUTO,
        affects=RESULTS,
        choices=lambda: [AUTO, NONE, *REASONING_FORMATS],
        doc="how a reasoning trace is split off (auto: by model family)",
    )
    temperature: float = key(
        _SETTINGS.temperature, affects=RESULTS, check=between(0, 2), doc="sampling temperature"
    )
    top_p: float = key(_SETTINGS.top_p, affects=RESULTS, check=between(0, 1, above=True), doc="nucleus mass")
    max_tokens: int | None = key(
        affects=RESULTS, check=between(1, 1_000_000), doc="longest answer in tokens (default: the endpoint's)"
    )
    seed: int | None = key(affects=RESULTS, doc="sent to endpoints that honour it")
    name: str | None = key(
        affects=OUTPUT,
        check=_folder,
        doc="the <llm> folder, read as --expansion METHOD:NAME (default: from the LLM)",
    )
    backoff: float = key(
        _RETRY.initial_backoff_s,
        affects=PERFORMANCE,
        check=between(0, 60),
        doc="first retry's wait in seconds (doubles; Retry-After wins)",
    )
    cache_dir: Path | None = key(affects=PERFORMANCE, doc="generation cache (default <cache>/generations)")
    first_stage_depth: int = key(
        10, affects=RESULTS, check=between(1, 100), doc="LameR: passages from the BM25 first stage"
    )
    bm25: str = key(
        "es", affects=RESULTS, choices=lambda: BM25_FIELDS, doc="LameR's first stage BM25: es | r2med"
    )

    def check(self) -> None:
        if self.method is None:
            raise SettingError("method", "expected a generation method (hyde, query2doc, lamer), found none")
        if self.llm is None:
            raise SettingError("llm", "expected the model name the endpoint serves, found none")
        if self.name is None:
            try:
                llm_folder_name(self.llm)
            except ConfigError as exc:
                raise SettingError("llm", f"{exc}: name the folder with {{expand.name}}") from None
        self.endpoint()

    def endpoint(self) -> Endpoint:
        """The chat endpoint, with its retries."""
        return self.chat_endpoint("expand", backoff=self.backoff)

    def config(
        self, dataset: str, split: str | None, revision: str | None, output: Path | None, progress: bool
    ) -> ExpandConfig:
        """The typed config of a run of ``harness expand`` over ``dataset``."""
        assert self.method is not None and self.llm is not None  # (check() refused otherwise)
        endpoint = self.endpoint()
        settings = GenerationSettings(self.temperature, self.top_p, self.max_tokens, self.seed)
        return ExpandConfig(
            dataset=dataset,
            method=self.method,
            model=self.llm,
            endpoint=endpoint,
            name=self.name,
            prompt_file=self.prompt,
            settings=settings,
            reasoning_format=self.reasoning_format,
            split=split,
            revision=revision,
            output=output,
            cache_dir=self.cache_dir,
            first_stage_depth=self.first_stage_depth,
            bm25=self.bm25,
            progress=progress,
        )

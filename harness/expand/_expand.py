"""``harness expand``: generate an expansion set for every query and write it in R2MED's layout.

    <root>/<method>/<llm>/query_with_hydoc.jsonl       one record per query, in the query file's order
    <root>/<method>/<llm>/query_with_hydoc.meta.json   the set's manifest (prompt, settings, costs)

Each record is the published shape (``id``, ``text``, ``hy_doc``) plus ``reasoning`` when the model
wrote a trace (returned apart by the endpoint, or split off by the family's rule) and ``generation``
(model, prompt sha256, settings, finish reason, token counts). Records hold nothing that changes from
one run to the next, so a run served from the cache writes the same bytes. Both files are replaced
atomically, and only once every query has its answer.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from base import ConfigError, Endpoint, default_cache_dir, progress, write_json_atomic, write_jsonl_atomic
from harness.expand._first_stage import FirstStage, first_stage
from harness.expand._generate import GenerationSettings, GenerationStats, Generator, Task
from harness.expand._prompts import PromptTemplate, builtin_prompt, load_prompt
from harness.expand._reasoning import AUTO, ReasoningFormat, choose_reasoning_format
from harness.llm import ChatAnswer, JsonCache
from indexer import EXPANSION_FILE, Backend, Dataset, __version__, expansion_root, load_dataset

META_SUFFIX = ".meta.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class GenerationMethod:
    """A method ``harness expand`` can generate for (reading covers more: see ``harness.expand._reading``)."""

    name: str
    needs_first_stage: bool = False


GENERATION_METHODS: dict[str, GenerationMethod] = {
    m.name: m
    for m in (
        GenerationMethod("hyde"),
        GenerationMethod("query2doc"),
        GenerationMethod("lamer", needs_first_stage=True),
    )
}


def llm_folder_name(model: str) -> str:
    """The ``<llm>`` folder for a model: its last path part, with only letters, digits, ``.``, ``_``, ``-``."""
    last = model.strip().rstrip("/").rsplit("/", 1)[-1]
    name = _UNSAFE.sub("-", last).strip("-.")
    if not name:
        raise ConfigError(f"cannot derive a folder name from model {model!r}; give one with expand.name")
    return name


@dataclass(frozen=True, slots=True)
class ExpandConfig:
    """Everything ``harness expand`` needs (its keys checked: :class:`~harness.expand._keys.ExpandKeys`)."""

    dataset: str
    method: str
    model: str
    endpoint: Endpoint = field(default_factory=Endpoint)
    name: str | None = None  # the <llm> folder (default: from the model)
    prompt_file: Path | None = None
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    reasoning_format: str = AUTO
    split: str | None = None
    revision: str | None = None
    output: Path | None = None  # a folder to hold <method>/<llm>/ (default: the dataset's expansion root)
    cache_dir: Path | None = None
    first_stage_depth: int = 10
    bm25: str = "es"
    progress: bool = True

    @property
    def llm(self) -> str:
        return self.name or llm_folder_name(self.model)

    @property
    def needs_engine(self) -> bool:
        return GENERATION_METHODS[self.method].needs_first_stage

    def prompt(self) -> PromptTemplate:
        template = load_prompt(self.prompt_file) if self.prompt_file else builtin_prompt(self.method)
        return template.check(self.method, needs_passages=self.needs_engine)


@dataclass(frozen=True, slots=True)
class ExpandResult:
    path: Path
    meta_path: Path
    queries: int
    traces: int
    stats: GenerationStats
    validated: bool
    file_tokens: dict[str, int]


def output_path(config: ExpandConfig) -> Path:
    root = config.output.expanduser().resolve() if config.output else expansion_root(config.dataset)
    return root / config.method / config.llm / EXPANSION_FILE


def _record(
    qid: str, query: str, answer: ChatAnswer, fmt: ReasoningFormat | None, generation: dict[str, Any]
) -> dict[str, Any]:
    trace, final = fmt.split(answer.content) if fmt is not None else (None, answer.content.strip())
    traces = [t for t in (answer.reasoning, trace) if t and t.strip()]
    record: dict[str, Any] = {"id": qid, "text": query, "hy_doc": final}
    if traces:
        record["reasoning"] = "\n\n".join(t.strip() for t in traces)
    record["generation"] = {
        **generation,
        "endpoint_model": answer.model,
        "finish_reason": answer.finish_reason,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "reasoning_tokens": answer.reasoning_tokens,
    }
    return record


def _final_answer_check(fmt: ReasoningFormat | None) -> Callable[[ChatAnswer], str | None]:
    def check(answer: ChatAnswer) -> str | None:
        final = fmt.split(answer.content)[1] if fmt is not None else answer.content
        return None if final.strip() else f"reasoning but no final answer ({fmt.rule if fmt else ''})"

    return check


def _tasks(dataset: Dataset, prompt: PromptTemplate, stage: FirstStage | None) -> list[Task]:
    tasks = []
    for qid, text in dataset.queries.items():
        passages = stage.passages[qid] if stage is not None else None
        messages = prompt.render(text, passages)
        tasks.append(Task(qid, tuple((m["role"], m["content"]) for m in messages)))
    return tasks


def expand(
    config: ExpandConfig,
    *,
    client: Backend | None = None,
    console: Console | None = None,
) -> ExpandResult:
    """Generate, check and write one expansion set (see the module docstring)."""
    console = console or Console(stderr=True)
    started = time.perf_counter()
    dataset = load_dataset(config.dataset, split=config.split, revision=config.revision)
    prompt = config.prompt()
    fmt = choose_reasoning_format(config.reasoning_format, config.llm, config.model)
    path = output_path(config)
    stage = None
    if config.needs_engine:
        if client is None:
            raise ConfigError(f"{config.method} needs a first-stage search: a cluster connection (--url)")
        stage = first_stage(
            client,
            dataset,
            depth=config.first_stage_depth,
            bm25=config.bm25,
            progress=config.progress,
            console=console,
        )
    cache = JsonCache("generations", config.cache_dir or default_cache_dir() / "generations")
    generator = Generator(
        config.endpoint, config.model, config.settings, prompt.sha256, cache, check=_final_answer_check(fmt)
    )
    tasks = _tasks(dataset, prompt, stage)
    console.print(
        f"{dataset.name}: {config.method} with {config.model} at {config.endpoint.url()} for {len(tasks)} "
        f"queries → {path}",
        highlight=False,
        soft_wrap=True,
    )
    what = f"generating {config.method} with {config.llm}"
    with progress(what, len(tasks), unit="queries", console=console, enabled=config.progress) as bar:
        answers = generator.run(tasks, on_done=bar.advance, on_retry=lambda why: bar.set(retries=why))
    generation = {"model": config.model, "prompt_sha256": prompt.sha256, **config.settings.to_dict()}
    records = [_record(qid, dataset.queries[qid], answers[qid], fmt, generation) for qid in dataset.queries]
    file_tokens = {
        k: sum(int(r["generation"][k]) for r in records)
        for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")
    }
    meta = _meta(config, dataset, prompt, fmt, stage, generator.stats, file_tokens, records, started)
    write_jsonl_atomic(path, records)
    meta_path = path.with_name(path.name + META_SUFFIX)
    write_json_atomic(meta_path, meta)
    validated = _validate(config, path)
    return ExpandResult(
        path=path,
        meta_path=meta_path,
        queries=len(records),
        traces=sum(1 for r in records if "reasoning" in r),
        stats=generator.stats,
        validated=validated,
        file_tokens=file_tokens,
    )


def _validate(config: ExpandConfig, path: Path) -> bool:
    """Load the dataset again (every file validated) when the set is part of it; False when written elsewhere."""
    if config.output is not None and output_path(dataclasses.replace(config, output=None)) != path:
        return False
    dataset = load_dataset(config.dataset, split=config.split, revision=config.revision)
    return (config.method, config.llm) in dataset.expansions


def _meta(
    config: ExpandConfig,
    dataset: Dataset,
    prompt: PromptTemplate,
    fmt: ReasoningFormat | None,
    stage: FirstStage | None,
    stats: GenerationStats,
    file_tokens: dict[str, int],
    records: list[dict[str, Any]],
    started: float,
) -> dict[str, Any]:
    return {
        "schema": 1,
        "created": datetime.now(UTC).isoformat(),
        "harness_version": __version__,
        "dataset": {
            "name": dataset.name,
            "source": dataset.source,
            "split": dataset.split,
            "revision": dataset.revision,
            "fingerprint": dataset.fingerprint.combined,
        },
        "method": config.method,
        "llm": config.llm,
        "model": config.model,
        "endpoint": config.endpoint.describe(),
        "prompt": prompt.describe(),
        "settings": config.settings.to_dict(),
        "reasoning": {
            "format": fmt.family if fmt else None,
            "rule": fmt.rule if fmt else None,
            "queries_with_trace": sum(1 for r in records if "reasoning" in r),
        },
        "first_stage": stage.describe() if stage is not None else None,
        "queries": len(records),
        "tokens": file_tokens,
        "this_run": {**stats.to_dict(), "wall_s": round(time.perf_counter() - started, 3)},
    }

"""``harness run``'s flags as experiment keys: which key each flag sets, how it was written, and the hidden
old flags (one release of grace, each now a ``--set`` or a renamed option).

The command only collects what was given (every option defaults to None: "not given"); the experiment
builder (:func:`harness.experiment.experiment`) does the rest, so ``harness run MODE [flags]``,
``--experiment FILE`` and ``--set KEY=VALUE`` fill one typed experiment, checked once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.cli._options import Deprecated
from harness.experiment import Experiment, experiment

#: the key each visible flag of ``harness run`` sets (the run command's parameter -> (flag, key))
FLAGS: dict[str, tuple[str, str]] = {
    "mode": ("MODE", "mode"),
    "dataset": ("--dataset", "data.datasets"),
    "queries": ("--queries", "data.queries"),
    "qrels": ("--qrels", "data.qrels"),
    "split": ("--split", "data.split"),
    "embed_model": ("--embed-model", "embedding.model"),
    "expansion": ("--expansion", "expansion.method"),
    "rerank": ("--rerank", "rerank.model"),
    "fusion": ("--fusion", "fusion"),
    "tune_on": ("--tune-on", "sweep.tune_on"),
    "load": ("--load", "load.enabled"),
    "ann_sweep": ("--ann-sweep", "ann.sweep"),
    "output": ("--output", "output.dir"),
    "records": ("--records", "output.records"),
    "quiet": ("--quiet", "output.quiet"),
    "wide": ("--wide", "output.wide"),
    "url": ("--url", "connection.url"),
    "username": ("--username", "connection.username"),
    "password": ("--password", "connection.password"),
    "api_key": ("--api-key", "connection.api_key"),
    "ca_cert": ("--ca-cert", "connection.ca_cert"),
    "insecure": ("--insecure", "connection.verify"),
    "config": ("--config", "connection.config"),
}
#: flags whose value is never shown in a refusal
SECRET = frozenset({"password", "api_key"})

#: the flags ``harness run`` had before the experiment model, kept hidden for one release
DEPRECATED: tuple[Deprecated, ...] = (
    Deprecated("--model", "embed_model", short="-m"),
    Deprecated("--base-url", set_key="embedding.url"),
    Deprecated("--api-key-env", set_key="embedding.key_env"),
    Deprecated("--embed-backend", set_key="embedding.backend"),
    Deprecated("--query-prompt", set_key="embedding.query_prompt"),
    Deprecated("--document-prompt", set_key="embedding.document_prompt"),
    Deprecated("--trust-remote-code", set_key="embedding.trust_remote_code", flag=True),
    Deprecated("--revision", set_key="data.revision"),
    Deprecated("--sweep-fusion", set_key="sweep.grid"),
    Deprecated("--rerank-arm", set_key="rerank.arms", kind=list[str]),
    Deprecated("--depth", set_key="search.depth"),
    Deprecated("--num-candidates", set_key="search.num_candidates"),
    Deprecated("--batch-size", set_key="search.batch_size"),
    Deprecated("--concurrency", set_key="search.concurrency"),
    Deprecated("--timeout", set_key="search.timeout"),
    Deprecated("--max-retries", set_key="search.max_retries"),
    Deprecated("--bm25", set_key="index.bm25"),
    Deprecated("--lexical-field", set_key="index.lexical_field"),
    Deprecated("--analysis", set_key="index.analysis"),
    Deprecated("--mapping", set_key="index.mapping"),
    Deprecated("--field-map", set_key="index.field_map"),
    Deprecated("--test", set_key="stats.test"),
    Deprecated("--seed", set_key="stats.seed"),
    Deprecated("--clients", set_key="load.clients"),
    Deprecated("--duration", set_key="load.duration"),
    Deprecated("--iterations", set_key="load.iterations"),
    Deprecated("--target-throughput", set_key="load.target_throughput"),
    Deprecated("--warmup", set_key="load.warmup"),
    Deprecated("--load-timeout", set_key="load.timeout"),
    Deprecated("--ann-recall", set_key="ann.recall", flag=True),
    Deprecated("--no-ann-recall", set_key="ann.recall", flag=True, value=False),
    Deprecated("--ann-index-types", set_key="ann.index_types"),
    Deprecated("--ann-candidates", set_key="ann.candidates"),
    Deprecated("--records-url", set_key="output.records_url"),
    Deprecated("--progress", set_key="output.quiet", flag=True, value=False),
    Deprecated("--no-progress", set_key="output.quiet", new="--quiet", flag=True),
)


def _written(param: str, flag: str, value: Any) -> str:
    """How the user wrote a flag (a secret's value never shown)."""
    if param in SECRET or isinstance(value, bool):
        return flag
    if isinstance(value, list | tuple):
        return " ".join(f"{flag} {v}" for v in value)
    return f"{flag} {value}"


def _value(param: str, value: Any) -> Any:
    if param == "insecure":
        return False if value else None  # --insecure: do not verify certificates
    if isinstance(value, bool):
        return True if value else None  # a switch not given is not given
    if isinstance(value, Path):
        return str(value)
    return value


def flag_values(given: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """``{key: (value, as written)}`` of the flags given (``given``: the command's parameters)."""
    out: dict[str, tuple[Any, str]] = {}
    for param, (flag, key) in FLAGS.items():
        value = _value(param, given.get(param))
        if value is not None:
            out[key] = (value, _written(param, flag, given[param]))
    return out


def experiment_of(given: Mapping[str, Any], file: Path | None, settings: Sequence[str] | None) -> Experiment:
    """The experiment ``harness run`` was asked for: ``file`` (if any) under the flags, under ``--set``."""
    names = {key: flag for param, (flag, key) in FLAGS.items() if param != "mode"}
    return experiment(file, flags=flag_values(given), settings=settings or (), flag_names=names)

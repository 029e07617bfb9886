"""``harness run``'s flags as experiment keys (:data:`FLAGS`: one map, each flag a view of one key) and the hidden
old flags (one release of grace, each now a ``--set`` or a renamed option).

The command only collects what was given; the experiment builder (:func:`harness.experiment.build`) does the
rest, so ``harness run MODE [flags]``, ``--experiment FILE`` and ``--set KEY=VALUE`` fill one typed
experiment, checked once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.cli._common import CONNECTION_ALIASES, URL
from harness.cli._options import Deprecated
from harness.cli._views import Flag
from harness.experiment import Experiment, Layer, build

#: the help panels (``Options`` is typer's own: --help joins the output options there)
DATA, ARMS, OUT = "What to evaluate", "Arms and phases", "Options"

#: the key each visible flag of ``harness run`` sets
FLAGS: tuple[Flag, ...] = (
    Flag("mode", ("MODE",)),
    Flag("data.datasets", ("--dataset", "-d"), DATA, metavar="NAME"),
    Flag("data.queries", ("--queries",), DATA, metavar="FILE"),
    Flag("data.qrels", ("--qrels",), DATA, metavar="FILE"),
    Flag("data.split", ("--split",), DATA, metavar="NAME"),
    Flag("embedding.model", ("--embed-model",), ARMS, metavar="MODEL"),
    Flag("expansion.method", ("--expansion",), ARMS, metavar="METHOD"),
    Flag("rerank.model", ("--rerank",), ARMS, metavar="MODEL"),
    Flag("fusion", ("--fusion",), ARMS, metavar="SPEC"),
    Flag("sweep.tune_on", ("--tune-on",), ARMS, metavar="HOW"),
    Flag("load.enabled", ("--load",), ARMS),
    Flag("ann.sweep", ("--ann-sweep",), ARMS),
    Flag("output.dir", ("--output", "-o"), OUT, metavar="DIR"),
    Flag("output.records", ("--records",), OUT, metavar="SINKS"),
    Flag("output.quiet", ("--quiet", "-q"), OUT),
    Flag("output.wide", ("--wide",), OUT),
    URL,
)


def run_experiment(file: Layer | None, layers: Sequence[Layer], names: Mapping[str, str]) -> Experiment:
    """The experiment ``harness run`` was asked for: ``file`` (if any) under the flags, under ``--set``."""
    return build(file, layers, flags=names)


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
    *CONNECTION_ALIASES,
)

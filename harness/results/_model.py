"""The typed results of a run: what ``results.json`` holds, and what every reader reads.

``RunResults`` is the whole file: a schema version, one :class:`DatasetResult` per
dataset (arms with their metrics, intervals and timings, paired significance tests,
the paper's baselines) and the run's :class:`Manifest`. Records are frozen; build them
once (the runner's assemble step), then write them with :meth:`RunResults.save` and
read them back with :meth:`RunResults.load`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from base import write_json_atomic
from harness._errors import RunError
from harness.eval import Comparison, FusionSpec, Overlap
from harness.results._codec import decode, encode
from harness.results._judge import JudgmentsUsed
from harness.results._perf import AnnRecall, AnnSweep, LoadResult, LoadSettings, SweepSettings
from harness.results._tuning import HeldOutSweep, TuningChoices
from indexer import Capabilities

#: the version of the results.json layout (the JSON Schema is ``results-v<N>.schema.json``).
#: 2: an arm's relevance-pass timing is ``batch_ms`` (was ``latency_ms``: it never was per-query latency);
#: arms gained ``load`` and ``ann``, datasets ``ann_sweep`` and ``overlap``. Version 1 files are still read.
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
RESULTS_FILE = "results.json"
#: the run directory's manifest (written when the run starts, and last when it finishes) and its Markdown report
MANIFEST_FILE = "manifest.json"
REPORT_FILE = "report.md"
PERCENTILES = (50, 95, 99)


@dataclass(frozen=True, slots=True)
class Percentiles:
    """p50/p95/p99 of a list of milliseconds (0 when the list is empty)."""

    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0

    @classmethod
    def of(cls, values: Sequence[float]) -> Percentiles:
        if not values:
            return cls()
        arr = np.asarray(values, dtype=float)
        p50, p95, p99 = (round(float(np.percentile(arr, p)), 3) for p in PERCENTILES)
        return cls(p50, p95, p99)


@dataclass(frozen=True, slots=True)
class ArmTarget:
    """Where an experiment's arm searched and how (``harness run --experiment``; None for built-in arms).

    ``missing_judged`` lists the judged documents (any grade) the arm's index does not hold, matched
    by ``id_field``: they still count in the ideal ranking, so they cap what the arm can score.
    """

    index: str = ""
    url: str = ""
    template: str = ""  # the template file (or "FILE: arms[i].template" when inline)
    id_field: str = "_id"
    fusion: str | None = None  # a fused arm's spec
    inputs: tuple[str, ...] = ()  # a fused arm's arms
    judged: int = 0  # distinct judged documents of the evaluated queries
    missing_judged: tuple[str, ...] = ()
    missing_relevant: int = 0  # of those, how many are judged relevant (grade > 0)


@dataclass(frozen=True, slots=True)
class ArmResult:
    """One arm on one dataset: mean metrics, 95% bootstrap intervals, timings.

    The relevance pass sends queries in msearch batches, so its timings are what they are:
    ``batch_ms`` is the client round trip of the msearch request that carried each query (many
    queries share one), ``engine_took_ms`` the engine's time per search, ``qps`` queries over the
    pass's wall time. Per-request service time and latency come from the load phase (``load``).
    """

    metrics: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    batch_ms: Percentiles = field(metadata={"json": "batch_ms", "legacy": ("latency_ms",)})
    engine_took_ms: Percentiles
    qps: float | None
    queries: int
    empty_queries: tuple[str, ...] = ()
    retries: int = 0
    load: LoadResult | None = None
    ann: AnnRecall | None = None
    #: (lexical, vector) weights of an in-engine weighted sum (``hybrid-engine-sum``); None for other arms
    weights: tuple[float, float] | None = None
    #: --tune-on kfold: the in-engine sum's (lexical, vector) weights of each fold, fitted on the other folds
    fold_weights: tuple[tuple[float, float], ...] = ()
    #: an experiment arm's index, template and the judged documents its index lacks
    target: ArmTarget | None = None

    def metric(self, key: str) -> float | None:
        return self.metrics.get(key)


@dataclass(frozen=True, slots=True)
class PaperBaseline:
    """A published R2MED score shown beside ours (fraction 0-1)."""

    system: str
    score: float


@dataclass(frozen=True, slots=True)
class DatasetResult:
    """Every arm of one dataset, their paired tests, the paper's baselines and where it ran.

    ``overlap`` holds, for the same pairs as the paired tests, how much the two arms' rankings
    agree without judgments: mean overlap@k and RBO_ext (per query in ``overlap.jsonl``).
    """

    arms: dict[str, ArmResult]
    significance: tuple[Comparison, ...] = ()
    paper: dict[str, PaperBaseline] = field(default_factory=dict)
    index: str = ""
    mapping_hash: str | None = None
    fusion: FusionSpec | None = None
    timings: dict[str, float] = field(default_factory=dict)
    fingerprint: str = ""
    ann_sweep: AnnSweep | None = None
    overlap: tuple[Overlap, ...] = ()
    sweep: HeldOutSweep | None = None  # --tune-on: the fused arm's held-out score and in-sample best
    #: which judgments scored the figures (None: the dataset's own), with a judge's provenance and agreement
    judgments: JudgmentsUsed | None = None

    @property
    def queries(self) -> int:
        return max((arm.queries for arm in self.arms.values()), default=0)

    def significantly_different(self, arm: str, measure: str) -> list[str]:
        """Arms that ``arm`` differs from significantly on ``measure`` (either side of a tested pair)."""
        return [
            c.arm_b if c.arm_a == arm else c.arm_a
            for c in self.significance
            if arm in (c.arm_a, c.arm_b) and c.measure == measure and c.significant
        ]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """The embedding model of the vector arms."""

    id: str
    revision: str
    field: str
    query_prompt: str = ""
    document_prompt: str = ""
    backend: str = "torch"  # what computed the vectors (--embed-backend) and at which precision
    precision: str = "fp32"
    pooling: str | None = None  # set when the folder named none and the harness's default applied
    similarity: str = "cosine"  # the model's declared similarity (vectors are unit length either way)
    trust_remote_code: bool = False  # the model's own Python code ran (--trust-remote-code)
    chosen_by: str | None = None  # why these numerics, when --embed-backend auto chose them

    @property
    def label(self) -> str:
        return f"{self.id}@{self.revision}"


@dataclass(frozen=True, slots=True)
class ReasoningSplit:
    """How a reasoning model's traces were split off an expansion set (never searched with)."""

    format: str | None = None  # the family row of harness/expand/_reasoning.py, None for a plain model
    rule: str | None = None
    queries_with_trace: int = 0
    trace_words_mean: float = 0.0
    answer_words_mean: float = 0.0
    no_answer: tuple[str, ...] = ()  # searched with the query alone: the trace had no answer after it


@dataclass(frozen=True, slots=True)
class ExpansionInfo:
    """The expansion set the ``+<method>`` arms searched with, and where it came from."""

    label: str
    method: str
    llm: str
    content_sha256: str
    queries: int
    file: str | None = None
    prompt_sha256: tuple[str, ...] = ()
    reasoning: ReasoningSplit = field(default_factory=ReasoningSplit)


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    """What was evaluated: where the data came from, its size and its content hashes."""

    source: str
    split: str | None
    queries: int
    documents: int
    fingerprint: dict[str, str]
    revision: str | None = None  # the hub commit of r2med/<Name>; None for folders and the sample
    expansion: ExpansionInfo | None = None
    #: which document vectors the run's index holds, where vectors ship for the corpus ("bundled for the
    #: sample, verified", or why they were embedded instead); None: embedded, nothing shipped for it
    vectors: str | None = None


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """The cluster: how it was reached (no secret) and what the probe found."""

    connection: dict[str, Any]
    capabilities: Capabilities
    auth: str = ""
    """How requests authenticated: none, basic, api-key or sigv4 (never a secret); empty in runs made before."""
    serverless: bool = False
    """Whether the cluster is a serverless project (Elastic Cloud Serverless, Amazon OpenSearch Serverless)."""

    @property
    def version(self) -> str:
        """The engine's version as the cluster said it (empty where a serverless service does not say)."""
        return self.capabilities.version


@dataclass(frozen=True, slots=True)
class JudgmentsApplied:
    """One judgments file applied to one dataset of a re-scored run, and what it changed."""

    dataset: str
    path: str
    format: str
    sha256: str
    judgments: int
    """Graded pairs of the file for the dataset's queries."""
    added: int
    """Pairs the run's judgments did not judge before."""
    changed: int
    """Pairs judged before with another grade (the file's grade wins)."""
    unknown: int = 0
    """Judgments for queries the dataset does not hold (left out)."""
    ungraded: int = 0
    """Rows of the file with no grade yet (left out)."""
    qrels_file: str = ""
    """The judgments the re-scored run was scored with, inside its directory."""
    judge: str | None = None
    """The id of the LLM judge whose labels the file holds (its provenance beside the file); None: not a judge's."""


@dataclass(frozen=True, slots=True)
class RescoreInfo:
    """A run re-scored with other judgments from its TREC files, without re-querying."""

    source_run: str
    source_dir: str
    created: str
    mode: str
    """``merge`` (the file's judgments added to the run's, its grade winning), ``fill`` (added only where the
    run's judge nothing) or ``replace`` (the file's alone)."""
    judgments: tuple[JudgmentsApplied, ...] = ()


@dataclass(frozen=True, slots=True)
class EvalSettings:
    """How the run was scored (``eval.*``): trec_eval's relevance level and ``-c``, and the protocol."""

    protocol: str = "trec_eval"
    relevance_level: int = 1
    complete: bool = True
    """trec_eval's ``-c``: judged queries without results counted (as 0) in the means."""

    @property
    def label(self) -> str:
        """``trec_eval`` (its defaults), or what differs: ``r2med (mean over queries with results)``, ``-l 2``."""
        parts = [self.protocol]
        if self.relevance_level != 1:
            parts.append(f"-l {self.relevance_level}")
        parts.append("-c" if self.complete else "mean over queries with results")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Manifest:
    """What ran, with what, where and when: enough to reproduce the run."""

    run_id: str
    config_hash: str
    created: str
    mode: str
    engine: EngineInfo
    datasets: dict[str, DatasetInfo]
    config: dict[str, Any]
    harness_version: str
    git_sha: str | None = None
    python: str = ""
    status: str = "running"
    finished: str | None = None
    fusion: FusionSpec | None = None
    fusion_tuned: dict[str, FusionSpec] = field(default_factory=dict)
    model: ModelInfo | None = None
    rescore: RescoreInfo | None = None
    """Set when this run was re-scored from another run's TREC files (``harness rescore``)."""
    #: the load phase's settings (``--load``), when it ran
    load_phase: LoadSettings | None = field(default=None, metadata={"json": "load"})
    ann_sweep: SweepSettings | None = None  # what ``--ann-sweep`` covered, when it ran
    #: the analysis chain of the run's indices (english | hunspell | standard)
    analysis: str | None = None
    #: per dataset, what --tune-on chose for its fused arm, fold by fold
    tuning: dict[str, TuningChoices] = field(default_factory=dict)
    #: how the arms were scored (``eval.*``); absent in runs made before it was recorded (trec_eval's, -c)
    evaluation: EvalSettings | None = field(default=None, metadata={"json": "eval"})
    #: what the run could not do on this engine (an arm skipped, and why); the probe's own notes are the
    #: capabilities' ``notes``. The terminal says it in one line; the report lists both
    notices: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data

    @classmethod
    def load(cls, path: Path) -> Manifest:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(f"{path}: expected a run manifest (JSON), could not read it: {exc}") from None
        manifest: Manifest = decode(cls, data, str(path))
        return manifest

    def save(self, run_dir: Path) -> Path:
        """``run_dir/manifest.json``, written atomically."""
        path = Path(run_dir) / MANIFEST_FILE
        write_json_atomic(path, self.to_json())
        return path

    def facts(self) -> list[tuple[str, str]]:
        """The header facts of a report (what ran, with what, where), empty ones left out."""
        facts = [
            ("created", self.created),
            ("mode", self.mode),
            ("fusion", str(self.fusion) if self.fusion else None),
            ("model", self.model.label if self.model else None),
            ("engine", f"{self.engine.capabilities.flavour} {self.engine.version}"),
            ("analysis", self.analysis),
            ("scored with", self.evaluation.label if self.evaluation else None),
            ("harness", self.harness_version),
            ("git", self.git_sha),
            ("rescored from", self.rescore.source_run if self.rescore else None),
        ]
        return [(k, str(v)) for k, v in facts if v]

    def engine_notes(self) -> list[str]:
        """What this engine lacked and how the run did without: the probe's notes, then the skipped arms."""
        return [*self.engine.capabilities.notes, *self.notices]

    def vectors(self) -> list[str]:
        """Which document vectors each dataset's index held, where vectors ship for its corpus."""
        return [f"{name}: {info.vectors}" for name, info in self.datasets.items() if info.vectors]


@dataclass(frozen=True, slots=True)
class RunResults:
    """The whole of ``results.json``."""

    datasets: dict[str, DatasetResult]
    manifest: Manifest
    schema_version: int = SCHEMA_VERSION

    @property
    def arms(self) -> list[str]:
        """Every arm name, in first-seen order across datasets."""
        return list(dict.fromkeys(arm for d in self.datasets.values() for arm in d.arms))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return {"schema_version": data.pop("schema_version"), **data}

    @classmethod
    def from_json(cls, data: Any, source: str = RESULTS_FILE) -> RunResults:
        if not isinstance(data, dict):
            raise RunError(f"{source}: expected a results object, found {type(data).__name__}")
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS:
            raise RunError(
                f"{source}: expected schema_version {' or '.join(map(str, READABLE_VERSIONS))}, found {version!r} "
                "(written by another version of r2med-harness; re-run it, or use the matching harness)"
            )
        try:
            result: RunResults = decode(cls, {**data, "schema_version": SCHEMA_VERSION}, "")
        except RunError as exc:
            raise RunError(f"{source}: {exc}") from None
        return result

    def save(self, run_dir: Path) -> Path:
        path = Path(run_dir) / RESULTS_FILE
        write_json_atomic(path, self.to_json())
        return path

    @classmethod
    def load(cls, run_dir: Path) -> RunResults:
        path = Path(run_dir) / RESULTS_FILE
        if not path.is_file():
            raise RunError(
                f"{run_dir} is not a finished run directory: expected {RESULTS_FILE} in it, found none"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise RunError(f"{path} is not valid JSON: {exc}") from None
        return cls.from_json(data, str(path))

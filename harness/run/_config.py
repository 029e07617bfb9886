"""``RunConfig``: everything a run is asked to do, validated once, whoever builds it.

The CLI, a config file and Python code all build this one record, so a bad value fails
the same way from each (a :class:`ConfigError` that says what was expected and what was
found). Strings the CLI passes (``fusion="wsum:weights=0.3/0.7"``, ``records="jsonl,es"``)
are parsed here into their typed forms.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from harness._search import SearchOptions
from harness.ann import SweepOptions
from harness.eval import DEFAULT_MEASURES, FUSION_METHODS, PARAM_WEIGHTS, STAT_TESTS, FusionSpec
from harness.load import LoadOptions
from harness.rerank import RerankSpec
from harness.sinks import SINKS
from harness.strategies import LEXICAL_FIELDS, MODES
from harness.sweep import SweepSpec, TuneOn, parse_tune_on
from indexer import (
    ANALYSIS_CHAINS,
    BM25_FIELDS,
    DEFAULT_EMBED_BACKEND,
    ConfigError,
    UserMapping,
    check_backend_name,
    load_user_mapping,
)

#: the mode of a run whose arms an experiment file declares (``harness run --experiment FILE``)
EXPERIMENT_MODE = "experiment"
MAX_DEPTH = 1000
MAX_CANDIDATES = 10_000
NO_RECORDS = "none"
#: the in-engine weighted sum's (lexical, vector) weights when neither --fusion nor --tune-on gives any
DEFAULT_SUM_WEIGHTS = (1.0, 1.0)


def _records(value: tuple[str, ...] | str) -> tuple[str, ...]:
    names = value.split(",") if isinstance(value, str) else value
    sinks = tuple(s.strip() for s in names if s.strip() and s.strip() != NO_RECORDS)
    unknown = sorted(set(sinks) - set(SINKS))
    if unknown:
        raise ConfigError(
            f"expected record sinks among {', '.join(SINKS)} (or {NO_RECORDS}), found {', '.join(unknown)}"
        )
    return sinks


def _choice(what: str, value: str, known: object) -> None:
    names = list(known)  # type: ignore[call-overload]
    if value not in names:
        raise ConfigError(f"expected {what} in {names}, found {value!r}")


@dataclass(frozen=True, slots=True)
class RunConfig:
    mode: str
    datasets: tuple[str, ...] = ("r2med",)
    split: str | None = None
    revision: str | None = None  # hub revision of r2med/<Name> (default: the pinned commit)
    model: str = "minilm"
    base_url: str | None = None  # OpenAI-compatible endpoint for openai:MODEL embeddings
    api_key_env: str | None = None  # the variable holding its key (never the key itself)
    query_prompt: str | None = None
    document_prompt: str | None = None
    trust_remote_code: bool = False  # let a model's own Python code run (--trust-remote-code)
    embed_backend: str = DEFAULT_EMBED_BACKEND
    fusion: FusionSpec | str = "rrf"
    tune_on: str | None = None  # a split name (train), kfold or kfold:K (harness.sweep.parse_tune_on)
    sweep: SweepSpec | str | None = None  # --sweep-fusion: the grid --tune-on chooses from
    expansion: str | None = None
    rerank: str | None = None
    rerank_arms: tuple[str, ...] = ()
    depth: int = 100
    num_candidates: int | None = None
    bm25: str = "es"
    lexical_field: str = "combined"
    analysis: str | None = None  # english | hunspell | standard; None: the engine's best chain
    mapping: Path | None = None  # the user's index-creation body (--mapping), read into user_mapping
    field_map: str | None = None  # --field-map title=..,text=..,vector=..
    search: SearchOptions = field(default_factory=SearchOptions)
    measures: tuple[str, ...] = tuple(m.key for m in DEFAULT_MEASURES)
    test: str = "randomization"
    alpha: float = 0.05
    seed: int = 42
    output: Path | None = None
    records: tuple[str, ...] | str = ("jsonl", "es")
    records_url: str | None = None
    progress: bool = True
    load: LoadOptions | None = None  # the load phase after the relevance pass (--load)
    ann_recall: bool = True  # recall of every vector arm against exact search (client-side)
    ann_sweep: SweepOptions | None = None  # --ann-sweep
    #: ``mapping`` and ``field_map`` read and checked (by __post_init__)
    user_mapping: UserMapping | None = field(default=None, init=False, repr=False, compare=False)
    experiment: str | None = None  # the experiment file whose arms run (mode "experiment")

    def __post_init__(self) -> None:
        self._check_experiment()
        if self.mode != EXPERIMENT_MODE:
            _choice("a mode", self.mode, MODES)
        _choice("--bm25", self.bm25, BM25_FIELDS)
        _choice("--lexical-field", self.lexical_field, LEXICAL_FIELDS)
        _choice("--test", self.test, STAT_TESTS)
        check_backend_name(self.embed_backend)
        if self.analysis is not None:
            _choice("--analysis", self.analysis, ANALYSIS_CHAINS)
        if not self.datasets:
            raise ConfigError("expected at least one dataset (--dataset), found none")
        if not 10 <= self.depth <= MAX_DEPTH:
            raise ConfigError(f"expected --depth between 10 and {MAX_DEPTH}, found {self.depth}")
        if self.num_candidates is not None and not self.depth <= self.num_candidates <= MAX_CANDIDATES:
            raise ConfigError(
                f"expected --num-candidates between depth ({self.depth}) and {MAX_CANDIDATES}, "
                f"found {self.num_candidates}"
            )
        if not 0 < self.alpha < 1:
            raise ConfigError(f"expected a significance level alpha between 0 and 1, found {self.alpha}")
        if self.tune_on is not None and self.mode not in ("hybrid", EXPERIMENT_MODE):
            raise ConfigError("--tune-on tunes fusion weights, so it needs the hybrid mode")
        if self.sweep is not None and self.tune_on is None:
            raise ConfigError(
                "--sweep-fusion needs --tune-on train or kfold[:K]: expected held-out queries to score the "
                "chosen configuration on, found none (the best in-sample score is optimistic)"
            )
        if self.tune_on is not None:
            parse_tune_on(self.tune_on)
        if isinstance(self.sweep, str):
            object.__setattr__(self, "sweep", SweepSpec.parse(self.sweep))
        if self.rerank is not None:
            RerankSpec.parse(self.rerank)
            unknown = [a for a in self.rerank_arms if a.split("+")[0] not in MODES[self.mode]]
            if unknown:
                raise ConfigError(f"expected --rerank-arm among {list(MODES[self.mode])}, found {unknown}")
        elif self.rerank_arms:
            raise ConfigError("--rerank-arm names arms to rerank, so it needs --rerank MODEL")
        if self.ann_sweep is not None and not any(a != "lexical" for a in MODES[self.mode]):
            raise ConfigError(
                f"--ann-sweep sweeps the vector arm's kNN: expected mode vector or hybrid, found {self.mode}"
            )
        object.__setattr__(self, "records", _records(self.records))
        object.__setattr__(self, "fusion", self._fusion_spec())
        object.__setattr__(self, "user_mapping", self._user_mapping())

    def _user_mapping(self) -> UserMapping | None:
        if self.mapping is None:
            if self.field_map is not None:
                raise ConfigError(
                    "--field-map says where --mapping keeps the corpus, so it needs --mapping FILE"
                )
            return None
        conflicts = {
            "--analysis": self.analysis is not None,  # the user's body brings its analysis
            f"--bm25 {self.bm25}": self.bm25 != "es",  # ... and its similarity (no .r2med sub-fields)
            "--ann-sweep": self.ann_sweep is not None,  # the sweep builds indices of our own mapping
        }
        clash = [flag for flag, on in conflicts.items() if on]
        if clash:
            raise ConfigError(
                f"--mapping {self.mapping} brings its own analysis, similarity and vector field: expected "
                f"no {', '.join(clash)} with it"
            )
        return load_user_mapping(self.mapping, self.field_map)

    def _check_experiment(self) -> None:
        if (self.mode == EXPERIMENT_MODE) != (self.experiment is not None):
            raise ConfigError(
                f"expected an experiment file with the {EXPERIMENT_MODE} mode (--experiment FILE) and no mode "
                f"with it, found mode {self.mode!r} and experiment {self.experiment!r}"
            )
        if self.experiment is None:
            return
        unsupported = {
            "--expansion": self.expansion,
            "--rerank": self.rerank,
            "--load": self.load,
            "--ann-sweep": self.ann_sweep,
        }
        given = [flag for flag, value in unsupported.items() if value is not None]
        if given:
            raise ConfigError(f"an experiment run does not take {', '.join(given)} (yet): found them given")

    def _fusion_spec(self) -> FusionSpec:
        if isinstance(self.fusion, FusionSpec):
            return self.fusion
        text = self.fusion
        method = FUSION_METHODS.get(text.split(":", 1)[0].strip().lower())
        if self.tune_on and method is not None and PARAM_WEIGHTS in method.params and "weights=" not in text:
            # equal weights as the starting point; tuning replaces them with weights fitted on the train split
            text = f"{text}{',' if ':' in text else ':'}weights=0.5/0.5"
        return FusionSpec.parse(text)

    @property
    def fusion_spec(self) -> FusionSpec:
        assert isinstance(self.fusion, FusionSpec)  # normalised by __post_init__
        return self.fusion

    @property
    def tuning(self) -> TuneOn | None:
        """``--tune-on`` parsed: a train split or k folds."""
        return parse_tune_on(self.tune_on) if self.tune_on is not None else None

    @property
    def sweep_spec(self) -> SweepSpec:
        """The grid ``--tune-on`` chooses from: ``--sweep-fusion``, or the ``--fusion`` method's parameters."""
        return self.sweep if isinstance(self.sweep, SweepSpec) else SweepSpec.for_method(self.fusion_spec)

    @property
    def sum_weights(self) -> tuple[float, float]:
        """(lexical, vector) weights of the in-engine weighted sum: --fusion's two weights, if it has them."""
        weights = self.fusion_spec.weights
        if weights is not None and len(weights) == 2:
            return (weights[0], weights[1])
        return DEFAULT_SUM_WEIGHTS

    @property
    def rerank_spec(self) -> RerankSpec | None:
        return RerankSpec.parse(self.rerank) if self.rerank is not None else None

    @property
    def sinks(self) -> tuple[str, ...]:
        assert isinstance(self.records, tuple)  # normalised by __post_init__
        return self.records

    def identity(self) -> dict[str, Any]:
        """Everything that changes results (not where they go, how they travel or how progress looks)."""
        data = asdict(self)
        # the model is in the identity through its spec, the data through its fingerprints
        for key in (
            "output",
            "records",
            "records_url",
            "progress",
            "search",
            "model",
            "query_prompt",
            "document_prompt",
            "trust_remote_code",  # lets a model load; what it computes is in the model identity
            "embed_backend",  # the model identity carries the numerics it resolves to
            "rerank",
            "revision",
            "load",  # performance phases measure the arms' searches, they never change their results
            "ann_recall",
            "ann_sweep",
            "mapping",  # the user mapping is in the identity through its hash and field map (below)
            "field_map",
            "user_mapping",
            "experiment",  # an experiment's identity is its arms (added by its plan), not where the file is
        ):
            data.pop(key)
        if self.user_mapping is not None:  # absent otherwise, so runs without one keep their hash
            data["user_mapping"] = self.user_mapping.identity()
        for key in ("base_url", "api_key_env"):  # where the endpoint is does not change what it computes
            data.pop(key)
        data["fusion"] = str(self.fusion_spec)
        if self.sweep is None:
            data.pop("sweep")  # runs made before --sweep-fusion keep their hash
        else:
            data["sweep"] = self.sweep_spec.canonical()
        return data

    def with_output(self, output: Path) -> RunConfig:
        return replace(self, output=output)

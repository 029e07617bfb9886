"""The checks of an experiment's keys together (each value was checked alone against its field first).

Each check names the key it refuses through :meth:`Origins.fail`, so the message starts with what the
user wrote, and other keys in it (``{sweep.tune_on}``) are spelled as that source spells keys.
"""

from __future__ import annotations

from collections.abc import Callable

from base import ConfigError
from harness.eval import FUSION_METHODS, PARAM_WEIGHTS, PRIMARY_MEASURE, parse_measures
from harness.expand import parse_expansion
from harness.experiment._model import Experiment
from harness.experiment._tables import MAX_CANDIDATES, IndexTable
from harness.inspect import NEEDED_MEASURES
from harness.keys import Origins
from harness.rerank import RerankSpec
from harness.strategies import MODES
from harness.sweep import SweepSpec, parse_tune_on
from indexer import FieldMapError, UserMapping, load_user_mapping

Check = Callable[[Experiment, set[str], Origins], None]


def _arms(exp: Experiment, given: set[str], origins: Origins) -> None:
    if exp.mode is not None and exp.arms:
        raise origins.fail(
            "mode", "expected a mode or the experiment's own [[arms]], exactly one, found both"
        )
    if exp.mode is None and not exp.arms:
        if origins.file is not None:
            raise origins.fail("arms", "expected at least one [[arms]] table (or a mode), found none")
        raise ConfigError(
            f"expected a mode ({', '.join(MODES)}) or --experiment FILE, exactly one, found neither"
        )


def _data(exp: Experiment, given: set[str], origins: Origins) -> None:
    data = exp.data
    if data.queries is not None and ("data.datasets" in given or "datasets" in given):
        raise origins.fail("data.datasets", "expected datasets or queries + qrels, found both")
    if (data.queries is None) != (data.qrels is None):
        missing = "data.qrels" if data.qrels is None else "data.queries"
        raise origins.fail(
            "data.queries" if data.queries is not None else "data.qrels",
            f"expected queries and their judgments together, found no {{{missing}}}",
        )
    if data.queries is None:
        return
    if not exp.arms:
        raise origins.fail(
            "data.queries",
            "goes with the experiment's own [[arms]], which name the index to search: there is no dataset "
            "to build one from",
        )
    for i, arm in enumerate(exp.arms):
        if arm.index is None:
            raise origins.fail(
                f"arms[{i}].index",
                "expected the index to search: with queries and qrels files there is no dataset to build one from",
            )


def _search(exp: Experiment, given: set[str], origins: Origins) -> None:
    depth, candidates = exp.search.depth, exp.search.num_candidates
    if candidates is not None and not depth <= candidates <= MAX_CANDIDATES:
        raise origins.fail(
            "search.num_candidates",
            f"expected between depth ({depth}) and {MAX_CANDIDATES}, found {candidates}",
        )
    _measures(exp, origins)


#: what reads the run's measures (``stats.measures``), and which it needs: checked before any work
MEASURE_READERS: tuple[tuple[str, Callable[[Experiment], tuple[str, ...]]], ...] = (
    ("the paired tests, the intervals and tuning compare arms on it", lambda exp: (PRIMARY_MEASURE.key,)),
    (
        "the evaluation records keep it per query; {output.records} none writes none",
        lambda exp: NEEDED_MEASURES if exp.output.sinks else (),
    ),
)


def _measures(exp: Experiment, origins: Origins) -> None:
    """The measures parse, and hold every one that a later stage reads."""
    try:
        measured = [m.key for m in parse_measures(exp.stats.measures)]
    except ConfigError as exc:
        raise origins.fail("stats.measures", str(exc)) from None
    for reader, needs in MEASURE_READERS:
        missing = [m for m in needs(exp) if m not in measured]
        if missing:
            raise origins.fail(
                "stats.measures",
                f"expected {', '.join(missing)} among the measures ({reader}), found {', '.join(measured)}",
            )


def _sweep(exp: Experiment, given: set[str], origins: Origins) -> None:
    sweep = exp.sweep
    if sweep.grid is not None and sweep.tune_on is None:
        raise origins.fail(
            "sweep.grid",
            "needs {sweep.tune_on} train or kfold[:K]: expected held-out queries to score the chosen "
            "configuration on, found none (the best in-sample score is optimistic)",
        )
    if sweep.tune_on is None:
        if sweep.arm is not None:
            raise origins.fail("sweep.arm", "names the arm to tune, so it needs {sweep.tune_on}")
        return
    for name, text, parse in (
        ("sweep.tune_on", sweep.tune_on, parse_tune_on),
        ("sweep.grid", sweep.grid, SweepSpec.parse),
    ):
        try:
            parse(text) if text is not None else None
        except ConfigError as exc:
            raise origins.fail(name, str(exc)) from None
    if exp.mode is not None and exp.mode != "hybrid":
        raise origins.fail("sweep.tune_on", "tunes fusion weights, so it needs the hybrid mode")
    if exp.arms and not exp.fused:
        raise origins.fail(
            "sweep.tune_on", "expected a [[fused]] arm to tune (the sweep chooses its fusion), found none"
        )
    names = [f.name for f in exp.fused]
    if exp.arms and sweep.arm is not None and sweep.arm not in names:
        raise origins.fail(
            "sweep.arm", f"unknown fused arm {sweep.arm!r}: expected one of {', '.join(names)}"
        )


def arm_names(exp: Experiment) -> list[str]:
    """The arms an experiment runs before any expansion or rerank: the mode's, or the file's own."""
    if exp.mode is not None:
        return list(MODES[exp.mode])
    return [a.name for a in exp.arms] + [f.name for f in exp.fused]


def _rerank(exp: Experiment, given: set[str], origins: Origins) -> None:
    rerank = exp.rerank
    if rerank.model is None:
        if rerank.arms:
            raise origins.fail("rerank.arms", "names arms to rerank, so it needs {rerank.model}")
        return
    try:
        spec = RerankSpec.parse(rerank.model)
    except ConfigError as exc:
        raise origins.fail("rerank.model", str(exc)) from None
    if rerank.depth is not None and "@" in rerank.model and spec.depth != rerank.depth:
        raise origins.fail(
            "rerank.depth", "expected the depth in {rerank.model} (@DEPTH) or here, found both"
        )
    names = arm_names(exp)
    unknown = [a for a in rerank.arms if a.split("+")[0] not in names]
    if unknown:
        raise origins.fail("rerank.arms", f"expected arms among {names}, found {unknown}")


def _vectors(exp: Experiment, given: set[str], origins: Origins) -> None:
    if exp.ann.sweep and not _has_vector_arm(exp):
        raise origins.fail(
            "ann.sweep", f"sweeps the vector arm's kNN: expected mode vector or hybrid, found {exp.label}"
        )
    if exp.expansion.method is not None:
        try:
            parse_expansion(exp.expansion.method)
        except ConfigError as exc:
            raise origins.fail("expansion.method", str(exc)) from None
    if exp.load.duration is not None and exp.load.iterations is not None:
        raise origins.fail("load.duration", "expected {load.duration} or {load.iterations}, found both")


def _has_vector_arm(exp: Experiment) -> bool:
    if exp.mode is not None:
        return any(a != "lexical" for a in MODES[exp.mode])
    return any(a.needs_vector and a.stored_template is None for a in exp.arms)


def _mapping(exp: Experiment, given: set[str], origins: Origins) -> None:
    index = exp.index
    if index.mapping is None:
        return
    if exp.ann.sweep:  # the sweep builds indices of our own mapping
        raise origins.fail(
            "index.mapping",
            f"{index.mapping} brings its own analysis, similarity and vector field: expected no "
            "{ann.sweep} with it",
        )


def _connection(exp: Experiment, given: set[str], origins: Origins) -> None:
    try:
        exp.connection_settings()
    except ConfigError as exc:
        raise origins.fail("connection", str(exc)) from None


def _judgments(exp: Experiment, given: set[str], origins: Origins) -> None:
    source = exp.judgments.spec
    if not source.labels and "judgments.mode" in given:
        raise origins.fail(
            "judgments.mode",
            "says how a source's labels meet the dataset's: expected a {judgments.source} that brings "
            f"labels, found {source.name} (the dataset's own judgments)",
        )
    if source.after_search and exp.sweep.tune_on is not None:
        raise origins.fail(
            "judgments.source",
            f"{source.name} labels the arms' results after they are searched and tuned: expected no "
            "{sweep.tune_on} with it (held-out tuning chooses on judgments that exist before the search)",
        )
    names = set(arm_names(exp))
    unknown = [a for a in source.named_arms if a.split("+")[0].split(">")[0] not in names]
    if unknown:
        raise origins.fail("judgments.arms", f"expected arms among {sorted(names)}, found {unknown}")


CHECKS: tuple[Check, ...] = (
    _arms,
    _data,
    _search,
    _sweep,
    _rerank,
    _vectors,
    _mapping,
    _connection,
    _judgments,
)


def check(exp: Experiment, given: set[str], origins: Origins) -> None:
    """Every check of the keys together; ``given``: the keys the user gave (the others are defaults)."""
    for run_check in CHECKS:
        run_check(exp, given, origins)


def tuned_text(text: str, tuned: bool) -> str:
    """A fusion's text as runs use it: tuned, a method with weights starts from equal ones (tuning replaces
    them with weights chosen held out)."""
    method = FUSION_METHODS.get(text.split(":", 1)[0].strip().lower())
    if tuned and method is not None and PARAM_WEIGHTS in method.params and "weights=" not in text:
        return f"{text}{',' if ':' in text else ':'}weights=0.5/0.5"
    return text


def read_mapping(index: IndexTable, origins: Origins) -> UserMapping | None:
    """``index.mapping`` read and checked with its field map (``harness index`` and ``harness run`` alike)."""
    if index.mapping is None:
        return None
    try:
        return load_user_mapping(index.mapping, index.field_map)
    except FieldMapError as exc:  # the field map does not parse: it is what the user wrote wrong
        raise origins.fail("index.field_map", str(exc)) from None
    except ConfigError as exc:
        raise origins.fail("index.mapping", str(exc)) from None

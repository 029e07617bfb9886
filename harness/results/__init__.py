"""The typed results of a run, and reading a run directory through them.

Public surface::

    RunResults.load(run_dir) / .save(run_dir) / .to_json() / .from_json(data)
    RunResults -> DatasetResult -> ArmResult (metrics, ci95, Percentiles), Comparison, PaperBaseline
    Manifest (EngineInfo, DatasetInfo (ExpansionInfo, ReasoningSplit), ModelInfo, RescoreInfo, EvalSettings)
    trec_path(run_dir, dataset, arm), load_ranking(path), rank_run(ranking)   runs/<dataset>/<arm>.trec
    ArmResult.load (LoadResult, Distribution), ArmResult.ann (AnnRecall), DatasetResult.ann_sweep
    (AnnSweep, AnnPoint, SweepSettings); Manifest.load (LoadSettings)
    DatasetResult.sweep (HeldOutSweep), Manifest.tuning (TuningChoices, SweepFold)   --tune-on
    QueryScores, load_per_query(run_dir)          per_query.jsonl
    Overlap (DatasetResult.overlap); PairScores, load_pair_scores(run_dir)   overlap.jsonl
    DatasetResult.judgments (JudgmentsUsed -> JudgeProvenance -> JudgeAgreement, LabelAgreement,
    SystemAgreement)                              which judgments scored it; a judge's agreement
    EvalRecord, load_records(run_dir)             records.jsonl (the evaluation records)
    SCHEMA_VERSION, schema()                      the JSON Schema results.json validates against

Every reader (terminal table, report.md, HTML, ``harness report``, ``compare``, ``failures``,
``gate``) goes through these types, never through raw dict keys.
"""

import json
from importlib import resources
from typing import Any

from harness.eval import Comparison, Overlap
from harness.results._judge import (
    SIDECAR_SCHEMA,
    SIDECAR_SUFFIX,
    JudgeAgreement,
    JudgeIdentity,
    JudgeProvenance,
    JudgmentsUsed,
    LabelAgreement,
    SystemAgreement,
    load_provenance,
    sidecar_path,
)
from harness.results._metrics import (
    ANN_POINT,
    LOAD_SAMPLE,
    METRICS_FILE,
    AnnPointRecord,
    LoadSampleRecord,
    MetricRecord,
    metric_from_json,
)
from harness.results._model import (
    MANIFEST_FILE,
    READABLE_VERSIONS,
    REPORT_FILE,
    RESULTS_FILE,
    SCHEMA_VERSION,
    ArmResult,
    ArmTarget,
    DatasetInfo,
    DatasetResult,
    EngineInfo,
    EvalSettings,
    ExpansionInfo,
    JudgmentsApplied,
    Manifest,
    ModelInfo,
    PaperBaseline,
    Percentiles,
    ReasoningSplit,
    RescoreInfo,
    RunResults,
)
from harness.results._perf import (
    LOAD_PERCENTILES,
    AnnPoint,
    AnnRecall,
    AnnSweep,
    Distribution,
    LoadResult,
    LoadSettings,
    SweepSettings,
)
from harness.results._records import (
    OVERLAP_FILE,
    PER_QUERY_FILE,
    RECORDS_FILE,
    ArmComparison,
    Attribution,
    Delta,
    EvalRecord,
    MissedDoc,
    PairScores,
    QueryScores,
    QueryText,
    RecordMetrics,
    RelevantCounts,
    TopHit,
    load_pair_scores,
    load_per_query,
    load_records,
    record_id,
)
from harness.results._scores import scores_and_intervals
from harness.results._trec import (
    RUNS_FOLDER,
    Ranking,
    load_ranking,
    rank_run,
    read_run,
    trec_lines,
    trec_path,
)
from harness.results._tuning import HeldOutSweep, SweepFold, TuningChoices

SCHEMA_RESOURCE = f"resources/schema/results-v{SCHEMA_VERSION}.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``, shipped in the package."""
    text = resources.files("harness").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


__all__ = [
    "ANN_POINT",
    "LOAD_PERCENTILES",
    "LOAD_SAMPLE",
    "MANIFEST_FILE",
    "METRICS_FILE",
    "OVERLAP_FILE",
    "PER_QUERY_FILE",
    "READABLE_VERSIONS",
    "RECORDS_FILE",
    "REPORT_FILE",
    "RESULTS_FILE",
    "RUNS_FOLDER",
    "SCHEMA_RESOURCE",
    "SCHEMA_VERSION",
    "SIDECAR_SCHEMA",
    "SIDECAR_SUFFIX",
    "AnnPoint",
    "AnnPointRecord",
    "AnnRecall",
    "AnnSweep",
    "ArmComparison",
    "ArmResult",
    "ArmTarget",
    "Attribution",
    "Comparison",
    "DatasetInfo",
    "DatasetResult",
    "Delta",
    "Distribution",
    "EngineInfo",
    "EvalRecord",
    "EvalSettings",
    "ExpansionInfo",
    "HeldOutSweep",
    "JudgeAgreement",
    "JudgeIdentity",
    "JudgeProvenance",
    "JudgmentsApplied",
    "JudgmentsUsed",
    "LabelAgreement",
    "LoadResult",
    "LoadSampleRecord",
    "LoadSettings",
    "Manifest",
    "MetricRecord",
    "MissedDoc",
    "ModelInfo",
    "Overlap",
    "PairScores",
    "PaperBaseline",
    "Percentiles",
    "QueryScores",
    "QueryText",
    "Ranking",
    "ReasoningSplit",
    "RecordMetrics",
    "RelevantCounts",
    "RescoreInfo",
    "RunResults",
    "SweepFold",
    "SweepSettings",
    "SystemAgreement",
    "TopHit",
    "TuningChoices",
    "load_pair_scores",
    "load_per_query",
    "load_provenance",
    "load_ranking",
    "load_records",
    "metric_from_json",
    "rank_run",
    "read_run",
    "record_id",
    "schema",
    "scores_and_intervals",
    "sidecar_path",
    "trec_lines",
    "trec_path",
]

"""``harness run``: a typed config, and four steps (plan, execute, assemble, publish).

    config = RunConfig(mode="hybrid", datasets=("sample",))
    run_dir, results = run(config, ConnectionSettings.resolve())

* :mod:`._config`: :class:`RunConfig`, validated once;
* :mod:`._plan`: datasets, arms (by what the engine can do), model, run directory;
* :mod:`._execute`: index, embed, search (checkpointed), fuse, score;
* :mod:`._perf`: after the relevance pass, ANN recall of the vector arms, the load phase (``--load``)
  and the ANN sweep (``--ann-sweep``), and their metric records;
* :mod:`._assemble`: typed :class:`~harness.results.RunResults`;
* :mod:`._publish`: the run directory's files (``WRITERS``) and the records (``SINKS``).
"""

from harness.run._assemble import assemble, scores_and_intervals, start_manifest
from harness.run._config import EXPERIMENT_MODE, MAX_DEPTH, RunConfig
from harness.run._execute import DatasetOutcome, fuse_arm_runs
from harness.run._plan import DatasetPlan, PlannedArm, RunPlan, load_datasets, plan_run
from harness.run._publish import MANIFEST_FILE, REPORT_FILE, WRITERS, Publication, publish, write_manifest
from harness.run._runner import check_resume, embedder_for, run
from harness.run._sweep import SweepOutcome, check_protocol, held_out_runs, kfold_selection, score_matrix

__all__ = [
    "EXPERIMENT_MODE",
    "MANIFEST_FILE",
    "MAX_DEPTH",
    "REPORT_FILE",
    "WRITERS",
    "DatasetOutcome",
    "DatasetPlan",
    "PlannedArm",
    "Publication",
    "RunConfig",
    "RunPlan",
    "SweepOutcome",
    "assemble",
    "check_protocol",
    "check_resume",
    "embedder_for",
    "fuse_arm_runs",
    "held_out_runs",
    "kfold_selection",
    "load_datasets",
    "plan_run",
    "publish",
    "run",
    "score_matrix",
    "scores_and_intervals",
    "start_manifest",
    "write_manifest",
]

"""``harness run``: one pipeline under every run (plan, execute, checkpoint, assemble, publish).

    exp = experiment(values={"mode": "hybrid", "data.datasets": ["sample"]})   # harness.experiment
    run_dir, results = run(exp)

* :mod:`._plan`: datasets, arms (a mode's, by what the engine can do, or the file's own), models, run directory;
* :mod:`._sites`: where each arm searches (cluster, index, model); the dataset's index built where needed;
* :mod:`._execute`, :mod:`._arms`, :mod:`._steps`: search (every body rendered first), tune, fuse, rerank, judge
  (a judgments source that needs the arms' results: an LLM judge), score;
* :mod:`._checkpoints`: the one checkpoint store of a run directory (config-hash guarded);
* :mod:`._tuning`: what held-out tuning (:mod:`harness.sweep`) asks of the engine;
* :mod:`._perf`: ANN recall, the load phase and the ANN sweep, and their metric records;
* :mod:`._assemble`: typed :class:`~harness.results.RunResults`;
* :mod:`._publish`: the run directory's files (``WRITERS``) and the records (``SINKS``).
"""

from harness._search import ArmRun
from harness.results import MANIFEST_FILE, REPORT_FILE, scores_and_intervals
from harness.run._assemble import assemble, start_manifest
from harness.run._checkpoints import Checkpoints
from harness.run._execute import Executor, fuse_arm_runs
from harness.run._outcome import DatasetOutcome, DatasetPerformance
from harness.run._plan import DatasetPlan, PlannedArm, RunPlan, load_datasets, plan_run
from harness.run._publish import WRITERS, Publication, publish, write_manifest
from harness.run._runner import run
from harness.run._sites import embedder_for

__all__ = [
    "MANIFEST_FILE",
    "REPORT_FILE",
    "WRITERS",
    "ArmRun",
    "Checkpoints",
    "DatasetOutcome",
    "DatasetPerformance",
    "DatasetPlan",
    "Executor",
    "PlannedArm",
    "Publication",
    "RunPlan",
    "assemble",
    "embedder_for",
    "fuse_arm_runs",
    "load_datasets",
    "plan_run",
    "publish",
    "run",
    "scores_and_intervals",
    "start_manifest",
    "write_manifest",
]

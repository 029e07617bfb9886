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

from harness.run._assemble import scores_and_intervals
from harness.run._config import MAX_DEPTH, RunConfig
from harness.run._plan import RunPlan, plan_run
from harness.run._publish import MANIFEST_FILE, REPORT_FILE, WRITERS, write_manifest
from harness.run._runner import run

__all__ = [
    "MANIFEST_FILE",
    "MAX_DEPTH",
    "REPORT_FILE",
    "WRITERS",
    "RunConfig",
    "RunPlan",
    "plan_run",
    "run",
    "scores_and_intervals",
    "write_manifest",
]

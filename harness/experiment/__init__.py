"""Experiments: your own arms (query templates over any index, on any cluster), fused arms, and your
own queries and judgments, from one TOML file (``harness run --experiment FILE``).

    exp = load_experiment("examples/experiment.toml")
    run_dir, results = run_experiment(exp, ConnectionSettings.resolve())

* :mod:`._config`: :class:`ExperimentConfig`, read and validated once (errors at ``FILE: key.path``);
* :mod:`._execute`: render every body, check every index, search, fuse, score;
* :mod:`._runner`: connect, place the arms, then the run's assemble and publish steps.
"""

from harness.experiment._config import ExperimentConfig, load_experiment
from harness.experiment._runner import run_experiment

__all__ = ["ExperimentConfig", "load_experiment", "run_experiment"]

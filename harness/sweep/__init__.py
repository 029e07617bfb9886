"""Sweeps with honest held-out scores: a joint grid of configurations, chosen on some queries and
scored on others.

* :class:`SweepSpec` (``SweepSpec.parse("method=rrf,wsum;norm=min-max,zmuv;weights=0.1..0.9/0.1")``,
  or a name of :data:`NAMED_GRIDS`): the fusion grid;
* :data:`PROVIDERS`, :class:`Configuration`, :func:`grid`: the joint grid, one provider per kind of
  parameter: ``params`` (template parameters, :class:`ParamGrid`: searched once per setting) and
  ``fusion``;
  and ``sum`` (:mod:`._sum`: the in-engine weighted sum's weights, simulated on the client, searched held out);
* :func:`parse_tune_on` -> :class:`TuneOn` (a train split or ``kfold:K``), :func:`kfold_split`,
  :func:`select` -> :class:`Selection`: choose per fold, score every query held out;
* :class:`SweepTask`, :func:`tune` -> :class:`SweepOutcome`: one sweep of a fused arm over its joint grid
  (:class:`Searches`: what it asks of the engine), :func:`held_out_weights` for the in-engine sum.
"""

from harness.sweep._configs import (
    FUSION_STAGE,
    PROVIDERS,
    Choice,
    Configuration,
    FusionProvider,
    Provider,
    RunSet,
    SweepContext,
    grid,
)
from harness.sweep._heldout import (
    DEFAULT_FOLDS,
    KFOLD,
    FoldChoice,
    ScoreMatrix,
    Selection,
    TuneOn,
    best,
    kfold_folds,
    kfold_split,
    parse_tune_on,
    select,
)
from harness.sweep._params import (
    JointGrid,
    ParamAxis,
    ParamGrid,
    ParamPoint,
    ParamsProvider,
    Setting,
    variant_key,
)
from harness.sweep._spec import AXES, NAMED_GRIDS, SweepSpec
from harness.sweep._sum import (
    SUM,
    HeldOutWeights,
    SumChoice,
    SumGrid,
    SumProvider,
    WeightedSearch,
    choose_weights,
    held_out_weights,
    union_runs,
)
from harness.sweep._sweep import (
    FUSION,
    Searches,
    SweepOutcome,
    SweepTask,
    SweptArm,
    check_protocol,
    held_out_run,
    kfold_selection,
    score_matrix,
    sweep_grid,
    tune,
)

__all__ = [
    "AXES",
    "DEFAULT_FOLDS",
    "FUSION",
    "FUSION_STAGE",
    "KFOLD",
    "NAMED_GRIDS",
    "PROVIDERS",
    "SUM",
    "Choice",
    "Configuration",
    "FoldChoice",
    "FusionProvider",
    "HeldOutWeights",
    "JointGrid",
    "ParamAxis",
    "ParamGrid",
    "ParamPoint",
    "ParamsProvider",
    "Provider",
    "RunSet",
    "ScoreMatrix",
    "Searches",
    "Selection",
    "Setting",
    "SumChoice",
    "SumGrid",
    "SumProvider",
    "SweepContext",
    "SweepOutcome",
    "SweepSpec",
    "SweepTask",
    "SweptArm",
    "TuneOn",
    "WeightedSearch",
    "best",
    "check_protocol",
    "choose_weights",
    "grid",
    "held_out_run",
    "held_out_weights",
    "kfold_folds",
    "kfold_selection",
    "kfold_split",
    "parse_tune_on",
    "score_matrix",
    "select",
    "sweep_grid",
    "tune",
    "union_runs",
    "variant_key",
]

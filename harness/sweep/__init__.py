"""Sweeps with honest held-out scores: a joint grid of configurations, chosen on some queries and
scored on others.

* :class:`SweepSpec` (``SweepSpec.parse("method=rrf,wsum;norm=min-max,zmuv;weights=0.1..0.9/0.1")``,
  or a name of :data:`NAMED_GRIDS`): the fusion grid;
* :data:`PROVIDERS`, :class:`Configuration`, :func:`grid`: the joint grid, one provider per kind of
  parameter: ``params`` (template parameters, :class:`ParamGrid`: searched once per setting) and
  ``fusion``;
* :func:`parse_tune_on` -> :class:`TuneOn` (a train split or ``kfold:K``), :func:`kfold_split`,
  :func:`select` -> :class:`Selection`: choose per fold, score every query held out.
"""

from harness.sweep._configs import (
    PROVIDERS,
    Choice,
    Configuration,
    FusionProvider,
    Provider,
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

__all__ = [
    "AXES",
    "DEFAULT_FOLDS",
    "KFOLD",
    "NAMED_GRIDS",
    "PROVIDERS",
    "Choice",
    "Configuration",
    "FoldChoice",
    "FusionProvider",
    "JointGrid",
    "ParamAxis",
    "ParamGrid",
    "ParamPoint",
    "ParamsProvider",
    "Provider",
    "ScoreMatrix",
    "Selection",
    "Setting",
    "SweepContext",
    "SweepSpec",
    "TuneOn",
    "best",
    "grid",
    "kfold_folds",
    "kfold_split",
    "parse_tune_on",
    "select",
    "variant_key",
]

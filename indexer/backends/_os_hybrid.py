"""OpenSearch's ``hybrid`` query: its search pipeline, and answers that came back without one.

The hybrid query returns each sub-query's hits side by side; a search pipeline's phase-results processor
turns them into one ranking: the ``normalization-processor`` (``min_max`` and ``l2`` from 2.10,
``z_score`` from 3.0, then a weighted arithmetic mean) or the ``score-ranker-processor`` (reciprocal rank
fusion, 2.19). Which pipeline runs: the one the arm names (its definition, read from the cluster, sent
with each search: msearch takes no pipeline name), else the index's default (``index.search.default_pipeline``),
else the harness's own, written here for the technique asked.

Without a normalizing processor the engine answers the raw form (neural-search #1011): delimiter hits
scored about -9.55e9 (start and end) and -4.42e9 (between sub-queries) around each sub-query's own scores.
Such an answer is never a ranking: :func:`unnormalized` finds it and the search is refused, not scored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from indexer.backends._types import (
    NORMALIZATION_PROCESSOR,
    RRF_PROCESSOR,
    Z_SCORE,
    Capabilities,
    FusionParams,
)

#: the feature each technique needs beyond the hybrid query
TECHNIQUE_FEATURE = {"min_max": NORMALIZATION_PROCESSOR, "l2": NORMALIZATION_PROCESSOR, "z_score": Z_SCORE}
TECHNIQUE_FEATURE["rrf"] = RRF_PROCESSOR
#: scores below this are neural-search's delimiters, never a document's score
DELIMITER_BELOW = -1e9


def harness_pipeline(params: FusionParams) -> dict[str, Any]:
    """The harness's own pipeline for ``params.technique`` (weights normalised to sum to 1)."""
    if params.technique == "rrf":
        processor = {
            "score-ranker-processor": {
                "combination": {"technique": "rrf", "rank_constant": params.rank_constant}
            }
        }
    else:
        total = sum(params.weights)
        processor = {
            "normalization-processor": {
                "normalization": {"technique": params.technique},
                "combination": {
                    "technique": "arithmetic_mean",
                    "parameters": {"weights": [w / total for w in params.weights]},
                },
            }
        }
    return {"phase_results_processors": [processor]}


def require_technique(caps: Capabilities, technique: str) -> None:
    """:class:`~base.CapabilityMissing` (the declaration's sentence) unless the cluster has ``technique``."""
    caps.require(TECHNIQUE_FEATURE[technique])


def normalizes(definition: Mapping[str, Any]) -> bool:
    """Whether a pipeline definition has a processor that turns hybrid answers into one ranking."""
    processors = definition.get("phase_results_processors") or []
    names = {name for p in processors if isinstance(p, Mapping) for name in p}
    return bool(names & {"normalization-processor", "score-ranker-processor"})


def unnormalized(scores: Iterable[float | None]) -> bool:
    """Whether hit scores are the raw hybrid form (delimiters present): no pipeline normalized them."""
    return any(s is not None and s < DELIMITER_BELOW for s in scores)


UNNORMALIZED = (
    "the hybrid query's answer came back unnormalized (delimiter scores around -9.55e9 and -4.42e9: no search "
    "pipeline with a normalization-processor or score-ranker-processor ran, neural-search #1011): expected one "
    "ranking, found each sub-query's raw hits; name a pipeline that normalizes (search_pipeline) or give the "
    "index a default one (index.search.default_pipeline)"
)

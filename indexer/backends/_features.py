"""What each engine offers, by version: declared once, here.

Every feature the harness uses, or refuses, is one :class:`Feature`: its product, the first version that
has it (and the first that dropped it), the module or plugin the cluster must list, whether the product's
serverless service offers it, and how its absence reads. Three things derive from these declarations:

* the probe (``Backend.probe``): a feature is there when the version has it, the cluster lists its module
  or plugin, and (for a few) a read-only request confirms it; otherwise ``Capabilities.missing`` says why
  in one sentence built from the declaration;
* the arms' "cannot run here" notices (``harness.strategies.arm_support``), which read those sentences;
* the compatibility table of docs/engines.md (``python -m harness.strategies._compat``), generated for
  every version where a declaration changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from indexer.backends._types import (
    APPROXIMATE_KNN,
    FAISS_ENGINE,
    FEATURES,
    HYBRID_QUERY,
    KNN,
    KNN_SEARCH_ENDPOINT,
    LINEAR_RETRIEVER,
    LUCENE_ENGINE,
    NORMALIZATION_PROCESSOR,
    RANK_EVAL,
    RRF_PROCESSOR,
    RRF_RETRIEVER,
    SCRIPT_SCORE_KNN,
    SEARCH_PIPELINE,
    SEARCH_TEMPLATE,
    Z_SCORE,
    version_tuple,
)

DISPLAY = {"elasticsearch": "Elasticsearch", "opensearch": "OpenSearch"}
SERVERLESS = {"elasticsearch": "Elastic Cloud Serverless", "opensearch": "Amazon OpenSearch Serverless"}
KNN_PLUGIN = "opensearch-knn"
NEURAL_PLUGIN = "opensearch-neural-search"
Version = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature of one product: since when, on what it depends, and how its absence reads."""

    key: str
    product: str
    doc: str  # what it is, as a noun phrase ("rrf retriever")
    since: Version = (0,)
    until: Version | None = None  # the first version without it
    module: str | None = None  # a module or plugin the cluster must list (nodes info)
    serverless: bool = True  # the product's serverless service offers it
    #: the sentence when the module or plugin is missing ({version}: the cluster's)
    absent: str = ""

    def in_version(self, version: Version) -> bool:
        return version >= self.since and (self.until is None or version < self.until)

    def why_not(self, version: str, modules: Iterable[str] | None, serverless: bool) -> str | None:
        """None when ``version`` (with ``modules``; None: any) offers the feature, else why it does not."""
        display = DISPLAY[self.product]
        if serverless:
            return None if self.serverless else f"{SERVERLESS[self.product]} does not offer {self.doc}"
        vt = version_tuple(version)
        if vt < self.since:
            return f"{display} {version} has no {self.doc} ({_v(self.since)} or newer)"
        if self.until is not None and vt >= self.until:
            return f"{display} {version} has no {self.doc} (gone since {_v(self.until)})"
        if self.module is not None and modules is not None and self.module not in set(modules):
            text = self.absent or f"the cluster has no {self.module} ({self.doc})"
            return text.format(version=version)
        return None


def _v(version: Version) -> str:
    return ".".join(map(str, version))


_ES = "elasticsearch"
_OS = "opensearch"
_SCRIPT_SCORE_KNN = "exact kNN by script_score over a dense_vector field (cosineSimilarity in painless, every document scored)"

#: every declaration; a (feature, product) pair appears at most once
DECLARED: tuple[Feature, ...] = (
    # -- Elasticsearch
    Feature(APPROXIMATE_KNN, _ES, "approximate kNN in _search (the knn section)", since=(8, 4)),
    Feature(
        KNN_SEARCH_ENDPOINT,
        _ES,
        "_knn_search endpoint (one search per request, outside msearch: the harness does not use it)",
        since=(8, 0),
        until=(8, 4),
        serverless=False,
    ),
    Feature(
        SCRIPT_SCORE_KNN,
        _ES,
        _SCRIPT_SCORE_KNN,
        since=(7, 6),
        module="lang-painless",
        serverless=False,
        absent="the cluster has no lang-painless module: exact kNN by script_score cannot run",
    ),
    Feature("int8_hnsw", _ES, "int8_hnsw vector index type", since=(8, 12)),
    Feature("int4_hnsw", _ES, "int4_hnsw vector index type", since=(8, 15)),
    Feature("bbq_hnsw", _ES, "bbq_hnsw vector index type", since=(8, 18)),
    Feature(RRF_RETRIEVER, _ES, "rrf retriever", since=(8, 14)),
    Feature(LINEAR_RETRIEVER, _ES, "linear retriever", since=(8, 18)),
    Feature(
        RANK_EVAL,
        _ES,
        "rank-eval module (_rank_eval)",
        module="rank-eval",
        serverless=False,
        absent="Elasticsearch {version} has no rank-eval module (stripped builds ship without it): the engine "
        "cannot score rated searches (_rank_eval)",
    ),
    Feature(
        SEARCH_TEMPLATE,
        _ES,
        "mustache search templates",
        module="lang-mustache",
        absent="the cluster has no lang-mustache module: search templates cannot run",
    ),
    # -- OpenSearch
    Feature(
        APPROXIMATE_KNN,
        _OS,
        "knn query with method_parameters (ef_search, the harness's num_candidates)",
        since=(2, 16),
        module=KNN_PLUGIN,
        absent="the cluster has no k-NN plugin (opensearch-knn): vector and hybrid arms cannot run, lexical arms "
        "still can. Install opensearch-knn {version}.0 on every node, or run a local node with "
        "`harness engine start --engine opensearch`",
    ),
    Feature(LUCENE_ENGINE, _OS, "lucene engine of the k-NN plugin", since=(2, 2), module=KNN_PLUGIN),
    Feature(
        FAISS_ENGINE,
        _OS,
        "faiss engine of the k-NN plugin (native libraries; the default engine since 2.18)",
        module=KNN_PLUGIN,
    ),
    Feature(SEARCH_PIPELINE, _OS, "search pipelines (the search_pipeline parameter)", since=(2, 9)),
    Feature(
        HYBRID_QUERY,
        _OS,
        "hybrid query",
        since=(2, 10),
        module=NEURAL_PLUGIN,
        absent="the cluster has no neural-search plugin (opensearch-neural-search): the `hybrid` query arm is "
        "skipped (the in-engine weighted sum, a bool query, still runs)",
    ),
    Feature(
        NORMALIZATION_PROCESSOR,
        _OS,
        "normalization-processor (min_max and l2 normalization)",
        since=(2, 10),
        module=NEURAL_PLUGIN,
    ),
    Feature(Z_SCORE, _OS, "z_score normalization", since=(3, 0), module=NEURAL_PLUGIN),
    Feature(
        RRF_PROCESSOR,
        _OS,
        "score-ranker-processor (reciprocal rank fusion)",
        since=(2, 19),
        module=NEURAL_PLUGIN,
    ),
    Feature(
        RANK_EVAL,
        _OS,
        "rank-eval module (_rank_eval)",
        module="rank-eval",
        serverless=False,
        absent="OpenSearch {version} has no rank-eval module: the engine cannot score rated searches (_rank_eval)",
    ),
    Feature(
        SEARCH_TEMPLATE,
        _OS,
        "mustache search templates",
        module="lang-mustache",
        absent="the cluster has no lang-mustache module: search templates cannot run",
    ),
)

#: features of one product only, and whose they are (for the other product's sentence)
_OWNER_NOTE = {
    RRF_RETRIEVER: "retrievers are Elasticsearch's: OpenSearch has no 'rrf' retriever (its engine-side fusion "
    "is the neural-search `hybrid` query)",
    LINEAR_RETRIEVER: "retrievers are Elasticsearch's: OpenSearch has no 'linear' retriever (its engine-side "
    "fusion is the neural-search `hybrid` query)",
    HYBRID_QUERY: "the `hybrid` query is OpenSearch's (neural-search plugin); Elasticsearch fuses with the "
    "rrf/linear retrievers",
    SEARCH_PIPELINE: "search pipelines are OpenSearch's: Elasticsearch has none",
}


def declaration(feature: str, product: str) -> Feature | None:
    return next((f for f in DECLARED if f.key == feature and f.product == product), None)


def declared_features(
    product: str, version: str, modules: Iterable[str] | None = None, *, serverless: bool = False
) -> tuple[dict[str, bool], dict[str, str]]:
    """(feature -> offered, feature -> why not) for ``product`` at ``version`` from the declarations alone
    (``modules``: what the cluster lists; None: every module and plugin installed). ``knn`` (what the vector
    arms need) is approximate kNN or, where there is none, exact kNN by script_score."""
    listed = None if modules is None else tuple(modules)
    have: dict[str, bool] = {}
    why: dict[str, str] = {}
    for key in FEATURES:
        if key == KNN:
            continue
        decl = declaration(key, product)
        reason = _not_ours(key, product) if decl is None else decl.why_not(version, listed, serverless)
        have[key] = reason is None
        if reason is not None:
            why[key] = reason
    have[KNN] = have[APPROXIMATE_KNN] or have[SCRIPT_SCORE_KNN]
    if not have[KNN]:
        why[KNN] = _no_knn(product, why)
    return have, why


def _not_ours(key: str, product: str) -> str:
    """Why ``product`` lacks a feature it never has: whose it is."""
    if key in _OWNER_NOTE:
        return _OWNER_NOTE[key]
    other = next((f for f in DECLARED if f.key == key and f.product != product), None)
    if other is None:
        return f"{DISPLAY[product]} has no {key}"
    return f"the {other.doc} is {DISPLAY[other.product]}'s: {DISPLAY[product]} has none"


def _no_knn(product: str, why: Mapping[str, str]) -> str:
    if product == _OS:
        return why[APPROXIMATE_KNN]
    return f"{why[APPROXIMATE_KNN]}, and {why[SCRIPT_SCORE_KNN]}"


def boundaries(product: str) -> list[str]:
    """The versions where a declaration of ``product`` changes (each ``since`` and ``until``), oldest first."""
    points = {f.since for f in DECLARED if f.product == product and f.since != (0,)}
    points |= {f.until for f in DECLARED if f.product == product and f.until is not None}
    return [_v(v) for v in sorted(points)]

"""What each version offers, from the declarations alone: the compatibility table's input.

:func:`declared_capabilities` is what the probe would find on ``product`` at ``version`` with every module
and plugin installed (a real cluster may lack some: its probe says which); :func:`compat_versions` the
versions worth a column: each version where a declaration changes, and the versions the harness pins and
runs in its version matrix.
"""

from __future__ import annotations

from indexer.backends._detect import MIN_VERSIONS
from indexer.backends._features import DECLARED, boundaries, declared_features
from indexer.backends._types import APPROXIMATE_KNN, Capabilities, version_tuple
from indexer.node.flavours import VERSIONS


def declared_capabilities(product: str, version: str, *, serverless: bool = False) -> Capabilities:
    """The capabilities ``product`` at ``version`` declares (every module and plugin installed)."""
    features, missing = declared_features(product, version, None, serverless=serverless)
    return Capabilities(
        version=version,
        flavour=product,
        build_flavour="serverless" if serverless else "declared",
        modules=(),
        analyzers={},
        retrievers={"rrf": features["rrf_retriever"], "linear": features["linear_retriever"]},
        license="declared",
        vector_index_types=("hnsw",) if features[APPROXIMATE_KNN] else (),
        nodes=0,
        features=features,
        missing=missing,
        serverless=serverless,
    )


def compat_versions(product: str) -> list[str]:
    """Every version where a declaration of ``product`` changes, and every pinned version, oldest first."""
    pinned = {v for (engine, v) in VERSIONS if engine == product}
    floor = MIN_VERSIONS[product][0]
    found = {v for v in set(boundaries(product)) | pinned if version_tuple(v) >= floor}
    if not any(version_tuple(v)[: len(floor)] == floor for v in found):
        found.add(".".join(map(str, floor)))
    return sorted(found, key=version_tuple)


def feature_rows(product: str) -> list[tuple[str, str, str]]:
    """(feature, what it is, what it needs) of every feature ``product`` declares, in declaration order."""
    return [(f.key, f.doc, f.module or "") for f in DECLARED if f.product == product]


def pinned_versions(product: str) -> list[str]:
    """The versions of ``product`` the version matrix runs (Maven Central's integ-test zips), oldest first."""
    return sorted((v for (engine, v) in VERSIONS if engine == product), key=version_tuple)

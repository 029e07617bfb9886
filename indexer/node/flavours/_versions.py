"""Other versions of each engine's integ-test zip from Maven Central: what the version matrix runs.

Each is the engine's flavour with another distribution (pinned by SHA-256, as first fetched) and the Java
range that version's launcher runs on. Elasticsearch before 9 and OpenSearch 2.x still install Java's
SecurityManager, which Java 24 removed: they need Java 21 or older (17 here).

* Elasticsearch 7.17.29 and 8.19.8: the integ-test zip is a stripped build (transport-netty4, x-pack-core,
  x-pack-security): no analysis-common (no ``english`` analyzer), no lang-painless, and on 7.17 no
  ``dense_vector`` (the x-pack vectors module). 8.x turns TLS security on at its first start unless
  ``xpack.security.enabled`` is false, which the flavour sets.
* OpenSearch 2.19.1: transport-netty4 only. opensearch-knn 2.19.1.0 is on Maven Central but extends
  lang-painless 2.19.1, which Maven Central does not serve, so this node runs without k-NN.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from base import ConfigError
from indexer.node.flavours import _elasticsearch, _opensearch
from indexer.node.flavours._base import EngineFlavour, MavenArtifact


def _es(version: str, sha256: str, max_java: int | None) -> EngineFlavour:
    base = _elasticsearch.FLAVOUR
    return dataclasses.replace(
        base,
        version=version,
        distribution=dataclasses.replace(base.distribution, version=version, sha256=sha256),
        other_archives=(),
        min_java=17,
        max_java=max_java,
        distribution_var=f"R2MED_ES_{version.replace('.', '_')}_DISTRIBUTION",
        default_node_name=f"es-{version}",
    )


def _os(version: str, sha256: str) -> EngineFlavour:
    base = _opensearch.FLAVOUR
    return dataclasses.replace(
        base,
        version=version,
        distribution=MavenArtifact(
            group=base.distribution.group, artifact=base.distribution.artifact, version=version, sha256=sha256
        ),
        plugins=(),
        min_java=11,
        max_java=21,
        distribution_var=f"R2MED_OS_{version.replace('.', '_')}_DISTRIBUTION",
        default_node_name=f"os-{version}",
        notes=(f"OpenSearch {version} integ-test zip: transport-netty4 only, no k-NN plugin",),
    )


#: (engine, version) -> flavour; the pinned versions of each engine are their registered flavours
VERSIONS: dict[tuple[str, str], EngineFlavour] = {
    ("elasticsearch", "7.17.29"): _es(
        "7.17.29", "841ee00be1a72ba8e707b5a2fb55f23fe7a4184369b4585393238b1c903eedaf", max_java=21
    ),
    ("elasticsearch", "8.19.8"): _es(
        "8.19.8", "8d943e94cef02cbceb6e39cd00175bb04e5f882fa32783a473880b8691a54376", max_java=21
    ),
    ("elasticsearch", _elasticsearch.FLAVOUR.version): _elasticsearch.FLAVOUR,
    ("opensearch", "2.19.1"): _os(
        "2.19.1", "af7152d8b7f6f1cee09d47276b32b70479fe6dd8cdbb61213f84eb7f8098b261"
    ),
    ("opensearch", _opensearch.FLAVOUR.version): _opensearch.FLAVOUR,
}


def engine_version(engine: str, version: str) -> EngineFlavour:
    """The flavour of ``engine`` at ``version``; a clear error for a version that is not pinned."""
    try:
        return VERSIONS[(engine, version)]
    except KeyError:
        known = ", ".join(v for e, v in VERSIONS if e == engine) or "none"
        raise ConfigError(f"{engine} {version} is not a pinned version: expected one of {known}") from None


#: an engine archive or unpacked folder as the projects name them: elasticsearch-7.17.29.zip,
#: opensearch-min-2.19.1-linux-x64.tar.gz, elasticsearch-8.19.8/
_ARCHIVE_NAME = re.compile(r"^(elasticsearch|opensearch)(?:-min)?-(\d+\.\d+\.\d+)(?![\d.]*\d)")


def distribution_flavour(engine: str, distribution: Path | None) -> EngineFlavour | None:
    """The pinned flavour that a given archive's (or folder's) name says it is, so that an older zip runs
    with the Java, plugins and settings of its own version; ``None`` for another engine, a version that is
    not pinned, or a name without one (the engine's default flavour then applies)."""
    if distribution is None:
        return None
    match = _ARCHIVE_NAME.match(Path(distribution).name)
    if match is None or match.group(1) != engine:
        return None
    return VERSIONS.get((engine, match.group(2)))

"""OpenSearch: the Maven integ-test zip plus the k-NN plugin.

Facts about this build (checked on 3.5.0 with opensearch-knn 3.5.0.0 on Temurin 25):

* it has analysis-common (the ``english`` analyzer), lang-mustache and GET /;
* it has no security plugin: do not pass ``plugins.security.disabled`` (the node refuses
  to start on an unknown setting); the node serves plain HTTP on 127.0.0.1 with no login;
* the k-NN plugin ships without its native libraries, so only the ``lucene`` engine works:
  indexing a document into a ``knn_vector`` field on ``faiss`` (the default engine since 2.18)
  kills the node (UnsatisfiedLinkError: no opensearchknn_faiss). The node says so in its
  attributes (``node.attr.knn_faiss: false``, from ``PluginSpec.native``), so the probe reports
  faiss missing and the backend refuses it before anything is created.
"""

from __future__ import annotations

from indexer._version import (
    OPENSEARCH_KNN_VERSION,
    OPENSEARCH_KNN_ZIP_SHA256,
    OPENSEARCH_VERSION,
    OPENSEARCH_ZIP_SHA256,
)
from indexer.node.flavours._base import EngineFlavour, MavenArtifact, PluginSpec

KNN = PluginSpec(
    name="opensearch-knn",
    artifact=MavenArtifact(
        group="org.opensearch.plugin",
        artifact="opensearch-knn",
        version=OPENSEARCH_KNN_VERSION,
        sha256=OPENSEARCH_KNN_ZIP_SHA256,
    ),
    why="knn_vector fields and the knn query (vector and hybrid arms)",
    # the Maven zip ships no native libraries: faiss (and nmslib) cannot run on it
    native=(("libopensearchknn_faiss*", "knn_faiss"),),
)

FLAVOUR = EngineFlavour(
    name="opensearch",
    display="OpenSearch",
    version=OPENSEARCH_VERSION,
    distribution=MavenArtifact(
        group="org.opensearch.distribution.integ-test-zip",
        artifact="opensearch",
        version=OPENSEARCH_VERSION,
        sha256=OPENSEARCH_ZIP_SHA256,
    ),
    executable="opensearch",
    config_file="opensearch.yml",
    java_home_var="OPENSEARCH_JAVA_HOME",
    path_conf_var="OPENSEARCH_PATH_CONF",
    java_opts_var="OPENSEARCH_JAVA_OPTS",
    distribution_var="R2MED_OS_DISTRIBUTION",
    fetch_script="scripts/fetch-opensearch",
    default_node_name="opensearch",
    cache_folder="opensearch",
    plugin_tool="opensearch-plugin",
    plugins=(KNN,),
    # OpenSearch keeps Lucene's limit of 1,024 clauses per boolean query (Elasticsearch 9 sizes it from the
    # heap, in the tens of thousands): a HyDE-style expansion of a few thousand distinct words fails on it
    settings={"indices.query.bool.max_clause_count": 16384},
    notes=(
        "this build's k-NN plugin has no native libraries: vector fields use engine lucene "
        "(faiss is refused where the node lacks them, nmslib everywhere)",
    ),
)

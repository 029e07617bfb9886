"""Elasticsearch: the Maven integ-test zip (a stripped build), or Elastic's official archive."""

from __future__ import annotations

from indexer._version import ELASTICSEARCH_VERSION, ELASTICSEARCH_ZIP_SHA256
from indexer.node.flavours._base import EngineFlavour, MavenArtifact

FLAVOUR = EngineFlavour(
    name="elasticsearch",
    display="Elasticsearch",
    version=ELASTICSEARCH_VERSION,
    distribution=MavenArtifact(
        group="org.elasticsearch.distribution.integ-test-zip",
        artifact="elasticsearch",
        version=ELASTICSEARCH_VERSION,
        sha256=ELASTICSEARCH_ZIP_SHA256,
    ),
    executable="elasticsearch",
    config_file="elasticsearch.yml",
    java_home_var="ES_JAVA_HOME",
    path_conf_var="ES_PATH_CONF",
    java_opts_var="ES_JAVA_OPTS",
    distribution_var="R2MED_ES_DISTRIBUTION",
    fetch_script="scripts/fetch-elasticsearch",
    default_node_name="default",
    cache_folder="elasticsearch",
    settings={"xpack.security.enabled": False},
    other_archives=(f"elasticsearch-{ELASTICSEARCH_VERSION}-linux-x86_64.tar.gz",),
)

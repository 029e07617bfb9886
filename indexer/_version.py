"""Pinned versions shared by the compose stacks, the managed nodes and the clients."""

# Newest 9.x whose integ-test zip resolves from Maven Central and runs on Temurin 25 (see README).
ELASTICSEARCH_VERSION = "9.5.4"

# SHA-256 of elasticsearch-${ELASTICSEARCH_VERSION}.zip (integ-test-zip) as first fetched from Maven Central on
# 2026-11-30. Maven Central publishes no checksum files for this artifact, so scripts/fetch-elasticsearch checks
# this one (and the zip's own CRCs).
ELASTICSEARCH_ZIP_SHA256 = "d9b0c28e08e499f6510b52ad66ec4bf9cdceab97cc28b3456989b8744b896934"

# OpenSearch for the managed node: the integ-test zip (org.opensearch.distribution.integ-test-zip:opensearch:<v>:zip)
# plus the matching k-NN plugin (org.opensearch.plugin:opensearch-knn:<v>.0:zip). 3.5.0 is the newest version with
# a k-NN plugin on Maven Central (checked 2026-12-01: opensearch-knn has 2.19.1.0 and 3.5.0.0; 3.5.0 is missing
# from the distribution's maven-metadata.xml but resolves). It runs on Temurin 25 (3.x needs Java 21+).
OPENSEARCH_VERSION = "3.5.0"
OPENSEARCH_KNN_VERSION = "3.5.0.0"

# SHA-256 of opensearch-${OPENSEARCH_VERSION}.zip and opensearch-knn-${OPENSEARCH_KNN_VERSION}.zip as first fetched
# from Maven Central on 2026-12-01. Maven Central publishes no checksum file for the 3.5.0 integ-test zip, so
# scripts/fetch-opensearch checks these (and the zips' own CRCs); the plugin's .sha1 is checked by Maven too.
OPENSEARCH_ZIP_SHA256 = "b676ad392c95a94d8d2bd8785b8b922c7811536daf6a9ec0c7277a34bd8a17a9"
OPENSEARCH_KNN_ZIP_SHA256 = "99fdf3ac9ef95974e276298b83a58532bf21ba13bd5fd96a4b59465b7e613309"

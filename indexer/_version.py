"""Pinned versions shared by the compose stack, the managed node and the client."""

# Newest 9.x whose integ-test zip resolves from Maven Central and runs on Temurin 25 (see README).
ELASTICSEARCH_VERSION = "9.5.4"

# SHA-256 of elasticsearch-${ELASTICSEARCH_VERSION}.zip (integ-test-zip) as first fetched from Maven Central on
# 2026-11-30. Maven Central publishes no checksum files for this artifact, so scripts/fetch-elasticsearch checks
# this one (and the zip's own CRCs).
ELASTICSEARCH_ZIP_SHA256 = "d9b0c28e08e499f6510b52ad66ec4bf9cdceab97cc28b3456989b8744b896934"

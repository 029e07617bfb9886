"""Pinned versions shared by the compose stack, the managed node and the client."""

# Newest 9.x whose integ-test zip resolves from Maven Central and runs on Temurin 25 (see README).
ELASTICSEARCH_VERSION = "9.5.4"

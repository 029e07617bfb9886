#!/usr/bin/env bash
# Entrypoint of the opensearch service: the image's own, with the admin password read from the credentials
# folder. The image's demo installer (transport certificates) wants it in OPENSEARCH_INITIAL_ADMIN_PASSWORD,
# and compose cannot read a file into the environment.
set -euo pipefail
OPENSEARCH_INITIAL_ADMIN_PASSWORD="$(cat /credentials/admin_password)"
export OPENSEARCH_INITIAL_ADMIN_PASSWORD
cd /usr/share/opensearch
exec ./opensearch-docker-entrypoint.sh opensearch

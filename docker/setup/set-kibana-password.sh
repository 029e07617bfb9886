#!/usr/bin/env bash
# One-shot compose service `kibana-setup` (profile kibana): give the built-in kibana_system user the
# password that the setup service made (docker/credentials/kibana_password). Runs once Elasticsearch is
# healthy (depends_on: service_healthy); retries while the security index is still being created.
set -euo pipefail
: "${ES_URL:?}"
elastic="$(cat /credentials/elastic_password)"
kibana="$(cat /credentials/kibana_password)"
auth() { printf 'user = "elastic:%s"\n' "$elastic"; } # curl -K -: the password stays off the command line

body=$(printf '{"password":"%s"}' "$kibana")
reply=""
for attempt in $(seq 1 30); do
  reply=$(auth | curl -sS -K - -H 'Content-Type: application/json' \
    -X POST "${ES_URL}/_security/user/kibana_system/_password" -d "${body}" || true)
  if [ "$reply" = "{}" ]; then
    echo "kibana-setup: kibana_system password set"
    exit 0
  fi
  echo "kibana-setup: attempt $attempt: could not set the kibana_system password yet (${reply:-no reply})" >&2
  sleep 2
done
echo "kibana-setup: could not set the kibana_system password: ${reply}" >&2
exit 1

#!/usr/bin/env bash
# One-shot compose service: wait for Elasticsearch, then set the kibana_system password.
set -euo pipefail
: "${ES_URL:?}" "${ELASTIC_PASSWORD:?}" "${KIBANA_PASSWORD:?}"

for attempt in $(seq 1 120); do
  if curl -fsS -u "elastic:${ELASTIC_PASSWORD}" "${ES_URL}/_cluster/health?wait_for_status=yellow&timeout=5s" >/dev/null; then
    break
  fi
  [ "$attempt" = 120 ] && { echo "setup: Elasticsearch at ${ES_URL} did not become healthy" >&2; exit 1; }
  sleep 2
done

body=$(printf '{"password":"%s"}' "${KIBANA_PASSWORD}")
for attempt in $(seq 1 30); do
  reply=$(curl -sS -u "elastic:${ELASTIC_PASSWORD}" -H 'Content-Type: application/json' \
    -X POST "${ES_URL}/_security/user/kibana_system/_password" -d "${body}" || true)
  if [ "$reply" = "{}" ]; then
    echo "setup: kibana_system password set"
    exit 0
  fi
  echo "setup: waiting to set the kibana_system password (${reply:-no reply})" >&2
  sleep 2
done
echo "setup: could not set the kibana_system password: ${reply}" >&2
exit 1

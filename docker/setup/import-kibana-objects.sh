#!/usr/bin/env bash
# One-shot compose service `kibana-import` (profile kibana): import docker/kibana/*.ndjson into Kibana
# once it is healthy, as the elastic user (password from docker/credentials/elastic_password).
set -euo pipefail
: "${KIBANA_URL:?}"
elastic="$(cat /credentials/elastic_password)"
auth() { printf 'user = "elastic:%s"\n' "$elastic"; } # curl -K -: the password stays off the command line

shopt -s nullglob
files=(/kibana/*.ndjson)
if [ ${#files[@]} -eq 0 ]; then
  echo "kibana-import: no saved objects in docker/kibana, nothing to import"
  exit 0
fi
for file in "${files[@]}"; do
  reply=$(auth | curl -sS -K - -H 'kbn-xsrf: r2med-harness' \
    -X POST "${KIBANA_URL}/api/saved_objects/_import?overwrite=true" --form "file=@${file}")
  if printf '%s' "$reply" | grep -q '"success":true'; then
    echo "kibana-import: imported $(basename "$file")"
  else
    echo "kibana-import: import of $(basename "$file") failed: ${reply}" >&2
    exit 1
  fi
done

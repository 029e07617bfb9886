#!/usr/bin/env bash
# One-shot compose service (docker-compose.opensearch.yml), run before OpenSearch starts:
#   1. the passwords: $OPENSEARCH_ADMIN_PASSWORD / $DASHBOARDS_PASSWORD when given, otherwise generated once
#      into /credentials (docker/opensearch/credentials, git-ignored) and kept across restarts;
#   2. /credentials/stack.env for the harness (ES_URL, ES_USERNAME, ES_PASSWORD) and
#      /credentials/opensearch_dashboards.yml for Dashboards (it logs in as kibanaserver);
#   3. the security configuration OpenSearch starts with (the ossecurity volume, /security): the image's own
#      files, with internal_users.yml holding exactly admin and kibanaserver. The image's demo users
#      (kibanaro, logstash, readall, snapshotrestore, anomalyadmin), each with a published password, are gone.
# The security plugin reads these files when the cluster is first created; `down -v` starts over.
set -euo pipefail
umask 077
creds=/credentials
security=/security
home=/usr/share/opensearch
port="${OS_PORT:-9210}"

random_password() {
  # 24 random letters and digits, then one of each class OpenSearch's password rule asks for
  local raw
  raw="$(head -c 512 /dev/urandom | LC_ALL=C tr -dc 'A-Za-z0-9')"
  printf '%s%s' "${raw:0:24}" 'aZ7_'
}

password() {  # file, given value
  local file="$creds/$1"
  if [ -n "$2" ]; then
    printf '%s' "$2" > "$file"
  elif [ ! -s "$file" ]; then
    random_password > "$file"
  fi
  cat "$file"
}

admin_password="$(password admin_password "${OPENSEARCH_ADMIN_PASSWORD:-}")"
dashboards_password="$(password dashboards_password "${DASHBOARDS_PASSWORD:-}")"

printf 'ES_URL=http://127.0.0.1:%s\nES_USERNAME=admin\nES_PASSWORD=%s\n' "$port" "$admin_password" \
  > "$creds/stack.env"
cat > "$creds/opensearch_dashboards.yml" <<EOF
# written by docker/setup/opensearch-security.sh
server.host: "0.0.0.0"
opensearch.hosts: ["http://opensearch:9200"]
opensearch.username: "kibanaserver"
opensearch.password: "${dashboards_password}"
opensearch.requestHeadersAllowlist: ["authorization", "securitytenant"]
opensearch_security.cookie.secure: false
opensearch_security.multitenancy.enabled: false
EOF

# bcrypt hashes from the security plugin's own tool (it reads the password from its arguments: this
# container has no network and lives for seconds)
hash_tool="$home/plugins/opensearch-security/tools/hash.sh"
admin_hash="$(bash "$hash_tool" -p "$admin_password" | tail -n 1)"
dashboards_hash="$(bash "$hash_tool" -p "$dashboards_password" | tail -n 1)"
case "$admin_hash$dashboards_hash" in
  *'$2'*) ;;
  *) echo "setup: $hash_tool did not print bcrypt hashes" >&2; exit 1 ;;
esac

cp -a "$home/config/opensearch-security/." "$security/"
cat > "$security/internal_users.yml" <<EOF
---
# written by docker/setup/opensearch-security.sh (r2med-harness): exactly two users
_meta:
  type: "internalusers"
  config_version: 2
admin:
  hash: "${admin_hash}"
  reserved: true
  backend_roles: ["admin"]
  description: "r2med-harness: the harness logs in as this user"
kibanaserver:
  hash: "${dashboards_hash}"
  reserved: true
  description: "r2med-harness: OpenSearch Dashboards' server user"
EOF
# the opensearch and opensearch-dashboards users of the images are uid 1000
chown -R 1000:1000 "$security" "$creds/admin_password" "$creds/dashboards_password" "$creds/opensearch_dashboards.yml"
chmod 0400 "$creds/admin_password" "$creds/dashboards_password" "$creds/opensearch_dashboards.yml"
echo "setup: credentials in docker/opensearch/credentials (stack.env for the harness); users admin and kibanaserver"

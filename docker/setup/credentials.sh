#!/usr/bin/env bash
# One-shot compose service `setup`: the stack's credentials, made on the first `docker compose up` and
# kept afterwards, in docker/credentials/ (git-ignored, bind-mounted at /credentials):
#   elastic_password, kibana_password, kibana_encryption_key
#       one secret per file, mode 0640, owner = the owner of docker/credentials, group 0 (the folder:
#       0750, group 0): the host user who cloned the checkout can read them, and so can Elasticsearch
#       and Kibana, which run with group 0 in their images (Elasticsearch reads its file through
#       ELASTIC_PASSWORD_FILE), and no one else;
#   stack.env
#       ES_URL, ES_USERNAME and ES_PASSWORD for the harness (mode 0600, same owner), rewritten at every
#       `up` so that it follows ES_PORT;
#   container.env
#       the same for the harness container (the compose service `harness`), whose URL is the service's
#       http://elasticsearch:9200.
# ELASTIC_PASSWORD / KIBANA_PASSWORD, when set (environment or .env), are used instead of generated
# secrets. Generated secrets: 24 (48 for the key) characters from [A-Za-z0-9] read from /dev/urandom.
set -euo pipefail
dir=/credentials
[ -d "$dir" ] && [ -w "$dir" ] || { echo "setup: $dir is not a writable folder (bind-mount docker/credentials)" >&2; exit 1; }
owner="$(stat -c %u "$dir")"
# Elasticsearch and Kibana run as uid 1000 with group 0: let group 0 into the folder, nobody else
chgrp 0 "$dir"
chmod 0750 "$dir"
umask 077

random() { head -c 4096 /dev/urandom | tr -dc 'A-Za-z0-9' | cut -c "1-$1"; }

put() { # put NAME MODE VALUE: write atomically (temporary file, then rename)
  local tmp="$dir/.$1.tmp"
  printf '%s' "$3" >"$tmp"
  chown "$owner:0" "$tmp"
  chmod "$2" "$tmp"
  mv -f "$tmp" "$dir/$1"
}

secret() { # secret NAME GIVEN LENGTH: the given value, else the kept one, else a new one
  local name=$1 given=$2 length=$3
  if [ -n "$given" ]; then
    [ "${#given}" -ge 6 ] || { echo "setup: $name must have 6 or more characters" >&2; exit 1; }
    [ -f "$dir/$name" ] && [ "$(cat "$dir/$name")" = "$given" ] && return 0
    put "$name" 0640 "$given"
    echo "setup: $name set from the environment"
  elif [ -s "$dir/$name" ]; then
    echo "setup: $name kept"
  else
    put "$name" 0640 "$(random "$length")"
    echo "setup: $name generated"
  fi
}

secret elastic_password "${ELASTIC_PASSWORD:-}" 24
secret kibana_password "${KIBANA_PASSWORD:-}" 24
secret kibana_encryption_key "" 48

port="${ES_PORT:-9200}"
case "$port" in '' | *[!0-9]*) echo "setup: ES_PORT must be a port number, found '$port'" >&2; exit 1 ;; esac
put stack.env 0600 "# Written by the compose setup service at every \`docker compose up\`. The harness reads it when
# ES_URL, ES_USERNAME and ES_PASSWORD are not given. Never commit it.
ES_URL=http://127.0.0.1:${port}
ES_USERNAME=elastic
ES_PASSWORD=$(cat "$dir/elastic_password")
"
put container.env 0600 "# Written by the compose setup service at every \`docker compose up\`: stack.env as the harness
# container sees the stack (docker-compose.yml service harness reads it: R2MED_STACK_ENV). Never commit it.
ES_URL=http://elasticsearch:9200
ES_USERNAME=elastic
ES_PASSWORD=$(cat "$dir/elastic_password")
"
echo "setup: docker/credentials/stack.env written (Elasticsearch at http://127.0.0.1:${port}, user elastic)"

#!/bin/bash
# Entrypoint of the locally built Elasticsearch image: the official image's contract, written for ours.
#   docker run IMAGE                       -> Elasticsearch in the foreground
#   docker run IMAGE elasticsearch -E a=b  -> the same, with extra settings
#   docker run IMAGE <any other command>   -> that command
# ELASTIC_PASSWORD (or ELASTIC_PASSWORD_FILE, a 400/440/600/640 file) becomes the keystore's
# bootstrap.password, which the `elastic` user logs in with. Dotted environment variables
# (discovery.type=single-node) are read as settings by the distribution itself
# (ES_DISTRIBUTION_TYPE=docker in bin/elasticsearch-env).
set -euo pipefail
umask 0002

case "${1:-eswrapper}" in
  eswrapper) [ "$#" -gt 0 ] && shift ;;
  elasticsearch | */elasticsearch) shift ;;
  *) exec "$@" ;;
esac

# checked here too: the distribution's own check prints the ELASTIC_PASSWORD line it found
if [ -n "${ELASTIC_PASSWORD_FILE:-}" ] && [ -n "${ELASTIC_PASSWORD+set}" ]; then
  echo "ERROR: Both ELASTIC_PASSWORD_FILE and ELASTIC_PASSWORD are set. These are mutually exclusive." >&2
  exit 1
fi
# ELASTIC_PASSWORD_FILE -> ELASTIC_PASSWORD (the distribution's own checks: existence, permissions)
# (it reads unset variables: not under set -u)
set +u
# shellcheck source=/dev/null
source /usr/share/elasticsearch/bin/elasticsearch-env-from-file
set -u

if [ -n "${ELASTIC_PASSWORD:-}" ]; then
  # --force creates the keystore when missing and replaces an older password: a container restarted
  # with another password takes the new one. The password goes in on stdin, never on a command line.
  printf '%s' "$ELASTIC_PASSWORD" | elasticsearch-keystore add --stdin --force bootstrap.password >/dev/null
  unset ELASTIC_PASSWORD
fi

exec elasticsearch "$@"

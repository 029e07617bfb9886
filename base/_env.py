"""Every environment variable the product reads: one table, read in one place.

Settings are named ``<section>.<name>``; :func:`from_env` returns the values of one section
that the environment sets (empty values count as unset). Flags always win over these, and
these over config files (see :meth:`indexer.ConnectionSettings.resolve`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENV_VARS: dict[str, str] = {
    "connection.url": "ES_URL",
    "connection.username": "ES_USERNAME",
    "connection.password": "ES_PASSWORD",
    "connection.api_key": "ES_API_KEY",
    "connection.ca_cert": "ES_CA_CERT",
    "connection.verify": "ES_VERIFY_CERTS",
    "connection.request_timeout": "ES_REQUEST_TIMEOUT",
    "connection.cloud_id": "ES_CLOUD_ID",
    "connection.auth": "ES_AUTH",
    "connection.region": "AWS_REGION",
    "connection.service": "ES_AWS_SERVICE",
    "config.file": "R2MED_HARNESS_CONFIG",
    "engine.port": "R2MED_ENGINE_PORT",
    "engine.heap": "R2MED_ENGINE_HEAP",
    "engine.image": "R2MED_ES_IMAGE",
    "stack.file": "R2MED_STACK_ENV",
    "kibana.url": "KIBANA_URL",
    "kibana.username": "KIBANA_USERNAME",
    "kibana.password": "KIBANA_PASSWORD",
    "kibana.api_key": "KIBANA_API_KEY",
    "paths.state": "R2MED_HARNESS_STATE",
    "paths.cache": "R2MED_HARNESS_CACHE",
    "data.r2med_dir": "R2MED_DATA_DIR",
    "data.expansions_dir": "R2MED_EXPANSIONS_DIR",
    "endpoint.base_url": "OPENAI_BASE_URL",
}

#: what each setting of :data:`ENV_VARS` means (docs/environment.md is generated from both)
ENV_HELP: dict[str, str] = {
    "connection.url": "URL of the cluster, Elasticsearch or OpenSearch (the harness asks which).",
    "connection.username": "User for basic authentication.",
    "connection.password": "Password for basic authentication (never printed or stored).",
    "connection.api_key": "Elasticsearch API key, instead of a user and password (OpenSearch takes basic auth).",
    "connection.ca_cert": "CA certificate (PEM file) the cluster's TLS certificate is checked against.",
    "connection.verify": "false (or 0, no, off) skips the TLS certificate check.",
    "connection.request_timeout": "Seconds one request to the cluster may take (default 60).",
    "connection.cloud_id": "Elastic Cloud's Cloud ID of the deployment, instead of a URL (with an API key).",
    "connection.auth": "basic, api-key or sigv4 (AWS SigV4 signing; default: what the credentials given imply).",
    "connection.region": "AWS region SigV4 signs for (else the AWS configuration's, e.g. AWS_DEFAULT_REGION).",
    "connection.service": "SigV4 service: es (Amazon OpenSearch Service, the default) or aoss (Serverless).",
    "config.file": "TOML file with a [connection] table, read when the command line names none.",
    "engine.port": "HTTP port of the managed node (default 9200).",
    "engine.heap": "JVM heap of the managed node, e.g. 1g.",
    "engine.image": "Image of the Elasticsearch container the engine commands start with Docker.",
    "stack.file": "Connection file of a local stack to take credentials from; none turns the lookup off.",
    "kibana.url": "URL of Kibana, for importing the saved objects.",
    "kibana.username": "Kibana user.",
    "kibana.password": "Kibana password (never printed or stored).",
    "kibana.api_key": "Kibana API key, instead of a user and password.",
    "paths.state": "Folder of the managed nodes' data and logs "
    "(default ~/.local/state/r2med-harness; as root /var/lib/r2med-harness).",
    "paths.cache": "Folder of the caches: embeddings, generations, exported models (default ~/.cache/r2med-harness).",
    "data.r2med_dir": "Folder holding R2MED datasets offline, one <Name>/ folder each.",
    "data.expansions_dir": "Folder of generated expansions of the sample and r2med datasets "
    "(default expansions/ in the state folder).",
    "endpoint.base_url": "OpenAI-compatible endpoint used when none is given (default OpenAI's).",
}


def from_env(section: str, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{name: value}`` of the settings of ``section`` that the environment sets."""
    env = os.environ if env is None else env
    prefix = f"{section}."
    return {
        key.removeprefix(prefix): env[var]
        for key, var in ENV_VARS.items()
        if key.startswith(prefix) and env.get(var)
    }


def variable(setting: str) -> str:
    """The environment variable of ``section.name`` (for messages and help texts)."""
    return ENV_VARS[setting]


def named(variable_name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of a variable the user names at run time (``--api-key-env VAR``); None when unset or empty."""
    env = os.environ if env is None else env
    return env.get(variable_name) or None

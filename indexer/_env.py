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
    "connection.verify_certs": "ES_VERIFY_CERTS",
    "connection.request_timeout": "ES_REQUEST_TIMEOUT",
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

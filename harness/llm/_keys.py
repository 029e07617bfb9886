"""The keys of an OpenAI-compatible chat endpoint, declared once for every table of keys that asks an LLM
(``expand.*``, ``judgments.*``): its URL, the variable holding its key, requests in flight, the timeout and
the retries. A table inherits them (``class ExpandKeys(EndpointKeys)``) and gets its :class:`Endpoint` from
:meth:`EndpointKeys.chat_endpoint`, whose refusals name the key as the user set it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from base import ConfigError, Endpoint
from harness._errors import SettingError
from harness.keys import MAX_RETRIES, PERFORMANCE, between, key

_ENDPOINT = Endpoint()
_RETRY = _ENDPOINT.retry


def checked_endpoint(url: str | None, key_env: str | None, prefix: str, **settings: Any) -> Endpoint:
    """The endpoint of ``PREFIX.llm_url`` and ``PREFIX.llm_key_env``; what it refuses is a refusal of the key
    that set it (the URL's shape, or the variable named but not set)."""
    ref = "{" + prefix + ".llm_key_env}"
    try:
        return Endpoint.resolve(url, key_env, key_flag=ref, url_flag="{" + prefix + ".llm_url}", **settings)
    except ConfigError as exc:
        text = str(exc).removeprefix(ref + " ")
        raise SettingError("llm_url" if "URL" in text else "llm_key_env", text) from None


@dataclass(frozen=True, slots=True)
class EndpointKeys:
    """The chat endpoint's keys, the same wherever an LLM is asked."""

    llm_url: str | None = key(
        affects=PERFORMANCE, doc="OpenAI-compatible chat endpoint (default $OPENAI_BASE_URL, else OpenAI)"
    )
    llm_key_env: str | None = key(
        affects=PERFORMANCE, doc="variable holding the endpoint's key (never printed or stored)"
    )
    concurrency: int = key(
        _ENDPOINT.concurrency, affects=PERFORMANCE, check=between(1, 256), doc="requests in flight"
    )
    timeout: float = key(
        _ENDPOINT.timeout_s,
        affects=PERFORMANCE,
        check=between(0, 3600, above=True),
        doc="seconds per request",
    )
    max_retries: int = key(
        _RETRY.max_retries,
        affects=PERFORMANCE,
        check=between(0, MAX_RETRIES),
        doc="retries per request (429, 5xx, timeouts)",
    )

    def chat_endpoint(self, prefix: str, backoff: float | None = None) -> Endpoint:
        """The endpoint these keys describe, with their retries (``backoff``: the first retry's wait, where
        the table declares it); ``prefix`` is the table's (``expand``), for the refusals."""
        retry = dataclasses.replace(_RETRY, max_retries=self.max_retries)
        if backoff is not None:
            retry = dataclasses.replace(retry, initial_backoff_s=backoff)
        return checked_endpoint(
            self.llm_url,
            self.llm_key_env,
            prefix,
            retry=retry,
            timeout_s=self.timeout,
            concurrency=self.concurrency,
        )

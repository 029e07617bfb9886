"""OpenAI-compatible endpoints (vLLM, Ollama, llama.cpp's server, text-embeddings-inference, hosted
APIs) through the official ``openai`` client: where they are, the key, retries and failures, which the
embedding layer and the harness's chat client (``harness/llm``) share, and the embeddings call.

The key is read from the environment variable the user names (default ``OPENAI_API_KEY``), held in a
``Secret``, handed to the client and nowhere else: it is never printed, logged or
stored, and it is scrubbed from any error text an endpoint sends back. The client's own retries are
off; the shared :class:`~base.Retry` retries 408/409/429/5xx, timeouts and lost connections, and
waits at least what ``Retry-After`` (or OpenAI's ``retry-after-ms``) asks.

What retrying cannot fix fails at once, in one sentence that names the URL (never the key) and the
setting to fix: a refused connection or a host name that does not resolve before the endpoint has
answered once in this process (a wrong URL, a server not started; after an answer, a refused connection
may be a restart, and is retried), a 401 or 403 (the key), a 404 (the model or the path). What can heal
is retried, and a :class:`RetryCounter` says how many retries and why (``3 (HTTP 429 x2, timeout)``),
for the progress line.
"""

from __future__ import annotations

import email.utils
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from base._env import from_env, named
from base._exceptions import ConfigError, EndpointError
from base._retry import Retry
from base._secret import Secret

T = TypeVar("T")

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: HTTP statuses worth another try (request timeout, conflict, rate limit, server errors)
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: statuses that fail every request alike: stop at the first instead of failing each query
FATAL_STATUS = frozenset({401, 403, 404})
_NO_KEY = "no-key"  # the client insists on a key; a server without auth ignores this one


def default_retry() -> Retry:
    return Retry(max_retries=8, initial_backoff_s=1.0, max_backoff_s=60.0)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where an OpenAI-compatible API is, which variable holds its key, and how hard to try."""

    base_url: str | None = None  # None: the client's default ($OPENAI_BASE_URL, else api.openai.com)
    api_key_env: str = DEFAULT_KEY_ENV
    require_key: bool = False  # True when the user named the variable: it must then be set
    timeout_s: float = 120.0
    concurrency: int = 4
    retry: Retry = field(default_factory=default_retry)
    #: the flag that names the key's variable, for messages (an LLM endpoint's is --llm-key-env)
    key_flag: str = field(default="--embed-key-env", compare=False, repr=False)
    #: the flag that sets the URL, for messages (an LLM endpoint's is --llm-url)
    url_flag: str = field(default="--embed-url", compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.base_url is not None:
            parts = urlsplit(self.base_url)
            if parts.scheme not in {"http", "https"} or not parts.hostname:
                raise ConfigError(
                    f"expected an endpoint URL like http://127.0.0.1:8000/v1, found {self.base_url!r}"
                )
            if parts.username or parts.password:
                raise ConfigError(
                    "credentials inside the endpoint URL are not accepted (they would be printed); "
                    f"put the key in an environment variable and name it with {self.key_flag}"
                )
        if not self.api_key_env or not self.api_key_env.replace("_", "").isalnum():
            raise ConfigError(
                f"expected an environment variable name for the key, found {self.api_key_env!r}"
            )
        if self.timeout_s <= 0:
            raise ConfigError(f"expected a positive endpoint timeout, found {self.timeout_s}")
        if not 1 <= self.concurrency <= 256:
            raise ConfigError(f"expected an endpoint concurrency between 1 and 256, found {self.concurrency}")
        if self.require_key and named(self.api_key_env) is None:
            raise ConfigError(
                f"{self.key_flag} names {self.api_key_env}, but that environment variable is not set "
                f"(export it, or leave {self.key_flag} out for an endpoint without authentication)"
            )

    @classmethod
    def resolve(cls, base_url: str | None = None, api_key_env: str | None = None, **kwargs: Any) -> Endpoint:
        """The endpoint as the CLI gives it: a named key variable must be set; the default one may not be."""
        return cls(
            base_url=base_url or None,
            api_key_env=api_key_env or DEFAULT_KEY_ENV,
            require_key=api_key_env is not None,
            **kwargs,
        )

    def key(self) -> Secret | None:
        value = named(self.api_key_env)
        return Secret(value) if value else None

    def url(self) -> str:
        """The base URL as it may be printed and stored: no credentials, no query string."""
        if self.base_url is None:
            return from_env("endpoint").get("base_url") or "https://api.openai.com/v1"
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))

    def describe(self) -> dict[str, Any]:
        """What goes into manifests: the URL, the key's variable and whether it was set; never the key."""
        return {
            "base_url": self.url(),
            "api_key_env": self.api_key_env,
            "api_key_set": self.key() is not None,
            "timeout_s": self.timeout_s,
            "concurrency": self.concurrency,
            "max_retries": self.retry.max_retries,
        }

    def client(self) -> Any:
        """An ``openai.OpenAI`` client for this endpoint (its own retries off: ours honour Retry-After)."""
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ConfigError("the openai package is needed for endpoints: pip install openai") from exc
        key = self.key()
        return openai.OpenAI(
            api_key=key.reveal() if key else _NO_KEY,
            base_url=self.url(),
            timeout=self.timeout_s,
            max_retries=0,
        )

    def scrub(self, text: str) -> str:
        """``text`` with the key (should an endpoint echo it) replaced by ``***``."""
        key = self.key()
        return text.replace(key.reveal(), "***") if key else text


# ------------------------------------------------------------------ failures
def retry_after_seconds(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """What a response asks us to wait: ``retry-after-ms`` (OpenAI), else ``Retry-After`` in seconds or
    as an HTTP date; ``None`` when it says nothing usable. Header names are matched case-insensitively."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            pass
    try:
        when = email.utils.parsedate_to_datetime(lowered.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return int(status) if isinstance(status, int) else None


def unreachable(exc: BaseException) -> str | None:
    """``"refused"`` or ``"unknown host"`` when ``exc`` (or what caused it) says that nothing can be
    reached at the URL: a refused connection, or a host name that does not resolve; else None."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "refused"
        if isinstance(cause, socket.gaierror):
            return "unknown host"
        cause = cause.__cause__ or cause.__context__
    return None


def is_transient(exc: BaseException) -> bool:
    """Rate limits, server errors, timeouts and lost connections are worth another try; nothing else."""
    import openai

    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return True
    return status_of(exc) in RETRYABLE_STATUS


def retry_hint(exc: BaseException) -> float | None:
    """The wait a refusing server asked for (``Retry-After``), if any."""
    response = getattr(exc, "response", None)
    return retry_after_seconds(getattr(response, "headers", None))


def cause_of(exc: BaseException | None) -> str:
    """What a retry was for, in a word or two: ``HTTP 429``, ``timeout``, ``connection lost``."""
    import openai

    status = None if exc is None else status_of(exc)
    if status is not None:
        return f"HTTP {status}"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection lost"
    return type(exc).__name__ if exc is not None else "items sent again"


class EndpointFailure(EndpointError):
    """A request that failed for good: ``original`` is the client's exception, ``retries`` the tries spent,
    ``fatal`` whether every other request would fail alike (stop at once)."""

    def __init__(
        self,
        original: BaseException,
        retries: int,
        scrub: Callable[[str], str] = lambda text: text,
        *,
        fatal: bool = False,
    ) -> None:
        """``scrub`` takes the key out of the message (some servers echo the key they refused)."""
        super().__init__(scrub(f"{type(original).__name__} after {retries} retries: {original}"))
        self.original = original
        self.retries = retries
        self.fatal = fatal or status_of(original) in FATAL_STATUS


def is_fatal(exc: BaseException) -> bool:
    """A failure every other request would share (nothing listening, an unknown host, a bad key, no
    permission, an unknown model or path)."""
    if isinstance(exc, EndpointFailure):
        return exc.fatal
    return status_of(exc) in FATAL_STATUS


def explain(exc: BaseException, endpoint: Endpoint, model: str) -> str:
    """One line for the user: what the endpoint said (or that nothing answered), without the key; for
    what retrying cannot fix, with the URL and the setting to fix."""
    if isinstance(exc, EndpointFailure):
        exc = exc.original
    url = endpoint.url()
    why = unreachable(exc)
    if why == "refused":
        return (
            f"expected an OpenAI-compatible endpoint at {url} ({endpoint.url_flag}), found nothing listening "
            "there (connection refused): start the server, or give the URL it listens on"
        )
    if why == "unknown host":
        host = urlsplit(url).hostname
        return (
            f"expected an OpenAI-compatible endpoint at {url} ({endpoint.url_flag}), found no host named "
            f"{host!r} (the name does not resolve)"
        )
    status = status_of(exc)
    body = getattr(exc, "body", None)
    detail = body.get("message") if isinstance(body, dict) else None
    text = str(detail or exc)
    if status is None:
        return endpoint.scrub(f"{type(exc).__name__}: {text}")
    hint = {
        401: f" (is {endpoint.api_key_env} the right key for {url}? {endpoint.key_flag} names the variable)",
        403: f" (the key in {endpoint.api_key_env} may not use model {model!r} at {url}; {endpoint.key_flag} "
        "names the variable)",
        404: f" (does {url} serve model {model!r} at this path? check the model's name and {endpoint.url_flag})",
    }.get(status, "")
    return endpoint.scrub(f"HTTP {status}: {text}{hint}")


# --------------------------------------------------------------------- calls
class RetryCounter:
    """Thread-safe count of retries and their causes, usable as a :class:`~base.Retry` ``on_retry``
    callback; ``on_change`` is told after each (to show :meth:`describe` in a progress line)."""

    def __init__(self, on_change: Callable[[RetryCounter], None] | None = None) -> None:
        self.count = 0
        self.causes: Counter[str] = Counter()
        self.on_change = on_change
        self._lock = threading.Lock()

    def __call__(self, retry: int, items: int, failure: BaseException | None) -> None:
        with self._lock:
            self.count += 1
            self.causes[cause_of(failure)] += 1
        if self.on_change is not None:
            self.on_change(self)

    def describe(self) -> str:
        """``3 (HTTP 429 x2, timeout)``: how many retries, and why, most frequent first."""
        with self._lock:
            causes = ", ".join(f"{c} x{n}" if n > 1 else c for c, n in self.causes.most_common())
            return f"{self.count} ({causes})" if causes else str(self.count)


#: the endpoints (by URL) that answered at least once in this process: a refused connection there may be
#: a restart, worth retrying; before any answer, it is a wrong URL or a server that is not running
_answered: set[str] = set()


def with_retries(endpoint: Endpoint, fn: Callable[[], T], on_retry: RetryCounter | None = None) -> T:
    """``fn()`` under the endpoint's retry policy; a failure for good raises :class:`EndpointFailure`
    (``fatal`` when no other request can fare better: see the module's notes)."""
    url = endpoint.url()

    def first_contact_failed(exc: BaseException) -> bool:
        return url not in _answered and unreachable(exc) is not None

    def answered() -> T:
        out = fn()
        _answered.add(url)
        return out

    return endpoint.retry.call(
        answered,
        transient=lambda exc: is_transient(exc) and not first_contact_failed(exc),
        give_up=lambda exc, retries: EndpointFailure(
            exc, retries, endpoint.scrub, fatal=first_contact_failed(exc)
        ),
        on_retry=on_retry,
        retry_after=retry_hint,
    )


def create_embeddings(client: Any, model: str, texts: Sequence[str]) -> tuple[list[list[float]], int]:
    """Vectors for ``texts`` in input order, and the prompt tokens the endpoint counted."""
    response = client.embeddings.create(model=model, input=list(texts), encoding_format="float")
    items = sorted(response.data, key=lambda d: d.index)
    if len(items) != len(texts):
        raise EndpointError(
            f"the embeddings endpoint returned {len(items)} vectors for {len(texts)} texts (model {model!r})"
        )
    usage = getattr(response, "usage", None)
    return [list(item.embedding) for item in items], int(getattr(usage, "prompt_tokens", 0) or 0)

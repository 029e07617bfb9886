"""The harness's branch of the exception tree (rooted at :class:`base.HarnessError`)."""

from __future__ import annotations

from base import ConfigError, EndpointError, HarnessError


class RunError(HarnessError):
    """Querying, fusing, evaluating or reporting failed."""


class GenerationError(EndpointError):
    """Some queries got no generation (``harness expand``); ``failures`` maps each query id to why."""

    def __init__(self, message: str, failures: dict[str, str]) -> None:
        super().__init__(message)
        self.failures = dict(failures)


class SettingError(ConfigError):
    """A value refused under a key of a spec (``key``: as the spec names it; ``message``: what was expected and
    found), so that each edge can name the value as its user wrote it (:meth:`at`: a key path, a flag).

    ``shown``: how the message names the value (default: the key)."""

    def __init__(self, key: str, message: str, shown: str | None = None) -> None:
        super().__init__(f"{shown or key}: {message}")
        self.key, self.message = key, message

    def at(self, name: str) -> ConfigError:
        """The same error, naming the value as ``name`` (a key path, a flag)."""
        return ConfigError(f"{name}: {self.message}")

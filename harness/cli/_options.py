"""One definition per concept of the command line, and one way to retire an old option name.

Every command that writes a path takes ``--output/-o`` (:func:`output_option`); ``--revision`` is the hub
revision of a dataset everywhere. A command's settings are keys, and its flags views of them
(:mod:`harness.cli._views`): their help, range and default are the key's.

An option that is renamed, or that moved into the experiment file, keeps working for one release as a
hidden alias (:class:`Deprecated`, given to :func:`with_deprecated`): using it prints one line that says
what replaces it, and its value goes where the new name's would.

    @with_deprecated(Deprecated("--base-url", "embed_url", new="--embed-url"),
                     Deprecated("--batch-size", set_key="search.batch_size"))
    def run(..., embed_url: str | None = None, settings: list[str] | None = None) -> None: ...
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from base import ConfigError
from harness.cli._views import help_of
from harness.experiment import key_field
from harness.keys import HIDDEN, shown

#: the release in which the hidden aliases go
REMOVED_IN = "0.3"

_warnings = Console(stderr=True, soft_wrap=True)
#: the attribute of a command's function that holds its hidden old names
_ALIASES = "__deprecated_aliases__"


def output_option(what: str) -> Any:
    """``--output/-o``, the path a command writes (``what`` says which, and its default), for its
    ``Annotated``: ``output: Annotated[Path | None, output_option("HTML file to write ...")] = None``."""
    return typer.Option("--output", "-o", help=what)


def default_of(cls: type, name: str) -> Any:
    """The default of field ``name`` of the dataclass ``cls``: the one place a command's default is written,
    which its help text quotes."""
    found = next((f for f in dataclasses.fields(cls) if f.name == name), None)
    if found is None:
        raise AttributeError(f"{cls.__name__} has no field {name!r}")
    if found.default_factory is not dataclasses.MISSING:
        return found.default_factory()
    if found.default is dataclasses.MISSING:
        raise AttributeError(f"{cls.__name__}.{name} has no default")
    return found.default


RevisionOpt = Annotated[str | None, typer.Option("--revision", help=help_of(key_field("data.revision")[0]))]


F = TypeVar("F", bound=Callable[..., Any])


class SetEntry(str):
    """A ``--set KEY=VALUE`` entry an old option handed on, with how the user wrote it (``written``), so
    that a refusal of its value names the old option."""

    written: str

    def __new__(cls, text: str, written: str) -> SetEntry:
        entry = super().__new__(cls, text)
        entry.written = written
        return entry


@dataclass(frozen=True, slots=True)
class Deprecated:
    """An old option kept for one release: its value goes to the parameter ``target``, or to ``--set
    set_key=VALUE``. ``flag``: a switch (``--load`` style), not an option with a value; it hands ``value``
    on. ``kind``: the type of an option's value (``Path``, ``list[str]`` for a repeatable one); ``short``:
    its old one-letter spelling, hidden too."""

    old: str
    target: str | None = None
    new: str | None = None  # how the replacement is spelled (default: --target, or --set set_key=VALUE)
    set_key: str | None = None
    flag: bool = False
    value: Any = True
    kind: Any = str
    short: str | None = None
    secret: bool = False  # its value is never shown (not in a refusal, not in a line)

    @property
    def param(self) -> str:
        return "deprecated_" + self.old.lstrip("-").replace("-", "_")

    @property
    def spelled(self) -> str:
        """How the old name is written, with its short form."""
        return self.old if self.short is None else f"{self.old}/{self.short}"

    @property
    def replacement(self) -> str:
        if self.new is not None:
            return self.new
        if self.set_key is not None:
            return f"--set {self.set_key}={_setting(self.value) if self.flag else 'VALUE'}"
        assert self.target is not None
        return "--" + self.target.replace("_", "-")

    def annotation(self) -> Any:
        kind: Any = bool if self.flag else self.kind | None
        names = (self.old,) if self.short is None else (self.old, self.short)
        return Annotated[kind, typer.Option(*names, hidden=True)]


def warn_deprecated(old: str, replacement: str) -> None:
    """The one line an old option prints when it is used."""
    _warnings.print(
        f"deprecated: {old} is replaced by {replacement} (it goes in release {REMOVED_IN})", highlight=False
    )


def _setting(value: Any) -> str:
    """A value as ``--set`` spells it: booleans as TOML's true/false, repeated values joined by commas."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _apply(alias: Deprecated, value: Any, kwargs: dict[str, Any]) -> None:
    warn_deprecated(alias.spelled, alias.replacement)
    if alias.set_key is not None:
        text = _setting(alias.value if alias.flag else value)
        value_shown = HIDDEN if alias.secret else _setting(value)
        written = alias.old if alias.flag else shown(f"{alias.old} {value_shown}")
        kwargs["settings"] = [*(kwargs.get("settings") or []), SetEntry(f"{alias.set_key}={text}", written)]
        return
    assert alias.target is not None
    if kwargs.get(alias.target) not in (None, False, [], ()):
        raise ConfigError(f"expected {alias.replacement} or its old name {alias.spelled}, found both")
    kwargs[alias.target] = alias.value if alias.flag else value


def with_deprecated(*aliases: Deprecated) -> Callable[[F], F]:
    """Give a command the hidden old names ``aliases``; each used one warns once and hands its value on."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        own = list(signature.parameters.values())
        hidden = [
            inspect.Parameter(
                a.param,
                inspect.Parameter.KEYWORD_ONLY,
                default=False if a.flag else None,
                annotation=a.annotation(),
            )
            for a in aliases
        ]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for alias in aliases:
                value = kwargs.pop(alias.param, None)
                if value not in (None, False, []):
                    _apply(alias, value, kwargs)
            return func(*args, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=[*own, *hidden])  # type: ignore[attr-defined]
        # kept by functools.wraps of the decorators outside it: see deprecated_of
        wrapper.__dict__[_ALIASES] = aliases
        return wrapper  # type: ignore[return-value]

    return decorate


def deprecated_of(callback: Callable[..., Any] | None) -> tuple[Deprecated, ...]:
    """The hidden old names :func:`with_deprecated` gave a command (``callback``: its function, or the click
    command's callback that wraps it), for the release notes (``docs/changes.md``)."""
    return tuple(getattr(callback, _ALIASES, ()))

"""Flags as views of keys: each command has one map (:class:`Flag` ``--max-rank`` -> ``judgments.max_rank``),
and :func:`with_keys` gives it those flags, ``--set KEY=VALUE`` and a file of keys (``--experiment FILE``).

A flag's type, help and default come from the key's declaration (:func:`harness.keys.key`), written once; its
value is read as ``--set`` reads one (a TOML value, else the text), so a refusal reads the same from a flag,
``--set`` and a file: ``--max-rank 0: expected 1..1000, found 0``. The command receives the keys built once
(:class:`harness.experiment.Settings`, or the :class:`~harness.experiment.Experiment` for ``harness run``).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from harness.experiment import (
    Layer,
    View,
    flag_layer,
    key_field,
    read_file,
    set_layer,
    settings,
)
from harness.keys import HIDDEN, Between, Given, coerce, default_of, shown

F = TypeVar("F", bound=Callable[..., Any])
#: a builder of what a command receives: (the file's layer, the flags' and --set's layers, flag names) -> it
Builder = Callable[[Layer | None, Sequence[Layer], Mapping[str, str]], Any]
_METAVARS = {int: "INTEGER", float: "NUMBER", Path: "PATH", date: "DATE", str: "TEXT"}
FILE_PARAM, SET_PARAM = "experiment", "settings"
#: the attribute of a command's function that holds its map of flags (for the generated keys page)
_FLAGS = "__key_flags__"


@dataclass(frozen=True, slots=True)
class Flag:
    """One flag of a command: a view of one key. ``names``: its spellings (``("--dataset", "-d")``, or
    ``("MODE",)`` for an argument); ``panel``: its help panel; ``many``: repeated, each value is one of the
    key's (the command takes several: ``Settings.more``); ``source``: the judgments source whose key it is."""

    key: str
    names: tuple[str, ...]
    panel: str | None = None
    metavar: str | None = None
    many: bool = False
    param: str | None = None
    source: str | None = None

    @property
    def name(self) -> str:
        """The command's parameter."""
        return self.param or self.names[0].lstrip("-").lower().replace("-", "_")

    @property
    def flag(self) -> str:
        return self.names[0]

    @property
    def argument(self) -> bool:
        return not self.flag.startswith("-")

    def declaration(self) -> tuple[dataclasses.Field[Any], Any]:
        return key_field(self.key, self.source)

    @property
    def secret(self) -> bool:
        return bool(self.declaration()[0].metadata.get("secret"))


def _base(kind: Any) -> Any:
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    return args[0] if args and typing.get_origin(kind) is not tuple else kind


def _shown(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(_shown(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def help_of(f: dataclasses.Field[Any]) -> str:
    """A key's help on the command line: its doc, with its range and default (written once, in the key)."""
    doc = f.metadata.get("doc", "")
    check, default = f.metadata.get("check"), default_of(f)
    extra = [str(check)] if isinstance(check, Between) else []
    if default not in (None, False, ()):
        extra.append(f"default {_shown(default)}")
    return (f"{doc} ({'; '.join(extra)})" if extra else doc).replace("[", "\\[") + "."


def _annotation(flag: Flag) -> tuple[Any, Any]:
    """(the parameter's annotation, its default)."""
    f, kind = flag.declaration()
    base = _base(kind)
    help_text = help_of(f)
    if flag.argument:
        info: Any = typer.Argument(help=help_text, show_default=False, metavar=flag.flag, hidden=True)
        return Annotated[str | None, info], None
    options: dict[str, Any] = {"help": help_text, "rich_help_panel": flag.panel, "show_default": False}
    if base is bool:
        return Annotated[bool, typer.Option(*flag.names, **options)], False
    many = flag.many or typing.get_origin(base) is tuple
    item = typing.get_args(base)[0] if typing.get_origin(base) is tuple else base
    options["metavar"] = flag.metavar or _METAVARS.get(item, "TEXT")
    kind_of: Any = list[str] | None if many else str | None
    return Annotated[kind_of, typer.Option(*flag.names, **options)], None


def _value(text: str) -> Any:
    """A flag's text as ``--set`` reads a value: a TOML value (``10``, ``true``), else the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _written(flag: Flag, value: Any) -> str:
    """How the user wrote a flag (a secret's value never shown)."""
    if isinstance(value, bool):
        return flag.flag
    if flag.secret:
        return f"{flag.flag} {HIDDEN}"
    if isinstance(value, list | tuple):
        return shown(" ".join(f"{flag.flag} {v}" for v in value))
    return shown(f"{flag.flag} {value}")


def _given(flag: Flag, value: Any) -> tuple[Any, str] | None:
    """The key's value of a flag as given (None: not given)."""
    if value is None or value is False or value == []:
        return None
    if isinstance(value, bool):
        return True, _written(flag, value)
    if isinstance(value, list):
        f, _ = flag.declaration()
        joined: Any = ",".join(value) if f.metadata.get("commas") else [_value(v) for v in value]
        return joined, _written(flag, value)
    return _value(str(value)), _written(flag, value)


def _more(flag: Flag, values: list[str]) -> tuple[Any, ...]:
    """The further values of a repeated flag, each checked against the key (the first is the key's own)."""
    f, kind = flag.declaration()
    return tuple(coerce(f, kind, Given(_value(v), f"{flag.flag} {v}", raw=v)) for v in values)


def given_layers(
    flags: Sequence[Flag], values: Mapping[str, Any], entries: Sequence[str] | None
) -> tuple[list[Layer], dict[str, tuple[Any, ...]]]:
    """(the flags' layer and ``--set``'s, the further values of repeated flags)."""
    found: dict[str, tuple[Any, str]] = {}
    more: dict[str, tuple[Any, ...]] = {}
    for flag in flags:
        value = values.get(flag.name)
        if flag.many and isinstance(value, list) and value:
            value, more[flag.key] = value[0], _more(flag, value[1:])
        given = _given(flag, value)
        if given is not None:
            found[flag.key] = given
    return [flag_layer(found), set_layer(entries or ())], more


SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Any key it reads, dotted as in the file; repeatable.",
    ),
]
FileOpt = Annotated[
    Path | None,
    typer.Option("--experiment", metavar="FILE", help="Experiment file (TOML) whose tables set these keys."),
]


def with_keys(
    view: View,
    flags: Sequence[Flag],
    *,
    build: Builder | None = None,
    panel: str | None = None,
    file_help: str | None = None,
    file_panel: str | None = None,
) -> Callable[[F], F]:
    """Give a command the flags of its map, ``--set`` and ``--experiment FILE``; it declares ``keys`` (what
    ``build`` makes, default the :class:`Settings` of ``view``) as its last parameter and receives them built."""
    make: Builder = build or (lambda file, layers, names: settings(view, file, layers, flags=names))
    names = {f.key: f.flag for f in flags if not f.argument}

    def decorate(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "keys"]
        extra = []
        for flag in flags:
            annotation, default = _annotation(flag)
            kind = (
                inspect.Parameter.POSITIONAL_OR_KEYWORD if flag.argument else inspect.Parameter.KEYWORD_ONLY
            )
            extra.append(inspect.Parameter(flag.name, kind, default=default, annotation=annotation))
        extra += _common(panel, file_help, file_panel or panel)
        args = [p for p in extra if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        rest = [p for p in extra if p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD]

        @functools.wraps(func)
        def wrapper(*a: Any, **kwargs: Any) -> Any:
            values = {flag.name: kwargs.pop(flag.name, None) for flag in flags}
            entries, path = kwargs.pop(SET_PARAM, None), kwargs.pop(FILE_PARAM, None)
            layers, more = given_layers(flags, values, entries)
            built = make(read_file(path) if path is not None else None, layers, names)
            if more:
                built = dataclasses.replace(built, more=more)
            return func(*a, keys=built, **kwargs)

        params = [*args, *own, *rest]
        wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__dict__[_FLAGS] = tuple(flags)  # (kept by functools.wraps of the decorators outside it)
        return wrapper  # type: ignore[return-value]

    return decorate


def _common(panel: str | None, file_help: str | None, file_panel: str | None) -> list[inspect.Parameter]:
    """``--experiment FILE`` and ``--set KEY=VALUE``, in the command's panels."""
    file_opt = _copy(typing.get_args(FileOpt)[1], file_panel, file_help)
    set_opt = _copy(typing.get_args(SetOpt)[1], panel, None)
    keyword = inspect.Parameter.KEYWORD_ONLY
    return [
        inspect.Parameter(FILE_PARAM, keyword, default=None, annotation=Annotated[Path | None, file_opt]),
        inspect.Parameter(SET_PARAM, keyword, default=None, annotation=Annotated[list[str] | None, set_opt]),
    ]


def _copy(info: Any, panel: str | None, help_text: str | None) -> Any:
    found = copy.copy(info)
    found.rich_help_panel = panel
    found.help = help_text or found.help
    return found


def flags_of(callback: Callable[..., Any] | None) -> tuple[Flag, ...]:
    """The map of flags :func:`with_keys` gave a command (``callback``: its function, or the click command's)."""
    return tuple(getattr(callback, _FLAGS, ()))


__all__ = ["FileOpt", "Flag", "SetOpt", "given_layers", "help_of", "with_keys"]

"""One definition per concept of the command line, and one way to retire an old option name.

Every command that writes a path takes ``--output/-o``; every command that retries takes ``--max-retries``
in one range; ``--revision`` is the hub revision of a dataset everywhere. Options default to ``None``
("not given"): the defaults live once, in the typed config each command builds.

An option that is renamed, or that moved into the experiment file, keeps working for one release as a
hidden alias (:class:`Deprecated`, given to :func:`with_deprecated`): using it prints one line that says
what replaces it, and its value goes where the new name's would.

    @with_deprecated(Deprecated("--base-url", "embed_url", new="--embed-url"),
                     Deprecated("--batch-size", set_key="search.batch_size"))
    def run(..., embed_url: EmbedUrlOpt = None, settings: SetOpt = None) -> None: ...
"""

from __future__ import annotations

import copy
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from indexer import DEFAULT_KEY_ENV, ConfigError

#: retries of one request (an msearch, a chat call, a bulk chunk), the same range in every command
MAX_RETRIES = 50
#: the release in which the hidden aliases go
REMOVED_IN = "0.3"

_warnings = Console(stderr=True, soft_wrap=True)


def output_option(what: str) -> Any:
    """``--output/-o``: the path a command writes (``what`` says which, and its default)."""
    return Annotated[Path | None, typer.Option("--output", "-o", help=what)]


RevisionOpt = Annotated[
    str | None,
    typer.Option(
        "--revision", help="Hub revision (branch, tag or commit) of r2med datasets (default: pinned)."
    ),
]
RetriesOpt = Annotated[
    int | None,
    typer.Option("--max-retries", min=0, max=MAX_RETRIES, help=f"Retries per request (0..{MAX_RETRIES})."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set an experiment key (dotted, as in the file), e.g. search.batch_size=64; repeatable.",
    ),
]


_EMBED_MODEL = (
    "Embedding model: a sentence-transformers hub id (org/name\\[@REVISION]; offline: from the local Hugging Face "
    "cache), a model folder, a short name (minilm, e5, bge, ...), or openai:MODEL (an endpoint)."
)
EmbedModelOpt = Annotated[str | None, typer.Option("--embed-model", help=_EMBED_MODEL)]
EmbedModelsOpt = Annotated[
    list[str] | None, typer.Option("--embed-model", help=f"{_EMBED_MODEL} Repeat for several.")
]
EmbedUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--embed-url",
        help="OpenAI-compatible embeddings endpoint for openai:MODEL, e.g. http://127.0.0.1:8000/v1.",
    ),
]
EmbedKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--embed-key-env",
        help=f"Variable holding the embeddings endpoint's key (default {DEFAULT_KEY_ENV}; never printed or stored).",
    ),
]
LlmOpt = Annotated[str | None, typer.Option("--llm", help="The LLM: the model name its endpoint serves.")]
LlmUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-url",
        help="OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:8000/v1 (default $OPENAI_BASE_URL, else OpenAI).",
    ),
]
LlmKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-key-env",
        help=f"Variable holding the LLM endpoint's key (default {DEFAULT_KEY_ENV}; never printed or stored).",
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines: only the results.")]


def in_panel(option: Any, panel: str, *, help: str | None = None, hidden: bool = False) -> Any:
    """The typer option of ``option`` (an ``Annotated`` option of this module) in the help panel ``panel``
    (``help``: a shorter text there; ``hidden``: not shown), to annotate with:
    ``Annotated[str | None, in_panel(EmbedModelOpt, "Arms")]``."""
    info = copy.copy(typing.get_args(option)[1])
    info.rich_help_panel, info.hidden = panel, hidden or info.hidden
    info.help = help or info.help
    return info


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
    set_key=VALUE``. ``flag``: a switch (``--load`` style), not an option with a value; it sets
    ``flag_value``. ``short``: its one-letter name (``-m``); ``multiple``: it may be repeated (its values
    go on joined by commas)."""

    old: str
    target: str | None = None
    new: str | None = None  # how the replacement is spelled (default: --target, or --set set_key=VALUE)
    set_key: str | None = None
    flag: bool = False
    flag_value: str = "true"
    short: str | None = None
    multiple: bool = False

    @property
    def param(self) -> str:
        return "deprecated_" + self.old.lstrip("-").replace("-", "_")

    @property
    def replacement(self) -> str:
        if self.new is not None:
            return self.new
        if self.set_key is not None:
            return f"--set {self.set_key}={self.flag_value if self.flag else 'VALUE'}"
        assert self.target is not None
        return "--" + self.target.replace("_", "-")

    def annotation(self) -> Any:
        kind: Any = bool if self.flag else (list[str] | None if self.multiple else str | None)
        names = (self.old, self.short) if self.short else (self.old,)
        return Annotated[kind, typer.Option(*names, hidden=True)]


def warn_deprecated(old: str, replacement: str) -> None:
    """The one line an old option prints when it is used."""
    _warnings.print(
        f"deprecated: {old} is replaced by {replacement} (it goes in release {REMOVED_IN})", highlight=False
    )


F = TypeVar("F", bound=Callable[..., Any])


def _apply(alias: Deprecated, value: Any, kwargs: dict[str, Any]) -> None:
    warn_deprecated(alias.old, alias.replacement)
    if isinstance(value, list):
        value = ",".join(value)
    if alias.set_key is not None:
        text = alias.flag_value if alias.flag else str(value)
        written = alias.old if alias.flag else f"{alias.old} {value}"
        kwargs["settings"] = [*(kwargs.get("settings") or []), SetEntry(f"{alias.set_key}={text}", written)]
        return
    assert alias.target is not None
    if kwargs.get(alias.target) not in (None, False, [], ()):
        raise ConfigError(f"expected {alias.replacement} or its old name {alias.old}, found both")
    kwargs[alias.target] = value


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
        return wrapper  # type: ignore[return-value]

    return decorate

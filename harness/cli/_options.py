"""One definition per concept of the command line, and one way to retire an old option name.

Every command that writes a path takes ``--output/-o``; every command that retries takes ``--max-retries``
in one range; ``--revision`` is the hub revision of a dataset everywhere. Options default to ``None``
("not given"): the defaults live once, in the typed config each command builds.

Where a shared option means something particular in one command (what ``--output`` writes, whose default
``--max-retries`` has), the command puts :func:`output_option` or :func:`retries_option` in its ``Annotated``;
its help then says the default of the command's typed config (:func:`default_of`), and the command passes on
only what was given (:func:`given`). :func:`with_panels` groups a long command's help into panels.

An option that is renamed, or that moved into the experiment file, keeps working for one release as a
hidden alias (:class:`Deprecated`, given to :func:`with_deprecated`): using it prints one line that says
what replaces it, and its value goes where the new name's would.

    @with_deprecated(Deprecated("--base-url", "embed_url", new="--embed-url"),
                     Deprecated("--batch-size", set_key="search.batch_size"))
    def run(..., embed_url: EmbedUrlOpt = None, settings: SetOpt = None) -> None: ...
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args

import typer
from rich.console import Console

from base import DEFAULT_KEY_ENV, ConfigError
from harness.cli._views import help_of
from harness.experiment import key_field
from harness.keys import HIDDEN, shown
from indexer import DEFAULT_EMBED_BACKEND, DEFAULT_MODEL, TRUST_FLAG, backend_names, remote_code_models

#: retries of one request (an msearch, a chat call, a bulk chunk), the same range in every command
MAX_RETRIES = 50
#: the release in which the hidden aliases go
REMOVED_IN = "0.3"

_warnings = Console(stderr=True, soft_wrap=True)
#: the attribute of a command's function that holds its hidden old names
_ALIASES = "__deprecated_aliases__"


def output_option(what: str) -> Any:
    """``--output/-o``, the path a command writes (``what`` says which, and its default), for its
    ``Annotated``: ``output: Annotated[Path | None, output_option("HTML file to write ...")] = None``."""
    return typer.Option("--output", "-o", help=what)


def retries_option(what: str, default: int) -> Any:
    """``--max-retries`` in the one range 0..MAX_RETRIES, for a command's ``Annotated``: retries of one
    ``what`` (e.g. "bulk request"); ``default`` is its typed config's (the option itself defaults to None)."""
    return typer.Option(
        "--max-retries",
        min=0,
        max=MAX_RETRIES,
        help=f"Retries per {what} (0..{MAX_RETRIES}; default {default}).",
    )


def given(**values: Any) -> dict[str, Any]:
    """The options the user gave (not None), to pass on: what is left out keeps the typed config's default."""
    return {name: value for name, value in values.items() if value is not None}


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


EMBED_MODEL_HELP = (
    "Embedding model: a sentence-transformers hub id (org/name\\[@REVISION]; offline: from the local Hugging Face "
    "cache), a model folder, a short name (minilm, e5, bge, ...), or openai:MODEL (an endpoint)."
)
EmbedModelOpt = Annotated[str | None, typer.Option("--embed-model", help=EMBED_MODEL_HELP)]
EmbedModelsOpt = Annotated[
    list[str] | None,
    typer.Option("--embed-model", help=f"{EMBED_MODEL_HELP} Repeat for several (default {DEFAULT_MODEL})."),
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
QueryPromptOpt = Annotated[
    str | None,
    typer.Option("--query-prompt", help="Put this before every query (replaces the model's own prompt)."),
]
DocumentPromptOpt = Annotated[
    str | None,
    typer.Option(
        "--document-prompt", help="Put this before every document (replaces the model's own prompt)."
    ),
]
TrustRemoteCodeOpt = Annotated[
    bool,
    typer.Option(
        TRUST_FLAG,
        help=(
            "Allow a model that ships Python code of its own (auto_map in its config) to run it, as "
            f"{', '.join(m.hub_id.rsplit('/', 1)[-1] for m in remote_code_models())} need. Without it such "
            "a model is refused; with it, the manifest records trust_remote_code."
        ),
    ),
]
_EMBED_BACKEND = (
    f"What computes the vectors: {', '.join(backend_names())}, optionally /PRECISION (openvino/fp32); default "
    f"{DEFAULT_EMBED_BACKEND}: the fastest numerics this machine runs within 0.002 sample nDCG@10 of torch fp32, "
    "checked once per machine; torch is the fp32 reference. Recorded in the cache key, the index name and the manifest."
)
EmbedBackendOpt = Annotated[str | None, typer.Option("--embed-backend", help=_EMBED_BACKEND)]
MappingOpt = Annotated[
    Path | None,
    typer.Option(
        "--mapping",
        help="Your own index-creation body (JSON: settings, analyzers, mappings); the harness fills only "
        "the fields --field-map names.",
    ),
]
FieldMapOpt = Annotated[
    str | None,
    typer.Option(
        "--field-map",
        help="Where --mapping keeps the corpus: title=FIELD,text=FIELD,vector=FIELD (default: the "
        "harness's names title, text and the model's field, where mapped).",
    ),
]


F = TypeVar("F", bound=Callable[..., Any])


def _in_panel(param: inspect.Parameter, panel: str) -> inspect.Parameter:
    base, *meta = get_args(param.annotation)
    moved = []
    for info in meta:
        if isinstance(info, typer.models.ParameterInfo):
            info = copy.copy(info)
            info.rich_help_panel = panel
        moved.append(info)
    return param.replace(annotation=Annotated[(base, *moved)])


def with_panels(panels: Mapping[str, Sequence[str]]) -> Callable[[F], F]:
    """Group a long command's help: each panel lists the parameters it shows (the others stay under
    "Options"). Put it outside the decorators that add options (connection, hidden old names)."""
    where = {name: panel for panel, names in panels.items() for name in names}

    def decorate(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        unknown = sorted(set(where) - set(signature.parameters))
        if unknown:
            raise TypeError(f"{func.__name__} has no parameter(s) {', '.join(unknown)} to put in a panel")
        params = [
            _in_panel(p, where[p.name]) if p.name in where else p for p in signature.parameters.values()
        ]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def in_panel(option: Any, panel: str, *, help: str | None = None, hidden: bool = False) -> Any:
    """The typer option of ``option`` (an ``Annotated`` option of this module, or an option itself) in the
    help panel ``panel`` (``help``: a shorter text there; ``hidden``: not shown), to annotate with:
    ``Annotated[str | None, in_panel(EmbedModelOpt, "Arms")]``."""
    found = option if isinstance(option, typer.models.ParameterInfo) else get_args(option)[1]
    info = copy.copy(found)
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

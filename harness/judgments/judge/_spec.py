"""A judge's configuration, validated once: from flags or from a table, into one :class:`JudgeSpec`.

:class:`JudgeOptions` is what the user wrote (``None`` where nothing was given), from the command's
flags or from a TOML table (:meth:`JudgeOptions.from_table`); :meth:`JudgeOptions.build` checks it
once, reads and checks the templates, and gives the :class:`JudgeSpec` every other part takes.
Errors name what the user wrote: the flag (``--combine``), or the key path (``exp.toml: [judgments]
combine``). The defaults are defined here once.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import ConfigError, HarnessError
from harness._errors import SettingError
from harness.expand import GenerationSettings
from harness.judgments.judge._client import JUDGE_SETTINGS, Endpoint, endpoint
from harness.judgments.judge._combine import COMBINERS, combiner
from harness.judgments.judge._context import ContextSpec
from harness.judgments.judge._prompt import JudgePrompt, load_prompt
from harness.judgments.judge._scale import Scale
from harness.results import JudgeIdentity

HUMAN_UNJUDGED = ("auto", "zero", "skip")
DEFAULT_TEMPLATE = "graded"
DEFAULT_COMBINE = "mean"


@dataclass(frozen=True, slots=True)
class Judge:
    """One judge: a model and a prompt (with its scale)."""

    model: str
    prompt: JudgePrompt

    @property
    def id(self) -> str:
        return f"{self.model}/{self.prompt.sha256[:12]}/{self.prompt.scale.name}"

    def identity(self, settings: GenerationSettings) -> JudgeIdentity:
        return JudgeIdentity(
            self.id,
            self.model,
            self.prompt.sha256,
            self.prompt.source,
            self.prompt.scale.name,
            settings.to_dict(),
        )


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """Everything a judging run needs: the judges, how their labels combine, what they read, the endpoint."""

    judges: tuple[Judge, ...]
    endpoint: Endpoint = field(default_factory=Endpoint)
    combine: str = DEFAULT_COMBINE
    context: ContextSpec = field(default_factory=ContextSpec)
    settings: GenerationSettings = JUDGE_SETTINGS
    human_unjudged: str = "auto"
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        if not self.judges:
            raise ConfigError("expected one or more judges (--llm MODEL), found none")
        scales = sorted({j.prompt.scale.name for j in self.judges})
        if len(scales) > 1:
            raise ConfigError(
                f"expected every judge on one scale (their labels are combined), found {', '.join(scales)}"
            )
        ids = [j.id for j in self.judges]
        if len(set(ids)) < len(ids):
            raise ConfigError(
                f"expected different judges, found {sorted(i for i in ids if ids.count(i) > 1)[0]} twice"
            )
        combiner(self.combine)
        if self.human_unjudged not in HUMAN_UNJUDGED:
            raise ConfigError(
                f"expected --human-unjudged among {', '.join(HUMAN_UNJUDGED)}, found {self.human_unjudged!r}"
            )

    @property
    def id(self) -> str:
        """The judge's id: one judge's own, or ``combine(id+id+...)``."""
        if len(self.judges) == 1:
            return self.judges[0].id
        return f"{self.combine}({'+'.join(j.id for j in self.judges)})"

    @property
    def scale(self) -> Scale:
        return self.judges[0].prompt.scale


#: option -> how it is spelled on the command line
def flag_name(option: str) -> str:
    return "--" + option.replace("_", "-")


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """What the user wrote for a judge, flags or table alike; ``None`` / empty: not given."""

    llm: tuple[str, ...] = ()
    template: tuple[str, ...] = ()
    scale: str | None = None
    combine: str | None = None
    context_source: str | None = None
    context_fields: tuple[str, ...] = ()
    index: str | None = None
    max_doc_tokens: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    llm_url: str | None = None
    llm_key_env: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    human_unjudged: str | None = None
    cache_dir: Path | None = None

    @classmethod
    def from_table(cls, table: Mapping[str, Any], source: str) -> JudgeOptions:
        """The options of a TOML table (``source`` names it: ``exp.toml: [judgments]``); a value refused raises
        :class:`~harness._errors.SettingError`, which knows its key."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise ConfigError(
                f"{source}: unknown key(s) {', '.join(unknown)}; expected among {', '.join(known)}"
            )
        values = {name: _table_value(name, table[name], f"{source} {name}") for name in table}
        return cls(**values)

    def build(self, where: Callable[[str], str] = flag_name) -> JudgeSpec:
        """The validated spec; a problem names the option as ``where`` spells it."""
        try:
            return self._build()
        except HarnessError as exc:
            raise ConfigError(_renamed(str(exc), where)) from None

    def _build(self) -> JudgeSpec:
        if not self.llm:
            raise ConfigError("expected --llm MODEL (the model name the endpoint serves), found none")
        prompts = [load_prompt(t, self.scale) for t in self.template or (DEFAULT_TEMPLATE,)]
        judges = tuple(Judge(m.strip(), p) for m, p in itertools.product(self.llm, prompts))
        context = _given(
            ContextSpec,
            source=self.context_source,
            fields=self.context_fields or None,
            index=self.index,
            max_doc_tokens=self.max_doc_tokens,
        )
        base = JUDGE_SETTINGS
        settings = GenerationSettings(
            temperature=base.temperature if self.temperature is None else self.temperature,
            top_p=base.top_p,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )
        ep = endpoint(
            self.llm_url,
            self.llm_key_env,
            timeout_s=self.timeout,
            concurrency=self.concurrency,
            max_retries=self.max_retries,
        )
        return _given(
            JudgeSpec,
            judges=judges,
            endpoint=ep,
            combine=self.combine,
            context=context,
            settings=settings,
            human_unjudged=self.human_unjudged,
            cache_dir=self.cache_dir,
        )


def _given(kind: Any, **values: Any) -> Any:
    """``kind`` built from the values given (the others keep the class's defaults)."""
    return kind(**{k: v for k, v in values.items() if v is not None})


_TYPES: dict[str, tuple[type, ...]] = {
    "llm": (str, list),
    "template": (str, list),
    "context_fields": (str, list),
    "max_doc_tokens": (int,),
    "temperature": (int, float),
    "max_tokens": (int,),
    "seed": (int,),
    "concurrency": (int,),
    "timeout": (int, float),
    "max_retries": (int,),
}
_LISTS = ("llm", "template", "context_fields")


def _table_value(name: str, value: Any, where: str) -> Any:
    kinds = _TYPES.get(name, (str,))
    ok = not isinstance(value, bool) and isinstance(value, kinds)  # (kept apart: no narrowing of value)
    if not ok:
        raise SettingError(name, f"expected {' or '.join(k.__name__ for k in kinds)}, found {value!r}", where)
    if name in _LISTS:
        items = [value] if isinstance(value, str) else value
        if not all(isinstance(v, str) for v in items):
            raise SettingError(name, f"expected a list of strings, found {value!r}", where)
        return tuple(items)
    if name == "cache_dir":
        return Path(value)
    return value


def _renamed(message: str, where: Callable[[str], str]) -> str:
    """A message written with flag names, with each option spelled as ``where`` spells it."""
    if where is flag_name:
        return message
    for name in sorted((f.name for f in dataclasses.fields(JudgeOptions)), key=len, reverse=True):
        message = message.replace(flag_name(name), where(name))
    return message


__all__ = [
    "COMBINERS",
    "DEFAULT_COMBINE",
    "DEFAULT_TEMPLATE",
    "HUMAN_UNJUDGED",
    "Judge",
    "JudgeOptions",
    "JudgeSpec",
    "flag_name",
]

"""A judge's configuration, as keys: :class:`JudgeOptions` is a table of them (``judgments.llm``,
``judgments.template``, ...), read by the experiment's judge source and by ``harness judge`` alike (``--llm M``
is ``--set judgments.llm=M``); each value is checked by its declaration, and :meth:`JudgeOptions.build` reads
the templates and gives the :class:`JudgeSpec` every other part takes. A refusal names the key it refuses
(:class:`~harness._errors.SettingError`), so each edge names it as its user wrote it. The defaults are the
components' own (the endpoint's, the judges' sampling, the document context), written once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from base import ConfigError
from harness._errors import SettingError
from harness.expand import GenerationSettings
from harness.judgments.judge._client import JUDGE_SETTINGS, Endpoint
from harness.judgments.judge._combine import COMBINERS
from harness.judgments.judge._context import CONTEXT_SOURCES, DATASET_FIELDS, ContextSpec
from harness.judgments.judge._prompt import BUILTIN_PREFIX, BUILTIN_PROMPTS, JudgePrompt, load_prompt
from harness.judgments.judge._scale import SCALES, Scale
from harness.keys import PERFORMANCE, RESULTS, between, key
from harness.llm import EndpointKeys
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

    @property
    def id(self) -> str:
        """The judge's id: one judge's own, or ``combine(id+id+...)``."""
        if len(self.judges) == 1:
            return self.judges[0].id
        return f"{self.combine}({'+'.join(j.id for j in self.judges)})"

    @property
    def scale(self) -> Scale:
        return self.judges[0].prompt.scale


_CONTEXT = ContextSpec()


def _template_file(value: str) -> bool:
    """Whether a template is a file (resolved from where it was written), not a built-in one."""
    return value.removeprefix(BUILTIN_PREFIX) not in BUILTIN_PROMPTS


@dataclass(frozen=True, slots=True)
class JudgeOptions(EndpointKeys):
    """A judge's keys (``judgments.*``): the models, their templates, what they read, the endpoint."""

    llm: tuple[str, ...] = key(
        (),
        affects=RESULTS,
        commas=True,
        doc="the LLM: model name(s) its endpoint serves; several: several judges",
    )
    template: tuple[str, ...] = key(
        (DEFAULT_TEMPLATE,),
        affects=RESULTS,
        commas=True,
        paths=_template_file,
        doc=f"{' | '.join(BUILTIN_PROMPTS)} (packaged) or a template file (TOML, or Mustache with a scale); several: several judges",
    )
    scale: str | None = key(affects=RESULTS, choices=lambda: SCALES, doc="scale of a Mustache template file")
    combine: str = key(
        DEFAULT_COMBINE, affects=RESULTS, choices=lambda: COMBINERS, doc="how several judges' labels combine"
    )
    context_source: str = key(
        _CONTEXT.source,
        affects=RESULTS,
        choices=lambda: CONTEXT_SOURCES,
        doc="where the documents' fields come from",
    )
    context_fields: tuple[str, ...] = key(
        _CONTEXT.fields, affects=RESULTS, commas=True, doc="document fields the judge reads"
    )
    index: str | None = key(affects=RESULTS, doc="index to read fields from (default: the run's)")
    max_doc_tokens: int = key(
        _CONTEXT.max_doc_tokens,
        affects=RESULTS,
        check=between(16, 100_000),
        doc="tokens of each document the judge reads",
    )
    temperature: float = key(
        JUDGE_SETTINGS.temperature, affects=RESULTS, check=between(0, 2), doc="sampling temperature"
    )
    max_tokens: int | None = key(affects=RESULTS, check=between(1, 1_000_000), doc="answer tokens per call")
    seed: int | None = key(affects=RESULTS, doc="sent to endpoints that honour it")
    human_unjudged: str = key(
        "auto",
        affects=RESULTS,
        choices=lambda: HUMAN_UNJUDGED,
        doc="pooled pairs people did not judge, for agreement (auto: 0 when the judgments list only relevant documents, else left out)",
    )
    cache_dir: Path | None = key(affects=PERFORMANCE, doc="answer cache (default <cache>/judgments)")

    def check(self) -> None:
        if not self.llm:
            raise SettingError("llm", "expected the model name the endpoint serves, found none")
        unknown = sorted(set(self.context_fields) - set(DATASET_FIELDS))
        if self.context_source == "dataset" and unknown:
            raise SettingError(
                "context_fields",
                f"expected fields among {', '.join(DATASET_FIELDS)} for the dataset's documents, found "
                f"{', '.join(unknown)} (read other fields from the index: {{judgments.context_source}} index)",
            )

    def build(self) -> JudgeSpec:
        """The spec, with the templates read; a refusal names the key it refuses."""
        judges = self._judges()
        context = ContextSpec(self.context_source, self.context_fields, self.index, self.max_doc_tokens)
        settings = GenerationSettings(
            temperature=self.temperature,
            top_p=JUDGE_SETTINGS.top_p,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )
        ep = self.chat_endpoint("judgments")
        return JudgeSpec(judges, ep, self.combine, context, settings, self.human_unjudged, self.cache_dir)

    def _judges(self) -> tuple[Judge, ...]:
        try:
            prompts = [load_prompt(t, self.scale) for t in self.template]
        except ConfigError as exc:
            raise SettingError("template", str(exc)) from None
        judges = tuple(Judge(m.strip(), p) for m, p in itertools.product(self.llm, prompts))
        scales = sorted({j.prompt.scale.name for j in judges})
        if len(scales) > 1:
            raise SettingError(
                "template",
                f"expected every judge on one scale (their labels are combined), found {', '.join(scales)}",
            )
        ids = [j.id for j in judges]
        twice = sorted(i for i in ids if ids.count(i) > 1)
        if twice:
            raise SettingError("llm", f"expected different judges, found {twice[0]} twice")
        return judges


__all__ = [
    "COMBINERS",
    "DEFAULT_COMBINE",
    "DEFAULT_TEMPLATE",
    "HUMAN_UNJUDGED",
    "Judge",
    "JudgeOptions",
    "JudgeSpec",
]

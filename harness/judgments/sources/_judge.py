"""``source = "judge"``: an LLM judge over the pooled top-k of the run's own arms, after the search.

The judge is ``harness judge``'s own (:class:`~harness.judgments.judge.JudgeOptions` read from the table's keys,
built and checked once into a :class:`~harness.judgments.judge.JudgeSpec`, with its defaults); the pool is
``harness pool``'s (the top ``depth`` of each arm, default every arm, the pairs people judged kept in, so
that the judge's agreement with them is measured). Judging happens once per dataset, after every arm
was searched, fused and reranked and before any is scored; each answer is committed to the judge's
cache as it arrives, so a rerun (or a resumed run) makes only the calls not answered yet, none once
all are. The labels and their provenance go to ``RUN_DIR/judged/<judge>/<dataset>/``; they meet the
dataset's judgments as ``judgments.mode`` says, and every figure scored with them names the judge and
its measured agreement.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from base import ConfigError
from harness._errors import SettingError
from harness.judgments._apply import judgments_used, merge_judgments
from harness.judgments.judge import (
    BUILTIN_PROMPTS,
    DEFAULT_COMBINE,
    DEFAULT_DEPTH,
    DEFAULT_TEMPLATE,
    ENDPOINT_DEFAULTS,
    JUDGE_SETTINGS,
    ContextSpec,
    JudgeOptions,
    JudgeSpec,
    PairSet,
    default_output,
    judge_and_write,
    pairs_from_rankings,
)
from harness.judgments.sources._base import AfterSearch, Judged, Key, Setting, Source
from harness.results import Ranking
from indexer import Dataset, read_judgments

_CONTEXT = ContextSpec()
_SPEC = {f.name: f.default for f in dataclasses.fields(JudgeSpec)}
_POOL = {
    "depth": Key("top documents of each arm pooled and judged", DEFAULT_DEPTH),
    "arms": Key("arms pooled (default: every arm of the run)", ()),
    "unjudged_only": Key("judge only pairs people did not judge (agreement then unmeasured)", False),
}
_OPTIONS = {
    "llm": Key("the LLM: model name(s) its endpoint serves; several: several judges"),
    "template": Key(f"{' | '.join(BUILTIN_PROMPTS)} | a template file", DEFAULT_TEMPLATE),
    "scale": Key("scale of a Mustache template file: graded | binary"),
    "combine": Key("how several judges' labels combine: mean | majority | min | max", DEFAULT_COMBINE),
    "context_source": Key("where the documents' fields come from: dataset | index", _CONTEXT.source),
    "context_fields": Key("document fields the judge reads", _CONTEXT.fields),
    "index": Key("index to read fields from (default: the arms' index)"),
    "max_doc_tokens": Key("tokens of each document the judge reads", _CONTEXT.max_doc_tokens),
    "temperature": Key("sampling temperature", JUDGE_SETTINGS.temperature),
    "max_tokens": Key("answer tokens per call"),
    "seed": Key("sent to endpoints that honour it"),
    "llm_url": Key("OpenAI-compatible chat endpoint"),
    "llm_key_env": Key("variable holding the endpoint's key (never stored or printed)"),
    "concurrency": Key("requests in flight", ENDPOINT_DEFAULTS.concurrency),
    "timeout": Key("seconds per request", ENDPOINT_DEFAULTS.timeout_s),
    "max_retries": Key("retries per request", ENDPOINT_DEFAULTS.retry.max_retries),
    "human_unjudged": Key(
        "pooled pairs people did not judge, for agreement: auto | zero | skip", _SPEC["human_unjudged"]
    ),
    "cache_dir": Key("answer cache (default <cache>/judgments)"),
}
#: options that list values (a string lists them with commas, as on the command line)
_LISTS = ("llm", "template", "context_fields")
#: ``{judgments.KEY}``: how the judge's messages name a key (see :func:`_built`)
_REF = re.compile(r"\{judgments\.([a-z_]+)\}")


def _option(name: str, setting: Setting) -> Any:
    value = setting.value
    if name in _LISTS and isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if name == "template" and isinstance(value, list):
        return [setting.path(t) if isinstance(t, str) and _is_file(t) else t for t in value]
    return setting.path(value) if name == "cache_dir" and isinstance(value, str) else value


def _is_file(template: str) -> bool:
    return template.removeprefix("builtin:") not in BUILTIN_PROMPTS


def _built(options: JudgeOptions, given: set[str]) -> JudgeSpec:
    """The judge's spec; a refusal names the key its message names (else the templates, or the models)."""
    try:
        return options.build(lambda name: "{judgments." + name + "}")
    except ConfigError as exc:
        text = str(exc)
        found = _REF.search(text)
        key = found.group(1) if found else "template" if "template" in given else "llm"
        raise SettingError(key, text) from None


def _pool(values: Mapping[str, Setting]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, setting in values.items():
        value = setting.value
        if name == "depth" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise SettingError(name, f"expected an integer of 1 or more, found {value!r}")
        if name == "unjudged_only" and not isinstance(value, bool):
            raise SettingError(name, f"expected true or false, found {value!r}")
        if name == "arms":
            items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
            if not isinstance(items, list) or not items or not all(isinstance(a, str) and a for a in items):
                raise SettingError(
                    name, f"expected arm names (a list, or names with commas), found {value!r}"
                )
            value = tuple(items)
        out[name] = value
    return out


@dataclass(frozen=True, slots=True)
class Judge(Source):
    """An LLM judge (one or several, combined) and the pool of the arms' results it judges."""

    spec: JudgeSpec
    depth: int = DEFAULT_DEPTH
    arms: tuple[str, ...] = ()
    unjudged_only: bool = False

    name = "judge"
    doc = "an LLM judge over the pooled top-k of the run's own arms, after the search"
    keys = _POOL | _OPTIONS
    after_search = True

    @classmethod
    def from_settings(cls, values: Mapping[str, Setting]) -> Judge:
        table = {k: _option(k, s) for k, s in values.items() if k in _OPTIONS}
        spec = _built(JudgeOptions.from_table(table, "judgments"), set(table))
        return cls(spec, **_pool({k: s for k, s in values.items() if k in _POOL}))

    @property
    def named_arms(self) -> tuple[str, ...]:
        return self.arms

    def identity(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "judge": spec.id,
            "settings": spec.settings.to_dict(),
            "context": dataclasses.asdict(spec.context),
            "human_unjudged": spec.human_unjudged,
            "pool": {"depth": self.depth, "arms": list(self.arms), "unjudged_only": self.unjudged_only},
        }

    def judge(self, ds: Dataset, rankings: Mapping[str, Ranking], ctx: AfterSearch) -> Judged:
        pairs = self._pairs(ds, rankings, ctx)
        backend = ctx.backend if self.spec.context.source == "index" else None
        result = judge_and_write(
            self.spec,
            pairs,
            default_output(self.spec, pairs),
            backend=backend,
            console=ctx.console,
            show_progress=ctx.progress,
        )
        judgments = read_judgments(result.qrels, "trec")
        merged = merge_judgments(ds.qrels, judgments.qrels(ds.queries).qrels, ctx.mode)
        name = f"{result.qrels.relative_to(ctx.run_dir)} ({judgments.sha256[:8]})"
        used = judgments_used(None, name, ctx.mode, result.provenance)
        return Judged(ds.with_qrels(merged.qrels), used, tuple(result.lines()))

    def _pairs(self, ds: Dataset, rankings: Mapping[str, Ranking], ctx: AfterSearch) -> PairSet:
        unknown = [a for a in self.arms if a not in rankings]
        if unknown:
            raise ConfigError(
                f"judgments.arms: expected arms of this run ({', '.join(rankings)}), found {', '.join(unknown)}"
            )
        chosen = {a: r for a, r in rankings.items() if not self.arms or a in self.arms}
        pairs = pairs_from_rankings(
            ds,
            chosen,
            depth=self.depth,
            unjudged_only=self.unjudged_only,
            where=str(ctx.run_dir),
            index=ctx.index,
        )
        return dataclasses.replace(pairs, run_dir=ctx.run_dir)

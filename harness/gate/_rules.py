"""Rules from text and from a ``[gate]`` table: one parser per rule kind, in a registry.

Syntax (``[DATASETS/]ARM:BODY``; DATASETS is a dataset name or a glob, ``*`` or nothing = every
dataset of the run, each checked on its own)::

    hybrid:ndcg@10>=0.65                  threshold (floor; <= and < make a ceiling)
    sample/lexical:unjudged@10<=0.95      threshold on one dataset
    vector:p99<=50ms                      latency ceiling (pNN, took-pNN; ms or s)
    hybrid:ndcg@10 drop<=0.02             regression against --baseline (absolute margin)
    r2med/*/hybrid:ndcg@10 drop<=5%       ... relative margin, on every R2MED dataset
    hybrid:ndcg@10 drop<=0.02 vs baseline:lexical   ... against another arm of the baseline

The ``[gate]`` table (a file given with ``--rules``, or later the experiment file)::

    [gate]
    baseline = "runs/production"          # optional; relative to the file; --baseline wins
    require = ["hybrid:ndcg@10>=0.65", "vector:p99<=50ms", "hybrid:ndcg@10 drop<=0.02"]
    alpha = 0.05                          # optional: significance level of regressions
    test = "randomization"                # optional: or "t-test"
    allow_unmeasured_judge = false        # optional: gate on labels of a judge nobody measured
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import HarnessError
from harness.gate import _latency, _regression, _threshold
from harness.gate._context import GateOptions
from harness.gate._errors import GateError
from harness.gate._model import Rule, Target
from harness.gate._syntax import split_target

Parser = Callable[[Target, str, str], Rule | None]

#: rule kinds, tried in this order: the first whose parser accepts the body makes the rule
RULE_KINDS: dict[str, Parser] = {
    "latency": _latency.parse,
    "regression": _regression.parse,
    "threshold": _threshold.parse,
}
TABLE_KEYS = ("require", "baseline", "alpha", "test", "trials", "seed", "allow_unmeasured_judge")


def parse_rule(text: str) -> Rule:
    """One rule from its text (a :class:`GateError` saying what was expected otherwise)."""
    target, body = split_target(text.strip())
    for parser in RULE_KINDS.values():
        rule = parser(target, body, text.strip())
        if rule is not None:
            return rule
    raise GateError(
        f"rule {text!r}: expected ARM:MEASURE>=VALUE (threshold), ARM:p99<=50ms (latency) or "
        "ARM:MEASURE drop<=MARGIN[%] (regression against --baseline), found the body " + repr(body)
    )


@dataclass(frozen=True, slots=True)
class GateConfig:
    """Rules, the baseline and the test settings: from flags, a ``[gate]`` table, or both."""

    rules: tuple[Rule, ...] = ()
    baseline: Path | None = None
    options: GateOptions = field(default_factory=GateOptions)
    #: gate on labels of an LLM judge whose agreement with people was never measured (refused otherwise)
    allow_unmeasured_judge: bool = False

    @classmethod
    def from_table(
        cls, table: Mapping[str, Any], source: str = "[gate]", base_dir: Path | None = None
    ) -> GateConfig:
        """The gate of a ``[gate]`` table (a TOML table already parsed); paths are relative to ``base_dir``."""
        unknown = sorted(set(table) - set(TABLE_KEYS))
        if unknown:
            raise GateError(
                f"{source}: unknown key(s) {', '.join(unknown)} in [gate]; expected {', '.join(TABLE_KEYS)}"
            )
        require = table.get("require", [])
        if isinstance(require, str) or not all(isinstance(r, str) for r in require):
            raise GateError(
                f"{source}: expected [gate] require to be a list of rule strings, found {require!r}"
            )
        baseline = table.get("baseline")
        if baseline is not None and not isinstance(baseline, str):
            raise GateError(f"{source}: expected [gate] baseline to be a path string, found {baseline!r}")
        try:
            options = GateOptions(**{k: table[k] for k in ("alpha", "test", "trials", "seed") if k in table})
            rules = tuple(parse_rule(r) for r in require)
        except (HarnessError, TypeError) as exc:
            raise GateError(f"{source}: {exc}") from None
        allow = table.get("allow_unmeasured_judge", False)
        if not isinstance(allow, bool):
            raise GateError(
                f"{source}: expected [gate] allow_unmeasured_judge to be true or false, found {allow!r}"
            )
        base = Path(baseline) if baseline else None
        if base is not None and not base.is_absolute() and base_dir is not None:
            base = base_dir / base
        return cls(rules, base, options, allow)

    @classmethod
    def from_file(cls, path: Path) -> GateConfig:
        """The ``[gate]`` table of a TOML file."""
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise GateError(
                f"{path}: expected a TOML file with a [gate] table, could not read it: {exc}"
            ) from None
        table = data.get("gate")
        if not isinstance(table, dict):
            raise GateError(f"{path}: expected a [gate] table, found {', '.join(data) or 'no table'}")
        return cls.from_table(table, str(path), Path(path).parent)

    def with_flags(
        self,
        rules: Sequence[str],
        baseline: Path | None,
        alpha: float | None,
        test: str | None,
        allow_unmeasured_judge: bool = False,
    ) -> GateConfig:
        """Flags added to (rules) or over (baseline, alpha, test, the judge allowance) what a file said."""
        opts = self.options
        options = GateOptions(
            alpha if alpha is not None else opts.alpha, test or opts.test, opts.trials, opts.seed
        )
        allow = allow_unmeasured_judge or self.allow_unmeasured_judge
        return GateConfig(
            (*self.rules, *(parse_rule(r) for r in rules)), baseline or self.baseline, options, allow
        )

"""Where a dataset's judgments came from, and how far a judge that made them agrees with people.

Every dataset of a run may say which judgments scored its figures (:class:`JudgmentsUsed`; absent:
the dataset's own). When any label came from an LLM judge (``harness judge``), the judge's
provenance travels with them (:class:`JudgeProvenance`: each judge's model, prompt hash and scale,
how they were combined, when), and with it the judge's measured agreement with human judgments
(:class:`JudgeAgreement`), or ``None`` when it was never measured (then ``harness gate`` refuses
rules over those labels unless told otherwise).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError
from harness.eval import Confusion, Kappa
from harness.results._codec import decode

#: the provenance file beside a judge's labels: ``judgments.qrels`` -> ``judgments.qrels.judge.json``
SIDECAR_SUFFIX = ".judge.json"
SIDECAR_SCHEMA = 1


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """One judge: a model, a prompt (by its sha256) and a rating scale; ``id`` = model/prompt-sha12/scale."""

    id: str
    model: str
    prompt_sha256: str
    prompt_source: str
    scale: str
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SystemAgreement:
    """Whether the labels order systems as people's do: the arms' scores under both, and the rank correlations."""

    measure: str
    systems: tuple[str, ...]
    human: tuple[float, ...]
    judge: tuple[float, ...]
    kendall_tau: float
    spearman_rho: float
    queries: int


@dataclass(frozen=True, slots=True)
class LabelAgreement:
    """One judge (or the combination) against human labels on the pairs both labelled."""

    judge: str
    pairs: int
    """Pairs with a human label and a label from this judge."""
    binary: Kappa
    """Cohen's kappa of relevant / not relevant (human: grade >= 1; judge: its scale's threshold)."""
    confusion: Confusion
    """Human grade (rows) against judge label (columns)."""
    parse_failures: int = 0
    """Answers that were not a label on the scale (counted here, never given a grade)."""
    weighted: Kappa | None = None
    """Weighted Cohen's kappa on the grades themselves, when the human labels are graded too."""
    systems: SystemAgreement | None = None


@dataclass(frozen=True, slots=True)
class JudgeAgreement:
    """A judge's agreement with human judgments, measured on one dataset."""

    dataset: str
    human: str
    """Which human labels: the dataset's judgments, and how unjudged pairs were counted."""
    combined: LabelAgreement
    judges: tuple[LabelAgreement, ...] = ()
    fleiss_kappa: float | None = None
    """Fleiss' kappa among the judges (two or more), on the pairs every judge labelled."""
    fleiss_pairs: int = 0
    measured_in: str = ""
    """The judgments file of the same judge where it was measured, when not on these pairs ("": here)."""


@dataclass(frozen=True, slots=True)
class JudgeProvenance:
    """Labels made by LLM judges: who, how combined, when, on what, and their agreement (None: never measured)."""

    id: str
    judges: tuple[JudgeIdentity, ...]
    combine: str
    created: str
    dataset: str
    pairs: int
    labelled: int
    """Pairs given a combined label; the others had no judge answer on the scale."""
    parse_failures: int
    agreement: JudgeAgreement | None = None

    @property
    def scale(self) -> str:
        return self.judges[0].scale if self.judges else ""

    def agreement_text(self) -> str:
        """``kappa 0.61 [0.57, 0.65] on 5,432 pairs, tau 1.00`` or ``agreement never measured``."""
        if self.agreement is None:
            return "agreement with human judgments never measured"
        c = self.agreement.combined
        text = f"kappa {c.binary.value:.3f} [{c.binary.low:.3f}, {c.binary.high:.3f}] on {c.pairs:,} pairs"
        if c.systems is not None:
            text += f", Kendall tau {c.systems.kendall_tau:.2f} over {len(c.systems.systems)} arms"
        where = f", measured in {self.agreement.measured_in}" if self.agreement.measured_in else ""
        return text + f" (vs {self.agreement.dataset}'s human judgments{where})"


@dataclass(frozen=True, slots=True)
class JudgmentsUsed:
    """The judgments a dataset's figures were scored with (absent on a dataset: its own)."""

    label: str
    """What every figure of the dataset says it was scored with."""
    mode: str = "dataset"
    """``dataset`` (its own), or how a file was applied: ``merge``, ``fill`` or ``replace``."""
    files: tuple[str, ...] = ()
    judge: JudgeProvenance | None = None


def sidecar_path(qrels: Path) -> Path:
    """Where the provenance of the labels in ``qrels`` is kept (beside it)."""
    return Path(qrels).with_name(Path(qrels).name + SIDECAR_SUFFIX)


def load_provenance(qrels: Path, sha256: str) -> JudgeProvenance | None:
    """The judge provenance beside a judgments file (None: it has none); refused when the file changed
    since it was judged (``sha256``: the file's, as read)."""
    side = sidecar_path(qrels)
    if not side.is_file():
        return None
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{side}: expected the judge provenance of {qrels} (JSON), could not read it: {exc}"
        ) from None
    if not isinstance(data, dict) or data.get("schema") != SIDECAR_SCHEMA:
        raise ConfigError(f"{side}: expected a judge provenance file of schema {SIDECAR_SCHEMA}")
    if data.get("qrels_sha256") != sha256:
        raise ConfigError(
            f"{qrels} changed after it was judged (its sha256 is not the one {side.name} records): its labels are "
            f"no longer the judge's alone; judge again, or remove {side.name} to use the file as plain judgments"
        )
    found: JudgeProvenance = decode(JudgeProvenance, data.get("provenance"), str(side))
    return found

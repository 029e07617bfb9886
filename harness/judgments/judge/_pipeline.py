"""Judge, measure, write: the one call a command (or an experiment's ``[judgments]`` table) makes.

result = judge_and_write(spec, pairs, out=None)   # out: default RUN_DIR/judged/<judge>-<sha8>/
result.qrels                                      # <out>/<dataset>/judgments.qrels, for rescore and gate
result.provenance.agreement                       # None when people judged none of the pairs
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from base import ConfigError, slug
from harness.judgments.judge._judge import JudgeRun, judge_pairs
from harness.judgments.judge._measure import measure_agreement
from harness.judgments.judge._output import provenance, write_judgments
from harness.judgments.judge._pairs import PairSet
from harness.judgments.judge._spec import JudgeSpec
from harness.results import JudgeAgreement, JudgeProvenance, load_provenance
from indexer import Backend, read_judgments

JUDGED_FOLDER = "judged"


@dataclass(frozen=True, slots=True)
class JudgeResult:
    run: JudgeRun
    provenance: JudgeProvenance
    qrels: Path

    def lines(self) -> list[str]:
        """What the judging did: pairs labelled, parse failures, calls and cache hits, the file, the agreement."""
        run, prov = self.run, self.provenance
        per_judge = ", ".join(f"{j.id}: {run.parse_failures(i)}" for i, j in enumerate(run.spec.judges))
        truncated = sum(1 for j in run.judged if j.truncated)
        lines = [
            f"judged {len(run.judged):,} pairs with {prov.id}: {prov.labelled:,} labelled, {run.unlabelled:,} with "
            f"no label on the scale; parse failures {per_judge}; {len(run.skipped)} skipped (no document text); "
            f"{truncated:,} documents truncated",
        ]
        for jid, s in run.stats.items():
            lines.append(
                f"{jid}: calls made {s.calls:,} (answers from the cache: {s.cache_hits:,}, retries: {s.retries}); "
                f"tokens in {s.prompt_tokens:,}, out {s.completion_tokens:,}"
            )
        lines.append(f"wrote {self.qrels} (+ .judge.json provenance, answers.jsonl beside it)")
        lines.append(f"agreement: {prov.agreement_text()}")
        return lines


def default_output(spec: JudgeSpec, pairs: PairSet) -> Path:
    """``RUN_DIR/judged/<model>-<sha8 of the judge id>`` (or ``./judged/...`` for a pairs file)."""
    root = pairs.run_dir if pairs.run_dir is not None else Path(".")
    tag = hashlib.sha256(spec.id.encode("utf-8")).hexdigest()[:8]
    return root / JUDGED_FOLDER / f"{slug(spec.judges[0].model, fallback='judge')}-{tag}"


def borrowed_agreement(spec: JudgeSpec, qrels: Path) -> JudgeAgreement:
    """The agreement measured for the same judge in another judgments file (``--agreement-from``)."""
    found = load_provenance(Path(qrels), read_judgments(qrels).sha256)
    if found is None:
        raise ConfigError(
            f"--agreement-from {qrels}: expected a judge's judgments file, found no provenance beside it"
        )
    if found.id != spec.id:
        raise ConfigError(
            f"--agreement-from {qrels}: expected labels of the same judge ({spec.id}), found {found.id}: another "
            "model, prompt, scale or combination is another judge"
        )
    if found.agreement is None:
        raise ConfigError(f"--agreement-from {qrels}: that judging never measured its agreement either")
    return replace(found.agreement, measured_in=found.agreement.measured_in or str(Path(qrels).resolve()))


def judge_and_write(
    spec: JudgeSpec,
    pairs: PairSet,
    out: Path | None = None,
    *,
    agreement_from: Path | None = None,
    backend: Backend | None = None,
    console: Console | None = None,
    show_progress: bool = True,
) -> JudgeResult:
    """Judge ``pairs`` with ``spec``, measure the agreement with people where they judged (else take it from
    ``agreement_from``, the same judge's judgments measured elsewhere), write it all."""
    borrowed = borrowed_agreement(spec, agreement_from) if agreement_from is not None else None
    run = judge_pairs(spec, pairs, backend=backend, console=console, show_progress=show_progress)
    prov = provenance(run, measure_agreement(run) or borrowed)
    qrels = write_judgments(run, prov, out if out is not None else default_output(spec, pairs))
    return JudgeResult(run, prov, qrels)
